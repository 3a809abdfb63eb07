/**
 * Record a real session once, replay it forever: {@link layerRecord} wraps whatever Transport is provided under it
 * and writes every frame in both directions to a JSONL file; {@link layerReplay} / {@link replay} play the file back
 * as a Transport (no CLI, no network) and check that the client sends equivalent frames.
 *
 * The file has one JSON object per line: a `recording` header, then per CLI process (`connection`, numbered from 0)
 * an `open` entry (the CLI's arguments), `stdin` frames (client → CLI), `stdout` frames (CLI → client), `stderr`
 * text, `end_input` (the client closed stdin) and `exit` (code and signal), each with `t`, the milliseconds since
 * the process was opened.
 *
 * On replay, `stdout` frames are written as recorded, each as soon as every `stdin` frame recorded before it was
 * received. Frames the client sends are compared with the recorded ones after normalization:
 * - the `request_id` of the client's own `control_request`s is ignored, and the recorded responses to them are
 *   re-correlated to the ids the client uses now (also for its `control_cancel_request`s);
 * - the session id the SDK assigned (`--session-id`) is replaced, in both directions, by the one assigned now;
 * - `uuid` and `timestamp` fields (and any `ignoreFields`) are ignored.
 * Ids chosen by the CLI (its `can_use_tool` request ids, `tool_use_id`s, the `toolUseID` the client echoes) are
 * replayed as recorded, so they are compared exactly: an answer to the wrong request is a mismatch.
 *
 * A frame that differs ends the replayed CLI with code 70 and the diff on stderr, and {@link replay} fails with a
 * {@link ReplayMismatch} whose message names the frame (connection, index, line, type and subtype) and shows every
 * differing field.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { ClaudeAgent, NodeClaudeAgent } from "effect-claude-agent"
 * import { Recording } from "effect-claude-agent/testing"
 *
 * const program = ClaudeAgent.query("SAY hi").pipe(Stream.runCollect)
 *
 * // once, against the real CLI
 * const record = program.pipe(
 *   Effect.provide(Recording.layerRecord("test/fixtures/hi.jsonl").pipe(Layer.provide(NodeClaudeAgent.layer)))
 * )
 * // in every test run: no CLI, no network
 * const replayed = program.pipe(Recording.replay("test/fixtures/hi.jsonl"))
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as internal from "./internal/testing/recording.js"
import type { Transport } from "./Transport.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * The client did not do what the recording says. `reason`:
 * - `FrameDiffers`: it sent a frame that differs from the recorded one (`differences` lists the fields);
 * - `UnexpectedFrame`: it sent a frame where the recording has stdin closed;
 * - `MissingFrame`: it closed stdin, sent nothing in time, or ended before sending a recorded frame;
 * - `LaunchDiffers`: it started the CLI with other arguments (options);
 * - `UnexpectedConnection` / `MissingConnection`: it started more / fewer CLI processes than recorded.
 *
 * `index` is the position of the frame among the connection's entries (`-1` when not about one frame) and `line`
 * its line in the file.
 *
 * @since 0.1.0
 * @category errors
 */
export const ReplayMismatch: typeof internal.ReplayMismatch = internal.ReplayMismatch

/**
 * @since 0.1.0
 * @category errors
 */
export type ReplayMismatch = internal.ReplayMismatch

/**
 * A recording could not be read (`ReadFailed`), parsed (`InvalidRecording`) or written (`WriteFailed`).
 *
 * @since 0.1.0
 * @category errors
 */
export const RecordingError: typeof internal.RecordingError = internal.RecordingError

/**
 * @since 0.1.0
 * @category errors
 */
export type RecordingError = internal.RecordingError

// -------------------------------------------------------------------------------------------------
// the file
// -------------------------------------------------------------------------------------------------

/**
 * One line of a recording (after the header).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Entry: typeof internal.Entry = internal.Entry

/**
 * @since 0.1.0
 * @category models
 */
export type Entry = Schema.Schema.Type<typeof internal.Entry>

/**
 * The entry that starts a connection: the CLI's arguments and working directory.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenEntry = Schema.Schema.Type<typeof internal.OpenEntry>

/**
 * One recorded CLI process.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedConnection {
  readonly open: OpenEntry
  /** Everything after `open`, in order. */
  readonly entries: ReadonlyArray<Entry>
  /** The line of each entry in the source file (1-based). */
  readonly lines: ReadonlyArray<number>
  /** Set when starting the CLI failed (`CliNotFound` / `SpawnFailed`, encoded); replay fails the same way. */
  readonly openFailed?: Readonly<Record<string, unknown>> | undefined
}

/**
 * A parsed recording.
 *
 * @since 0.1.0
 * @category models
 */
export interface Recording {
  /** The file it was read from, for error messages. */
  readonly source: string | undefined
  readonly connections: ReadonlyArray<RecordedConnection>
}

/**
 * Reads and parses a recording file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read: (path: string) => Effect.Effect<Recording, RecordingError> = internal.read

/**
 * Parses recording text (JSONL); `source` names it in error messages.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse: (text: string, source?: string) => Effect.Effect<Recording, RecordingError> = internal.parse

// -------------------------------------------------------------------------------------------------
// record
// -------------------------------------------------------------------------------------------------

/**
 * Wraps the Transport provided under it: every CLI process it starts is recorded to `path` (created or truncated
 * when the layer is built; parent directories are created). Entries are written as they happen, so a crashed run
 * still leaves a readable file. The environment is not recorded (it may hold secrets).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRecord: (path: string) => Layer.Layer<Transport, RecordingError, Transport> = internal.layerRecord

// -------------------------------------------------------------------------------------------------
// replay
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface ReplayOptions {
  /** How long to wait for each frame the client should send. Defaults to 10 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * `"instant"` (default): stdout frames are written as soon as their turn comes. `"recorded"`: with the recorded
   * delays (through the `Clock`, so `TestClock` controls them).
   */
  readonly timing?: "instant" | "recorded" | undefined
  /** More field names ignored wherever they appear in frames the client sends (`uuid` and `timestamp` always are). */
  readonly ignoreFields?: ReadonlyArray<string> | undefined
  /** Compare the CLI's arguments with the recorded ones (options changed = mismatch). Defaults to `true`. */
  readonly checkArgs?: boolean | undefined
  /**
   * Make `check` fail unless every recorded CLI process was started and replayed to its end. Defaults to `true`.
   */
  readonly complete?: boolean | undefined
}

/**
 * The state of a replay, provided by {@link layerReplay}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayService {
  /** Fails with the first mismatch, or (unless `complete: false`) with what the client left unplayed. */
  readonly check: Effect.Effect<void, ReplayMismatch>
  /** Every mismatch so far. */
  readonly mismatches: Effect.Effect<ReadonlyArray<ReplayMismatch>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const Replay: typeof internal.Replay = internal.Replay

/**
 * @since 0.1.0
 * @category tags
 */
export type Replay = internal.Replay

/**
 * A Transport that plays `source` (a file path or a parsed {@link Recording}) back: each `open` replays the next
 * recorded CLI process. Use {@link Replay} `.check` at the end, or {@link replay}, which does it for you.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReplay: (
  source: string | Recording,
  options?: ReplayOptions
) => Layer.Layer<Transport | Replay, RecordingError> = internal.layerReplay

/**
 * Runs `self` against a replay of `source` and then checks it: fails with a {@link ReplayMismatch} if the client
 * sent anything else than recorded (whatever `self` did), else returns what `self` returned. Close the sessions of
 * `self` inside it (e.g. `Effect.scoped`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const replay: (
  source: string | Recording,
  options?: ReplayOptions
) => <A, E, R>(
  self: Effect.Effect<A, E, R>
) => Effect.Effect<A, E | ReplayMismatch | RecordingError, Exclude<R, Transport | Replay>> = internal.replay
