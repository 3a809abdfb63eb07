import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodePath from "@effect/platform-node/NodePath"
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
  uiMessageChunkSchema
} from "ai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { TranscriptStore } from "effect-claude-agent"
import { ChatServer, ChatStore } from "effect-claude-agent/ui"
import * as http from "node:http"
import { NodeClaudeAgent } from "../support/cli.js"

/**
 * A chat server on 127.0.0.1 (port 0) for the rest of the scope, with a memory chat store unless one is given. The
 * store and the transport are built here, so a test can restart the server on the same store.
 */
export const chatServer = (
  options: ChatServer.Options,
  store: Layer.Layer<ChatStore.ChatStore> = ChatStore.layerMemory,
  transcripts: Layer.Layer<never> | Layer.Layer<TranscriptStore.TranscriptStore> = Layer.empty,
  routes?: HttpRouter.HttpRouter
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      ChatServer.layer(options, routes).pipe(
        Layer.provideMerge(NodeHttpServer.layer(() => http.createServer(), { port: 0, host: "127.0.0.1" })),
        Layer.provide(store),
        Layer.provide(transcripts),
        Layer.provide(NodeClaudeAgent.layer),
        Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
      )
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.die(new Error("not a TCP server"))
    return `http://127.0.0.1:${address.port}`
  })

/** Every chunk the server sent, as parsed from its SSE bodies, with the ones `ai`'s schema rejected. */
export interface ChunkLog {
  readonly chunks: Array<unknown>
  readonly rejected: Array<{ readonly chunk: unknown; readonly error: string }>
  /** The raw `data:` lines of each response, `[DONE]` included. */
  readonly bodies: Array<Array<string>>
}

const schema = uiMessageChunkSchema()

/** Validates one chunk with the AI SDK's own `uiMessageChunkSchema`. */
export const validateChunk = async (chunk: unknown): Promise<string | undefined> => {
  const result = await schema.validate!(chunk)
  return result.success ? undefined : String(result.error)
}

/** A `fetch` for `DefaultChatTransport` that records (and validates) every chunk of every response. */
export const recordingFetch = (log: ChunkLog): typeof fetch => async (input, init) => {
  const response = await fetch(input, init)
  if (response.body === null || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
    return response
  }
  const [mine, theirs] = response.body.tee()
  const lines: Array<string> = []
  log.bodies.push(lines)
  void (async () => {
    const decoder = new TextDecoder()
    let buffer = ""
    const reader = mine.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (!event.startsWith("data: ")) continue
          const data = event.slice("data: ".length)
          lines.push(data)
          if (data === "[DONE]") continue
          const chunk: unknown = JSON.parse(data)
          log.chunks.push(chunk)
          const error = await validateChunk(chunk)
          if (error !== undefined) log.rejected.push({ chunk, error })
        }
      }
    } catch {
      // the client aborted: what arrived is recorded
    }
  })()
  return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers })
}

/** The AI SDK's `ChatState` as a plain object, with a hook for every change. */
class State implements ChatState<UIMessage> {
  private current: ChatStatus = "ready"
  error: Error | undefined = undefined
  messages: Array<UIMessage> = []
  constructor(readonly changed: () => void) {}
  get status(): ChatStatus {
    return this.current
  }
  set status(status: ChatStatus) {
    this.current = status
    this.changed()
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message]
    this.changed()
  }
  popMessage = () => {
    this.messages = this.messages.slice(0, -1)
    this.changed()
  }
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => i === index ? message : m)
    this.changed()
  }
  snapshot = <T>(value: T): T => structuredClone(value)
}

/** The AI SDK's own `AbstractChat`, over a plain state (what `@ai-sdk/react`'s `Chat` is over React state). */
export class TestChat extends AbstractChat<UIMessage> {
  private readonly listeners = new Set<() => void>()
  constructor(init: Omit<ChatInit<UIMessage>, "messages">) {
    const listeners = new Set<() => void>()
    super({ ...init, state: new State(() => listeners.forEach((f) => f())) })
    this.listeners = listeners
  }
  /** Resolves when `predicate` holds (checked now and after every change of the chat's state). */
  until(predicate: (chat: TestChat) => boolean, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate(this)) return
        this.listeners.delete(check)
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.listeners.delete(check)
        reject(new Error(`chat state not reached; status ${this.status}, messages ${JSON.stringify(this.messages)}`))
      }, timeoutMs)
      this.listeners.add(check)
      check()
    })
  }
}

/** A chat on the server at `url`, recording every chunk into `log`. */
export const makeChat = (
  url: string,
  log: ChunkLog,
  init: Omit<ChatInit<UIMessage>, "messages" | "transport"> = {}
) =>
  new TestChat({ ...init, transport: new DefaultChatTransport({ api: `${url}/api/chat`, fetch: recordingFetch(log) }) })

export const newLog = (): ChunkLog => ({ chunks: [], rejected: [], bodies: [] })

/** The parts of a message without the fields the client leaves `undefined` (as JSON would carry them). */
export const plain = <A>(value: A): A => JSON.parse(JSON.stringify(value))

/** A user message as the AI SDK sends it. */
export const userMessage = (text: string, id = `u-${Math.random().toString(36).slice(2)}`) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }]
})

/** POSTs an AI SDK request body to `/api/chat`. */
export const post = (url: string, body: unknown, init: RequestInit = {}) =>
  fetch(`${url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init
  })

/** The chunks of an SSE response, read to its end; fails if `ai`'s schema rejects any (they are also logged). */
export const readChunks = async (response: Response, log: ChunkLog = newLog()): Promise<Array<unknown>> => {
  const text = await response.text()
  const chunks: Array<unknown> = []
  const lines: Array<string> = []
  log.bodies.push(lines)
  for (const event of text.split("\n\n")) {
    if (!event.startsWith("data: ")) continue
    const data = event.slice("data: ".length)
    lines.push(data)
    if (data === "[DONE]") continue
    const chunk: unknown = JSON.parse(data)
    chunks.push(chunk)
    log.chunks.push(chunk)
    const error = await validateChunk(chunk)
    if (error !== undefined) log.rejected.push({ chunk, error })
  }
  if (lines.at(-1) !== "[DONE]") throw new Error(`the response did not end with [DONE]: ${text.slice(-200)}`)
  if (log.rejected.length > 0) throw new Error(`ai's uiMessageChunkSchema rejected ${JSON.stringify(log.rejected)}`)
  return chunks
}

type ToolPart = Extract<UIMessage["parts"][number], { type: "dynamic-tool" }>

/** The tool parts of a message. */
export const toolParts = (message: UIMessage | undefined): Array<ToolPart> =>
  (message?.parts ?? []).filter((p): p is ToolPart => p.type === "dynamic-tool")

/**
 * Answers every approval the chat is asked for, until it asks for none: `decide` gets the call's input. Needs
 * `sendAutomaticallyWhen` on the chat (each answer sends the next request).
 */
export const answerApprovals = async (chat: TestChat, decide: (input: unknown) => boolean) => {
  for (;;) {
    await chat.until((c) => c.status === "ready")
    const asked = toolParts(chat.messages.at(-1)).find((p) => p.state === "approval-requested")
    if (asked === undefined) return
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: decide(asked.input) })
    // the CLI may ask for the next call of the step before the answered one's output comes (it checks permissions
    // while the first tool runs): then that output comes with the next answer's response
    await chat.until((c) =>
      c.status === "ready" &&
      (toolParts(c.messages.at(-1)).every((p) => p.toolCallId !== asked.toolCallId || p.state.startsWith("output-")) ||
        toolParts(c.messages.at(-1)).some((p) => p.state === "approval-requested"))
    )
  }
}
