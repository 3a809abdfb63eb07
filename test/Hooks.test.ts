import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { ClaudeAgent, Hooks } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { sleeping } from "./support/clock.js"

const baseInput = { session_id: "s", transcript_path: "/t.jsonl", cwd: "/repo" }
const preToolUse = (tool_name: string, tool_input: unknown) => ({
  ...baseInput,
  hook_event_name: "PreToolUse",
  tool_name,
  tool_input,
  tool_use_id: "toolu_1"
})

/** Starts a session with `hooks` and lets a script call hook callbacks; returns the initialize request and answers. */
const run = (
  hooks: Layer.Layer<Hooks.Hooks>,
  calls: ReadonlyArray<readonly [string, unknown]>
) =>
  Effect.gen(function*() {
    const result = yield* Deferred.make<{ init: Record<string, unknown>; answers: ReadonlyArray<unknown> }>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        const init = yield* cli.initialize
        const answers: Array<unknown> = []
        for (const [callbackId, input] of calls) {
          answers.push(
            yield* cli.requestRaw("hook_callback", { callback_id: callbackId, input, tool_use_id: "toolu_1" })
          )
        }
        yield* Deferred.succeed(result, { init, answers })
      }), { stepTimeout: "1 hour" })
    const fiber = yield* ClaudeAgent.session().pipe(
      Effect.zipRight(Deferred.await(result)),
      Effect.provide(layer),
      Effect.provide(hooks),
      Effect.fork
    )
    return fiber
  })

const success = (response: unknown) => ({ subtype: "success", response })

describe("Hooks", () => {
  it.scoped("registrations are sent in initialize as callback ids, in order, with matcher/timeout/onFailure", () =>
    Effect.gen(function*() {
      const hooks = Hooks.layer({
        PreToolUse: [
          { matcher: "Bash", hooks: [Hooks.log(), Hooks.denyTools(["Write"])], timeout: 30, onFailure: "block" },
          { hooks: [Hooks.log()] }
        ],
        UserPromptSubmit: [{ hooks: [Hooks.log()] }]
      })
      const { init } = yield* Fiber.join(yield* run(hooks, []))
      expect(init["hooks"]).toEqual({
        PreToolUse: [
          { matcher: "Bash", hookCallbackIds: ["hook_0", "hook_1"], timeout: 30, onFailure: "block" },
          { hookCallbackIds: ["hook_2"] }
        ],
        UserPromptSubmit: [{ hookCallbackIds: ["hook_3"] }]
      })
    }))

  it.scoped("Hooks.make: the service of the given hooks, as a value, registers them as the layer would", () =>
    Effect.gen(function*() {
      const made = Hooks.make(
        { PreToolUse: [{ matcher: "Bash", hooks: [Hooks.log()], timeout: 30 }] },
        { PreToolUse: [{ hooks: [Hooks.log()] }] }
      )
      const { init } = yield* Fiber.join(
        yield* run(Layer.succeed(Hooks.Hooks, made), [])
      )
      expect(init["hooks"]).toEqual({
        PreToolUse: [
          { matcher: "Bash", hookCallbackIds: ["hook_0"], timeout: 30 },
          { hookCallbackIds: ["hook_1"] }
        ]
      })
    }))

  it.scoped("dispatches by callback id; an unknown id gets the official error response", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const hooks = Hooks.layer({
        PreToolUse: [{
          hooks: [(input, toolUseId) => Effect.sync(() => (seen.push([input.tool_name, toolUseId]), {}))]
        }],
        PostToolUse: [{
          hooks: [(input) => Effect.succeed(Hooks.addContext("PostToolUse", `saw ${String(input.tool_response)}`))]
        }]
      })
      const { answers } = yield* Fiber.join(
        yield* run(hooks, [
          ["hook_0", preToolUse("Bash", { command: "ls" })],
          ["hook_1", {
            ...baseInput,
            hook_event_name: "PostToolUse",
            tool_name: "Bash",
            tool_input: {},
            tool_response: "out",
            tool_use_id: "t"
          }],
          ["hook_9", preToolUse("Bash", {})]
        ])
      )
      expect(seen).toEqual([["Bash", "toolu_1"]])
      expect(answers[0]).toMatchObject(success({}))
      expect(answers[1]).toMatchObject(
        success({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "saw out" } })
      )
      expect(answers[2]).toMatchObject({ subtype: "error", error: "No hook callback found for ID: hook_9" })
    }))

  it.scoped("helpers produce the documented output shapes", () =>
    Effect.gen(function*() {
      expect(Hooks.allow("ok")).toEqual({
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "ok" }
      })
      expect(Hooks.deny("no")).toEqual({
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no" }
      })
      expect(Hooks.modify({ command: "ls" })).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          updatedInput: { command: "ls" }
        }
      })
      expect(Hooks.addContext("UserPromptSubmit", "ctx")).toEqual({
        hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "ctx" }
      })
      expect(Hooks.stop("enough")).toEqual({ continue: false, stopReason: "enough" })
      expect(Hooks.block("why")).toEqual({ decision: "block", reason: "why" })
      const input = preToolUse("Bash", { command: "rm -rf /" }) as Hooks.HookInput<"PreToolUse">
      const validate = Hooks.validate((i) => !JSON.stringify(i.tool_input).includes("rm -rf"), "no rm -rf")
      expect(yield* validate(input, undefined)).toEqual(Hooks.deny("no rm -rf"))
      expect(yield* Hooks.denyTools(["Bash"])(input, undefined)).toEqual(Hooks.deny("The tool Bash is not allowed"))
      expect(yield* Hooks.denyTools(["Write"])(input, undefined)).toEqual({})
      expect(yield* Hooks.allowOnlyTools(["Read"])(input, undefined)).toEqual(
        Hooks.deny("Only these tools are allowed: Read")
      )
      expect(yield* Hooks.allowOnlyTools(["Bash"])(input, undefined)).toEqual({})
      expect(yield* Hooks.log<"PreToolUse">()(input, undefined)).toEqual({})
    }))

  it.scoped("a failing PreToolUse hook blocks (fail closed); a failing PostToolUse hook continues", () =>
    Effect.gen(function*() {
      const hooks = Hooks.layer({
        PreToolUse: [{ hooks: [() => Effect.fail("db down")] }],
        PostToolUse: [{ hooks: [() => Effect.die(new Error("bug"))] }],
        Stop: [{ hooks: [() => Effect.fail("x")], onFailure: "block" }]
      })
      const { answers } = yield* Fiber.join(
        yield* run(hooks, [
          ["hook_0", preToolUse("Bash", {})],
          ["hook_1", {
            ...baseInput,
            hook_event_name: "PostToolUse",
            tool_name: "Bash",
            tool_input: {},
            tool_response: 1,
            tool_use_id: "t"
          }],
          ["hook_2", { ...baseInput, hook_event_name: "Stop", stop_hook_active: false }]
        ])
      )
      expect(answers[0]).toMatchObject(success({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: expect.stringContaining("db down")
        }
      }))
      expect(answers[1]).toMatchObject(success({}))
      expect(answers[2]).toMatchObject(success({ decision: "block", reason: expect.stringContaining("x") }))
    }))

  it.scoped("a hook that throws instead of returning an Effect follows onFailure; so does an output that cannot be written as JSON", () =>
    Effect.gen(function*() {
      const hooks = Hooks.layer({
        PreToolUse: [{
          hooks: [() => {
            throw new Error("threw while building its Effect")
          }]
        }],
        // a BigInt cannot be serialized: an invalid output (answered by onFailure, continue here)
        PostToolUse: [{ hooks: [() => Effect.succeed({ reason: "serialized", extra: 1n })] }]
      })
      const { answers } = yield* Fiber.join(
        yield* run(hooks, [
          ["hook_0", preToolUse("Bash", {})],
          ["hook_1", {
            ...baseInput,
            hook_event_name: "PostToolUse",
            tool_name: "Bash",
            tool_input: {},
            tool_response: 1,
            tool_use_id: "t"
          }]
        ])
      )
      expect(answers[0]).toMatchObject(success({
        hookSpecificOutput: {
          permissionDecision: "deny",
          permissionDecisionReason: expect.stringContaining("threw while building its Effect")
        }
      }))
      expect(answers[1]).toEqual({ ...success({}), request_id: expect.any(String) })
    }))

  it.scoped("G6 a hook that runs past its timeout answers by onFailure, and the next hook still runs", () =>
    Effect.gen(function*() {
      let calls = 0
      const called = yield* Deferred.make<void>()
      const hang = Effect.zipRight(Deferred.succeed(called, undefined), Effect.never)
      const hooks = Hooks.layer({
        PreToolUse: [{ hooks: [() => (++calls === 1 ? hang : Effect.succeed(Hooks.allow()))], timeout: 5 }]
      })
      const fiber = yield* run(hooks, [["hook_0", preToolUse("Bash", {})], ["hook_0", preToolUse("Bash", {})]])
      yield* Deferred.await(called)
      yield* sleeping("5 seconds")
      yield* TestClock.adjust("5 seconds")
      const { answers } = yield* Fiber.join(fiber)
      expect(answers[0]).toMatchObject(success({ hookSpecificOutput: { permissionDecision: "deny" } }))
      expect(answers[1]).toMatchObject(success(Hooks.allow()))
    }))

  it.scoped("an input that does not match the event's schema follows onFailure", () =>
    Effect.gen(function*() {
      const hooks = Hooks.layer({ PreToolUse: [{ hooks: [() => Effect.succeed(Hooks.allow())] }] })
      const { answers } = yield* Fiber.join(yield* run(hooks, [["hook_0", { hook_event_name: "PreToolUse" }]]))
      expect(answers[0]).toMatchObject(success({ hookSpecificOutput: { permissionDecision: "deny" } }))
    }))

  it.scoped("hook layers compose: each adds to the hooks provided to it", () =>
    Effect.gen(function*() {
      const audit = Hooks.layer({ PostToolUse: [{ hooks: [Hooks.log()] }] })
      const guard = Hooks.layer({ PreToolUse: [{ matcher: "Bash", hooks: [Hooks.denyTools(["Bash"])] }] })
      const both = Layer.provideMerge(guard, audit)
      const { init } = yield* Fiber.join(yield* run(both, []))
      expect(init["hooks"]).toEqual({
        PostToolUse: [{ hookCallbackIds: ["hook_0"] }],
        PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_1"] }]
      })
    }))

  it.scoped("layerEffect: callbacks can close over services", () =>
    Effect.gen(function*() {
      const hooks = Hooks.layerEffect(Effect.map(Effect.succeed("policy-v2"), (version) => ({
        UserPromptSubmit: [{ hooks: [() => Effect.succeed(Hooks.addContext("UserPromptSubmit", version))] }]
      })))
      const { answers } = yield* Fiber.join(
        yield* run(hooks, [["hook_0", { ...baseInput, hook_event_name: "UserPromptSubmit", prompt: "hi" }]])
      )
      expect(answers[0]).toMatchObject(success(Hooks.addContext("UserPromptSubmit", "policy-v2")))
    }))

  it("HOOK_EVENTS lists 34 events, each with an input schema", () => {
    expect(Hooks.HOOK_EVENTS).toHaveLength(34)
    expect(Object.keys(Hooks.HookInputs).sort()).toEqual([...Hooks.HOOK_EVENTS].sort())
  })
})

describe("Hooks.bashCommand", () => {
  it("reads the command of a Bash call, and nothing else", () => {
    expect(Hooks.bashCommand({ tool_name: "Bash", tool_input: { command: "rm -rf /" } })).toBe("rm -rf /")
    expect(Hooks.bashCommand({ tool_name: "Bash", tool_input: { command: 42 } })).toBe("")
    expect(Hooks.bashCommand({ tool_name: "Bash", tool_input: null })).toBe("")
    expect(Hooks.bashCommand({ tool_name: "Write", tool_input: { command: "rm -rf /" } })).toBe("")
  })
})

describe("Hooks: cancellation", () => {
  it.scoped("control_cancel_request interrupts a callback (its Effect.tryPromise signal aborts); it gets no answer", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<AbortSignal>()
      let calls = 0
      let interrupted = false
      const hooks = Hooks.layer({
        PreToolUse: [{
          hooks: [() =>
            ++calls > 1
              ? Effect.succeed(Hooks.allow())
              : Effect.tryPromise((signal) => {
                Deferred.unsafeDone(started, Exit.succeed(signal))
                return new Promise<Hooks.HookOutput<"PreToolUse">>(() => {})
              }).pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))))]
        }]
      })
      const outcome = yield* Deferred.make<{
        readonly before: boolean
        readonly next: unknown
        readonly answered: boolean
      }>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const call = {
            callback_id: "hook_0",
            input: preToolUse("Bash", { command: "touch x" }),
            tool_use_id: "toolu_1"
          }
          // the script's first request gets the id cli_1
          const pending = yield* Effect.fork(cli.requestRaw("hook_callback", call))
          const signal = yield* Deferred.await(started)
          const before = signal.aborted
          yield* cli.cancel("cli_1")
          // frames are handled in order: once the next call is answered, the cancel has been handled
          const next = yield* cli.requestRaw("hook_callback", call)
          const answered = (yield* cli.received).some((frame) =>
            frame.type === "control_response" && frame.response.request_id === "cli_1"
          )
          yield* Fiber.interrupt(pending)
          yield* Deferred.succeed(outcome, { before, next, answered })
        }), { stepTimeout: "1 hour" })
      const result = yield* ClaudeAgent.session().pipe(
        Effect.zipRight(Deferred.await(outcome)),
        Effect.provide(layer),
        Effect.provide(hooks)
      )
      expect(result.before).toBe(false)
      expect((yield* Deferred.await(started)).aborted).toBe(true)
      expect(interrupted).toBe(true)
      expect(result.answered).toBe(false)
      expect(result.next).toMatchObject(success(Hooks.allow()))
      expect(calls).toBe(2)
    }))
})

describe("Hooks: input schemas", () => {
  const base = {
    ...baseInput,
    prompt_id: "p_1",
    permission_mode: "default",
    agent_type: "main",
    effort: { level: "high" }
  }
  // every field FEATURES §4.3 / sdk.d.ts lists for these events; `satisfies` checks the fields are typed
  const full = {
    SessionStart: {
      ...base,
      hook_event_name: "SessionStart",
      source: "resume",
      model: "claude-sonnet-4-5",
      session_title: "Refactor",
      seconds_since_last_response: 4200,
      context_tokens: 120_000,
      prompt_cache_likely_expired: true,
      estimated_cache_write_usd: 0.45
    } satisfies Hooks.HookInput<"SessionStart">,
    SubagentStop: {
      ...base,
      hook_event_name: "SubagentStop",
      stop_hook_active: false,
      agent_id: "agent_1",
      agent_transcript_path: "/t/agent_1.jsonl",
      agent_type: "Explore",
      last_assistant_message: "done",
      background_tasks: [{ id: "b1", type: "shell", status: "running", description: "tests", command: "npm test" }],
      session_crons: [{ id: "c1", schedule: "0 9 * * 1-5", recurring: true, prompt: "standup" }]
    } satisfies Hooks.HookInput<"SubagentStop">,
    PreModelSwitch: {
      ...base,
      hook_event_name: "PreModelSwitch",
      from_model: "claude-sonnet-4-5",
      to_model: "claude-opus-4-1",
      requested_model: null,
      source: "sdk",
      context_tokens: 50_000,
      prompt_cache_warm: true,
      cache_ttl: "5m",
      estimated_cache_write_usd: 0.9,
      pricing: "catalog"
    } satisfies Hooks.HookInput<"PreModelSwitch">,
    PostModelSwitch: {
      ...base,
      hook_event_name: "PostModelSwitch",
      from_model: "claude-opus-4-1",
      to_model: "claude-sonnet-4-5",
      requested_model: "sonnet",
      source: "auto",
      context_tokens: 0,
      prompt_cache_warm: false,
      cache_ttl: "1h",
      estimated_cache_write_usd: 0,
      pricing: "configured"
    } satisfies Hooks.HookInput<"PostModelSwitch">,
    TaskCreated: {
      ...base,
      hook_event_name: "TaskCreated",
      task_id: "task_1",
      task_subject: "Write tests",
      task_description: "for the hooks",
      teammate_name: "ada",
      team_name: "core"
    } satisfies Hooks.HookInput<"TaskCreated">,
    TaskCompleted: {
      ...base,
      hook_event_name: "TaskCompleted",
      task_id: "task_1",
      task_subject: "Write tests",
      task_description: "for the hooks",
      teammate_name: "ada",
      team_name: "core"
    } satisfies Hooks.HookInput<"TaskCompleted">,
    InstructionsLoaded: {
      ...base,
      hook_event_name: "InstructionsLoaded",
      file_path: "/repo/src/CLAUDE.md",
      memory_type: "Project",
      load_reason: "path_glob_match",
      globs: ["src/**/*.ts"],
      trigger_file_path: "/repo/src/a.ts",
      parent_file_path: "/repo/CLAUDE.md"
    } satisfies Hooks.HookInput<"InstructionsLoaded">,
    PreSkillShellCommand: {
      ...base,
      hook_event_name: "PreSkillShellCommand",
      tool_name: "Bash",
      tool_input: { command: "git status" },
      tool_use_id: "skill_1",
      command_name: "release",
      command_source: "projectSettings",
      invoked_by: "user"
    } satisfies Hooks.HookInput<"PreSkillShellCommand">
  }

  /** Decoding keeps only the fields a schema lists, so a field the schema lacks makes this fail. */
  const decodesWhole = <A, I>(schema: Schema.Schema<A, I>, input: A) =>
    Effect.map(Schema.decodeUnknown(schema)(input), (decoded) => expect(decoded).toEqual(input))

  it.effect("a full input of each event decodes with every field", () =>
    Effect.gen(function*() {
      yield* decodesWhole(Hooks.HookInputs.SessionStart, full.SessionStart)
      yield* decodesWhole(Hooks.HookInputs.SubagentStop, full.SubagentStop)
      yield* decodesWhole(Hooks.HookInputs.PreModelSwitch, full.PreModelSwitch)
      yield* decodesWhole(Hooks.HookInputs.PostModelSwitch, full.PostModelSwitch)
      yield* decodesWhole(Hooks.HookInputs.TaskCreated, full.TaskCreated)
      yield* decodesWhole(Hooks.HookInputs.TaskCompleted, full.TaskCompleted)
      yield* decodesWhole(Hooks.HookInputs.InstructionsLoaded, full.InstructionsLoaded)
      yield* decodesWhole(Hooks.HookInputs.PreSkillShellCommand, full.PreSkillShellCommand)
    }))

  it("the added fields are optional but typed", () => {
    const { seconds_since_last_response: _a, context_tokens: _b, ...older } = full.SessionStart
    expect(Schema.is(Hooks.HookInputs.SessionStart)(older)).toBe(true)
    const {
      cache_ttl: _c,
      context_tokens: _d,
      estimated_cache_write_usd: _e,
      pricing: _f,
      prompt_cache_warm: _g,
      ...bare
    } = full.PreModelSwitch
    expect(Schema.is(Hooks.HookInputs.PreModelSwitch)(bare)).toBe(true)
    expect(Schema.is(Hooks.HookInputs.SessionStart)({ ...full.SessionStart, seconds_since_last_response: "long" }))
      .toBe(false)
    expect(Schema.is(Hooks.HookInputs.InstructionsLoaded)({ ...full.InstructionsLoaded, globs: "src/**" })).toBe(false)
    expect(Schema.is(Hooks.HookInputs.TaskCreated)({ ...full.TaskCreated, teammate_name: 7 })).toBe(false)
  })

  it.scoped("a callback gets the whole input, fields no schema lists included", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const hooks = Hooks.layer({
        SessionStart: [{
          hooks: [(input) =>
            Effect.sync(() => {
              seen.push(input)
              return Hooks.addContext("SessionStart", `idle ${input.seconds_since_last_response ?? 0}s`)
            })]
        }],
        PreModelSwitch: [{
          hooks: [(input) =>
            Effect.succeed({
              hookSpecificOutput: {
                hookEventName: "PreModelSwitch" as const,
                permissionDecision: (input.estimated_cache_write_usd ?? 0) > 0.5 ? "deny" as const : "allow" as const
              }
            })]
        }]
      })
      const fromNewerCli = { ...full.SessionStart, some_future_field: { x: 1 } }
      const { answers } = yield* Fiber.join(
        yield* run(hooks, [["hook_0", fromNewerCli], ["hook_1", full.PreModelSwitch]])
      )
      expect(seen).toEqual([fromNewerCli])
      expect(answers[0]).toMatchObject(success(Hooks.addContext("SessionStart", "idle 4200s")))
      expect(answers[1]).toMatchObject(
        success({ hookSpecificOutput: { hookEventName: "PreModelSwitch", permissionDecision: "deny" } })
      )
    }))
})

describe("Hooks timeouts", () => {
  it.scoped("a matcher timeout that is not a finite number of seconds ≥ 0 fails the session with InvalidOptions", () =>
    Effect.gen(function*() {
      let spawned = false
      const layer = ScriptedCli.layer(() => Effect.sync(() => void (spawned = true)))
      for (const timeout of [Number.NaN, -1, Infinity]) {
        const hooks = Hooks.layer({ PreToolUse: [{ timeout, hooks: [() => Effect.succeed({})] }] })
        const error = yield* ClaudeAgent.session().pipe(Effect.provide([layer, hooks]), Effect.flip)
        expect(error).toMatchObject({ _tag: "InvalidOptions", option: "hooks timeout" })
      }
      expect(spawned).toBe(false)
    }))
})
