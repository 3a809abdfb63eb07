/**
 * Everything a Node program needs to run Claude Code: the process Transport on Node's `child_process`.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent, NodeClaudeAgent } from "effect-claude-agent"
 *
 * ClaudeAgent.query("hello").pipe(Stream.runDrain, Effect.provide(NodeClaudeAgent.layer), Effect.runPromise)
 * ```
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import * as CliResolver from "./CliResolver.js"
import * as SessionHistory from "./SessionHistory.js"
import * as Transport from "./Transport.js"

/**
 * The process Transport with Node's file system and the CLI resolver. The resolver's knowledge (where
 * the CLI is, its version) lives as long as the layer: provide it once, at the top of the program, and every session
 * shares it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transport.Transport> = Transport.layerProcess.pipe(
  Layer.provide(NodeFileSystem.layer),
  Layer.provide(CliResolver.layer())
)

/**
 * The session history on disk (transcripts under `CLAUDE_CONFIG_DIR` or `~/.claude`) with Node's file system.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSessionHistory = (
  options?: SessionHistory.Options
): Layer.Layer<SessionHistory.SessionHistory, ConfigError.ConfigError> =>
  SessionHistory.layer(options).pipe(Layer.provide(NodeFileSystem.layer), Layer.provide(NodePath.layer))

/**
 * @deprecated Use {@link layerSessionHistory} (`SessionStore` is now `SessionHistory`).
 * @since 0.1.0
 * @category layers
 */
export const layerSessionStore: (
  options?: SessionHistory.Options
) => Layer.Layer<SessionHistory.SessionHistory, ConfigError.ConfigError> = layerSessionHistory
