/**
 * Session history on disk: the transcripts the Claude Code CLI writes, listed and read back as typed values.
 *
 * The CLI appends every session to `<config dir>/projects/<encoded cwd>/<session id>.jsonl`, one JSON entry per
 * line. The config dir is `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`. The encoded cwd is the working directory after
 * symlinks are resolved, with every UTF-16 code unit that is not an ASCII letter or digit replaced by `-`; a name
 * longer than 200 characters is cut to 200 and suffixed with `-` and a base-36 hash of the path (see
 * {@link encodeCwd}; verified against the files the CLI 2.1.332 writes).
 *
 * {@link SessionHistory} lists the sessions of a directory (newest first), reads the metadata of one session
 * ({@link SessionInfo}), and streams a transcript as typed {@link TranscriptItem}s or as the prompts and replies
 * exchanged ({@link ConversationMessage}). Reading is streaming with a bounded line size, so the size of a transcript
 * does not matter; lines that are not JSON, or entries of a kind this version does not know, are delivered in-band
 * ({@link MalformedEntry}, {@link UnknownEntry}) and never end the stream.
 *
 * @example
 * ```ts
 * import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
 * import * as NodePath from "@effect/platform-node/NodePath"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Stream from "effect/Stream"
 * import { SessionHistory } from "effect-claude-agent"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* SessionHistory.SessionHistory
 *   const [latest] = yield* store.list(process.cwd(), { limit: 1 })
 *   if (latest === undefined) return
 *   console.log(latest.title ?? latest.firstPrompt, latest.messageCount)
 *   yield* store.messages(latest.sessionId, process.cwd()).pipe(
 *     Stream.runForEach((m) => Effect.log(`${m.role}: ${m.text}`))
 *   )
 * })
 *
 * const SessionHistoryLive = SessionHistory.layer().pipe(
 *   Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
 * )
 *
 * Effect.runPromise(program.pipe(Effect.provide(SessionHistoryLive)))
 * ```
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/transcript/history.js"
import { SessionHistory, SessionHistoryError, SessionHistoryErrorTypeId } from "./internal/transcript/history.js"
import * as Message from "./Message.js"

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

// ---------------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------------

export {
  /**
   * A session could not be read.
   *
   * - `SessionNotFound`: there is no transcript for this session id in the project directory of the cwd;
   * - `InvalidSessionId`: the id is not a UUID (the CLI only writes UUID-named transcripts; this also keeps ids such
   *   as `../x` from reaching the file system);
   * - `FileSystemError`: the file system failed otherwise (permissions, I/O); the `PlatformError` is the `cause`.
   *
   * @since 0.1.0
   * @category errors
   */
  SessionHistoryError,
  /**
   * @since 0.1.0
   * @category type ids
   */
  SessionHistoryErrorTypeId
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isSessionHistoryError = (u: unknown): u is SessionHistoryError =>
  Predicate.hasProperty(u, SessionHistoryErrorTypeId)

// ---------------------------------------------------------------------------------------------------------------------
// transcript entries
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Fields of the entries that form the conversation (`user`, `assistant`, `system`, `attachment`): each is a node of
 * a tree linked by `parentUuid` (a rewind or a resumed fork starts a new branch in the same file).
 *
 * @since 0.1.0
 * @category transcript
 */
export const ChainFields = {
  uuid: Schema.String,
  parentUuid: opt(Schema.NullOr(Schema.String)),
  /** Set on a `compact_boundary`: the entry before the compaction (`parentUuid` is then `null`). */
  logicalParentUuid: opt(Schema.NullOr(Schema.String)),
  sessionId: Schema.String,
  timestamp: Schema.String,
  /** `true` for entries of a subagent (`Task`) conversation. */
  isSidechain: opt(Schema.Boolean),
  /** The working directory of the CLI when the entry was written (symlinks resolved). */
  cwd: opt(Schema.String),
  /** The git branch of the cwd (`"HEAD"` outside a repository). */
  gitBranch: opt(Schema.String),
  /** The CLI version that wrote the entry. */
  version: opt(Schema.String),
  userType: opt(Schema.String),
  /** How the CLI was started: `"cli"`, `"sdk-ts"`, `"sdk-py"`, … */
  entrypoint: opt(Schema.String),
  agentId: opt(Schema.String)
}

/**
 * A user message of the conversation: a prompt, a tool result (`tool_result` blocks, the tool's structured output
 * in `toolUseResult`), an interrupt marker, a slash command and its output, or a message the CLI adds (`isMeta`,
 * e.g. a caveat; `isCompactSummary`, the summary that replaces the history after a compaction).
 *
 * @since 0.1.0
 * @category transcript
 */
export const UserEntry = Schema.Struct({
  type: Schema.Literal("user"),
  ...ChainFields,
  message: Schema.Struct({
    role: Schema.Literal("user"),
    content: Message.UserContent
  }),
  isMeta: opt(Schema.Boolean),
  isCompactSummary: opt(Schema.Boolean),
  isVisibleInTranscriptOnly: opt(Schema.Boolean),
  toolUseResult: opt(Schema.Unknown),
  sourceToolAssistantUUID: opt(Schema.String),
  promptId: opt(Schema.String),
  permissionMode: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type UserEntry = typeof UserEntry.Type

/**
 * One content block of a model reply. Like the SDK stream, the CLI writes one `assistant` entry per content block,
 * all with the same `message.id`. An API error is written as a synthetic reply (`model: "<synthetic>"`,
 * `isApiErrorMessage: true`).
 *
 * @since 0.1.0
 * @category transcript
 */
export const AssistantEntry = Schema.Struct({
  type: Schema.Literal("assistant"),
  ...ChainFields,
  message: Schema.Struct({
    id: Schema.String,
    role: Schema.Literal("assistant"),
    model: opt(Schema.String),
    content: Schema.Array(Message.ContentBlock),
    stop_reason: opt(Schema.NullOr(Schema.String)),
    stop_sequence: opt(Schema.NullOr(Schema.String)),
    usage: opt(Schema.NullOr(Message.Usage))
  }),
  requestId: opt(Schema.String),
  isApiErrorMessage: opt(Schema.Boolean),
  error: opt(Schema.Unknown)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type AssistantEntry = typeof AssistantEntry.Type

/**
 * A system entry of the conversation (`compact_boundary`, API errors, local command notices, …).
 *
 * @since 0.1.0
 * @category transcript
 */
export const SystemEntry = Schema.Struct({
  type: Schema.Literal("system"),
  ...ChainFields,
  subtype: opt(Schema.String),
  content: opt(Schema.String),
  level: opt(Schema.String),
  isMeta: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type SystemEntry = typeof SystemEntry.Type

/**
 * Context the CLI attached to the conversation (environment, model, skills, dates, file mentions, …); `attachment`
 * holds its `type` and kind-specific fields.
 *
 * @since 0.1.0
 * @category transcript
 */
export const AttachmentEntry = Schema.Struct({
  type: Schema.Literal("attachment"),
  ...ChainFields,
  attachment: Schema.Struct({ type: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type AttachmentEntry = typeof AttachmentEntry.Type

/**
 * A conversation summary (written by older CLI versions when compacting; the last one wins).
 *
 * @since 0.1.0
 * @category transcript
 */
export const SummaryEntry = Schema.Struct({
  type: Schema.Literal("summary"),
  summary: Schema.String,
  leafUuid: opt(Schema.NullOr(Schema.String))
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type SummaryEntry = typeof SummaryEntry.Type

/**
 * A title set by the user (`title` option, `/rename`, `rename_session`); the last one wins. The CLI appends it again
 * after every turn.
 *
 * @since 0.1.0
 * @category transcript
 */
export const CustomTitleEntry = Schema.Struct({
  type: Schema.Literal("custom-title"),
  customTitle: Schema.String,
  sessionId: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type CustomTitleEntry = typeof CustomTitleEntry.Type

/**
 * A title generated by the model; the last one wins, and a custom title wins over it.
 *
 * @since 0.1.0
 * @category transcript
 */
export const AiTitleEntry = Schema.Struct({
  type: Schema.Literal("ai-title"),
  aiTitle: Schema.String,
  sessionId: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type AiTitleEntry = typeof AiTitleEntry.Type

/**
 * A tag set on the session; the last one wins (an empty tag clears it).
 *
 * @since 0.1.0
 * @category transcript
 */
export const TagEntry = Schema.Struct({
  type: Schema.Literal("tag"),
  tag: Schema.String,
  sessionId: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type TagEntry = typeof TagEntry.Type

/**
 * The latest prompt and the leaf of the conversation, appended after every turn.
 *
 * @since 0.1.0
 * @category transcript
 */
export const LastPromptEntry = Schema.Struct({
  type: Schema.Literal("last-prompt"),
  lastPrompt: opt(Schema.String),
  leafUuid: opt(Schema.NullOr(Schema.String)),
  sessionId: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type LastPromptEntry = typeof LastPromptEntry.Type

/**
 * A prompt entering (`enqueue`) or leaving (`dequeue`) the CLI's input queue.
 *
 * @since 0.1.0
 * @category transcript
 */
export const QueueOperationEntry = Schema.Struct({
  type: Schema.Literal("queue-operation"),
  operation: Schema.String,
  timestamp: opt(Schema.String),
  sessionId: opt(Schema.String),
  content: opt(Schema.Unknown)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type QueueOperationEntry = typeof QueueOperationEntry.Type

/**
 * The backups of the files tracked for rewinding, at a user message (`enableFileCheckpointing`).
 *
 * @since 0.1.0
 * @category transcript
 */
export const FileHistorySnapshotEntry = Schema.Struct({
  type: Schema.Literal("file-history-snapshot"),
  messageId: Schema.String,
  snapshot: Schema.Unknown,
  isSnapshotUpdate: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type FileHistorySnapshotEntry = typeof FileHistorySnapshotEntry.Type

/**
 * An entry whose `type` this version does not model (the CLI writes many bookkeeping kinds: `api-request`,
 * `cost-state`, `tools-used`, `file-history-delta`, …), with `reason: "unknown_type"`; or an entry of a known kind
 * whose fields did not match, with `reason: "invalid"` and the mismatch in `issue`. The parsed object is in `raw`.
 *
 * @since 0.1.0
 * @category transcript
 */
export const UnknownEntry = Schema.Struct({
  type: Schema.Literal("unknown"),
  reason: Schema.Literal("unknown_type", "invalid"),
  /** The entry's `type` field, when it is a string. */
  entryType: opt(Schema.String),
  /** 1-based line number in the transcript file. */
  lineNumber: Schema.Number,
  raw: Message.JsonObject,
  issue: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type UnknownEntry = typeof UnknownEntry.Type

/**
 * A line that is not an entry: not JSON (`invalid_json`, e.g. a line cut short by a crash), JSON but not an object
 * (`not_an_object`), or longer than the line limit (`too_long`; it is skipped without being held in memory).
 *
 * @since 0.1.0
 * @category transcript
 */
export const MalformedEntry = Schema.Struct({
  type: Schema.Literal("malformed"),
  reason: Schema.Literal("invalid_json", "not_an_object", "too_long"),
  /** 1-based line number in the transcript file. */
  lineNumber: Schema.Number,
  /** Size of the line in bytes. */
  bytes: Schema.Number,
  /** The start of the line (at most 1 KiB). */
  head: Schema.String,
  description: Schema.String
})
/**
 * @since 0.1.0
 * @category transcript
 */
export type MalformedEntry = typeof MalformedEntry.Type

/**
 * Every entry kind this version models.
 *
 * @since 0.1.0
 * @category transcript
 */
export const TranscriptEntry = Schema.Union(
  UserEntry,
  AssistantEntry,
  SystemEntry,
  AttachmentEntry,
  SummaryEntry,
  CustomTitleEntry,
  AiTitleEntry,
  TagEntry,
  LastPromptEntry,
  QueueOperationEntry,
  FileHistorySnapshotEntry
)
/**
 * @since 0.1.0
 * @category transcript
 */
export type TranscriptEntry = typeof TranscriptEntry.Type

/**
 * One line of a transcript, as {@link SessionHistory} yields it: a modeled entry (validated, extra fields kept), an
 * {@link UnknownEntry} or a {@link MalformedEntry}. Empty lines are skipped.
 *
 * @since 0.1.0
 * @category transcript
 */
export const TranscriptItem = Schema.Union(TranscriptEntry, UnknownEntry, MalformedEntry)
/**
 * @since 0.1.0
 * @category transcript
 */
export type TranscriptItem = typeof TranscriptItem.Type

/**
 * Turns one transcript line into a {@link TranscriptItem} (`undefined` for a blank line). Never fails. Content
 * blocks of a type this SDK does not know become `Message.UnknownBlock`s.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeLine: (line: string, lineNumber: number) => TranscriptItem | undefined = internal.makeLineDecoder([
  ["user", internal.validator(UserEntry)],
  ["assistant", internal.validator(AssistantEntry)],
  ["system", internal.validator(SystemEntry)],
  ["attachment", internal.validator(AttachmentEntry)],
  ["summary", internal.validator(SummaryEntry)],
  ["custom-title", internal.validator(CustomTitleEntry)],
  ["ai-title", internal.validator(AiTitleEntry)],
  ["tag", internal.validator(TagEntry)],
  ["last-prompt", internal.validator(LastPromptEntry)],
  ["queue-operation", internal.validator(QueueOperationEntry)],
  ["file-history-snapshot", internal.validator(FileHistorySnapshotEntry)]
])

// ---------------------------------------------------------------------------------------------------------------------
// conversation
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A prompt of the session: a user message with text, image or document content that the user (or the program)
 * sent — not a tool result, an interrupt marker, a command's output, or a message the CLI added (`isMeta`,
 * compaction summaries) — in the main conversation (not a subagent's).
 *
 * @since 0.1.0
 * @category conversation
 */
export interface PromptMessage {
  readonly role: "user"
  /** The text blocks of the prompt joined with `"\n"` (or the string content). */
  readonly text: string
  readonly uuid: string
  readonly timestamp: string
  readonly entry: UserEntry
}

/**
 * A reply of the model in the main conversation: the `assistant` entries of one API message merged.
 *
 * @since 0.1.0
 * @category conversation
 */
export interface ReplyMessage {
  readonly role: "assistant"
  /** The text blocks of the reply joined (empty for a reply that only calls tools). */
  readonly text: string
  /** The API message id shared by the merged entries. */
  readonly messageId: string
  /** The `uuid` of the first merged entry. */
  readonly uuid: string
  readonly timestamp: string
  readonly model: string | undefined
  /** Every content block of the reply, in order (text, thinking, tool calls, …). */
  readonly content: ReadonlyArray<Message.ContentBlock>
  /** `true` for the synthetic reply the CLI writes for an API error. */
  readonly isApiError: boolean
}

/**
 * A prompt or a reply.
 *
 * @since 0.1.0
 * @category conversation
 */
export type ConversationMessage = PromptMessage | ReplyMessage

/**
 * `true` for a user entry that is a prompt (see {@link PromptMessage}).
 *
 * @since 0.1.0
 * @category conversation
 */
export const isPrompt = (entry: TranscriptItem): entry is UserEntry => internal.isPrompt(entry)

/**
 * The text of a user or assistant entry: for a user entry its string content or its text blocks joined with `"\n"`;
 * for an assistant entry its text blocks joined (as `Message.text` does).
 *
 * @since 0.1.0
 * @category conversation
 */
export const entryText = (entry: UserEntry | AssistantEntry): string => internal.entryText(entry)

/**
 * Keeps the prompts and replies of a stream of transcript items, merging the entries of one API message into one
 * {@link ReplyMessage}. Entries of subagents (`isSidechain`) are left out. Holds at most one reply in memory.
 *
 * @since 0.1.0
 * @category conversation
 */
export const toConversation = <E, R>(
  self: Stream.Stream<TranscriptItem, E, R>
): Stream.Stream<ConversationMessage, E, R> => internal.toConversation(self)

// ---------------------------------------------------------------------------------------------------------------------
// session info
// ---------------------------------------------------------------------------------------------------------------------

/**
 * What is known about a session without replaying it.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionInfo {
  readonly sessionId: string
  /** The transcript file. */
  readonly path: string
  /** The working directory recorded in the transcript (its first entry that has one). */
  readonly cwd: string | undefined
  /** When the transcript was last written (file modification time). */
  readonly lastModified: Date
  /** Size of the transcript in bytes. */
  readonly fileSize: number
  /**
   * Number of messages of the main conversation, as the API sees them: user entries (prompts, tool results,
   * interrupt markers, commands; not `isMeta` ones nor compaction summaries) plus assistant *messages* — the CLI
   * writes one line per content block, so consecutive lines that share a `message.id` count once. Subagent entries
   * (`isSidechain`) are not counted; entries of abandoned branches (after a rewind) are, as branches are not
   * resolved. `undefined` when the info was read with `fast: true` from a file larger than 64 KiB.
   */
  readonly messageCount: number | undefined
  /** The first prompt (newlines turned into spaces, trimmed, cut to 200 characters plus `…`). */
  readonly firstPrompt: string | undefined
  /** The latest prompt, from the CLI's `last-prompt` entries. */
  readonly lastPrompt: string | undefined
  /** The title to show: the custom title, else the AI-generated title, else the summary. */
  readonly title: string | undefined
  readonly customTitle: string | undefined
  readonly aiTitle: string | undefined
  readonly summary: string | undefined
  readonly tag: string | undefined
  /** The timestamp of the first entry that has one. */
  readonly createdAt: Date | undefined
  /** The git branch recorded by the last entry that has one. */
  readonly gitBranch: string | undefined
}

/**
 * Options of {@link Service.info}.
 *
 * @since 0.1.0
 * @category options
 */
export interface InfoOptions {
  /**
   * Read at most 64 KiB from each end of the transcript instead of the whole file (the method of the official
   * SDKs): the first prompt, cwd and creation time come from the start, titles, tag, last prompt and branch from
   * the end (the CLI appends title, tag and last prompt again after every turn, so the end is current). If the
   * first prompt is not in the first 64 KiB, the file is read on until it is found. `messageCount` needs the whole
   * file, so it is `undefined` for a file larger than 64 KiB. Defaults to `false`: one streaming pass over the whole
   * file, exact.
   */
  readonly fast?: boolean | undefined
}

/**
 * Options of {@link Service.list}.
 *
 * @since 0.1.0
 * @category options
 */
export interface ListOptions extends InfoOptions {
  /** At most this many sessions. Leave `undefined` for all. */
  readonly limit?: number | undefined
  /** Skip this many of the newest sessions first. Defaults to `0`. */
  readonly offset?: number | undefined
}

// ---------------------------------------------------------------------------------------------------------------------
// service
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Options of {@link make} and {@link layer}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /**
   * The Claude config directory (the one that holds `projects/`). Leave `undefined` to use `CLAUDE_CONFIG_DIR`,
   * else `$HOME/.claude` (`USERPROFILE` when `HOME` is unset), read through the `ConfigProvider` when the layer is
   * built.
   */
  readonly configDir?: string | undefined
  /**
   * The longest transcript line that is read, in bytes; a longer line is skipped without being held in memory and
   * reported as a {@link MalformedEntry} with reason `too_long`. Defaults to 64 MiB.
   */
  readonly maxLineBytes?: number | undefined
}

/**
 * The session history service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The config directory in use. */
  readonly configDir: string
  /** `<configDir>/projects`. */
  readonly projectsDir: string
  /** The directory name of a cwd under `projects/` (pure; does not resolve symlinks, see {@link encodeCwd}). */
  readonly encodeCwd: (cwd: string) => string
  /**
   * The project directory of a cwd: the cwd is made absolute and its symlinks resolved (as the CLI sees it) before
   * it is encoded. For a cwd longer than 200 encoded characters whose exact directory does not exist, a directory
   * with the same 200-character prefix is used (another hash function, as older CLI builds used). The directory may
   * not exist.
   */
  readonly projectDir: (cwd: string) => Effect.Effect<string>
  /**
   * The sessions of a cwd, newest (last modified) first; an empty list if it has none. Transcripts are sorted by
   * their modification time and paged (`offset`, `limit`) before any is read, so only the page's files are read
   * (at most 4 at a time). Files whose name is not `<uuid>.jsonl` (and subagent directories) are ignored.
   */
  readonly list: (
    cwd: string,
    options?: ListOptions
  ) => Effect.Effect<ReadonlyArray<SessionInfo>, SessionHistoryError>
  /** The metadata of one session of a cwd. */
  readonly info: (
    sessionId: string,
    cwd: string,
    options?: InfoOptions
  ) => Effect.Effect<SessionInfo, SessionHistoryError>
  /**
   * Every line of a transcript as a typed item, in file order, read as a stream (memory is bounded by the longest
   * line, see {@link Options.maxLineBytes}).
   */
  readonly entries: (sessionId: string, cwd: string) => Stream.Stream<TranscriptItem, SessionHistoryError>
  /** The prompts and replies of a session, in file order (see {@link toConversation}). */
  readonly messages: (sessionId: string, cwd: string) => Stream.Stream<ConversationMessage, SessionHistoryError>
}

export {
  /**
   * @since 0.1.0
   * @category tags
   */
  SessionHistory
}

/**
 * The project directory name the CLI uses for a cwd: every UTF-16 code unit that is not `[A-Za-z0-9]` becomes `-`
 * (so `/home/me/my_app.v2` → `-home-me-my-app-v2`, and an emoji becomes `--`); a result longer than 200 characters
 * is cut to 200 and suffixed with `-` and the base-36 absolute value of the 32-bit string hash (`h = h * 31 + c`) of
 * the unencoded path. Pass the cwd with symlinks resolved, as the CLI sees it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeCwd = (cwd: string): string => internal.encodeCwd(cwd)

/**
 * Builds the service. The config directory comes from `options.configDir`, else from the `ConfigProvider`
 * (`CLAUDE_CONFIG_DIR`, else `HOME`/`USERPROFILE` + `/.claude`); it fails with a `ConfigError` when none is set.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options?: Options
): Effect.Effect<Service, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> =>
  internal.make(options, decodeLine)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: Options
): Layer.Layer<SessionHistory, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(SessionHistory, make(options))

/**
 * The layer with options read from `Config`, e.g.
 * `layerConfig({ configDir: Config.string("MY_CLAUDE_DIR") })`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Config.Config.Wrap<Options>
): Layer.Layer<SessionHistory, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(SessionHistory, internal.makeConfig(options, decodeLine))
