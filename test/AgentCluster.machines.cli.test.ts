// Two runner processes that share nothing but the cluster's SQL database: each runs its CLIs on a config dir of its
// own (two machines), so a session that moves from one to the other finds its conversation only in the transcript
// store the runners keep in that database.
import * as EntityId from "@effect/cluster/EntityId"
import * as Sharding from "@effect/cluster/Sharding"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Message, SessionHistory } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import { TranscriptStoreSql } from "effect-claude-agent/sql"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { clusterTiming, events, holderOf, spawnRunner, waitForBalance } from "../scripts/demo-cluster-processes.js"
import { noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { backends, sqlLayer } from "./support/clusterBackends.js"
import { descendants, isAlive } from "./support/process.js"

/** `SLOW` stalls for 4 s (the runner is killed meanwhile); the rest is the rule-based handler. */
const handler: ScriptedModelServer.Handler = (request) =>
  (request.lastUserText ?? "").startsWith("SLOW")
    ? ScriptedModelServer.stall(4_000)
    : ScriptedModelServer.defaultHandler(request)

const BASH = `TOOL Bash {"command":"echo from-the-tool"}`

const lastResult = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).filter(Message.isResultMessage).at(-1)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

for (const [backend, storageIn] of backends) {
  describe.skipIf(storageIn === undefined)(`AgentCluster on two machines (real CLI, ${backend})`, () => {
    it.live(
      "a runner SIGKILLed mid-turn: the session resumes on the other machine from the store, tool calls included",
      () =>
        noClaudeLeft(Effect.scoped(Effect.gen(function*() {
          const { cwd, options, server } = yield* realCli({ handler })
          const dir = yield* tempDir("eca-cluster-machines-")
          const storage = storageIn!(dir)
          const log = path.join(dir, "events.jsonl")
          const prefix = `m${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`
          // two machines: a HOME and CLI config dir each
          const machineA = server.env({ freshHome: true })
          const machineB = server.env({ freshHome: true })
          expect(machineA["CLAUDE_CONFIG_DIR"]).not.toBe(machineB["CLAUDE_CONFIG_DIR"])
          const a = yield* spawnRunner({ storage, prefix, log, options: options({ env: machineA }) })
          const b = yield* spawnRunner({ storage, prefix, log, options: options({ env: machineB }) })
          yield* waitForBalance(log, [a.pid, b.pid])

          const client = yield* Layer.build(
            AgentCluster.layerSocketClient({ prefix, shardingConfig: clusterTiming }).pipe(
              Layer.provideMerge(sqlLayer(storage))
            )
          )
          const sharding = Context.get(client, Sharding.Sharding)
          const es = yield* events(log)
          // a session whose shard runner A holds
          const victim = Array.from({ length: 200 }, (_, i) => `user-${i}`).find((id) =>
            holderOf(es, sharding.getShardId(EntityId.make(id), "default").id, [a.pid, b.pid]) === a.pid
          )!
          expect(victim).toBeDefined()
          const turn = (prompt: string) =>
            Effect.provide(AgentCluster.session(victim), client).pipe(
              Effect.flatMap((session) => Stream.runCollect(session.turn(prompt)))
            )

          expect(lastResult(yield* turn("SAY I am the victim"))).toBe("I am the victim")
          expect(lastResult(yield* turn(BASH))).toContain("from-the-tool")

          // the store in the cluster's database has the conversation, tool call included
          const store = yield* TranscriptStoreSql.make().pipe(Effect.provide(client))
          const projectKey = SessionHistory.encodeCwd(fs.realpathSync(cwd))
          const listed = yield* store.list(projectKey)
          expect(listed).toHaveLength(1)
          const sessionId = listed[0]!.sessionId
          const stored = () =>
            Effect.map(store.load({ projectKey, sessionId }), (e) => JSON.stringify(Option.getOrThrow(e)))
          expect(yield* stored()).toContain("tool_use")
          expect(yield* stored()).toContain("from-the-tool")

          const cut = yield* Effect.fork(turn("SLOW job"))
          yield* server.waitForRequest((r) => r.lastUserText === "SLOW job", { timeout: "60 seconds" })
          // flushed eagerly: the cut-off turn's prompt reaches the store before its result
          yield* stored().pipe(
            Effect.filterOrFail((s) => s.includes("SLOW job")),
            Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 200 })
          )
          const clis = descendants(a.pid)
          expect(clis.length).toBeGreaterThan(0)
          yield* a.kill
          const cutOff = Chunk.toReadonlyArray(yield* Fiber.join(cut).pipe(Effect.timeout("60 seconds")))
          expect(cutOff.filter(Message.isResultMessage)).toEqual([])
          expect(cutOff.at(-1)).toMatchObject({
            type: "session_restarted",
            interruptedTurn: true,
            session_id: sessionId
          })

          // runner B, whose config dir never saw the session, resumes it with its whole history
          const before = (yield* server.requests).length
          const history = lastResult(yield* turn("HISTORY"))
          const order = ["SAY I am the victim", BASH, "SLOW job", "HISTORY"].map((p) => history.indexOf(p))
          expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true)
          const asked = (yield* server.requests).slice(before).filter((r) => r.isMessages && !r.isProbe)
          const seen = JSON.stringify(asked.at(-1)?.messages)
          expect(seen).toContain("tool_use")
          expect(seen).toContain("from-the-tool")
          expect(holderOf(yield* events(log), sharding.getShardId(EntityId.make(victim), "default").id, [b.pid]))
            .toBe(b.pid)
          expect(
            fs.existsSync(path.join(machineB["CLAUDE_CONFIG_DIR"]!, "projects", projectKey, `${sessionId}.jsonl`))
          ).toBe(true)

          // the dead runner's CLI saw its stdin close: it finishes the stalled turn, then exits (bounded)
          const deadline = Date.now() + 30_000
          while (clis.some(isAlive) && Date.now() < deadline) yield* Effect.sleep("100 millis")
          expect(clis.filter(isAlive)).toEqual([])
        }))),
      240_000
    )
  })
}
