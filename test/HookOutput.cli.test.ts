// Against the real CLI: a guard hook or a canUseTool that answers in the wrong shape blocks the tool (the CLI itself
// ignores what it cannot read and would run it). Every case allows the tool otherwise, and the tool writes a file.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { type AgentOptions, ClaudeAgent, Hooks, Message, Permissions, type Transport } from "effect-claude-agent"
import { type PermissionResult, query, type SDKMessage } from "effect-claude-agent/promise"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"
import { capturePromiseLogs, expectLogs } from "./support/logs.js"

const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 120_000)

/** The Promise API's options for a real CLI: its working directory and environment. */
const promiseBase = (options: AgentOptions.Options) => ({ cwd: options.cwd, env: options.env })

/** The result text. */
const outcome = (messages: ReadonlyArray<SDKMessage | Message.SdkMessage>) => {
  const result = messages.find((m) => m.type === "result")
  return result?.type === "result" && result.subtype === "success" ? result.result : `(${result?.type})`
}

describe("malformed hook outputs and permission decisions against the real CLI", () => {
  live(
    "Effect API: a PreToolUse hook answering permissionDecision \"block\" blocks the Bash call",
    () =>
      Effect.gen(function*() {
        const { options, cwd, server } = yield* realCli()
        const hooks = Hooks.layer({
          PreToolUse: [{
            matcher: "Bash",
            // not a PermissionDecision: the CLI alone would ignore it and run the tool
            hooks: [() =>
              Effect.succeed(
                {
                  hookSpecificOutput: {
                    hookEventName: "PreToolUse",
                    permissionDecision: "block",
                    permissionDecisionReason: "no"
                  }
                } as unknown as Hooks.HookOutput<"PreToolUse">
              )]
          }]
        })
        const messages = yield* Stream.runCollect(ClaudeAgent.query(bash("touch hooked.txt && echo ran"), options()))
          .pipe(
            Effect.provide(hooks),
            Effect.provide(Permissions.allowAll)
          )
        expect(fs.existsSync(path.join(cwd, "hooked.txt"))).toBe(false)
        const text = outcome(Chunk.toReadonlyArray(messages))
        expect(text).toMatch(/fail closed.*invalid.*permissionDecision/)
        const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
        expect(results).toMatchObject([{ is_error: true }])
        const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
        expect(result?.permission_denials.map((d) => d.tool_name)).toEqual(["Bash"])
      }).pipe(
        expectLogs([
          /^WARN Hook PreToolUse \(hook_0\) failed: its output is invalid: .*actual "block"; answering block/
        ])
      )
  )

  live(
    "Promise API: a PreToolUse hook answering garbage, then one with the decision at the top level, block",
    () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        const answers: ReadonlyArray<unknown> = ["deny", { permissionDecision: "deny", permissionDecisionReason: "no" }]
        const texts: Array<string> = []
        const logs = capturePromiseLogs([
          /^warning Hook PreToolUse \(hook_0\) failed: its output is invalid: it is not an object \(got string\)/,
          /^warning Hook PreToolUse \(hook_0\) failed: its output is invalid: permissionDecision: belongs in hookSpecificOutput/
        ])
        for (const [i, answer] of answers.entries()) {
          const messages = yield* Effect.promise(async () => {
            const out: Array<SDKMessage> = []
            for await (
              const m of query({
                prompt: bash(`touch garbage-${i}.txt && echo ran`),
                options: {
                  ...promiseBase(options()),
                  logger: logs.logger,
                  canUseTool: async (_tool, input) => ({ behavior: "allow", updatedInput: input }),
                  hooks: { PreToolUse: [{ hooks: [(async () => answer) as () => Promise<never>] }] }
                }
              })
            ) out.push(m)
            return out
          })
          texts.push(outcome(messages))
        }
        logs.check()
        expect(fs.readdirSync(cwd).filter((f) => f.startsWith("garbage-"))).toEqual([])
        expect(texts[0]).toMatch(/fail closed.*not an object/)
        expect(texts[1]).toMatch(/fail closed.*permissionDecision: belongs in hookSpecificOutput/)
      })
  )

  live(
    "Promise API: canUseTool answering { behavior: \"maybe\" } is a deny that tells the model why",
    () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        const logs = capturePromiseLogs([
          /^warning Permission for Bash denied: the permission handler returned an invalid decision: behavior: Expected "allow" \| "deny", actual "maybe"$/
        ])
        const messages = yield* Effect.promise(async () => {
          const out: Array<SDKMessage> = []
          for await (
            const m of query({
              prompt: bash("touch maybe.txt && echo ran"),
              options: {
                ...promiseBase(options()),
                logger: logs.logger,
                canUseTool: async () => ({ behavior: "maybe" }) as unknown as PermissionResult
              }
            })
          ) out.push(m)
          return out
        })
        logs.check()
        expect(fs.existsSync(path.join(cwd, "maybe.txt"))).toBe(false)
        expect(outcome(messages)).toMatch(
          /fail closed.*invalid decision.*behavior: Expected "allow" \| "deny", actual "maybe"/
        )
        const result = messages.find((m) => m.type === "result")
        expect(result?.type === "result" ? result.permission_denials.map((d) => d.tool_name) : []).toEqual(["Bash"])
      })
  )
})
