import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import { AgentError, SessionPool, type Transport } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

/** Builds the pool in the test's scope (it lives until the test ends). */
const buildPool = (config: SessionPool.Config, cli: Layer.Layer<Transport.Transport>) =>
  Effect.map(Layer.build(SessionPool.layer(config).pipe(Layer.provide(cli))), Context.get(SessionPool.SessionPool))

/** A scripted CLI that counts live processes and records the spec of each. */
const counting = (options: ScriptedCli.Options = {}) =>
  Effect.gen(function*() {
    let live = 0
    let peak = 0
    const specs = yield* Queue.unbounded<ReadonlyArray<string> | Readonly<Record<string, string | undefined>>>()
    const envs: Array<Readonly<Record<string, string | undefined>>> = []
    const args: Array<ReadonlyArray<string>> = []
    const layer = ScriptedCli.layer((cli) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          live++
          peak = Math.max(peak, live)
          envs.push(cli.spec.env ?? {})
          args.push(cli.spec.args)
        }),
        () =>
          Effect.gen(function*() {
            while (true) {
              const next = yield* cli.nextUser
              if (next._tag === "None") return
              yield* cli.turn(`echo: ${ScriptedCli.textOf(next.value)}`)
            }
          }),
        () => Effect.sync(() => live--)
      ), { stepTimeout: "1 day", ...options })
    return { layer, live: () => live, peak: () => peak, envs, args, specs }
  })

/** Advances the TestClock second by second until `fiber` is done (at most `seconds`); its exit, if it ended. */
const joinWithin = <A, E>(fiber: Fiber.Fiber<A, E>, seconds: number) =>
  Effect.gen(function*() {
    for (let i = 0; i <= seconds; i++) {
      for (let j = 0; j < 20; j++) yield* Effect.yieldNow()
      const exit = yield* Fiber.poll(fiber)
      if (Option.isSome(exit)) return exit
      yield* TestClock.adjust("1 second")
    }
    return yield* Fiber.poll(fiber)
  })

/**
 * Lets forked fibers run until `done` holds: the wait is for the state itself, not for a number of yields (a state
 * that never comes fails the test by its timeout).
 */
const until = (done: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    while (!(yield* done)) yield* Effect.yieldNow()
  })

const textOf = (message: unknown) =>
  typeof message === "object" && message !== null && "result" in message ? message.result : undefined

describe("SessionPool", () => {
  it.scoped("never more than maxConcurrent live sessions; borrowers wait for a slot", () =>
    Effect.gen(function*() {
      const cli = yield* counting()
      const pool = yield* buildPool({ maxConcurrent: 3 }, cli.layer)
      const results = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => i),
        (i) => pool.query(`q${i}`).pipe(Stream.runCollect, Effect.map((c) => Chunk.unsafeLast(c))),
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => (r.type === "result" && r.subtype === "success" ? r.result : ""))).toEqual(
        Array.from({ length: 12 }, (_, i) => `echo: q${i}`)
      )
      expect(cli.peak()).toBeLessThanOrEqual(3)
      expect(cli.peak()).toBeGreaterThan(0)
      expect((yield* pool.stats).live).toBe(0)
    }))

  it.scoped("warm sessions are initialized ahead of time, used once, and refilled", () =>
    Effect.gen(function*() {
      const cli = yield* counting()
      const pool = yield* buildPool({ maxConcurrent: 4, warm: 2 }, cli.layer)
      yield* until(Effect.map(pool.stats, (s) => s.warm === 2))
      expect(yield* pool.stats).toMatchObject({ warm: 2, live: 2, active: 0 })
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* pool.session()
        // the warm session already answered initialize
        yield* session.initializationResult
        return Chunk.unsafeLast(yield* Stream.runCollect(session.turn("hello")))
      }))
      expect(first).toMatchObject({ result: "echo: hello" })
      yield* until(Effect.map(pool.stats, (s) => s.warm === 2))
      expect(yield* pool.stats).toMatchObject({ warm: 2, active: 0, live: 2 })
      expect(cli.envs).toHaveLength(3)
    }))

  it.scoped("a borrower with other options evicts a warm session instead of waiting forever", () =>
    Effect.gen(function*() {
      const cli = yield* counting()
      const pool = yield* buildPool({ maxConcurrent: 1, warm: 1 }, cli.layer)
      yield* until(Effect.map(pool.stats, (s) => s.warm === 1))
      const messages = yield* pool.query("custom", { model: "other" }).pipe(Stream.runCollect)
      expect(Chunk.unsafeLast(messages)).toMatchObject({ result: "echo: custom" })
      expect(cli.peak()).toBe(1)
    }))

  it.scoped("isolateConfigDir gives each session its own CLAUDE_CONFIG_DIR, removed after close", () =>
    Effect.gen(function*() {
      const cli = yield* counting()
      const pool = yield* buildPool({ maxConcurrent: 2, isolateConfigDir: true }, cli.layer)
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(Effect.all([
        Effect.scoped(Effect.zipRight(pool.session(), Deferred.await(gate))),
        Effect.scoped(Effect.zipRight(pool.session(), Deferred.await(gate)))
      ], { concurrency: 2 }))
      yield* until(Effect.sync(() => cli.envs.length === 2))
      const dirs = cli.envs.map((e) => e["CLAUDE_CONFIG_DIR"])
      expect(new Set(dirs).size).toBe(2)
      for (const d of dirs) expect(fs.existsSync(d!)).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(fiber)
      for (const d of dirs) expect(fs.existsSync(d!)).toBe(false)
    }))

  // warm sessions answer initialize only after 5 s: a borrower arrives while they are all still starting
  const slowStart = { delays: { initialize: "5 seconds" } } as const

  it.scoped("G14 warm == maxConcurrent: a borrower arriving while the warm sessions start takes one, no hang", () =>
    Effect.gen(function*() {
      const cli = yield* counting(slowStart)
      const pool = yield* buildPool({ maxConcurrent: 2, warm: 2 }, cli.layer)
      yield* until(Effect.map(pool.stats, (s) => s.live === 2 && cli.live() === 2))
      expect(yield* pool.stats).toMatchObject({ live: 2, warm: 0, active: 0 })
      const fiber = yield* pool.query("now").pipe(Stream.runCollect, Effect.fork)
      const exit = yield* joinWithin(fiber, 10)
      expect(Option.map(exit, (e) => e._tag)).toStrictEqual(Option.some("Success"))
      if (Option.isSome(exit) && exit.value._tag === "Success") {
        expect(textOf(Chunk.unsafeLast(exit.value.value))).toBe("echo: now")
      }
      // the borrower used a warm session: no third process, ever
      expect(cli.peak()).toBe(2)
      expect(cli.envs).toHaveLength(3)
    }))

  it.scoped("G14 warm < maxConcurrent: a borrower takes a starting warm session instead of waiting for a close", () =>
    Effect.gen(function*() {
      const cli = yield* counting(slowStart)
      const pool = yield* buildPool({ maxConcurrent: 2, warm: 1 }, cli.layer)
      yield* until(Effect.map(pool.stats, (s) => s.live === 1))
      // one slot held by a borrower that never returns it during this test
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(Effect.scoped(Effect.zipRight(pool.session(), Deferred.await(gate))))
      yield* until(Effect.map(pool.stats, (s) => s.active === 1 && s.live === 2))
      const fiber = yield* pool.query("second").pipe(Stream.runCollect, Effect.fork)
      const exit = yield* joinWithin(fiber, 10)
      expect(Option.map(exit, (e) => e._tag)).toStrictEqual(Option.some("Success"))
      expect(cli.peak()).toBe(2)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
    }))

  it.scoped("G14 a borrower with other options evicts a warm session that is still starting", () =>
    Effect.gen(function*() {
      const cli = yield* counting(slowStart)
      const pool = yield* buildPool({ maxConcurrent: 2, warm: 2 }, cli.layer)
      yield* until(Effect.map(pool.stats, (s) => s.live === 2 && cli.live() === 2))
      const fiber = yield* pool.query("custom", { model: "other" }).pipe(Stream.runCollect, Effect.fork)
      const exit = yield* joinWithin(fiber, 10)
      expect(Option.map(exit, (e) => e._tag)).toStrictEqual(Option.some("Success"))
      expect(cli.peak()).toBe(2)
      // one warm session was evicted for a session with the borrower's options
      expect(cli.args.filter((a) => a.includes("--model=other"))).toHaveLength(1)
    }))

  it.scoped("G14 under load with warm sessions: every borrower served, never over the cap, warm refilled after", () =>
    Effect.gen(function*() {
      const cli = yield* counting(slowStart)
      const pool = yield* buildPool({ maxConcurrent: 3, warm: 2 }, cli.layer)
      const fiber = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) =>
          pool.query(`q${i}`, i % 3 === 0 ? { model: "other" } : undefined).pipe(
            Stream.runCollect,
            Effect.map((c) => textOf(Chunk.unsafeLast(c)))
          ),
        { concurrency: "unbounded" }
      ).pipe(Effect.fork)
      const exit = yield* joinWithin(fiber, 120)
      expect(exit).toStrictEqual(Option.some(Exit.succeed(Array.from({ length: 10 }, (_, i) => `echo: q${i}`))))
      expect(cli.peak()).toBeLessThanOrEqual(3)
      // the refills wait for the borrowers to be served, then start (and answer initialize 5 s later); the clock
      // goes on a second at a time until they are warm, well past those 5 s at most
      const refilled = Effect.map(pool.stats, (s) => s.warm === 2)
      for (let second = 0; second < 60 && !(yield* refilled); second++) {
        yield* TestClock.adjust("1 second")
        yield* Effect.yieldNow()
      }
      expect(yield* pool.stats).toMatchObject({ warm: 2, live: 2, active: 0, waiting: 0 })
    }))

  it.scoped("a waiting borrower can be interrupted; it leaves no trace in the stats", () =>
    Effect.gen(function*() {
      const cli = yield* counting()
      const pool = yield* buildPool({ maxConcurrent: 1 }, cli.layer)
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(Effect.scoped(Effect.zipRight(pool.session(), Deferred.await(gate))))
      yield* until(Effect.map(pool.stats, (s) => s.active === 1))
      const waiter = yield* Effect.fork(Effect.scoped(pool.session()))
      yield* until(Effect.map(pool.stats, (s) => s.waiting === 1))
      expect(yield* pool.stats).toMatchObject({ active: 1, live: 1, waiting: 1 })
      yield* Fiber.interrupt(waiter)
      expect(yield* pool.stats).toMatchObject({ active: 1, live: 1, waiting: 0 })
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      expect(yield* pool.stats).toMatchObject({ active: 0, live: 0, waiting: 0 })
      expect(cli.envs).toHaveLength(1)
    }))

  it.scoped("a closed pool fails borrowers (waiting ones included) with PoolClosed, and starts nothing", () =>
    Effect.gen(function*() {
      const cli = yield* counting()
      const poolScope = yield* Scope.make()
      const pool = yield* Effect.map(
        Layer.buildWithScope(SessionPool.layer({ maxConcurrent: 1 }).pipe(Layer.provide(cli.layer)), poolScope),
        Context.get(SessionPool.SessionPool)
      )
      const holder = yield* Effect.fork(Effect.scoped(Effect.zipRight(pool.session(), Effect.never)))
      yield* until(Effect.map(pool.stats, (s) => s.active === 1))
      const waiter = yield* Effect.fork(Effect.scoped(pool.session()))
      yield* until(Effect.map(pool.stats, (s) => s.waiting === 1))
      yield* Scope.close(poolScope, Exit.void)
      const poolClosed = Exit.fail(new AgentError.InputClosed({ reason: "PoolClosed" }))
      expect(yield* Fiber.await(waiter)).toStrictEqual(poolClosed)
      expect(yield* Effect.exit(Effect.scoped(pool.session()))).toStrictEqual(poolClosed)
      expect(yield* Effect.exit(Stream.runCollect(pool.query("hi")))).toStrictEqual(poolClosed)
      expect(cli.envs).toHaveLength(1)
      yield* Fiber.interrupt(holder)
    }))
})
