/** @internal */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, CliNotFound, SpawnFailed, VersionIncompatible } from "../../AgentError.js"
import type * as Message from "../../Message.js"
import type * as Api from "../../Recording.js"
import { required as requiredTransport, Transport } from "../../Transport.js"
import type { Connection, ExitStatus, LaunchSpec, MemoryPeer } from "../../Transport.js"
import * as Conn from "../transport/connection.js"
import { makeConnection } from "../transport/memoryTransport.js"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/** @internal */
export const TypeId: Api.TypeId = Symbol.for("effect-claude-agent/Recording") as Api.TypeId

const Difference = Schema.Struct({
  /** Where the frames differ, e.g. `response.response.behavior` (empty: the whole frame). */
  path: Schema.String,
  /** The recorded value, as JSON (`(absent)` when missing). */
  recorded: Schema.String,
  /** The value the client sent now, as JSON (`(absent)` when missing). */
  sent: Schema.String
})

/** @internal */
export class ReplayMismatch extends Schema.TaggedError<ReplayMismatch>("effect-claude-agent/Recording/ReplayMismatch")(
  "ReplayMismatch",
  {
    reason: Schema.Literal(
      "FrameDiffers",
      "UnexpectedFrame",
      "MissingFrame",
      "LaunchDiffers",
      "UnexpectedConnection",
      "MissingConnection"
    ),
    connection: Schema.Number,
    index: Schema.Number,
    line: Schema.optional(Schema.Number),
    source: Schema.optional(Schema.String),
    frame: Schema.String,
    description: Schema.String,
    differences: Schema.Array(Difference)
  }
) {
  readonly [TypeId]: Api.TypeId = TypeId

  override get message(): string {
    const where = [
      `frame #${this.index} of connection ${this.connection}`,
      ...(this.line !== undefined ? [`line ${this.line}${this.source !== undefined ? ` of ${this.source}` : ""}`] : [])
    ].join(", ")
    const head = `Replay mismatch (${this.reason}) at ${where}: ${this.frame}\n  ${this.description}`
    const body = this.differences.map((d) =>
      `\n  at ${d.path === "" ? "(the whole frame)" : d.path}\n    - recorded: ${d.recorded}\n    + sent:     ${d.sent}`
    )
    return head + body.join("")
  }
}

/** @internal */
export class RecordingError extends Schema.TaggedError<RecordingError>("effect-claude-agent/Recording/RecordingError")(
  "RecordingError",
  {
    reason: Schema.Literal("ReadFailed", "WriteFailed", "InvalidRecording"),
    path: Schema.String,
    description: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {
  readonly [TypeId]: Api.TypeId = TypeId

  override get message(): string {
    return `Recording ${this.reason} (${this.path}): ${this.description}`
  }
}

// -------------------------------------------------------------------------------------------------
// the file format
// -------------------------------------------------------------------------------------------------

const base = { connection: Schema.Number, t: Schema.Number }
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** @internal */
export const Header = Schema.Struct({
  event: Schema.Literal("recording"),
  version: Schema.Literal(1),
  createdAt: Schema.String
})

/** @internal */
export const OpenEntry = Schema.Struct({
  event: Schema.Literal("open"),
  ...base,
  args: Schema.Array(Schema.String),
  cwd: Schema.optional(Schema.String)
})

/** @internal */
export const Entry = Schema.Union(
  OpenEntry,
  Schema.Struct({ event: Schema.Literal("open_failed"), ...base, error: JsonObject }),
  Schema.Struct({ event: Schema.Literal("stdin"), ...base, frame: JsonObject }),
  Schema.Struct({ event: Schema.Literal("stdout"), ...base, frame: JsonObject }),
  Schema.Struct({ event: Schema.Literal("stderr"), ...base, text: Schema.String }),
  Schema.Struct({ event: Schema.Literal("end_input"), ...base }),
  Schema.Struct({
    event: Schema.Literal("exit"),
    ...base,
    code: Schema.NullOr(Schema.Number),
    signal: Schema.NullOr(Schema.String)
  })
)

type Entry = typeof Entry.Type
type Json = { readonly [key: string]: unknown }

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** A decoded stdout frame back to wire JSON: `unknown` messages and blocks carry their original in `raw`. */
const unwrapUnknown = (u: unknown): unknown => {
  if (Array.isArray(u)) return u.map(unwrapUnknown)
  if (!isRecord(u)) return u
  if (u["type"] === "unknown" && "raw" in u) return u["raw"]
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(u)) out[key] = unwrapUnknown(value)
  return out
}

const toWire = (frame: Message.Frame): Json => {
  if (frame.type === "transport_error") {
    const error = frame.error
    return {
      type: "transport_error",
      error: error._tag === "LineTooLong"
        ? { _tag: error._tag, bytes: error.bytes, limit: error.limit, head: error.head }
        : { _tag: error._tag, line: error.line, reason: error.reason, description: error.description }
    }
  }
  const wire = unwrapUnknown(frame)
  return isRecord(wire) ? wire : { value: wire }
}

const decodeEntry = Schema.decodeUnknownEither(Entry)
const decodeHeader = Schema.decodeUnknownEither(Header)

/** @internal */
export const parse = (text: string, source?: string): Effect.Effect<Api.Recording, RecordingError> =>
  Effect.suspend(() => {
    const invalid = (line: number, description: string, cause?: unknown) =>
      Effect.fail(
        new RecordingError({
          reason: "InvalidRecording",
          path: source ?? "(text)",
          description: `line ${line}: ${description}`,
          ...(cause !== undefined ? { cause } : {})
        })
      )
    const connections: Array<{ open: Api.OpenEntry; entries: Array<Entry>; lines: Array<number> }> = []
    const failures = new Map<number, Json>()
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      if (line.trim().length === 0) continue
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch (error) {
        return invalid(i + 1, "not JSON", error)
      }
      if (decodeHeader(value)._tag === "Right") continue
      const decoded = decodeEntry(value)
      if (decoded._tag === "Left") return invalid(i + 1, "not a recording entry", decoded.left)
      const entry = decoded.right
      if (entry.event === "open") {
        if (entry.connection !== connections.length) {
          return invalid(i + 1, `connection ${entry.connection} opened out of order`)
        }
        connections.push({ open: entry, entries: [], lines: [] })
        continue
      }
      const connection = connections[entry.connection]
      if (connection === undefined) return invalid(i + 1, `connection ${entry.connection} was never opened`)
      if (entry.event === "open_failed") failures.set(entry.connection, entry.error)
      connection.entries.push(entry)
      connection.lines.push(i + 1)
    }
    return Effect.succeed({
      source,
      connections: connections.map((c, index) => ({
        ...c,
        openFailed: failures.get(index)
      }))
    })
  })

/** @internal */
export const read = (file: string): Effect.Effect<Api.Recording, RecordingError> =>
  Effect.try({
    try: () => fs.readFileSync(file, "utf8"),
    catch: (cause) => new RecordingError({ reason: "ReadFailed", path: file, description: String(cause), cause })
  }).pipe(Effect.flatMap((text) => parse(text, file)))

// -------------------------------------------------------------------------------------------------
// recording
// -------------------------------------------------------------------------------------------------

const REDACTED = "<redacted>"
const isJson = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const redactValues = (values: unknown): unknown =>
  isJson(values) ? Object.fromEntries(Object.keys(values).map((key) => [key, REDACTED])) : values

/**
 * MCP server configs sent with `mcp_set_servers` may carry credentials (`env`, `headers`); a recording keeps their
 * names, not their values. Replays compare the frames the same way.
 */
const redactSecrets = (frame: Json): Json => {
  const request = frame["request"]
  if (frame["type"] !== "control_request" || !isJson(request) || request["subtype"] !== "mcp_set_servers") return frame
  const servers = request["servers"]
  if (!isJson(servers)) return frame
  const redacted = Object.fromEntries(
    Object.entries(servers).map(([name, config]) => [
      name,
      isJson(config)
        ? {
          ...config,
          ...("env" in config ? { env: redactValues(config["env"]) } : {}),
          ...("headers" in config ? { headers: redactValues(config["headers"]) } : {})
        }
        : config
    ])
  )
  return { ...frame, request: { ...request, servers: redacted } }
}

interface Writer {
  readonly write: (entry: Entry) => void
}

const openWriter = (file: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        fs.mkdirSync(path.dirname(file), { recursive: true })
        const fd = fs.openSync(file, "w")
        const header: typeof Header.Type = { event: "recording", version: 1, createdAt: new Date().toISOString() }
        fs.writeSync(fd, `${JSON.stringify(header)}\n`)
        return fd
      },
      catch: (cause) => new RecordingError({ reason: "WriteFailed", path: file, description: String(cause), cause })
    }),
    (fd) => Effect.sync(() => fs.closeSync(fd))
  ).pipe(
    // the warning below logs with the caller's logger (its runtime), not Effect's default one
    Effect.zip(Effect.runtime<never>()),
    Effect.map(([fd, runtime]): Writer => {
      let failed = false
      return {
        write: (entry) => {
          if (failed) return
          try {
            fs.writeSync(fd, `${JSON.stringify(entry)}\n`)
          } catch (error) {
            failed = true
            Runtime.runFork(runtime)(Effect.logWarning(`Recording to ${file} stopped: ${String(error)}`))
          }
        }
      }
    })
  )

type OpenError = Effect.Effect.Error<ReturnType<Context.Tag.Service<Transport>["open"]>>

// the errors a replay can reproduce for `open` (anything else is replayed as `SpawnFailed`)
const OpenErrors = Schema.Union(CliNotFound, SpawnFailed, VersionIncompatible)
const encodeAgentError = Schema.encodeUnknownEither(AgentError)
const decodeOpenErrors = Schema.decodeUnknownEither(OpenErrors)

const encodeOpenError = (error: OpenError): Json => {
  const encoded = encodeAgentError(error)
  return encoded._tag === "Right" && isRecord(encoded.right)
    ? encoded.right
    : { _tag: error._tag, message: error.message }
}

const decodeOpenError = (error: Json): OpenError => {
  const decoded = decodeOpenErrors(error)
  if (decoded._tag === "Right") return decoded.right
  return new SpawnFailed({ command: "(replay)", description: String(error["message"] ?? JSON.stringify(error)) })
}

/** @internal */
export const layerRecord = (file: string): Layer.Layer<Transport, RecordingError, Transport> =>
  Layer.scoped(
    Transport,
    Effect.gen(function*() {
      const underlying = yield* requiredTransport
      const writer = yield* openWriter(file)
      const clock = yield* Effect.clock
      let connections = 0

      const open = (spec: LaunchSpec) =>
        Effect.gen(function*() {
          const index = connections++
          const started = clock.unsafeCurrentTimeMillis()
          const t = () => clock.unsafeCurrentTimeMillis() - started
          writer.write({
            event: "open",
            connection: index,
            t: 0,
            args: [...spec.args],
            ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {})
          })
          let inputEnded = false
          let exitRecorded = false
          const recordEndInput = () => {
            if (inputEnded || exitRecorded) return
            inputEnded = true
            writer.write({ event: "end_input", connection: index, t: t() })
          }
          const recordExit = (status: ExitStatus) => {
            if (exitRecorded) return
            exitRecorded = true
            writer.write({ event: "exit", connection: index, t: t(), code: status.code, signal: status.signal })
          }
          const recordExitIfKnown = (connection: Connection) =>
            Effect.map(connection.exitStatus, Option.match({ onNone: () => {}, onSome: recordExit }))
          let opened: Connection | undefined
          // registered before the underlying open, so it runs after the underlying transport reaped the process
          yield* Effect.addFinalizer(() =>
            Effect.suspend(() => {
              if (opened === undefined) return Effect.void
              recordEndInput()
              return recordExitIfKnown(opened)
            })
          )
          const connection = yield* underlying.open({
            ...spec,
            onStderr: (chunk) => {
              if (!exitRecorded) writer.write({ event: "stderr", connection: index, t: t(), text: chunk })
              spec.onStderr?.(chunk)
            }
          }).pipe(
            Effect.tapError((error) =>
              Effect.sync(() =>
                writer.write({ event: "open_failed", connection: index, t: t(), error: encodeOpenError(error) })
              )
            )
          )
          opened = connection
          // the connection's own capabilities, each recording what passes through it
          return Conn.make({
            ...connection,
            pull: Effect.map(
              Effect.zipRight(Effect.addFinalizer(() => recordExitIfKnown(connection)), connection.pull),
              (pull) =>
                Effect.tap(pull, (chunk) =>
                  Effect.sync(() => {
                    for (const frame of chunk) {
                      writer.write({ event: "stdout", connection: index, t: t(), frame: toWire(frame) })
                    }
                  }))
            ),
            unsafeSend: (message) => {
              const error = connection.unsafeSend(message)
              if (error === undefined && !exitRecorded) {
                writer.write({ event: "stdin", connection: index, t: t(), frame: redactSecrets({ ...message }) })
              }
              return error
            },
            endInput: Effect.zipRight(Effect.sync(recordEndInput), connection.endInput)
          })
        })

      return Transport.of({ open })
    })
  )

// -------------------------------------------------------------------------------------------------
// replay: normalization and diff
// -------------------------------------------------------------------------------------------------

const SESSION_ID = "<session-id>"
const REQUEST_ID = "<request-id>"
const DEFAULT_IGNORED = ["uuid", "timestamp"]

const sessionIdOf = (args: ReadonlyArray<string>): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg.startsWith("--session-id=")) return arg.slice("--session-id=".length)
    if (arg === "--session-id") return args[i + 1]
  }
  return undefined
}

const replaceDeep = (u: unknown, from: string | undefined, to: string): unknown => {
  if (from === undefined || from === "" || from === to) return u
  if (typeof u === "string") return u.includes(from) ? u.split(from).join(to) : u
  if (Array.isArray(u)) return u.map((v) => replaceDeep(v, from, to))
  if (!isRecord(u)) return u
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(u)) out[key] = replaceDeep(value, from, to)
  return out
}

const maskKeys = (u: unknown, keys: ReadonlySet<string>): unknown => {
  if (Array.isArray(u)) return u.map((v) => maskKeys(v, keys))
  if (!isRecord(u)) return u
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(u)) out[key] = keys.has(key) ? `<${key}>` : maskKeys(value, keys)
  return out
}

const show = (u: unknown): string => {
  if (u === undefined) return "(absent)"
  const json = JSON.stringify(u)
  return json.length > 300 ? `${json.slice(0, 300)}… (${json.length} chars)` : json
}

const diff = (recorded: unknown, sent: unknown, at = "", out: Array<typeof Difference.Type> = []) => {
  if (out.length >= 12) return out
  if (Array.isArray(recorded) && Array.isArray(sent)) {
    for (let i = 0; i < Math.max(recorded.length, sent.length); i++) diff(recorded[i], sent[i], `${at}[${i}]`, out)
    return out
  }
  if (isRecord(recorded) && isRecord(sent)) {
    for (const key of new Set([...Object.keys(recorded), ...Object.keys(sent)])) {
      diff(recorded[key], sent[key], at === "" ? key : `${at}.${key}`, out)
    }
    return out
  }
  if (JSON.stringify(recorded) !== JSON.stringify(sent)) {
    out.push({ path: at, recorded: show(recorded), sent: show(sent) })
  }
  return out
}

const subtypeOf = (u: unknown): string | undefined =>
  isRecord(u) && typeof u["subtype"] === "string" ? u["subtype"] : undefined

const requestIdOf = (u: unknown): string | undefined =>
  isRecord(u) && typeof u["request_id"] === "string" ? u["request_id"] : undefined

// -------------------------------------------------------------------------------------------------
// replay
// -------------------------------------------------------------------------------------------------

interface ReplayState {
  readonly recording: Api.Recording
  readonly options: Api.ReplayOptions
  opened: number
  readonly mismatches: Array<ReplayMismatch>
  /** Per opened connection: whether its replay reached the end of the recording. */
  readonly finished: Array<boolean>
  /** Per opened connection: the entry its replay is waiting at. */
  readonly positions: Array<number>
}

class Mismatch {
  constructor(readonly error: ReplayMismatch) {}
}

/** What the client sent, or why nothing came. */
type Next =
  | { readonly _tag: "Frame"; readonly frame: Json }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Timeout" }

/** The replay of one recorded connection: what it compares against and what it learned of the client's ids. */
interface ConnectionReplay {
  readonly state: ReplayState
  readonly index: number
  readonly recorded: Api.RecordedConnection
  readonly spec: LaunchSpec
  readonly peer: MemoryPeer
  readonly timeout: Duration.Duration
  /** Fields masked on both sides before frames are compared. */
  readonly ignored: ReadonlySet<string>
  readonly recordedSession: string | undefined
  readonly actualSession: string | undefined
  /** Our (the client's) request ids: recorded → sent now. */
  readonly clientIds: Map<string, string>
  /** Our request ids: sent now → recorded. */
  readonly clientIdsBack: Map<string, string>
  /** The subtype of every request seen, by its recorded id, for labels. */
  readonly subtypes: Map<string, string>
  /** The client's next stdin frame, within the timeout. */
  readonly next: Effect.Effect<Next>
}

const makeConnectionReplay = (
  state: ReplayState,
  index: number,
  recorded: Api.RecordedConnection,
  spec: LaunchSpec,
  peer: MemoryPeer
): ConnectionReplay => {
  const timeout = Duration.decode(state.options.timeout ?? "10 seconds")
  return {
    state,
    index,
    recorded,
    spec,
    peer,
    timeout,
    ignored: new Set([...DEFAULT_IGNORED, ...(state.options.ignoreFields ?? [])]),
    recordedSession: sessionIdOf(recorded.open.args),
    actualSession: sessionIdOf(spec.args),
    clientIds: new Map(),
    clientIdsBack: new Map(),
    subtypes: new Map(),
    next: peer.take.pipe(
      Effect.map((frame): Next => ({ _tag: "Frame", frame: { ...frame } })),
      Effect.catchAll(() => Effect.succeed<Next>({ _tag: "Closed" })),
      Effect.timeoutTo({ duration: timeout, onTimeout: (): Next => ({ _tag: "Timeout" }), onSuccess: (n) => n })
    )
  }
}

/** A mismatch of the replay, with the recording's file name when it has one. */
const replayMismatch = (
  state: ReplayState,
  fields: Omit<ConstructorParameters<typeof ReplayMismatch>[0], "source">
): ReplayMismatch =>
  new ReplayMismatch({
    ...fields,
    ...(state.recording.source !== undefined ? { source: state.recording.source } : {})
  })

/** A mismatch at entry `at` of the connection's recording. */
const mismatch = (
  r: ConnectionReplay,
  reason: ReplayMismatch["reason"],
  at: number,
  frame: string,
  description: string,
  differences: ReadonlyArray<typeof Difference.Type> = []
): Mismatch => {
  const line = r.recorded.lines[at]
  return new Mismatch(
    replayMismatch(r.state, {
      reason,
      connection: r.index,
      index: at,
      ...(line !== undefined ? { line } : {}),
      frame,
      description,
      differences
    })
  )
}

/** A stdin frame, as a mismatch names it. */
const label = (r: ConnectionReplay, frame: Json): string => {
  const type = typeof frame["type"] === "string" ? frame["type"] : "?"
  switch (type) {
    case "control_request":
      return `stdin control_request ${subtypeOf(frame["request"]) ?? "?"}`
    case "control_response": {
      const body = frame["response"]
      const id = requestIdOf(body) ?? "?"
      return `stdin control_response (${subtypeOf(body) ?? "?"}) to ${r.subtypes.get(id) ?? "request"} ${id}`
    }
    case "control_cancel_request":
      return `stdin control_cancel_request of ${r.subtypes.get(requestIdOf(frame) ?? "") ?? "request"}`
    case "user":
      return "stdin user message"
    default:
      return `stdin ${type}`
  }
}

const normalizeRecorded = (r: ConnectionReplay, frame: Json): unknown => {
  const masked = frame["type"] === "control_request" ? { ...frame, request_id: REQUEST_ID } : frame
  return maskKeys(replaceDeep(masked, r.recordedSession, SESSION_ID), r.ignored)
}

const normalizeSent = (r: ConnectionReplay, frame: Json): unknown => {
  let copy: Json = redactSecrets(frame)
  if (frame["type"] === "control_request") copy = { ...copy, request_id: REQUEST_ID }
  if (frame["type"] === "control_cancel_request") {
    const id = requestIdOf(frame) ?? ""
    copy = { ...frame, request_id: r.clientIdsBack.get(id) ?? id }
  }
  return maskKeys(replaceDeep(copy, r.actualSession, SESSION_ID), r.ignored)
}

/** A recorded stdout frame as this client expects it: its session id, and its own ids in answers to its requests. */
const rewriteStdout = (r: ConnectionReplay, frame: Json): Json => {
  const replaced = replaceDeep(frame, r.recordedSession, r.actualSession ?? r.recordedSession ?? "")
  const out = isRecord(replaced) ? replaced : frame
  if (out["type"] === "control_request") {
    const id = requestIdOf(out)
    const subtype = subtypeOf(out["request"])
    if (id !== undefined && subtype !== undefined) r.subtypes.set(id, subtype)
  }
  if (out["type"] === "control_response" && isRecord(out["response"])) {
    const id = requestIdOf(out["response"])
    const now = id === undefined ? undefined : r.clientIds.get(id)
    if (now !== undefined) return { ...out, response: { ...out["response"], request_id: now } }
  }
  return out
}

const emitStdout = (peer: MemoryPeer, frame: Json): Effect.Effect<void> => {
  // everything goes through the byte framing, like a real process's output (see `scriptedCli.ts`)
  if (frame["type"] !== "transport_error" || !isRecord(frame["error"])) {
    return peer.emitRaw(`${JSON.stringify(frame)}\n`)
  }
  // reproduce the in-band error: the same bytes give the same error
  const error = frame["error"]
  if (error["_tag"] === "MalformedLine") return peer.emitRaw(`${String(error["line"])}\n`)
  const head = String(error["head"] ?? "")
  const bytes = typeof error["bytes"] === "number" ? error["bytes"] : 0
  return peer.emitRaw(`${head}${"x".repeat(Math.max(0, bytes - Buffer.byteLength(head)))}\n`)
}

const frameAt = (r: ConnectionReplay, k: number): Json => {
  const entry = r.recorded.entries[k]
  return entry !== undefined && (entry.event === "stdin" || entry.event === "stdout") ? entry.frame : {}
}

/** Remembers the id the client gave the request recorded as `expected`, to answer it and to label it. */
const learnRequestId = (r: ConnectionReplay, expected: Json, sent: Json): void => {
  if (expected["type"] !== "control_request") return
  const recordedId = requestIdOf(expected)
  const sentId = requestIdOf(sent)
  const subtype = subtypeOf(expected["request"])
  if (recordedId !== undefined && sentId !== undefined) {
    r.clientIds.set(recordedId, sentId)
    r.clientIdsBack.set(sentId, recordedId)
    if (subtype !== undefined) r.subtypes.set(recordedId, subtype)
  }
}

/** Expects the client to send the recorded stdin frames `start` to `end`, in any order. */
const expectWindow = (r: ConnectionReplay, start: number, end: number): Effect.Effect<void, Mismatch> =>
  Effect.gen(function*() {
    const waiting: Array<number> = []
    for (let k = start; k < end; k++) waiting.push(k)
    while (waiting.length > 0) {
      const first = waiting[0]!
      const firstFrame = frameAt(r, first)
      const got = yield* r.next
      if (got._tag === "Closed") {
        return yield* Effect.fail(
          mismatch(r, "MissingFrame", first, label(r, firstFrame), "the client closed stdin before sending this frame")
        )
      }
      if (got._tag === "Timeout") {
        return yield* Effect.fail(
          mismatch(
            r,
            "MissingFrame",
            first,
            label(r, firstFrame),
            `the client sent nothing within ${Duration.format(r.timeout)} (it may be waiting for something the ` +
              "recording did not have)"
          )
        )
      }
      const sent = normalizeSent(r, got.frame)
      const match = waiting.findIndex((k) => diff(normalizeRecorded(r, frameAt(r, k)), sent).length === 0)
      if (match === -1) {
        const sameKind = waiting.find((k) => label(r, frameAt(r, k)) === label(r, got.frame)) ?? first
        const expected = frameAt(r, sameKind)
        return yield* Effect.fail(
          mismatch(
            r,
            "FrameDiffers",
            sameKind,
            label(r, expected),
            label(r, got.frame) === label(r, expected)
              ? "the client sent a different frame"
              : `the client sent ${label(r, got.frame)} instead`,
            diff(normalizeRecorded(r, expected), sent)
          )
        )
      }
      const k = waiting[match]!
      waiting.splice(match, 1)
      learnRequestId(r, frameAt(r, k), got.frame)
    }
  })

/** Expects the client to close stdin at entry `at`. */
const expectEndInput = (r: ConnectionReplay, at: number): Effect.Effect<void, Mismatch> =>
  Effect.flatMap(r.next, (got) => {
    if (got._tag === "Frame") {
      return Effect.fail(
        mismatch(
          r,
          "UnexpectedFrame",
          at,
          "end of stdin",
          `the client sent ${label(r, got.frame)} where it closed stdin`,
          [{ path: "", recorded: "(stdin closed)", sent: show(got.frame) }]
        )
      )
    }
    if (got._tag === "Timeout") {
      return Effect.fail(
        mismatch(
          r,
          "MissingFrame",
          at,
          "end of stdin",
          `the client did not close stdin within ${Duration.format(r.timeout)}`
        )
      )
    }
    return Effect.void
  })

/** Unless `checkArgs` is off: the client must start the CLI with the recorded arguments (session ids aside). */
const checkLaunch = (r: ConnectionReplay): Effect.Effect<void, Mismatch> => {
  if (r.state.options.checkArgs === false) return Effect.void
  const { actualSession, recordedSession } = r
  const differences = diff(
    r.recorded.open.args.map((a) => (recordedSession === undefined ? a : a.split(recordedSession).join(SESSION_ID))),
    r.spec.args.map((a) => (actualSession === undefined ? a : a.split(actualSession).join(SESSION_ID)))
  )
  if (differences.length === 0) return Effect.void
  return Effect.fail(
    new Mismatch(replayMismatch(r.state, {
      reason: "LaunchDiffers",
      connection: r.index,
      index: -1,
      frame: "the CLI's arguments",
      description: "the client started the CLI with different arguments (options)",
      differences
    }))
  )
}

/** Plays the recording's entries in order: emits its stdout and stderr, expects its stdin, exits as it did. */
const replayEntries = (r: ConnectionReplay): Effect.Effect<void, Mismatch> =>
  Effect.gen(function*() {
    const { index, peer, state } = r
    const started = yield* Clock.currentTimeMillis
    const entries = r.recorded.entries
    let i = 0
    while (i < entries.length) {
      state.positions[index] = i
      const entry = entries[i]!
      switch (entry.event) {
        case "stdout": {
          if (state.options.timing === "recorded") {
            const elapsed = (yield* Clock.currentTimeMillis) - started
            if (entry.t > elapsed) yield* Effect.sleep(entry.t - elapsed)
          }
          yield* emitStdout(peer, rewriteStdout(r, entry.frame))
          i++
          break
        }
        case "stderr": {
          yield* peer.emitStderr(entry.text)
          i++
          break
        }
        case "stdin": {
          let end = i
          while (entries[end]?.event === "stdin") end++
          yield* expectWindow(r, i, end)
          i = end
          break
        }
        case "end_input": {
          yield* expectEndInput(r, i)
          i++
          break
        }
        case "exit": {
          state.positions[index] = entries.length
          state.finished[index] = true
          return yield* peer.exit({ code: entry.code, signal: entry.signal })
        }
        default:
          i++
      }
    }
    state.positions[index] = entries.length
    state.finished[index] = true
    // the CLI was still running when the recording ended: it stays until the session is closed
    return yield* Effect.never
  })

/** Replays one recorded connection against the client; a mismatch is kept, told on stderr, and ends the "CLI". */
const replayConnection = (
  state: ReplayState,
  index: number,
  recorded: Api.RecordedConnection,
  spec: LaunchSpec,
  peer: MemoryPeer
): Effect.Effect<void> => {
  const r = makeConnectionReplay(state, index, recorded, spec, peer)
  return Effect.zipRight(checkLaunch(r), replayEntries(r)).pipe(
    Effect.catchAll((failure) =>
      Effect.gen(function*() {
        state.mismatches.push(failure.error)
        yield* peer.emitStderr(`${failure.error.message}\n`)
        yield* peer.exit({ code: 70, signal: null })
      })
    )
  )
}

const openReplay = (state: ReplayState, spec: LaunchSpec) =>
  Effect.gen(function*() {
    const index = state.opened++
    state.finished[index] = false
    state.positions[index] = 0
    const recorded = state.recording.connections[index]
    if (recorded?.openFailed !== undefined) {
      state.finished[index] = true
      return yield* Effect.fail(decodeOpenError(recorded.openFailed))
    }
    const { connection, peer } = yield* makeConnection(spec)
    if (recorded === undefined) {
      const error = replayMismatch(state, {
        reason: "UnexpectedConnection",
        connection: index,
        index: -1,
        frame: "a new CLI process",
        description: `the client started CLI #${index + 1}, the recording has ${state.recording.connections.length}`,
        differences: []
      })
      state.mismatches.push(error)
      state.finished[index] = true
      yield* peer.emitStderr(`${error.message}\n`)
      yield* peer.exit({ code: 70, signal: null })
      return connection
    }
    const fiber = yield* Effect.forkScoped(replayConnection(state, index, recorded, spec, peer))
    // runs first when the session closes: the replay sees stdin close (and reports what the client did not send)
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(connection.endInput, Fiber.await(fiber).pipe(Effect.timeout("1 second"), Effect.ignore))
    )
    return connection
  })

/** @internal */
export class Replay extends Context.Tag("effect-claude-agent/Recording/Replay")<Replay, Api.ReplayService>() {}

/** @internal */
export const layerReplay = (
  source: string | Api.Recording,
  options: Api.ReplayOptions = {}
): Layer.Layer<Transport | Replay, RecordingError> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const recording = typeof source === "string" ? yield* read(source) : source
      const state: ReplayState = { recording, options, opened: 0, mismatches: [], finished: [], positions: [] }
      const check: Effect.Effect<void, ReplayMismatch> = Effect.suspend(() => {
        const first = state.mismatches[0]
        if (first !== undefined) return Effect.fail(first)
        if (options.complete === false) return Effect.void
        for (let c = 0; c < state.opened; c++) {
          const connection = recording.connections[c]
          if (state.finished[c] === true || connection === undefined) continue
          const at = state.positions[c] ?? 0
          const entry = connection.entries[at]
          const line = connection.lines[at]
          return Effect.fail(
            replayMismatch(state, {
              reason: "MissingFrame",
              connection: c,
              index: at,
              ...(line !== undefined ? { line } : {}),
              frame: entry === undefined ? "(end)" : entry.event,
              description: "the replay of this connection did not reach the end of the recording",
              differences: []
            })
          )
        }
        if (state.opened < recording.connections.length) {
          return Effect.fail(
            replayMismatch(state, {
              reason: "MissingConnection",
              connection: state.opened,
              index: -1,
              frame: "a CLI process",
              description:
                `the recording has ${recording.connections.length} CLI processes, the client started ${state.opened}`,
              differences: []
            })
          )
        }
        return Effect.void
      })
      return Context.make(Transport, Transport.of({ open: (spec) => openReplay(state, spec) })).pipe(
        Context.add(Replay, Replay.of({ check, mismatches: Effect.sync(() => [...state.mismatches]) }))
      )
    })
  )

/** @internal */
export const replay = (source: string | Api.Recording, options?: Api.ReplayOptions) =>
<A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, E | ReplayMismatch | RecordingError, Exclude<R, Transport | Replay>> =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(self)
    yield* Effect.flatMap(Replay, (r) => r.check)
    return yield* exit
  }).pipe(Effect.provide(layerReplay(source, options)))
