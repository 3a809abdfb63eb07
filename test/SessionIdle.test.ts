// The idle clock of a session restarts from every frame the CLI writes (keep-alives and control frames included) and
// from every answer the SDK gives to one of the CLI's requests, not only from SDK messages.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentError, ClaudeAgent, Permissions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

const slow = { stepTimeout: "365 days" } as const

describe("the idle clock restarts from any activity", () => {
  it.scoped("keep-alives keep a turn alive; silence after the last one is a hang, dated from it", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          for (let i = 0; i < 3; i++) {
            yield* Effect.sleep("20 seconds")
            yield* cli.emit({ type: "keep_alive" })
          }
          yield* cli.stall
        }), slow)
      const fiber = yield* ClaudeAgent.query("go", { idleTimeout: "30 seconds" }).pipe(
        Stream.runDrain,
        Effect.provide(layer),
        Effect.fork
      )
      // the last keep-alive is at 60 s: nothing fails before 90 s
      yield* TestClock.adjust("89 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toStrictEqual(
        new AgentError.IdleTimeout({ lastEventAt: 60_000, timeoutMillis: 30_000, reason: "Idle", stderrTail: "" })
      )
    }))

  it.scoped("a permission decision that takes minutes: the clock starts again from the answer", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.canUseTool("Bash", { command: "touch x" })
          yield* cli.stall
        }), slow)
      const PermissionsLive = Permissions.layer(
        () => Effect.as(Effect.sleep("5 minutes"), Permissions.allow()),
        { timeout: "1 hour" }
      )
      const fiber = yield* ClaudeAgent.query("go", { idleTimeout: "30 seconds" }).pipe(
        Stream.runDrain,
        Effect.provide(layer),
        Effect.provide(PermissionsLive),
        Effect.fork
      )
      // answered at 300 s: nothing fails before 330 s
      yield* TestClock.adjust("329 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toStrictEqual(
        new AgentError.IdleTimeout({ lastEventAt: 300_000, timeoutMillis: 30_000, reason: "Idle", stderrTail: "" })
      )
    }))
})
