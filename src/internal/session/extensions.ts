/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { InvalidOptions, type SessionError } from "../../AgentError.js"
import type { Extensions, Options } from "../../AgentOptions.js"
import { fromEffect, type Handler } from "../protocol/handler.js"
import { HookInputs, Hooks } from "../../Hooks.js"
import type * as Message from "../../Message.js"
import type { Owned as ControlProtocol } from "../protocol/controlProtocol.js"
import { Permissions } from "../../Permissions.js"
import { contribution as elicitationContribution, declined } from "../mcp/elicitation.js"
import { contribution as hooksContributionOf, invalidTimeout as invalidHookTimeout } from "../rules/hooks.js"
import { type InternalStore, contribution as permissionsContribution, makeStore } from "../rules/permissions.js"
import * as RuleEnforcement from "../rules/ruleEnforcement.js"
import { type McpServersControl, noMcpServers, contribution as sdkMcpContribution } from "../mcp/sdkMcp.js"
import type { Contribution } from "../protocol/contribution.js"
import * as Mirror from "../transcript/mirror.js"
import { Mirror as MirrorSettings, TranscriptStore } from "../transcript/store.js"
import { unknownHookEvents } from "./options.js"
import { contribution as userDialogContribution, unanswered as unansweredDialog } from "./userDialog.js"

const HOOK_EVENTS: ReadonlyArray<string> = Object.keys(HookInputs)

/** What the optional services contribute to a session, merged. @internal */
export interface SessionExtensions extends Extensions {
  readonly handlers: ReadonlyMap<string, Handler>
  readonly onProtocol: (protocol: ControlProtocol) => Effect.Effect<void, never, Scope.Scope>
  readonly onInitialized: (response: Message.InitializeResponse) => Effect.Effect<void, SessionError>
  readonly onMessage: (message: Message.SdkMessage) => boolean
  /** Fails with the first contribution's failure; `undefined` when no contribution can fail. */
  readonly failure: Effect.Effect<never, SessionError> | undefined
  readonly mcpServers: McpServersControl
}

/** The effects one after the other (none or one of them, the common case, without `forEach`'s loop). */
const all = <E, R>(effects: ReadonlyArray<Effect.Effect<void, E, R>>): Effect.Effect<void, E, R> =>
  effects.length === 0 ? Effect.void : effects.length === 1 ? effects[0]! : Effect.forEach(effects, (e) => e, {
    discard: true
  })

/**
 * Merges contributions; later ones win for `initialize` keys and handler subtypes. `mcpServers` are the session's
 * in-process MCP servers.
 *
 * @internal
 */
export const combine = (
  contributions: ReadonlyArray<Contribution>,
  mcpServers: McpServersControl = noMcpServers
): SessionExtensions => {
  const handlers = new Map<string, Handler>()
  const initialize: Record<string, unknown> = {}
  const allowedTools: Array<string> = []
  const cliDeny: Array<string> = []
  const cliAsk: Array<string> = []
  let permissionPromptStdio = false
  let sessionMirror = false
  const onProtocol: Array<NonNullable<Contribution["onProtocol"]>> = []
  const onInitialized: Array<NonNullable<Contribution["onInitialized"]>> = []
  const onMessage: Array<NonNullable<Contribution["onMessage"]>> = []
  const failures: Array<Effect.Effect<never, SessionError>> = []
  for (const c of contributions) {
    for (const [subtype, handler] of c.handlers ?? []) handlers.set(subtype, handler)
    Object.assign(initialize, c.initialize)
    allowedTools.push(...(c.allowedTools ?? []))
    cliDeny.push(...(c.cliPermissions?.deny ?? []))
    cliAsk.push(...(c.cliPermissions?.ask ?? []))
    if (c.permissionPromptStdio === true) permissionPromptStdio = true
    if (c.sessionMirror === true) sessionMirror = true
    if (c.onProtocol) onProtocol.push(c.onProtocol)
    if (c.onInitialized) onInitialized.push(c.onInitialized)
    if (c.onMessage) onMessage.push(c.onMessage)
    if (c.failure) failures.push(c.failure)
  }
  return {
    handlers,
    initialize,
    allowedTools,
    ...(cliDeny.length > 0 || cliAsk.length > 0 ? { cliPermissions: { deny: cliDeny, ask: cliAsk } } : {}),
    permissionPromptStdio,
    sessionMirror,
    onProtocol: (protocol) => all(onProtocol.map((f) => f(protocol))),
    onInitialized: (response) => all(onInitialized.map((f) => f(response))),
    onMessage: (message) => {
      let keep = true
      for (const f of onMessage) if (!f(message)) keep = false
      return keep
    },
    failure: failures.length === 0 ? undefined : failures.length === 1 ? failures[0] : Effect.raceAll(failures),
    mcpServers
  }
}

/** Without an `onElicitation` handler the official SDK declines MCP elicitations. */
const declineElicitation: Handler = fromEffect(() => Effect.succeed(declined))

/** The contributions every session has (without `onUserDialog`, dialogs are left unanswered). @internal */
export const defaults: Contribution = {
  handlers: new Map([["elicitation", declineElicitation], ["request_user_dialog", unansweredDialog]])
}

/**
 * Collects the contributions of the optional services present in the environment (and of the options) for one
 * session.
 *
 * @internal
 */
export const collectExtensions = (
  options: Options,
  store?: InternalStore
): Effect.Effect<SessionExtensions & { readonly permissionStore: InternalStore }, InvalidOptions, Scope.Scope> =>
  Effect.gen(function*() {
    const contributions: Array<Contribution> = [defaults]
    const permissionStore = store ?? makeStore()
    const permissions = yield* Effect.serviceOption(Permissions)
    if (Option.isSome(permissions)) {
      const timeout = Duration.decodeUnknown(permissions.value.timeout)
      if (Option.isNone(timeout)) {
        return yield* Effect.fail(
          new InvalidOptions({
            option: "Permissions timeout",
            description: `${String(permissions.value.timeout)} is not a duration`
          })
        )
      }
      contributions.push(permissionsContribution(permissions.value, timeout.value, options, permissionStore))
    }
    // a rule set's deny and ask rules also go to the CLI's settings and to a PreToolUse hook (see ruleEnforcement.ts)
    const rules = Option.isSome(permissions) ? permissions.value.rules ?? [] : []
    const cwd = options.cwd ?? process.cwd()
    contributions.push({ cliPermissions: RuleEnforcement.cliPermissions(rules, cwd) })
    const rulesHooks = RuleEnforcement.hooks(rules, cwd)
    const hooks = yield* Effect.serviceOption(Hooks)
    const registrations = [
      ...(Option.isSome(hooks) ? hooks.value.registrations : []),
      ...(rulesHooks === undefined ? [] : [rulesHooks])
    ]
    const badEvent = unknownHookEvents(registrations, HOOK_EVENTS)
    if (badEvent !== undefined) return yield* Effect.fail(badEvent)
    const badTimeout = invalidHookTimeout(registrations)
    if (badTimeout !== undefined) {
      return yield* Effect.fail(
        new InvalidOptions({
          option: "hooks timeout",
          description: `${String(badTimeout)} is not a finite number of seconds ≥ 0`
        })
      )
    }
    const hooksContribution = hooksContributionOf(registrations, HookInputs)
    if (hooksContribution !== undefined) contributions.push(hooksContribution)
    const sdkMcp = yield* sdkMcpContribution(options)
    contributions.push(sdkMcp)
    if (options.onElicitation !== undefined) contributions.push(elicitationContribution(options.onElicitation))
    const transcripts = yield* Effect.serviceOption(TranscriptStore)
    if (Option.isSome(transcripts)) {
      const mirroring = yield* Mirror.make(transcripts.value, yield* MirrorSettings, options)
      contributions.push({ sessionMirror: true, ...mirroring })
    }
    if (options.onUserDialog !== undefined) {
      contributions.push(userDialogContribution(options.onUserDialog, options.supportedDialogKinds ?? []))
    }
    return { ...combine(contributions, sdkMcp.mcpServers), permissionStore }
  })
