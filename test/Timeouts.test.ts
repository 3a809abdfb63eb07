import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentError, type AgentOptions, ClaudeAgent, Permissions, Transport } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

/**
 * Advances the TestClock: it wakes the sleeps due in their order, and lets each woken fiber run (and arm its next
 * sleep) before the next one.
 */
const advance = (seconds: number) => TestClock.adjust(Duration.seconds(seconds))

/** `self`'s exit and the TestClock time at which it ended: a bound is checked to the millisecond. */
const timed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.zipWith(Effect.exit(self), Clock.currentTimeMillis, (exit, at) => ({ exit, at }))

const slow = { stepTimeout: "365 days" } as const

/** `cli` with every connection's `kill` reported to `killed` (the SDK ending the process itself). */
const reportingKill = (cli: Layer.Layer<Transport.Transport>, killed: Deferred.Deferred<void>) =>
  Layer.effect(
    Transport.Transport,
    Effect.map(Transport.Transport, (inner) =>
      Transport.Transport.of({
        open: (spec) =>
          Effect.map(inner.open(spec), (connection) => ({
            ...connection,
            kill: Effect.zipRight(Deferred.succeed(killed, undefined), connection.kill)
          }))
      }))
  ).pipe(Layer.provide(cli))

describe("timeouts that turn silence into errors", () => {
  it.scoped("G1 idle mid-turn: IdleTimeout (kind idle) after idleTimeout, and the CLI is killed", () =>
    Effect.gen(function*() {
      const killed = yield* Deferred.make<void>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* Effect.sleep("3 seconds")
          yield* cli.init()
          yield* cli.stderr("warming up\n")
          yield* cli.assistant("thinking about it…")
          yield* cli.stall
        }), slow)
      const session = yield* ClaudeAgent.session({ idleTimeout: "30 seconds" }).pipe(
        Effect.provide(reportingKill(layer, killed))
      )
      const fiber = yield* Stream.runCollect(session.turn("go")).pipe(timed, Effect.fork)
      yield* advance(34)
      const { at, exit } = yield* Fiber.join(fiber)
      // the CLI's last output is at 3 s: the session fails at 33 s, not before
      expect(at).toBe(33_000)
      const error = yield* Effect.flip(exit)
      expect(error).toStrictEqual(
        new AgentError.IdleTimeout({
          lastEventAt: 3000,
          timeoutMillis: 30_000,
          reason: "Idle",
          stderrTail: "warming up\n"
        })
      )
      // the SDK killed the CLI itself (it did not merely stop reading)
      expect(yield* Deferred.isDone(killed)).toBe(true)
      expect(yield* session.state).toBe("exited")
    }))

  it.scoped("G1 nothing at all after the prompt: IdleTimeout (kind firstMessage) after firstMessageTimeout", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.stall), slow)
      const fiber = yield* ClaudeAgent.query("go", { firstMessageTimeout: "10 seconds", idleTimeout: "1 hour" }).pipe(
        Stream.runCollect,
        Effect.provide(layer),
        Effect.fork
      )
      yield* advance(12)
      const error = yield* Fiber.join(fiber).pipe(Effect.flip)
      // the prompt, sent at 0, was the last event
      expect(error).toStrictEqual(
        new AgentError.IdleTimeout({ lastEventAt: 0, timeoutMillis: 10_000, reason: "FirstMessage", stderrTail: "" })
      )
    }))

  it.scoped("G1 \"infinity\" disables idleTimeout and firstMessageTimeout: a day of silence is waited out", () =>
    Effect.gen(function*() {
      const go = yield* Deferred.make<void>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          // silent after the first prompt (firstMessageTimeout), then in the middle of the second turn (idleTimeout)
          yield* cli.expectUser
          yield* Deferred.await(go)
          yield* cli.turn("first")
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.assistant("half of it…")
          yield* Deferred.await(go)
          yield* cli.result("second")
        }), slow)
      const session = yield* ClaudeAgent.session({ idleTimeout: "infinity", firstMessageTimeout: "infinity" }).pipe(
        Effect.provide(layer)
      )
      const first = yield* Stream.runCollect(session.turn("one")).pipe(Effect.fork)
      yield* TestClock.adjust("1 day")
      yield* advance(5)
      expect(first.unsafePoll()).toBe(null)
      expect(yield* session.state).not.toBe("exited")
      yield* Deferred.succeed(go, undefined)
      expect(Chunk.unsafeLast(yield* Fiber.join(first))).toMatchObject({ result: "first" })
    }))

  it.scoped("G1 \"infinity\" disables idleTimeout mid-turn (the first-message clock still running)", () =>
    Effect.gen(function*() {
      const go = yield* Deferred.make<void>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.assistant("half of it…")
          yield* Deferred.await(go)
          yield* cli.result("whole")
        }), slow)
      const fiber = yield* ClaudeAgent.query("go", { idleTimeout: "infinity", firstMessageTimeout: "10 seconds" }).pipe(
        Stream.runCollect,
        Effect.provide(layer),
        Effect.fork
      )
      // the watchdog still runs (firstMessageTimeout is finite): past the 10-minute default of idleTimeout
      yield* advance(11 * 60)
      expect(fiber.unsafePoll()).toBe(null)
      yield* Deferred.succeed(go, undefined)
      expect(Chunk.unsafeLast(yield* Fiber.join(fiber))).toMatchObject({ result: "whole" })
    }))

  it.effect("a timeout option that is not a duration is InvalidOptions, before anything is spawned", () =>
    Effect.gen(function*() {
      const options: AgentOptions.Options = JSON.parse(`{ "idleTimeout": "10 sekonds" }`)
      const error = yield* ClaudeAgent.query("x", options).pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.provide(ScriptedCli.echo)
      )
      expect(error).toStrictEqual(
        new AgentError.InvalidOptions({
          option: "idleTimeout",
          description: "not a duration: \"10 sekonds\" (or \"infinity\")"
        })
      )
    }))

  it.scoped("no idle clock between turns, and heartbeats keep a long turn alive", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.expectUser
          yield* cli.init()
          for (let i = 0; i < 4; i++) {
            yield* Effect.sleep("20 seconds")
            yield* cli.emit({
              type: "tool_progress",
              tool_use_id: "t",
              tool_name: "Bash",
              parent_tool_use_id: null,
              elapsed_time_seconds: (i + 1) * 20,
              heartbeat: true,
              session_id: cli.sessionId,
              uuid: `u${i}`
            })
          }
          yield* cli.result("long one")
        }), slow)
      const session = yield* ClaudeAgent.session({ idleTimeout: "30 seconds" }).pipe(Effect.provide(layer))
      yield* Stream.runDrain(session.turn("first"))
      // idle between turns for ten minutes: fine
      yield* advance(600)
      const fiber = yield* Stream.runCollect(session.turn("second")).pipe(Effect.fork)
      yield* advance(85)
      const messages = yield* Fiber.join(fiber)
      expect(Chunk.unsafeLast(messages)).toMatchObject({ type: "result", result: "long one" })
    }))

  it.scoped("no idle clock while the SDK owes the CLI an answer (a slow permission decision)", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          const answer = yield* cli.canUseTool("Bash", { command: "touch x" })
          yield* cli.turn(JSON.stringify(answer))
        }), slow)
      const PermissionsLive = Permissions.layer(
        () => Effect.as(Effect.sleep("5 minutes"), Permissions.allow()),
        { timeout: "1 hour" }
      )
      const fiber = yield* ClaudeAgent.query("go", { idleTimeout: "30 seconds" }).pipe(
        Stream.runCollect,
        Effect.provide(layer),
        Effect.provide(PermissionsLive),
        Effect.fork
      )
      yield* advance(310)
      const messages = yield* Fiber.join(fiber)
      expect(Chunk.unsafeLast(messages)).toMatchObject({ type: "result", result: expect.stringContaining("allow") })
    }))

  it.scoped("G3 interrupt the CLI ignores: InterruptTimeout within interruptTimeout; the session stays usable", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
        }), { ...slow, responders: { interrupt: () => Effect.never } })
      const session = yield* ClaudeAgent.session({ interruptTimeout: "5 seconds" }).pipe(Effect.provide(layer))
      const fiber = yield* Effect.fork(session.interrupt)
      yield* advance(6)
      const error = yield* Fiber.join(fiber).pipe(Effect.flip)
      expect(error).toStrictEqual(new AgentError.InterruptTimeout({ timeoutMillis: 5000 }))
      const turn = yield* Stream.runCollect(session.turn("still here"))
      expect(Chunk.unsafeLast(turn)).toMatchObject({ result: "still here" })
    }))
})

describe("G7 start-up is bounded and phased", () => {
  it.scoped("G7 a CLI that writes lines but never answers initialize: StartupFailed (initializeAck) at the bound", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.initialize
          yield* cli.stderr("loading plugins…\n")
          yield* cli.unknownMessage("startup_banner")
          yield* cli.stall
        }), { ...slow, silent: ["initialize"] })
      const killed = yield* Deferred.make<void>()
      const fiber = yield* ClaudeAgent.query("x", { initializeTimeout: "20 seconds" }).pipe(
        Stream.runCollect,
        Effect.provide(reportingKill(layer, killed)),
        timed,
        Effect.fork
      )
      yield* advance(21)
      const { at, exit } = yield* Fiber.join(fiber)
      expect(at).toBe(20_000)
      const error = yield* Effect.flip(exit)
      expect(error).toBeInstanceOf(AgentError.StartupFailed)
      expect(error).toMatchObject({
        reason: "InitializeAck",
        description: "no answer to initialize within 20000 ms",
        stderrTail: "loading plugins…\n",
        cause: { _tag: "ControlTimeout", subtype: "initialize" }
      })
      expect(yield* Deferred.isDone(killed)).toBe(true)
    }))

  /** A transport whose `open` takes `duration` (a slow executable lookup, `--version` check or spawn). */
  const slowOpen = (duration: Duration.DurationInput, cli: Layer.Layer<Transport.Transport>) =>
    Layer.effect(
      Transport.Transport,
      Effect.map(Transport.Transport, (inner) =>
        Transport.Transport.of({ open: (spec) => Effect.zipRight(Effect.sleep(duration), inner.open(spec)) }))
    ).pipe(Layer.provide(cli))

  it.scoped("G7 a CLI that cannot be started in time (e.g. a hanging --version check): StartupFailed (spawn)", () =>
    Effect.gen(function*() {
      const fiber = yield* ClaudeAgent.query("x", { initializeTimeout: "10 seconds" }).pipe(
        Stream.runCollect,
        Effect.provide(slowOpen("1 hour", ScriptedCli.echo)),
        timed,
        Effect.fork
      )
      yield* advance(11)
      const { at, exit } = yield* Fiber.join(fiber)
      expect(at).toBe(10_000)
      const error = yield* Effect.flip(exit)
      expect(error).toStrictEqual(
        new AgentError.StartupFailed({
          reason: "Spawn",
          description: "the CLI was not started within 10000 ms (finding it, checking its version, spawning it)",
          stderrTail: ""
        })
      )
    }))

  it.scoped("G7 the bound covers the whole start-up: a slow spawn leaves less time for initialize", () =>
    Effect.gen(function*() {
      const fiber = yield* ClaudeAgent.query("x", { initializeTimeout: "10 seconds" }).pipe(
        Stream.runCollect,
        Effect.provide(slowOpen("4 seconds", ScriptedCli.neverAnswersInitialize)),
        timed,
        Effect.fork
      )
      yield* advance(11)
      const { at, exit } = yield* Fiber.join(fiber)
      expect(at).toBe(10_000)
      const error = yield* Effect.flip(exit)
      expect(error).toMatchObject({
        _tag: "StartupFailed",
        reason: "FirstLine",
        description: "no answer to initialize within 10000 ms"
      })
      expect(error._tag === "StartupFailed" ? Option.fromNullable(error.cause) : Option.none()).toMatchObject(
        Option.some({ _tag: "ControlTimeout", timeoutMillis: 6000 })
      )
    }))

  it.scoped("G7 a start-up that fails leaves no timer behind in the caller's scope", () =>
    Effect.gen(function*() {
      const failing = Layer.succeed(
        Transport.Transport,
        Transport.Transport.of({
          open: () => Effect.fail(new AgentError.SpawnFailed({ command: "claude", description: "no such file" }))
        })
      )
      const error = yield* Effect.flip(ClaudeAgent.session({}).pipe(Effect.provide(failing)))
      expect(error._tag).toBe("SpawnFailed")
      // the caller's scope is still open: nothing of the failed session may sleep in it (it would keep a host alive)
      yield* advance(3_600)
      expect(Chunk.toReadonlyArray(yield* TestClock.sleeps())).toEqual([])
    }))

  it.scoped("G7 a query whose input fails before initialize is answered still ends its start-up at the bound", () =>
    Effect.gen(function*() {
      const pending = yield* ClaudeAgent.startQuery({ initializeTimeout: "20 seconds" }).pipe(
        Effect.provide(ScriptedCli.neverAnswersInitialize)
      )
      const pull = yield* pending.pull(Stream.fail("no prompt after all"))
      expect(yield* Effect.flip(pull)).toEqual(Option.some("no prompt after all"))
      // the session has ended (its input failed), its CLI not answered yet: initializationResult keeps the bound
      const result = yield* pending.control.initializationResult.pipe(timed, Effect.fork)
      yield* advance(21)
      const done = yield* Fiber.poll(result)
      expect(Option.isSome(done)).toBe(true)
      const { at, exit } = yield* Fiber.join(result)
      expect(at).toBe(20_000)
      expect(yield* Effect.flip(exit)).toMatchObject({
        _tag: "StartupFailed",
        description: "no answer to initialize within 20000 ms"
      })
    }))

  it.scoped("G7 initializeTimeout \"infinity\": start-up is waited for", () =>
    Effect.gen(function*() {
      const fiber = yield* ClaudeAgent.query("x", { initializeTimeout: "infinity" }).pipe(
        Stream.runCollect,
        Effect.provide(slowOpen("2 hours", ScriptedCli.echo)),
        Effect.fork
      )
      yield* TestClock.adjust("2 hours")
      yield* advance(2)
      const messages = yield* Fiber.join(fiber)
      expect(Chunk.unsafeLast(messages)).toMatchObject({ result: "echo: x" })
    }))
})
