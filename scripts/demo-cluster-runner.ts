/**
 * A runner process of a local cluster (npm run demo:cluster, and the cluster tests): `AgentCluster.layerSocket` on
 * 127.0.0.1, its storage on PostgreSQL (`ECA_RUNNER_PG_URL`) or an SQLite file (`ECA_RUNNER_SQLITE`), its events
 * appended to `ECA_RUNNER_LOG` as JSON lines (started, the shards it holds).
 *
 * With `ECA_RUNNER_OPTIONS` (the sessions' options as JSON: `cwd`, `env`) its sessions run the real CLI. Without,
 * their CLIs are scripted in this process: each answers `echo: <prompt>`, records its launch and prompts, and takes a
 * prompt starting with `HANG` without ever answering it (a turn in flight when the runner is killed).
 *
 *   node --import tsx scripts/demo-cluster-runner.ts
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
import type { AgentOptions, Transport } from "effect-claude-agent"
import { NodeClaudeAgent } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import { ScriptedCli } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import { clusterTiming, type RunnerEvent } from "./demo-cluster-processes.js"

const env = (name: string) => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

const log = env("ECA_RUNNER_LOG")
const record = (event: RunnerEvent) => fs.appendFileSync(log, JSON.stringify(event) + "\n")

const scripted = ScriptedCli.layer((cli) =>
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

const realOptions = process.env["ECA_RUNNER_OPTIONS"]
const options: AgentOptions.Options = realOptions === undefined ? {} : JSON.parse(realOptions)
const cli: Layer.Layer<Transport.Transport> = realOptions === undefined ? scripted : NodeClaudeAgent.layer

const sql: Layer.Layer<SqlClient.SqlClient> = process.env["ECA_RUNNER_PG_URL"] !== undefined
  ? Layer.orDie(PgClient.layer({ url: Redacted.make(env("ECA_RUNNER_PG_URL")) }))
  : Layer.orDie(SqliteClient.layer({ filename: env("ECA_RUNNER_SQLITE") }))

const runner = AgentCluster.layerSocket({
  address: { host: "127.0.0.1", port: Number(env("ECA_RUNNER_PORT")) },
  prefix: env("ECA_RUNNER_PREFIX"),
  shardingConfig: clusterTiming,
  options
}).pipe(
  Layer.provide(cli),
  Layer.provide(sql)
)

/** Records the shards this runner holds, whenever they change. */
const recordShards = Effect.gen(function*() {
  const sharding = yield* Sharding.Sharding
  const shardsPerGroup = clusterTiming.shardsPerGroup ?? 300
  let held = ""
  while (true) {
    const shards: Array<number> = []
    for (let i = 1; i <= shardsPerGroup; i++) if (sharding.hasShardId(ShardId.make("default", i))) shards.push(i)
    if (shards.join() !== held) record({ pid: process.pid, shards, at: Date.now() })
    held = shards.join()
    yield* Effect.sleep("100 millis")
  }
})

Effect.gen(function*() {
  const context = yield* Layer.build(runner)
  record({ pid: process.pid, ready: true })
  return yield* Effect.provide(recordShards, context)
}).pipe(
  Effect.scoped,
  // ECA_RUNNER_LOG_LEVEL (e.g. Debug) to trace a runner
  Logger.withMinimumLogLevel(
    LogLevel.allLevels.find((l) => l._tag === process.env["ECA_RUNNER_LOG_LEVEL"]) ?? LogLevel.Warning
  ),
  // stdout is not read by the tests: warnings go to stderr (`<log>.<port>.err`)
  Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))),
  NodeRuntime.runMain
)
