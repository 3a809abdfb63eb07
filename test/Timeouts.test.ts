import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentError, ClaudeAgent, Permissions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

/** Advances the TestClock second by second, letting fibers run in between. */
const advance = (seconds: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < seconds; i++) {
      yield* TestClock.adjust("1 second")
      yield* Effect.yieldNow()
    }
  })

const slow = { stepTimeout: "365 days" } as const

describe("timeouts that turn silence into errors", () => {
  it.scoped("G1 idle mid-turn: IdleTimeout (kind idle) after idleTimeout, and the CLI is killed", () =>
    Effect.gen(function*() {
      const killed = yield* Deferred.make<void>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.assistant("thinking about it…")
          yield* Effect.onInterrupt(cli.stall, () => Deferred.succeed(killed, undefined))
        }), slow)
      const session = yield* ClaudeAgent.session({ idleTimeout: "30 seconds" }).pipe(Effect.provide(layer))
      const fiber = yield* Stream.runCollect(session.turn("go")).pipe(Effect.fork)
      yield* advance(29)
      expect(fiber.unsafePoll()).toBe(null)
      yield* advance(3)
      const error = yield* Fiber.join(fiber).pipe(Effect.flip)
      expect(error).toBeInstanceOf(AgentError.IdleTimeout)
      expect(error).toMatchObject({ kind: "idle", timeoutMillis: 30_000 })
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
      expect(error).toMatchObject({ _tag: "IdleTimeout", kind: "firstMessage", timeoutMillis: 10_000 })
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
