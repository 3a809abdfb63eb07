/**
 * What one optional feature (permissions, hooks, in-process MCP servers, the transcript mirror, …) contributes to a
 * session: the point where the services plug into the protocol, below both them and the session.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { SessionError } from "../../AgentError.js"
import type * as Message from "../../Message.js"
import type { Owned as ControlProtocol } from "./controlProtocol.js"
import type { Handler } from "./handler.js"

/**
 * Rules for the CLI's settings (`permissions.deny`, `permissions.ask`), in its syntax.
 *
 * @internal
 */
export interface CliPermissions {
  readonly deny: ReadonlyArray<string>
  readonly ask: ReadonlyArray<string>
}

/**
 * What one optional feature (permissions, hooks, in-process MCP servers, …) contributes to a session. Every field
 * is optional; the session merges the contributions (session/extensions.ts).
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
  /** Rules merged into the CLI's settings (`permissions.deny`, `permissions.ask`). */
  readonly cliPermissions?: CliPermissions | undefined
  /** Inbound control request handlers by subtype. */
  readonly handlers?: ReadonlyMap<string, Handler> | undefined
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
}
