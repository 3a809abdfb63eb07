import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { ClaudeAgent } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

/** The prompts of the user frames the script reads until `count` arrived. */
const readPrompts = (cli: ScriptedCli.ScriptedCli, count: number) =>
  Effect.gen(function*() {
    const texts: Array<string> = []
    while (texts.length < count) texts.push(ScriptedCli.textOf(yield* cli.expectUser))
    return texts
  })

describe("Session.send never drops a message", () => {
  it.scoped("prompts sent before initialize is answered arrive after it, once each, in order", () =>
    Effect.gen(function*() {
      const seen = yield* Deferred.make<ReadonlyArray<string>>()
      const layer = ScriptedCli.layer(
        (cli) => Effect.flatMap(readPrompts(cli, 3), (texts) => Deferred.succeed(seen, texts)),
        { delays: { initialize: "5 seconds" } }
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      yield* Effect.forEach(["one", "two", "three"], (p) => session.send(p), { discard: true })
      yield* TestClock.adjust("5 seconds")
      expect(yield* Deferred.await(seen)).toEqual(["one", "two", "three"])
    }))

  it.scoped("a burst of 500 sends: 500 user frames, in order", () =>
    Effect.gen(function*() {
      const seen = yield* Deferred.make<ReadonlyArray<string>>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.flatMap(readPrompts(cli, 500), (texts) => Deferred.succeed(seen, texts))
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      const prompts = Array.from({ length: 500 }, (_, i) => `p${i}`)
      yield* Effect.forEach(prompts, (p) => session.send(p), { discard: true })
      expect(yield* Deferred.await(seen)).toEqual(prompts)
    }))

  it.scoped("a prompt sent mid-turn is delivered at once, and its turn follows", () =>
    Effect.gen(function*() {
      const secondArrivedMidTurn = yield* Deferred.make<boolean>()
      const firstRunning = yield* Deferred.make<void>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.assistant("working on the first")
          yield* Deferred.succeed(firstRunning, undefined)
          // the turn is still running: the second prompt must reach the CLI now, not after the result
          const second = yield* cli.expectUser
          yield* Deferred.succeed(secondArrivedMidTurn, ScriptedCli.textOf(second) === "second")
          yield* cli.result("first done")
          yield* cli.init()
          yield* cli.assistant("second")
          yield* cli.result("second done")
        })
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      const first = yield* session.turn("first").pipe(Stream.runCollect, Effect.fork)
      yield* Deferred.await(firstRunning)
      yield* session.send("second")
      expect(yield* Deferred.await(secondArrivedMidTurn)).toBe(true)
      yield* Fiber.join(first)
      const results = yield* session.messages.pipe(
        Stream.filter((m) => m.type === "result"),
        Stream.take(1),
        Stream.runCollect
      )
      expect([...results].map((m) => m.type === "result" && m.subtype === "success" ? m.result : "")).toEqual([
        "second done"
      ])
    }))
})
