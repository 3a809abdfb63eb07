/**
 * Claude Code for editors: an [Agent Client Protocol](https://agentclientprotocol.com) agent (`effect-claude-agent/acp`)
 * on this SDK. {@link serve} serves one ACP client (Zed, a JetBrains IDE, a Neovim or Emacs plugin, a chat service
 * that spawns an ACP process) over a pair of byte streams; {@link serveStdio} over the process's stdin and stdout,
 * which is what the `effect-claude-agent-acp` binary runs.
 *
 * What the client gets (ACP v1):
 * - `initialize` with the capabilities this agent has: `loadSession`; prompts with text, images and embedded context
 *   (no audio); MCP servers over stdio, HTTP and SSE; `session/close`, `session/list`, `session/resume`;
 * - `session/new` (the client's MCP servers are given to the CLI), `session/load` (the history is replayed as
 *   `session/update`s before the answer; with a `TranscriptStore` in the environment it is loaded from the store
 *   first), `session/resume` (the same without the replay);
 * - `session/prompt` streams `agent_message_chunk` / `agent_thought_chunk` (from partial messages), `tool_call` and
 *   `tool_call_update` (kind, title, locations, a diff for an edit, a command's output), the `plan` of a `TodoWrite`,
 *   `available_commands_update` (the CLI's slash commands), `current_mode_update` when the CLI changes mode; it ends
 *   with the exact stop reason (`end_turn`, `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`), or an error
 *   for a turn that failed;
 * - `session/set_mode` (Claude Code's permission modes) and `session/set_config_option` (the mode and the model);
 * - `session/cancel` interrupts the turn; the CLI ends the tool it was running, and if it does not stop within 10
 *   seconds its process (and everything it started) is ended;
 * - a second `session/prompt` while one runs is refused (`invalid request`), not queued.
 *
 * Permissions: a tool call the CLI asks about is judged by {@link Options.rules} first (a deny rule is never asked,
 * an allow rule is not asked), then the editor is asked with `session/request_permission` (allow once, always
 * allow, reject). "Always allow" adds an allow rule to the session (the rule Claude Code suggests, else the tool or
 * the exact command), judged after the deny rules. An editor that does not answer within
 * {@link Options.permissionTimeout}, answers with an error or an option it was not offered, or goes away, denies.
 * `Hooks` in the environment apply to every session.
 *
 * Faults: malformed JSON-RPC gets a JSON-RPC error (parse error, invalid request, method not found, invalid
 * params) and the connection goes on; a session the connection does not know is `Resource not found` (-32002); a
 * message longer than {@link Options.maxMessageBytes} is refused without being held in memory. When the client goes
 * (its input ends, or its output fails), every prompt is interrupted and every session closed, which reaps every CLI
 * and the tool processes it started; then `serve` returns.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
 * import * as Layer from "effect/Layer"
 * import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
 * import { NodeClaudeAgent } from "effect-claude-agent"
 * import { Acp } from "effect-claude-agent/acp"
 *
 * // an ACP agent on stdio that never asks about reads and never runs `rm`
 * const program = Acp.serveStdio({
 *   rules: { allow: ["Read", "Grep", "Glob"], deny: ["Bash(rm:*)"] },
 *   permissionTimeout: "2 minutes"
 * }).pipe(
 *   Effect.provide(Layer.merge(NodeClaudeAgent.layer, NodeClaudeAgent.layerSessionStore()))
 * )
 *
 * NodeRuntime.runMain(program)
 * ```
 *
 * @since 0.1.0
 */
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import type * as Sink from "effect/Sink"
import type * as Stream from "effect/Stream"
import type * as AgentOptions from "./AgentOptions.js"
import * as internal from "./internal/acp/server.js"
import * as SessionStore from "./SessionStore.js"
import type * as Transport from "./Transport.js"

/**
 * Options of {@link serve}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The options every session starts from (model, system prompt, settings, `env`, `pathToClaudeCodeExecutable`, …).
   * The client sets `cwd` and adds its MCP servers; `includePartialMessages` is always on; `permissionMode` is the
   * initial mode (default `"default"`).
   */
  readonly options?: AgentOptions.Options | undefined
  /**
   * Permission rules judged before the editor is asked (see `Permissions.rules`): a call a `deny` rule matches is
   * denied without asking; one an `ask` rule matches is always asked; one an `allow` rule matches runs without
   * asking. Leave `undefined` to ask the editor about every call the CLI asks about.
   */
  readonly rules?: {
    readonly allow?: ReadonlyArray<string> | undefined
    readonly deny?: ReadonlyArray<string> | undefined
    readonly ask?: ReadonlyArray<string> | undefined
  } | undefined
  /**
   * Which capabilities of the client to use when it offers them. `fs`: `Read`, `Write` and `Edit` go through the
   * client's `fs/read_text_file` / `fs/write_text_file` (the editor's unsaved buffers; edits land in the editor).
   * `terminal`: `Bash` runs in a terminal of the client. Both replace Claude Code's built-in tools in the session
   * (served as the MCP server `acp`), are judged by the same rules, and run outside Claude Code's own sandbox. Both
   * default to `true`.
   */
  readonly clientCapabilities?: {
    readonly fs?: boolean | undefined
    readonly terminal?: boolean | undefined
  } | undefined
  /** How long the editor may take to answer a permission request before it is a deny. Defaults to 5 minutes. */
  readonly permissionTimeout?: Duration.DurationInput | undefined
  /**
   * The longest message read from the client, in bytes; a longer one is answered with `invalid request` and
   * dropped without being held in memory. Defaults to 32 MiB (the ACP SDK's own limit).
   */
  readonly maxMessageBytes?: number | undefined
}

/**
 * Serves one ACP client: reads JSON-RPC messages (one per line) from `input`, writes to `output`. Returns when the
 * client goes (its input ends, or `output` fails), after every session it opened is closed and every CLI reaped.
 * A failure of either stream is the client going; it is logged at debug level, never raised.
 *
 * Needs a `Transport` (e.g. `NodeClaudeAgent.layer`) and a `SessionStore` (e.g. `NodeClaudeAgent.layerSessionStore()`)
 * over the config dir the CLI uses, from which `session/load` replays the history and `session/list` lists sessions.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = <E, R, E2, R2>(
  input: Stream.Stream<Uint8Array, E, R>,
  output: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>,
  options?: Options
): Effect.Effect<void, never, R | R2 | Transport.Transport | SessionStore.SessionStore> =>
  Effect.flatMap(SessionStore.SessionStore, (history) => internal.serve(input, output, options ?? {}, history))

/**
 * {@link serve} over this process's stdin and stdout (what an editor that spawns the agent talks to). Stdout is the
 * protocol's: Effect's default logger (which writes to stdout) is replaced by one that writes to stderr for the
 * program's fibers; nothing else may write to stdout meanwhile.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serveStdio = (
  options?: Options
): Effect.Effect<void, never, Transport.Transport | SessionStore.SessionStore> =>
  serve(
    NodeStream.fromReadable(() => process.stdin, (error) => error),
    NodeSink.fromWritable(() => process.stdout, (error) => error, { endOnDone: false }),
    options
  ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))))
