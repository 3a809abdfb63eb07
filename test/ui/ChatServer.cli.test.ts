import { describe, expect, it } from "@effect/vitest"
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { noClaudeLeft, realCli } from "../support/cli.js"
import { ChatClient } from "effect-claude-agent/ui/client"
import { bash, chatModel } from "./model.js"
import { answerApprovals, chatServer, type ChunkLog, makeChat, newLog, plain } from "./support.js"

type ToolPart = Extract<UIMessage["parts"][number], { type: "dynamic-tool" }>

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope>, timeout = 90_000) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())), timeout)

/** Every chunk of the test passed `ai`'s `uiMessageChunkSchema`, and every response ended with `[DONE]`. */
const expectValid = (log: ChunkLog) => {
  expect(log.chunks.length).toBeGreaterThan(0)
  expect(log.rejected).toEqual([])
  for (const body of log.bodies) expect(body.at(-1)).toBe("[DONE]")
}

const toolParts = (message: UIMessage | undefined): Array<ToolPart> =>
  (message?.parts ?? []).filter((p): p is ToolPart => p.type === "dynamic-tool")

const setup = (serverOptions: Parameters<typeof chatServer>[0] = {}) =>
  Effect.gen(function*() {
    const cli = yield* realCli({ handler: chatModel })
    const url = yield* chatServer({ ...serverOptions, options: { ...cli.options(), ...serverOptions.options } })
    return { ...cli, url }
  })

describe("ChatServer with the AI SDK's own Chat and DefaultChatTransport (real CLI)", () => {
  live(
    "text and reasoning: the Chat assembles a reasoning part and a text part in one step",
    () =>
      Effect.gen(function*() {
        const { url } = yield* setup()
        const log = newLog()
        const chat = makeChat(url, log)
        yield* Effect.promise(() => chat.sendMessage({ text: "THINK pondering deeply SAY hello from the CLI" }))
        expect(chat.status).toBe("ready")
        expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"])
        const answer = plain(chat.messages[1]!)
        expect(answer.parts).toEqual([
          { type: "step-start" },
          { type: "reasoning", id: expect.stringMatching(/^msg_.+:0$/), text: "pondering deeply", state: "done" },
          { type: "text", text: "hello from the CLI", state: "done" }
        ])
        expect(answer.metadata).toMatchObject({
          sessionId: expect.any(String),
          costUsd: expect.any(Number),
          usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) }
        })
        expect(log.chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" })
        expectValid(log)
      })
  )

  live(
    "a tool the server allows runs: output-available with the tool's structured output",
    () =>
      Effect.gen(function*() {
        const { cwd, url } = yield* setup({ allow: ["Bash"] })
        const log = newLog()
        const chat = makeChat(url, log)
        yield* Effect.promise(() => chat.sendMessage({ text: bash("touch allowed.txt && echo ran-ok") }))
        expect(fs.existsSync(path.join(cwd, "allowed.txt"))).toBe(true)
        const [tool] = toolParts(chat.messages[1])
        expect(plain(tool)).toMatchObject({
          type: "dynamic-tool",
          toolName: "Bash",
          state: "output-available",
          providerExecuted: true,
          input: { command: "touch allowed.txt && echo ran-ok" },
          output: { stdout: "ran-ok", stderr: "" }
        })
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "tool said: ran-ok" })
        expectValid(log)
      })
  )

  live("a tool that fails: output-error with the tool's error text", () =>
    Effect.gen(function*() {
      const { url } = yield* setup({ allow: ["Bash"] })
      const log = newLog()
      const chat = makeChat(url, log)
      yield* Effect.promise(() => chat.sendMessage({ text: bash("echo boom >&2; exit 3") }))
      const [tool] = toolParts(chat.messages[1])
      expect(tool?.state).toBe("output-error")
      expect(tool?.errorText).toContain("boom")
      expectValid(log)
    }))

  live(
    "a tool the server denies: output-denied with the deny reason, and the command did not run",
    () =>
      Effect.gen(function*() {
        const { cwd, url } = yield* setup({ deny: ["Bash(touch:*)"] })
        const log = newLog()
        const chat = makeChat(url, log)
        yield* Effect.promise(() => chat.sendMessage({ text: bash("touch denied.txt") }))
        expect(fs.existsSync(path.join(cwd, "denied.txt"))).toBe(false)
        const [tool] = toolParts(chat.messages[1])
        expect(plain(tool)).toMatchObject({
          state: "output-denied",
          approval: { id: expect.any(String), approved: false, reason: expect.any(String) }
        })
        expectValid(log)
      })
  )

  live(
    "approval in the browser: the response stops at the request, the approval resumes the same message",
    () =>
      Effect.gen(function*() {
        const { cwd, url } = yield* setup()
        const log = newLog()
        const chat = makeChat(url, log, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses })
        yield* Effect.promise(() => chat.sendMessage({ text: bash("touch approved.txt && echo approved") }))
        // the first response ended while the CLI waits for the permission
        expect(chat.status).toBe("ready")
        const [asked] = toolParts(chat.messages[1])
        expect(plain(asked)).toMatchObject({
          state: "approval-requested",
          approval: { id: `approval:${asked?.toolCallId}` }
        })
        expect(fs.existsSync(path.join(cwd, "approved.txt"))).toBe(false)
        expect(log.chunks.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" })

        yield* Effect.promise(async () => chat.addToolApprovalResponse({ id: asked!.approval!.id, approved: true }))
        yield* Effect.promise(() =>
          chat.until((c) => c.status === "ready" && toolParts(c.messages[1])[0]?.state === "output-available")
        )
        yield* Effect.promise(() =>
          chat.until((c) => c.status === "ready" && c.messages[1]!.parts.at(-1)?.type === "text")
        )
        expect(fs.existsSync(path.join(cwd, "approved.txt"))).toBe(true)
        expect(chat.messages).toHaveLength(2)
        const [ran] = toolParts(chat.messages[1])
        expect(plain(ran)).toMatchObject({
          state: "output-available",
          output: { stdout: "approved" },
          approval: { id: asked!.approval!.id, approved: true }
        })
        expect(chat.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "tool said: approved" })
        expect(log.bodies).toHaveLength(2)
        expectValid(log)
      })
  )

  live(
    "denial in the browser: output-denied, the model gets the reason, the command did not run",
    () =>
      Effect.gen(function*() {
        const { cwd, server, url } = yield* setup()
        const log = newLog()
        const chat = makeChat(url, log, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses })
        yield* Effect.promise(() => chat.sendMessage({ text: bash("touch refused.txt") }))
        const [asked] = toolParts(chat.messages[1])
        yield* Effect.promise(async () =>
          chat.addToolApprovalResponse({ id: asked!.approval!.id, approved: false, reason: "not on my machine" })
        )
        yield* Effect.promise(() =>
          chat.until((c) => c.status === "ready" && c.messages[1]!.parts.at(-1)?.type === "text")
        )
        expect(fs.existsSync(path.join(cwd, "refused.txt"))).toBe(false)
        const [denied] = toolParts(chat.messages[1])
        expect(plain(denied)).toMatchObject({
          state: "output-denied",
          approval: { id: asked!.approval!.id, approved: false, reason: "not on my machine" }
        })
        const last = (yield* server.requests).filter((r) => r.isMessages).at(-1)
        expect(last?.toolResults[0]?.content).toContain("not on my machine")
        expectValid(log)
      })
  )

  live(
    "a subagent: its tool call is a part tagged with the Agent call that started it, its report the output",
    () =>
      Effect.gen(function*() {
        const { url } = yield* setup()
        const log = newLog()
        const chat = makeChat(url, log)
        yield* Effect.promise(() => chat.sendMessage({ text: "DELEGATE echo from-the-subagent" }))
        const parts = plain(chat.messages[1]!.parts)
        const agent = parts.find((p): p is ToolPart => p.type === "dynamic-tool" && p.toolName === "Agent")
        expect(agent?.state).toBe("output-available")
        const tagged = parts.filter((p) =>
          (p.type === "dynamic-tool" && p.toolMetadata?.["parentToolCallId"] === agent?.toolCallId) ||
          ((p.type === "text" || p.type === "reasoning") &&
            p.providerMetadata?.["claudeCode"]?.["parentToolCallId"] === agent?.toolCallId)
        )
        // the CLI forwards a foreground subagent's tool calls, not its text or thinking (its report is the output)
        expect(tagged.map((p) => p.type)).toEqual(["dynamic-tool"])
        expect(tagged[0]).toMatchObject({ toolName: "Bash", state: "output-available", output: "from-the-subagent" })
        expect(agent?.output).toMatchObject({
          status: "completed",
          content: expect.arrayContaining([{ type: "text", text: "sub done" }])
        })
        // the subagent's parts come between the Agent call and the main agent's answer
        expect(parts.indexOf(tagged[0]!)).toBeGreaterThan(parts.indexOf(agent!))
        expect(parts.at(-1)).toMatchObject({ type: "text", text: expect.stringContaining("tool said:") })
        expectValid(log)
      })
  )

  live(
    "two calls of one step asked one after the other: ChatClient.sendAutomaticallyWhen sends each answer",
    () =>
      Effect.gen(function*() {
        const { cwd, url } = yield* setup()
        const log = newLog()
        const chat = makeChat(url, log, { sendAutomaticallyWhen: ChatClient.sendAutomaticallyWhen })
        yield* Effect.promise(() => chat.sendMessage({ text: "TWO touch one.txt AND touch two.txt" }))
        const [first, second] = toolParts(chat.messages[1])
        expect(first?.state).toBe("approval-requested")
        // the CLI asks for the first call's approval as soon as that call is complete: the second call is streamed by
        // then, or not yet (it then comes with the answer to the first); it is never asked before the first is decided
        expect(second === undefined ? "not streamed yet" : second.state).toMatch(/^(not streamed yet|input-available)$/)
        // the AI SDK's own predicate would wait for a second call it sees to be decided too, which the CLI has not
        // asked yet
        expect(lastAssistantMessageIsCompleteWithApprovalResponses({
          messages: [
            ...chat.messages.slice(0, 1),
            {
              ...chat.messages[1]!,
              parts: chat.messages[1]!.parts.map((p) =>
                p === first
                  ? {
                    ...first,
                    state: "approval-responded",
                    approval: { id: first.approval!.id, approved: true }
                  } as ToolPart
                  : p
              )
            }
          ]
        })).toBe(second === undefined)
        yield* Effect.promise(() => answerApprovals(chat, () => true))
        expect(toolParts(chat.messages[1]).map((p) => p.state)).toEqual(["output-available", "output-available"])
        expect(fs.existsSync(path.join(cwd, "one.txt")) && fs.existsSync(path.join(cwd, "two.txt"))).toBe(true)
        expect(log.bodies).toHaveLength(3)
        expectValid(log)
      })
  )

  live(
    "AskUserQuestion: a client tool the browser answers with addToolOutput; the CLI gets the answers",
    () =>
      Effect.gen(function*() {
        const { server, url } = yield* setup()
        const log = newLog()
        const chat: ReturnType<typeof makeChat> = makeChat(url, log, {
          sendAutomaticallyWhen: ChatClient.sendAutomaticallyWhen,
          onToolCall: ({ toolCall }) => {
            if (toolCall.toolName !== "AskUserQuestion") return
            void chat.addToolOutput({
              tool: "AskUserQuestion",
              toolCallId: toolCall.toolCallId,
              output: { answers: { "Which color?": "blue" } }
            })
          }
        })
        yield* Effect.promise(() => chat.sendMessage({ text: "ASK Which color?" }))
        yield* Effect.promise(() =>
          chat.until((c) => c.status === "ready" && c.messages[1]?.parts.at(-1)?.type === "text")
        )
        const [asked] = toolParts(chat.messages[1])
        expect(asked).toMatchObject({ toolName: "AskUserQuestion", state: "output-available", providerExecuted: true })
        const last = (yield* server.requests).filter((r) => r.isMessages).at(-1)
        expect(last?.toolResults[0]?.content).toContain("blue")
        expectValid(log)
      })
  )

  live("a subagent's call asked in the browser: approved, it runs inside the subagent", () =>
    Effect.gen(function*() {
      const { cwd, url } = yield* setup()
      const log = newLog()
      const chat = makeChat(url, log, { sendAutomaticallyWhen: ChatClient.sendAutomaticallyWhen })
      yield* Effect.promise(() => chat.sendMessage({ text: "DELEGATE touch by-subagent.txt && echo sub-ran" }))
      const asked = toolParts(chat.messages[1]).find((p) => p.state === "approval-requested")
      expect(asked).toMatchObject({ toolName: "Bash", toolMetadata: { parentToolCallId: expect.any(String) } })
      yield* Effect.promise(() => answerApprovals(chat, () => true))
      expect(fs.existsSync(path.join(cwd, "by-subagent.txt"))).toBe(true)
      const parts = toolParts(chat.messages[1])
      expect(parts.map((p) => [p.toolName, p.state])).toEqual([["Agent", "output-available"], [
        "Bash",
        "output-available"
      ]])
      expectValid(log)
    }))
})
