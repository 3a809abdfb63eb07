/**
 * effect-claude-agent: drive Claude Code from Effect programs.
 *
 * @since 0.1.0
 */

/**
 * Errors of the SDK, as `Schema.TaggedError`s.
 *
 * @since 0.1.0
 */
export * as AgentError from "./AgentError.js"

/**
 * Wire and SDK message Schemas, guards and helpers.
 *
 * @since 0.1.0
 */
export * as Message from "./Message.js"

/**
 * The Transport service: one CLI process per session, framed and decoded, always cleaned up.
 *
 * @since 0.1.0
 */
export * as Transport from "./Transport.js"
