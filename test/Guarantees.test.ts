// PAIN.md's guarantees that are not covered by a test named after them elsewhere (grep the suite for "G<n> ").
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent, Hooks, Message, Permissions, SdkMcp, type Transport } from "effect-claude-agent"
import { FakeCli, ScriptedCli } from "effect-claude-agent/testing"
import * as Schema from "effect/Schema"
import { NodeClaudeAgent, noClaudeLeft } from "./support/cli.js"
import { isAlive } from "./support/process.js"
import { eventually } from "./support/wait.js"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 30_000)

describe("G1 silence becomes IdleTimeout", () => {
  live(
    "G1 a CLI that stalls after init fails with IdleTimeout within the timeout + 2 s and is killed",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([
          FakeCli.expectUser(),
          FakeCli.init(),
          FakeCli.assistant("working…"),
          FakeCli.stall
        ])
        const started = Date.now()
        const session = yield* ClaudeAgent.session(FakeCli.options(scenario, { idleTimeout: "2 seconds" }))
        const pid = Option.getOrThrow(session.pid)
        const error = yield* Stream.runDrain(session.turn("go")).pipe(Effect.flip)
        const took = Date.now() - started
        expect(error).toBeInstanceOf(AgentError.IdleTimeout)
        expect(error).toMatchObject({ reason: "Idle", timeoutMillis: 2000 })
        expect(took).toBeLessThan(2000 + 2000)
        expect(took).toBeGreaterThanOrEqual(2000)
        // the watchdog reports the timeout first (so the session ends with it, not with the exit its kill causes),
        // then signals the CLI: the process dies when the kernel next runs it, which on a busy machine can be after
        // the caller has the error
        yield* eventually(`the stalled CLI ${pid} killed`, () => !isAlive(pid))
      })
  )
})

describe("G3 interrupt is bounded", () => {
  live(
    "G3 a CLI that ignores interrupt: InterruptTimeout once interruptTimeout has passed, the session still usable",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([FakeCli.echo], {
          answers: { interrupt: FakeCli.noAnswer }
        })
        const session = yield* ClaudeAgent.session(FakeCli.options(scenario, { interruptTimeout: "1 second" }))
        const started = Date.now()
        const error = yield* Effect.flip(session.interrupt)
        const took = Date.now() - started
        expect(error).toStrictEqual(new AgentError.InterruptTimeout({ timeoutMillis: 1000 }))
        // not before the timeout; the upper bound only says "bounded" (the exact timing is Timeouts.test.ts's, on the
        // TestClock), generous enough for a loaded machine
        expect(took).toBeGreaterThanOrEqual(1000 - 5)
        expect(took).toBeLessThan(1000 + 2000)
        const turn = yield* Stream.runCollect(session.turn("still there?"))
        expect(Chunk.toReadonlyArray(turn).some(Message.isResultMessage)).toBe(true)
      })
  )
})

describe("G4 a killed CLI is a typed error, everywhere", () => {
  live(
    "G4 kill -9 mid-turn: the stream fails with ProcessExited (no timeout could end it), the next send fails the same way",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([
          FakeCli.expectUser(),
          FakeCli.init(),
          FakeCli.assistant("half an answer"),
          FakeCli.stall
        ])
        // with no idle timeout only the process's death can end the turn: a missed exit hangs until the test's timeout
        const session = yield* ClaudeAgent.session(FakeCli.options(scenario, { idleTimeout: "infinity" }))
        const pid = Option.getOrThrow(session.pid)
        const error = yield* session.turn("go").pipe(
          Stream.tap((m) => Effect.sync(() => m.type === "assistant" && process.kill(pid, "SIGKILL"))),
          Stream.runDrain,
          Effect.flip
        )
        expect(error).toMatchObject({ _tag: "ProcessExited", code: null, signal: "SIGKILL" })
        expect(yield* Effect.flip(session.send("after"))).toMatchObject({ _tag: "ProcessExited", signal: "SIGKILL" })
        expect(yield* Effect.flip(session.setModel("x"))).toMatchObject({ _tag: "ProcessExited", signal: "SIGKILL" })
        // the suite-wide unhandled-rejection counter (vitest.setup.ts) stays at 0
      })
  )
})

describe("G5 callbacks fire for every prompt shape", () => {
  // the CLI asks for a callback after the prompt; with a stream prompt that ends before that, stdin must stay open
  type Callback = "canUseTool" | "PreToolUse" | "Stop" | "mcpTool"
  const callbacks: ReadonlyArray<Callback> = ["canUseTool", "PreToolUse", "Stop", "mcpTool"]
  const shapes = {
    "string prompt": (text: string) => text,
    "1-message stream": (text: string) => Stream.make(text),
    "stream ending before the first tool call": (text: string) => Stream.make(Message.userMessage(text))
  } as const

  const hookInput = (event: string, extra: Record<string, unknown>) => ({
    session_id: "s",
    transcript_path: "/t",
    cwd: "/",
    hook_event_name: event,
    ...extra
  })

  const ask = (cli: ScriptedCli.ScriptedCli, callback: Callback) => {
    switch (callback) {
      case "canUseTool":
        return cli.canUseTool("Bash", { command: "touch x" })
      case "PreToolUse":
        return cli.request("hook_callback", {
          callback_id: "hook_0",
          input: hookInput("PreToolUse", { tool_name: "Bash", tool_input: {}, tool_use_id: "t" }),
          tool_use_id: "t"
        })
      case "Stop":
        return cli.request("hook_callback", {
          callback_id: "hook_1",
          input: hookInput("Stop", { stop_hook_active: false }),
          tool_use_id: "u"
        })
      case "mcpTool":
        return cli.request("mcp_message", {
          server_name: "calc",
          message: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }
        })
    }
  }

  const features = (fired: Array<string>) =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({
        name: "calc",
        tools: [
          SdkMcp.tool("add", "add", Schema.Struct({ a: Schema.Number, b: Schema.Number }), ({ a, b }) =>
            Effect.sync(() => (fired.push("mcpTool"), String(a + b))))
        ]
      })
      return { calc }
    })

  for (const [shape, prompt] of Object.entries(shapes)) {
    for (const callback of callbacks) {
      it.scoped(`G5 ${callback} fires with a ${shape} (20 runs)`, () =>
        Effect.gen(function*() {
          for (let run = 0; run < 20; run++) {
            const fired: Array<string> = []
            const layer = Layer.mergeAll(
              ScriptedCli.layer((cli) =>
                Effect.gen(function*() {
                  yield* cli.expectUser
                  yield* cli.init({ mcp_servers: [{ name: "calc", status: "connected", source: "sdk" }] })
                  yield* Effect.yieldNow()
                  yield* ask(cli, callback)
                  yield* cli.assistant("done")
                  yield* cli.result("done")
                })
              ),
              Permissions.layer(() => Effect.sync(() => (fired.push("canUseTool"), Permissions.allow()))),
              Hooks.layer({
                PreToolUse: [{ hooks: [() => Effect.sync(() => (fired.push("PreToolUse"), {}))] }],
                Stop: [{ hooks: [() => Effect.sync(() => (fired.push("Stop"), {}))] }]
              })
            )
            const { calc } = yield* features(fired)
            const p = prompt(`run ${run}`)
            const messages = yield* (typeof p === "string"
              ? ClaudeAgent.query(p, { mcpServers: { calc } })
              : ClaudeAgent.query(p, { mcpServers: { calc } })).pipe(Stream.runCollect, Effect.provide(layer))
            expect(Chunk.toReadonlyArray(messages).some(Message.isResultMessage)).toBe(true)
            expect(fired).toEqual([callback])
          }
        }))
    }
  }
})

describe("G7 start-up is bounded and typed", () => {
  live(
    "G7 a CLI that never answers initialize: StartupFailed (initializeAck or firstLine) within the bound",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([FakeCli.stall], { answers: { initialize: FakeCli.noAnswer } })
        const started = Date.now()
        const error = yield* ClaudeAgent.query("hi", FakeCli.options(scenario, { initializeTimeout: "1 second" })).pipe(
          Stream.runDrain,
          Effect.flip
        )
        expect(Date.now() - started).toBeLessThan(1000 + 500 + 1000)
        expect(error).toMatchObject({ _tag: "StartupFailed", reason: "FirstLine" })
      })
  )

  live("G7 a CLI that exits at once: StartupFailed (firstLine) with its stderr", () =>
    Effect.gen(function*() {
      const scenario = FakeCli.scenario([FakeCli.exit(1, "error: unknown option '--bogus'\n")])
      const error = yield* ClaudeAgent.query("hi", FakeCli.options(scenario)).pipe(Stream.runDrain, Effect.flip)
      expect(error).toMatchObject({
        _tag: "StartupFailed",
        reason: "FirstLine",
        exitCode: 1,
        stderrTail: "error: unknown option '--bogus'\n"
      })
    }))
})

describe("G14 host listeners stay O(1) in the number of sessions", () => {
  // every process-wide event the SDK (or what it builds on) could listen to per session
  const EVENTS = [
    "exit",
    "beforeExit",
    "SIGINT",
    "SIGTERM",
    "SIGHUP",
    "SIGQUIT",
    "uncaughtException",
    "unhandledRejection",
    "warning"
  ] as const
  const counts = () => EVENTS.map((event) => process.listenerCount(event))
  const SESSIONS = 50

  it.live(
    `G14 ${SESSIONS} sessions live at once (no pool): no process listener per session, sampled while they run`,
    () =>
      noClaudeLeft(Effect.scoped(Effect.gen(function*() {
        const before = counts()
        const peak = [...before]
        const sample = Effect.sync(() => counts().forEach((n, i) => (peak[i] = Math.max(peak[i]!, n))))
        const sessions = yield* Effect.forEach(
          Array.from({ length: SESSIONS }, () => FakeCli.options(FakeCli.echoScenario)),
          (options) => ClaudeAgent.session(options),
          { concurrency: 10 }
        )
        yield* Effect.forEach(sessions, (s) => s.initializationResult, { concurrency: "unbounded", discard: true })
        // every CLI is running right now
        expect(sessions.filter((s) => isAlive(Option.getOrThrow(s.pid)))).toHaveLength(SESSIONS)
        yield* sample
        // and while every session is in the middle of a turn
        const results = yield* Effect.forEach(
          sessions,
          (s, i) =>
            s.turn(`q${i}`).pipe(Stream.tap(() => sample), Stream.filter(Message.isResultMessage), Stream.runCollect),
          { concurrency: "unbounded" }
        )
        expect(results.map((r) => Chunk.unsafeHead(r))).toMatchObject(
          Array.from({ length: SESSIONS }, (_, i) => ({ result: `echo: q${i}` }))
        )
        expect(sessions.filter((s) => isAlive(Option.getOrThrow(s.pid)))).toHaveLength(SESSIONS)
        yield* sample
        // none at all: the SDK adds no process-wide listener (one per session would show up as 50)
        expect(Object.fromEntries(EVENTS.map((e, i) => [e, peak[i]! - before[i]!]))).toEqual(
          Object.fromEntries(EVENTS.map((e) => [e, 0]))
        )
      }))).pipe(Effect.provide(NodeClaudeAgent.layer)),
    120_000
  )
})
