/**
 * MCP elicitations: an MCP server asks the user for input in the middle of a tool call — a form (with a JSON Schema
 * of the fields it wants) or a URL to open (OAuth, a payment page). When no `Elicitation` hook answered, the CLI asks
 * the SDK, and the `onElicitation` option answers: accept (with the form's content), decline or cancel.
 *
 * Without `onElicitation` every elicitation is declined, as in the official SDK. A handler that fails, dies or
 * returns something that is not an {@link ElicitResult} answers `cancel` (with a warning in the log) — what the
 * MCP server also sees when the official SDK's callback throws. When the CLI withdraws the request (the turn was
 * interrupted) or the session closes, the handler is interrupted and nothing is answered.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent, Elicitation } from "effect-claude-agent"
 *
 * declare const askTheUser: (message: string, schema: unknown) => Effect.Effect<Record<string, string> | undefined>
 *
 * const program = ClaudeAgent.query("Book a table for tonight", {
 *   onElicitation: (request) =>
 *     request.mode === "url"
 *       ? Effect.succeed(Elicitation.decline)
 *       : Effect.map(askTheUser(request.message, request.requestedSchema), (content) =>
 *         content === undefined ? Elicitation.cancel : Elicitation.accept(content))
 * }).pipe(Stream.runDrain)
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"

/**
 * What an MCP server asks for (the official SDK's `ElicitationRequest`, plus the CLI's request id).
 *
 * @since 0.1.0
 * @category models
 */
export interface ElicitationRequest {
  /** Name of the MCP server asking. */
  readonly serverName: string
  /** What to show the user. */
  readonly message: string
  /** `"form"`: structured input described by `requestedSchema`; `"url"`: open `url` (e.g. to sign in). */
  readonly mode?: "form" | "url" | undefined
  /** The URL to open (`"url"` mode). */
  readonly url?: string | undefined
  /** Correlates a URL elicitation with its `system/elicitation_complete` message (`"url"` mode). */
  readonly elicitationId?: string | undefined
  /** JSON Schema of the requested input (`"form"` mode): an object schema with flat, primitive properties. */
  readonly requestedSchema?: Readonly<Record<string, unknown>> | undefined
  /** Permission-display title from the server's `_meta["anthropic/permissionDisplay"]`. */
  readonly title?: string | undefined
  /** Short tool or server label from `_meta["anthropic/permissionDisplay"].displayName`. */
  readonly displayName?: string | undefined
  /** Permission-display subtitle from `_meta["anthropic/permissionDisplay"].description`. */
  readonly description?: string | undefined
  /** The CLI's control request id (the official SDK passes it as `options.requestId`). */
  readonly requestId: string
}

/**
 * A value of an accepted form's field (MCP allows flat, primitive fields only).
 *
 * @since 0.1.0
 * @category models
 */
export type ElicitValue = string | number | boolean | ReadonlyArray<string>

/**
 * The answer to an elicitation (MCP's `ElicitResult`): `"accept"` with the form's `content`, `"decline"` (the user
 * said no) or `"cancel"` (the user dismissed it without choosing).
 *
 * @since 0.1.0
 * @category models
 */
export interface ElicitResult {
  readonly action: "accept" | "decline" | "cancel"
  /** The submitted form (`"accept"` in `"form"` mode); the MCP server checks it against its `requestedSchema`. */
  readonly content?: Readonly<Record<string, ElicitValue>> | undefined
}

/**
 * Answers elicitations: the `onElicitation` option. Failures and defects answer `cancel` (fail closed).
 *
 * @since 0.1.0
 * @category models
 */
export type OnElicitation = (request: ElicitationRequest) => Effect.Effect<ElicitResult, unknown>

/**
 * Accepts, with the form's content (leave it out in `"url"` mode).
 *
 * @since 0.1.0
 * @category constructors
 */
export const accept = (content?: Readonly<Record<string, ElicitValue>>): ElicitResult =>
  content === undefined ? { action: "accept" } : { action: "accept", content }

/**
 * Declines: the user explicitly said no.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decline: ElicitResult = { action: "decline" }

/**
 * Cancels: the user dismissed the request without choosing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cancel: ElicitResult = { action: "cancel" }
