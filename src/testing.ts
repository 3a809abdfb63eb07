/**
 * The testing kit: run agent workflows offline and deterministically.
 *
 * - {@link ScriptedCli}: an in-memory fake CLI driven by a script (no process at all), with fault injection;
 * - {@link FakeCli}: a protocol-correct fake `claude` executable driven by a JSON scenario, for process-level tests;
 * - {@link ScriptedModelServer}: a scripted Anthropic API so the real CLI runs offline (`make()` in a Scope, or
 *   `start()` → `close()` from Promise code);
 * - {@link Recording}: record a session's frames to JSONL, replay them without a CLI and diff what the client sends.
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

/**
 * A protocol-correct fake `claude` executable driven by a JSON scenario, for process-level tests.
 *
 * @since 0.1.0
 */
export * as FakeCli from "./FakeCli.js"

/**
 * Record a session's frames to JSONL, replay them as a Transport and check what the client sends.
 *
 * @since 0.1.0
 */
export * as Recording from "./Recording.js"
