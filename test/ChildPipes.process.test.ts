// The process transport's pipes (read and written with Node's own calls): nothing is left open once a session's
// scope has closed, wherever it closed (fake CLI, real processes).
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ClaudeAgent, Message, NodeClaudeAgent } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import { stalledCliScenarios } from "./support/stalls.js"

const openFds = () => fs.readdirSync("/proc/self/fd").length

describe.skipIf(process.platform !== "linux")("the process transport's pipes (process)", () => {
  it.live(
    "closing sessions (after the result, mid-stream, before the first message) leaves no descriptor open",
    () =>
      Effect.gen(function*() {
        const query = (prompt: string, take: number) =>
          ClaudeAgent.query(prompt, FakeCli.options(FakeCli.echoScenario)).pipe(Stream.take(take), Stream.runCollect)
        // a session closed after its turn: the CLI still runs, and its stdout's end comes after the close
        const session = (prompt: string) =>
          Effect.scoped(Effect.gen(function*() {
            const s = yield* ClaudeAgent.session(FakeCli.options(FakeCli.echoScenario))
            yield* Stream.runDrain(s.turn(prompt))
          }))
        // closed while its CLI stalls (initialize unanswered; mid-turn with a grandchild holding the pipes; a CLI that
        // ignores SIGTERM), messages read or not
        const stalled = stalledCliScenarios()
        const closedWhileStalled = (scenario: FakeCli.Scenario, read: boolean) =>
          Effect.scoped(Effect.gen(function*() {
            const s = yield* ClaudeAgent.session(FakeCli.options(scenario, { killGraceMillis: 200 }))
            yield* s.send("hi").pipe(Effect.ignore)
            if (read) yield* s.messages.pipe(Stream.runDrain, Effect.ignore, Effect.forkScoped)
            yield* Effect.sleep("100 millis")
          }))
        // one session first: what the layer keeps for its life (the host watchdog's pipe) is not a leak
        yield* query("warm-up", 100)
        const before = openFds()
        for (const scenario of stalled) {
          yield* closedWhileStalled(scenario, true)
          yield* closedWhileStalled(scenario, false)
        }
        for (let i = 0; i < 3; i++) {
          // to its end; closed at its first message, with more on stdout unread; closed before anything was read
          const all = yield* query(`q${i}`, 100)
          expect([...all].some(Message.isResultMessage)).toBe(true)
          yield* query(`q${i}`, 1)
          yield* query(`q${i}`, 0)
        }
        for (let i = 0; i < 12; i++) yield* session(`s${i}`)
        expect(openFds()).toBe(before)
      }).pipe(Effect.provide(NodeClaudeAgent.layer)),
    60_000
  )
})
