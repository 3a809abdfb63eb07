// Issue 31, item 5: the cluster under faults beyond a clean SIGKILL (test/stress/ClusterFaults.stress.ts), each with
// the checks of test/stress/cluster-scenario.ts, on SQLite and (when ECA_TEST_PG_URL is set) PostgreSQL.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { RunnerStorage } from "../../scripts/demo-cluster-processes.js"
import {
  partition,
  pauseOutsideWriteLock,
  processState,
  runScenario,
  type ScenarioResult,
  sqliteIntegrity
} from "./cluster-scenario.js"
import { report } from "./support.js"

const pgUrl = process.env["ECA_TEST_PG_URL"]
/** A shell command restarting that server (.ci/postgres sets it with ECA_TEST_PG_URL). */
const pgRestart = process.env["ECA_TEST_PG_RESTART"]
const SESSIONS = Number(process.env["ECA_STRESS_JEPSEN_SESSIONS"] ?? "24")
const CONCURRENCY = 12

const backends: ReadonlyArray<{ readonly name: string; readonly storage: (dir: string) => RunnerStorage }> = [
  { name: "SQLite", storage: (dir) => ({ sqlite: path.join(dir, "cluster.db") }) },
  ...(pgUrl === undefined ? [] : [{ name: "PostgreSQL", storage: (): RunnerStorage => ({ pgUrl }) }])
]

const check = (result: ScenarioResult) => {
  expect(result.problems).toEqual([])
  expect(result.wrong).toEqual([])
  expect(result.acked).toHaveLength(result.expected)
  expect(result.leftovers).toEqual([])
}

describe.each(backends)("the cluster under faults ($name)", ({ name, storage }) => {
  it.scopedLive(
    `(a) a runner SIGSTOPped past its shard lease, its sessions taken over, then SIGCONTed: it answers, appends and runs nothing more for them`,
    () =>
      Effect.gen(function*() {
        const stale: Array<string> = []
        const result = yield* runScenario({
          name: "sigstop",
          storage,
          runners: 2,
          sessions: SESSIONS,
          turns: 3,
          concurrency: CONCURRENCY,
          faultAt: 0.3,
          fault: ({ acked, ran, release, restarted, runners, slow, storage, waitUntil }) =>
            Effect.gen(function*() {
              const victim = runners[0]!
              // the victim's CLIs are mid-turn (in a long tool) when it is paused
              slow(victim.index)
              yield* waitUntil(() => victim.longTools().length > 0, 20_000)
              yield* Effect.sleep("200 millis")
              const midTurn = victim.longTools().length
              const clis = victim.clis()
              const onVictim = new Set(acked.filter((a) => a.runner === victim.pid).map((a) => a.session))
              const pauses = yield* pauseOutsideWriteLock(victim.pid, storage)
              const pausedAt = Date.now()
              // the other runner takes the victim's sessions over once its leases expire: a session the victim
              // answered before answers from it, or a turn the victim had in flight is cut off by the restart there
              // (the only evidence when the victim's other sessions had no turn left)
              const takeover = yield* waitUntil(
                () =>
                  acked.some((a) => onVictim.has(a.session) && a.runner !== victim.pid && a.at > pausedAt) ||
                  restarted.some((r) => r.at > pausedAt),
                60_000
              )
              // the paused runner's CLIs finish their turns meanwhile: what they answer and write reaches it only
              // once it resumes, when the sessions are another runner's
              const before = ran().length
              slow(victim.index, false)
              release()
              yield* waitUntil(() => victim.longTools().length === 0, 10_000)
              yield* Effect.sleep("500 millis")
              stale.push(...ran().slice(before).filter((r) => r.runner === victim.pid).map((r) => r.token))
              const pausedMs = Date.now() - pausedAt
              process.kill(victim.pid, "SIGCONT")
              const gone = yield* waitUntil(
                () => clis.every((pid) => processState(pid) === undefined || processState(pid) === "Z"),
                15_000
              )
              return {
                victimToolsMidTurnAtPause: midTurn,
                pauses,
                pauseToFirstTakenOverTurnMs: takeover ?? Number.NaN,
                pausedMs,
                turnsRunDuringPause: stale.length,
                resumeToCliGoneMs: gone ?? Number.NaN
              }
            })
        })
        // what the paused runner's CLIs did during the pause was neither answered nor appended
        const staleAnswers = result.acked.filter((a) => stale.includes(a.token)).map((a) => a.token)
        const staleAppends = [...result.stored.values()].flat().filter((token) => stale.includes(token))
        report(`cluster-jepsen-sigstop-${name.toLowerCase()}`, {
          ...result.figures,
          staleAnswers: staleAnswers.length,
          staleAppends: staleAppends.length
        })
        expect(result.figures["victimToolsMidTurnAtPause"]).toBeGreaterThan(0)
        expect(result.figures["pauseToFirstTakenOverTurnMs"]).not.toBeNaN()
        expect(result.figures["turnsRunDuringPause"]).toBeGreaterThan(0)
        expect(result.figures["resumeToCliGoneMs"]).toBeLessThan(5_000)
        expect(staleAnswers).toEqual([])
        expect(staleAppends).toEqual([])
        check(result)
      }),
    600_000
  )
})

/** Time from `from` to the first turn acknowledged after it, in `acked` (bounded wait). */
const firstAckAfter = (
  acked: ReadonlyArray<{ readonly at: number }>,
  from: number,
  waitUntil: (f: () => boolean, boundMillis: number) => Effect.Effect<number | undefined>
) =>
  Effect.map(
    waitUntil(() => acked.some((a) => a.at > from), 60_000),
    (waited) =>
      waited === undefined ? Number.NaN : Math.min(...acked.filter((a) => a.at > from).map((a) => a.at)) - from
  )

/**
 * Holds the write lock of SQLite database `db` for `millis` from a process of its own (test/stress/hold-sqlite-lock.mjs):
 * when it took it and when it released it, by its clock (this process, stalled by the lock, may learn of them late).
 */
const holdSqliteLock = (db: string, millis: number) =>
  Effect.async<{ readonly lockedAt: number; readonly releasedAt: number }, Error>((resume) => {
    const child = cp.spawn(process.execPath, [
      path.join(import.meta.dirname, "hold-sqlite-lock.mjs"),
      db,
      String(millis)
    ], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.on("close", (code) => {
      const at = (word: string) => Number(new RegExp(`${word} (\\d+)`).exec(output)?.[1])
      const lockedAt = at("locked")
      const releasedAt = at("released")
      resume(
        code === 0 && !Number.isNaN(lockedAt) && !Number.isNaN(releasedAt)
          ? Effect.succeed({ lockedAt, releasedAt })
          : Effect.fail(new Error(`hold-sqlite-lock exited with ${code}: ${output}`))
      )
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const shell = (command: string) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) =>
      cp.execFile("sh", ["-c", command], (error) => error === null ? resolve() : reject(error))
    )
  )

describe.each(pgUrl === undefined || pgRestart === undefined ? [] : [{ pgUrl, pgRestart }])(
  "the cluster under faults (PostgreSQL)",
  ({ pgRestart, pgUrl }) => {
    it.scopedLive(
      "(b) PostgreSQL restarted mid-run (pg_ctl restart -m immediate): the runners reconnect; each turn in flight completes once or ends with session_restarted",
      () =>
        Effect.gen(function*() {
          const result = yield* runScenario({
            name: "pg-restart",
            storage: () => ({ pgUrl }),
            runners: 2,
            sessions: SESSIONS,
            turns: 3,
            concurrency: CONCURRENCY,
            faultAt: 0.3,
            fault: ({ acked, release, runners, slow, waitUntil }) =>
              Effect.gen(function*() {
                // turns in flight on both runners (in a long tool) when the server goes down
                for (const r of runners) slow(r.index)
                yield* waitUntil(() => runners.every((r) => r.longTools().length > 0), 20_000)
                const inFlight = runners.reduce((n, r) => n + r.longTools().length, 0)
                const at = Date.now()
                yield* shell(pgRestart)
                const restartedAt = Date.now()
                for (const r of runners) slow(r.index, false)
                release()
                return {
                  turnsInFlightAtRestart: inFlight,
                  restartMs: restartedAt - at,
                  restartToFirstTurnMs: yield* firstAckAfter(acked, restartedAt, waitUntil)
                }
              })
          })
          report("cluster-jepsen-pg-restart", result.figures)
          expect(result.figures["turnsInFlightAtRestart"]).toBeGreaterThan(0)
          expect(result.figures["restartToFirstTurnMs"]).not.toBeNaN()
          check(result)
        }),
      600_000
    )

    it.scopedLive(
      "(d) a runner cut off from PostgreSQL (not from its CLIs): its CLIs are ended once its lease lapses, the other runner takes its sessions over, it answers nothing during the cut, and rejoins once healed",
      () =>
        Effect.gen(function*() {
          const url = new URL(pgUrl)
          const link = yield* partition({ host: url.hostname, port: Number(url.port) })
          const viaLink = new URL(pgUrl)
          viaLink.port = String(link.port)
          let window: { readonly from: number; readonly to: number; readonly victim: number } | undefined
          const result = yield* runScenario({
            name: "partition",
            storage: () => ({ pgUrl }),
            runnerStorage: (index) => Effect.succeed({ pgUrl: index === 0 ? viaLink.toString() : pgUrl }),
            runners: 2,
            sessions: SESSIONS,
            turns: 3,
            concurrency: CONCURRENCY,
            faultAt: 0.3,
            fault: ({ acked, release, restarted, runners, slow, waitUntil }) =>
              Effect.gen(function*() {
                const victim = runners[0]!
                slow(victim.index)
                yield* waitUntil(() => victim.longTools().length > 0, 20_000)
                yield* Effect.sleep("200 millis")
                const midTurn = victim.longTools().length
                const clis = victim.clis()
                const onVictim = new Set(acked.filter((a) => a.runner === victim.pid).map((a) => a.session))
                const cutAt = Date.now()
                link.cut()
                // fencing: the runner ends its CLIs once its lease lapses, though it cannot reach the database
                const gone = yield* waitUntil(
                  () => clis.every((pid) => processState(pid) === undefined || processState(pid) === "Z"),
                  20_000
                )
                // the other runner takes the cut-off runner's sessions over: a session the cut-off runner answered before
                // answers from it, or a turn in flight at the cut is cut off by the restart there (the only evidence when
                // the cut-off runner's other sessions had no turn left, their last one ended by the next owner)
                const takeover = yield* waitUntil(
                  () =>
                    acked.some((a) => onVictim.has(a.session) && a.runner !== victim.pid && a.at > cutAt) ||
                    restarted.some((r) => r.at > cutAt),
                  60_000
                )
                slow(victim.index, false)
                release()
                // the cut lasts a while after the takeover: the cut-off runner keeps running meanwhile
                yield* Effect.sleep("3 seconds")
                const healAt = Date.now()
                window = { from: cutAt + 5_000, to: healAt, victim: victim.pid }
                link.heal()
                return {
                  victimToolsMidTurnAtCut: midTurn,
                  cutToCliGoneMs: gone ?? Number.NaN,
                  cutToFirstTakenOverTurnMs: takeover ?? Number.NaN,
                  cutMs: healAt - cutAt
                }
              })
          })
          // answers of the cut-off runner that reached the caller once its lease had lapsed, before the heal. By when
          // the result arrived, not when the turn ended: a result the cut-off runner stored just before the cut is
          // followed by the turn's end only once the next owner of the session has written it (answering the turn,
          // whose end the cut-off runner could not record, as cut off), seconds into the cut
          const w = window
          const fromVictim = w === undefined ? [] : result.acked.filter((a) => a.runner === w.victim)
          const staleAnswers = w === undefined
            ? []
            : fromVictim.filter((a) => a.resultAt > w.from && a.resultAt < w.to).map((a) => a.token)
          const endedByNextOwner = w === undefined
            ? 0
            : fromVictim.filter((a) => a.resultAt < w.from && a.at > w.from).length
          report("cluster-jepsen-partition-postgresql", {
            ...result.figures,
            staleAnswers: staleAnswers.length,
            victimAnswersEndedInCut: endedByNextOwner,
            victimAnswersEndedAsCutOff: fromVictim.filter((a) => a.restartedAfterResult).length
          })
          expect(result.figures["victimToolsMidTurnAtCut"]).toBeGreaterThan(0)
          expect(result.figures["cutToCliGoneMs"]).toBeLessThan(10_000)
          expect(result.figures["cutToFirstTakenOverTurnMs"]).not.toBeNaN()
          expect(staleAnswers).toEqual([])
          check(result)
        }),
      600_000
    )
  }
)

describe("the cluster under faults (SQLite)", () => {
  it.scopedLive(
    "(c) SQLite locked by another process past the shard lease: typed errors while it lasts, no corruption, recovery once it is released",
    () =>
      Effect.gen(function*() {
        const result = yield* runScenario({
          name: "sqlite-locked",
          storage: (dir) => ({ sqlite: path.join(dir, "cluster.db") }),
          runners: 2,
          sessions: SESSIONS,
          turns: 3,
          concurrency: CONCURRENCY,
          faultAt: 0.3,
          fault: ({ acked, storage, waitUntil }) =>
            Effect.gen(function*() {
              // another process takes the write lock (BEGIN EXCLUSIVE, retried while a runner writes) and holds it for
              // twice the shard lease (not this one: its cluster client, waiting for the lock synchronously, would stall
              // the fiber that releases it)
              const { lockedAt, releasedAt } = yield* holdSqliteLock(
                "sqlite" in storage ? storage.sqlite : "",
                8_000
              )
              return {
                lockedMs: releasedAt - lockedAt,
                releaseToFirstTurnMs: yield* firstAckAfter(acked, releasedAt, waitUntil)
              }
            }).pipe(Effect.orDie)
        })
        const integrity = yield* sqliteIntegrity(path.join(result.dir, "cluster.db"))
        report("cluster-jepsen-sqlite-locked", { ...result.figures, integrity: integrity.join(",") })
        expect(result.figures["releaseToFirstTurnMs"]).not.toBeNaN()
        expect(integrity).toEqual(["ok"])
        check(result)
      }),
    600_000
  )

  // the database on a tmpfs of its own: mounting one needs root, as in CI
  it.scopedLive.skipIf(process.getuid?.() !== 0)(
    "(c) SQLite's disk full (a tmpfs filled up): typed errors while it lasts, no corruption, recovery once space returns",
    () =>
      Effect.gen(function*() {
        // the database on a file system of its own, filled up by the fault (mounting needs root, as in CI)
        const disk = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const at = fs.mkdtempSync(path.join(os.tmpdir(), "eca-jepsen-disk-"))
            cp.execFileSync("mount", ["-t", "tmpfs", "-o", "size=64m", "tmpfs", at])
            return at
          }),
          (at) =>
            Effect.sync(() => {
              cp.execFileSync("umount", ["-l", at])
              fs.rmSync(at, { recursive: true, force: true })
            })
        )
        const db = path.join(disk, "cluster.db")
        const filler = path.join(disk, "filler")
        const result = yield* runScenario({
          name: "sqlite-disk-full",
          storage: () => ({ sqlite: db }),
          runners: 2,
          sessions: SESSIONS,
          turns: 3,
          concurrency: CONCURRENCY,
          faultAt: 0.3,
          fault: ({ acked, waitUntil }) =>
            Effect.gen(function*() {
              const filledAt = Date.now()
              yield* Effect.sync(() => {
                const fd = fs.openSync(filler, "w")
                try {
                  for (const size of [1 << 20, 4096, 1]) {
                    const chunk = Buffer.alloc(size)
                    try {
                      while (true) fs.writeSync(fd, chunk)
                    } catch {
                      // ENOSPC: the next, smaller size
                    }
                  }
                } finally {
                  fs.closeSync(fd)
                }
              })
              yield* Effect.sleep("8 seconds")
              yield* Effect.sync(() => fs.rmSync(filler))
              const freedAt = Date.now()
              return {
                fullMs: freedAt - filledAt,
                freedToFirstTurnMs: yield* firstAckAfter(acked, freedAt, waitUntil)
              }
            })
        })
        const integrity = yield* sqliteIntegrity(db)
        report("cluster-jepsen-sqlite-disk-full", { ...result.figures, integrity: integrity.join(",") })
        expect(result.figures["freedToFirstTurnMs"]).not.toBeNaN()
        expect(integrity).toEqual(["ok"])
        check(result)
      }),
    600_000
  )
})
