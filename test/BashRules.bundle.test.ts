// Bash rules from the bundled Promise entry (`dist/promise.js`): the parser is loaded lazily, from web-tree-sitter in
// the app's node_modules and the grammar this package ships, and judges remembered rules as the Effect API does.
// Runs in the "bundle" project only (vitest.config.ts).
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { query, type SDKMessage } from "effect-claude-agent/promise"
import { ScriptedCli } from "effect-claude-agent/testing"
import { bundleFile } from "../vitest.config.js"

describe("Bash rules in the bundled Promise entry", () => {
  it("loads no WebAssembly at import: web-tree-sitter is imported only on first use", () => {
    const text = fs.readFileSync(bundleFile, "utf8")
    expect(text).not.toMatch(/from\s*"web-tree-sitter"/)
    expect(text).toMatch(/import\(\s*"web-tree-sitter"\s*\)/)
  })

  it("a remembered Bash(ls:*) allows `ls -la` but not `ls $(touch X)`, which is asked about again", async () => {
    const asked: Array<unknown> = []
    const messages: Array<SDKMessage> = []
    for await (
      const m of query({
        prompt: "go",
        options: {
          transport: ScriptedCli.layer((cli) =>
            Effect.gen(function*() {
              yield* cli.expectUser
              const answers = [
                yield* cli.canUseTool("Bash", { command: "ls" }),
                yield* cli.canUseTool("Bash", { command: "ls $(touch X)" }),
                yield* cli.canUseTool("Bash", { command: "ls -la && ls" })
              ]
              yield* cli.result(JSON.stringify(answers))
            })
          ),
          canUseTool: async (_toolName, input) => {
            asked.push(input["command"])
            return asked.length === 1
              ? {
                behavior: "allow",
                updatedInput: input,
                updatedPermissions: [{
                  type: "addRules",
                  rules: [{ toolName: "Bash", ruleContent: "ls:*" }],
                  behavior: "allow",
                  destination: "session"
                }]
              }
              : { behavior: "deny", message: "asked and refused" }
          }
        }
      })
    ) messages.push(m)
    const last = messages.at(-1)
    const answers = JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "null")
    expect(asked).toEqual(["ls", "ls $(touch X)"])
    expect(answers).toMatchObject([
      { behavior: "allow" },
      { behavior: "deny", message: "asked and refused" },
      { behavior: "allow" }
    ])
  })
})
