// `AgentCluster.session` against the local `ClaudeAgent.Session`: the verbs beyond turn / send / interrupt / setters,
// through an entity whose CLI is the real one.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { type AgentOptions, Message } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"

const cluster = (filename: string, options: AgentOptions.Options) =>
  AgentCluster.layerSqlite({ filename, options, shardingConfig: { entityTerminationTimeout: 2_000 } }).pipe(
    Layer.provide(NodeClaudeAgent.layer)
  )

describe("AgentCluster.session has the local session's verbs (real CLI)", () => {
  it.live(
    "sessionId, state, origin, initializationResult, mcpServerStatus, getContextUsage, request, endInput",
    () =>
      noClaudeLeft(Effect.scoped(Effect.gen(function*() {
        const { options } = yield* realCli()
        const filename = path.join(yield* tempDir("eca-cluster-parity-"), "cluster.db")
        const first = yield* Effect.gen(function*() {
          const session = yield* AgentCluster.session("ada")
          const origin = yield* session.origin
          expect(origin).toMatchObject({ kind: "new", forked: false })
          const sessionId = yield* session.sessionId
          expect(origin.sessionId).toBe(sessionId)
          const messages = Chunk.toReadonlyArray(yield* Stream.runCollect(session.turn("SAY hi")))
          expect(messages.filter(Message.isResultMessage).map((m) => m.session_id)).toEqual([sessionId])
          // the CLI reports itself idle just after the result
          expect(
            yield* session.state.pipe(
              Effect.filterOrFail((state) => state === "idle"),
              Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 100 }),
              Effect.orElse(() => session.state)
            )
          ).toBe("idle")
          const init = yield* session.initializationResult
          expect(Array.isArray(init.commands)).toBe(true)
          expect(yield* session.mcpServerStatus).toEqual([])
          const usage = yield* session.getContextUsage()
          expect(usage.totalTokens).toBeGreaterThan(0)
          const raw = yield* session.request("mcp_status", {}, { timeout: "30 seconds" })
          expect(raw).toMatchObject({ mcpServers: [] })
          return sessionId
        }).pipe(Effect.provide(cluster(filename, options())))

        // the runner started again on the same file: the next incarnation resumes the conversation
        yield* Effect.gen(function*() {
          const session = yield* AgentCluster.session("ada")
          expect(yield* session.sessionId).toBe(first)
          expect(yield* session.origin).toMatchObject({ kind: "resume", requested: first, forked: false })
          yield* session.endInput
          expect(yield* session.state).toBe("exited")
          const after = yield* Effect.flip(Stream.runDrain(session.turn("SAY again")))
          expect(after).toMatchObject({ _tag: "InputClosed" })
        }).pipe(Effect.provide(cluster(filename, options())))
      }))),
    120_000
  )
})
