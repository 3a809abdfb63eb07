// Guarantees shown with the real CLI (against the scripted model server): npm run test:stress
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Hooks, Message, NodeClaudeAgent, Permissions, SdkMcp } from "effect-claude-agent"
import { realCli } from "../support/cli.js"
import { leftovers, median, report } from "./support.js"

const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`

describe("G2 with the real CLI", () => {
  it.live("G2 sessions closed while a Bash tool's child runs: nothing left 3 s later, each close under 2 s", () =>
    Effect.gen(function*() {
      const before = new Set(leftovers())
      const { options, cwd } = yield* realCli()
      const closeTimes: Array<number> = []
      for (let i = 0; i < 10; i++) {
        const scope = yield* Scope.make()
        const marker = path.join(cwd, `started-${i}.txt`)
        const session = yield* ClaudeAgent.session(options()).pipe(
          Effect.provide(Permissions.allowAll),
          Scope.extend(scope)
        )
        const reader = yield* session.turn(bash(`touch ${marker} && sleep 30`)).pipe(
          Stream.runDrain,
          Effect.ignore,
          Effect.fork
        )
        while (!fs.existsSync(marker)) yield* Effect.sleep("20 millis")
        const started = Date.now()
        yield* Scope.close(scope, Exit.void)
        closeTimes.push(Date.now() - started)
        yield* Fiber.interrupt(reader)
      }
      yield* Effect.sleep("3 seconds")
      const left = leftovers().filter((p) => !before.has(p))
      report("G2 real CLI", {
        sessions: 10,
        leftover: left.length,
        closeMedianMs: median(closeTimes),
        closeMaxMs: Math.max(...closeTimes)
      })
      expect(left).toEqual([])
      // The CLI exits ~120 ms after stdin closes, except within ~1.5 s of an interrupted tool call, when it holds its
      // exit until that time is up (SIGTERM does not shorten it; docs/PROTOCOL-NOTES.md). Closing stdin mid-turn
      // without interrupting first costs ≥ 2.2 s (grace + SIGTERM), so every close stays under 2 s.
      expect(Math.max(...closeTimes)).toBeLessThan(2000)
    }).pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer)))
})

describe("G5 with the real CLI", () => {
  const shapes = {
    "string prompt": (text: string) => text,
    "1-message stream": (text: string) => Stream.make(text),
    "a stream that ends before the first tool call": (text: string) => Stream.make(Message.userMessage(text))
  } as const
  const callbacks = ["canUseTool", "PreToolUse", "Stop", "mcpTool"] as const

  for (const [shape, prompt] of Object.entries(shapes)) {
    it.live(`G5 every callback fires with: ${shape} (2 runs each)`, () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        for (const callback of callbacks) {
          for (let run = 0; run < 2; run++) {
            const fired: Array<string> = []
            const calc = yield* SdkMcp.createSdkMcpServer({
              name: "calc",
              tools: [
                SdkMcp.tool("add", "add", Schema.Struct({ a: Schema.Number, b: Schema.Number }), ({ a, b }) =>
                  Effect.sync(() => (fired.push("mcpTool"), String(a + b))))
              ]
            })
            const text = callback === "mcpTool"
              ? `TOOL mcp__calc__add ${JSON.stringify({ a: 1, b: 2 })}`
              : callback === "Stop"
              ? "SAY hello"
              : bash(`touch g5-${callback}-${run}.txt && echo ok`)
            const layer = Layer.mergeAll(
              Permissions.layer((r) =>
                Effect.sync(() => {
                  if (r.toolName === "Bash") {
                    fired.push("canUseTool")
                  }
                  return Permissions.allow()
                })
              ),
              Hooks.layer({
                PreToolUse: [{
                  matcher: "Bash",
                  hooks: [() =>
                    Effect.sync(() => (fired.push("PreToolUse"), {}))]
                }],
                Stop: [{
                  hooks: [() =>
                    Effect.sync(() => (fired.push("Stop"), {}))]
                }]
              })
            )
            const p = prompt(text)
            const messages = yield* (typeof p === "string"
              ? ClaudeAgent.query(p, options({ mcpServers: { calc } }))
              : ClaudeAgent.query(p, options({ mcpServers: { calc } }))).pipe(Stream.runCollect, Effect.provide(layer))
            expect(Chunk.toReadonlyArray(messages).some(Message.isResultMessage)).toBe(true)
            expect(fired, `${callback} run ${run}`).toContain(callback)
          }
        }
        report(`G5 real CLI (${shape})`, { callbacks: callbacks.length, runs: 2 })
      }).pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer)))
  }
})
