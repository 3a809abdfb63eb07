/**
 * One fault scenario of the cluster (test/stress/ClusterJepsen.stress.ts): runner processes
 * (scripts/demo-cluster-runner.ts, `AgentCluster.layerSocket`) on one SQL database, each with a CLI config dir of its
 * own (as on separate machines: a session moves between runners only through the transcript store), running
 * test/stress/transcript-cli.sh; a client process (this one) running `sessions × turns` turns; a fault injected once
 * a share of the turns is acknowledged; then the checks of the runner-kill test, on the transcript store:
 *
 * - every turn acknowledged exactly once (a turn cut off by the fault is tried again under a new token);
 * - each answer's history (the transcript the CLI had) holds its session's earlier acknowledged turns in order, and
 *   is a prefix of the session's transcript in the store (nothing was appended to the store behind a CLI's back);
 *   the store holds, at the end, exactly the history of the session's last answer (nothing appended after it);
 * - no token run twice (the CLIs' own log of the turns they ran, whatever reached the store);
 * - no CLI of the runners left once they have stopped.
 */
import type * as Sharding from "@effect/cluster/Sharding"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AgentCluster } from "effect-claude-agent/cluster"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import {
  clusterTiming,
  events,
  type RunnerStorage,
  spawnRunner,
  waitForBalance
} from "../../scripts/demo-cluster-processes.js"
import { withEnv } from "../support/process.js"

const CLI = path.join(import.meta.dirname, "transcript-cli.sh")
const ATTEMPTS = 6

/** The SQL client of a storage (the client's, or the test's own reads). */
export const sqlLayer = (storage: RunnerStorage): Layer.Layer<SqlClient.SqlClient> =>
  "pgUrl" in storage
    ? Layer.orDie(PgClient.layer({ url: Redacted.make(storage.pgUrl) }))
    : Layer.orDie(SqliteClient.layer({ filename: storage.sqlite }))

/** A runner process of the scenario. */
export interface Runner {
  readonly index: number
  readonly pid: number
  readonly port: number
  readonly kill: Effect.Effect<void>
  /** Its CLIs and their tools (live processes). */
  readonly clis: () => ReadonlyArray<number>
  /** Its CLIs' processes in a long (120 s) tool. */
  readonly longTools: () => ReadonlyArray<number>
}

/**
 * Whether process `pid` holds the write lock of the SQLite database `db` (WAL mode: byte 120 of `<db>-shm`, as
 * /proc/locks shows it). A process paused while it holds it stalls every other writer of the file until it resumes.
 */
export const holdsSqliteWriteLock = (pid: number, db: string): boolean => {
  let inode: number
  try {
    inode = fs.statSync(`${db}-shm`).ino
  } catch {
    return false
  }
  return fs.readFileSync("/proc/locks", "utf8").split("\n").some((line) => {
    const fields = line.trim().split(/\s+/)
    // 1: POSIX  ADVISORY  WRITE 7169 fd:01:1234567 120 120
    return fields[3] === "WRITE" && fields[4] === String(pid) && fields[5]?.endsWith(`:${inode}`) === true &&
      fields[6] === "120"
  })
}

/** An acknowledged turn. */
export interface Acked {
  readonly session: number
  readonly turn: number
  readonly token: string
  readonly runner: number
  readonly cliSession: string
  readonly history: ReadonlyArray<string>
  /** When the turn ended (its final reply reached the caller). */
  readonly at: number
  /**
   * When its `result` reached the caller: a turn whose result was stored before a fault may end only once the session's
   * next owner has written its end (answering it as cut off, after the result), well after the fault.
   */
  readonly resultAt: number
  /** Whether a `session_restarted` followed its `result` (its end written by the session's next owner). */
  readonly restartedAfterResult: boolean
}

/** What a fault sees of the run. */
export interface FaultContext {
  readonly dir: string
  readonly storage: RunnerStorage
  readonly runners: ReadonlyArray<Runner>
  readonly acked: ReadonlyArray<Acked>
  /** The turns cut off by a session restarted elsewhere (`session_restarted`, no result): which session, and when. */
  readonly restarted: ReadonlyArray<{ readonly session: number; readonly at: number }>
  /**
   * Makes runner `index`'s CLIs run long tools from their next turn on (`false`: short ones again): 120 s, or until
   * `release` is called.
   */
  readonly slow: (index: number, on?: boolean) => void
  /** Ends the long tools now running (they finish their turns). */
  readonly release: () => void
  /** The turns the CLIs ran so far (`ran <runner pid> <session id> <token>`), in order. */
  readonly ran: () => ReadonlyArray<{ readonly runner: number; readonly token: string }>
  /** Waits (bounded) until `f` holds, polling; the time it took, or `undefined` past the bound. */
  readonly waitUntil: (f: () => boolean, boundMillis: number) => Effect.Effect<number | undefined>
}

export interface ScenarioOptions {
  readonly name: string
  /** The cluster's database (`dir` is the scenario's temporary directory). */
  readonly storage: (dir: string) => RunnerStorage
  /** The database each runner uses (default: `storage`), e.g. a proxy in front of it. */
  readonly runnerStorage?: (index: number, dir: string) => Effect.Effect<RunnerStorage, never, Scope.Scope>
  readonly runners: number
  readonly sessions: number
  readonly turns: number
  readonly concurrency: number
  /** The fault comes once this share of the turns is acknowledged. */
  readonly faultAt: number
  /** Runs once, forked; the checks wait for it. Returns the scenario's own figures. */
  readonly fault: (context: FaultContext) => Effect.Effect<Record<string, number | string>>
}

export interface ScenarioResult {
  /** The scenario's temporary directory (removed with the scope). */
  readonly dir: string
  readonly figures: Record<string, number | string>
  readonly problems: ReadonlyArray<string>
  readonly wrong: ReadonlyArray<string>
  readonly acked: ReadonlyArray<Acked>
  /** Each session's transcript in the store at the end: its tokens. */
  readonly stored: ReadonlyMap<number, ReadonlyArray<string>>
  readonly expected: number
  readonly leftovers: ReadonlyArray<number>
}

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/** A process state letter from /proc (`T`: stopped), or `undefined` when it is gone. */
export const processState = (pid: number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  } catch {
    return undefined
  }
}

/**
 * SIGSTOPs `pid`. On SQLite, a runner paused while it holds the database's write lock stalls every runner (SQLite's
 * lock is not a lease): it is resumed at once and paused again a little later, until it is paused without it. Returns
 * how many pauses that took.
 */
export const pauseOutsideWriteLock = (pid: number, storage: RunnerStorage) =>
  Effect.promise(async () => {
    for (let attempt = 1; attempt <= 500; attempt++) {
      process.kill(pid, "SIGSTOP")
      while (processState(pid) !== "T") await sleep(1)
      if (!("sqlite" in storage) || !holdsSqliteWriteLock(pid, storage.sqlite)) return attempt
      process.kill(pid, "SIGCONT")
      await sleep(10 + Math.floor(Math.random() * 40))
    }
    throw new Error(`runner ${pid} held the SQLite write lock at each of 500 pauses`)
  })

/** The tokens of a transcript in the store, in order. */
const storedTokens = (sql: SqlClient.SqlClient, sessionId: string) =>
  sql<{ readonly entry: string }>`SELECT entry FROM claude_transcript_entries
    WHERE session_id = ${sessionId} AND subpath = '' ORDER BY seq`.pipe(
    Effect.map((rows) =>
      rows.flatMap((r) => {
        const entry: unknown = JSON.parse(r.entry)
        return Predicate.hasProperty(entry, "token") && typeof entry.token === "string" ? [entry.token] : []
      })
    )
  )

export const runScenario = (options: ScenarioOptions) =>
  Effect.gen(function*() {
    const dump = process.env["ECA_STRESS_DUMP"]
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-jepsen-"))),
      // ECA_STRESS_DUMP=<file>: the directory is kept, for the runners' logs, and the run's progress is written there
      (dir) => dump === undefined ? Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })) : Effect.void
    )
    const work = path.join(dir, "work")
    fs.mkdirSync(work)
    const project = fs.realpathSync(work).replace(/[^a-zA-Z0-9]/g, "-")
    const eventsFile = path.join(dir, "ran.log")
    fs.writeFileSync(eventsFile, "")
    const log = path.join(dir, "events.jsonl")
    const prefix = `jp${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`
    const storage = options.storage(dir)
    const releaseFile = path.join(dir, "release")
    const readRan = () =>
      fs.readFileSync(eventsFile, "utf8").split("\n").filter((l) => l !== "").map((l) => l.split(" "))
    const flags = Array.from({ length: options.runners }, (_, i) => path.join(dir, `slow-${i}`))

    // every process the runners started ends with the scenario, whatever happened to the runners
    const ours = () => withEnv("ECA_STRESS_EVENTS", eventsFile)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const pid of ours()) {
          try {
            process.kill(pid, "SIGKILL")
          } catch {
            // gone
          }
        }
      })
    )

    const runners: Array<Runner> = []
    // runners are stopped (SIGTERM) before the check of what they leave: a scope of their own
    const runnersScope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(runnersScope, Exit.void))
    for (let index = 0; index < options.runners; index++) {
      const spawned = yield* spawnRunner({
        storage: options.runnerStorage === undefined ? storage : yield* options.runnerStorage(index, dir),
        prefix,
        log,
        options: {
          pathToClaudeCodeExecutable: CLI,
          cwd: work,
          env: {
            CLAUDE_CONFIG_DIR: path.join(dir, `config-${index}`),
            ECA_STRESS_PROJECT: project,
            ECA_STRESS_EVENTS: eventsFile,
            ECA_STRESS_TOOL_SECONDS: "0.05",
            ECA_STRESS_SLOW_FLAG: flags[index]!,
            ECA_STRESS_RELEASE: releaseFile
          }
        }
      }).pipe(Scope.extend(runnersScope))
      // its CLIs and their tools: the processes with its port and the CLIs' own variables (not itself, not its watchdog)
      const clis = () => {
        const cliProcesses = new Set(ours())
        return withEnv("ECA_RUNNER_PORT", String(spawned.port)).filter((pid) => cliProcesses.has(pid))
      }
      runners.push({
        index,
        ...spawned,
        clis,
        longTools: () =>
          clis().filter((pid) => {
            try {
              return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1") === "sleep\u0000120\u0000"
            } catch {
              return false
            }
          })
      })
    }
    yield* waitForBalance(log, runners.map((r) => r.pid))

    const clientSql = sqlLayer(storage)
    const client: Layer.Layer<AgentCluster.AgentCluster | Sharding.Sharding | SqlClient.SqlClient> = AgentCluster
      .layerSocketClient({ prefix, shardingConfig: clusterTiming })
      .pipe(Layer.provideMerge(clientSql))
    const context = yield* Layer.build(client)

    const acked: Array<Acked> = []
    const restarted: Array<{ readonly session: number; readonly at: number }> = []
    const problems: Array<string> = []
    let cutOff = 0
    let failedAttempts = 0
    const failures = new Map<string, number>()
    const faultWhen = Math.floor(options.sessions * options.turns * options.faultAt)
    let faultFigures: Record<string, number | string> | undefined
    let faultStarted = false

    const faultContext: FaultContext = {
      dir,
      storage,
      runners,
      acked,
      restarted,
      slow: (index, on = true) => on ? fs.writeFileSync(flags[index]!, "") : fs.rmSync(flags[index]!, { force: true }),
      release: () => fs.writeFileSync(releaseFile, ""),
      ran: () => readRan().map(([, runner, , token]) => ({ runner: Number(runner), token: token! })),
      waitUntil: (f, boundMillis) =>
        Effect.promise(async () => {
          const started = Date.now()
          while (Date.now() - started < boundMillis) {
            if (f()) return Date.now() - started
            await sleep(20)
          }
          return undefined
        })
    }
    const maybeFault = Effect.suspend(() => {
      if (faultStarted || acked.length < faultWhen) return Effect.void
      faultStarted = true
      return options.fault(faultContext).pipe(
        Effect.tap((figures) =>
          Effect.sync(() => {
            faultFigures = figures
          })
        ),
        Effect.catchAllCause((cause) =>
          Effect.sync(() => {
            faultFigures = { faultFailed: Cause.pretty(cause).slice(0, 300) }
          })
        ),
        Effect.forkIn(runnersScope),
        Effect.asVoid
      )
    })

    const runTurn = (session: number, turn: number, id: string) =>
      Effect.gen(function*() {
        const handle = yield* AgentCluster.session(id)
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          const token = `s${session}-t${turn}-a${attempt}`
          let resultAt = Number.NaN
          const exit = yield* Stream.runCollect(
            handle.turn(`P:${token}:P`, { turnId: `${prefix}-${token}` }).pipe(
              Stream.tap((m) =>
                Effect.sync(() => {
                  if (m.type === "result") resultAt = Date.now()
                })
              )
            )
          ).pipe(Effect.timeout("90 seconds"), Effect.sandbox, Effect.either)
          if (exit._tag === "Left") {
            failedAttempts++
            const error = Cause.squash(exit.left)
            const tag = Predicate.hasProperty(error, "_tag") ? String(error._tag) : String(error).slice(0, 80)
            const reason = Predicate.hasProperty(error, "reason") ? `/${String(error.reason)}` : ""
            failures.set(tag + reason, (failures.get(tag + reason) ?? 0) + 1)
            // as a caller would, not at once and longer each time: a fault that fails every send (a full disk, 8 s)
            // lasts longer than the attempts would without a pause, and the runners take a few seconds more to
            // acquire their shards again (6 attempts 2 s apart ran out once, the last one refused by the lock
            // contention after the disk had space again)
            yield* Effect.sleep(`${Math.min(2 * (attempt + 1), 8)} seconds`)
            continue
          }
          const messages = Chunk.toReadonlyArray(exit.right)
          const results = messages.flatMap((m) => m.type === "result" ? [m] : [])
          if (results.length === 0 && messages.some((m) => m.type === "session_restarted")) {
            cutOff++
            restarted.push({ session, at: Date.now() })
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
            at: Date.now(),
            resultAt,
            restartedAfterResult: messages.slice(messages.indexOf(result)).some((m) => m.type === "session_restarted")
          })
          return yield* maybeFault
        }
        problems.push(`s${session}-t${turn}: no attempt acknowledged`)
      })

    const started = Date.now()
    if (dump !== undefined) {
      yield* Effect.sync(() =>
        fs.writeFileSync(
          dump,
          JSON.stringify({ dir, runners: runners.map((r) => r.pid), started, acked, failures: [...failures] })
        )
      ).pipe(Effect.delay("2 seconds"), Effect.forever, Effect.forkScoped)
    }
    yield* Effect.forEach(
      Array.from({ length: options.sessions }, (_, i) => i),
      (session) =>
        Effect.gen(function*() {
          const id = `${prefix}-session-${session}`
          for (let turn = 1; turn <= options.turns; turn++) yield* runTurn(session, turn, id)
        }),
      { concurrency: options.concurrency, discard: true }
    ).pipe(Effect.provide(context))
    const took = Date.now() - started
    if (!faultStarted) problems.push("the fault never came")
    while (faultStarted && faultFigures === undefined) yield* Effect.sleep("100 millis")

    // the checks: each answer against its session's acknowledged turns and the store
    const sql = yield* Effect.provide(SqlClient.SqlClient, context)
    const bySession = new Map<number, Array<Acked>>()
    for (const a of acked) bySession.set(a.session, [...(bySession.get(a.session) ?? []), a])
    const wrong: Array<string> = []
    const stored = new Map<number, ReadonlyArray<string>>()
    for (const [session, turns] of bySession) {
      turns.sort((a, b) => a.turn - b.turn)
      stored.set(session, yield* storedTokens(sql, turns[0]!.cliSession))
      turns.forEach((t, i) => {
        const seen = t.history.filter((token) => turns.some((u) => u.token === token))
        const expected = turns.slice(0, i + 1).map((u) => u.token)
        if (seen.join(" ") !== expected.join(" ")) wrong.push(`s${session} t${t.turn}: ${t.history.join(" ")}`)
        if (t.history.at(-1) !== t.token) wrong.push(`s${session} t${t.turn}: does not end with its own turn`)
        const kept = stored.get(session)!
        if (kept.slice(0, t.history.length).join(" ") !== t.history.join(" ")) {
          wrong.push(`s${session} t${t.turn}: saw ${t.history.join(" ")}, the store has ${kept.join(" ")}`)
        }
      })
      const last = turns.at(-1)!
      const kept = stored.get(session)!
      if (turns.length === options.turns && kept.join(" ") !== last.history.join(" ")) {
        wrong.push(`s${session}: the store has ${kept.join(" ")} after the last answer ${last.history.join(" ")}`)
      }
    }
    const ran = readRan()
    const runs = new Map<string, number>()
    for (const [, , , token] of ran) runs.set(token!, (runs.get(token!) ?? 0) + 1)
    for (const [token, n] of runs) if (n > 1) wrong.push(`${token} ran ${n} times`)

    // the runners stop (SIGTERM); nothing of theirs is left
    yield* Scope.close(runnersScope, Exit.void)
    const leftovers = ours()
    const stops = (yield* events(log)).flatMap((e) => "stoppedMs" in e ? [e] : [])

    const figures: Record<string, number | string> = {
      backend: "pgUrl" in storage ? "postgresql" : "sqlite",
      sessions: options.sessions,
      turns: acked.length,
      wallMs: took,
      turnsPerSecond: Math.round((acked.length / took) * 1000 * 10) / 10,
      cutOffTurns: cutOff,
      failedAttempts,
      failures: [...failures].map(([tag, n]) => `${tag}:${n}`).join(",") || "none",
      ...faultFigures,
      runnerStopMs: stops.map((e) => e.stoppedMs).join(","),
      runnersSigkilled: stops.filter((e) => e.sigkilled).length
    }
    return {
      dir,
      figures,
      problems,
      wrong,
      acked,
      stored,
      expected: options.sessions * options.turns,
      leftovers
    } satisfies ScenarioResult
  })

/** A TCP proxy on 127.0.0.1 in front of `target` (scenario (d): a runner cut off from the database). */
export interface Partition {
  readonly port: number
  /**
   * Cuts the link: nothing more is forwarded either way on the open connections, and new ones are accepted but never
   * connected (packets dropped, as by a firewall: the client sees no error, only silence).
   */
  readonly cut: () => void
  /** Heals it: the connections held during the cut are reset (as their TCP timeouts would), new ones go through. */
  readonly heal: () => void
}

/** A {@link Partition} in front of `target`, closed with the scope. */
export const partition = (target: { readonly host: string; readonly port: number }) =>
  Effect.acquireRelease(
    Effect.async<{ readonly partition: Partition; readonly server: net.Server; readonly sockets: Set<net.Socket> }>(
      (resume) => {
        let isCut = false
        const sockets = new Set<net.Socket>()
        const held = new Set<net.Socket>()
        const track = (socket: net.Socket) => {
          sockets.add(socket)
          socket.on("close", () => {
            sockets.delete(socket)
            held.delete(socket)
          })
          socket.on("error", () => socket.destroy())
        }
        const server = net.createServer((downstream) => {
          track(downstream)
          if (isCut) {
            held.add(downstream)
            downstream.pause()
            return
          }
          const upstream = net.connect(target.port, target.host)
          track(upstream)
          upstream.on("close", () => downstream.destroy())
          downstream.on("close", () => upstream.destroy())
          // forwarding stops while the link is cut: what is read then is dropped
          downstream.on("data", (chunk) => isCut ? held.add(downstream) : upstream.write(chunk))
          upstream.on("data", (chunk) => isCut ? held.add(downstream) : downstream.write(chunk))
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resume(Effect.succeed({
            server,
            sockets,
            partition: {
              port,
              cut: () => {
                isCut = true
                for (const socket of sockets) held.add(socket)
              },
              heal: () => {
                isCut = false
                for (const socket of held) socket.destroy()
                held.clear()
              }
            }
          }))
        })
      }
    ),
    ({ server, sockets }) =>
      Effect.async<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ partition }) => partition))

/** `PRAGMA integrity_check` of an SQLite file, read by a connection of its own: `["ok"]` when it is sound. */
export const sqliteIntegrity = (file: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly integrity_check: string }>`PRAGMA integrity_check`
    return rows.map((r) => r.integrity_check)
  }).pipe(Effect.provide(sqlLayer({ sqlite: file })), Effect.orDie, Effect.scoped)
