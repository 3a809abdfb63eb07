// Issue 23, item 4: a cluster under faults. Three runner processes (AgentCluster.layerSocket on 127.0.0.1) share one
// SQL store (an SQLite file; PostgreSQL when ECA_TEST_PG_URL is set); 300 sessions × 3 turns; one runner SIGKILLed
// mid-run. The CLI is test/stress/history-cli.sh (POSIX sh, ~1 MB a process: 300 real CLIs would not fit 2 cores),
// whose answers are derived from the conversation history it reads back when a session is resumed, and whose turns
// run a tool process in a session of its own.
//
// Checked: every acknowledged turn has its result exactly once, and its answer holds every earlier acknowledged turn
// of its session in order (the history the CLI got); no process of the killed runner's CLIs (tools included) is alive
// past the host watchdog's bound. Reported: turns/s, the time from the kill to the first resumed turn, and the time
// from the kill to the last of the killed runner's CLI processes gone.
import type * as Sharding from "@effect/cluster/Sharding"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { AgentCluster } from "effect-claude-agent/cluster"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clusterTiming, type RunnerStorage, spawnRunner, waitForBalance } from "../../scripts/demo-cluster-processes.js"
import { withEnv } from "../support/process.js"
import { report } from "./support.js"

const SESSIONS = Number(process.env["ECA_STRESS_CLUSTER_SESSIONS"] ?? "300")
const TURNS = 3
const CONCURRENCY = Number(process.env["ECA_STRESS_CLUSTER_CONCURRENCY"] ?? "60")
/** The kill comes once this share of the turns has been acknowledged. */
const KILL_AT = 0.35
/** The host watchdog's stated bound (SECURITY.md), from the runner's death to its CLIs' processes gone. */
const WATCHDOG_BOUND_MILLIS = 1000
const ATTEMPTS = 5
const CLI = path.join(import.meta.dirname, "history-cli.sh")

const pgUrl = process.env["ECA_TEST_PG_URL"]

const sqlLayer = (storage: RunnerStorage): Layer.Layer<SqlClient.SqlClient> =>
  "pgUrl" in storage
    ? Layer.orDie(PgClient.layer({ url: Redacted.make(storage.pgUrl) }))
    : Layer.orDie(SqliteClient.layer({ filename: storage.sqlite }))

/** An acknowledged turn: its session, its index, the token its prompt carried, the runner that answered, when. */
interface Acked {
  readonly session: number
  readonly turn: number
  readonly token: string
  readonly runner: number
  /** The CLI's session id (its history file's name). */
  readonly cliSession: string
  readonly history: ReadonlyArray<string>
  readonly at: number
}

describe("AgentCluster under faults", () => {
  it.scopedLive(
    `${SESSIONS} sessions × ${TURNS} turns on 3 runners (${
      pgUrl === undefined ? "SQLite" : "PostgreSQL"
    }), one SIGKILLed mid-run`,
    () =>
      Effect.gen(function*() {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-cluster-stress-"))),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        )
        const history = path.join(dir, "history")
        fs.mkdirSync(history)
        const storage: RunnerStorage = pgUrl === undefined ? { sqlite: path.join(dir, "cluster.db") } : { pgUrl }
        const log = path.join(dir, "events.jsonl")
        const prefix = `st${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`
        const options = {
          pathToClaudeCodeExecutable: CLI,
          env: { ECA_STRESS_HISTORY: history, ECA_STRESS_TOOL_SECONDS: "0.05" }
        }
        // the victim's CLIs start 120 s tools once this file exists, so that they are mid-turn when it is killed
        const slow = path.join(dir, "slow")
        // whatever of the victim's CLIs outlived it (when the watchdog failed) ends with the test
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const pid of withEnv("ECA_STRESS_SLOW_FLAG", slow)) {
              try {
                process.kill(pid, "SIGKILL")
              } catch {
                // gone
              }
            }
          })
        )
        const runners = [
          yield* spawnRunner({
            storage,
            prefix,
            log,
            options: { ...options, env: { ...options.env, ECA_STRESS_SLOW_FLAG: slow } }
          }),
          yield* spawnRunner({ storage, prefix, log, options }),
          yield* spawnRunner({ storage, prefix, log, options })
        ]
        yield* waitForBalance(log, runners.map((r) => r.pid))
        const client: Layer.Layer<AgentCluster.AgentCluster | Sharding.Sharding> = AgentCluster
          .layerSocketClient({ prefix, shardingConfig: clusterTiming })
          .pipe(Layer.provide(sqlLayer(storage)))
        const context = yield* Layer.build(client)

        const acked: Array<Acked> = []
        const problems: Array<string> = []
        let cutOff = 0
        let failedAttempts = 0
        const failures = new Map<string, number>()
        let killedAt: number | undefined
        const victim = runners[0]!
        const killWhen = Math.floor(SESSIONS * TURNS * KILL_AT)
        let gone: { readonly took: number | undefined } | undefined

        let midTurn = 0
        /**
         * Once `killWhen` turns are acknowledged: makes the victim's next tools long, waits until some of its CLIs are
         * in one, kills it, then waits for its CLIs to be gone.
         */
        const maybeKill = Effect.suspend(() => {
          if (killedAt !== undefined || acked.length < killWhen) return Effect.void
          killedAt = Number.POSITIVE_INFINITY
          fs.writeFileSync(slow, "")
          const longTools = () =>
            withEnv("ECA_RUNNER_PORT", String(victim.port)).filter((pid) => {
              try {
                return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1") === "sleep\u0000120\u0000"
              } catch {
                return false
              }
            }).length
          return Effect.promise(async () => {
            const deadline = Date.now() + 20_000
            while (longTools() < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
            await new Promise((resolve) => setTimeout(resolve, 200))
            midTurn = longTools()
            killedAt = Date.now()
          }).pipe(
            Effect.zipRight(victim.kill),
            Effect.zipRight(Effect.promise(async () => {
              const started = killedAt!
              while (Date.now() - started < 30_000) {
                if (withEnv("ECA_RUNNER_PORT", String(victim.port)).length === 0) {
                  gone = { took: Date.now() - started }
                  return
                }
                await new Promise((resolve) => setTimeout(resolve, 10))
              }
              gone = { took: undefined }
            })),
            Effect.forkScoped,
            Effect.asVoid
          )
        })

        /** One turn, run again under a new token when the runner's death cut it off or failed it. */
        const runTurn = (session: number, turn: number, id: string) =>
          Effect.gen(function*() {
            const handle = yield* AgentCluster.session(id)
            for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
              const token = `s${session}-t${turn}-a${attempt}`
              const exit = yield* Stream.runCollect(handle.turn(`P:${token}:P`, { turnId: `${prefix}-${token}` }))
                .pipe(Effect.timeout("120 seconds"), Effect.sandbox, Effect.either)
              if (exit._tag === "Left") {
                // a failure, or a defect of the cluster client when a runner dies: counted, and the turn tried again
                failedAttempts++
                const error = Cause.squash(exit.left)
                const tag = Predicate.hasProperty(error, "_tag") ? String(error._tag) : String(error).slice(0, 80)
                failures.set(tag, (failures.get(tag) ?? 0) + 1)
                continue
              }
              const messages = Chunk.toReadonlyArray(exit.right)
              const results = messages.flatMap((m) => m.type === "result" ? [m] : [])
              if (results.length === 0 && messages.some((m) => m.type === "session_restarted")) {
                cutOff++
                continue
              }
              if (results.length !== 1) {
                problems.push(`${token}: ${results.length} results`)
                return
              }
              const result = results[0]!
              const text = result.type === "result" && "result" in result ? String(result.result) : ""
              const [runner, tokens] = text.split("|")
              acked.push({
                session,
                turn,
                token,
                runner: Number(runner),
                cliSession: result.session_id,
                history: (tokens ?? "").split(" "),
                at: Date.now()
              })
              return yield* maybeKill
            }
            problems.push(`s${session}-t${turn}: no attempt acknowledged`)
          })

        const started = Date.now()
        yield* Effect.forEach(
          Array.from({ length: SESSIONS }, (_, i) => i),
          (session) =>
            Effect.gen(function*() {
              const id = `${prefix}-session-${session}`
              for (let turn = 1; turn <= TURNS; turn++) yield* runTurn(session, turn, id)
              yield* AgentCluster.session(id).pipe(Effect.flatMap((h) => h.close), Effect.ignore)
            }),
          { concurrency: CONCURRENCY, discard: true }
        ).pipe(Effect.provide(context))
        const took = Date.now() - started

        // the kill happened, and the killed runner's CLIs (and their tools) went within the watchdog's bound
        expect(killedAt).toBeDefined()
        while (gone === undefined) yield* Effect.sleep("50 millis")

        // every acknowledged turn once, its answer holding its session's earlier acknowledged turns in order
        const bySession = new Map<number, Array<Acked>>()
        for (const a of acked) bySession.set(a.session, [...(bySession.get(a.session) ?? []), a])
        const wrong: Array<string> = []
        for (const [session, turns] of bySession) {
          turns.sort((a, b) => a.turn - b.turn)
          turns.forEach((t, i) => {
            const seen = t.history.filter((token) => turns.some((u) => u.token === token))
            const expected = turns.slice(0, i + 1).map((u) => u.token)
            if (seen.join(" ") !== expected.join(" ")) wrong.push(`s${session} t${t.turn}: ${t.history.join(" ")}`)
            if (t.history.at(-1) !== t.token) wrong.push(`s${session} t${t.turn}: does not end with its own turn`)
          })
          // the history the CLIs kept: every acknowledged token exactly once, a cut-off one at most once
          const kept = fs.readFileSync(path.join(history, turns[0]!.cliSession), "utf8").split("\n")
            .filter((l) => l !== "")
          for (const token of new Set(kept)) {
            if (kept.filter((k) => k === token).length !== 1) wrong.push(`s${session}: ${token} kept twice`)
          }
        }

        // the killed runner answered some turns before its death; the others took its sessions over (a reply the
        // victim stored just before its death may reach the client after it: no bound on the victim's last answer)
        const onVictim = new Set(acked.filter((a) => a.runner === victim.pid).map((a) => a.session))
        const resumed = acked.filter((a) => onVictim.has(a.session) && a.runner !== victim.pid && a.at > killedAt!)
        const firstResumed = resumed.length === 0 ? Number.NaN : Math.min(...resumed.map((a) => a.at)) - killedAt!
        report("cluster-faults", {
          backend: pgUrl === undefined ? "sqlite" : "postgresql",
          sessions: SESSIONS,
          turns: acked.length,
          wallMs: took,
          turnsPerSecond: Math.round((acked.length / took) * 1000 * 10) / 10,
          killToFirstResumedTurnMs: firstResumed,
          killToCliGoneMs: gone.took ?? Number.NaN,
          victimCliToolsMidTurnAtKill: midTurn,
          cutOffTurns: cutOff,
          failedAttempts,
          failures: [...failures].map(([tag, n]) => `${tag}:${n}`).join(",")
        })
        expect(midTurn).toBeGreaterThan(0)
        expect(onVictim.size).toBeGreaterThan(0)
        expect(resumed.length).toBeGreaterThan(0)
        expect(gone.took).toBeDefined()
        // the bound, with room for a loaded machine (the pass over /proc, here and in the reaper, slows with load)
        expect(gone.took!).toBeLessThan(WATCHDOG_BOUND_MILLIS * 5)
        expect(problems).toEqual([])
        expect(acked).toHaveLength(SESSIONS * TURNS)
        expect(wrong).toEqual([])
      }),
    600_000
  )
})
