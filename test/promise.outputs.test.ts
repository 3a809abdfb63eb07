// The Promise API's hooks and canUseTool answer from untyped code: an answer that does not match its schema takes
// the fail-closed branch (test/HookOutput.test.ts does the same through the Effect API). Also run against the bundle.
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import { type HookJSONOutput, type PermissionResult, query, type SDKMessage } from "effect-claude-agent/promise"
import { ScriptedCli } from "effect-claude-agent/testing"
import { capturePromiseLogs } from "./support/logs.js"
import { malformedDecisions, malformedPreToolUse } from "./support/outputs.js"

const preToolUse = {
  session_id: "s",
  transcript_path: "/t.jsonl",
  cwd: "/repo",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "touch x" },
  tool_use_id: "t"
}

/**
 * Runs a query whose scripted CLI runs `script`; returns the JSON the script's result carried. The query's warnings
 * must be the `warnings` (see `capturePromiseLogs`).
 */
const report = async (
  script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<unknown, ScriptedCli.ScriptError>,
  options: Parameters<typeof query>[0]["options"],
  warnings: ReadonlyArray<RegExp> = []
): Promise<unknown> => {
  const logs = capturePromiseLogs(warnings)
  const transport = ScriptedCli.layer((cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.result(JSON.stringify(yield* script(cli)))
    })
  )
  const messages: Array<SDKMessage> = []
  for await (const m of query({ prompt: "go", options: { ...options, transport, logger: logs.logger } })) {
    messages.push(m)
  }
  logs.check()
  const last = messages.at(-1)
  return JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "null")
}

/** Calls hook `hook_<i>` once for each of `count` hooks; returns the answers. */
const callHooks = (count: number) => (cli: ScriptedCli.ScriptedCli) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i),
    (i) => cli.request("hook_callback", { callback_id: `hook_${i}`, input: preToolUse, tool_use_id: "t" })
  )

describe("promise API: hook outputs are validated against their event's schema", () => {
  it("malformed PreToolUse outputs block (fail closed), whether returned in a Promise or not", async () => {
    const outputs = [
      ...malformedPreToolUse,
      // a toJSON that throws: the CLI could not be sent this
      [{
        toJSON: () => {
          throw new Error("no JSON today")
        }
      }, /JSON/] as const
    ]
    const answers = await report(
      callHooks(outputs.length * 2),
      {
        hooks: {
          PreToolUse: [{
            hooks: outputs.flatMap(([output]) => [
              async () => output as HookJSONOutput,
              // plain JavaScript may return the value itself, as `await` allows
              (() => output) as unknown as () => Promise<HookJSONOutput>
            ])
          }]
        }
      },
      outputs.flatMap(([, why], i) =>
        [2 * i, 2 * i + 1].map((id) =>
          new RegExp(
            `^warning Hook PreToolUse \\(hook_${id}\\) failed: its output is invalid: .*${why.source}.*; answering block$`
          )
        )
      )
    )
    expect(answers).toEqual(outputs.flatMap(([, why]) => {
      const blocked = {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: expect.stringMatching(new RegExp(`fail closed.*invalid.*${why.source}`))
        }
      }
      return [blocked, blocked]
    }))
  })

  it("a malformed output of another event continues; onFailure: block blocks it", async () => {
    const answers = await report(
      (cli) =>
        Effect.forEach(["hook_0", "hook_1"], (id) =>
          cli.request("hook_callback", {
            callback_id: id,
            input: {
              session_id: "s",
              transcript_path: "/t",
              cwd: "/",
              hook_event_name: "Stop",
              stop_hook_active: false
            }
          })),
      {
        hooks: {
          Stop: [
            { hooks: [async () => ({ continue: "no" }) as unknown as HookJSONOutput] },
            { hooks: [async () => ({ stopReason: 1 }) as unknown as HookJSONOutput], onFailure: "block" }
          ]
        }
      },
      [
        /^warning Hook Stop \(hook_0\) failed: its output is invalid: continue: .*; answering continue$/,
        /^warning Hook Stop \(hook_1\) failed: its output is invalid: stopReason: .*; answering block$/
      ]
    )
    expect(answers).toEqual([{}, { decision: "block", reason: expect.stringMatching(/fail closed.*stopReason/) }])
  })

  it("valid outputs, the official SDK's shapes, are forwarded unchanged", async () => {
    const outputs: ReadonlyArray<HookJSONOutput> = [
      {},
      {
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no" }
      },
      {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          updatedInput: { command: "ls" }
        }
      },
      { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" } },
      { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "ctx" } },
      { decision: "block", reason: "legacy" },
      { continue: false, stopReason: "enough", systemMessage: "m", suppressOutput: true },
      { async: true, asyncTimeout: 10 }
    ]
    const answers = await report(callHooks(outputs.length + 1), {
      hooks: {
        PreToolUse: [{
          hooks: [
            ...outputs.map((output) => async () => output),
            // no opinion
            (async () => undefined) as unknown as () => Promise<HookJSONOutput>
          ]
        }]
      }
    })
    expect(answers).toEqual([...outputs, {}])
  })
})

describe("promise API: canUseTool decisions are validated", () => {
  it("a decision that is not a valid PermissionResult is a deny that says why", async () => {
    let i = 0
    const answers = await report(
      (cli) => Effect.forEach(malformedDecisions, () => cli.canUseTool("Bash", { command: "touch x" })),
      { canUseTool: async () => malformedDecisions[i++]![0] as PermissionResult },
      // the warning names what is wrong, as the deny does
      malformedDecisions.map(([, why]) =>
        new RegExp(
          `^warning Permission for Bash denied: the permission handler returned an invalid decision: .*${why.source}`
        )
      )
    )
    expect(answers).toEqual(malformedDecisions.map(([, why]) => ({
      behavior: "deny",
      message: expect.stringMatching(new RegExp(`fail closed.*invalid decision.*${why.source}`)),
      toolUseID: expect.any(String)
    })))
  })

  it("valid decisions, the official SDK's shapes, keep their answers", async () => {
    const decisions: ReadonlyArray<PermissionResult> = [
      { behavior: "allow", updatedInput: { command: "touch y" } },
      { behavior: "allow" },
      { behavior: "deny", message: "no", interrupt: true },
      { behavior: "allow", updatedInput: { command: "ls" }, decisionClassification: "user_permanent", toolUseID: "x" }
    ]
    let i = 0
    const answers = await report(
      (cli) => Effect.forEach(decisions, () => cli.canUseTool("Bash", { command: "touch x" })),
      { canUseTool: async () => decisions[i++]! }
    )
    expect(answers).toEqual([
      { behavior: "allow", updatedInput: { command: "touch y" }, toolUseID: "toolu_scripted_1" },
      { behavior: "allow", updatedInput: { command: "touch x" }, toolUseID: "toolu_scripted_2" },
      { behavior: "deny", message: "no", interrupt: true, toolUseID: "toolu_scripted_3" },
      {
        behavior: "allow",
        updatedInput: { command: "ls" },
        decisionClassification: "user_permanent",
        toolUseID: "toolu_scripted_4"
      }
    ])
  })
})
