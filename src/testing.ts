/**
 * The testing kit: run agent workflows offline and deterministically.
 *
 * - {@link ScriptedCli}: an in-memory fake CLI driven by a script (no process at all);
 * - {@link ScriptedModelServer}: a scripted Anthropic API so the real CLI runs offline.
 *
 * @since 0.1.0
 */

/**
 * A scripted, in-memory Claude Code CLI as a Transport layer.
 *
 * @since 0.1.0
 */
export * as ScriptedCli from "./ScriptedCli.js"

/**
 * A scripted Anthropic Messages API server for running the real CLI offline.
 *
 * @since 0.1.0
 */
export * as ScriptedModelServer from "./ScriptedModelServer.js"
