/**
 * One workflow (`tidyUp`, in `workflow.ts`), tested three ways with @effect/vitest:
 *
 * 1. against `ScriptedCli` — no process at all: the script plays the CLI and checks what the workflow decided;
 * 2. against the real `claude` CLI and `ScriptedModelServer` — a real end-to-end run, offline and free;
 * 3. by replaying a recording of run 2 — no CLI, no server, and a diff if the workflow starts behaving differently.
 *
 * Run with `npx vitest run test/examples.test.ts` (it imports this file). `RECORD=1` records the replay fixture again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Predicate } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NodeClaudeAgent } from "effect-claude-agent"
import { Recording, ScriptedCli, ScriptedModelServer } from "effect-claude-agent/testing"
import { tidyUp } from "./workflow.js"

const FIXTURE = path.join(import.meta.dirname, "tidy-up.jsonl")

describe("tidyUp", () => {
  // 1. In memory: the script is the CLI. It asks for two tool calls and checks the answers it gets.
  it.effect("refuses commands outside tmp/ and allows the rest (ScriptedCli)", () =>
    Effect.gen(function*() {
      const decisions: Array<unknown> = []
      const cli = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          const asks = [{ command: "git push --force" }, { command: "rm -rf tmp/cache" }]
          const denials: Array<unknown> = []
          for (const [i, input] of asks.entries()) {
            const decision = yield* cli.canUseTool("Bash", input)
            decisions.push(decision)
            // like the real CLI, the result lists the calls the policy denied
            if (Predicate.hasProperty(decision, "behavior") && decision.behavior === "deny") {
              denials.push({ tool_name: "Bash", tool_use_id: `t${i}`, tool_input: input })
            }
          }
          yield* cli.assistant("tmp/ is clean")
          yield* cli.result("tmp/ is clean", { permission_denials: denials })
        })
      )
      const report = yield* tidyUp().pipe(Effect.provide(cli))
      expect(report).toEqual({ answer: "tmp/ is clean", refused: ["Bash"] })
      expect(decisions).toMatchObject([
        { behavior: "deny", message: "tidyUp may not use Bash that way" },
        { behavior: "allow", updatedInput: { command: "rm -rf tmp/cache" } }
      ])
    }))

  // 2. The real CLI, offline: the scripted model asks for the same two tool calls; the CLI really runs them.
  const realRun = (options: { readonly record: boolean }) =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({
        replies: [
          ScriptedModelServer.reply(ScriptedModelServer.toolUse("Bash", { command: "git push --force" })),
          ScriptedModelServer.reply(ScriptedModelServer.toolUse("Bash", { command: "rm -rf tmp/cache" })),
          ScriptedModelServer.reply("tmp/ is clean")
        ]
      })
      const cwd = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tidy-up-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      fs.mkdirSync(path.join(cwd, "tmp", "cache"), { recursive: true })
      // the same run, recorded for test 3 when asked to
      const transport = options.record
        ? Recording.layerRecord(FIXTURE).pipe(Layer.provide(NodeClaudeAgent.layer))
        : NodeClaudeAgent.layer
      const report = yield* tidyUp({ cwd, env: server.env() }).pipe(Effect.provide(transport))
      const toolResults = (yield* server.requests).flatMap((r) => r.toolResults)
      return { report, cleaned: !fs.existsSync(path.join(cwd, "tmp", "cache")), toolResults }
    })

  it.scopedLive(
    "cleans tmp/ with the real CLI against a scripted model (ScriptedModelServer)",
    () =>
      Effect.gen(function*() {
        const { cleaned, report, toolResults } = yield* realRun({ record: false })
        expect(report).toEqual({ answer: "tmp/ is clean", refused: ["Bash"] })
        expect(cleaned).toBe(true)
        expect(toolResults).toMatchObject([
          { content: "tidyUp may not use Bash that way", is_error: true },
          { is_error: false }
        ])
      }),
    60_000
  )

  // 3. Replay the recording of run 2: same frames in, same frames out, no process.
  it.scopedLive("behaves exactly as recorded (Recording.replay)", () =>
    Effect.gen(function*() {
      if (process.env["RECORD"] === "1") yield* realRun({ record: true })
      const report = yield* tidyUp().pipe(Recording.replay(FIXTURE))
      expect(report).toEqual({ answer: "tmp/ is clean", refused: ["Bash"] })
    }), 60_000)
})
