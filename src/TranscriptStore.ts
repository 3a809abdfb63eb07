/**
 * Session transcripts kept outside the machine that ran them: the Effect form of the official SDK's `SessionStore`.
 *
 * The CLI writes every session to `<config dir>/projects/<project>/<session id>.jsonl` on the machine that runs it.
 * With a {@link TranscriptStore} in the environment, a session asks the CLI to mirror every entry it writes
 * (`--session-mirror`: the CLI then writes a `transcript_mirror` frame on stdout after each local write) and appends
 * the entries to the store, off the message path; and a session that `resume`s, `continue`s or forks one loads it
 * from the store into its config dir before the CLI is spawned. So a session started on machine A resumes on
 * machine B, with its whole history (tool calls included), as long as both use the same store.
 *
 * Keys are those of the official `SessionStore`: `projectKey` (the project directory name, i.e. the cwd encoded as
 * the CLI does, see `SessionStore.encodeCwd`), `sessionId`, and `subpath` for a subagent transcript
 * (`subagents/agent-<id>`, the path under `<session id>/` without `.jsonl`). Entries are the transcript lines as
 * JSON objects, passed through untouched.
 *
 * Implementations: {@link layerMemory} (tests), {@link layerFileSystem} (the CLI's own layout under a directory of
 * your choice, e.g. a shared volume), the SQL one in `effect-claude-agent/sql` (SQLite embedded, PostgreSQL shared;
 * its own entry point, so `@effect/sql` stays an optional peer), and {@link fromSessionStore} for an object with the
 * official `SessionStore` shape.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Stream from "effect/Stream"
 * import { type AgentOptions, ClaudeAgent, NodeClaudeAgent, TranscriptStore } from "effect-claude-agent"
 *
 * const turn = (options: AgentOptions.Options, prompt: string) =>
 *   Effect.scoped(Effect.gen(function*() {
 *     const session = yield* ClaudeAgent.session(options)
 *     yield* Stream.runDrain(session.turn(prompt))
 *     return yield* session.sessionId
 *   }))
 *
 * const program = Effect.gen(function*() {
 *   // machine A
 *   const id = yield* turn({ env: { CLAUDE_CONFIG_DIR: "/tmp/a" } }, "Remember the number 7")
 *   // machine B: nothing under /tmp/b, the transcript comes from the store
 *   yield* turn({ env: { CLAUDE_CONFIG_DIR: "/tmp/b" }, resume: id }, "Which number?")
 * })
 *
 * program.pipe(
 *   Effect.provide(Layer.merge(NodeClaudeAgent.layer, TranscriptStore.layerMemory)),
 *   Effect.runPromise
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as fileSystem from "./internal/transcript/fileSystem.js"
import * as memory from "./internal/transcript/memory.js"
import * as promiseStore from "./internal/transcript/promiseStore.js"
import {
  Mirror,
  TranscriptStore,
  TranscriptStoreError,
  TranscriptStoreErrorTypeId
} from "./internal/transcript/store.js"

// ---------------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Where a transcript lives in the store (the official `SessionKey`).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionKey {
  /** The project: the cwd's directory name under `projects/` (`SessionStore.encodeCwd` of the resolved cwd). */
  readonly projectKey: string
  readonly sessionId: string
  /**
   * Leave `undefined` for the main transcript; a subagent transcript has `subagents/agent-<id>`. Never empty.
   */
  readonly subpath?: string | undefined
}

/**
 * One transcript line: a JSON object with a string `type`; most carry a `uuid` (the store's idempotency key) and
 * an ISO `timestamp`. The rest is opaque and passed through.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly type: string
  readonly uuid?: string
  readonly timestamp?: string
  readonly [key: string]: unknown
}

/**
 * A session of a project, with the time it was last written (epoch milliseconds).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionListing {
  readonly sessionId: string
  readonly mtime: number
}

/**
 * The store.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Appends entries to a transcript, in order. An entry whose `uuid` the transcript already has is skipped (retries
   * and re-imports do not duplicate); entries without a `uuid` are always appended.
   */
  readonly append: (key: SessionKey, entries: ReadonlyArray<Entry>) => Effect.Effect<void, TranscriptStoreError>
  /** Every entry of a transcript, in append order; `None` for a key never written. */
  readonly load: (key: SessionKey) => Effect.Effect<Option.Option<ReadonlyArray<Entry>>, TranscriptStoreError>
  /** The sessions (main transcripts) of a project, in no particular order. */
  readonly list: (projectKey: string) => Effect.Effect<ReadonlyArray<SessionListing>, TranscriptStoreError>
  /** The subpaths written under a session (its subagent transcripts), in no particular order. */
  readonly listSubkeys: (
    key: { readonly projectKey: string; readonly sessionId: string }
  ) => Effect.Effect<ReadonlyArray<string>, TranscriptStoreError>
  /**
   * Deletes a transcript; without `subpath`, the session with all its subpaths. Deleting what does not exist
   * succeeds.
   */
  readonly delete: (key: SessionKey) => Effect.Effect<void, TranscriptStoreError>
}

export {
  /**
   * The store in use. Provide one (e.g. {@link layerMemory}) and every session mirrors its transcript to it and
   * loads `resume`d sessions from it.
   *
   * @since 0.1.0
   * @category tags
   */
  TranscriptStore
}

// ---------------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------------

export {
  /**
   * A store operation failed.
   *
   * - `InvalidKey`: an empty or path-like `projectKey` / `sessionId`, or an empty `subpath` segment;
   * - `InvalidEntry`: an entry that is not an object with a string `type`;
   * - `BackendFailed`: the backend failed (the file system, the database, the adapter's promise rejected); the
   *   backend's error is the `cause`;
   * - `Timeout`: the operation did not finish in time (`loadTimeout` when a session loads its transcript).
   *
   * @since 0.1.0
   * @category errors
   */
  TranscriptStoreError,
  /**
   * @since 0.1.0
   * @category type ids
   */
  TranscriptStoreErrorTypeId
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isTranscriptStoreError = (u: unknown): u is TranscriptStoreError =>
  Predicate.hasProperty(u, TranscriptStoreErrorTypeId)

// ---------------------------------------------------------------------------------------------------------------------
// mirroring
// ---------------------------------------------------------------------------------------------------------------------

/**
 * How sessions use the store (the official `sessionStoreFlush` and `loadTimeoutMs`).
 *
 * @since 0.1.0
 * @category models
 */
export interface MirrorSettings {
  /**
   * `"batched"` (the default): entries are buffered and appended at the end of a turn (on the `result` message),
   * when 500 are pending, and when the session closes. `"eager"`: every `transcript_mirror` frame is appended on its
   * own as soon as it arrives. Either way appends run on a fiber of their own, in order, never on the message path;
   * the session's close waits for what is pending (bounded by {@link MirrorSettings.closeTimeout}).
   */
  readonly flush: "batched" | "eager"
  /**
   * The bound of each `load` / `listSubkeys` / `list` call when a session loads its transcript before spawning;
   * past it the session fails (`StartupFailed`, reason `Spawn`, the `TranscriptStoreError` with reason `Timeout` as
   * its cause). Defaults to 60 seconds.
   */
  readonly loadTimeout: Duration.DurationInput
  /**
   * How long a closing session waits for the CLI's last entries (written after stdin is closed) and for its
   * pending appends. Defaults to 10 seconds.
   */
  readonly closeTimeout: Duration.DurationInput
}

export {
  /**
   * The {@link MirrorSettings} sessions use; provide another value with `Effect.provideService` or
   * `Layer.succeed(TranscriptStore.Mirror, …)`.
   *
   * @since 0.1.0
   * @category tags
   */
  Mirror
}

// ---------------------------------------------------------------------------------------------------------------------
// implementations
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A store in memory (for tests): one per call, gone with the process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<Service> = memory.make

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TranscriptStore> = Layer.effect(TranscriptStore, makeMemory)

/**
 * Options of {@link makeFileSystem}.
 *
 * @since 0.1.0
 * @category options
 */
export interface FileSystemOptions {
  /**
   * The directory that holds the projects: transcripts are `<directory>/<projectKey>/<sessionId>.jsonl` and
   * `<directory>/<projectKey>/<sessionId>/<subpath>.jsonl`, the CLI's own layout under `<config dir>/projects`.
   */
  readonly directory: string
}

/**
 * A store on the file system, in the CLI's own layout (so a `projects/` directory the CLI wrote is a store, and a
 * store is a `projects/` directory `SessionStore` can read). Appends are serialized per process; the uuids of a
 * transcript are read from its file on its first append, to skip the entries it already has.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFileSystem: (
  options: FileSystemOptions
) => Effect.Effect<Service, never, FileSystem.FileSystem | Path.Path> = fileSystem.make

/**
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (
  options: FileSystemOptions
): Layer.Layer<TranscriptStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(TranscriptStore, makeFileSystem(options))

/**
 * The official SDK's `SessionStore` shape (the methods this SDK calls; the optional ones may be missing).
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseSessionStore {
  /** Appends entries to a transcript (called again with the same entries after a failure: keep it idempotent). */
  append(key: SessionKey, entries: Array<Entry>): Promise<void>
  /** The whole transcript, or `null` when the store has none. */
  load(key: SessionKey): Promise<Array<Entry> | null>
  /** The sessions of a project, with their modification times (without it, `continue` finds nothing). */
  listSessions?(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>>
  /** Removes a transcript. */
  delete?(key: SessionKey): Promise<void>
  /** The subpaths (subagent transcripts) stored under a session. */
  listSubkeys?(key: { projectKey: string; sessionId: string }): Promise<Array<string>>
}

/**
 * A store from an object with the official `SessionStore` shape. A missing `listSessions` lists nothing, a missing
 * `listSubkeys` has no subpaths, a missing `delete` does nothing (the official contract). A rejected or throwing
 * method is a `BackendFailed` error; what `load` returns is checked (an array of entries, or `null`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSessionStore: (store: PromiseSessionStore) => Service = promiseStore.fromSessionStore

/**
 * The other way round: a store as an object with the official `SessionStore` shape, its effects run by `run`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toSessionStore: (
  service: Service,
  run: <A>(effect: Effect.Effect<A, TranscriptStoreError>) => Promise<A>
) => Required<PromiseSessionStore> = promiseStore.toSessionStore

/**
 * Copies a session the CLI wrote (its main transcript and, unless `includeSubagents` is `false`, its subagent
 * transcripts) from a `projects/` directory into a store, in batches of `batchSize` entries (default 500). The
 * Effect form of the official `importSessionToStore`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const importSession: (
  source: { readonly projectsDir: string; readonly projectKey: string; readonly sessionId: string },
  options?: { readonly includeSubagents?: boolean | undefined; readonly batchSize?: number | undefined }
) => Effect.Effect<void, TranscriptStoreError, TranscriptStore | FileSystem.FileSystem | Path.Path> =
  fileSystem.importSession
