// The Node layer built in a scope that closes before its sessions start (`Layer.build(...)` then
// `Effect.provide(NodeClaudeAgent.layer)`): the CliResolver it holds keeps working, so sessions started later (the
// SessionPool's warm ones and borrowed ones) run the fake CLI, its `--version` probe included, exactly as with
// `Layer.provide`.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ClaudeAgent, Message, NodeClaudeAgent, SessionPool, Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"

const options = FakeCli.options(FakeCli.echoScenario)

/** One query through the pool, to its result text. */
const ask = (pool: SessionPool.Service, text: string) =>
  pool.query(text).pipe(
    Stream.runCollect,
    Effect.map((messages) => Chunk.toReadonlyArray(messages).find(Message.isResultMessage))
  )

/** Polls the pool's stats (real time: real processes start) until a warm session is ready. */
const warmReady = (pool: SessionPool.Service) =>
  Effect.gen(function*() {
    while ((yield* pool.stats).warm < 1) yield* Effect.sleep("20 millis")
  }).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("no warm session got ready") }))

const compositions = {
  "Layer.provide": (config: SessionPool.Config) =>
    Layer.build(SessionPool.layer(config).pipe(Layer.provide(NodeClaudeAgent.layer))),
  "Effect.provide (the Node layer's scope closes once the pool is built)": (config: SessionPool.Config) =>
    Layer.build(SessionPool.layer(config)).pipe(Effect.provide(NodeClaudeAgent.layer))
}

describe("the Node layer outlives the scope it was built in", () => {
  for (const [name, build] of Object.entries(compositions)) {
    it.live(
      `${name}: the pool's warm session and a borrowed one start and answer`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const pool = Context.get(yield* build({ maxConcurrent: 2, warm: 1, options }), SessionPool.SessionPool)
          yield* warmReady(pool)
          expect(yield* ask(pool, "warm")).toMatchObject({ subtype: "success", result: "echo: warm" })
          // options of its own: a fresh session, not the warm one (its version is known by now)
          const fresh = yield* pool.session({ model: "fresh" }).pipe(
            Effect.flatMap((session) => Stream.runCollect(session.turn("fresh"))),
            Effect.scoped,
            Effect.either
          )
          expect(fresh._tag).toBe("Right")
        })),
      60_000
    )
  }

  it.live(
    "a Transport captured from a closed build scope still opens the CLI and probes its version",
    () =>
      Effect.gen(function*() {
        const context = yield* Layer.build(Layer.service(Transport.Transport)).pipe(
          Effect.provide(NodeClaudeAgent.layer),
          Effect.scoped
        )
        const messages = yield* ClaudeAgent.query("late", options).pipe(
          Stream.runCollect,
          Effect.provide(context)
        )
        expect(Chunk.toReadonlyArray(messages).find(Message.isResultMessage)).toMatchObject({
          subtype: "success",
          result: "echo: late"
        })
      }),
    60_000
  )
})
