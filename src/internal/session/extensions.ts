/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type ControlError, InvalidOptions, type SessionError } from "../../AgentError.js"
import type { Extensions, McpServerConfig, Options } from "../../AgentOptions.js"
import { effectHandler, type InboundHandler } from "../../ControlProtocol.js"
import { HookInputs, Hooks } from "../../Hooks.js"
import type * as Message from "../../Message.js"
import type { Owned as ControlProtocol } from "../protocol/controlProtocol.js"
import { Permissions } from "../../Permissions.js"
import { contribution as elicitationContribution, declined } from "../mcp/elicitation.js"
import { contribution as hooksContributionOf, invalidTimeout as invalidHookTimeout } from "../rules/hooks.js"
import { type InternalStore, contribution as permissionsContribution, makeStore } from "../rules/permissions.js"
import { contribution as sdkMcpContribution } from "../mcp/sdkMcp.js"
import * as Mirror from "../transcript/mirror.js"
import { Mirror as MirrorSettings, TranscriptStore } from "../transcript/store.js"
import { unknownHookEvents } from "./options.js"
import { contribution as userDialogContribution, unanswered as unansweredDialog } from "./userDialog.js"

const HOOK_EVENTS: ReadonlyArray<string> = Object.keys(HookInputs)

/**
 * A session's in-process MCP servers, as `setMcpServers` and `mcpServerStatus` see them.
 *
 * @internal
 */
export interface McpServersControl {
  /**
   * Connects the in-process servers of `servers` that are new, disconnects those left out, then calls `send` with the
   * `servers` payload of `mcp_set_servers` (calls are serialized).
   */
  readonly set: <A, E>(
    servers: Readonly<Record<string, McpServerConfig>>,
    send: (servers: Readonly<Record<string, unknown>>) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
  /** Merges what the servers know about themselves (e.g. a proxy's upstream connection) into the CLI's statuses. */
  readonly status: (
    statuses: ReadonlyArray<Message.McpServerStatus>
  ) => Effect.Effect<ReadonlyArray<Message.McpServerStatus>>
  /** Explains the CLI's refusal of `mcp_reconnect` when the server is one of this session's in-process servers. */
  readonly reconnectFailed: (serverName: string, error: ControlError) => ControlError
}

/** Sends the servers as they are, reports the CLI's statuses as they are. @internal */
export const noMcpServers: McpServersControl = {
  set: (servers, send) => send(servers),
  status: Effect.succeed,
  reconnectFailed: (_, error) => error
}

/**
 * What one optional feature (permissions, hooks, in-process MCP servers, …) contributes to a session. Every field
 * is optional; contributions are merged by {@link combine}.
 *
 * @internal
 */
export interface Contribution {
  /** Pass `--permission-prompt-tool=stdio`. */
  readonly permissionPromptStdio?: boolean | undefined
  /** Pass `--session-mirror`. */
  readonly sessionMirror?: boolean | undefined
  /** Fields merged (shallowly) into the `initialize` request. */
  readonly initialize?: Readonly<Record<string, unknown>> | undefined
  /** Extra `allowedTools` entries. */
  readonly allowedTools?: ReadonlyArray<string> | undefined
  /** Inbound control request handlers by subtype. */
  readonly handlers?: ReadonlyMap<string, InboundHandler> | undefined
  /** Runs once the protocol exists (before `initialize` is written), e.g. to send SDK→CLI requests later. */
  readonly onProtocol?: ((protocol: ControlProtocol) => Effect.Effect<void, never, Scope.Scope>) | undefined
  /** Runs once the CLI answered `initialize`; a failure fails the session. */
  readonly onInitialized?: ((response: Message.InitializeResponse) => Effect.Effect<void, SessionError>) | undefined
  /**
   * Sees every SDK message on the reader, synchronously (e.g. to check `system/init`). Return `false` to keep the
   * message from the consumer. Must be fast and must not throw.
   */
  readonly onMessage?: ((message: Message.SdkMessage) => boolean) | undefined
  /**
   * Fails when this feature finds the session unusable (e.g. an in-process MCP server did not connect); absent when it
   * cannot (then no fiber waits for it).
   */
  readonly failure?: Effect.Effect<never, SessionError> | undefined
  /** The session's in-process MCP servers (one contribution has them). */
  readonly mcpServers?: McpServersControl | undefined
}

/** What the optional services contribute to a session, merged. @internal */
export interface SessionExtensions extends Extensions {
  readonly handlers: ReadonlyMap<string, InboundHandler>
  readonly onProtocol: (protocol: ControlProtocol) => Effect.Effect<void, never, Scope.Scope>
  readonly onInitialized: (response: Message.InitializeResponse) => Effect.Effect<void, SessionError>
  readonly onMessage: (message: Message.SdkMessage) => boolean
  /** Fails with the first contribution's failure; `undefined` when no contribution can fail. */
  readonly failure: Effect.Effect<never, SessionError> | undefined
  readonly mcpServers: McpServersControl
}

/** Merges contributions; later ones win for `initialize` keys and handler subtypes. @internal */
export const combine = (contributions: ReadonlyArray<Contribution>): SessionExtensions => {
  const handlers = new Map<string, InboundHandler>()
  const initialize: Record<string, unknown> = {}
  const allowedTools: Array<string> = []
  let permissionPromptStdio = false
  let sessionMirror = false
  const onProtocol: Array<NonNullable<Contribution["onProtocol"]>> = []
  const onInitialized: Array<NonNullable<Contribution["onInitialized"]>> = []
  const onMessage: Array<NonNullable<Contribution["onMessage"]>> = []
  const failures: Array<Effect.Effect<never, SessionError>> = []
  let mcpServers = noMcpServers
  for (const c of contributions) {
    for (const [subtype, handler] of c.handlers ?? []) handlers.set(subtype, handler)
    Object.assign(initialize, c.initialize)
    allowedTools.push(...(c.allowedTools ?? []))
    if (c.permissionPromptStdio === true) permissionPromptStdio = true
    if (c.sessionMirror === true) sessionMirror = true
    if (c.onProtocol) onProtocol.push(c.onProtocol)
    if (c.onInitialized) onInitialized.push(c.onInitialized)
    if (c.onMessage) onMessage.push(c.onMessage)
    if (c.failure) failures.push(c.failure)
    if (c.mcpServers) mcpServers = c.mcpServers
  }
  return {
    handlers,
    initialize,
    allowedTools,
    permissionPromptStdio,
    sessionMirror,
    onProtocol: (protocol) =>
      onProtocol.length === 0 ? Effect.void : Effect.forEach(onProtocol, (f) => f(protocol), { discard: true }),
    onInitialized: (response) =>
      onInitialized.length === 0 ? Effect.void : Effect.forEach(onInitialized, (f) => f(response), { discard: true }),
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
const declineElicitation: InboundHandler = effectHandler(() => Effect.succeed(declined))

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
    const hooks = yield* Effect.serviceOption(Hooks)
    const badEvent = unknownHookEvents(Option.isSome(hooks) ? hooks.value.registrations : [], HOOK_EVENTS)
    if (badEvent !== undefined) return yield* Effect.fail(badEvent)
    const badTimeout = invalidHookTimeout(Option.isSome(hooks) ? hooks.value.registrations : [])
    if (badTimeout !== undefined) {
      return yield* Effect.fail(
        new InvalidOptions({
          option: "hooks timeout",
          description: `${String(badTimeout)} is not a finite number of seconds ≥ 0`
        })
      )
    }
    const hooksContribution = hooksContributionOf(Option.isSome(hooks) ? hooks.value.registrations : [], HookInputs)
    if (hooksContribution !== undefined) contributions.push(hooksContribution)
    contributions.push(yield* sdkMcpContribution(options))
    if (options.onElicitation !== undefined) contributions.push(elicitationContribution(options.onElicitation))
    const transcripts = yield* Effect.serviceOption(TranscriptStore)
    if (Option.isSome(transcripts)) {
      const mirroring = yield* Mirror.make(transcripts.value, yield* MirrorSettings, options)
      contributions.push({ sessionMirror: true, ...mirroring })
    }
    if (options.onUserDialog !== undefined) {
      contributions.push(userDialogContribution(options.onUserDialog, options.supportedDialogKinds ?? []))
    }
    return { ...combine(contributions), permissionStore }
  })
