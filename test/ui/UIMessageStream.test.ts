import { describe, expect, it } from "@effect/vitest"
import {
  readUIMessageStream,
  type UIMessage as AiUIMessage,
  type UIMessageChunk as AiChunk,
  validateUIMessages
} from "ai"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { Message, SessionStore } from "effect-claude-agent"
import { ChatHistory, UIMessageStream } from "effect-claude-agent/ui"
import * as fs from "node:fs"
import * as path from "node:path"
import { plain, validateChunk } from "./support.js"

// ---------------------------------------------------------------------------------------------------------------------
// the types are the AI SDK's
// ---------------------------------------------------------------------------------------------------------------------

/** Compiles only if every chunk this SDK writes is an `ai` chunk, and every message an `ai` message. */
export const chunkIsTheirs = (chunk: UIMessageStream.UIMessageChunk): AiChunk => chunk
export const messageIsTheirs = (message: UIMessageStream.UIMessage): AiUIMessage => message
/** Compiles only if every chunk type this SDK names is one of `ai`'s. */
export const typesAreTheirs = (type: UIMessageStream.UIMessageChunk["type"]): AiChunk["type"] => type

// ---------------------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------------------

const fixtures = path.join(import.meta.dirname, "..", "fixtures")

const toSdk = (raw: unknown): Message.SdkMessage => {
  const m = Message.decode(raw)
  switch (m.type) {
    case "control_request":
    case "control_response":
    case "control_cancel_request":
    case "keep_alive":
      throw new Error(`not an SDK message: ${m.type}`)
    default:
      return m
  }
}

const lines = (file: string) => fs.readFileSync(path.join(fixtures, file), "utf8").split("\n").filter((l) => l !== "")

const recorded = (file: string): Array<Message.SdkMessage> => lines(file).map((l) => toSdk(JSON.parse(l)))

const transcript = (file: string): Array<SessionStore.TranscriptItem> =>
  lines(file).flatMap((l, i) => SessionStore.decodeLine(l, i + 1) ?? [])

const translate = (
  inputs: ReadonlyArray<UIMessageStream.Input>,
  options?: UIMessageStream.Options
): Array<UIMessageStream.UIMessageChunk> => {
  let state = UIMessageStream.initial
  const out: Array<UIMessageStream.UIMessageChunk> = []
  for (const input of inputs) {
    const [next, chunks] = UIMessageStream.step(state, input, options)
    state = next
    out.push(...chunks)
  }
  out.push(...UIMessageStream.flush(state, options))
  return out
}

/** The message the AI SDK's own `readUIMessageStream` assembles from the chunks. */
const assemble = (chunks: ReadonlyArray<UIMessageStream.UIMessageChunk>) =>
  Effect.promise(async () => {
    const stream = new ReadableStream<AiChunk>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk)
        controller.close()
      }
    })
    let last: AiUIMessage | undefined
    const errors: Array<unknown> = []
    for await (const message of readUIMessageStream({ stream, onError: (e) => errors.push(e) })) last = message
    expect(errors).toEqual([])
    return plain(last!)
  })

const expectAllValid = (chunks: ReadonlyArray<unknown>) =>
  Effect.promise(async () => {
    const rejected: Array<unknown> = []
    for (const chunk of chunks) if ((await validateChunk(chunk)) !== undefined) rejected.push(chunk)
    expect(rejected).toEqual([])
  })

const types = (chunks: ReadonlyArray<UIMessageStream.UIMessageChunk>) => chunks.map((c) => c.type)

// ---------------------------------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------------------------------

describe("UIMessageStream: a recorded turn of the real CLI as the AI SDK's chunks", () => {
  it.effect("thinking, text, an allowed, a denied and a failed Bash call: every chunk passes ai's schema", () =>
    Effect.gen(function*() {
      const chunks = translate(recorded("ui/tools.sdk.jsonl"), { messageId: "m-1" })
      yield* expectAllValid(chunks)
      expect(chunks[0]).toEqual({ type: "start", messageId: "m-1" })
      expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" })
      expect(types(chunks).filter((t) => t === "start-step")).toHaveLength(2)
      const message = yield* assemble(chunks)
      expect(message.id).toBe("m-1")
      const tools = message.parts.flatMap((p) => p.type === "dynamic-tool" ? [p] : [])
      expect(tools.map((t) => [t.input, t.state])).toEqual([
        [{ command: "touch denied.txt" }, "output-denied"],
        [{ command: "echo allowed > allowed.txt && cat allowed.txt" }, "output-available"],
        [{ command: "ls /nonexistent-dir" }, "output-error"]
      ])
      expect(tools[0]).toMatchObject({
        approval: { id: "approval:" + tools[0]!.toolCallId, approved: false, reason: "not that one" }
      })
      expect(tools[1]).toMatchObject({ output: { stdout: "allowed" }, providerExecuted: true })
      expect(message.metadata).toMatchObject({ sessionId: expect.any(String), costUsd: expect.any(Number) })
    }))

  it.effect("history from the same turn's session file gives the same parts", () =>
    Effect.gen(function*() {
      const live = yield* assemble(translate(recorded("ui/tools.sdk.jsonl")))
      const history = ChatHistory.fromTranscript(transcript("ui/tools.session.jsonl"))
      expect(history.map((m) => m.role)).toEqual(["user", "assistant"])
      expect(plain(history[1]!.parts)).toEqual(live.parts)
      yield* Effect.promise(() => validateUIMessages({ messages: history }))
    }))

  it.effect("a subagent: its tool call tagged with the Agent call, in history too", () =>
    Effect.gen(function*() {
      const chunks = translate(recorded("ui/subagent.sdk.jsonl"))
      yield* expectAllValid(chunks)
      const live = yield* assemble(chunks)
      const agent = live.parts.find((p) => p.type === "dynamic-tool" && p.toolName === "Agent")
      const bash = live.parts.find((p) => p.type === "dynamic-tool" && p.toolName === "Bash")
      expect(bash).toMatchObject({ toolMetadata: { parentToolCallId: (agent as { toolCallId: string }).toolCallId } })
      const subagent = transcript("ui/subagent.agent.jsonl")
      const history = ChatHistory.fromTranscript(transcript("ui/subagent.session.jsonl"), () => subagent)
      expect(plain(history[1]!.parts)).toEqual(live.parts)
    }))

  it.effect("an interrupted turn ends with abort; a cut-off tool call is an input error", () =>
    Effect.gen(function*() {
      // the recorded session's second turn is the one interrupted
      const messages = recorded("partial/thinking-tool-interrupt.sdk.jsonl")
      const interrupted = messages.findIndex((m) => m.type === "result" && m.terminal_reason === "aborted_streaming")
      const chunks = translate(messages.slice(0, interrupted + 1))
      yield* expectAllValid(chunks)
      expect(chunks.at(-1)).toEqual({ type: "abort", reason: "interrupted" })
      yield* assemble(chunks)
    }))

  it.effect("an API error: an error chunk with a fixed text, then finish with finishReason error", () =>
    Effect.gen(function*() {
      const chunks = translate(recorded("ui/api-error.sdk.jsonl"))
      yield* expectAllValid(chunks)
      expect(chunks.filter((c) => c.type === "error")).toHaveLength(1)
      expect(chunks.slice(-2)).toEqual([
        { type: "error", errorText: "The model API failed (status 500)." },
        { type: "finish", finishReason: "error" }
      ])
    }))

  it.effect("an approval request waits for its call's input, then follows it", () =>
    Effect.gen(function*() {
      const messages = recorded("ui/tools.sdk.jsonl")
      const firstTool = messages.findIndex((m) =>
        m.type === "stream_event" && m.event.type === "content_block_start" &&
        m.event.content_block.type === "tool_use"
      )
      const toolUseId = messages.flatMap((m) =>
        m.type === "stream_event" && m.event.type === "content_block_start" && m.event.content_block.type === "tool_use"
          ? [m.event.content_block.id]
          : []
      )[1]!
      const request: UIMessageStream.ApprovalRequest = {
        type: "approval_request",
        toolUseId,
        kind: "approval",
        reason: "why"
      }
      // asked before the call's block has even started
      const chunks = translate([...messages.slice(0, firstTool), request, ...messages.slice(firstTool)])
      yield* expectAllValid(chunks)
      const available = chunks.findIndex((c) => c.type === "tool-input-available" && c.toolCallId === toolUseId)
      expect(chunks[available + 1]).toEqual({
        type: "tool-approval-request",
        approvalId: `approval:${toolUseId}`,
        toolCallId: toolUseId,
        reason: "why"
      })
      // asked once: the request is not repeated when the call is denied later
      expect(chunks.filter((c) => c.type === "tool-approval-request")).toHaveLength(2)
      yield* assemble(chunks)
    }))

  it.effect("clientTools: the call is not provider-executed (useChat's onToolCall sees it)", () =>
    Effect.gen(function*() {
      const chunks = translate(recorded("ui/tools.sdk.jsonl"), { clientTools: ["Bash"] })
      const available = chunks.filter((c) => c.type === "tool-input-available")
      expect(available.map((c) => c.type === "tool-input-available" && c.providerExecuted)).toEqual([
        false,
        false,
        false
      ])
    }))
})

describe("UIMessageStream streams", () => {
  it.effect("fromMessages: a failing input ends with an error chunk that does not carry the error", () =>
    Effect.gen(function*() {
      const secret = "sk-ant-api03-do-not-leak"
      const failing = Stream.concat(
        Stream.fromIterable(recorded("ui/tools.sdk.jsonl").slice(0, 5)),
        Stream.fail(new Error(secret))
      )
      const chunks = Chunk.toArray(yield* Stream.runCollect(UIMessageStream.fromMessages(failing, { messageId: "x" })))
      expect(chunks.at(-1)).toEqual({ type: "error", errorText: "The agent failed." })
      expect(JSON.stringify(chunks)).not.toContain(secret)
      yield* expectAllValid(chunks)
      const custom = yield* Stream.runCollect(
        failing.pipe(UIMessageStream.fromMessages({ onError: () => "Try again later." }))
      )
      expect(Chunk.toArray(custom).at(-1)).toEqual({ type: "error", errorText: "Try again later." })
      // an onError that throws: the fixed text
      const throwing = yield* Stream.runCollect(
        failing.pipe(UIMessageStream.fromMessages({
          onError: () => {
            throw new Error(secret)
          }
        }))
      )
      expect(Chunk.toArray(throwing).at(-1)).toEqual({ type: "error", errorText: "The agent failed." })
    }))

  it.effect("encode: one SSE event per chunk, then [DONE]; keep-alive comments while quiet", () =>
    Effect.gen(function*() {
      const chunks: Array<UIMessageStream.UIMessageChunk> = [{ type: "start" }, {
        type: "finish",
        finishReason: "stop"
      }]
      const bytes = yield* Stream.runCollect(UIMessageStream.encode(Stream.fromIterable(chunks)))
      const text = Chunk.toArray(bytes).map((b) => new TextDecoder().decode(b)).join("")
      expect(text).toBe(`data: {"type":"start"}\n\ndata: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n`)
      // a stream quiet for 25 s with keep-alive every 10 s
      const quiet = Stream.concat(Stream.fromEffect(Effect.as(Effect.sleep("25 seconds"), chunks[0]!)), Stream.empty)
      const fiber = yield* Effect.fork(Stream.runCollect(UIMessageStream.encode(quiet, { keepAliveMs: 10_000 })))
      yield* TestClock.adjust("30 seconds")
      const events = Chunk.toArray(yield* Fiber.join(fiber)).map((b) => new TextDecoder().decode(b))
      expect(events).toEqual([": keep-alive\n\n", ": keep-alive\n\n", `data: {"type":"start"}\n\n`, "data: [DONE]\n\n"])
    }))

  it.effect("toHttpServerResponse: the stream's headers on an @effect/platform response", () =>
    Effect.gen(function*() {
      const response = UIMessageStream.toHttpServerResponse(
        Stream.make<[UIMessageStream.UIMessageChunk]>({ type: "start" })
      )
      expect(response.status).toBe(200)
      expect(response.headers["x-vercel-ai-ui-message-stream"]).toBe("v1")
      expect(response.headers["cache-control"]).toBe("no-cache")
      expect(response.body._tag).toBe("Stream")
    }))

  it.effect("toResponse (Promise API): headers, the chunks, and a cancel closes the iteration", () =>
    Effect.gen(function*() {
      const messages = recorded("ui/tools.sdk.jsonl")
      const response = UIMessageStream.toResponse(
        (async function*() {
          yield* messages
        })(),
        { messageId: "p-1" }
      )
      expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
      expect(response.headers.get("content-type")).toBe("text/event-stream")
      const text = yield* Effect.promise(() => response.text())
      const events = text.split("\n\n").filter((e) => e !== "")
      expect(events.at(-1)).toBe("data: [DONE]")
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)))
      expect(chunks).toEqual(JSON.parse(JSON.stringify(translate(messages, { messageId: "p-1" }))))

      let closed = false
      const endless = UIMessageStream.toResponse((async function*() {
        try {
          for (;;) yield* messages
        } finally {
          closed = true
        }
      })())
      const reader = endless.body!.getReader()
      yield* Effect.promise(() => reader.read())
      yield* Effect.promise(() => reader.cancel())
      expect(closed).toBe(true)
    }))
})
