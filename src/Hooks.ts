/**
 * React to every lifecycle event of the agent with Effect callbacks: all 34 hook events of Claude Code, with typed
 * inputs and outputs. Callbacks are registered in the `initialize` request (as callback ids) and called by the CLI
 * over the control protocol.
 *
 * A callback that fails, dies, runs past its timeout or returns an output that does not match its event's schema
 * (checked at runtime: a known field with the wrong type or value, a missing or foreign `hookEventName`, a field at the
 * wrong level; unknown fields pass through) answers according to its matcher's `onFailure`: `"block"` (the default
 * for `PreToolUse` and `PermissionRequest`: fail closed) denies the guarded action, `"continue"` (the default
 * elsewhere) lets it proceed. The session never crashes because of a hook.
 *
 * Hook layers compose: `Hooks.layer(more)` adds to the hooks already provided to it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hooks } from "effect-claude-agent"
 *
 * const HooksLive = Hooks.layer({
 *   PreToolUse: [
 *     { matcher: "Bash", hooks: [Hooks.validate((input) => !Hooks.bashCommand(input).includes("rm -rf"), "no rm -rf")] }
 *   ],
 *   PostToolUse: [{ hooks: [(input) => Effect.as(Effect.log(`ran ${input.tool_name}`), Hooks.proceed)] }]
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as internal from "./internal/rules/hooks.js"
import { Hooks } from "./internal/rules/hooks.js"

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

/**
 * Every hook event of Claude Code 2.1.x.
 *
 * @since 0.1.0
 * @category constants
 */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "PreModelSwitch",
  "PostModelSwitch",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "DirectoryAdded",
  "MessageDisplay",
  "PreSkillShellCommand"
] as const

/**
 * @since 0.1.0
 * @category models
 */
export type HookEvent = typeof HOOK_EVENTS[number]

const McpServerProvenance = Schema.Struct({ name: Schema.String, source: Schema.String })

const base = {
  session_id: Schema.String,
  transcript_path: Schema.String,
  cwd: Schema.String,
  prompt_id: opt(Schema.String),
  permission_mode: opt(Schema.String),
  agent_id: opt(Schema.String),
  agent_type: opt(Schema.String),
  effort: opt(Schema.Struct({ level: Schema.String }))
}

const input = <E extends HookEvent, F extends Schema.Struct.Fields>(event: E, fields: F) =>
  Schema.Struct({ ...base, hook_event_name: Schema.Literal(event), ...fields })

const toolFields = { tool_name: Schema.String, tool_input: Schema.Unknown }
const suggestions = opt(Schema.Array(Schema.Unknown))

// Pre/PostModelSwitch: the CLI documents the cost fields as always present; optional here so an older CLI's input
// still reaches the callback
const modelSwitchFields = {
  from_model: Schema.String,
  to_model: Schema.String,
  requested_model: Schema.NullOr(Schema.String),
  source: Schema.String,
  context_tokens: opt(Schema.Number),
  prompt_cache_warm: opt(Schema.Boolean),
  cache_ttl: opt(Schema.String),
  estimated_cache_write_usd: opt(Schema.Number),
  pricing: opt(Schema.String)
}

const taskFields = {
  task_id: Schema.String,
  task_subject: Schema.String,
  task_description: opt(Schema.String),
  teammate_name: opt(Schema.String),
  team_name: opt(Schema.String)
}

/**
 * The input Schema of every hook event (fields beyond the ones listed are kept).
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookInputs = {
  PreToolUse: input("PreToolUse", { ...toolFields, tool_use_id: Schema.String, mcp_server: opt(McpServerProvenance) }),
  PostToolUse: input("PostToolUse", {
    ...toolFields,
    tool_response: Schema.Unknown,
    tool_use_id: Schema.String,
    duration_ms: opt(Schema.Number),
    mcp_server: opt(McpServerProvenance)
  }),
  PostToolUseFailure: input("PostToolUseFailure", {
    ...toolFields,
    tool_use_id: Schema.String,
    error: Schema.String,
    is_interrupt: opt(Schema.Boolean),
    duration_ms: opt(Schema.Number),
    mcp_server: opt(McpServerProvenance)
  }),
  PostToolBatch: input("PostToolBatch", {
    tool_calls: Schema.Array(
      Schema.Struct({
        tool_name: Schema.String,
        tool_input: Schema.Unknown,
        tool_use_id: Schema.String,
        tool_response: opt(Schema.Unknown)
      })
    )
  }),
  Notification: input("Notification", {
    message: Schema.String,
    title: opt(Schema.String),
    notification_type: Schema.String
  }),
  UserPromptSubmit: input("UserPromptSubmit", {
    prompt: Schema.String,
    source: opt(Schema.String),
    session_title: opt(Schema.String)
  }),
  UserPromptExpansion: input("UserPromptExpansion", {
    expansion_type: Schema.String,
    command_name: Schema.String,
    command_args: Schema.String,
    command_source: opt(Schema.String),
    prompt: Schema.String
  }),
  SessionStart: input("SessionStart", {
    source: Schema.String,
    model: opt(Schema.String),
    session_title: opt(Schema.String),
    // resume / fork only
    seconds_since_last_response: opt(Schema.Number),
    context_tokens: opt(Schema.Number),
    prompt_cache_likely_expired: opt(Schema.Boolean),
    estimated_cache_write_usd: opt(Schema.Number)
  }),
  SessionEnd: input("SessionEnd", { reason: Schema.String }),
  Stop: input("Stop", {
    stop_hook_active: Schema.Boolean,
    last_assistant_message: opt(Schema.String),
    background_tasks: opt(Schema.Array(Schema.Unknown)),
    session_crons: opt(Schema.Array(Schema.Unknown))
  }),
  StopFailure: input("StopFailure", {
    error: Schema.String,
    error_details: opt(Schema.Unknown),
    last_assistant_message: opt(Schema.String)
  }),
  SubagentStart: input("SubagentStart", { agent_id: Schema.String, agent_type: Schema.String }),
  SubagentStop: input("SubagentStop", {
    stop_hook_active: Schema.Boolean,
    agent_id: Schema.String,
    agent_transcript_path: Schema.String,
    agent_type: Schema.String,
    last_assistant_message: opt(Schema.String),
    background_tasks: opt(Schema.Array(Schema.Unknown)),
    session_crons: opt(Schema.Array(Schema.Unknown))
  }),
  PreCompact: input("PreCompact", { trigger: Schema.String, custom_instructions: Schema.NullOr(Schema.String) }),
  PostCompact: input("PostCompact", { trigger: Schema.String, compact_summary: Schema.String }),
  PreModelSwitch: input("PreModelSwitch", { ...modelSwitchFields }),
  PostModelSwitch: input("PostModelSwitch", { ...modelSwitchFields }),
  PermissionRequest: input("PermissionRequest", {
    ...toolFields,
    permission_suggestions: suggestions,
    mcp_server: opt(McpServerProvenance)
  }),
  PermissionDenied: input("PermissionDenied", {
    ...toolFields,
    tool_use_id: Schema.String,
    reason: Schema.String,
    mcp_server: opt(McpServerProvenance)
  }),
  Setup: input("Setup", { trigger: Schema.String }),
  TeammateIdle: input("TeammateIdle", { teammate_name: Schema.String, team_name: opt(Schema.String) }),
  TaskCreated: input("TaskCreated", { ...taskFields }),
  TaskCompleted: input("TaskCompleted", { ...taskFields }),
  Elicitation: input("Elicitation", {
    mcp_server_name: Schema.String,
    message: Schema.String,
    mode: opt(Schema.String),
    url: opt(Schema.String),
    elicitation_id: opt(Schema.String),
    requested_schema: opt(Schema.Unknown)
  }),
  ElicitationResult: input("ElicitationResult", {
    mcp_server_name: Schema.String,
    elicitation_id: opt(Schema.String),
    mode: opt(Schema.String),
    action: Schema.String,
    content: opt(Schema.Unknown)
  }),
  ConfigChange: input("ConfigChange", { source: Schema.String, file_path: opt(Schema.String) }),
  WorktreeCreate: input("WorktreeCreate", { name: Schema.String }),
  WorktreeRemove: input("WorktreeRemove", { worktree_path: Schema.String }),
  InstructionsLoaded: input("InstructionsLoaded", {
    file_path: Schema.String,
    memory_type: Schema.String,
    load_reason: Schema.String,
    globs: opt(Schema.Array(Schema.String)),
    trigger_file_path: opt(Schema.String),
    parent_file_path: opt(Schema.String)
  }),
  CwdChanged: input("CwdChanged", { old_cwd: Schema.String, new_cwd: Schema.String }),
  FileChanged: input("FileChanged", { file_path: Schema.String, event: Schema.String }),
  DirectoryAdded: input("DirectoryAdded", { directory: Schema.String, source: Schema.String }),
  MessageDisplay: input("MessageDisplay", {
    turn_id: Schema.String,
    message_id: Schema.String,
    index: Schema.Number,
    final: Schema.Boolean,
    delta: Schema.String
  }),
  PreSkillShellCommand: input("PreSkillShellCommand", {
    ...toolFields,
    tool_use_id: Schema.String,
    command_name: Schema.String,
    command_source: opt(Schema.String),
    invoked_by: Schema.String
  })
} satisfies { readonly [E in HookEvent]: Schema.Schema.Any }

/**
 * The input of a hook event.
 *
 * @since 0.1.0
 * @category models
 */
export type HookInput<E extends HookEvent = HookEvent> = { readonly [K in E]: typeof HookInputs[K]["Type"] }[E]

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionDecision = "allow" | "deny" | "ask" | "defer"

/**
 * The event-specific part of a hook's answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookSpecificOutputs {
  readonly PreToolUse: {
    readonly permissionDecision?: PermissionDecision
    readonly permissionDecisionReason?: string
    readonly updatedInput?: Readonly<Record<string, unknown>>
    readonly additionalContext?: string
  }
  readonly PostToolUse: {
    readonly additionalContext?: string
    readonly classifierContext?: string
    readonly updatedToolOutput?: unknown
    readonly updatedMCPToolOutput?: unknown
  }
  readonly PostToolUseFailure: { readonly additionalContext?: string }
  readonly PostToolBatch: { readonly additionalContext?: string }
  readonly Notification: { readonly additionalContext?: string }
  readonly UserPromptSubmit: {
    readonly additionalContext?: string
    readonly sessionTitle?: string
    readonly suppressOriginalPrompt?: boolean
  }
  readonly UserPromptExpansion: { readonly additionalContext?: string; readonly suppressOriginalPrompt?: boolean }
  readonly SessionStart: {
    readonly additionalContext?: string
    readonly initialUserMessage?: string
    readonly sessionTitle?: string
    readonly watchPaths?: ReadonlyArray<string>
    readonly reloadSkills?: boolean
  }
  readonly SessionEnd: Record<never, never>
  readonly Stop: { readonly additionalContext?: string }
  readonly StopFailure: Record<never, never>
  readonly SubagentStart: { readonly additionalContext?: string }
  readonly SubagentStop: { readonly additionalContext?: string }
  readonly PreCompact: Record<never, never>
  readonly PostCompact: Record<never, never>
  readonly PreModelSwitch: {
    readonly permissionDecision?: "allow" | "deny" | "ask"
    readonly permissionDecisionReason?: string
  }
  readonly PostModelSwitch: { readonly additionalContext?: string }
  readonly PermissionRequest: {
    readonly decision:
      | {
        readonly behavior: "allow"
        readonly updatedInput?: Readonly<Record<string, unknown>>
        readonly updatedPermissions?: ReadonlyArray<unknown>
      }
      | { readonly behavior: "deny"; readonly message?: string; readonly interrupt?: boolean }
  }
  readonly PermissionDenied: { readonly retry?: boolean }
  readonly Setup: { readonly additionalContext?: string }
  readonly TeammateIdle: Record<never, never>
  readonly TaskCreated: Record<never, never>
  readonly TaskCompleted: Record<never, never>
  readonly Elicitation: { readonly action?: "accept" | "decline" | "cancel"; readonly content?: unknown }
  readonly ElicitationResult: { readonly action?: "accept" | "decline" | "cancel"; readonly content?: unknown }
  readonly ConfigChange: Record<never, never>
  readonly WorktreeCreate: { readonly worktreePath: string }
  readonly WorktreeRemove: Record<never, never>
  readonly InstructionsLoaded: Record<never, never>
  readonly CwdChanged: { readonly watchPaths?: ReadonlyArray<string> }
  readonly FileChanged: { readonly watchPaths?: ReadonlyArray<string> }
  readonly DirectoryAdded: Record<never, never>
  readonly MessageDisplay: { readonly displayContent?: string }
  readonly PreSkillShellCommand: {
    readonly permissionDecision?: PermissionDecision
    readonly permissionDecisionReason?: string
    readonly updatedInput?: Readonly<Record<string, unknown>>
  }
}

/**
 * A hook's answer: `{}` lets things continue; `continue: false` stops the agent (`stopReason`); `decision: "block"`
 * (with `reason`) blocks the action; `hookSpecificOutput` carries event-specific fields; `{ async: true }` lets the
 * hook finish in the background. Checked at runtime against the event's schema before it is sent (an output that
 * does not match is a hook failure, see `HookMatcher.onFailure`).
 *
 * @since 0.1.0
 * @category models
 */
export type HookOutput<E extends HookEvent = HookEvent> =
  | {
    readonly continue?: boolean
    readonly suppressOutput?: boolean
    readonly stopReason?: string
    readonly decision?: "approve" | "block"
    readonly systemMessage?: string
    readonly reason?: string
    readonly terminalSequence?: string
    readonly hookSpecificOutput?: { readonly [K in E]: { readonly hookEventName: K } & HookSpecificOutputs[K] }[E]
  }
  | { readonly async: true; readonly asyncTimeout?: number }

/**
 * A hook callback: the event input and the tool use id (for tool events). Any failure, and an output that does not
 * match the event's schema, follows `onFailure`.
 *
 * The callback is interrupted when the CLI cancels it (`control_cancel_request`, e.g. at the matcher's timeout),
 * when it runs past its timeout, or when the session closes; a cancelled callback gets no answer. Non-Effect code
 * that takes an `AbortSignal` gets one from `Effect.tryPromise((signal) => …)`, which aborts in the same cases.
 *
 * @since 0.1.0
 * @category models
 */
export type HookCallback<E extends HookEvent = HookEvent> = (
  input: HookInput<E>,
  toolUseId: string | undefined
) => Effect.Effect<HookOutput<E>, unknown>

/**
 * What a matcher runs: a {@link HookCallback} (an Effect), or a callback written with Promises (the form of the
 * official SDKs' hooks), whose Promise (or value, as `await` allows) is the output, answered when it settles, with no
 * fiber of its own. `signal` aborts when the CLI cancels the callback, when it runs past its timeout, or when the
 * session closes (an Effect callback is interrupted then). A throw, a failure, a rejection and an output that does not
 * match the event's schema follow `onFailure`.
 *
 * @since 0.1.0
 * @category models
 */
export type HookHandler<E extends HookEvent = HookEvent> = (
  input: HookInput<E>,
  toolUseId: string | undefined,
  options: { readonly signal: AbortSignal }
) => Effect.Effect<HookOutput<E>, unknown> | PromiseLike<HookOutput<E>> | HookOutput<E>

/**
 * Callbacks for one event, optionally only for matching tools (`matcher` is a tool name or regex like
 * `"Bash|Edit"`, as in Claude Code settings).
 *
 * @since 0.1.0
 * @category models
 */
export interface HookMatcher<E extends HookEvent = HookEvent> {
  readonly matcher?: string | undefined
  /** The callbacks: Effect or Promise ones ({@link HookHandler}), in any mix. */
  readonly hooks: ReadonlyArray<HookHandler<E>>
  /**
   * Seconds each callback may take (a finite number ≥ 0; anything else fails the session with `InvalidOptions`).
   * Sent to the CLI (which then cancels the callback at that time and blocks the tool) and enforced here too. Leave
   * `undefined` to use the SDK's bound (`Hooks.DEFAULT_TIMEOUT_SECONDS`), which is not sent to the CLI.
   */
  readonly timeout?: number | undefined
  /**
   * What a failing, dying or timed-out callback answers, or one whose output does not match the event's schema.
   * Defaults to `"block"` for PreToolUse and PermissionRequest.
   */
  readonly onFailure?: "continue" | "block" | undefined
}

/**
 * Hook registrations by event.
 *
 * @since 0.1.0
 * @category models
 */
export type HookRegistrations = { readonly [E in HookEvent]?: ReadonlyArray<HookMatcher<E>> }

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly registrations: ReadonlyArray<HookRegistrations>
}

export {
  /**
   * @since 0.1.0
   * @category tags
   */
  Hooks
}

/**
 * How long a callback may take when its matcher has no `timeout`: 60 seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT_SECONDS: 60 = internal.DEFAULT_TIMEOUT_SECONDS

/**
 * Provides hooks, adding to any `Hooks` already provided to this layer (so several layers compose).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (...registrations: ReadonlyArray<HookRegistrations>) => Layer.Layer<Hooks> = internal.layer

/**
 * The service of these hooks alone, as a value: for `Effect.provideService`, which costs a query less than building a
 * layer (an adapter that provides hooks per query, as the Promise API does). Unlike {@link layer}, it does not add to
 * hooks provided already: it replaces them where it is provided.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (...registrations: ReadonlyArray<HookRegistrations>) => Service = internal.make

/**
 * Like {@link layer}, with registrations built by an Effect (so callbacks can close over your services).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEffect: <E, R>(registrations: Effect.Effect<HookRegistrations, E, R>) => Layer.Layer<Hooks, E, R> =
  internal.layerEffect

// ---------------------------------------------------------------------------------------------------------------------
// outputs
// ---------------------------------------------------------------------------------------------------------------------

/**
 * PreToolUse: approve the tool call (skips the permission prompt).
 *
 * @since 0.1.0
 * @category outputs
 */
export const allow = (reason?: string): HookOutput<"PreToolUse"> => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "allow",
    ...(reason !== undefined ? { permissionDecisionReason: reason } : {})
  }
})

/**
 * PreToolUse: block the tool call; `reason` is what the model sees.
 *
 * @since 0.1.0
 * @category outputs
 */
export const deny = (reason: string): HookOutput<"PreToolUse"> => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason }
})

/**
 * PreToolUse: run the tool with a different input. With `decision: "allow"` (the default) the call is also
 * approved; with `"ask"` the usual permission check runs on the new input.
 *
 * @since 0.1.0
 * @category outputs
 */
export const modify = (
  updatedInput: Readonly<Record<string, unknown>>,
  options?: { readonly decision?: "allow" | "ask"; readonly reason?: string }
): HookOutput<"PreToolUse"> => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: options?.decision ?? "allow",
    updatedInput,
    ...(options?.reason !== undefined ? { permissionDecisionReason: options.reason } : {})
  }
})

/**
 * Events whose answer can carry `additionalContext`.
 *
 * @since 0.1.0
 * @category models
 */
export type ContextEvent = {
  readonly [K in HookEvent]: "additionalContext" extends keyof HookSpecificOutputs[K] ? K : never
}[HookEvent]

/**
 * Adds context for the model (PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, Stop, …).
 *
 * @since 0.1.0
 * @category outputs
 */
export const addContext = <E extends ContextEvent>(
  event: E,
  additionalContext: string
): { readonly hookSpecificOutput: { readonly hookEventName: E; readonly additionalContext: string } } => ({
  hookSpecificOutput: { hookEventName: event, additionalContext }
})

/**
 * Stops the agent: the turn ends with `stopReason`.
 *
 * @since 0.1.0
 * @category outputs
 */
export const stop = (stopReason: string): HookOutput<never> => ({ continue: false, stopReason })

/**
 * Blocks the action of any event that can be blocked (`decision: "block"`), telling the model why.
 *
 * @since 0.1.0
 * @category outputs
 */
export const block = (reason: string): HookOutput<never> => ({ decision: "block", reason })

/**
 * Lets things continue unchanged.
 *
 * @since 0.1.0
 * @category outputs
 */
export const proceed: HookOutput<never> = {}

// ---------------------------------------------------------------------------------------------------------------------
// callbacks
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A PreToolUse callback that denies the call when `predicate` is false.
 *
 * @since 0.1.0
 * @category callbacks
 */
export const validate: (
  predicate: (input: HookInput<"PreToolUse">) => boolean,
  reason: string
) => HookCallback<"PreToolUse"> = internal.validate

/**
 * The command of a `Bash` tool call (`tool_input.command`), or `""` for any other tool or input. Tool inputs are
 * `unknown` on the wire; this saves digging the command out in every guardrail.
 *
 * @since 0.1.0
 * @category inputs
 */
export const bashCommand = (input: { readonly tool_name: string; readonly tool_input: unknown }): string => {
  if (input.tool_name !== "Bash" || !Predicate.hasProperty(input.tool_input, "command")) return ""
  return typeof input.tool_input.command === "string" ? input.tool_input.command : ""
}

/**
 * A callback that logs the event (with `Effect.log`, annotated with the event name) and continues.
 *
 * @since 0.1.0
 * @category callbacks
 */
export const log: <E extends HookEvent>(
  format?: (input: HookInput<E>) => string
) => HookCallback<E> = internal.log

/**
 * A PreToolUse callback that denies the listed tools.
 *
 * @since 0.1.0
 * @category callbacks
 */
export const denyTools: (tools: ReadonlyArray<string>, reason?: string) => HookCallback<"PreToolUse"> =
  internal.denyTools

/**
 * A PreToolUse callback that denies every tool except the listed ones.
 *
 * @since 0.1.0
 * @category callbacks
 */
export const allowOnlyTools: (tools: ReadonlyArray<string>, reason?: string) => HookCallback<"PreToolUse"> =
  internal.allowOnlyTools
