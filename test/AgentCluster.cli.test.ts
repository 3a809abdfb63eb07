import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { type AgentOptions, Message } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { descendants } from "./support/process.js"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())), 120_000)

const lastResult = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).filter(Message.isResultMessage).at(-1)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

/** A single-runner cluster on `filename` whose sessions run the real CLI with `options`. */
const cluster = (filename: string, options: AgentOptions.Options, extra: Partial<AgentCluster.SqliteOptions> = {}) =>
  AgentCluster.layerSqlite({ filename, options, shardingConfig: { entityTerminationTimeout: 2_000 }, ...extra }).pipe(
    Layer.provide(NodeClaudeAgent.layer)
  )

const reply = (id: string, prompt: string) =>
  Effect.flatMap(AgentCluster.session(id), (session) => Stream.runCollect(session.turn(prompt))).pipe(
    Effect.map(lastResult)
  )

describe("AgentCluster against the real CLI", () => {
  live("two turns on one entity keep the conversation", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const filename = path.join(yield* tempDir("eca-cluster-"), "cluster.db")
      yield* Effect.gen(function*() {
        expect(yield* reply("ada", "SAY Nice to meet you, Ada.")).toBe("Nice to meet you, Ada.")
        expect(yield* reply("ada", "HISTORY")).toContain("user prompts: SAY Nice to meet you, Ada. | HISTORY")
      }).pipe(Effect.provide(cluster(filename, options())))
    }))

  live("a runner started again on the same SQLite file resumes the session", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const filename = path.join(yield* tempDir("eca-cluster-"), "cluster.db")
      yield* reply("bob", "SAY first").pipe(Effect.provide(cluster(filename, options())))
      const history = yield* reply("bob", "HISTORY").pipe(Effect.provide(cluster(filename, options())))
      expect(history).toContain("user prompts: SAY first | HISTORY")
    }))

  live(
    "an idle entity's CLI is reaped while the runner runs; the next turn resumes the conversation",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const filename = path.join(yield* tempDir("eca-cluster-"), "cluster.db")
        yield* Effect.gen(function*() {
          yield* reply("cy", "SAY before the nap")
          expect(descendants(process.pid).length).toBeGreaterThan(0)
          // the reaper looks every 5 s at the soonest; the CLI goes with the entity
          const deadline = Date.now() + 30_000
          while (descendants(process.pid).length > 0 && Date.now() < deadline) yield* Effect.sleep("200 millis")
          expect(descendants(process.pid)).toEqual([])
          expect(yield* reply("cy", "HISTORY")).toContain("user prompts: SAY before the nap | HISTORY")
        }).pipe(Effect.provide(cluster(filename, options(), { maxIdleTime: "1 second" })))
      })
  )
})
