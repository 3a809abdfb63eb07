/**
 * Claude Code as an `@effect/ai` `LanguageModel` (`effect-claude-agent/ai`; needs the optional peer `@effect/ai`).
 * A program written against `LanguageModel` and `Toolkit` runs on Claude Code by providing {@link layer}:
 * - each call is one `ClaudeAgent.query` (so `Transport`, `Permissions`, `Hooks` and the testing kit apply);
 * - system messages become the system prompt; the last message (a user message) is the turn, and earlier
 *   messages are sent before it as a transcript (a new session per call), or, with `conversation: "resume"`, the
 *   session that answered the conversation so far is resumed (forked) and sent only the new turn;
 * - images, PDFs and text files are sent as content blocks; anything else fails with `AiError.MalformedInput`;
 * - the call's `Toolkit` is served to the CLI as an in-process MCP server (`mcp__toolkit__<tool>`): the CLI's loop
 *   calls your Effect handlers, and each call and result is in the response as `tool-call` / `tool-result` parts
 *   with `providerExecuted: true` (so `LanguageModel` does not run them again);
 * - the CLI's built-in tools are off unless listed in `builtInTools`; `toolChoice: "none"` runs without tools, and
 *   choices the CLI cannot honour (`"required"`, `{ tool }`) fail with `AiError.MalformedInput`;
 * - `generateObject` uses the CLI's structured output (`outputFormat`); the `finish` part carries usage, the finish
 *   reason and, in `metadata.claudeCode`, the cost, session id and number of turns;
 * - `streamText` streams text deltas from partial messages;
 * - an API error the CLI reports fails the call with `AiError.HttpResponseError` (its status), other failures with
 *   `AiError.UnknownError` (the SDK's error is the `cause`).
 *
 * @example
 * ```ts
 * import * as LanguageModel from "@effect/ai/LanguageModel"
 * import * as Tool from "@effect/ai/Tool"
 * import * as Toolkit from "@effect/ai/Toolkit"
 * import { Effect, Schema } from "effect"
 * import { NodeClaudeAgent } from "effect-claude-agent"
 * import { ClaudeCodeLanguageModel } from "effect-claude-agent/ai"
 *
 * const GetTime = Tool.make("GetTime", { description: "The current time", success: Schema.String })
 * const Tools = Toolkit.make(GetTime)
 * const ToolsLive = Tools.toLayer({ GetTime: () => Effect.sync(() => new Date().toISOString()) })
 *
 * const program = LanguageModel.generateText({ prompt: "What time is it?", toolkit: Tools }).pipe(
 *   Effect.map((response) => response.text),
 *   Effect.provide(ToolsLive),
 *   Effect.provide(ClaudeCodeLanguageModel.layer({ options: { model: "sonnet" } })),
 *   Effect.provide(NodeClaudeAgent.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as AgentOptions from "./AgentOptions.js"
import * as internal from "./internal/ai/languageModel.js"
import type * as Transport from "./Transport.js"
import * as AiLanguageModel from "@effect/ai/LanguageModel"

/**
 * Options of {@link make} and {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The options of every query (model, cwd, permissions, …). `systemPrompt`, `tools`, `includePartialMessages`
   * and `outputFormat` are set per call; `mcpServers` and `allowedTools` are extended with the toolkit's.
   */
  readonly options?: AgentOptions.Options | undefined
  /** The CLI's built-in tools to enable (`"Read"`, `"Bash"`, …). Defaults to none. */
  readonly builtInTools?: ReadonlyArray<string> | undefined
  /**
   * `"stateless"` (the default): every call starts a new session and is sent the whole conversation. `"resume"`:
   * a call that continues a conversation this service answered resumes (a fork of) its session and is sent only
   * the new user turn; conversations are recognised by their system and user messages.
   */
  readonly conversation?: "stateless" | "resume" | undefined
  /** The MCP server name the toolkit is served under (tools are `mcp__<name>__<tool>`). Defaults to `"toolkit"`. */
  readonly serverName?: string | undefined
  /** How many conversations `"resume"` remembers (the oldest are forgotten first). Defaults to 1000. */
  readonly maxConversations?: number | undefined
}

/**
 * Makes the `LanguageModel` service over the `Transport` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<LanguageModel.Service, never, Transport.Transport> =
  internal.make

/**
 * Provides `LanguageModel.LanguageModel` backed by Claude Code (needs a `Transport`, e.g. `NodeClaudeAgent.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<LanguageModel.LanguageModel, never, Transport.Transport> =>
  Layer.effect(AiLanguageModel.LanguageModel, make(options))
