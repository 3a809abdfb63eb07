/**
 * The example chat page: the AI SDK's React `useChat` against `ChatServer` (`npm run example -- chat --serve`).
 * Bundled by esbuild when the example starts (examples/chat/serve.ts); no CDN.
 *
 * - the chat id is in the URL (`?chat=<id>`), so a reload reopens the chat from the server's history;
 * - tool calls are cards; a call the server asks about has Approve / Deny buttons (`addToolApprovalResponse`);
 *   AskUserQuestion has a button per option (`addToolOutput`);
 * - a subagent's calls are shown inside the card of the call that started it.
 */
import { useChat } from "@ai-sdk/react"
import { DefaultChatTransport, type DynamicToolUIPart, type UIMessage } from "ai"
import { ChatClient } from "effect-claude-agent/ui/client"
import { type FormEvent, useEffect, useMemo, useState } from "react"
import { createRoot } from "react-dom/client"

const chatId = (() => {
  const url = new URL(window.location.href)
  const existing = url.searchParams.get("chat")
  if (existing !== null) return existing
  const id = crypto.randomUUID().replaceAll("-", "").slice(0, 16)
  url.searchParams.set("chat", id)
  window.history.replaceState(null, "", url)
  return id
})()

type ToolPart = DynamicToolUIPart

const parentOf = (part: ToolPart): string | undefined => {
  const parent = part.toolMetadata?.["parentToolCallId"]
  return typeof parent === "string" ? parent : undefined
}

const json = (value: unknown) => JSON.stringify(value, null, 2)

interface Question {
  readonly question: string
  readonly options: ReadonlyArray<{ readonly label: string; readonly description?: string }>
}

const questionsOf = (input: unknown): ReadonlyArray<Question> =>
  typeof input === "object" && input !== null && "questions" in input && Array.isArray(input.questions)
    ? input.questions as ReadonlyArray<Question>
    : []

function ToolCard(props: {
  readonly part: ToolPart
  readonly children: ReadonlyArray<ToolPart>
  readonly approve: (id: string, approved: boolean) => void
  readonly answer: (part: ToolPart, question: string, label: string) => void
}) {
  const { part } = props
  const output = part.state === "output-available" ? part.output : undefined
  const stdout = typeof output === "object" && output !== null && "stdout" in output ? String(output.stdout) : undefined
  return (
    <div className={`tool tool-${part.state}`} data-testid="tool-card" data-state={part.state} data-tool={part.toolName}>
      <div className="tool-head">
        <span className="tool-name">{part.toolName}</span>
        <span className="tool-state">{part.state}</span>
      </div>
      <pre className="tool-input">{json(part.input)}</pre>
      {part.state === "approval-requested" && (
        <div className="approval" data-testid="approval">
          <span>Allow this call?</span>
          <button data-testid="approve" onClick={() => props.approve(part.approval.id, true)}>Approve</button>
          <button data-testid="deny" onClick={() => props.approve(part.approval.id, false)}>Deny</button>
        </div>
      )}
      {part.toolName === "AskUserQuestion" && part.state === "input-available" &&
        questionsOf(part.input).map((q) => (
          <div className="question" key={q.question}>
            <span>{q.question}</span>
            {q.options.map((o) => (
              <button key={o.label} onClick={() => props.answer(part, q.question, o.label)}>{o.label}</button>
            ))}
          </div>
        ))}
      {output !== undefined && (
        <pre className="tool-output" data-testid="tool-output">{stdout ?? json(output)}</pre>
      )}
      {part.state === "output-error" && <pre className="tool-error">{part.errorText}</pre>}
      {part.state === "output-denied" && (
        <div className="tool-denied">denied{part.approval.reason !== undefined ? `: ${part.approval.reason}` : ""}</div>
      )}
      {props.children.length > 0 && (
        <div className="subagent">
          {props.children.map((child) => (
            <ToolCard key={child.toolCallId} part={child} children={[]} approve={props.approve} answer={props.answer} />
          ))}
        </div>
      )}
    </div>
  )
}

function Message(props: {
  readonly message: UIMessage
  readonly approve: (id: string, approved: boolean) => void
  readonly answer: (part: ToolPart, question: string, label: string) => void
}) {
  const tools = props.message.parts.filter((p): p is ToolPart => p.type === "dynamic-tool")
  return (
    <div className={`message ${props.message.role}`} data-testid={`message-${props.message.role}`}>
      {props.message.parts.map((part, i) => {
        switch (part.type) {
          case "text":
            return <div key={i} className="text" data-testid="text">{part.text}</div>
          case "reasoning":
            return <details key={i} className="reasoning"><summary>thinking</summary>{part.text}</details>
          case "dynamic-tool":
            return parentOf(part) === undefined
              ? (
                <ToolCard
                  key={part.toolCallId}
                  part={part}
                  children={tools.filter((t) => parentOf(t) === part.toolCallId)}
                  approve={props.approve}
                  answer={props.answer}
                />
              )
              : null
          default:
            return null
        }
      })}
    </div>
  )
}

function App() {
  const transport = useMemo(() => new DefaultChatTransport({ api: "/api/chat" }), [])
  const chat = useChat({ id: chatId, transport, sendAutomaticallyWhen: ChatClient.sendAutomaticallyWhen })
  const [input, setInput] = useState("")
  const [loaded, setLoaded] = useState(false)

  // reopen the chat: its history from the server
  useEffect(() => {
    void fetch(`/api/chats/${chatId}`).then(async (response) => {
      if (response.ok) chat.setMessages(((await response.json()) as { messages: Array<UIMessage> }).messages)
      setLoaded(true)
    })
  }, [])

  const send = (event: FormEvent) => {
    event.preventDefault()
    if (input.trim() === "") return
    void chat.sendMessage({ text: input })
    setInput("")
  }
  const approve = (id: string, approved: boolean) => void chat.addToolApprovalResponse({ id, approved })
  const answer = (part: ToolPart, question: string, label: string) =>
    void chat.addToolOutput({ tool: part.toolName, toolCallId: part.toolCallId, output: { answers: { [question]: label } } })

  return (
    <main data-testid="chat" data-status={chat.status} data-loaded={loaded}>
      <header>
        <h1>Claude Code chat</h1>
        <span className="status" data-testid="status">{chat.status}</span>
        <a href="?">new chat</a>
      </header>
      <section className="messages">
        {chat.messages.map((m) => <Message key={m.id} message={m} approve={approve} answer={answer} />)}
        {chat.error !== undefined && <div className="error" data-testid="error">{chat.error.message}</div>}
      </section>
      <form onSubmit={send}>
        <input
          data-testid="prompt"
          value={input}
          placeholder="Ask Claude Code…"
          onChange={(e) => setInput(e.target.value)}
        />
        {chat.status === "streaming" || chat.status === "submitted"
          ? <button type="button" data-testid="stop" onClick={() => void chat.stop()}>Stop</button>
          : <button type="submit" data-testid="send">Send</button>}
      </form>
    </main>
  )
}

createRoot(document.getElementById("root")!).render(<App />)
