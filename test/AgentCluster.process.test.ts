import type * as Sharding from "@effect/cluster/Sharding"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { AgentCluster } from "effect-claude-agent/cluster"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  clusterTiming,
  events,
  type RunnerEvent,
  spawnRunner,
  waitFor,
  waitForBalance
} from "../scripts/demo-cluster-processes.js"
import { backends, sqlLayer } from "./support/clusterBackends.js"
import { descendants } from "./support/process.js"

const prompts = (es: ReadonlyArray<RunnerEvent>) => es.flatMap((e) => "prompt" in e ? [e] : [])

const launches = (es: ReadonlyArray<RunnerEvent>) => es.flatMap((e) => "launch" in e ? [e] : [])

const lastResult = (messages: Chunk.Chunk<unknown>) => Chunk.last(messages).pipe((m) => m._tag === "Some" ? m.value : m)

for (const [backend, storageIn] of backends) {
  describe.skipIf(storageIn === undefined)(`AgentCluster over two runner processes on ${backend}`, () => {
    it.scopedLive(
      "a runner SIGKILLed mid-turn: its sessions resume on the other, the cut-off turn ends with session_restarted",
      () =>
        Effect.gen(function*() {
          const dir = yield* Effect.acquireRelease(
            Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-cluster-mp-"))),
            (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
          )
          const storage = storageIn!(dir)
          const log = path.join(dir, "events.jsonl")
          const prefix = `mp${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`
          const a = yield* spawnRunner({ storage, prefix, log })
          const b = yield* spawnRunner({ storage, prefix, log })
          // no turn starts while the shards move from the first runner to both (a turn cut off by a rebalance ends
          // with session_restarted too)
          yield* waitForBalance(log, [a.pid, b.pid])
          const client: Layer.Layer<AgentCluster.AgentCluster | Sharding.Sharding> = AgentCluster
            .layerSocketClient({ prefix, shardingConfig: clusterTiming })
            .pipe(Layer.provide(sqlLayer(storage)))
          const context = yield* Layer.build(client)
          const run = <A, E>(effect: Effect.Effect<A, E, AgentCluster.AgentCluster>) => Effect.provide(effect, context)
          const turn = (id: string, prompt: string, turnId?: string) =>
            run(AgentCluster.session(id)).pipe(
              Effect.flatMap((session) => Stream.runCollect(session.turn(prompt, { turnId })))
            )

          // sessions spread over both runners
          const ids = Array.from({ length: 8 }, (_, i) => `user-${i}`)
          const first = yield* Effect.forEach(ids, (id) => turn(id, `hello ${id}`), { concurrency: "unbounded" })
          first.forEach((messages, i) =>
            expect(lastResult(messages)).toMatchObject({ type: "result", result: `echo: hello ${ids[i]}` })
          )
          const before = prompts(yield* events(log))
          const ownerOf = (id: string) => before.find((e) => e.prompt === `hello ${id}`)!
          const onA = ids.filter((id) => ownerOf(id).pid === a.pid)
          const onB = ids.filter((id) => ownerOf(id).pid === b.pid)
          expect(onA.length + onB.length).toBe(ids.length)
          expect(onA.length).toBeGreaterThan(0)
          expect(onB.length).toBeGreaterThan(0)

          // a turn in flight on A when A is SIGKILLed
          const victim = onA[0]!
          const cut = yield* Effect.fork(turn(victim, "HANG until killed", "cut-turn"))
          yield* waitFor(log, (es) => prompts(es).some((e) => e.prompt === "HANG until killed"), "the HANG prompt")
          yield* a.kill
          const cutOff = yield* Fiber.join(cut).pipe(Effect.timeout("60 seconds"))
          expect(Chunk.toReadonlyArray(cutOff)).toEqual([
            expect.objectContaining({
              type: "session_restarted",
              interruptedTurn: true,
              session_id: ownerOf(victim).session
            })
          ])

          // every session of A carries on on B, resuming its CLI session; B's sessions are untouched
          const after = yield* Effect.forEach(ids, (id) => turn(id, `after ${id}`), { concurrency: "unbounded" })
          after.forEach((messages, i) =>
            expect(lastResult(messages)).toMatchObject({ type: "result", result: `echo: after ${ids[i]}` })
          )
          const all = yield* events(log)
          for (const id of ids) {
            const resumed = prompts(all).find((e) => e.prompt === `after ${id}`)!
            expect(resumed.pid).toBe(b.pid)
            expect(resumed.session).toBe(ownerOf(id).session)
          }
          for (const id of onA) {
            const session = ownerOf(id).session
            // the scripted CLIs write no transcript: the victim, cut off with a turn open, has none in the store nor
            // in the config dir, and starts anew under its id; the others resume theirs
            const flag = id === victim ? `--session-id=${session}` : `--resume=${session}`
            expect(launches(all).some((e) => e.pid === b.pid && e.launch.includes(flag))).toBe(true)
          }
          expect(launches(all).filter((e) => e.pid === b.pid).length).toBe(ids.length)
          // the cut-off turn ran once, on the dead runner
          expect(prompts(all).filter((e) => e.prompt === "HANG until killed").map((e) => e.pid)).toEqual([a.pid])
          expect(descendants(a.pid)).toEqual([])
        }),
      180_000
    )
  })
}
