import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as PartialMessages from "../src/PartialMessages.js"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

type UiEvent = PartialMessages.UiEvent

// ---------------------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------------------

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

const isSdkFrame = (u: unknown): boolean =>
  typeof u === "object" && u !== null && "type" in u &&
  !["control_request", "control_response", "control_cancel_request", "keep_alive"].includes(String(u.type))

/** The SDK messages of a recorded wire transcript (`{dir, msg}` lines). */
const recorded = (file: string): Array<Message.SdkMessage> =>
  fs.readFileSync(path.join(import.meta.dirname, "fixtures", "transcripts", file), "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l))
    .filter((e) => e.dir === "out" && isSdkFrame(e.msg))
    .map((e) => toSdk(e.msg))

/** A recorded SDK message stream (one message per line). */
const recordedSdk = (file: string): Array<Message.SdkMessage> =>
  fs.readFileSync(path.join(import.meta.dirname, "fixtures", "partial", file), "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => toSdk(JSON.parse(l)))

const run = (messages: ReadonlyArray<Message.SdkMessage>, options?: PartialMessages.Options) =>
  Stream.fromIterable(messages).pipe(
    PartialMessages.assembleWith(options ?? {}),
    Stream.runCollect,
    Effect.map(Chunk.toArray)
  )

/** A compact view of an event, for sequence assertions. */
const brief = (e: UiEvent): string => {
  switch (e.type) {
    case "message-start":
      return `message-start ${e.messageId}`
    case "message-finish":
      return `message-finish ${e.messageId} ${e.stopReason}${e.abandoned ? " abandoned" : ""}`
    case "text-start":
    case "thinking-start":
      return `${e.type} ${e.index}`
    case "text-delta":
    case "thinking-delta":
      return `${e.type} ${e.index} ${JSON.stringify(e.delta)}`
    case "text-end":
      return `text-end ${e.index} ${JSON.stringify(e.text)}${e.abandoned ? " abandoned" : ""}`
    case "thinking-end":
      return `thinking-end ${e.index} ${JSON.stringify(e.thinking)} ${e.signature}${e.abandoned ? " abandoned" : ""}`
    case "tool-input-start":
      return `tool-input-start ${e.index} ${e.toolName}`
    case "tool-input-delta":
      return `tool-input-delta ${e.index}`
    case "tool-input-available":
      return `tool-input-available ${e.index} ${JSON.stringify(e.input)}`
    case "tool-input-error":
      return `tool-input-error ${e.index} ${e.reason}`
    case "tool-output-available":
      return `tool-output-available ${e.toolName} ${JSON.stringify(e.text)}${e.isError ? " error" : ""}`
    case "content-block":
      return `content-block ${e.index} ${e.block.type}`
    case "message":
      return `message ${e.message.type}`
  }
}

const SESSION = "00000000-0000-4000-8000-000000000001"
let uuid = 0

interface EnvelopeOptions {
  readonly parent?: string | null
  readonly messageId?: string
  readonly extra?: Record<string, unknown>
}

const se = (event: Record<string, unknown>, o: EnvelopeOptions = {}): Message.SdkMessage =>
  toSdk({
    type: "stream_event",
    event,
    session_id: SESSION,
    parent_tool_use_id: o.parent ?? null,
    uuid: `u${++uuid}`,
    ...(o.messageId !== undefined ? { api_message_id: o.messageId } : {}),
    ...o.extra
  })

const messageStart = (id: string, o: EnvelopeOptions = {}) =>
  se({
    type: "message_start",
    message: { id, type: "message", role: "assistant", model: "claude-test", content: [], usage: { input_tokens: 7 } }
  }, { ...o, messageId: id })
const blockStart = (index: number, block: Record<string, unknown>, o: EnvelopeOptions = {}) =>
  se({ type: "content_block_start", index, content_block: block }, o)
const delta = (index: number, d: Record<string, unknown>, o: EnvelopeOptions = {}) =>
  se({ type: "content_block_delta", index, delta: d }, o)
const textDelta = (index: number, text: string, o: EnvelopeOptions = {}) =>
  delta(index, { type: "text_delta", text }, o)
const jsonDelta = (index: number, partial_json: string, o: EnvelopeOptions = {}) =>
  delta(index, { type: "input_json_delta", partial_json }, o)
const blockStop = (index: number, o: EnvelopeOptions = {}) => se({ type: "content_block_stop", index }, o)
const messageDelta = (stop_reason: string | null, o: EnvelopeOptions = {}) =>
  se({ type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 42 } }, o)
const messageStop = (o: EnvelopeOptions = {}) => se({ type: "message_stop" }, o)

const assistant = (id: string, content: ReadonlyArray<unknown>, parent: string | null = null) =>
  toSdk({
    type: "assistant",
    message: { id, type: "message", role: "assistant", model: "claude-test", content, stop_reason: null },
    parent_tool_use_id: parent,
    session_id: SESSION,
    uuid: `u${++uuid}`
  })

const toolResult = (toolUseId: string, content: string, isError = false, parent: string | null = null) =>
  toSdk({
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: toolUseId, content, is_error: isError }] },
    parent_tool_use_id: parent,
    session_id: SESSION,
    uuid: `u${++uuid}`,
    tool_use_result: { stdout: content }
  })

const result = () =>
  toSdk({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "",
    duration_ms: 1,
    duration_api_ms: 1,
    num_turns: 1,
    session_id: SESSION,
    uuid: `u${++uuid}`,
    total_cost_usd: 0,
    usage: {},
    modelUsage: {},
    permission_denials: []
  })

// ---------------------------------------------------------------------------------------------------------------------
// recorded sequences
// ---------------------------------------------------------------------------------------------------------------------

describe("PartialMessages.assemble on recorded sequences", () => {
  it.effect("partial.jsonl: text, a tool call in two fragments, its output, the final answer", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("partial.jsonl"))
      expect(events.map(brief)).toEqual([
        "message-start msg_fake_mwwox745_56",
        "text-start 0",
        "text-delta 0 \"Calling Bash.\"",
        "text-end 0 \"Calling Bash.\"",
        "tool-input-start 1 Bash",
        "tool-input-delta 1",
        "tool-input-delta 1",
        "tool-input-available 1 {\"command\":\"echo partial-ok\",\"description\":\"Run a scripted command\"}",
        "message-finish msg_fake_mwwox745_56 tool_use",
        "tool-output-available Bash \"partial-ok\"",
        "message-start msg_fake_mwwox78j_58",
        "text-start 0",
        "text-delta 0 \"done\"",
        "text-end 0 \"done\"",
        "message-finish msg_fake_mwwox78j_58 end_turn"
      ])
      const finish = events.find((e): e is PartialMessages.MessageFinish => e.type === "message-finish")
      expect(finish?.content).toEqual([
        { type: "text", text: "Calling Bash." },
        {
          type: "tool_use",
          id: "toolu_fake_mwwox745_54",
          name: "Bash",
          input: { command: "echo partial-ok", description: "Run a scripted command" }
        }
      ])
      expect(finish?.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) })
      const output = events.find((e) => e.type === "tool-output-available")
      expect(output).toMatchObject({
        toolUseId: "toolu_fake_mwwox745_54",
        output: "partial-ok",
        isError: false,
        toolUseResult: { stdout: "partial-ok" },
        parentToolUseId: null
      })
    }))

  it.effect("interrupt.jsonl: the cut message finishes abandoned, the next turn streams normally", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("interrupt.jsonl"))
      expect(events.map(brief)).toEqual([
        "message-start msg_fake_mwwox24n_34",
        "text-start 0",
        "text-delta 0 \"w1 \"",
        // the CLI synthesizes the stop events after an interrupt; message_stop carries abandoned_blocks
        "text-end 0 \"w1 \"",
        "message-finish msg_fake_mwwox24n_34 null abandoned",
        "message-start msg_fake_mwwox2em_36",
        "text-start 0",
        "text-delta 0 \"after interrupt\"",
        "text-end 0 \"after interrupt\"",
        "message-finish msg_fake_mwwox2em_36 end_turn"
      ])
      const [finish] = events.filter((e) => e.type === "message-finish")
      // what the CLI kept: blocks before abandoned_blocks.from_block_index
      expect(finish).toMatchObject({ content: [{ type: "text", text: "w1 " }], abandoned: true })
    }))

  it.effect("real CLI stream: thinking with signature, text, a tool call in 8 fragments, an interrupted turn", () =>
    Effect.gen(function*() {
      const events = yield* run(recordedSdk("thinking-tool-interrupt.sdk.jsonl"))
      expect(events.map(brief)).toEqual([
        "message-start msg_sms_0",
        "thinking-start 0",
        "thinking-delta 0 \"let me think about it\"",
        "thinking-end 0 \"let me think about it\" sig_bGV0IG1lIHRoaW5rIGFib3V0",
        "text-start 1",
        "text-delta 1 \"I will run a command.\"",
        "text-end 1 \"I will run a command.\"",
        "tool-input-start 2 Bash",
        ...Array.from({ length: 8 }, () => "tool-input-delta 2"),
        "tool-input-available 2 {\"command\":\"echo hi-from-bash\",\"description\":\"say hi\"}",
        "message-finish msg_sms_0 tool_use",
        "tool-output-available Bash \"hi-from-bash\"",
        "message-start msg_sms_1",
        "text-start 0",
        "text-delta 0 \"The command said hi.\"",
        "text-end 0 \"The command said hi.\"",
        "message-finish msg_sms_1 end_turn",
        // the interrupted turn never reached the model: no events
        "message-start msg_sms_3",
        "text-start 0",
        "text-delta 0 \"after\"",
        "text-end 0 \"after\"",
        "message-finish msg_sms_3 end_turn"
      ])
      const fragments = events.flatMap((e) => e.type === "tool-input-delta" ? [e.delta] : [])
      expect(fragments.join("")).toBe("{\"command\":\"echo hi-from-bash\",\"description\":\"say hi\"}")
    }))
})

// ---------------------------------------------------------------------------------------------------------------------
// synthetic sequences
// ---------------------------------------------------------------------------------------------------------------------

describe("PartialMessages.assemble on synthetic sequences", () => {
  it.effect("interleaved blocks are tracked by index; content is ordered by index", () =>
    Effect.gen(function*() {
      const events = yield* run([
        messageStart("msg_1"),
        blockStart(0, { type: "text", text: "" }, { messageId: "msg_1" }),
        blockStart(1, { type: "tool_use", id: "toolu_1", name: "Read", input: {} }, { messageId: "msg_1" }),
        jsonDelta(1, "{\"file_", { messageId: "msg_1" }),
        textDelta(0, "Reading ", { messageId: "msg_1" }),
        jsonDelta(1, "path\":\"/a\"}", { messageId: "msg_1" }),
        blockStop(1, { messageId: "msg_1" }),
        textDelta(0, "the file", { messageId: "msg_1" }),
        blockStop(0, { messageId: "msg_1" }),
        messageDelta("tool_use", { messageId: "msg_1" }),
        messageStop({ messageId: "msg_1" })
      ])
      expect(events.map(brief)).toEqual([
        "message-start msg_1",
        "text-start 0",
        "tool-input-start 1 Read",
        "tool-input-delta 1",
        "text-delta 0 \"Reading \"",
        "tool-input-delta 1",
        "tool-input-available 1 {\"file_path\":\"/a\"}",
        "text-delta 0 \"the file\"",
        "text-end 0 \"Reading the file\"",
        "message-finish msg_1 tool_use"
      ])
      const finish = events.at(-1)
      expect(finish).toMatchObject({
        type: "message-finish",
        abandoned: false,
        usage: { input_tokens: 7, output_tokens: 42 },
        content: [
          { type: "text", text: "Reading the file" },
          { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/a" } }
        ]
      })
    }))

  it.effect("a tool input split into many fragments, and one that is not valid JSON", () =>
    Effect.gen(function*() {
      const json = JSON.stringify({ command: "echo one two three", description: "many fragments" })
      const fragments = json.match(/.{1,3}/g) ?? []
      const events = yield* run([
        messageStart("msg_1"),
        blockStart(0, { type: "tool_use", id: "toolu_ok", name: "Bash", input: {} }),
        ...fragments.map((f) => jsonDelta(0, f)),
        blockStop(0),
        blockStart(1, { type: "tool_use", id: "toolu_bad", name: "Bash", input: {} }),
        jsonDelta(1, "{\"command\": \"echo"),
        jsonDelta(1, " unterminated"),
        blockStop(1),
        blockStart(2, { type: "tool_use", id: "toolu_empty", name: "TaskList", input: {} }),
        blockStop(2),
        messageDelta("tool_use"),
        messageStop()
      ])
      expect(events.filter((e) => e.type === "tool-input-delta")).toHaveLength(fragments.length + 2)
      expect(events.find((e) => e.type === "tool-input-available" && e.toolUseId === "toolu_ok")).toMatchObject({
        input: { command: "echo one two three", description: "many fragments" }
      })
      const error = events.find((e) => e.type === "tool-input-error")
      expect(error).toMatchObject({
        type: "tool-input-error",
        toolUseId: "toolu_bad",
        toolName: "Bash",
        reason: "invalid_json",
        inputText: "{\"command\": \"echo unterminated",
        index: 1
      })
      expect(error?.type === "tool-input-error" && error.error.length).toBeGreaterThan(0)
      // no fragments at all: the input of content_block_start
      expect(events.find((e) => e.type === "tool-input-available" && e.toolUseId === "toolu_empty")).toMatchObject({
        input: {}
      })
      const finish = events.find((e) => e.type === "message-finish")
      expect(finish?.type === "message-finish" && finish.content.map((b) => b.type === "tool_use" && b.id)).toEqual([
        "toolu_ok",
        "toolu_empty"
      ])
    }))

  it.effect("thinking with a signature delta, then redacted thinking and an unknown block", () =>
    Effect.gen(function*() {
      const events = yield* run([
        messageStart("msg_1"),
        blockStart(0, { type: "thinking", thinking: "", signature: "" }),
        delta(0, { type: "thinking_delta", thinking: "step one, " }),
        delta(0, { type: "thinking_delta", thinking: "step two" }),
        delta(0, { type: "signature_delta", signature: "EqQBCkYIBxgCKkB" }),
        blockStop(0),
        blockStart(1, { type: "redacted_thinking", data: "opaque" }),
        blockStop(1),
        blockStart(2, { type: "brand_new_block", foo: 1 }),
        blockStop(2),
        messageDelta("end_turn"),
        messageStop()
      ])
      expect(events.map(brief)).toEqual([
        "message-start msg_1",
        "thinking-start 0",
        "thinking-delta 0 \"step one, \"",
        "thinking-delta 0 \"step two\"",
        "thinking-end 0 \"step one, step two\" EqQBCkYIBxgCKkB",
        "content-block 1 redacted_thinking",
        "content-block 2 unknown",
        "message-finish msg_1 end_turn"
      ])
      expect(events[4]).toMatchObject({
        block: { type: "thinking", thinking: "step one, step two", signature: "EqQBCkYIBxgCKkB" }
      })
      expect(events[6]).toMatchObject({ block: { type: "unknown", raw: { type: "brand_new_block", foo: 1 } } })
    }))

  it.effect("an interrupted message: blocks never stopped end abandoned at message_stop", () =>
    Effect.gen(function*() {
      const events = yield* run([
        messageStart("msg_1"),
        blockStart(0, { type: "text", text: "" }),
        textDelta(0, "Let me "),
        blockStart(1, { type: "tool_use", id: "toolu_1", name: "Bash", input: {} }),
        jsonDelta(1, "{\"comm"),
        messageDelta(null),
        messageStop({ extra: { abandoned_blocks: { api_message_id: "msg_1", from_block_index: 0 } } })
      ])
      expect(events.map(brief)).toEqual([
        "message-start msg_1",
        "text-start 0",
        "text-delta 0 \"Let me \"",
        "tool-input-start 1 Bash",
        "tool-input-delta 1",
        "text-end 0 \"Let me \" abandoned",
        "tool-input-error 1 abandoned",
        "message-finish msg_1 null abandoned"
      ])
      expect(events.at(-2)).toMatchObject({ inputText: "{\"comm", toolUseId: "toolu_1" })
      expect(events.at(-1)).toMatchObject({ content: [] })
    }))

  it.effect("messages still open end abandoned at the result, and when the stream ends", () =>
    Effect.gen(function*() {
      const atResult = yield* run([messageStart("msg_1"), blockStart(0, { type: "text", text: "" }), result()])
      expect(atResult.map(brief)).toEqual([
        "message-start msg_1",
        "text-start 0",
        "text-end 0 \"\" abandoned",
        "message-finish msg_1 null abandoned"
      ])
      const atEnd = yield* run([messageStart("msg_2"), blockStart(0, { type: "text", text: "" }), textDelta(0, "cut")])
      expect(atEnd.map(brief).slice(-2)).toEqual([
        "text-end 0 \"cut\" abandoned",
        "message-finish msg_2 null abandoned"
      ])
      // a new message_start while one is open (the CLI retried after a dropped connection)
      const restarted = yield* run([messageStart("msg_3"), messageStart("msg_4"), messageStop()])
      expect(restarted.map(brief)).toEqual([
        "message-start msg_3",
        "message-finish msg_3 null abandoned",
        "message-start msg_4",
        "message-finish msg_4 null"
      ])
    }))

  it.effect("several API messages in a turn, and subagents interleaved: each parent has its own message", () =>
    Effect.gen(function*() {
      const sub = { parent: "toolu_task" }
      const events = yield* run([
        messageStart("msg_main"),
        blockStart(0, { type: "tool_use", id: "toolu_task", name: "Task", input: {} }),
        jsonDelta(0, "{\"prompt\":\"look\"}"),
        blockStop(0),
        messageDelta("tool_use"),
        messageStop(),
        messageStart("msg_sub1", sub),
        blockStart(0, { type: "text", text: "" }, { ...sub, messageId: "msg_sub1" }),
        messageStart("msg_other", { parent: "toolu_task2" }),
        textDelta(0, "sub says", { ...sub, messageId: "msg_sub1" }),
        blockStart(0, { type: "text", text: "" }, { parent: "toolu_task2", messageId: "msg_other" }),
        textDelta(0, "other says", { parent: "toolu_task2", messageId: "msg_other" }),
        blockStop(0, { ...sub, messageId: "msg_sub1" }),
        messageStop(sub),
        blockStop(0, { parent: "toolu_task2", messageId: "msg_other" }),
        messageStop({ parent: "toolu_task2" }),
        toolResult("toolu_task", "sub done"),
        messageStart("msg_main2"),
        blockStart(0, { type: "text", text: "" }),
        textDelta(0, "all done"),
        blockStop(0),
        messageDelta("end_turn"),
        messageStop()
      ])
      const texts = events.flatMap((e) => e.type === "text-end" ? [[e.messageId, e.parentToolUseId, e.text]] : [])
      expect(texts).toEqual([
        ["msg_sub1", "toolu_task", "sub says"],
        ["msg_other", "toolu_task2", "other says"],
        ["msg_main2", null, "all done"]
      ])
      expect(events.filter((e) => e.type === "message-finish").map((e) => e.abandoned)).toEqual([
        false,
        false,
        false,
        false
      ])
      expect(events.find((e) => e.type === "tool-output-available")).toMatchObject({
        toolName: "Task",
        text: "sub done",
        parentToolUseId: null
      })
      expect(
        events.filter((e) => e.type === "text-delta").every((e) =>
          e.parentToolUseId === (
            e.messageId === "msg_main2" ? null : e.messageId === "msg_sub1" ? "toolu_task" : "toolu_task2"
          )
        )
      ).toBe(true)
    }))

  it.effect("replies that were not streamed become the same events; streamed ones are not repeated", () =>
    Effect.gen(function*() {
      const events = yield* run([
        // streamed: its assistant message (one per block) is ignored
        messageStart("msg_1"),
        blockStart(0, { type: "text", text: "" }),
        textDelta(0, "streamed"),
        assistant("msg_1", [{ type: "text", text: "streamed" }]),
        blockStop(0),
        messageDelta("end_turn"),
        messageStop(),
        // not streamed (e.g. partial messages off): one assistant message per block, same id
        assistant("msg_2", [{ type: "thinking", thinking: "hm", signature: "s" }]),
        assistant("msg_2", [{ type: "text", text: "whole" }]),
        assistant("msg_2", [{ type: "tool_use", id: "toolu_9", name: "Bash", input: { command: "ls" } }]),
        toolResult("toolu_9", "boom", true),
        assistant("msg_3", [{ type: "text", text: "again" }]),
        result()
      ])
      expect(events.map(brief)).toEqual([
        "message-start msg_1",
        "text-start 0",
        "text-delta 0 \"streamed\"",
        "text-end 0 \"streamed\"",
        "message-finish msg_1 end_turn",
        "message-start msg_2",
        "thinking-start 0",
        "thinking-delta 0 \"hm\"",
        "thinking-end 0 \"hm\" s",
        "text-start 1",
        "text-delta 1 \"whole\"",
        "text-end 1 \"whole\"",
        "tool-input-start 2 Bash",
        "tool-input-available 2 {\"command\":\"ls\"}",
        "message-finish msg_2 null",
        "tool-output-available Bash \"boom\" error",
        "message-start msg_3",
        "text-start 0",
        "text-delta 0 \"again\"",
        "text-end 0 \"again\"",
        "message-finish msg_3 null"
      ])
    }))

  it.effect("passThrough: none, others, all", () =>
    Effect.gen(function*() {
      const input = recorded("partial.jsonl")
      const none = yield* run(input)
      const others = yield* run(input, { passThrough: "others" })
      const all = yield* run(input, { passThrough: "all" })
      const passed = (events: ReadonlyArray<UiEvent>) => events.flatMap((e) => e.type === "message" ? [e.message] : [])
      expect(passed(none)).toEqual([])
      expect(passed(others)).toEqual(input.filter((m) => m.type !== "stream_event"))
      expect(passed(all)).toEqual(input)
      // the derived events are the same, and come before the message they derive from
      expect(others.filter((e) => e.type !== "message")).toEqual(none)
      const outputAt = others.findIndex((e) => e.type === "tool-output-available")
      expect(others[outputAt + 1]).toMatchObject({ type: "message", message: { type: "user" } })
      const lastFinish = others.map((e) => e.type).lastIndexOf("message-finish")
      expect(others.slice(lastFinish + 1).map(brief)).toEqual(["message result", "message system"])
    }))

  it.effect("assemble / assembleWith forms; input errors pass through after the events so far", () =>
    Effect.gen(function*() {
      const input = Stream.fromIterable([messageStart("msg_1"), blockStart(0, { type: "text", text: "" })])
      const a = yield* Stream.runCollect(PartialMessages.assemble(input))
      const b = yield* Stream.runCollect(input.pipe(PartialMessages.assemble))
      const c = yield* Stream.runCollect(input.pipe(PartialMessages.assembleWith({})))
      const d = yield* Stream.runCollect(PartialMessages.assembleWith(input, { passThrough: "all" }))
      expect(Chunk.toArray(a)).toEqual(Chunk.toArray(b))
      expect(Chunk.toArray(b)).toEqual(Chunk.toArray(c))
      expect(Chunk.size(d)).toBe(Chunk.size(a) + 2)
      const seen: Array<string> = []
      const error = yield* input.pipe(
        Stream.concat(Stream.fail("boom")),
        PartialMessages.assemble,
        Stream.runForEach((e) => Effect.sync(() => seen.push(brief(e)))),
        Effect.flip
      )
      expect(error).toBe("boom")
      // a failed input is not flushed: nothing is invented after the error
      expect(seen).toEqual(["message-start msg_1", "text-start 0"])
    }))

  it("step / flush: the pure state machine", () => {
    const [s1, e1] = PartialMessages.step(PartialMessages.initial, messageStart("msg_1"))
    const [s2, e2] = PartialMessages.step(s1, blockStart(0, { type: "text", text: "" }))
    const [s3, e3] = PartialMessages.step(s2, textDelta(0, "hi"))
    expect([...e1, ...e2, ...e3].map(brief)).toEqual(["message-start msg_1", "text-start 0", "text-delta 0 \"hi\""])
    // earlier states are not changed by later steps
    expect(PartialMessages.flush(s2).map(brief)).toEqual([
      "text-end 0 \"\" abandoned",
      "message-finish msg_1 null abandoned"
    ])
    expect(PartialMessages.flush(s3).map(brief)).toEqual([
      "text-end 0 \"hi\" abandoned",
      "message-finish msg_1 null abandoned"
    ])
    expect(PartialMessages.flush(PartialMessages.initial)).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------------------------------
// real CLI
// ---------------------------------------------------------------------------------------------------------------------

describe("PartialMessages against the real CLI", () => {
  it.live(
    "thinking + text + a tool call whose input arrives in many fragments",
    () =>
      noClaudeLeft(Effect.scoped(Effect.gen(function*() {
        const command = "echo fragmented-input-ok"
        const { options } = yield* realCli({
          toolInputFragments: 12,
          replies: [
            ScriptedModelServer.reply(
              ScriptedModelServer.thinking("I should run a command"),
              ScriptedModelServer.text("Running it now."),
              ScriptedModelServer.toolUse("Bash", { command, description: "print a marker" })
            ),
            ScriptedModelServer.reply(ScriptedModelServer.text("The command printed the marker."))
          ]
        })
        const events = yield* ClaudeAgent.query(
          "run the command",
          options({
            includePartialMessages: true,
            permissionMode: "bypassPermissions",
            allowDangerouslySkipPermissions: true
          })
        ).pipe(PartialMessages.assembleWith({ passThrough: "others" }), Stream.runCollect, Effect.map(Chunk.toArray))

        const derived = events.filter((e) => e.type !== "message")
        const kinds = derived.map((e) => e.type)
        expect(kinds.filter((k) => k === "message-start")).toHaveLength(2)
        expect(kinds.filter((k) => k === "tool-input-delta")).toHaveLength(12)
        const thinking = derived.find((e) => e.type === "thinking-end")
        expect(thinking).toMatchObject({ thinking: "I should run a command", abandoned: false, index: 0 })
        expect(thinking?.type === "thinking-end" && thinking.signature).toEqual(expect.any(String))
        expect(derived.find((e) => e.type === "text-end")).toMatchObject({ text: "Running it now.", index: 1 })
        const start = derived.find((e) => e.type === "tool-input-start")
        const input = derived.find((e) => e.type === "tool-input-available")
        expect(input).toMatchObject({ toolName: "Bash", index: 2, input: { command, description: "print a marker" } })
        const output = derived.find((e) => e.type === "tool-output-available")
        expect(output).toMatchObject({ toolName: "Bash", text: "fragmented-input-ok", isError: false })
        expect(
          start?.type === "tool-input-start" && output?.type === "tool-output-available" &&
            start.toolUseId === output.toolUseId
        ).toBe(true)
        const finishes = derived.filter((e): e is PartialMessages.MessageFinish => e.type === "message-finish")
        expect(finishes.map((f) => [f.stopReason, f.abandoned])).toEqual([["tool_use", false], ["end_turn", false]])
        expect(finishes[0]?.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use"])
        expect(derived.filter((e) => e.type === "text-end").map((e) => e.type === "text-end" && e.text)).toEqual([
          "Running it now.",
          "The command printed the marker."
        ])
        expect(derived.every((e) => !("parentToolUseId" in e) || e.parentToolUseId === null)).toBe(true)
        // the events of a message come in protocol order
        const order = derived.map((e) => e.type)
        expect(order.indexOf("thinking-end")).toBeLessThan(order.indexOf("text-start"))
        expect(order.indexOf("tool-input-available")).toBeLessThan(order.indexOf("message-finish"))
        // the CLI runs a tool as soon as its input is complete: its output may come before the message's last event
        expect(order.indexOf("tool-input-available")).toBeLessThan(order.indexOf("tool-output-available"))
        // the pass-through ends with the result
        expect(events.at(-1)).toMatchObject({ type: "message", message: { type: "result", subtype: "success" } })
      }))).pipe(Effect.provide(NodeClaudeAgent.layer)),
    60_000
  )
})
