/**
 * effect-claude-agent: drive Claude Code from Effect programs.
 *
 * @since 0.1.0
 */

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
 * Wire and SDK message Schemas, guards and helpers.
 *
 * @since 0.1.0
 */
export * as Message from "./Message.js"

/**
 * The layer with everything a Node program needs.
 *
 * @since 0.1.0
 */
export * as NodeClaudeAgent from "./NodeClaudeAgent.js"

/**
 * The Transport service: one CLI process per session, framed and decoded, always cleaned up.
 *
 * @since 0.1.0
 */
export * as Transport from "./Transport.js"
