/**
 * Claude Code as an `@effect/ai` `LanguageModel` (`effect-claude-agent/ai`). Needs the optional peer `@effect/ai`;
 * the main entry never loads it.
 *
 * @since 0.1.0
 */

/**
 * `LanguageModel` layer over Claude Code, with the call's `Toolkit` served to the CLI.
 *
 * @since 0.1.0
 */
export * as ClaudeCodeLanguageModel from "./ClaudeCodeLanguageModel.js"
