/**
 * effect-claude-agent: drive Claude Code from Effect programs.
 *
 * @since 0.1.0
 */
import * as hints from "./internal/hints.js"

/**
 * Options of `query` and `Session` and their mapping to argv, environment and `initialize`.
 *
 * @since 0.1.0
 */
export * as AgentOptions from "./AgentOptions.js"

/**
 * Errors of the SDK, as `Schema.TaggedError`s.
 *
 * @since 0.1.0
 */
export * as AgentError from "./AgentError.js"

/**
 * Finds the Claude Code CLI and learns its version, for the process Transport.
 *
 * @since 0.1.0
 */
export * as CliResolver from "./CliResolver.js"

/**
 * `query` (one-shot) and `Session` (multi-turn).
 *
 * @since 0.1.0
 */
export * as ClaudeAgent from "./ClaudeAgent.js"

/**
 * Request correlation and inbound request dispatch over a connection.
 *
 * @since 0.1.0
 */
export * as ControlProtocol from "./ControlProtocol.js"

/**
 * MCP elicitations (a server asking the user for input) answered by the `onElicitation` option.
 *
 * @since 0.1.0
 */
export * as Elicitation from "./Elicitation.js"

/**
 * Lifecycle hooks as Effect callbacks (all 34 events, typed inputs and outputs).
 *
 * @since 0.1.0
 */
export * as Hooks from "./Hooks.js"

/**
 * Wire and SDK message Schemas, guards and helpers.
 *
 * @since 0.1.0
 */
export * as Message from "./Message.js"

/**
 * External MCP servers (stdio, Streamable HTTP, SSE) proxied through this SDK and served to the CLI as SDK servers.
 *
 * @since 0.1.0
 */
export * as McpProxy from "./McpProxy.js"

/**
 * The layer with everything a Node program needs.
 *
 * @since 0.1.0
 */
export * as NodeClaudeAgent from "./NodeClaudeAgent.js"

/**
 * Partial-message assembly for chat UIs: `stream_event`s to text / thinking / tool events.
 *
 * @since 0.1.0
 */
export * as PartialMessages from "./PartialMessages.js"

/**
 * Tool-call permission policies, fail closed.
 *
 * @since 0.1.0
 */
export * as Permissions from "./Permissions.js"

/**
 * In-process MCP tools (Effect Schema input, Effect handlers) served over the control protocol.
 *
 * @since 0.1.0
 */
export * as SdkMcp from "./SdkMcp.js"

/**
 * Many sessions within limits: a concurrency cap, warm sessions, isolated config dirs.
 *
 * @since 0.1.0
 */
export * as SessionPool from "./SessionPool.js"

/**
 * The CLI's session transcripts on disk: list sessions, read their messages.
 *
 * @since 0.1.0
 */
export * as SessionHistory from "./SessionHistory.js"

/**
 * The former name of `SessionHistory`.
 *
 * @deprecated Use `SessionHistory` (the official SDK's `SessionStore` is this package's `TranscriptStore`).
 * @since 0.1.0
 */
export * as SessionStore from "./SessionStore.js"

/**
 * Session transcripts kept outside the machine that ran them (the official `sessionStore`): sessions mirror their
 * transcript to the store and load `resume`d sessions from it.
 *
 * @since 0.1.0
 */
export * as TranscriptStore from "./TranscriptStore.js"

/**
 * The Transport service: one CLI process per session, framed and decoded, always cleaned up.
 *
 * @since 0.1.0
 */
export * as Transport from "./Transport.js"

/**
 * The CLI's blocking dialogs (`request_user_dialog`) answered by the `onUserDialog` option.
 *
 * @since 0.1.0
 */
export * as UserDialog from "./UserDialog.js"

/**
 * Not in this entry: `query()` with Promises, the official SDK's API, is exported by `effect-claude-agent/promise`,
 * and the Effect API's is `ClaudeAgent.query`. This name is here only to say so: TypeScript refuses any call (its
 * parameter type is the hint), and a call from plain JavaScript throws a `TypeError` with the hint.
 *
 * @deprecated Import `query` from "effect-claude-agent/promise", or use `ClaudeAgent.query`.
 * @since 0.1.0
 * @category hints
 */
export const query: (
  hint: "query() is exported by effect-claude-agent/promise; with Effect, use ClaudeAgent.query"
) => never = hints.query
