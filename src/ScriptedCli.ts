/**
 * A scripted, in-memory Claude Code CLI: a Transport layer with no process, driven by a small script. Your agent
 * workflow runs against it unchanged (only the layer differs), and the script decides what the "CLI" says, asks
 * (`can_use_tool`, `hook_callback`, `mcp_message`) and checks what your code answered.
 *
 * Control requests from the SDK (`initialize`, `interrupt`, `set_model`, …) are answered automatically with
 * realistic defaults unless the script overrides them with `respond`; everything the SDK wrote is recorded.
 *
 * Faults are script steps too, each producing what the SDK promises for it: `exit(code, stderr)` and `kill(signal)`
 * (`ProcessExited`), `malformed` and `giantLine` (in-band `MalformedLine` / `LineTooLong`, the stream goes on),
 * `unknownMessage` (an `UnknownMessage`), `slow` / `neverAnswer` (a `ControlTimeout` past `controlRequestTimeout`),
 * `stall`; and the layers {@link exitsAtOnce} and {@link neverAnswersInitialize} (`StartupFailed`).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { ScriptedCli } from "effect-claude-agent/testing"
 *
 * const cli = ScriptedCli.layer((cli) =>
 *   Effect.gen(function*() {
 *     const prompt = yield* cli.expectUser
 *     yield* cli.turn(`you said: ${ScriptedCli.textOf(prompt)}`)
 *   })
 * )
 *
 * const program = ClaudeAgent.query("hi").pipe(Stream.runCollect, Effect.provide(cli))
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as internal from "./internal/testing/scriptedCli.js"
import type * as Message from "./Message.js"
import type * as Transport from "./Transport.js"

/**
 * A script step did not see what it expected (`reason`: `"Timeout"`, `"InputEnded"`, `"ErrorAnswer"`; `description`
 * says what). The fake CLI then exits with code 70 and this message on stderr, so the SDK under test fails with
 * `ProcessExited`.
 *
 * @since 0.1.0
 * @category errors
 */
export const ScriptError: typeof internal.ScriptError = internal.ScriptError

/**
 * @since 0.1.0
 * @category errors
 */
export type ScriptError = internal.ScriptError

/**
 * Answers one control request subtype sent by the SDK: the success response body, or a failure whose text is sent
 * as an error response.
 *
 * @since 0.1.0
 * @category models
 */
export type Responder = (request: Message.ControlRequestBody) => Effect.Effect<unknown, string>

/**
 * The fake CLI as a script sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedCli {
  /** The launch the SDK asked for (argv, env, cwd). */
  readonly spec: Transport.LaunchSpec
  /** The raw in-memory peer, for anything the helpers do not cover. */
  readonly peer: Transport.MemoryPeer
  /** The session id used in emitted frames. */
  readonly sessionId: string
  /** The `initialize` request the SDK sent (waits for it). */
  readonly initialize: Effect.Effect<Message.ControlRequestBody, ScriptError>
  /** The next user message the SDK sent (default timeout 10 s). */
  readonly expectUser: Effect.Effect<Message.UserMessage, ScriptError>
  /** The next user message, or `None` once the SDK closed stdin. */
  readonly nextUser: Effect.Effect<Option.Option<Message.UserMessage>, ScriptError>
  /** The next control request of this subtype the SDK sent (answered by the responder as well). */
  readonly expectControl: (subtype: string) => Effect.Effect<Message.ControlRequestBody, ScriptError>
  /** Waits until the SDK closed stdin. */
  readonly expectEndInput: Effect.Effect<void, ScriptError>
  /** Overrides the automatic answer to a control request subtype. */
  readonly respond: (subtype: string, responder: Responder) => Effect.Effect<void>
  /**
   * Fault: from now on, answers control requests of `subtype` only `duration` after they arrive (a slow CLI), with
   * the responder in effect. With a `controlRequestTimeout` shorter than `duration` the SDK fails the call with
   * `ControlTimeout` and sends a `control_cancel_request`. Reading stdin goes on meanwhile.
   */
  readonly slow: (subtype: string, duration: Duration.DurationInput) => Effect.Effect<void>
  /** Fault: from now on, never answers control requests of `subtype` (a hung CLI); reading stdin goes on. */
  readonly neverAnswer: (subtype: string) => Effect.Effect<void>
  /** Writes one stdout frame as-is (any object: unknown types, malformed shapes…). */
  readonly emit: (frame: object) => Effect.Effect<void>
  /** Writes raw stdout text (garbage, partial lines, giant lines…). */
  readonly emitRaw: (text: string | Uint8Array) => Effect.Effect<void>
  /** Writes to stderr. */
  readonly stderr: (text: string) => Effect.Effect<void>
  /** `system/init` for this session (fields can be overridden). */
  readonly init: (fields?: Readonly<Record<string, unknown>>) => Effect.Effect<void>
  /** One `assistant` frame per content block; a string is a text block. */
  readonly assistant: (...content: ReadonlyArray<string | Message.ContentBlock>) => Effect.Effect<void>
  /** A `user` frame with tool results. */
  readonly toolResult: (toolUseId: string, content: string, isError?: boolean) => Effect.Effect<void>
  /** A `result` frame (`success` with this text by default; override any field), then `session_state_changed: idle`. */
  readonly result: (text?: string, fields?: Readonly<Record<string, unknown>>) => Effect.Effect<void>
  /** `system/init`, an assistant text and a success `result`: a whole turn. */
  readonly turn: (text: string) => Effect.Effect<void>
  /** Sends a control request to the SDK and waits for its answer (fails with `ScriptError` on an error answer). */
  readonly request: (
    subtype: string,
    body?: Readonly<Record<string, unknown>>,
    options?: { readonly timeout?: Duration.DurationInput }
  ) => Effect.Effect<unknown, ScriptError>
  /** Like `request`, but returns the raw `control_response` body, error answers included. */
  readonly requestRaw: (
    subtype: string,
    body?: Readonly<Record<string, unknown>>,
    options?: { readonly timeout?: Duration.DurationInput }
  ) => Effect.Effect<Message.ControlResponse["response"], ScriptError>
  /** Asks the SDK's permission handler about a tool call; returns its answer. */
  readonly canUseTool: (
    toolName: string,
    input: Readonly<Record<string, unknown>>,
    extra?: Readonly<Record<string, unknown>>
  ) => Effect.Effect<unknown, ScriptError>
  /** Sends a `control_cancel_request` for one of our requests (by the id `request` used). */
  readonly cancel: (requestId: string) => Effect.Effect<void>
  /** Control requests the SDK cancelled (`control_cancel_request` ids). */
  readonly cancelled: Effect.Effect<ReadonlyArray<string>>
  /** Everything the SDK wrote, in order. */
  readonly received: Effect.Effect<ReadonlyArray<Message.StdinMessage>>
  /** Exits with this code after writing `stderr`. */
  readonly exit: (code: number, stderr?: string) => Effect.Effect<void>
  /** Dies as if killed by a signal. */
  readonly kill: (signal?: string) => Effect.Effect<void>
  /** Fault: never writes anything again (a hung CLI). Control requests are still answered. */
  readonly stall: Effect.Effect<never>
  /**
   * Fault: writes one stdout line that is not JSON (a banner, a log line; default `"this is not JSON"`). The SDK
   * delivers it in-band as a `transport_error` with a `MalformedLine`, and the stream goes on.
   */
  readonly malformed: (line?: string) => Effect.Effect<void>
  /**
   * Fault: writes one assistant frame whose text is `bytes` characters long, as a single line. Above the SDK's
   * `maxLineBytes` it is skipped and delivered in-band as a `transport_error` with a `LineTooLong`; the stream goes
   * on.
   */
  readonly giantLine: (bytes: number) => Effect.Effect<void>
  /**
   * Fault: writes a frame of a type this SDK does not know (default `"scripted_future_message"`), as a newer CLI
   * would. The SDK delivers it as an `UnknownMessage` (`type: "unknown"`, `reason: "unknown_type"`, the frame in
   * `raw`).
   */
  readonly unknownMessage: (type?: string, fields?: Readonly<Record<string, unknown>>) => Effect.Effect<void>
}

/**
 * A Transport layer where every `open` runs `script` against a fresh {@link ScriptedCli}. When the script
 * returns, the fake CLI waits for stdin to close and exits with code 0; when it fails, it exits with code 70 and
 * the error on stderr.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (
  script: (cli: ScriptedCli) => Effect.Effect<void, ScriptError>,
  options?: Options
) => Layer.Layer<Transport.Transport> = internal.layer

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Session id used in emitted frames. Defaults to `--session-id` / `--resume` from argv, else a fixed UUID. */
  readonly sessionId?: string | undefined
  /** The initialize response to answer with (merged over the defaults). */
  readonly initializeResponse?: Readonly<Record<string, unknown>> | undefined
  /** Answers to control requests, by subtype, in place of the defaults (in effect before the SDK sends anything). */
  readonly responders?: Readonly<Record<string, Responder>> | undefined
  /** Default timeout of `expect*` and `request` steps. Defaults to 10 seconds. */
  readonly stepTimeout?: Duration.DurationInput | undefined
  /**
   * Control request subtypes answered only after a delay (a slow CLI), in effect before the SDK sends anything;
   * see {@link ScriptedCli.slow}.
   */
  readonly delays?: Readonly<Record<string, Duration.DurationInput>> | undefined
  /**
   * Control request subtypes never answered (e.g. `["initialize"]`: a CLI that never finishes starting), in effect
   * before the SDK sends anything.
   */
  readonly silent?: ReadonlyArray<string> | undefined
}

/**
 * Fault: a CLI that exits as soon as it starts, with this code (default 1) and stderr, before writing anything. A
 * `query` (and everything that waits for start-up: `queryWithOrigin`, `initializationResult`, the Promise API's
 * `startup()`) fails with `StartupFailed { reason: "FirstLine", exitCode, stderrTail }`, its `cause` the
 * `ProcessExited`; a `session`, which returns before start-up is done, fails its first `turn` with
 * `ProcessExited { code, signal: null, stderrTail }`.
 *
 * @since 0.1.0
 * @category layers
 */
export const exitsAtOnce: (code?: number, stderr?: string) => Layer.Layer<Transport.Transport> = internal.exitsAtOnce

/**
 * Fault: a CLI that starts but never answers `initialize` (and says nothing else). The SDK fails with
 * `StartupFailed { reason: "FirstLine" }` once `initializeTimeout` (60 s by default; `TestClock` time under
 * `it.effect`) is used up, and the CLI is stopped.
 *
 * @since 0.1.0
 * @category layers
 */
export const neverAnswersInitialize: Layer.Layer<Transport.Transport> = internal.neverAnswersInitialize

/**
 * A CLI that answers every prompt with `echo: <prompt>` in one turn: the simplest stand-in.
 *
 * @since 0.1.0
 * @category layers
 */
export const echo: Layer.Layer<Transport.Transport> = internal.echo

/**
 * The text of a user message (text blocks joined).
 *
 * @since 0.1.0
 * @category helpers
 */
export const textOf = (message: Message.UserMessage): string =>
  typeof message.message.content === "string"
    ? message.message.content
    : message.message.content.map((b) => (b.type === "text" ? b.text : "")).join("")

/**
 * The default `initialize` response of the scripted CLI.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultInitializeResponse: Schema.Schema.Type<typeof Message.InitializeResponse> =
  internal.defaultInitializeResponse
