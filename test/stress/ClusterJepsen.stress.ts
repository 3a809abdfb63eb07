// Issue 31, item 5: the cluster under faults beyond a clean SIGKILL (test/stress/ClusterFaults.stress.ts), each with
// the checks of test/stress/cluster-scenario.ts, on SQLite and (when ECA_TEST_PG_URL is set) PostgreSQL.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import type { RunnerStorage } from "../../scripts/demo-cluster-processes.js"
import { pauseOutsideWriteLock, processState, runScenario, type ScenarioResult } from "./cluster-scenario.js"
import { report } from "./support.js"

const pgUrl = process.env["ECA_TEST_PG_URL"]
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
          fault: ({ acked, ran, release, runners, slow, storage, waitUntil }) =>
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
              // the other runner takes the victim's sessions over once its leases expire
              const takeover = yield* waitUntil(
                () => acked.some((a) => onVictim.has(a.session) && a.runner !== victim.pid && a.at > pausedAt),
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
