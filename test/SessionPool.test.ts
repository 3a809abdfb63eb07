import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { SessionPool, type Transport } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

/** Builds the pool in the test's scope (it lives until the test ends). */
const buildPool = (config: SessionPool.Config, cli: Layer.Layer<Transport.Transport>) =>
  Effect.map(Layer.build(SessionPool.layer(config).pipe(Layer.provide(cli))), Context.get(SessionPool.SessionPool))

/** A scripted CLI that counts live processes and records the spec of each. */
const counting = Effect.gen(function*() {
  let live = 0
  let peak = 0
  const specs = yield* Queue.unbounded<ReadonlyArray<string> | Readonly<Record<string, string | undefined>>>()
  const envs: Array<Readonly<Record<string, string | undefined>>> = []
  const layer = ScriptedCli.layer((cli) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        live++
        peak = Math.max(peak, live)
        envs.push(cli.spec.env ?? {})
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
    ), { stepTimeout: "1 day" })
  return { layer, live: () => live, peak: () => peak, envs, specs }
})

describe("SessionPool", () => {
  it.scoped("never more than maxConcurrent live sessions; borrowers wait for a slot", () =>
    Effect.gen(function*() {
      const cli = yield* counting
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
      const cli = yield* counting
      const pool = yield* buildPool({ maxConcurrent: 4, warm: 2 }, cli.layer)
      for (let i = 0; i < 50 && (yield* pool.stats).warm < 2; i++) yield* Effect.yieldNow()
      expect(yield* pool.stats).toMatchObject({ warm: 2, live: 2, active: 0 })
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* pool.session()
        // the warm session already answered initialize
        yield* session.initializationResult
        return Chunk.unsafeLast(yield* Stream.runCollect(session.turn("hello")))
      }))
      expect(first).toMatchObject({ result: "echo: hello" })
      for (let i = 0; i < 50 && (yield* pool.stats).warm < 2; i++) yield* Effect.yieldNow()
      expect(yield* pool.stats).toMatchObject({ warm: 2, active: 0, live: 2 })
      expect(cli.envs).toHaveLength(3)
    }))

  it.scoped("a borrower with other options evicts a warm session instead of waiting forever", () =>
    Effect.gen(function*() {
      const cli = yield* counting
      const pool = yield* buildPool({ maxConcurrent: 1, warm: 1 }, cli.layer)
      for (let i = 0; i < 50 && (yield* pool.stats).warm < 1; i++) yield* Effect.yieldNow()
      const messages = yield* pool.query("custom", { model: "other" }).pipe(Stream.runCollect)
      expect(Chunk.unsafeLast(messages)).toMatchObject({ result: "echo: custom" })
      expect(cli.peak()).toBe(1)
    }))

  it.scoped("isolateConfigDir gives each session its own CLAUDE_CONFIG_DIR, removed after close", () =>
    Effect.gen(function*() {
      const cli = yield* counting
      const pool = yield* buildPool({ maxConcurrent: 2, isolateConfigDir: true }, cli.layer)
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(Effect.all([
        Effect.scoped(Effect.zipRight(pool.session(), Deferred.await(gate))),
        Effect.scoped(Effect.zipRight(pool.session(), Deferred.await(gate)))
      ], { concurrency: 2 }))
      for (let i = 0; i < 50 && cli.envs.length < 2; i++) yield* Effect.yieldNow()
      const dirs = cli.envs.map((e) => e["CLAUDE_CONFIG_DIR"])
      expect(new Set(dirs).size).toBe(2)
      for (const d of dirs) expect(fs.existsSync(d!)).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(fiber)
      for (const d of dirs) expect(fs.existsSync(d!)).toBe(false)
    }))
})
