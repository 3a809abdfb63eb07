/**
 * A protocol-correct fake `claude` executable for process-level tests: a small Node program shipped with this
 * package and driven by a {@link Scenario} (plain JSON data). It speaks stream-json like the real CLI — answers
 * `initialize` and the other control requests, answers prompts with scripted turns, asks `can_use_tool` — and can
 * misbehave on purpose: stall, crash, die by a signal, print banners, malformed, giant, split-UTF-8, CRLF or
 * U+2028 lines, flood stderr, ignore SIGTERM, leave a grandchild behind, start tool processes outside its process
 * group.
 *
 * Unlike {@link ScriptedCli} (in memory), the fake runs as a real process through the real process Transport
 * (`NodeClaudeAgent.layer`), so spawning, framing, stderr draining and the kill sequence are all exercised.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent, NodeClaudeAgent } from "effect-claude-agent"
 * import { FakeCli } from "effect-claude-agent/testing"
 *
 * const scenario = FakeCli.scenario([
 *   FakeCli.expectUser(),
 *   FakeCli.malformed("Welcome to Claude Code"),
 *   FakeCli.turn("you said: {prompt}")
 * ])
 *
 * const program = ClaudeAgent.query("hi", FakeCli.options(scenario)).pipe(
 *   Stream.runCollect,
 *   Effect.provide(NodeClaudeAgent.layer)
 * )
 * ```
 *
 * Steps run in order. When they are done the fake waits for stdin to close and exits with code 0, like the real CLI
 * when idle (add {@link exit} to end earlier). A step that does not see what it expects (e.g. {@link expectUser}
 * when stdin closed) ends the fake with code 70 and the reason on stderr. Control requests from the SDK are
 * answered at any time, between and during steps.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { Options as AgentOptions } from "./AgentOptions.js"
import * as internal from "./internal/testing/fakeCli.js"
import type { LaunchSpec } from "./Transport.js"

// -------------------------------------------------------------------------------------------------
// scenario
// -------------------------------------------------------------------------------------------------

/**
 * A JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = Readonly<Record<string, unknown>>

/**
 * The line ending written after a frame. Defaults to `"\n"`; `"\r\n"` exercises CRLF handling.
 *
 * @since 0.1.0
 * @category models
 */
export type LineEnding = "\n" | "\r\n"

/**
 * How the fake answers one control request subtype sent by the SDK:
 * - `{ response }`: a success response with this body;
 * - `{ error }`: an error response;
 * - `{ never: true }`: no answer at all (a hung CLI).
 *
 * `delayMs` holds the answer back (a slow CLI); reading stdin goes on meanwhile.
 *
 * @since 0.1.0
 * @category models
 */
export type Answer =
  | { readonly response: unknown; readonly delayMs?: number | undefined }
  | { readonly error: string; readonly errorCode?: string | undefined; readonly delayMs?: number | undefined }
  | { readonly never: true }

/**
 * One step of a {@link Scenario}. Build them with the constructors of this module ({@link turn},
 * {@link malformed}, {@link exit}, …); they are plain JSON.
 *
 * @since 0.1.0
 * @category models
 */
export type Step =
  | { readonly op: "expectUser"; readonly contains?: string | undefined }
  | { readonly op: "echo" }
  | { readonly op: "turn"; readonly text: string }
  | { readonly op: "init"; readonly fields?: JsonObject | undefined }
  | { readonly op: "assistant"; readonly text: string; readonly eol?: LineEnding | undefined }
  | {
    readonly op: "result"
    readonly text: string
    readonly fields?: JsonObject | undefined
    readonly eol?: LineEnding | undefined
  }
  | { readonly op: "emit"; readonly frame: JsonObject; readonly eol?: LineEnding | undefined }
  | { readonly op: "raw"; readonly text: string }
  | { readonly op: "giantLine"; readonly bytes: number }
  | { readonly op: "splitUtf8"; readonly text: string; readonly pauseMs?: number | undefined }
  | { readonly op: "stderr"; readonly text: string; readonly repeat?: number | undefined }
  | { readonly op: "sleep"; readonly ms: number }
  | { readonly op: "stall" }
  | { readonly op: "exit"; readonly code: number; readonly stderr?: string | undefined }
  | { readonly op: "kill"; readonly signal: string }
  | { readonly op: "ignoreSigterm" }
  | { readonly op: "spawnGrandchild" }
  | {
    readonly op: "spawnToolProcess"
    readonly ignoreSigterm?: boolean | undefined
    readonly clearEnv?: boolean | undefined
  }
  | {
    readonly op: "request"
    readonly subtype: string
    readonly body?: JsonObject | undefined
    readonly timeoutMs?: number | undefined
  }
  | { readonly op: "expectControl"; readonly subtype: string }
  | { readonly op: "expectEndInput" }

/**
 * What the fake CLI does, as JSON. It travels to the process in an environment variable (see {@link options}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Scenario {
  /** The steps, in order. */
  readonly steps: ReadonlyArray<Step>
  /** The session id in emitted frames. Defaults to `--session-id` / `--resume` from argv, else a fixed UUID. */
  readonly sessionId?: string | undefined
  /** Merged over the default `initialize` response (the same as `ScriptedCli.defaultInitializeResponse`). */
  readonly initializeResponse?: JsonObject | undefined
  /**
   * Answers to control requests by subtype, in place of the defaults (`initialize`, `interrupt`, `set_model`,
   * `set_permission_mode`, `mcp_status`, … are answered like the real CLI; anything else gets an
   * `unsupported_request` error).
   */
  readonly answers?: Readonly<Record<string, Answer>> | undefined
  /**
   * A file the fake appends a JSON line to for every event: its start (argv, cwd, pid, environment), every frame
   * it read on stdin, and every answer the SDK gave to its requests. Read it with {@link readLog}.
   */
  readonly log?: string | undefined
  /**
   * Environment variables recorded in the log's start entry (`null` when unset), in addition to `CLAUDECODE`,
   * `CLAUDE_CODE_ENTRYPOINT`, `CLAUDE_CODE_SDK_READS_SESSION_STATE`, `NODE_OPTIONS` and `PATH`.
   */
  readonly logEnv?: ReadonlyArray<string> | undefined
}

/**
 * Builds a scenario from its steps and options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scenario: (steps: ReadonlyArray<Step>, options?: Omit<Scenario, "steps">) => Scenario = internal.scenario

/**
 * A CLI that answers every prompt with `echo: <prompt>` until stdin closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const echoScenario: Scenario = internal.echoScenario

// -------------------------------------------------------------------------------------------------
// running it
// -------------------------------------------------------------------------------------------------

/**
 * The environment variable that carries the scenario: its JSON, or `@<path>` of a JSON file.
 *
 * @since 0.1.0
 * @category constants
 */
export const SCENARIO_ENV: string = internal.SCENARIO_ENV

/**
 * How to start the fake: the program (plain JavaScript, `dist/internal/testing/fakeCliMain.js` in the published package, run
 * by Node as it is: no TypeScript loader needed) and the arguments Node needs before it.
 *
 * @since 0.1.0
 * @category running
 */
export const executable: () => { readonly executable: string; readonly executableArgs: ReadonlyArray<string> } =
  internal.executable

/**
 * The environment that gives the fake its scenario.
 *
 * @since 0.1.0
 * @category running
 */
export const env: (scenario: Scenario) => Record<string, string> = internal.env

/**
 * Agent options that run `scenario` instead of the real CLI: `pathToClaudeCodeExecutable`, `executableArgs` and
 * `env` (merged over `extra.env`). Use with `ClaudeAgent.query` / `ClaudeAgent.session` and the process Transport
 * (`NodeClaudeAgent.layer`).
 *
 * @since 0.1.0
 * @category running
 */
export const options: (scenario: Scenario, extra?: AgentOptions) => AgentOptions = internal.options

/**
 * A Transport launch spec that runs `scenario` (for tests of the Transport itself); `extra.env` is kept.
 *
 * @since 0.1.0
 * @category running
 */
export const launch: (scenario: Scenario, extra?: Partial<LaunchSpec>) => LaunchSpec = internal.launch

// -------------------------------------------------------------------------------------------------
// steps
// -------------------------------------------------------------------------------------------------

/**
 * Waits for the next user message (it becomes `{prompt}` in later {@link turn}s). With `contains`, fails the
 * scenario when the prompt does not contain it.
 *
 * @since 0.1.0
 * @category steps
 */
export const expectUser: (contains?: string) => Step = internal.expectUser

/**
 * Answers every user message with a turn `echo: <prompt>` until stdin closes.
 *
 * @since 0.1.0
 * @category steps
 */
export const echo: Step = internal.echo

/**
 * A whole turn like the real CLI writes it: `system/init`, one assistant text, a success `result`, then
 * `session_state_changed: idle`. `{prompt}` in `text` is replaced by the last user prompt.
 *
 * @since 0.1.0
 * @category steps
 */
export const turn: (text: string) => Step = internal.turn

/**
 * A `system/init` frame for this session (fields can be overridden).
 *
 * @since 0.1.0
 * @category steps
 */
export const init: (fields?: JsonObject) => Step = internal.init

/**
 * One `assistant` frame with a text block (`{prompt}` is replaced by the last user prompt).
 *
 * @since 0.1.0
 * @category steps
 */
export const assistant: (text: string, options?: { readonly eol?: LineEnding }) => Step = internal.assistant

/**
 * One success `result` frame (override any field), and nothing after it.
 *
 * @since 0.1.0
 * @category steps
 */
export const result: (text?: string, fields?: JsonObject, options?: { readonly eol?: LineEnding }) => Step =
  internal.result

/**
 * Writes one frame as-is.
 *
 * @since 0.1.0
 * @category steps
 */
export const emit: (frame: JsonObject, options?: { readonly eol?: LineEnding }) => Step = internal.emit

/**
 * Writes raw stdout text (partial lines, banners, anything).
 *
 * @since 0.1.0
 * @category steps
 */
export const raw: (text: string) => Step = internal.raw

/**
 * Fault: one stdout line that is not JSON (default `"this is not JSON"`). The SDK delivers an in-band
 * `MalformedLine` and goes on.
 *
 * @since 0.1.0
 * @category faults
 */
export const malformed: (line?: string) => Step = internal.malformed

/**
 * Fault: one assistant frame whose text is `bytes` characters, written in 1 MiB pieces. Above `maxLineBytes` the
 * SDK delivers an in-band `LineTooLong` and goes on.
 *
 * @since 0.1.0
 * @category faults
 */
export const giantLine: (bytes: number) => Step = internal.giantLine

/**
 * Fault: one assistant frame with `text` written in two writes that split its first multi-byte character
 * (`pauseMs` apart, default 50).
 *
 * @since 0.1.0
 * @category faults
 */
export const splitUtf8: (text: string, options?: { readonly pauseMs?: number }) => Step = internal.splitUtf8

/**
 * Fault: a frame of a type this SDK does not know (default `"fake_future_message"`); the SDK yields an
 * `UnknownMessage`.
 *
 * @since 0.1.0
 * @category faults
 */
export const unknownMessage: (type?: string, fields?: JsonObject) => Step = internal.unknownMessage

/**
 * Writes to stderr (`repeat` times).
 *
 * @since 0.1.0
 * @category steps
 */
export const stderr: (text: string, options?: { readonly repeat?: number }) => Step = internal.stderr

/**
 * Fault: floods stderr with about `bytes` bytes (64 KiB lines), as a crashing CLI may.
 *
 * @since 0.1.0
 * @category faults
 */
export const stderrFlood: (bytes: number) => Step = internal.stderrFlood

/**
 * Waits `ms` milliseconds.
 *
 * @since 0.1.0
 * @category steps
 */
export const sleep: (ms: number) => Step = internal.sleep

/**
 * Fault: never writes again (control requests are still answered); the process stays until it is killed.
 *
 * @since 0.1.0
 * @category faults
 */
export const stall: Step = internal.stall

/**
 * Fault: exits with `code` after writing `stderr` (a crash when `code` is not 0). As the first step: a CLI that
 * exits at once.
 *
 * @since 0.1.0
 * @category faults
 */
export const exit: (code: number, stderr?: string) => Step = internal.exit

/**
 * Fault: the fake sends itself `signal` (default `SIGKILL`).
 *
 * @since 0.1.0
 * @category faults
 */
export const kill: (signal?: string) => Step = internal.kill

/**
 * Fault: from now on SIGTERM is ignored (the SDK has to SIGKILL).
 *
 * @since 0.1.0
 * @category faults
 */
export const ignoreSigterm: Step = internal.ignoreSigterm

/**
 * Starts a long-lived grandchild in the fake's process group and writes a `system/status` frame with its pid in
 * `grandchild_pid`, to check that closing a session leaves nothing behind.
 *
 * @since 0.1.0
 * @category faults
 */
export const spawnGrandchild: Step = internal.spawnGrandchild

/**
 * Starts a long-lived tool process (`sleep 300` through `/bin/sh`) the way the real CLI starts its Bash tool: in a
 * session and process group of its own, so signalling the fake's group misses it, and left running when the fake
 * exits (it is then re-parented to init). Writes a `system/status` frame with its pid in `tool_pid` once it runs.
 * `ignoreSigterm`: it ignores SIGTERM (only SIGKILL ends it); `clearEnv`: it starts with an environment holding only
 * `PATH` (as `env -i` would), so it carries none of the fake's variables.
 *
 * @since 0.1.0
 * @category faults
 */
export const spawnToolProcess: (
  options?: { readonly ignoreSigterm?: boolean; readonly clearEnv?: boolean }
) => Step = internal.spawnToolProcess

/**
 * Sends a control request to the SDK and waits for its answer (logged, see {@link Scenario.log}). Fails the
 * scenario after `timeoutMs` (default 10 000).
 *
 * @since 0.1.0
 * @category steps
 */
export const request: (subtype: string, body?: JsonObject, options?: { readonly timeoutMs?: number }) => Step =
  internal.request

/**
 * Asks the SDK's permission handler about a tool call (`can_use_tool`). The fake fills in `tool_use_id`
 * (`toolu_fake_<n>`) unless `extra` has one.
 *
 * @since 0.1.0
 * @category steps
 */
export const canUseTool: (toolName: string, input: JsonObject, extra?: JsonObject) => Step = internal.canUseTool

/**
 * Waits for a control request of this subtype from the SDK (it is answered as usual).
 *
 * @since 0.1.0
 * @category steps
 */
export const expectControl: (subtype: string) => Step = internal.expectControl

/**
 * Waits until the SDK closed stdin.
 *
 * @since 0.1.0
 * @category steps
 */
export const expectEndInput: Step = internal.expectEndInput

// -------------------------------------------------------------------------------------------------
// answers
// -------------------------------------------------------------------------------------------------

/**
 * A success answer, optionally delayed.
 *
 * @since 0.1.0
 * @category answers
 */
export const answer: (response: unknown, options?: { readonly delayMs?: number }) => Answer = internal.answer

/**
 * An error answer.
 *
 * @since 0.1.0
 * @category answers
 */
export const answerError: (
  error: string,
  options?: { readonly errorCode?: string; readonly delayMs?: number }
) => Answer = internal.answerError

/**
 * Fault: no answer at all (e.g. `answers: { initialize: FakeCli.noAnswer }`, a CLI that never finishes starting).
 *
 * @since 0.1.0
 * @category answers
 */
export const noAnswer: Answer = internal.noAnswer

// -------------------------------------------------------------------------------------------------
// log
// -------------------------------------------------------------------------------------------------

/**
 * One line of the log file.
 *
 * @since 0.1.0
 * @category models
 */
export type LogEntry =
  | {
    readonly event: "start"
    readonly argv: ReadonlyArray<string>
    readonly cwd: string
    readonly pid: number
    readonly env: Readonly<Record<string, string | null>>
  }
  | { readonly event: "stdin"; readonly frame: JsonObject }
  | {
    readonly event: "answer"
    readonly subtype: string
    readonly requestId: string
    readonly response: JsonObject
  }

/**
 * The log of one run, read back.
 *
 * @since 0.1.0
 * @category models
 */
export interface Log {
  /** How the fake was started (argv, cwd, pid, recorded environment); `undefined` if it never started. */
  readonly start: Extract<LogEntry, { readonly event: "start" }> | undefined
  /** Every frame the fake read on stdin, in order. */
  readonly received: ReadonlyArray<JsonObject>
  /** The SDK's answers to the fake's own control requests, in order. */
  readonly answers: ReadonlyArray<Extract<LogEntry, { readonly event: "answer" }>>
  readonly entries: ReadonlyArray<LogEntry>
}

/**
 * Reads a scenario's log file (see {@link Scenario.log}). A missing file is an empty log.
 *
 * @since 0.1.0
 * @category log
 */
export const readLog: (path: string) => Effect.Effect<Log> = internal.readLog
