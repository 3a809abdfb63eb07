/**
 * npm run demo:cluster — Claude Code sessions as cluster entities over two runner processes on this machine: the
 * sessions spread over both runners, one runner is SIGKILLed in the middle of a turn, and its sessions carry on on
 * the other with their history. The cut-off turn ends with a `session_restarted` message instead of silently.
 *
 * Offline: the real claude CLI talks to the bundled scripted model server (`SAY <words>` answers the words,
 * `HISTORY` lists the conversation's prompts, `SLOW` never answers). The runners share an SQLite file (shard locks,
 * messages, session records, transcripts) and nothing else: each runs its CLIs on a config dir of its own, as on two
 * machines. Everything stops by itself.
 */
import * as EntityId from "@effect/cluster/EntityId"
import * as Sharding from "@effect/cluster/Sharding"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Chunk, Console, Effect, Layer, Logger, LogLevel, Stream } from "effect"
import { Message } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { descendants, isAlive } from "../test/support/process.js"
import { clusterTiming, events, holderOf, shardsHeld, spawnRunner, waitForBalance } from "./demo-cluster-processes.js"

const color = (code: number) => (text: string) => (process.stdout.isTTY ? `\x1b[${code}m${text}\x1b[0m` : text)
const dim = color(2)
const bold = color(1)
const green = color(32)
const yellow = color(33)

/**
 * The model's part: `SLOW` stalls for 4 s (the runner is killed meanwhile), the rest is the server's rule-based
 * handler.
 */
const handler: ScriptedModelServer.Handler = (request) =>
  (request.lastUserText ?? "").startsWith("SLOW")
    ? ScriptedModelServer.stall(4_000)
    : ScriptedModelServer.defaultHandler(request)

const PEOPLE = ["ada", "bob", "cy", "dee"]

const program = Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "eca-demo-cluster-")))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  const server = yield* ScriptedModelServer.make({ handler })
  const cwd = path.join(dir, "work")
  fs.mkdirSync(cwd)
  const storage = { sqlite: path.join(dir, "cluster.db") }
  const log = path.join(dir, "events.jsonl")
  const prefix = "demo"
  yield* Console.log(
    bold("Two runner processes (two CLI config dirs, as two machines), one SQLite file, the real claude CLI.")
  )

  const runners = [
    yield* spawnRunner({ storage, prefix, log, options: { cwd, env: server.env({ freshHome: true }) } }),
    yield* spawnRunner({ storage, prefix, log, options: { cwd, env: server.env({ freshHome: true }) } })
  ]
  const [a, b] = runners as [typeof runners[0], typeof runners[0]]
  const alive = new Set([a.pid, b.pid])
  const name = (pid: number) => pid === a.pid ? `runner A (pid ${a.pid})` : `runner B (pid ${b.pid})`
  yield* waitForBalance(log, [a.pid, b.pid])
  const held = shardsHeld(yield* events(log))
  yield* Console.log(
    `${name(a.pid)} holds ${held.get(a.pid)?.length} shards, ${name(b.pid)} ${held.get(b.pid)?.length}\n`
  )

  const client = yield* Layer.build(
    AgentCluster.layerSocketClient({ prefix, shardingConfig: clusterTiming }).pipe(
      Layer.provide(Layer.orDie(SqliteClient.layer({ filename: storage.sqlite })))
    )
  )
  const sharding = yield* Effect.provide(Sharding.Sharding, client)
  /** The runner holding the session's shard now. */
  const runnerOf = (id: string) =>
    Effect.map(events(log), (es) => {
      const shard = sharding.getShardId(EntityId.make(id), "default").id
      const owner = holderOf(es, shard, alive)
      return owner === undefined ? "no runner" : name(owner)
    })
  const say = (id: string, prompt: string) =>
    Effect.gen(function*() {
      const session = yield* Effect.provide(AgentCluster.session(id), client)
      const messages = yield* Stream.runCollect(session.turn(prompt))
      const answer = Chunk.toReadonlyArray(messages).flatMap((m) =>
        m.type === "assistant" ? [Message.text(m)] : m.type === "session_restarted" ? [yellow("session_restarted")] : []
      )
      yield* Console.log(`[${id} @ ${yield* runnerOf(id)}] > ${prompt}\n    ${answer.join(" ")}`)
    })

  yield* Effect.forEach(PEOPLE, (id) => say(id, `SAY Hello, I am ${id}.`), { concurrency: "unbounded", discard: true })

  // a turn in flight on runner A when it is SIGKILLed
  const onA = yield* Effect.filter(PEOPLE, (id) => Effect.map(runnerOf(id), (r) => r === name(a.pid)))
  const victim = onA[0] ?? PEOPLE[0]!
  const cut = yield* Effect.fork(say(victim, "SLOW: a long job"))
  yield* server.waitForRequest((r) => r.lastUserText === "SLOW: a long job", { timeout: "60 seconds" })
  const clis = descendants(a.pid)
  const killedAt = Date.now()
  yield* a.kill
  alive.delete(a.pid)
  yield* Console.log(`\n${bold(`${name(a.pid)} SIGKILLed`)} in the middle of ${victim}'s turn`)
  yield* Effect.fromFiber(cut)
  yield* Console.log(
    dim(`    (the cut-off turn ended ${Date.now() - killedAt} ms after the kill, on the other runner)`)
  )
  // a CLI whose runner dies is SIGKILLed, with its tools, by the runner's host watchdog; without the watchdog it
  // would finish the turn it is in first (SECURITY.md, "The host being killed")
  while (clis.some(isAlive) && Date.now() - killedAt < 20_000) yield* Effect.sleep("50 millis")
  const left = clis.filter(isAlive)
  if (left.length === 0) {
    yield* Console.log(dim(
      `    (the dead runner's CLIs were gone ${Date.now() - killedAt} ms after the kill: its host watchdog ended them)`
    ))
  } else {
    yield* Console.log(
      yellow(`    ${left.length} CLI processes of the dead runner still ran 20 s after the kill; killing them`)
    )
    left.forEach((pid) => process.kill(pid, "SIGKILL"))
  }
  yield* Console.log("")
  yield* Effect.forEach(PEOPLE, (id) => say(id, "HISTORY"), { concurrency: "unbounded", discard: true })
  yield* Console.log(`\n${green("✓")} every session carried on, with its history; stopping runner B and the server`)
})

program.pipe(
  Effect.scoped,
  Logger.withMinimumLogLevel(LogLevel.Error),
  NodeRuntime.runMain
)
