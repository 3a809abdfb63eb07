import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, ClaudeAgent, Message, Permissions } from "effect-claude-agent"
import { Recording, ScriptedCli } from "effect-claude-agent/testing"
import { tempDir } from "./support/cli.js"

/** A CLI that asks to run a command and reports what the client decided. */
const toolCli = ScriptedCli.layer((cli) =>
  Effect.gen(function*() {
    const prompt = yield* cli.expectUser
    yield* cli.init()
    const answer = yield* cli.canUseTool("Bash", { command: ScriptedCli.textOf(prompt) }, { tool_use_id: "toolu_1" })
    const allowed = typeof answer === "object" && answer !== null && "behavior" in answer && answer.behavior === "allow"
    yield* cli.assistant(allowed ? "ran it" : "was not allowed")
    yield* cli.result(allowed ? "ran" : "denied")
  })
)

const resultText = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
  return result?.subtype === "success" ? result.result : undefined
}

const runTool = ClaudeAgent.query("echo hi").pipe(Stream.runCollect, Effect.map(resultText))

const recordTo = (file: string) => Recording.layerRecord(file).pipe(Layer.provide(toolCli))

const lines = (file: string) =>
  fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)

describe("Recording.layerRecord", () => {
  it.scoped("writes every frame in both directions, with direction and time, then end_input and exit", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "nested", "tool.jsonl")
      const text = yield* runTool.pipe(Effect.provide(Permissions.allowAll), Effect.provide(recordTo(file)))
      expect(text).toBe("ran")
      const entries = lines(file)
      expect(entries[0]).toMatchObject({ event: "recording", version: 1 })
      expect(entries[1]).toMatchObject({ event: "open", connection: 0, t: 0 })
      expect((entries[1]?.["args"] as Array<string>).some((a) => a.startsWith("--session-id="))).toBe(true)
      const events = entries.slice(2).map((e) => {
        const frame = e["frame"] as Record<string, unknown> | undefined
        const request = frame?.["request"] as Record<string, unknown> | undefined
        const type = frame === undefined ? "" : ` ${frame["type"]}`
        return `${e["event"]}${type}${request ? ` ${request["subtype"]}` : ""}`
      })
      expect(events.filter((e) => e.startsWith("stdin"))).toEqual([
        "stdin control_request initialize",
        "stdin user",
        "stdin control_response"
      ])
      expect(events).toContain("stdout control_request can_use_tool")
      expect(events.slice(-2)).toEqual(["end_input", "exit"])
      expect(entries.at(-1)).toMatchObject({ event: "exit", code: 0, signal: null })
      for (const e of entries.slice(1)) expect(typeof e["t"]).toBe("number")
    }))

  it.scoped("a file that cannot be written fails the layer with RecordingError", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir()
      fs.writeFileSync(path.join(dir, "file"), "")
      const error = yield* runTool.pipe(Effect.provide(recordTo(path.join(dir, "file", "x.jsonl"))), Effect.flip)
      expect(error).toMatchObject({ _tag: "RecordingError", reason: "WriteFailed" })
    }))
})

describe("Recording.replay", () => {
  it.scoped("replays a recorded session with no CLI: same messages, new request and session ids", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "tool.jsonl")
      yield* runTool.pipe(Effect.provide(Permissions.allowAll), Effect.provide(recordTo(file)))

      const program = Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        const messages = yield* Stream.runCollect(session.turn("echo hi"))
        return { messages, sessionId: session.origin.sessionId }
      })
      // a session instead of a query sends the same frames (and stdin closes when the scope does)
      const replayed = yield* program.pipe(
        Effect.scoped,
        Effect.provide(Permissions.allowAll),
        Recording.replay(file)
      )
      expect(resultText(replayed.messages)).toBe("ran")
      const init = Chunk.toReadonlyArray(replayed.messages).find(Message.isSystemInit)
      // the recorded session id was replaced by the one assigned now
      expect(init?.session_id).toBe(replayed.sessionId)
      const recordedArgs = lines(file)[1]?.["args"] as Array<string>
      expect(recordedArgs).not.toContain(`--session-id=${replayed.sessionId}`)

      expect(yield* runTool.pipe(Effect.provide(Permissions.allowAll), Recording.replay(file))).toBe("ran")
    }))

  it.scoped("a changed client decision fails with a diff naming the frame", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "tool.jsonl")
      yield* runTool.pipe(Effect.provide(Permissions.allowAll), Effect.provide(recordTo(file)))

      const error = yield* runTool.pipe(Effect.provide(Permissions.denyAll), Recording.replay(file), Effect.flip)
      expect(error).toBeInstanceOf(Recording.ReplayMismatch)
      if (error._tag !== "ReplayMismatch") return
      expect(error.reason).toBe("FrameDiffers")
      expect(error.connection).toBe(0)
      expect(error.frame).toMatch(/^stdin control_response \(success\) to can_use_tool /)
      expect(error.line).toBe(error.index + 3)
      expect(error.differences).toContainEqual({
        path: "response.response.behavior",
        recorded: "\"allow\"",
        sent: "\"deny\""
      })
      expect(error.message).toContain(`frame #${error.index} of connection 0, line ${error.line} of ${file}`)
      expect(error.message).toContain(
        "at response.response.behavior\n    - recorded: \"allow\"\n    + sent:     \"deny\""
      )
      expect(error.message).toContain("at response.response.message\n    - recorded: (absent)")
    }))

  it.scoped("control requests are re-correlated to the ids the client uses now; a changed payload is a diff", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "controls.jsonl")
      const cli = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.expectEndInput
        })
      )
      const program = (model: string) =>
        Effect.gen(function*() {
          const session = yield* ClaudeAgent.session()
          yield* session.setModel(model)
          const usage = yield* session.getContextUsage()
          const turn = yield* Stream.runCollect(session.turn("hello"))
          return { usage, result: resultText(turn) }
        }).pipe(Effect.scoped)
      const recorded = yield* program("haiku").pipe(
        Effect.provide(Recording.layerRecord(file).pipe(Layer.provide(cli)))
      )
      const replayed = yield* program("haiku").pipe(Recording.replay(file))
      expect(replayed).toEqual(recorded)

      const error = yield* program("opus").pipe(Recording.replay(file), Effect.flip)
      expect(error).toMatchObject({
        _tag: "ReplayMismatch",
        reason: "FrameDiffers",
        frame: "stdin control_request set_model"
      })
      if (error._tag === "ReplayMismatch") {
        expect(error.differences).toEqual([{ path: "request.model", recorded: "\"haiku\"", sent: "\"opus\"" }])
      }
    }))

  it.scoped("changed options (the CLI's arguments) fail with LaunchDiffers", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "tool.jsonl")
      yield* runTool.pipe(Effect.provide(Permissions.allowAll), Effect.provide(recordTo(file)))
      const error = yield* ClaudeAgent.query("echo hi", { model: "opus" }).pipe(
        Stream.runCollect,
        Effect.provide(Permissions.allowAll),
        Recording.replay(file),
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "ReplayMismatch", reason: "LaunchDiffers" })
      expect(error.message).toContain("--model=opus")
      // unless asked not to check them
      const text = yield* ClaudeAgent.query("echo hi", { model: "opus" }).pipe(
        Stream.runCollect,
        Effect.map(resultText),
        Effect.provide(Permissions.allowAll),
        Recording.replay(file, { checkArgs: false })
      )
      expect(text).toBe("ran")
    }))

  it.scoped("a client that does less than recorded fails with MissingFrame; one that does more, with a diff", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "two-turns.jsonl")
      const cli = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
        })
      )
      const turns = (prompts: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const session = yield* ClaudeAgent.session()
          for (const p of prompts) yield* Stream.runDrain(session.turn(p))
        }).pipe(Effect.scoped)
      yield* turns(["one", "two"]).pipe(Effect.provide(Recording.layerRecord(file).pipe(Layer.provide(cli))))
      yield* turns(["one", "two"]).pipe(Recording.replay(file))

      const fewer = yield* turns(["one"]).pipe(Recording.replay(file), Effect.flip)
      expect(fewer).toMatchObject({ _tag: "ReplayMismatch", reason: "MissingFrame", frame: "stdin user message" })
      expect(fewer.message).toContain("the client closed stdin before sending this frame")

      const other = yield* turns(["one", "three"]).pipe(Recording.replay(file), Effect.flip)
      expect(other).toMatchObject({ _tag: "ReplayMismatch", reason: "FrameDiffers" })
      if (other._tag === "ReplayMismatch") {
        expect(other.differences).toEqual([
          { path: "message.content[0].text", recorded: "\"two\"", sent: "\"three\"" }
        ])
      }
      const more = yield* turns(["one", "two", "three"]).pipe(Recording.replay(file), Effect.flip)
      expect(more).toMatchObject({ _tag: "ReplayMismatch", reason: "UnexpectedFrame" })
    }))

  it.scoped("in-band line errors, unknown frames and a crash are replayed as they happened", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "faults.jsonl")
      const cli = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.malformed("Welcome banner")
          yield* cli.giantLine(4096)
          yield* cli.unknownMessage("hologram", { payload: [1, 2] })
          yield* cli.emit({
            type: "assistant",
            message: {
              id: "msg_1",
              type: "message",
              role: "assistant",
              model: "m",
              content: [{ type: "future_block", data: "z" }],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: 1, output_tokens: 1 }
            },
            parent_tool_use_id: null,
            session_id: cli.sessionId,
            uuid: "u"
          })
          yield* cli.exit(3, "fatal: out of cheese\n")
        })
      )
      const program = ClaudeAgent.query("x", { maxLineBytes: 1024 }).pipe(
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray),
        Effect.exit
      )
      const live = yield* program.pipe(Effect.provide(Recording.layerRecord(file).pipe(Layer.provide(cli))))
      const replayed = yield* program.pipe(Recording.replay(file))
      expect(live).toStrictEqual(
        Exit.fail(new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "fatal: out of cheese\n" }))
      )
      expect(replayed).toStrictEqual(live)
      // the same through a session's turn (its own reader): the crash is the CLI's, not a start-up failure
      const turn = Effect.scoped(
        Effect.flatMap(ClaudeAgent.session({ maxLineBytes: 1024 }), (s) => Stream.runDrain(s.turn("x")))
      ).pipe(Effect.exit)
      expect(yield* turn.pipe(Recording.replay(file))).toStrictEqual(live)
      // the frames before the crash
      const frames = yield* ClaudeAgent.query("x", { maxLineBytes: 1024 }).pipe(
        Stream.catchAll(() => Stream.empty),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray),
        Recording.replay(file)
      )
      expect(frames.map((f) => (f.type === "transport_error" ? f.error._tag : f.type))).toEqual([
        "MalformedLine",
        "LineTooLong",
        "unknown",
        "assistant"
      ])
      expect(frames[2]).toMatchObject({ type: "unknown", raw: { type: "hologram", payload: [1, 2] } })
      expect(frames[3]).toMatchObject({ message: { content: [{ type: "unknown", raw: { type: "future_block" } }] } })
      // recorded in wire form
      const stdout = lines(file).filter((e) => e["event"] === "stdout").map((e) => e["frame"])
      expect(stdout).toContainEqual(expect.objectContaining({ type: "hologram" }))
      expect(stdout).toContainEqual({
        type: "transport_error",
        error: { _tag: "MalformedLine", line: "Welcome banner", reason: "InvalidJson", description: expect.any(String) }
      })
    }))

  it.scoped("timing: \"recorded\" keeps the recorded delays, on the Clock", () =>
    Effect.gen(function*() {
      const recording = yield* Recording.parse(
        [
          { event: "open", connection: 0, t: 0, args: [] },
          { event: "stdout", connection: 0, t: 5000, frame: { type: "prompt_suggestion", suggestion: "late" } },
          { event: "exit", connection: 0, t: 5000, code: 0, signal: null }
        ].map((e) => JSON.stringify(e)).join("\n")
      )
      const layer = Recording.layerReplay(recording, { timing: "recorded", checkArgs: false })
      const fiber = yield* Effect.scoped(
        Effect.flatMap(ClaudeAgent.session(), (s) => Stream.runCollect(s.messages))
      ).pipe(Effect.provide(layer), Effect.fork)
      yield* TestClock.adjust("4 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      const messages = yield* Fiber.join(fiber)
      expect(Chunk.toReadonlyArray(messages)).toEqual([{ type: "prompt_suggestion", suggestion: "late" }])
    }))

  it.effect("an invalid recording fails with RecordingError naming the line", () =>
    Effect.gen(function*() {
      const text = `${JSON.stringify({ event: "open", connection: 0, t: 0, args: [] })}\n{oops`
      const error = yield* Effect.flip(Recording.parse(text, "x.jsonl"))
      expect(error).toMatchObject({ _tag: "RecordingError", reason: "InvalidRecording", path: "x.jsonl" })
      expect(error.message).toContain("line 2: not JSON")
      const missing = yield* Effect.flip(Recording.read("/nonexistent/recording.jsonl"))
      expect(missing).toMatchObject({ _tag: "RecordingError", reason: "ReadFailed" })
    }))
})

describe("Recording: secrets", () => {
  it.scoped("mcp_set_servers env and header values are redacted in the file, and a replay still matches", () =>
    Effect.gen(function*() {
      const file = path.join(yield* tempDir(), "servers.jsonl")
      const cli = ScriptedCli.layer((cli) => Effect.asVoid(cli.expectControl("mcp_set_servers")))
      const program = (token: string) =>
        Effect.gen(function*() {
          const session = yield* ClaudeAgent.session()
          return yield* session.setMcpServers({
            files: { command: "files-mcp", args: [], env: { API_TOKEN: token } },
            docs: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: `Bearer ${token}` } }
          })
        }).pipe(Effect.scoped)
      yield* program("s3cr3t-one").pipe(Effect.provide(Recording.layerRecord(file).pipe(Layer.provide(cli))))
      const text = fs.readFileSync(file, "utf8")
      expect(text).not.toContain("s3cr3t-one")
      expect(text).toContain("API_TOKEN")
      expect(text).toContain("Authorization")
      // the replay compares names, not values: another token still replays
      yield* program("s3cr3t-two").pipe(Recording.replay(file))
    }))
})
