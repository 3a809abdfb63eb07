// Hook outputs and permission decisions are user code's answers: an answer that does not match its schema is a
// failure and takes the fail-closed branch (Effect API; test/promise.outputs.test.ts does the same through the
// Promise API, test/HookOutput.cli.test.ts against the real CLI).
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { ClaudeAgent, Hooks, Permissions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { malformedDecisions, malformedPreToolUse } from "./support/outputs.js"

const baseInput = { session_id: "s", transcript_path: "/t.jsonl", cwd: "/repo" }
const inputs = {
  PreToolUse: { ...baseInput, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {}, tool_use_id: "t" },
  PermissionRequest: { ...baseInput, hook_event_name: "PermissionRequest", tool_name: "Bash", tool_input: {} },
  PostToolUse: {
    ...baseInput,
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: {},
    tool_response: "out",
    tool_use_id: "t"
  },
  Stop: { ...baseInput, hook_event_name: "Stop", stop_hook_active: false },
  SessionStart: { ...baseInput, hook_event_name: "SessionStart", source: "startup" }
} as const
type Event = keyof typeof inputs

/** Runs a session whose scripted CLI runs `script` with `services`; returns what it handed back and the warnings. */
const scripted = <A, S>(
  script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<A, ScriptedCli.ScriptError>,
  services: Layer.Layer<S>
) =>
  Effect.gen(function*() {
    const done = yield* Deferred.make<A>()
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(String(message))
    })
    const layer = ScriptedCli.layer((cli) => Effect.flatMap(script(cli), (a) => Deferred.succeed(done, a)), {
      stepTimeout: "1 hour"
    })
    yield* ClaudeAgent.session().pipe(
      Effect.provide(layer),
      Effect.provide(services),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return { result: yield* Deferred.await(done), warnings }
  })

/**
 * Registers one hook per output (for `event`, answering that output whatever it is, as a cast or plain JavaScript
 * would), calls each once, and returns the answers and the warnings logged.
 */
const answersTo = (event: Event, outputs: ReadonlyArray<unknown>, onFailure?: "continue" | "block") =>
  Effect.map(
    scripted(
      (cli) =>
        Effect.zipRight(
          cli.initialize,
          Effect.forEach(outputs, (_, i) =>
            Effect.map(
              cli.requestRaw("hook_callback", { callback_id: `hook_${i}`, input: inputs[event] }),
              (raw) => raw.subtype === "success" ? raw.response : raw
            ))
        ),
      Hooks.layer({
        [event]: [{
          hooks: outputs.map((output) => () => Effect.succeed(output)),
          ...(onFailure !== undefined ? { onFailure } : {})
        }]
      } as Hooks.HookRegistrations)
    ),
    ({ result, warnings }) => ({ answers: result, warnings })
  )

const blocked = (why: RegExp) => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: expect.stringMatching(why)
  }
})

describe("hook outputs are validated against their event's schema (Effect API)", () => {
  it.scoped("malformed PreToolUse outputs block (fail closed) and say what was wrong", () =>
    Effect.gen(function*() {
      const cases = malformedPreToolUse
      const { answers, warnings } = yield* answersTo("PreToolUse", cases.map(([output]) => output))
      cases.forEach(([, why], i) => {
        expect(answers[i], `case ${i}`).toEqual(blocked(new RegExp(`fail closed.*invalid.*${why.source}`)))
      })
      expect(warnings).toHaveLength(cases.length)
      cases.forEach(([, why], i) => {
        expect(warnings[i], `warning ${i}`).toMatch(new RegExp(`PreToolUse.*invalid.*${why.source}.*answering block`))
      })
    }))

  it.scoped("malformed PermissionRequest outputs block with a PermissionRequest deny", () =>
    Effect.gen(function*() {
      const { answers } = yield* answersTo("PermissionRequest", [
        { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "maybe" } } },
        { hookSpecificOutput: { hookEventName: "PermissionRequest", permissionDecision: "deny" } },
        { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: 1 } } },
        {
          hookSpecificOutput: {
            hookEventName: "PermissionRequest",
            decision: {
              behavior: "allow",
              updatedPermissions: [{ type: "addRules", rules: "Bash", behavior: "allow", destination: "session" }]
            }
          }
        },
        {
          hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedInput: [] } }
        }
      ])
      for (const answer of answers) {
        expect(answer).toEqual({
          hookSpecificOutput: {
            hookEventName: "PermissionRequest",
            decision: { behavior: "deny", message: expect.stringMatching(/fail closed.*invalid.*decision/) }
          }
        })
      }
    }))

  it.scoped("a malformed output of another event answers by onFailure: continue by default, block when asked", () =>
    Effect.gen(function*() {
      const post = yield* answersTo("PostToolUse", [
        { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "x" } },
        { hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: 1 } },
        // an output that cannot be written: the CLI would not get it
        { reason: "serialized", extra: 1n }
      ])
      expect(post.answers).toEqual([{}, {}, {}])
      expect(post.warnings).toEqual([
        expect.stringMatching(/PostToolUse.*invalid.*hookEventName.*answering continue/),
        expect.stringMatching(/PostToolUse.*invalid.*additionalContext.*answering continue/),
        expect.stringMatching(/PostToolUse.*invalid.*JSON.*answering continue/)
      ])
      const stop = yield* answersTo("Stop", [{ continue: 0 }], "block")
      expect(stop.answers).toEqual([{ decision: "block", reason: expect.stringMatching(/fail closed.*continue/) }])
    }))

  it.scoped("valid outputs are forwarded unchanged, unknown keys included", () =>
    Effect.gen(function*() {
      const pre: ReadonlyArray<unknown> = [
        Hooks.allow("ok"),
        Hooks.deny("no"),
        Hooks.modify({ command: "ls" }, { decision: "ask", reason: "r" }),
        Hooks.addContext("PreToolUse", "ctx"),
        Hooks.stop("enough"),
        Hooks.block("why"),
        Hooks.proceed,
        { decision: "approve", reason: "legacy", systemMessage: "m", suppressOutput: true, terminalSequence: "\u0007" },
        { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" } },
        { async: true },
        { async: true, asyncTimeout: 30 },
        // fields a newer CLI may add
        {
          newTopLevelField: [1],
          hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDisplay: { x: 1 } }
        }
      ]
      const { answers, warnings } = yield* answersTo("PreToolUse", pre)
      expect(answers).toEqual(pre)
      expect(warnings).toEqual([])

      const permissionRequest: ReadonlyArray<unknown> = [
        {
          hookSpecificOutput: {
            hookEventName: "PermissionRequest",
            decision: {
              behavior: "allow",
              updatedInput: { command: "ls" },
              updatedPermissions: [
                {
                  type: "addRules",
                  rules: [{ toolName: "Bash", ruleContent: "ls" }],
                  behavior: "allow",
                  destination: "session"
                },
                { type: "setMode", mode: "acceptEdits", destination: "session" },
                { type: "addDirectories", directories: ["/tmp"], destination: "localSettings" }
              ]
            }
          }
        },
        {
          hookSpecificOutput: {
            hookEventName: "PermissionRequest",
            decision: { behavior: "deny", message: "no", interrupt: true }
          }
        },
        { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny" } } }
      ]
      expect((yield* answersTo("PermissionRequest", permissionRequest)).answers).toEqual(permissionRequest)

      const sessionStart: ReadonlyArray<unknown> = [{
        hookSpecificOutput: {
          hookEventName: "SessionStart",
          additionalContext: "c",
          initialUserMessage: "m",
          sessionTitle: "t",
          watchPaths: ["/a"],
          reloadSkills: true
        }
      }]
      expect((yield* answersTo("SessionStart", sessionStart)).answers).toEqual(sessionStart)
    }))

  it.scoped("no opinion: undefined answers {}; undefined fields are left out, as JSON does", () =>
    Effect.gen(function*() {
      const { answers, warnings } = yield* answersTo("PreToolUse", [
        undefined,
        {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: undefined
          }
        }
      ])
      expect(answers).toEqual([{}, { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }])
      expect(warnings).toEqual([])
    }))
})

/** A scripted CLI that asks the policy about one Bash call per decision; returns the answers and warnings. */
const decisionsOf = (decisions: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    let i = 0
    const store = yield* Deferred.make<Permissions.PermissionStore>()
    const policy = Permissions.layer((request) =>
      Effect.as(Deferred.succeed(store, request.store), decisions[i++] as Permissions.PermissionResult)
    )
    const { result, warnings } = yield* scripted(
      (cli) => Effect.forEach(decisions, () => cli.canUseTool("Bash", { command: "touch x" })),
      policy
    )
    return { answers: result, warnings, store: yield* Deferred.await(store) }
  })

describe("permission decisions are validated (Effect API)", () => {
  it.scoped("a decision that is not a valid PermissionResult is a deny that says why, logged, and nothing is remembered", () =>
    Effect.gen(function*() {
      const { answers, store, warnings } = yield* decisionsOf(malformedDecisions.map(([decision]) => decision))
      malformedDecisions.forEach(([, why], i) => {
        expect(answers[i], `case ${i}`).toEqual({
          behavior: "deny",
          message: expect.stringMatching(new RegExp(`fail closed.*invalid decision.*${why.source}`)),
          toolUseID: expect.any(String)
        })
        expect(warnings[i], `warning ${i}`).toMatch(new RegExp(`Bash denied.*invalid decision.*${why.source}`))
      })
      expect(store.rules()).toEqual([])
      expect(store.accepted()).toEqual([])
    }))

  it.scoped("valid decisions keep their answers", () =>
    Effect.gen(function*() {
      const addRules = {
        type: "addRules",
        rules: [{ toolName: "Bash", ruleContent: "touch x" }],
        behavior: "allow",
        destination: "session"
      } as const
      const { answers, warnings } = yield* decisionsOf([
        { behavior: "allow" },
        { behavior: "allow", updatedInput: { command: "touch y" }, decisionClassification: "user_temporary" },
        { behavior: "deny", message: "no", interrupt: true, toolUseID: "ignored" },
        // an update of a kind a newer CLI may suggest is passed on for the CLI to judge
        { behavior: "allow", updatedPermissions: [{ type: "addHooks", destination: "session" }] },
        { behavior: "allow", updatedPermissions: [addRules] }
      ])
      expect(answers).toEqual([
        { behavior: "allow", updatedInput: { command: "touch x" }, toolUseID: "toolu_scripted_1" },
        {
          behavior: "allow",
          updatedInput: { command: "touch y" },
          decisionClassification: "user_temporary",
          toolUseID: "toolu_scripted_2"
        },
        { behavior: "deny", message: "no", interrupt: true, toolUseID: "toolu_scripted_3" },
        {
          behavior: "allow",
          updatedInput: { command: "touch x" },
          updatedPermissions: [{ type: "addHooks", destination: "session" }],
          toolUseID: "toolu_scripted_4"
        },
        {
          behavior: "allow",
          updatedInput: { command: "touch x" },
          updatedPermissions: [addRules],
          toolUseID: "toolu_scripted_5"
        }
      ])
      expect(warnings).toEqual([])
    }))
})
