// The idle watchdog against the real CLI: a model that never answers mid-turn is a hang, reported and reaped.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent } from "effect-claude-agent"
import * as ScriptedModelServer from "../src/ScriptedModelServer.js"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

describe("idle watchdog against the real CLI", () => {
  it.live(
    "G1 a model that stalls mid-turn: IdleTimeout (reason Idle) after idleTimeout, and no claude left",
    () =>
      noClaudeLeft(Effect.scoped(Effect.gen(function*() {
        const { options } = yield* realCli({ replies: [ScriptedModelServer.stall(Infinity)] })
        const started = Date.now()
        const error = yield* ClaudeAgent.query("SAY hi", options({ idleTimeout: "3 seconds" })).pipe(
          Stream.runDrain,
          Effect.flip
        )
        expect(error).toBeInstanceOf(AgentError.IdleTimeout)
        // system/init opened the turn: the silence after it is mid-turn
        expect(error).toMatchObject({ reason: "Idle", timeoutMillis: 3000 })
        const idle = error as AgentError.IdleTimeout
        expect(idle.lastEventAt).toBeGreaterThanOrEqual(started)
        expect(Date.now() - idle.lastEventAt).toBeGreaterThanOrEqual(3000)
      }))).pipe(Effect.provide(NodeClaudeAgent.layer)),
    120_000
  )
})
