import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentError, ClaudeAgent, Message } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { sleeping } from "./support/clock.js"

const last = (c: Chunk.Chunk<Message.SdkMessage>) => Chunk.unsafeLast(c)

const restartsIn = (c: Chunk.Chunk<Message.SdkMessage>) =>
  Chunk.toReadonlyArray(c).filter((m) => m.type === "session_restarted")

/**
 * Options for tests that move the TestClock far ahead: no watchdog (an open turn must not time out), and an
 * `autoResume` that would restart after 1 ms if it restarted at all.
 */
const underTestClock = {
  idleTimeout: Duration.infinity,
  firstMessageTimeout: Duration.infinity,
  autoResume: { maxRestarts: 3, initialDelayMillis: 1 }
} as const

/** A policy that restarts without any delay: a restart during the close would happen before the close ends. */
const atOnce = { ...underTestClock, autoResume: Schedule.recurs(3) }

/** Long enough for any restart the policy could make; shorter than the script's step timeout. */
const LONG_AFTER = Duration.hours(1)

describe("auto-resume", () => {
  it.scopedLive("a CLI killed between turns is replaced transparently, resuming the same session", () =>
    Effect.gen(function*() {
      const opens = yield* Ref.make<Array<ReadonlyArray<string>>>([])
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const n = (yield* Ref.updateAndGet(opens, (a) => [...a, cli.spec.args])).length
          yield* cli.turn(`process ${n}: ${ScriptedCli.textOf(yield* cli.expectUser)}`)
          if (n === 1) return yield* cli.kill("SIGKILL")
          yield* cli.turn(`process ${n}: ${ScriptedCli.textOf(yield* cli.expectUser)}`)
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 3, initialDelayMillis: 1 } }).pipe(
        Effect.provide(layer)
      )
      expect(last(yield* Stream.runCollect(session.turn("one")))).toMatchObject({ result: "process 1: one" })
      // the restart shows in the stream, then the next prompt is answered by the new process
      const second = yield* Stream.runCollect(session.turn("two"))
      const types = Chunk.toReadonlyArray(second).map((m) => m.type)
      expect(types[0]).toBe("session_restarted")
      expect(Chunk.unsafeHead(second)).toMatchObject({
        type: "session_restarted",
        attempt: 1,
        exit: { code: null, signal: "SIGKILL" },
        session_id: session.origin.sessionId,
        interruptedTurn: false
      })
      expect(last(second)).toMatchObject({ result: "process 2: two" })
      const argv = yield* Ref.get(opens)
      expect(argv).toHaveLength(2)
      expect(argv[1]).toContain(`--resume=${session.origin.sessionId}`)
      expect(argv[1]?.some((a) => a.startsWith("--session-id"))).toBe(false)
    }))

  it.scopedLive("model, permission mode, thinking budget and MCP servers changed at runtime are applied to the new process too", () =>
    Effect.gen(function*() {
      const controls: Array<Array<Message.ControlRequestBody>> = []
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const mine: Array<Message.ControlRequestBody> = []
          controls.push(mine)
          const n = controls.length
          while (true) {
            const next = yield* cli.nextUser
            if (next._tag === "None") return
            yield* cli.turn(`process ${n}: ${ScriptedCli.textOf(next.value)}`)
            if (n === 1 && ScriptedCli.textOf(next.value) === "die") return yield* cli.kill("SIGKILL")
          }
        }), {
        stepTimeout: "1 hour",
        responders: {
          set_model: (body) => Effect.sync(() => (controls.at(-1)?.push(body), { model: body["model"] })),
          set_permission_mode: (body) => Effect.sync(() => (controls.at(-1)?.push(body), { mode: body["mode"] })),
          set_max_thinking_tokens: (body) => Effect.sync(() => (controls.at(-1)?.push(body), {})),
          mcp_set_servers: (body) =>
            Effect.sync(() => (controls.at(-1)?.push(body), { added: ["ext"], removed: [], errors: {} }))
        }
      })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 2, initialDelayMillis: 1 } }).pipe(
        Effect.provide(layer)
      )
      yield* session.setModel("claude-first")
      yield* session.setModel("claude-second")
      yield* session.setPermissionMode("acceptEdits")
      yield* session.setMaxThinkingTokens(2048)
      yield* session.setMcpServers({ ext: { type: "stdio", command: "ext-server" } })
      yield* Stream.runDrain(session.turn("die"))
      const after = yield* Stream.runCollect(session.turn("again"))
      expect(restartsIn(after)).toHaveLength(1)
      expect(last(after)).toMatchObject({ result: "process 2: again" })
      expect(controls).toHaveLength(2)
      // the last value of each change, in the order the changes were first made
      expect(controls[1]!.map((c) => c.subtype)).toEqual([
        "set_model",
        "set_permission_mode",
        "set_max_thinking_tokens",
        "mcp_set_servers"
      ])
      expect(controls[1]![0]).toMatchObject({ model: "claude-second" })
      expect(controls[1]![1]).toMatchObject({ mode: "acceptEdits" })
      expect(controls[1]![2]).toMatchObject({ max_thinking_tokens: 2048 })
      expect(controls[1]![3]).toMatchObject({ servers: { ext: { type: "stdio", command: "ext-server" } } })
    }))

  it.scopedLive("a prompt sent while the process is being replaced is delivered once to the new process", () =>
    Effect.gen(function*() {
      const received = yield* Ref.make<Array<string>>([])
      let opens = 0
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          opens++
          if (opens === 1) {
            yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
            return yield* cli.exit(137, "killed by the OOM killer\n")
          }
          while (true) {
            const next = yield* cli.nextUser
            if (next._tag === "None") return
            const text = ScriptedCli.textOf(next.value)
            yield* Ref.update(received, (r) => [...r, text])
            yield* cli.turn(`answered ${text}`)
          }
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 2, initialDelayMillis: 20 } }).pipe(
        Effect.provide(layer)
      )
      yield* Stream.runDrain(session.turn("first"))
      // sent right away, while the first process is dying and the second not yet started
      yield* session.send("during restart")
      const messages = yield* session.messages.pipe(
        Stream.takeUntil((m) => m.type === "result"),
        Stream.runCollect
      )
      expect(Chunk.toReadonlyArray(messages).filter((m) => m.type === "session_restarted")).toHaveLength(1)
      expect(last(messages)).toMatchObject({ result: "answered during restart" })
      expect(yield* Ref.get(received)).toEqual(["during restart"])
    }))

  it.scopedLive("a CLI that keeps dying at start-up stops at the cap with the last ProcessExited", () =>
    Effect.gen(function*() {
      let opens = 0
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          opens++
          if (opens === 1) {
            yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
            return yield* cli.kill("SIGKILL")
          }
          yield* cli.exit(1, `startup crash ${opens}\n`)
        }), { stepTimeout: "1 hour", responders: {} })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 3, initialDelayMillis: 1 } }).pipe(
        Effect.provide(layer)
      )
      yield* Stream.runDrain(session.turn("one"))
      const error = yield* Stream.runDrain(session.messages).pipe(Effect.flip)
      expect(error).toBeInstanceOf(AgentError.ProcessExited)
      expect(error).toMatchObject({ code: 1, stderrTail: expect.stringContaining("startup crash") })
      expect(opens).toBe(4)
      expect(yield* Effect.flip(session.send("too late"))).toBeInstanceOf(AgentError.ProcessExited)
      expect(yield* session.state).toBe("exited")
    }))

  it.scopedLive("without autoResume a dead CLI ends the session (no restart)", () =>
    Effect.gen(function*() {
      let opens = 0
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          opens++
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.kill("SIGKILL")
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      yield* Stream.runDrain(session.turn("one"))
      expect((yield* Stream.runDrain(session.messages).pipe(Effect.flip))._tag).toBe("ProcessExited")
      expect(opens).toBe(1)
    }))
})

describe("auto-resume: no restart when the end is ours or clean", () => {
  it.scoped(
    "closing the session's scope mid-turn starts no new process, though the CLI dies of SIGTERM and the policy has no delay",
    () =>
      Effect.gen(function*() {
        let opens = 0
        const killed = yield* Deferred.make<void>()
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            opens++
            yield* cli.expectUser
            yield* cli.init()
            yield* cli.assistant("working")
            // the SDK interrupts a busy turn before it closes stdin: die of it, as a crashing CLI would
            yield* cli.expectControl("interrupt")
            yield* Deferred.succeed(killed, undefined)
            yield* cli.kill("SIGTERM")
          }), { stepTimeout: "365 days" })
        const scope = yield* Scope.make()
        const session = yield* ClaudeAgent.session(atOnce).pipe(Scope.extend(scope), Effect.provide(layer))
        const working = yield* Deferred.make<void>()
        const reader = yield* session.turn("one").pipe(
          Stream.tap((m) => (m.type === "assistant" ? Deferred.succeed(working, undefined) : Effect.void)),
          Stream.runCollect,
          Effect.fork
        )
        yield* Deferred.await(working)
        yield* Scope.close(scope, Exit.void)
        // the stream ends (it does not hang, nor fail with the SIGTERM exit)
        const seen = yield* Fiber.join(reader)
        yield* Deferred.await(killed)
        // the supervisor was interrupted with the scope: nothing can start a process after this point
        yield* TestClock.adjust(LONG_AFTER)
        expect(opens).toBe(1)
        expect(restartsIn(seen)).toEqual([])
        expect(Chunk.toReadonlyArray(seen).map((m) => m.type)).toEqual(["system", "assistant"])
      }),
    10_000
  )

  it.scoped(
    "endInput right after send: the prompt is still answered, then the CLI's exit starts no new process",
    () =>
      Effect.gen(function*() {
        let opens = 0
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            opens++
            yield* cli.turn(`answered ${ScriptedCli.textOf(yield* cli.expectUser)}`)
            yield* cli.expectEndInput
            // a non-zero exit after our own endInput is still ours
            yield* cli.exit(143, "terminated\n")
          }), { stepTimeout: "365 days" })
        const session = yield* ClaudeAgent.session(underTestClock).pipe(Effect.provide(layer))
        yield* session.send("one")
        yield* session.endInput
        // the stream ended: the supervisor has returned, nothing can start a process after this point
        const seen = yield* Stream.runCollect(session.messages)
        yield* TestClock.adjust(LONG_AFTER)
        expect(opens).toBe(1)
        expect(restartsIn(seen)).toEqual([])
        expect(last(seen)).toMatchObject({ type: "result", result: "answered one" })
        expect(yield* Effect.flip(session.send("too late"))).toMatchObject({
          _tag: "InputClosed",
          reason: "InputEnded"
        })
      }),
    10_000
  )

  it.scoped(
    "interrupting the consumer of a turn starts no new process; the same process goes on",
    () =>
      Effect.gen(function*() {
        let opens = 0
        const release = yield* Deferred.make<void>()
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            opens++
            yield* cli.expectUser
            yield* cli.init()
            yield* cli.assistant("partial")
            yield* Deferred.await(release)
            yield* cli.result("one done")
            yield* cli.turn(`${opens}: ${ScriptedCli.textOf(yield* cli.expectUser)}`)
          }), { stepTimeout: "365 days" })
        const session = yield* ClaudeAgent.session(underTestClock).pipe(Effect.provide(layer))
        const partial = yield* Deferred.make<void>()
        const consumer = yield* session.turn("one").pipe(
          Stream.tap((m) => (m.type === "assistant" ? Deferred.succeed(partial, undefined) : Effect.void)),
          Stream.runDrain,
          Effect.fork
        )
        yield* Deferred.await(partial)
        yield* Fiber.interrupt(consumer)
        yield* Deferred.succeed(release, undefined)
        yield* TestClock.adjust(LONG_AFTER)
        // what the interrupted reader left is there for the next one, then the next turn is answered by process 1
        const rest = yield* session.messages.pipe(Stream.takeUntil(Message.isResultMessage), Stream.runCollect)
        const two = yield* Stream.runCollect(session.turn("two"))
        expect(last(rest)).toMatchObject({ result: "one done" })
        expect(last(two)).toMatchObject({ result: "1: two" })
        expect([...restartsIn(rest), ...restartsIn(two)]).toEqual([])
        expect(opens).toBe(1)
      }),
    10_000
  )

  it.scoped(
    "interrupting the fiber that owns the session starts no new process, even though the CLI dies of it",
    () =>
      Effect.gen(function*() {
        let opens = 0
        const killed = yield* Deferred.make<void>()
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            opens++
            yield* cli.expectUser
            yield* cli.init()
            yield* cli.expectControl("interrupt")
            yield* Deferred.succeed(killed, undefined)
            yield* cli.kill("SIGTERM")
          }), { stepTimeout: "365 days" })
        const started = yield* Deferred.make<void>()
        const owner = yield* Effect.gen(function*() {
          const session = yield* ClaudeAgent.session(atOnce)
          yield* session.turn("one").pipe(
            Stream.tap((m) => (m.type === "system" ? Deferred.succeed(started, undefined) : Effect.void)),
            Stream.runDrain
          )
        }).pipe(Effect.scoped, Effect.provide(layer), Effect.fork)
        yield* Deferred.await(started)
        // the owner's scope (and the supervisor in it) is closed once the interrupt returns
        yield* Fiber.interrupt(owner)
        yield* Deferred.await(killed)
        yield* TestClock.adjust(LONG_AFTER)
        expect(opens).toBe(1)
      }),
    10_000
  )

  it.scoped(
    "closing the session while a restart waits for its delay cancels the restart",
    () =>
      Effect.gen(function*() {
        let opens = 0
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            opens++
            yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
            yield* cli.kill("SIGKILL")
          }), { stepTimeout: "365 days" })
        const scope = yield* Scope.make()
        const session = yield* ClaudeAgent.session({
          ...underTestClock,
          autoResume: Schedule.spaced("1 minute")
        }).pipe(Scope.extend(scope), Effect.provide(layer))
        yield* Stream.runDrain(session.turn("one"))
        yield* TestClock.adjust("30 seconds")
        // the supervisor, waiting for its delay, is interrupted with the scope
        yield* Scope.close(scope, Exit.void)
        yield* TestClock.adjust(LONG_AFTER)
        expect(opens).toBe(1)
        expect(yield* Effect.flip(session.send("too late"))).toMatchObject({ _tag: "InputClosed" })
      }),
    10_000
  )

  it.scoped(
    "a CLI that ends cleanly (exit 0) by itself is not restarted: the stream ends and send fails",
    () =>
      Effect.gen(function*() {
        let opens = 0
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            opens++
            yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
            yield* cli.exit(0)
          }), { stepTimeout: "365 days" })
        const session = yield* ClaudeAgent.session(underTestClock).pipe(Effect.provide(layer))
        yield* Stream.runDrain(session.turn("one"))
        // the stream ended: the supervisor has returned
        const after = yield* Stream.runCollect(session.messages)
        yield* TestClock.adjust(LONG_AFTER)
        expect(Chunk.toReadonlyArray(after)).toEqual([])
        expect(opens).toBe(1)
        expect(yield* session.state).toBe("exited")
        // not queued for a process that will never come
        expect(yield* Effect.flip(session.send("too late"))).toMatchObject({
          _tag: "InputClosed",
          reason: "SessionClosed"
        })
      }),
    10_000
  )
})

describe("auto-resume: a Schedule policy", () => {
  it.scoped(
    "spaced delays are honoured and the recurrence cap ends the session with the last ProcessExited",
    () =>
      Effect.gen(function*() {
        const opens: Array<number> = []
        const opened = yield* Queue.unbounded<number>()
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            opens.push(now)
            yield* opened.offer(now)
            if (opens.length === 1) {
              yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
              return yield* cli.kill("SIGKILL")
            }
            // every later start dies before answering initialize, the last one of a different death
            if (opens.length === 3) {
              yield* cli.stderr("segfault in start-up 3\n")
              return yield* cli.kill("SIGSEGV")
            }
            yield* cli.exit(1, `start-up crash ${opens.length}\n`)
          }), { stepTimeout: "365 days", responders: {} })
        const policy = Schedule.spaced("10 seconds").pipe(Schedule.intersect(Schedule.recurs(2)))
        const session = yield* ClaudeAgent.session({ ...underTestClock, autoResume: policy }).pipe(
          Effect.provide(layer)
        )
        yield* Stream.runDrain(session.turn("one"))
        expect(yield* opened.take).toBe(0)
        const ended = yield* Effect.fork(Effect.flip(Stream.runDrain(session.messages)))
        // the restart waits for its delay, armed when the process died
        yield* sleeping("10 seconds")
        yield* TestClock.adjust("9999 millis")
        yield* sleeping("1 millis")
        expect(opens).toEqual([0])
        yield* TestClock.adjust("1 millis")
        expect(yield* opened.take).toBe(10_000)
        // the second start-up died: the next restart waits for its delay
        yield* sleeping("10 seconds")
        yield* TestClock.adjust("10 seconds")
        const error = yield* Fiber.join(ended)
        expect(opens).toEqual([0, 10_000, 20_000])
        expect(error).toBeInstanceOf(AgentError.ProcessExited)
        expect(error).toMatchObject({ code: null, signal: "SIGSEGV", stderrTail: "segfault in start-up 3\n" })
        expect(yield* Effect.flip(session.send("too late"))).toBe(error)
        // the cap is final (the supervisor returned when it failed the stream): no later start
        yield* TestClock.adjust(LONG_AFTER)
        expect(opens).toHaveLength(3)
      }),
    10_000
  )

  it.scoped(
    "the Schedule sees the ProcessExited: an exit it does not accept is final at once",
    () =>
      Effect.gen(function*() {
        let opens = 0
        const layer = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            opens++
            yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
            yield* cli.exit(2, "bad configuration\n")
          }), { stepTimeout: "365 days" })
        const policy = Schedule.spaced("1 second").pipe(
          Schedule.whileInput((e: AgentError.ProcessExited) => e.code !== 2)
        )
        const session = yield* ClaudeAgent.session({ ...underTestClock, autoResume: policy }).pipe(
          Effect.provide(layer)
        )
        yield* Stream.runDrain(session.turn("one"))
        // the stream failed: the supervisor has returned
        const error = yield* Effect.flip(Stream.runDrain(session.messages))
        yield* TestClock.adjust(LONG_AFTER)
        expect(error).toMatchObject({ _tag: "ProcessExited", code: 2, stderrTail: "bad configuration\n" })
        expect(opens).toBe(1)
      }),
    10_000
  )
})

describe("auto-resume: a CLI that dies mid-turn", () => {
  it.scopedLive("the turn ends with session_restarted { interruptedTurn: true }, no result, and its prompt is not sent again", () =>
    Effect.gen(function*() {
      const received: Array<Array<string>> = []
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const mine: Array<string> = []
          received.push(mine)
          while (true) {
            const next = yield* cli.nextUser
            if (next._tag === "None") return
            mine.push(ScriptedCli.textOf(next.value))
            if (received.length === 1) {
              // the turn has started (system/init) and said something when the CLI dies
              yield* cli.init()
              yield* cli.assistant("half an answer")
              return yield* cli.kill("SIGKILL")
            }
            yield* cli.turn(`answered ${ScriptedCli.textOf(next.value)}`)
          }
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 2, initialDelayMillis: 1 } }).pipe(
        Effect.provide(layer)
      )
      const interrupted = yield* Stream.runCollect(session.turn("long task"))
      expect(Chunk.toReadonlyArray(interrupted).map((m) => m.type)).toEqual([
        "system",
        "assistant",
        "session_restarted"
      ])
      expect(last(interrupted)).toMatchObject({ type: "session_restarted", attempt: 1, interruptedTurn: true })
      const next = yield* Stream.runCollect(session.turn("next"))
      expect(last(next)).toMatchObject({ type: "result", result: "answered next" })
      expect(restartsIn(next)).toEqual([])
      expect(received).toEqual([["long task"], ["next"]])
    }))

  it.scopedLive("a prompt the dying CLI had read but not started is given to the next process, once", () =>
    Effect.gen(function*() {
      const received: Array<Array<string>> = []
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const mine: Array<string> = []
          received.push(mine)
          if (received.length === 1) {
            mine.push(ScriptedCli.textOf(yield* cli.expectUser))
            yield* cli.init()
            // the second prompt arrives while the first turn runs; the CLI dies before starting it
            mine.push(ScriptedCli.textOf(yield* cli.expectUser))
            return yield* cli.kill("SIGKILL")
          }
          while (true) {
            const next = yield* cli.nextUser
            if (next._tag === "None") return
            mine.push(ScriptedCli.textOf(next.value))
            yield* cli.turn(`answered ${ScriptedCli.textOf(next.value)}`)
          }
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 2, initialDelayMillis: 1 } }).pipe(
        Effect.provide(layer)
      )
      yield* session.send("first")
      yield* session.send("second")
      const messages = yield* session.messages.pipe(Stream.takeUntil(Message.isResultMessage), Stream.runCollect)
      expect(restartsIn(messages)).toEqual([expect.objectContaining({ interruptedTurn: true })])
      expect(last(messages)).toMatchObject({ result: "answered second" })
      expect(received).toEqual([["first", "second"], ["second"]])
    }))
})
