/**
 * Runner processes of a local cluster (scripts/demo-cluster-runner.ts) on 127.0.0.1, and what they record: for
 * npm run demo:cluster and the cluster tests.
 */
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Effect from "effect/Effect"
import type { AgentOptions } from "effect-claude-agent"
import * as Schedule from "effect/Schedule"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

/** What a runner process records: its start, each CLI launch (argv) and each prompt its CLIs took. */
export type RunnerEvent =
  | { readonly pid: number; readonly ready: true }
  | { readonly pid: number; readonly shards: ReadonlyArray<number>; readonly at?: number }
  | { readonly pid: number; readonly launch: ReadonlyArray<string> }
  | { readonly pid: number; readonly session: string; readonly prompt: string }
  | { readonly pid: number; readonly stoppedMs: number; readonly sigkilled: boolean }

/** Fast failure detection for tests: a dead runner is noticed in a few seconds, not a minute. */
export const clusterTiming: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  shardsPerGroup: 30,
  entityMessagePollInterval: 300,
  entityReplyPollInterval: 100,
  refreshAssignmentsInterval: 500,
  runnerHealthCheckInterval: 1000,
  shardLockRefreshInterval: 1000,
  shardLockExpiration: 4000,
  entityTerminationTimeout: 1000
}

/** A free TCP port on 127.0.0.1. */
export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The events recorded in `log` so far. */
export const events = (log: string): Effect.Effect<ReadonlyArray<RunnerEvent>> =>
  Effect.sync(() =>
    fs.existsSync(log)
      ? fs.readFileSync(log, "utf8").split("\n").filter((line) => line !== "").map((line) =>
        JSON.parse(line) as RunnerEvent
      )
      : []
  )

/** Waits (polling `log`, bounded) until `found` holds of its events. */
export const waitFor = (
  log: string,
  found: (events: ReadonlyArray<RunnerEvent>) => boolean,
  what: string,
  /** How many tenths of a second to wait. */
  times = 600
) =>
  events(log).pipe(
    Effect.filterOrFail(found, () => new Error(`waited in vain for ${what}`)),
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times })
  )

/** The shards each runner holds last, by pid. */
export const shardsHeld = (es: ReadonlyArray<RunnerEvent>): ReadonlyMap<number, ReadonlyArray<number>> => {
  const held = new Map<number, ReadonlyArray<number>>()
  for (const e of es) if ("shards" in e) held.set(e.pid, e.shards)
  return held
}

/** Which of the runners `pids` holds `shard` (by their last events), if one does. */
export const holderOf = (es: ReadonlyArray<RunnerEvent>, shard: number, pids: Iterable<number>): number | undefined =>
  [...pids].find((pid) => shardsHeld(es).get(pid)?.includes(shard) === true)

/** Waits until the runners `pids` hold every shard between them, each some. */
export const waitForBalance = (log: string, pids: ReadonlyArray<number>) =>
  waitFor(log, (es) => {
    const held = shardsHeld(es)
    const counts = pids.map((pid) => held.get(pid)?.length ?? 0)
    return counts.every((n) => n > 0) && counts.reduce((a, b) => a + b, 0) === clusterTiming.shardsPerGroup
  }, `runners ${pids.join(", ")} to share the shards`)

/** Where the runner's storage is. */
export type RunnerStorage = { readonly pgUrl: string } | { readonly sqlite: string }

/**
 * A runner process, started and ready (bounded); stopped with the scope (SIGTERM, then SIGKILL after 10 s), and
 * waited for, unless the test killed it already. Its stderr goes to `<log>.<port>.err`.
 */
export const spawnRunner = (options: {
  readonly storage: RunnerStorage
  readonly prefix: string
  readonly log: string
  /** The sessions' options (JSON): the runner runs the real CLI. Without: scripted CLIs in the runner. */
  readonly options?: AgentOptions.Options | undefined
}) =>
  Effect.gen(function*() {
    const port = yield* freePort
    const stderr = fs.openSync(`${options.log}.${port}.err`, "a")
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        cp.spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "demo-cluster-runner.ts")], {
          cwd: path.join(import.meta.dirname, ".."),
          env: {
            ...process.env,
            ECA_RUNNER_LOG: options.log,
            ECA_RUNNER_PORT: String(port),
            ECA_RUNNER_PREFIX: options.prefix,
            ...("pgUrl" in options.storage
              ? { ECA_RUNNER_PG_URL: options.storage.pgUrl }
              : { ECA_RUNNER_SQLITE: options.storage.sqlite }),
            ...(options.options !== undefined ? { ECA_RUNNER_OPTIONS: JSON.stringify(options.options) } : {})
          },
          stdio: ["ignore", "ignore", stderr]
        })
      ),
      (child) =>
        Effect.async<void>((resume) => {
          fs.closeSync(stderr)
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          const at = Date.now()
          let sigkilled = false
          const force = setTimeout(() => {
            sigkilled = true
            child.kill("SIGKILL")
          }, 10_000)
          child.once("exit", () => {
            clearTimeout(force)
            const event: RunnerEvent = { pid: child.pid ?? 0, stoppedMs: Date.now() - at, sigkilled }
            fs.appendFileSync(options.log, JSON.stringify(event) + "\n")
            resume(Effect.void)
          })
          child.kill("SIGTERM")
        })
    )
    const pid = child.pid ?? 0
    // a runner's start (tsx compiling the sources, then the storage's tables) takes minutes on a loaded machine
    yield* waitFor(options.log, (es) => es.some((e) => e.pid === pid && "ready" in e), `runner ${pid} to start`, 3_000)
    /** SIGKILLs the runner and waits for its exit. */
    const kill = Effect.async<void>((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      child.once("exit", () => resume(Effect.void))
      child.kill("SIGKILL")
    })
    return { pid, port, kill }
  })
