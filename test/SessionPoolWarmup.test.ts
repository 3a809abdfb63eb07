// The SessionPool's warm-up after a warm session fails to start: a failure no retry can fix (no CLI, rejected
// options, a CLI version out of range, a defect, an interruption it did not ask for) stops it, logged once, and each
// borrower gets the error typed from its own start; a failure that may pass is retried with a backoff.
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as TestClock from "effect/TestClock"
import { AgentError, SessionPool, Transport } from "effect-claude-agent"

type OpenError =
  | AgentError.CliNotFound
  | AgentError.SpawnFailed
  | AgentError.VersionIncompatible
  | AgentError.InvalidOptions

/** A Transport whose every `open` ends as `outcome` says, counting the opens. */
const failing = (outcome: Effect.Effect<never, OpenError>) => {
  let opens = 0
  const layer = Layer.succeed(
    Transport.Transport,
    Transport.Transport.of({
      open: () =>
        Effect.suspend(() => {
          opens++
          return outcome
        })
    })
  )
  return { layer, opens: () => opens }
}

/** Builds a pool on `transport` in the test's scope, with a logger that keeps what the pool logs. */
const poolOn = (transport: Layer.Layer<Transport.Transport>, config: SessionPool.Config) =>
  Effect.gen(function*() {
    const logs: Array<{ readonly level: LogLevel.LogLevel["label"]; readonly message: unknown }> = []
    const logger = Logger.make(({ logLevel, message }) => {
      logs.push({ level: logLevel.label, message })
    })
    const pool = yield* Layer.build(SessionPool.layer(config).pipe(Layer.provide(transport))).pipe(
      Effect.map(Context.get(SessionPool.SessionPool)),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return { pool, logs }
  })

/** Lets every forked fiber run, then moves the clock by `minutes`. */
const wait = (minutes: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < minutes * 2; i++) {
      yield* Effect.repeatN(Effect.yieldNow(), 10)
      yield* TestClock.adjust("30 seconds")
    }
  })

const notFound = new AgentError.CliNotFound({ searched: ["PATH: /nowhere/claude"], reason: "NotFound" })

describe("SessionPool warm-up: failures retrying cannot fix", () => {
  const permanent = {
    CliNotFound: Effect.fail(notFound),
    "VersionIncompatible OutOfRange": Effect.fail(
      new AgentError.VersionIncompatible({ found: "1.0.0", supported: ">=2.1.100 <2.2.0", reason: "OutOfRange" })
    ),
    InvalidOptions: Effect.fail(new AgentError.InvalidOptions({ option: "cwd", description: "/nowhere is missing" })),
    "an interruption from a service that shut down": Effect.interrupt,
    "a defect": Effect.die(new Error("bug"))
  }
  for (const [name, outcome] of Object.entries(permanent)) {
    it.scoped(`${name}: each warm-up tries once, one error is logged, no retry in 10 minutes`, () =>
      Effect.gen(function*() {
        const transport = failing(outcome)
        const { logs, pool } = yield* poolOn(transport.layer, { maxConcurrent: 3, warm: 2 })
        yield* wait(10)
        expect(transport.opens()).toBe(2)
        expect(logs.map((l) => l.level)).toStrictEqual(["ERROR"])
        expect(String(logs[0]!.message)).toContain("warm sessions stopped")
        expect(yield* pool.stats).toMatchObject({ warm: 0, live: 0, active: 0, waiting: 0 })
      }))
  }

  it.scoped("a borrower gets the error of its own start, typed; the permits are all free after", () =>
    Effect.gen(function*() {
      const transport = failing(Effect.fail(notFound))
      const { pool } = yield* poolOn(transport.layer, { maxConcurrent: 1, warm: 1 })
      yield* wait(1)
      const exit = yield* Effect.exit(Effect.scoped(pool.session()))
      expect(exit).toStrictEqual(Exit.fail(notFound))
      expect(transport.opens()).toBe(2)
      expect(yield* pool.stats).toMatchObject({ live: 0, active: 0, waiting: 0 })
    }))

  it.scoped("a failure that may pass (SpawnFailed) is retried with a backoff, a warning each time", () =>
    Effect.gen(function*() {
      const transport = failing(Effect.fail(new AgentError.SpawnFailed({ command: "claude", description: "EAGAIN" })))
      const { logs } = yield* poolOn(transport.layer, { maxConcurrent: 1, warm: 1 })
      yield* wait(10)
      // 200 ms doubling to 30 s: 9 tries in the first 51 s, then one every 30 s
      expect(transport.opens()).toBeGreaterThan(20)
      expect(new Set(logs.map((l) => l.level))).toStrictEqual(new Set(["WARN"]))
    }))
})
