/** @internal */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Chunk from "effect/Chunk"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as os from "node:os"
import * as path from "node:path"
import * as Message from "../../Message.js"
import type * as Api from "../../SessionHistory.js"
import * as framing from "../transport/framing.js"

// Note: this module and SessionHistory.ts import each other. Values of SessionHistory.ts are only used inside
// functions (never at the top level), so either module may be loaded first.

// ---------------------------------------------------------------------------------------------------------------------
// cwd encoding
// ---------------------------------------------------------------------------------------------------------------------

/**
 * What decides the config directory the CLI uses: the environment it is given (`AgentOptions.Options`' `env` and
 * `envMode`).
 *
 * @internal
 */
export interface ConfigDirOptions {
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly envMode?: "overlay" | "replace" | undefined
}

/** The config directory the CLI will use with these options. @internal */
export const configDirFor = (options: ConfigDirOptions): string | undefined => {
  const parent = options.envMode === "replace" ? {} : process.env
  const env: Record<string, string | undefined> = { ...parent, ...options.env }
  const explicit = env["CLAUDE_CONFIG_DIR"]
  if (explicit !== undefined && explicit !== "") return explicit
  const home = env["HOME"] ?? (options.envMode === "replace" ? undefined : os.homedir())
  return home === undefined ? undefined : path.join(home, ".claude")
}

/** The CLI cuts encoded names to this many characters before appending the hash. @internal */
export const MAX_ENCODED_LENGTH = 200

/** The CLI's 32-bit string hash (`h = h * 31 + charCode`, over UTF-16 code units). @internal */
export const hashPath = (s: string): string => {
  let h = 0
  for (let i = 0; i < s.length; i++) h = ((h << 5) - h + s.charCodeAt(i)) | 0
  return Math.abs(h).toString(36)
}

/** @internal */
export const encodeCwd = (cwd: string): string => {
  const encoded = cwd.replace(/[^a-zA-Z0-9]/g, "-")
  return encoded.length <= MAX_ENCODED_LENGTH ? encoded : `${encoded.slice(0, MAX_ENCODED_LENGTH)}-${hashPath(cwd)}`
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** @internal */
export const isSessionId = (s: string): boolean => UUID.test(s)

// ---------------------------------------------------------------------------------------------------------------------
// line splitting
// ---------------------------------------------------------------------------------------------------------------------

const NEWLINE = 0x0a
const HEAD_CHARS = 1024
const toBuffer = framing.toBuffer

/** @internal */
export const DEFAULT_MAX_LINE_BYTES = framing.DEFAULT_MAX_LINE_BYTES

/** One line of a file (without its line break), or a line that exceeded the limit. @internal */
export type SplitLine =
  | { readonly _tag: "Line"; readonly lineNumber: number; readonly text: string }
  | { readonly _tag: "TooLong"; readonly lineNumber: number; readonly bytes: number; readonly head: string }

/** @internal */
export interface LineSplitter {
  readonly push: (chunk: Uint8Array, out: Array<SplitLine>) => void
  readonly end: (out: Array<SplitLine>) => void
}

/**
 * Splits bytes into lines on `\n`, decoding UTF-8 per complete line (so characters split across chunks survive).
 * A trailing `\r` is dropped. Memory is bounded by `maxLineBytes`: the bytes of a longer line are counted and
 * dropped, keeping only its first KiB. Unlike the CLI's framing, this yields raw lines with their line numbers.
 *
 * @internal
 */
export const makeLineSplitter = (maxLineBytes: number = DEFAULT_MAX_LINE_BYTES): LineSplitter => {
  let lineNumber = 0
  return framing.makeSplitter<SplitLine>(
    maxLineBytes,
    (buf, start, end, out) => {
      out.push({ _tag: "Line", lineNumber: ++lineNumber, text: buf.toString("utf8", start, end) })
    },
    (bytes, head, out) => {
      out.push({ _tag: "TooLong", lineNumber: ++lineNumber, bytes, head })
    }
  )
}

// ---------------------------------------------------------------------------------------------------------------------
// the error and the tag
// ---------------------------------------------------------------------------------------------------------------------

/** @internal */
export const SessionHistoryErrorTypeId: unique symbol = Symbol.for(
  "effect-claude-agent/SessionHistory/SessionHistoryError"
)

/** @internal */
export type SessionHistoryErrorTypeId = typeof SessionHistoryErrorTypeId

/** Defined here (re-exported by SessionHistory.ts) so that this module needs only types from there. @internal */
export class SessionHistoryError extends Schema.TaggedError<SessionHistoryError>(
  "effect-claude-agent/SessionHistoryError"
)("SessionHistoryError", {
  reason: Schema.Literal("SessionNotFound", "InvalidSessionId", "FileSystemError"),
  sessionId: Schema.optional(Schema.String),
  /** The file or directory involved. */
  path: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  readonly [SessionHistoryErrorTypeId]: SessionHistoryErrorTypeId = SessionHistoryErrorTypeId
  override get message(): string {
    const where = this.path === undefined ? "" : ` (${this.path})`
    switch (this.reason) {
      case "SessionNotFound":
        return `No transcript found for session ${this.sessionId ?? "?"}${where}`
      case "InvalidSessionId":
        return `Invalid session id ${JSON.stringify(this.sessionId ?? "")}: session ids are UUIDs`
      case "FileSystemError":
        return `Reading session history failed${where}: ${this.description ?? "file system error"}`
    }
  }
}

/** @internal */
export class SessionHistory extends Context.Tag("effect-claude-agent/SessionHistory")<SessionHistory, Api.Service>() {}

// ---------------------------------------------------------------------------------------------------------------------
// decoding
// ---------------------------------------------------------------------------------------------------------------------

type Raw = { readonly [key: string]: unknown }

const isRecord = (u: unknown): u is Raw => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export interface Validator {
  readonly is: (u: unknown) => u is Api.TranscriptEntry
  readonly describe: (u: unknown) => string
}

/** The validator of one entry schema; its parser is built on first use. @internal */
export const validator = <A extends Api.TranscriptEntry, I>(schema: Schema.Schema<A, I>): Validator => {
  let is: ((u: unknown) => u is A) | undefined
  let validate: ((u: unknown) => Either.Either<A, ParseResult.ParseIssue>) | undefined
  return {
    is: (u): u is A => (is ??= Schema.is(schema))(u),
    describe: (u) => {
      const result = (validate ??= ParseResult.validateEither(schema))(u)
      return result._tag === "Left" ? ParseResult.TreeFormatter.formatIssueSync(result.left) : "unknown mismatch"
    }
  }
}

/** Turns one transcript line into an item (`undefined` for a blank line). @internal */
export type LineDecoder = (line: string, lineNumber: number) => Api.TranscriptItem | undefined

interface Validators {
  readonly byType: ReadonlyMap<string, Validator>
  readonly block: (u: unknown) => boolean
}

const malformed = (
  reason: Api.MalformedEntry["reason"],
  lineNumber: number,
  bytes: number,
  head: string,
  description: string
): Api.MalformedEntry => ({ type: "malformed", reason, lineNumber, bytes, head, description })

const unknownEntry = (
  raw: Raw,
  reason: Api.UnknownEntry["reason"],
  lineNumber: number,
  issue?: string
): Api.UnknownEntry => {
  const entryType = typeof raw["type"] === "string" ? raw["type"] : undefined
  return {
    type: "unknown",
    reason,
    lineNumber,
    raw,
    ...(entryType !== undefined ? { entryType } : {}),
    ...(issue !== undefined ? { issue } : {})
  }
}

/** Replaces content blocks this SDK does not know with `unknown` blocks; `undefined` when nothing changed. */
const normalizeContent = (v: Validators, raw: Raw): Raw | undefined => {
  const message = raw["message"]
  if (!isRecord(message)) return undefined
  const content = message["content"]
  if (!Array.isArray(content)) return undefined
  let changed = false
  const blocks = content.map((block: unknown) => {
    if (v.block(block)) return block
    changed = true
    return { type: "unknown", raw: block }
  })
  return changed ? { ...raw, message: { ...message, content: blocks } } : undefined
}

const decodeLineWith = (v: Validators, line: string, lineNumber: number): Api.TranscriptItem | undefined => {
  if (line.length === 0) return undefined
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (e) {
    if (line.trim().length === 0) return undefined
    return malformed(
      "invalid_json",
      lineNumber,
      Buffer.byteLength(line),
      line.slice(0, HEAD_CHARS),
      e instanceof Error ? e.message : "invalid JSON"
    )
  }
  if (!isRecord(value)) {
    const head = line.slice(0, HEAD_CHARS)
    return malformed("not_an_object", lineNumber, Buffer.byteLength(line), head, "not a JSON object")
  }
  const type = value["type"]
  if (typeof type !== "string") return unknownEntry(value, "invalid", lineNumber, "missing string field `type`")
  const entry = v.byType.get(type)
  if (entry === undefined) return unknownEntry(value, "unknown_type", lineNumber)
  if (entry.is(value)) return value
  if (type === "user" || type === "assistant") {
    const normalized = normalizeContent(v, value)
    if (normalized !== undefined && entry.is(normalized)) return normalized
  }
  return unknownEntry(value, "invalid", lineNumber, entry.describe(value))
}

/**
 * A {@link LineDecoder} for the entry types in `byType` (handed in by SessionHistory.ts, which defines the schemas).
 *
 * @internal
 */
export const makeLineDecoder = (byType: ReadonlyArray<readonly [type: string, validator: Validator]>): LineDecoder => {
  let block: ((u: unknown) => boolean) | undefined
  const v: Validators = { byType: new Map(byType), block: (u) => (block ??= Schema.is(Message.ContentBlock))(u) }
  return (line, lineNumber) => decodeLineWith(v, line, lineNumber)
}

const fromSplitLine = (decodeLine: LineDecoder, line: SplitLine): Api.TranscriptItem | undefined =>
  line._tag === "Line"
    ? decodeLine(line.text, line.lineNumber)
    : malformed(
      "too_long",
      line.lineNumber,
      line.bytes,
      line.head,
      `a line of ${line.bytes} bytes exceeded the limit and was skipped`
    )

// ---------------------------------------------------------------------------------------------------------------------
// conversation
// ---------------------------------------------------------------------------------------------------------------------

// what the CLI writes as a user message but the user did not type (interrupt markers, command output, IDE context)
const NOT_A_PROMPT = new RegExp(
  "^(?:" + [
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<session-start-hook>",
    "<tick>",
    "<goal>",
    "\\[Request interrupted by user[^\\]]*\\]",
    "\\s*<ide_opened_file>[\\s\\S]*</ide_opened_file>\\s*$",
    "\\s*<ide_selection>[\\s\\S]*</ide_selection>\\s*$"
  ].join("|") + ")"
)
const COMMAND_NAME = /<command-name>(.*?)<\/command-name>/

const userTexts = (content: unknown): Array<string> => {
  if (typeof content === "string") return [content]
  if (!Array.isArray(content)) return []
  const texts: Array<string> = []
  for (const block of content) {
    if (isRecord(block) && block["type"] === "text" && typeof block["text"] === "string") texts.push(block["text"])
  }
  return texts
}

const hasToolResult = (content: unknown): boolean =>
  Array.isArray(content) && content.some((block) => isRecord(block) && block["type"] === "tool_result")

const hasPromptContent = (content: unknown): boolean => {
  if (typeof content === "string") return content.trim().length > 0
  if (!Array.isArray(content)) return false
  return content.some((block) =>
    isRecord(block) && (block["type"] === "image" || block["type"] === "document" ||
      (block["type"] === "text" && typeof block["text"] === "string" && block["text"].trim().length > 0))
  )
}

/** @internal */
export const isPrompt = (entry: Api.TranscriptItem): entry is Api.UserEntry => {
  if (entry.type !== "user") return false
  if (entry.isMeta === true || entry.isCompactSummary === true || entry.isSidechain === true) return false
  if (entry.isVisibleInTranscriptOnly === true) return false
  const content = entry.message.content
  if (hasToolResult(content) || !hasPromptContent(content)) return false
  return !userTexts(content).some((text) => {
    const flat = text.replace(/\n/g, " ").trim()
    return COMMAND_NAME.test(flat) || NOT_A_PROMPT.test(flat)
  })
}

/** @internal */
export const entryText = (entry: Api.UserEntry | Api.AssistantEntry): string =>
  entry.type === "user" ? userTexts(entry.message.content).join("\n") : assistantText(entry.message.content)

const assistantText = (content: ReadonlyArray<Message.ContentBlock>): string => {
  let out = ""
  for (const block of content) if (block.type === "text") out += block.text
  return out
}

interface PendingReply {
  readonly first: Api.AssistantEntry
  readonly content: Array<Message.ContentBlock>
}

const finishReply = (pending: PendingReply): Api.ReplyMessage => ({
  role: "assistant",
  text: assistantText(pending.content),
  messageId: pending.first.message.id,
  uuid: pending.first.uuid,
  timestamp: pending.first.timestamp,
  model: pending.first.message.model,
  content: pending.content,
  isApiError: pending.first.isApiErrorMessage === true
})

/** @internal */
export const toConversation = <E, R>(
  self: Stream.Stream<Api.TranscriptItem, E, R>
): Stream.Stream<Api.ConversationMessage, E, R> =>
  Stream.suspend(() => {
    let pending: PendingReply | undefined
    const flush = (out: Array<Api.ConversationMessage>) => {
      if (pending !== undefined) out.push(finishReply(pending))
      pending = undefined
    }
    return self.pipe(
      Stream.mapChunks((chunk) => {
        const out: Array<Api.ConversationMessage> = []
        for (const item of chunk) {
          if (item.type === "assistant") {
            if (item.isSidechain === true) continue
            if (pending !== undefined && pending.first.message.id === item.message.id) {
              pending.content.push(...item.message.content)
            } else {
              flush(out)
              pending = { first: item, content: [...item.message.content] }
            }
          } else if (item.type === "user" && item.isSidechain !== true) {
            flush(out)
            if (isPrompt(item)) {
              out.push({
                role: "user",
                text: userTexts(item.message.content).join("\n"),
                uuid: item.uuid,
                timestamp: item.timestamp,
                entry: item
              })
            }
          }
        }
        return Chunk.unsafeFromArray(out)
      }),
      Stream.concat(Stream.suspend(() => {
        const out: Array<Api.ConversationMessage> = []
        flush(out)
        return Stream.fromIterable(out)
      }))
    )
  })

// ---------------------------------------------------------------------------------------------------------------------
// session info
// ---------------------------------------------------------------------------------------------------------------------

const FIRST_PROMPT_CHARS = 200

/** Collects session metadata from parsed lines, in file order. */
interface InfoCollector {
  cwd: string | undefined
  createdAt: string | undefined
  gitBranch: string | undefined
  firstPrompt: string | undefined
  commandFallback: string | undefined
  lastPrompt: string | undefined
  customTitle: string | undefined
  aiTitle: string | undefined
  summary: string | undefined
  tag: string | undefined
  messageCount: number
  lastAssistantId: string | undefined
}

const newCollector = (): InfoCollector => ({
  cwd: undefined,
  createdAt: undefined,
  gitBranch: undefined,
  firstPrompt: undefined,
  commandFallback: undefined,
  lastPrompt: undefined,
  customTitle: undefined,
  aiTitle: undefined,
  summary: undefined,
  tag: undefined,
  messageCount: 0,
  lastAssistantId: undefined
})

const str = (u: unknown): string | undefined => typeof u === "string" ? u : undefined

/** The first-prompt rule of the official SDKs: a user text that is not a command, tool result or marker. */
const observeFirstPrompt = (c: InfoCollector, o: Raw) => {
  if (o["isMeta"] === true || o["isCompactSummary"] === true || o["isSidechain"] === true) return
  const message = o["message"]
  if (!isRecord(message)) return
  const content = message["content"]
  if (hasToolResult(content)) return
  for (const raw of userTexts(content)) {
    const text = raw.replace(/\n/g, " ").trim()
    if (text.length === 0) continue
    const command = COMMAND_NAME.exec(text)
    if (command !== null) {
      c.commandFallback ??= command[1]
      continue
    }
    if (NOT_A_PROMPT.test(text)) continue
    c.firstPrompt = text.length > FIRST_PROMPT_CHARS ? `${text.slice(0, FIRST_PROMPT_CHARS).trimEnd()}\u2026` : text
    return
  }
}

/** Fields whose first occurrence wins. */
const observeHead = (c: InfoCollector, o: Raw) => {
  c.createdAt ??= str(o["timestamp"])
  c.cwd ??= str(o["cwd"])
  if (c.firstPrompt === undefined && o["type"] === "user") observeFirstPrompt(c, o)
}

/** Fields whose last occurrence wins. */
const observeTail = (c: InfoCollector, o: Raw) => {
  const branch = str(o["gitBranch"])
  if (branch !== undefined) c.gitBranch = branch
  switch (o["type"]) {
    case "custom-title": {
      c.customTitle = str(o["customTitle"]) ?? c.customTitle
      break
    }
    case "ai-title": {
      c.aiTitle = str(o["aiTitle"]) ?? c.aiTitle
      break
    }
    case "summary": {
      c.summary = str(o["summary"]) ?? c.summary
      break
    }
    case "tag": {
      const tag = str(o["tag"])
      if (tag !== undefined) c.tag = tag.length === 0 ? undefined : tag
      break
    }
    case "last-prompt": {
      c.lastPrompt = str(o["lastPrompt"]) ?? c.lastPrompt
      break
    }
  }
}

const observeCount = (c: InfoCollector, o: Raw) => {
  if (o["isSidechain"] === true) return
  if (o["type"] === "user") {
    if (o["isMeta"] !== true && o["isCompactSummary"] !== true) c.messageCount++
  } else if (o["type"] === "assistant") {
    const message = o["message"]
    const id = (isRecord(message) ? str(message["id"]) : undefined) ?? str(o["uuid"])
    // the CLI writes the blocks of one API message as consecutive lines with the same id
    if (id === undefined || id !== c.lastAssistantId) c.messageCount++
    c.lastAssistantId = id
  }
}

const parseObject = (text: string): Raw | undefined => {
  if (text.length === 0) return undefined
  try {
    const value: unknown = JSON.parse(text)
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}

interface FileFacts {
  readonly sessionId: string
  readonly path: string
  readonly lastModified: Date
  readonly fileSize: number
}

const toInfo = (facts: FileFacts, c: InfoCollector, messageCount: number | undefined): Api.SessionInfo => ({
  sessionId: facts.sessionId,
  path: facts.path,
  cwd: c.cwd,
  lastModified: facts.lastModified,
  fileSize: facts.fileSize,
  messageCount,
  firstPrompt: c.firstPrompt ?? c.commandFallback,
  lastPrompt: c.lastPrompt,
  title: c.customTitle ?? c.aiTitle ?? c.summary,
  customTitle: c.customTitle,
  aiTitle: c.aiTitle,
  summary: c.summary,
  tag: c.tag,
  createdAt: toDate(c.createdAt),
  gitBranch: c.gitBranch
})

const toDate = (s: string | undefined): Date | undefined => {
  if (s === undefined) return undefined
  const d = new Date(s)
  return Number.isNaN(d.getTime()) ? undefined : d
}

/** The complete lines of a window of a file; `partialStart` / `partialEnd`: the window cuts a line there. */
const windowLines = (buf: Buffer, partialStart: boolean, partialEnd: boolean): Array<string> => {
  const lines: Array<string> = []
  let start = 0
  if (partialStart) {
    const nl = buf.indexOf(NEWLINE)
    if (nl === -1) return lines
    start = nl + 1
  }
  while (start < buf.length) {
    const nl = buf.indexOf(NEWLINE, start)
    if (nl === -1) {
      if (!partialEnd) lines.push(buf.toString("utf8", start))
      break
    }
    lines.push(buf.toString("utf8", start, nl))
    start = nl + 1
  }
  return lines
}

/** Bytes read from each end of a transcript by `fast` info. @internal */
export const WINDOW_BYTES = 64 * 1024

const CHUNK_BYTES = 64 * 1024

// ---------------------------------------------------------------------------------------------------------------------
// service
// ---------------------------------------------------------------------------------------------------------------------

const isNotFound = (e: PlatformError.PlatformError): boolean => e._tag === "SystemError" && e.reason === "NotFound"

const fileSystemError = (e: PlatformError.PlatformError, path: string, sessionId?: string): SessionHistoryError =>
  isNotFound(e) && sessionId !== undefined
    ? new SessionHistoryError({ reason: "SessionNotFound", sessionId, path })
    : new SessionHistoryError({
      reason: "FileSystemError",
      path,
      description: e.message,
      cause: e,
      ...(sessionId !== undefined ? { sessionId } : {})
    })

const configDirConfig = (path: Path.Path): Config.Config<string> =>
  Config.nonEmptyString("CLAUDE_CONFIG_DIR").pipe(
    Config.orElse(() =>
      Config.nonEmptyString("HOME").pipe(
        Config.orElse(() => Config.nonEmptyString("USERPROFILE")),
        Config.map((home) => path.join(home, ".claude"))
      )
    )
  )

/** @internal */
export const makeConfig = (
  options: Config.Config.Wrap<Api.Options>,
  decodeLine: LineDecoder
): Effect.Effect<Api.Service, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.flatMap(Config.unwrap(options), (options) => make(options, decodeLine))

/** What the store's file operations share: the platform services and the resolved settings. */
interface Store {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly projectsDir: string
  readonly maxLineBytes: number
}

/** The directory of a project's transcripts: the CLI's encoding of the canonical `cwd` (long names end in a hash). */
const projectDirOf = (store: Store, cwd: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const { fs, path, projectsDir } = store
    const absolute = path.resolve(cwd)
    const canonical = yield* fs.realPath(absolute).pipe(Effect.orElseSucceed(() => absolute))
    const encoded = encodeCwd(canonical)
    const exact = path.join(projectsDir, encoded)
    if (encoded.length <= MAX_ENCODED_LENGTH) return exact
    if (yield* fs.exists(exact).pipe(Effect.orElseSucceed(() => false))) return exact
    const prefix = `${encoded.slice(0, MAX_ENCODED_LENGTH)}-`
    const names = yield* fs.readDirectory(projectsDir).pipe(Effect.orElseSucceed((): Array<string> => []))
    const match = names.filter((name) => name.startsWith(prefix)).sort()[0]
    return match === undefined ? exact : path.join(projectsDir, match)
  })

/** The lines of a transcript, streamed; a line longer than `maxLineBytes` is reported, not buffered. */
const linesOf = (store: Store, file: string, sessionId: string): Stream.Stream<SplitLine, SessionHistoryError> =>
  Stream.suspend(() => {
    const splitter = makeLineSplitter(store.maxLineBytes)
    return store.fs.stream(file, { chunkSize: CHUNK_BYTES }).pipe(
      Stream.mapError((e) => fileSystemError(e, file, sessionId)),
      Stream.mapChunks((chunks) => {
        const out: Array<SplitLine> = []
        for (const chunk of chunks) splitter.push(chunk, out)
        return Chunk.unsafeFromArray(out)
      }),
      Stream.concat(Stream.suspend(() => {
        const out: Array<SplitLine> = []
        splitter.end(out)
        return Stream.fromIterable(out)
      }))
    )
  })

const checkId = (sessionId: string): Effect.Effect<void, SessionHistoryError> =>
  isSessionId(sessionId)
    ? Effect.void
    : Effect.fail(new SessionHistoryError({ reason: "InvalidSessionId", sessionId }))

const factsOf = (sessionId: string, file: string, stat: FileSystem.File.Info): FileFacts => ({
  sessionId,
  path: file,
  lastModified: Option.getOrElse(stat.mtime, () => new Date(0)),
  fileSize: Number(stat.size)
})

/** The transcript file of a session: `SessionNotFound` when there is none. */
const sessionFile = (store: Store, sessionId: string, cwd: string): Effect.Effect<FileFacts, SessionHistoryError> =>
  Effect.gen(function*() {
    yield* checkId(sessionId)
    const dir = yield* projectDirOf(store, cwd)
    const file = store.path.join(dir, `${sessionId}.jsonl`)
    const stat = yield* store.fs.stat(file).pipe(Effect.mapError((e) => fileSystemError(e, file, sessionId)))
    if (stat.type !== "File") {
      return yield* Effect.fail(new SessionHistoryError({ reason: "SessionNotFound", sessionId, path: file }))
    }
    return factsOf(sessionId, file, stat)
  })

const readWindow = (store: Store, file: string, sessionId: string, offset: number, bytes: number) =>
  store.fs.stream(file, { offset, bytesToRead: bytes, chunkSize: bytes }).pipe(
    Stream.runCollect,
    Effect.map((chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks).map(toBuffer))),
    Effect.mapError((e) => fileSystemError(e, file, sessionId))
  )

/** A session's info from one streaming pass over the whole file. */
const exactInfo = (store: Store, facts: FileFacts): Effect.Effect<Api.SessionInfo, SessionHistoryError> =>
  Effect.gen(function*() {
    const c = newCollector()
    yield* linesOf(store, facts.path, facts.sessionId).pipe(
      Stream.runForEachChunk((chunk) =>
        Effect.sync(() => {
          for (const line of chunk) {
            if (line._tag !== "Line") continue
            const o = parseObject(line.text)
            if (o === undefined) continue
            observeHead(c, o)
            observeTail(c, o)
            observeCount(c, o)
          }
        })
      )
    )
    return toInfo(facts, c, c.messageCount)
  })

/** A session's info from its head and tail windows; reads on from the start only while the first prompt is missing. */
const fastInfo = (store: Store, facts: FileFacts): Effect.Effect<Api.SessionInfo, SessionHistoryError> =>
  Effect.gen(function*() {
    const c = newCollector()
    const wholeFile = facts.fileSize <= WINDOW_BYTES
    const head = yield* readWindow(store, facts.path, facts.sessionId, 0, WINDOW_BYTES)
    for (const line of windowLines(head, false, !wholeFile)) {
      const o = parseObject(line)
      if (o === undefined) continue
      observeHead(c, o)
      observeTail(c, o)
      observeCount(c, o)
    }
    if (wholeFile) return toInfo(facts, c, c.messageCount)
    if (c.firstPrompt === undefined) {
      yield* linesOf(store, facts.path, facts.sessionId).pipe(
        Stream.runForEachWhile((line) =>
          Effect.sync(() => {
            if (line._tag === "Line") {
              const o = parseObject(line.text)
              if (o !== undefined) observeHead(c, o)
            }
            return c.firstPrompt === undefined
          })
        )
      )
    }
    const tailOffset = Math.max(0, facts.fileSize - WINDOW_BYTES)
    const tail = yield* readWindow(store, facts.path, facts.sessionId, tailOffset, WINDOW_BYTES)
    for (const line of windowLines(tail, tailOffset > 0, false)) {
      const o = parseObject(line)
      if (o !== undefined) observeTail(c, o)
    }
    return toInfo(facts, c, undefined)
  })

const infoOf = (store: Store, facts: FileFacts, options: Api.InfoOptions | undefined) =>
  options?.fast === true ? fastInfo(store, facts) : exactInfo(store, facts)

/** The transcripts in a project directory, newest first (ties by id); none when the directory does not exist. */
const sessionFiles = (store: Store, dir: string): Effect.Effect<Array<FileFacts>, SessionHistoryError> =>
  Effect.gen(function*() {
    const { fs, path } = store
    const names = yield* fs.readDirectory(dir).pipe(
      Effect.catchIf(isNotFound, () => Effect.succeed<Array<string>>([])),
      Effect.mapError((e) => fileSystemError(e, dir))
    )
    const ids = names.filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -6)).filter(isSessionId)
    const files = yield* Effect.forEach(ids, (sessionId) => {
      const file = path.join(dir, `${sessionId}.jsonl`)
      return fs.stat(file).pipe(
        Effect.map((stat) => stat.type === "File" ? factsOf(sessionId, file, stat) : undefined),
        // removed since the directory was read
        Effect.catchIf(isNotFound, () => Effect.succeed(undefined)),
        Effect.mapError((e) => fileSystemError(e, file, sessionId))
      )
    }, { concurrency: 16 })
    return files
      .filter((f): f is FileFacts => f !== undefined)
      .sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime() || (a.sessionId < b.sessionId ? -1 : 1))
  })

/** @internal */
export const make = (
  options: Api.Options = {},
  decodeLine: LineDecoder
): Effect.Effect<Api.Service, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const configDir = path.resolve(options.configDir ?? (yield* configDirConfig(path)))
    const projectsDir = path.join(configDir, "projects")
    const store: Store = { fs, path, projectsDir, maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES }
    const projectDir = (cwd: string) => projectDirOf(store, cwd)

    const info = Effect.fn("SessionHistory.info")(
      function*(sessionId: string, cwd: string, options?: Api.InfoOptions) {
        const facts = yield* sessionFile(store, sessionId, cwd)
        return yield* infoOf(store, facts, options)
      }
    )

    const list = Effect.fn("SessionHistory.list")(function*(cwd: string, options?: Api.ListOptions) {
      const sorted = yield* sessionFiles(store, yield* projectDir(cwd))
      const offset = Math.max(0, options?.offset ?? 0)
      const page = options?.limit === undefined
        ? sorted.slice(offset)
        : sorted.slice(offset, offset + Math.max(0, options.limit))
      const infos = yield* Effect.forEach(page, (facts) =>
        infoOf(store, facts, options).pipe(
          Effect.catchIf(
            (e) => e.reason === "SessionNotFound",
            () => Effect.succeed(undefined)
          )
        ), { concurrency: 4 })
      return infos.filter((i): i is Api.SessionInfo => i !== undefined)
    })

    const entries = (sessionId: string, cwd: string): Stream.Stream<Api.TranscriptItem, SessionHistoryError> =>
      Stream.unwrap(Effect.map(sessionFile(store, sessionId, cwd), (facts) =>
        linesOf(store, facts.path, sessionId).pipe(
          Stream.mapChunks((chunk) => {
            const out: Array<Api.TranscriptItem> = []
            for (const line of chunk) {
              const item = fromSplitLine(decodeLine, line)
              if (item !== undefined) out.push(item)
            }
            return Chunk.unsafeFromArray(out)
          })
        ))).pipe(Stream.withSpan("SessionHistory.entries"))

    const messages = (sessionId: string, cwd: string) => toConversation(entries(sessionId, cwd))

    return SessionHistory.of({
      configDir,
      projectsDir,
      encodeCwd,
      projectDir,
      list,
      info,
      entries,
      messages
    })
  })
