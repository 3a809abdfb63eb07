import * as EntityId from "@effect/cluster/EntityId"
import * as Sharding from "@effect/cluster/Sharding"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { Message, SessionHistory } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import { TranscriptStoreSql } from "effect-claude-agent/sql"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { clusterTiming, events, holderOf, spawnRunner, waitForBalance } from "../scripts/demo-cluster-processes.js"
import { noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { descendants, isAlive } from "./support/process.js"

/** `SLOW` stalls for 4 s (the runner is killed meanwhile); the rest is the rule-based handler. */
const handler: ScriptedModelServer.Handler = (request) =>
  (request.lastUserText ?? "").startsWith("SLOW")
    ? ScriptedModelServer.stall(4_000)
    : ScriptedModelServer.defaultHandler(request)

const lastResult = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).filter(Message.isResultMessage).at(-1)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

describe("AgentCluster over two runner processes, real CLI, SQLite", () => {
  it.live(
    "a runner SIGKILLed mid-turn: its sessions resume on the other with their history; its CLIs end",
    () =>
      noClaudeLeft(Effect.scoped(Effect.gen(function*() {
        const { cwd, options, server } = yield* realCli({ handler })
        const dir = yield* tempDir("eca-cluster-mp-")
        const storage = { sqlite: path.join(dir, "cluster.db") }
        const log = path.join(dir, "events.jsonl")
        const prefix = "cli"
        const a = yield* spawnRunner({ storage, prefix, log, options: options() })
        const b = yield* spawnRunner({ storage, prefix, log, options: options() })
        yield* waitForBalance(log, [a.pid, b.pid])
        const client = yield* Layer.build(
          AgentCluster.layerSocketClient({ prefix, shardingConfig: clusterTiming }).pipe(
            Layer.provideMerge(Layer.orDie(SqliteClient.layer({ filename: storage.sqlite })))
          )
        )
        const sharding = yield* Effect.provide(Sharding.Sharding, client)
        const alive = new Set([a.pid, b.pid])
        const holder = (id: string) =>
          Effect.map(events(log), (es) => holderOf(es, sharding.getShardId(EntityId.make(id), "default").id, alive))
        const turn = (id: string, prompt: string) =>
          Effect.provide(AgentCluster.session(id), client).pipe(
            Effect.flatMap((session) => Stream.runCollect(session.turn(prompt)))
          )

        const ids = ["ada", "bob", "cy", "dee", "eve", "fay"]
        const first = yield* Effect.forEach(ids, (id) => turn(id, `SAY I am ${id}`), { concurrency: "unbounded" })
        expect(first.map(lastResult)).toEqual(ids.map((id) => `I am ${id}`))
        const holders = yield* Effect.forEach(ids, holder)
        const victim = ids.find((_, i) => holders[i] === a.pid)
        // the shards of six entities on two runners: both hold some, with near certainty; else there is no victim
        expect(victim).toBeDefined()

        const cut = yield* Effect.fork(turn(victim!, "SLOW job"))
        yield* server.waitForRequest((r) => r.lastUserText === "SLOW job", { timeout: "60 seconds" })
        // the cut-off prompt has reached the runners' transcript store (flushed eagerly): a kill within milliseconds
        // of it could lose it from the history (the host watchdog ends the CLI before it writes more)
        const store = yield* TranscriptStoreSql.make().pipe(Effect.provide(client))
        const projectKey = SessionHistory.encodeCwd(fs.realpathSync(cwd))
        const storedText = Effect.flatMap(
          store.list(projectKey),
          (sessions) =>
            Effect.forEach(sessions, (s) =>
              Effect.map(store.load({ projectKey, sessionId: s.sessionId }), (e) =>
                JSON.stringify(Option.getOrNull(e))))
        )
        yield* storedText.pipe(
          Effect.filterOrFail((texts) =>
            texts.some((t) => t.includes("SLOW job"))
          ),
          Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 200 })
        )
        const clis = descendants(a.pid)
        expect(clis.length).toBeGreaterThan(0)
        yield* a.kill
        alive.delete(a.pid)
        const cutOff = yield* Fiber.join(cut).pipe(Effect.timeout("60 seconds"))
        // what the dead runner had sent (its CLI's init), then the restart; no result
        expect(Chunk.toReadonlyArray(cutOff).map((m) => m.type)).toEqual(["system", "session_restarted"])
        expect(Chunk.unsafeLast(cutOff)).toMatchObject({ type: "session_restarted", interruptedTurn: true })

        // every session carries on, on B, with the conversation it had
        const histories = yield* Effect.forEach(ids, (id) => turn(id, "HISTORY"), { concurrency: "unbounded" })
        histories.forEach((messages, i) => {
          expect(lastResult(messages)).toContain(`user prompts: SAY I am ${ids[i]} |`)
          if (ids[i] === victim) expect(lastResult(messages)).toContain("SLOW job")
        })
        expect(yield* Effect.forEach(ids, holder)).toEqual(ids.map(() => b.pid))

        // the dead runner's host watchdog SIGKILLs its CLI, which would otherwise finish the stalled turn first
        const deadline = Date.now() + 30_000
        while (clis.some(isAlive) && Date.now() < deadline) yield* Effect.sleep("100 millis")
        expect(clis.filter(isAlive)).toEqual([])
      }))),
    180_000
  )
})
