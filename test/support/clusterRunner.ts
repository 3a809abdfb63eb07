/**
 * A runner process of a test cluster: `AgentCluster.layerSocket` on 127.0.0.1, its storage on PostgreSQL
 * (`ECA_RUNNER_PG_URL`) or an SQLite file (`ECA_RUNNER_SQLITE`), its sessions' CLIs scripted in process (every
 * launch and prompt appended to `ECA_RUNNER_LOG` as a JSON line). A prompt starting with `HANG` is taken and never
 * answered: the turn is in flight when the test kills this process.
 *
 *   node --import tsx test/support/clusterRunner.ts
 */
import * as ShardId from "@effect/cluster/ShardId"
import * as Sharding from "@effect/cluster/Sharding"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import { AgentCluster } from "../../src/cluster.js"
import { ScriptedCli } from "../../src/testing.js"
import { clusterTiming, type RunnerEvent } from "./cluster.js"

const env = (name: string) => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

const log = env("ECA_RUNNER_LOG")
const record = (event: RunnerEvent) => fs.appendFileSync(log, JSON.stringify(event) + "\n")

const cli = ScriptedCli.layer((cli) =>
  Effect.gen(function*() {
    record({ pid: process.pid, launch: cli.spec.args })
    const session = cli.spec.args.find((a) => a.startsWith("--session-id=") || a.startsWith("--resume="))
      ?.split("=")[1] ?? ""
    while (true) {
      const next = yield* cli.nextUser
      if (next._tag === "None") return
      const text = ScriptedCli.textOf(next.value)
      record({ pid: process.pid, session, prompt: text })
      if (text.startsWith("HANG")) return yield* Effect.never
      yield* cli.turn(`echo: ${text}`)
    }
  })
)

const sql: Layer.Layer<SqlClient.SqlClient> = process.env["ECA_RUNNER_PG_URL"] !== undefined
  ? Layer.orDie(PgClient.layer({ url: Redacted.make(env("ECA_RUNNER_PG_URL")) }))
  : Layer.orDie(SqliteClient.layer({ filename: env("ECA_RUNNER_SQLITE") }))

const runner = AgentCluster.layerSocket({
  address: { host: "127.0.0.1", port: Number(env("ECA_RUNNER_PORT")) },
  prefix: env("ECA_RUNNER_PREFIX"),
  shardingConfig: clusterTiming
}).pipe(
  Layer.provide(cli),
  Layer.provide(sql)
)

/** Records how many of the cluster's shards this runner holds, whenever that changes. */
const recordShards = Effect.gen(function*() {
  const sharding = yield* Sharding.Sharding
  const shardsPerGroup = clusterTiming.shardsPerGroup ?? 300
  let held = -1
  while (true) {
    let now = 0
    for (let i = 1; i <= shardsPerGroup; i++) if (sharding.hasShardId(ShardId.make("default", i))) now++
    if (now !== held) record({ pid: process.pid, shards: now })
    held = now
    yield* Effect.sleep("100 millis")
  }
})

Effect.gen(function*() {
  const context = yield* Layer.build(runner)
  record({ pid: process.pid, ready: true })
  return yield* Effect.provide(recordShards, context)
}).pipe(
  Effect.scoped,
  Logger.withMinimumLogLevel(LogLevel.Warning),
  NodeRuntime.runMain
)
