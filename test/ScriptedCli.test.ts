import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentError, ClaudeAgent, Message } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

/** A scripted layer plus the ScriptedCli of its (single) open, for assertions. */
const scripted = (
  script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<void, ScriptedCli.ScriptError>,
  options?: ScriptedCli.Options
) =>
  Effect.gen(function*() {
    const handle = yield* Deferred.make<ScriptedCli.ScriptedCli>()
    const layer = ScriptedCli.layer((cli) => Effect.zipRight(Deferred.succeed(handle, cli), script(cli)), options)
    return { layer, cli: Deferred.await(handle) }
  })

const kinds = (messages: Chunk.Chunk<Message.SdkMessage>) =>
  Chunk.toReadonlyArray(messages).map((m) =>
    m.type === "system"
      ? `system/${m.subtype}`
      : m.type === "transport_error"
      ? `transport_error/${m.error._tag}`
      : m.type
  )

describe("ScriptedCli faults, as the SDK reports them", () => {
  it.scoped("crash with a code and stderr: ProcessExited { code, signal: null, stderrTail }", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.exit(3, "fatal: out of cheese\n")
        })
      )
      const exit = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.exit, Effect.provide(layer))
      expect(exit).toStrictEqual(
        Exit.fail(new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "fatal: out of cheese\n" }))
      )
    }))

  it.scoped("killed by a signal: ProcessExited { code: null, signal }", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.assistant("working")
          yield* cli.kill("SIGKILL")
        })
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      const exit = yield* session.turn("go").pipe(Stream.runCollect, Effect.exit)
      expect(exit).toStrictEqual(
        Exit.fail(new AgentError.ProcessExited({ code: null, signal: "SIGKILL", stderrTail: "" }))
      )
      // every later write fails the same way
      const send = yield* Effect.flip(session.send("again"))
      expect(send).toMatchObject({ _tag: "ProcessExited", signal: "SIGKILL" })
      expect(yield* session.state).toBe("exited")
    }))

  it.scoped("a CLI that exits at once: a typed start-up failure with its exit code and stderr", () =>
    Effect.gen(function*() {
      const error = yield* ClaudeAgent.query("x").pipe(
        Stream.runCollect,
        Effect.flip,
        Effect.provide(ScriptedCli.exitsAtOnce(1, "error: unknown option '--bogus'\n"))
      )
      // the CLI died before answering initialize: `StartupFailed` (or the `ProcessExited` it wraps)
      const reported = error._tag === "StartupFailed" ? error.cause : error
      expect(reported).toStrictEqual(
        new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "error: unknown option '--bogus'\n" })
      )
    }))

  it.scoped("a CLI that never answers initialize: StartupFailed after initializeTimeout", () =>
    Effect.gen(function*() {
      const fiber = yield* ClaudeAgent.query("x", { initializeTimeout: "30 seconds" }).pipe(
        Stream.runCollect,
        Effect.provide(ScriptedCli.neverAnswersInitialize),
        Effect.fork
      )
      yield* TestClock.adjust("29 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "StartupFailed", reason: "FirstLine" })
      expect(error._tag === "StartupFailed" ? error.cause : undefined).toMatchObject({
        _tag: "ControlTimeout",
        subtype: "initialize",
        timeoutMillis: 30_000
      })
    }))

  it.scoped("a malformed line: in-band MalformedLine, the stream goes on", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.malformed("Welcome to Claude Code (banner)")
          yield* cli.assistant("still here")
          yield* cli.result("done")
        })
      )
      const messages = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.provide(layer))
      expect(kinds(messages)).toEqual(["system/init", "transport_error/MalformedLine", "assistant", "result"])
      const error = Chunk.toReadonlyArray(messages).find((m) => m.type === "transport_error")
      expect(error?.type === "transport_error" ? error.error : undefined).toBeInstanceOf(AgentError.MalformedLine)
      expect(error).toMatchObject({ error: { line: "Welcome to Claude Code (banner)" } })
    }))

  it.scoped("a giant line over maxLineBytes: in-band LineTooLong, the stream goes on", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.giantLine(2 * 1024 * 1024)
          yield* cli.assistant("after the giant line")
          yield* cli.result("done")
        })
      )
      const messages = yield* ClaudeAgent.query("x", { maxLineBytes: 1024 * 1024 }).pipe(
        Stream.runCollect,
        Effect.provide(layer)
      )
      expect(kinds(messages)).toEqual(["transport_error/LineTooLong", "assistant", "result"])
      const [first] = Chunk.toReadonlyArray(messages)
      expect(first?.type === "transport_error" ? first.error : undefined).toBeInstanceOf(AgentError.LineTooLong)
      expect(first).toMatchObject({ error: { limit: 1024 * 1024 } })
      if (first?.type === "transport_error" && first.error._tag === "LineTooLong") {
        expect(first.error.bytes).toBeGreaterThan(2 * 1024 * 1024)
        expect(first.error.head.startsWith("{\"type\":\"assistant\"")).toBe(true)
      }
    }))

  it.scoped("a giant line under the limit arrives intact", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.giantLine(3 * 1024 * 1024)
          yield* cli.result("done")
        })
      )
      const messages = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.provide(layer))
      const assistant = Chunk.toReadonlyArray(messages).find(Message.isAssistantMessage)
      expect(assistant === undefined ? 0 : Message.text(assistant).length).toBe(3 * 1024 * 1024)
    }))

  it.scoped("an unknown message type: an UnknownMessage with the raw frame, the stream goes on", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.unknownMessage("hologram", { payload: { x: 1 } })
          yield* cli.emit({ type: "system", subtype: "future_subtype", session_id: cli.sessionId, uuid: "u" })
          yield* cli.turn("done")
        })
      )
      const messages = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.provide(layer))
      expect(kinds(messages)).toEqual(["unknown", "unknown", "system/init", "assistant", "result"])
      const [first, second] = Chunk.toReadonlyArray(messages)
      expect(first).toMatchObject({
        type: "unknown",
        reason: "unknown_type",
        raw: { type: "hologram", payload: { x: 1 } }
      })
      expect(second).toMatchObject({ type: "unknown", reason: "unknown_subtype", raw: { subtype: "future_subtype" } })
      expect(first !== undefined && Message.isUnknownMessage(first)).toBe(true)
    }))

  it.scoped("a slow control response past controlRequestTimeout: ControlTimeout, and the request is cancelled", () =>
    Effect.gen(function*() {
      const { layer, cli } = yield* scripted((cli) => Effect.zipRight(cli.slow("set_model", "10 seconds"), cli.stall))
      const session = yield* ClaudeAgent.session({ controlRequestTimeout: "1 second" }).pipe(Effect.provide(layer))
      yield* session.initializationResult
      const fiber = yield* Effect.fork(session.setModel("haiku"))
      const scriptedCli = yield* cli
      yield* scriptedCli.expectControl("set_model")
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "ControlTimeout", subtype: "set_model", timeoutMillis: 1000 })
      expect(error).toBeInstanceOf(AgentError.ControlTimeout)
      const received = yield* scriptedCli.received
      const request = received.find((f) => f.type === "control_request" && f.request.subtype === "set_model")
      const cancel = received.find((f) => f.type === "control_cancel_request")
      expect(cancel).toEqual({
        type: "control_cancel_request",
        request_id: request?.type === "control_request" ? request.request_id : "?"
      })
      // the late answer is ignored, and the session still works
      yield* TestClock.adjust("10 seconds")
      expect(yield* session.interrupt).toEqual({ still_queued: [] })
    }))

  it.scoped("a slow control response within the timeout is waited for", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) => cli.stall, { delays: { mcp_status: "3 seconds" } })
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      const fiber = yield* Effect.fork(session.mcpServerStatus)
      yield* TestClock.adjust("2 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toEqual([])
    }))

  it.scoped("a control request never answered does not block the rest of the conversation", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.neverAnswer("get_context_usage")
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
        })
      )
      const session = yield* ClaudeAgent.session({ controlRequestTimeout: "5 seconds" }).pipe(Effect.provide(layer))
      const usage = yield* Effect.fork(session.getContextUsage())
      const turn = yield* Stream.runCollect(session.turn("hello"))
      expect(Chunk.unsafeLast(turn)).toMatchObject({ type: "result", result: "hello" })
      yield* TestClock.adjust("5 seconds")
      expect(yield* Effect.flip(Fiber.join(usage))).toMatchObject({ _tag: "ControlTimeout" })
    }))

  it.scoped("a stall mid-turn: the stream stays open until the caller gives up, then stdin is closed", () =>
    Effect.gen(function*() {
      const { layer, cli } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.stall
        })
      )
      const fiber = yield* ClaudeAgent.query("x").pipe(
        Stream.runCollect,
        Effect.timeoutFail({ duration: "1 minute", onTimeout: () => "gave up" as const }),
        Effect.provide(layer),
        Effect.fork
      )
      yield* TestClock.adjust("59 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      expect(yield* Effect.flip(Fiber.join(fiber))).toBe("gave up")
      yield* (yield* cli).peer.inputEnded
    }))

  it.scoped("a script step that fails ends the fake CLI with code 70 and the reason on stderr", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) => Effect.asVoid(cli.expectControl("set_model")), {
        stepTimeout: "1 second"
      })
      const fiber = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.provide(layer), Effect.fork)
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "ProcessExited", code: 70 })
      const stderrTail = error._tag === "ProcessExited" ? error.stderrTail : ""
      expect(stderrTail).toContain("waiting for a set_model control request")
    }))
})
