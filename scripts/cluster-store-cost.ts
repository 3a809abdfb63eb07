/**
 * What the cluster's transcript store costs per turn (the figures in README, "Sessions on a cluster"): one runner on
 * an SQLite file, one session, the real claude CLI against the scripted model server; `TURNS` turns of each kind,
 * once with a store that keeps nothing (the baseline: the CLI still mirrors, nothing is written) and once with each
 * flush mode of the SQL store in the cluster's database. Reports the rows and bytes each turn adds to the transcript
 * table and to the cluster's own tables, and the median wall time of a turn.
 *
 *   npx tsx --tsconfig tsconfig.json scripts/cluster-store-cost.ts [turns]
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { Console, Effect, Layer, Stream } from "effect"
import { NodeClaudeAgent, TranscriptStore } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import { TranscriptStoreSql } from "effect-claude-agent/sql"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const TURNS = Number(process.argv[2] ?? 20)

/** A store that keeps nothing: the runner's sessions run as they would without one. */
const nothing = Layer.succeed(
  TranscriptStore.TranscriptStore,
  TranscriptStore.TranscriptStore.of({
    append: () => Effect.void,
    load: () => Effect.succeedNone,
    list: () => Effect.succeed([]),
    listSubkeys: () => Effect.succeed([]),
    delete: () => Effect.void
  })
)

const KINDS = {
  text: (i: number) => `SAY answer number ${i}`,
  tool: (i: number) => `TOOL Bash {"command":"echo tool call ${i}"}`
} as const

interface Tally {
  readonly rows: number
  readonly bytes: number
}

const tally = (sql: SqlClient.SqlClient, table: string, column: string) =>
  sql<{ readonly rows: number; readonly bytes: number | null }>`
    SELECT COUNT(*) AS rows, SUM(LENGTH(${sql(column)})) AS bytes FROM ${sql(table)}`.pipe(
    Effect.map(([row]): Tally => ({ rows: Number(row?.rows ?? 0), bytes: Number(row?.bytes ?? 0) })),
    Effect.orElseSucceed((): Tally => ({ rows: 0, bytes: 0 }))
  )

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

const measure = (
  mode: "none" | "batched" | "eager",
  kind: keyof typeof KINDS,
  server: ScriptedModelServer.ScriptedModelServer
) =>
  Effect.gen(function*() {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "eca-store-cost-")))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    const cwd = path.join(dir, "work")
    fs.mkdirSync(cwd)
    const filename = path.join(dir, "cluster.db")
    const cluster = AgentCluster.layerSqlite({
      filename,
      options: { cwd, env: server.env({ freshHome: true }) },
      transcriptFlush: mode === "eager" ? "eager" : "batched"
    }).pipe(Layer.provide(mode === "none" ? Layer.merge(NodeClaudeAgent.layer, nothing) : NodeClaudeAgent.layer))
    const sqlite = yield* Layer.build(SqliteClient.layer({ filename }))
    const sql = yield* Effect.provide(SqlClient.SqlClient, sqlite)
    const counts = Effect.all({
      transcript: tally(sql, "claude_transcript_entries", "entry"),
      messages: tally(sql, "cluster_messages", "payload"),
      replies: tally(sql, "cluster_replies", "payload"),
      records: tally(sql, "cluster_agent_sessions", "record")
    })
    const times: Array<number> = []
    const [before, after] = yield* Effect.gen(function*() {
      const session = yield* AgentCluster.session("measured")
      // the first turn starts the CLI: not measured
      yield* Stream.runDrain(session.turn("SAY warm-up"))
      const before = yield* counts
      for (let i = 0; i < TURNS; i++) {
        const start = performance.now()
        yield* Stream.runDrain(session.turn(KINDS[kind](i)))
        times.push(performance.now() - start)
      }
      // what the last turn's entries still have pending reaches the store with the close
      yield* session.close
      return [before, yield* counts] as const
    }).pipe(Effect.provide(cluster))
    const per = (k: keyof typeof before) => ({
      rows: Math.round((after[k].rows - before[k].rows) / TURNS * 10) / 10,
      bytes: Math.round((after[k].bytes - before[k].bytes) / TURNS)
    })
    return {
      mode,
      kind,
      medianMs: Math.round(median(times)),
      transcript: per("transcript"),
      messages: per("messages"),
      replies: per("replies"),
      records: per("records")
    }
  }).pipe(Effect.scoped)

/**
 * The store's own time for one turn's entries (`shape`: how many, of about how many bytes each) on SQLite, without
 * the CLI: one append each (`eager`) or one append of all of them (`batched`), averaged over `TURNS * 10` turns.
 */
const appendCost = (flush: "eager" | "batched", shape: { readonly entries: number; readonly bytes: number }) =>
  Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-store-cost-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    const sqlite = yield* Layer.build(SqliteClient.layer({ filename: path.join(dir, "t.db") }))
    const store = yield* TranscriptStoreSql.make().pipe(Effect.provide(sqlite), Effect.orDie)
    const turns = TURNS * 10
    const key = { projectKey: "-work", sessionId: crypto.randomUUID() }
    const entries = (turn: number) =>
      Array.from({ length: shape.entries }, (_, i) => ({
        type: i === 0 ? "user" : "assistant",
        uuid: crypto.randomUUID(),
        timestamp: new Date().toISOString(),
        message: { content: "x".repeat(shape.bytes - 130), turn, i }
      }))
    const start = performance.now()
    for (let turn = 0; turn < turns; turn++) {
      const batch = entries(turn)
      if (flush === "batched") yield* store.append(key, batch)
      else for (const entry of batch) yield* store.append(key, [entry])
    }
    return (performance.now() - start) / turns
  }).pipe(Effect.scoped, Effect.orDie)

const program = Effect.gen(function*() {
  const shapes = { text: { entries: 4, bytes: 530 }, tool: { entries: 6, bytes: 670 } } as const
  for (const kind of ["text", "tool"] as const) {
    for (const flush of ["eager", "batched"] as const) {
      const ms = yield* appendCost(flush, shapes[kind])
      yield* Console.log(`store alone, ${kind} turn, ${flush}: ${ms.toFixed(2)} ms per turn`)
    }
  }
  if (process.argv[3] === "store-only") return
  const server = yield* ScriptedModelServer.make()
  yield* Console.log(`${TURNS} turns each; per turn: rows / bytes`)
  for (const kind of ["text", "tool"] as const) {
    for (const mode of ["none", "batched", "eager", "none"] as const) {
      const r = yield* measure(mode, kind, server)
      yield* Console.log(
        `${kind.padEnd(4)} ${mode.padEnd(7)} median ${String(r.medianMs).padStart(4)} ms | transcript ` +
          `${r.transcript.rows} / ${r.transcript.bytes} | cluster messages ${r.messages.rows} / ${r.messages.bytes}` +
          ` | replies ${r.replies.rows} / ${r.replies.bytes} | session records ${r.records.rows}`
      )
    }
  }
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
