/**
 * Decide which tool calls run: a service that answers the CLI's `can_use_tool` requests. **Fail closed**: a
 * decision that times out, fails, dies, is interrupted or is not a valid `PermissionResult` (checked at runtime) is a
 * deny with a clear message, and the channel keeps working for the next request.
 *
 * Provide one of the layers to a `query` or `session` (with `Effect.provide`); without a `Permissions` service the
 * CLI applies its own rules (anything that needs approval is denied).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permissions } from "effect-claude-agent"
 *
 * const policy = Permissions.rules({
 *   allow: ["Read", "Grep", "Bash(npm test:*)", "Edit(./src/**)"],
 *   deny: ["Bash(rm:*)", "WebFetch"],
 *   fallback: (request) =>
 *     Effect.succeed(Permissions.deny(`${request.toolName} needs a human`))
 * })
 *
 * const PermissionsLive = Permissions.layer(policy, { timeout: "2 minutes" })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/rules/permissions.js"
import type * as Message from "./Message.js"

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionBehavior = "allow" | "deny" | "ask"

/**
 * Where a permission update is stored by the CLI.
 *
 * @since 0.1.0
 * @category models
 */
export type PermissionUpdateDestination = "userSettings" | "projectSettings" | "localSettings" | "session" | "cliArg"

/**
 * @since 0.1.0
 * @category models
 */
export interface PermissionRuleValue {
  readonly toolName: string
  readonly ruleContent?: string | undefined
}

/**
 * A permission change, as the CLI suggests it (`permission_suggestions`) and accepts it back (`updatedPermissions`).
 *
 * @since 0.1.0
 * @category models
 */
export type PermissionUpdate =
  | {
    readonly type: "addRules" | "replaceRules" | "removeRules"
    readonly rules: ReadonlyArray<PermissionRuleValue>
    readonly behavior: PermissionBehavior
    readonly destination: PermissionUpdateDestination
  }
  | { readonly type: "setMode"; readonly mode: string; readonly destination: PermissionUpdateDestination }
  | {
    readonly type: "addDirectories" | "removeDirectories"
    readonly directories: ReadonlyArray<string>
    readonly destination: PermissionUpdateDestination
  }

/**
 * A `can_use_tool` request with everything the CLI sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface PermissionRequest {
  readonly toolName: string
  readonly input: Readonly<Record<string, unknown>>
  readonly toolUseId: string
  /** Changes the CLI suggests for "always allow" (return some of them as `updatedPermissions`). */
  readonly suggestions: ReadonlyArray<PermissionUpdate>
  readonly blockedPath?: string | undefined
  readonly decisionReason?: string | undefined
  readonly decisionReasonType?: string | undefined
  readonly title?: string | undefined
  readonly displayName?: string | undefined
  readonly description?: string | undefined
  /** Set when a subagent made the call. */
  readonly agentId?: string | undefined
  /** For `mcp__*` tools: the server and where it came from (`sdk` = this SDK's in-process server). */
  readonly mcpServer?: { readonly name: string; readonly source: string } | undefined
  /** `true` for tools that need a human (AskUserQuestion). */
  readonly requiresUserInteraction?: boolean | undefined
  /** The envelope request id. */
  readonly requestId: string
  /** The working directory of the session (for relative path rules). */
  readonly cwd: string
  /** The session's permission store: remembered rules and mode. */
  readonly store: PermissionStore
  /**
   * For non-Effect code (`fetch`, SDKs taking an `AbortSignal`): aborted when the decision is abandoned — the CLI
   * withdraws the request (`control_cancel_request`), the decision times out, or the session closes. An Effect
   * policy is interrupted in the same cases, so it does not need this.
   */
  readonly signal: AbortSignal
  /** The request body as the CLI sent it. */
  readonly raw: Message.ControlRequestBody
}

/**
 * The decision. `allow` may change the input the tool runs with (`updatedInput`) and accept suggested permission
 * changes (`updatedPermissions`); `deny` tells the model why (`message`) and can stop the turn (`interrupt`). A
 * decision that does not have this shape at runtime (a cast, untyped code) is a deny saying what was wrong.
 *
 * @since 0.1.0
 * @category models
 */
export type PermissionResult =
  | {
    readonly behavior: "allow"
    readonly updatedInput?: Readonly<Record<string, unknown>> | undefined
    readonly updatedPermissions?: ReadonlyArray<PermissionUpdate> | undefined
    readonly decisionClassification?: DecisionClassification | undefined
    /** Accepted for parity with the official type; the answer always carries the request's own tool use id. */
    readonly toolUseID?: string | undefined
  }
  | {
    readonly behavior: "deny"
    readonly message: string
    readonly interrupt?: boolean | undefined
    readonly decisionClassification?: DecisionClassification | undefined
    /** Accepted for parity with the official type; the answer always carries the request's own tool use id. */
    readonly toolUseID?: string | undefined
  }

/**
 * How the user decided (the CLI records it in the transcript): once, permanently, or rejected.
 *
 * @since 0.1.0
 * @category models
 */
export type DecisionClassification = "user_temporary" | "user_permanent" | "user_reject"

/**
 * A permission policy: an Effect per request. A policy made by {@link rules} also states its rules (`rules`), so
 * that a session can enforce its deny and ask rules on the tool calls the CLI never asks about (see {@link layer}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy<E = never, R = never> {
  (request: PermissionRequest): Effect.Effect<PermissionResult, E, R>
  /**
   * The rules this policy applies, in the order it checks them, when {@link rules} made it. Leave `undefined` for a
   * policy of your own: it decides only what the CLI asks.
   */
  readonly rules?: ReadonlyArray<Rule> | undefined
}

/**
 * One permission rule: `allow`, `deny` or `ask` a call that `rule` (`"Bash(npm test:*)"`, `"Read(./src/**)"`, …)
 * matches; `message` is what the model is told when a deny rule refuses it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  readonly behavior: PermissionBehavior
  readonly rule: string
  readonly message?: string | undefined
}

/**
 * Per-session permission state: a mode and remembered rules. `allow` / `deny` modes answer every request without
 * asking the policy; `ask` (the default) consults remembered rules, then the policy. Rules from "always allow"
 * suggestions the policy accepted are remembered here.
 *
 * @since 0.1.0
 * @category models
 */
export interface PermissionStore {
  /** What happens to a request no rule matches: allow it, deny it, or ask the callback. */
  readonly mode: () => "allow" | "deny" | "ask"
  /** Changes the fallback for requests no rule matches. */
  readonly setMode: (mode: "allow" | "deny" | "ask") => void
  /** Remembered rules, in the order they were added. */
  readonly rules: () => ReadonlyArray<{ readonly behavior: "allow" | "deny"; readonly rule: string }>
  /** Remembers a rule (`Bash(npm test:*)`, `Read`, …) for the rest of the session. */
  readonly addRule: (behavior: "allow" | "deny", rule: string) => void
  /** Every permission update accepted in this session. */
  readonly accepted: () => ReadonlyArray<PermissionUpdate>
}

/**
 * A decision as a service hands it over: an Effect (run on a fiber of its own), or a Promise (e.g. from a Promise
 * callback: answered when it settles, with no fiber of its own). Both are bounded by the service's `timeout`.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = Effect.Effect<PermissionResult, unknown> | PromiseLike<PermissionResult>

/**
 * The service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Decides one request; any failure, and a result that is not a valid decision, is turned into a deny. A
   * {@link Policy} is one.
   */
  readonly decide: (request: PermissionRequest) => Decision
  /** How long one decision may take before it becomes a deny. */
  readonly timeout: Duration.DurationInput
  /**
   * The rules `decide` applies, when it is made of rules ({@link rules}): a session hands their deny and ask rules
   * to the CLI as its own permission settings and checks every tool call against them in a `PreToolUse` hook, so
   * that they hold for the calls the CLI decides by itself (see SECURITY.md, "Rules by tool family").
   */
  readonly rules?: ReadonlyArray<Rule> | undefined
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Permissions extends Context.Tag("effect-claude-agent/Permissions")<Permissions, Service>() {}

/**
 * The default decision timeout: 5 minutes (the CLI itself waits forever for an answer).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT: Duration.DurationInput = "5 minutes"

/**
 * A `Permissions` layer from a policy. The policy's requirements are captured when the layer is built. A policy made
 * by {@link rules} and passed as it is brings its rules along: their deny and ask rules then also hold for the tool
 * calls the CLI never asks about (reads inside its working directory, read-only commands, edits in `acceptEdits`
 * mode). A policy that wraps one made by `rules` decides only what the CLI asks: observe or extend a rule set through
 * its `fallback` instead.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, R>(
  policy: Policy<E, R>,
  options?: { readonly timeout?: Duration.DurationInput | undefined }
): Layer.Layer<Permissions, never, R> => Layer.effect(Permissions, internal.make(policy, options))

/**
 * A `Permissions` layer from a plain callback: the callback is the policy, asked about every tool call the CLI
 * does not decide itself. The same as {@link layer}; the counterpart of the official SDKs' `canUseTool` option. The
 * callback's requirements are captured when the layer is built; a decision that takes longer than `timeout`
 * (default {@link DEFAULT_TIMEOUT}), fails, dies or is interrupted is a deny.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Permissions } from "effect-claude-agent"
 *
 * const PermissionsLive = Permissions.fromCallback(
 *   (request) =>
 *     Effect.succeed(
 *       request.toolName === "Bash" && String(request.input["command"]).startsWith("rm ")
 *         ? Permissions.deny("no rm")
 *         : Permissions.allow()
 *     ),
 *   { timeout: "30 seconds" }
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const fromCallback: <E, R>(
  callback: Policy<E, R>,
  options?: { readonly timeout?: Duration.DurationInput | undefined }
) => Layer.Layer<Permissions, never, R> = layer

/**
 * A `Permissions` layer from a Promise callback (the form of the official SDKs' `canUseTool`): the callback is called
 * for every request the CLI does not decide itself, and its Promise (or value) is the decision, answered when it
 * settles; it reads `request.signal` to learn that the decision was abandoned. A decision that takes longer than
 * `timeout` (default {@link DEFAULT_TIMEOUT}), rejects, throws or is not a valid `PermissionResult` is a deny.
 *
 * @since 0.1.0
 * @category layers
 */
export const fromPromise = (
  callback: (request: PermissionRequest) => PromiseLike<PermissionResult> | PermissionResult,
  options?: { readonly timeout?: Duration.DurationInput | undefined }
): Layer.Layer<Permissions> => Layer.succeed(Permissions, makePromise(callback, options))

/**
 * The service {@link fromPromise} provides, as a value: for `Effect.provideService`, which costs a query less than
 * building a layer (an adapter that provides it per query, as the Promise API does).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePromise: (
  callback: (request: PermissionRequest) => PromiseLike<PermissionResult> | PermissionResult,
  options?: { readonly timeout?: Duration.DurationInput | undefined }
) => Service = internal.makePromise

/**
 * Allows every tool call.
 *
 * @since 0.1.0
 * @category layers
 */
export const allowAll: Layer.Layer<Permissions> = Layer.succeed(
  Permissions,
  Permissions.of({ decide: internal.allowPolicy, timeout: DEFAULT_TIMEOUT })
)

/**
 * Denies every tool call that needs approval.
 *
 * @since 0.1.0
 * @category layers
 */
export const denyAll: Layer.Layer<Permissions> = Layer.succeed(
  Permissions,
  Permissions.of({ decide: internal.denyPolicy, timeout: DEFAULT_TIMEOUT })
)

/**
 * An allow decision.
 *
 * @since 0.1.0
 * @category constructors
 */
export const allow = (options?: {
  readonly updatedInput?: Readonly<Record<string, unknown>> | undefined
  readonly updatedPermissions?: ReadonlyArray<PermissionUpdate> | undefined
}): PermissionResult => ({ behavior: "allow", ...options })

/**
 * A deny decision; `interrupt: true` also stops the turn.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deny = (message: string, options?: { readonly interrupt?: boolean }): PermissionResult => ({
  behavior: "deny",
  message,
  ...options
})

/**
 * Whether one rule, as an allow rule, matches a request. A rule is `"Tool"` or `"Tool(content)"`: `Bash(npm test:*)`
 * (the command's first words), `Bash(git status)` (the whole command, `*` wildcards), `Read(./src/**)` /
 * `Edit(/abs/**)` (path globs, relative to the session's cwd, matched on the real location with symlinks resolved),
 * `WebFetch(domain:x.com)`, `mcp__server` (all tools of a server), `mcp__server__tool`. `Read`, `Edit`, `Write` and
 * `Bash` name tool families: `Read` covers every tool that only reads files (`Read`, `Grep`, `Glob`, `LS`,
 * `NotebookRead`), `Edit` and `Write` every tool that changes them (`Edit`, `MultiEdit`, `Write`, `NotebookEdit`),
 * `Bash` every tool that runs a Bash command (`Bash`, `Monitor`); a search (`Grep`, `Glob`) matches a path rule
 * only when the rule covers everything under the directory it searches (see SECURITY.md). A Bash command is judged on
 * its parse (tree-sitter-bash): a compound command (`a && b`, `a | b`, `a; b`) matches only if every part does, and
 * one that substitutes, backgrounds, writes a file or runs anything more never matches a content rule (see
 * SECURITY.md). An Effect because the Bash grammar is loaded when a rule needs it (by each call: a
 * policy that decides many requests is `rules`, which loads it once).
 *
 * @since 0.1.0
 * @category rules
 */
export const matches: (
  rule: string,
  request: Pick<PermissionRequest, "toolName" | "input" | "cwd">
) => Effect.Effect<boolean> = internal.matches

/**
 * A rule-based policy. With the object form, deny rules are checked first, then ask rules (which go to the
 * fallback), then allow rules; with a list, the first matching rule wins. Requests no rule matches go to
 * `fallback` (default: deny). A deny or ask rule matches a Bash command when any simple command anywhere in it
 * does (inside substitutions too); an allow rule only when the command is simple commands joined by `&&`, `||`,
 * `;`, `|` and newlines that allow rules all match (see {@link matches} and SECURITY.md). A deny or ask `Read(path)`
 * rule also refuses changing the files it covers, and a deny or ask rule on a search refuses it when it could reach a
 * path the rule covers.
 *
 * The policy states its rules (`rules`): given to {@link layer} as it is, its deny and ask rules are also handed to
 * the CLI and checked on every tool call, including those the CLI never asks about.
 *
 * @since 0.1.0
 * @category policies
 */
export const rules: <E = never, R = never>(
  rules:
    | {
      readonly allow?: ReadonlyArray<string>
      readonly deny?: ReadonlyArray<string>
      readonly ask?: ReadonlyArray<string>
      readonly fallback?: Policy<E, R>
    }
    | ReadonlyArray<Rule>,
  fallback?: Policy<E, R>
) => Policy<E, R> = internal.rules

/**
 * Hands `AskUserQuestion` calls to your code (an Effect that may wait as long as it needs, e.g. for a web UI)
 * and answers with the chosen labels; other tools go to `fallback` (default: deny).
 *
 * @since 0.1.0
 * @category policies
 */
export const askUserQuestion: <E = never, R = never, E2 = never, R2 = never>(
  answer: (
    questions: ReadonlyArray<Question>,
    request: PermissionRequest
  ) => Effect.Effect<Readonly<Record<string, string>>, E, R>,
  fallback?: Policy<E2, R2>
) => Policy<E | E2, R | R2> = internal.askUserQuestion

/**
 * A question of an `AskUserQuestion` tool call.
 *
 * @since 0.1.0
 * @category models
 */
export interface Question {
  readonly question: string
  readonly header?: string | undefined
  readonly options: ReadonlyArray<{ readonly label: string; readonly description?: string | undefined }>
  readonly multiSelect?: boolean | undefined
}

/**
 * Creates an empty per-session permission store (the SDK makes one per session; exposed for tests).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStore: () => PermissionStore = internal.makeStore
