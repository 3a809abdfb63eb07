/**
 * A session's use of a `TranscriptStore`: its transcript loaded into the CLI's config dir before a resume, and the
 * CLI's `transcript_mirror` frames appended to the store on a writer fiber of their own.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { StartupFailed } from "../../AgentError.js"
import type * as Message from "../../Message.js"
import type * as Api from "../../TranscriptStore.js"
import type { Owned as ControlProtocol } from "../protocol/controlProtocol.js"
import { liveTimeout } from "../transport/liveTimer.js"
import { parseLines } from "./fileSystem.js"
import { configDirFor, type ConfigDirOptions, encodeCwd } from "./history.js"
import {
  backendFailed,
  callStore,
  checkEntries,
  checkKey,
  isEntry,
  type KeyParts,
  TranscriptStoreError
} from "./store.js"

/** In `batched` mode, pending entries past this many are appended without waiting for the end of the turn. */
const BATCH_ENTRIES = 500
/** Entries held for the store at most; past this (a store much slower than the CLI) frames are dropped, logged. */
const MAX_PENDING_ENTRIES = 100_000
/** One `append` call at most this long; a timed-out call is not retried (it may still land). */
const APPEND_TIMEOUT = Duration.seconds(60)
/** Attempts of a rejected `append` (the official SDK's bound). */
const APPEND_ATTEMPTS = 3

/** The project key of a cwd: its directory name under `projects/`, as the CLI writes it. @internal */
export const projectKeyOf = (cwd: string): string => {
  const absolute = path.resolve(cwd)
  let real = absolute
  try {
    real = fs.realpathSync(absolute)
  } catch {
    // a cwd that does not exist yet: the CLI fails on it anyway
  }
  return encodeCwd(real)
}

/**
 * What of a session's options the mirror reads: where the CLI keeps its transcripts, and which session it resumes.
 *
 * @internal
 */
export interface MirrorOptions extends ConfigDirOptions {
  readonly cwd?: string | undefined
  readonly resume?: string | undefined
  readonly continue?: boolean | undefined
}

/** The directory the CLI keeps the projects in, with these options. @internal */
export const projectsDirOf = (options: MirrorOptions): string | undefined => {
  const configDir = configDirFor(options)
  return configDir === undefined ? undefined : path.join(path.resolve(configDir), "projects")
}

/**
 * The store key of a transcript file the CLI names in a `transcript_mirror` frame:
 * `<projects>/<projectKey>/<sessionId>.jsonl`, or `<projects>/<projectKey>/<sessionId>/<subpath>.jsonl`. The file
 * is located relative to `projectsDir`, else by its last `projects` directory (a config dir seen through a symlink).
 *
 * @internal
 */
export const keyOfFile = (projectsDir: string | undefined, filePath: string): Api.SessionKey | undefined => {
  if (!filePath.endsWith(".jsonl")) return undefined
  let parts: Array<string> | undefined
  if (projectsDir !== undefined) {
    const relative = path.relative(projectsDir, filePath)
    if (!relative.startsWith("..") && !path.isAbsolute(relative)) parts = relative.split(path.sep)
  }
  if (parts === undefined) {
    const all = filePath.split(path.sep)
    const at = all.lastIndexOf("projects")
    if (at < 0) return undefined
    parts = all.slice(at + 1)
  }
  if (parts.length < 2 || parts.some((p) => p.length === 0)) return undefined
  const [projectKey, ...rest] = parts
  const last = rest.length - 1
  rest[last] = rest[last]!.slice(0, -".jsonl".length)
  if (rest.length === 1) return { projectKey: projectKey!, sessionId: rest[0]! }
  return { projectKey: projectKey!, sessionId: rest[0]!, subpath: rest.slice(1).join("/") }
}

/**
 * The key and valid entries of a `transcript_mirror` frame (delivered as an unknown message), if `m` is one, with the
 * number of its entries that are not, when there are any.
 *
 * @internal
 */
export const mirrorFrame = (
  projectsDir: string | undefined,
  m: Message.SdkMessage
):
  | { readonly key: Api.SessionKey; readonly entries: ReadonlyArray<Api.Entry>; readonly invalid?: number }
  | "other"
  | "invalid" =>
{
  if (m.type !== "unknown" || m.raw["type"] !== "transcript_mirror") return "other"
  const filePath = m.raw["filePath"]
  const entries = m.raw["entries"]
  if (typeof filePath !== "string" || !Array.isArray(entries)) return "invalid"
  const key = keyOfFile(projectsDir, filePath)
  if (key === undefined) return "invalid"
  const valid = entries.filter(isEntry)
  return valid.length === entries.length
    ? { key, entries }
    : { key, entries: valid, invalid: entries.length - valid.length }
}

// ---------------------------------------------------------------------------------------------------------------------
// loading before the spawn
// ---------------------------------------------------------------------------------------------------------------------

const loadFailed = (error: TranscriptStoreError) =>
  new StartupFailed({
    reason: "Spawn",
    description: `loading the session from the transcript store failed: ${error.message}`,
    stderrTail: "",
    cause: error
  })

/** A store's `load`, its result checked whatever the store is: `None`, or `Some` of at most `MAX_ENTRIES` entries. */
const loadChecked = (store: Api.Service, key: Api.SessionKey) =>
  Effect.flatMap(store.load(key), (loaded) =>
    Option.isOption(loaded)
      ? Option.isNone(loaded)
        ? Effect.succeed(loaded)
        : Effect.map(checkEntries("load", key, loaded.value), Option.some)
      : Effect.fail(
        new TranscriptStoreError({
          reason: "BackendFailed",
          method: "load",
          ...key,
          description: "load returned no Option"
        })
      ))

const localUuids = (file: string): Set<string> | undefined => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
  const uuids = new Set<string>()
  for (const entry of parseLines(text)) if (typeof entry.uuid === "string") uuids.add(entry.uuid)
  return uuids
}

/** One entry as one JSONL line; an entry whose JSON is no object (a `toJSON` of its own) is an error. */
const serialize = (entry: Api.Entry, index: number): string => {
  const line: unknown = JSON.stringify(entry)
  if (typeof line !== "string" || !line.startsWith("{")) {
    throw new Error(`entry ${index} does not serialize to an object`)
  }
  return `${line}\n`
}

/**
 * Writes a transcript from the store to its local file unless the local file has every entry the store has (by
 * uuid): the CLI's own copy is then at least as complete (the store is a copy of it made after each local write).
 * The file is replaced atomically (written beside it, then renamed).
 */
const writeLocal = (file: string, entries: ReadonlyArray<Api.Entry>) =>
  Effect.try({
    try: () => {
      const local = localUuids(file)
      if (local !== undefined && entries.every((e) => typeof e.uuid !== "string" || local.has(e.uuid))) return
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
      const temp = `${file}.${crypto.randomBytes(12).toString("hex")}.tmp`
      // a new file or none: a name planted in the directory (a symlink) is never followed
      fs.writeFileSync(temp, entries.map(serialize).join(""), { mode: 0o600, flag: "wx" })
      try {
        fs.renameSync(temp, file)
      } catch (cause) {
        fs.rmSync(temp, { force: true })
        throw cause
      }
    },
    catch: (cause) =>
      new TranscriptStoreError({
        reason: "BackendFailed",
        method: "load",
        description: `writing ${file}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  })

/**
 * Loads what a session resumes from the store into the CLI's config dir, before the spawn: for `resume`, that
 * session; for `continue`, the latest session of the cwd's project in the store (so that the CLI's own search for the
 * latest transcript finds it). Each store call is bounded by `loadTimeout`. A session the store does not have is
 * left to the CLI (which may have it locally, or reports it not found).
 *
 * @internal
 */
export const prepare = (
  store: Api.Service,
  settings: Api.MirrorSettings,
  options: MirrorOptions
): Effect.Effect<void, StartupFailed> =>
  Effect.gen(function*() {
    if (options.resume === undefined && options.continue !== true) return
    const projectsDir = projectsDirOf(options)
    if (projectsDir === undefined) return
    const projectKey = projectKeyOf(options.cwd ?? process.cwd())
    const timeout = Duration.decode(settings.loadTimeout)
    // a store call that cannot be interrupted is left behind at the timeout (disconnected), never waited for
    const bounded = <A>(method: string, key: KeyParts, call: () => Effect.Effect<A, TranscriptStoreError>) =>
      Effect.timeoutFail(Effect.disconnect(callStore(method, key, call)), {
        duration: timeout,
        onTimeout: () =>
          new TranscriptStoreError({
            reason: "Timeout",
            method,
            projectKey,
            description: `no answer within ${Duration.format(timeout)} (loadTimeout)`
          })
      })
    let sessionId = options.resume
    if (sessionId === undefined) {
      const listed = yield* bounded("list", { projectKey }, () => store.list(projectKey))
      sessionId = listed.reduce<Api.SessionListing | undefined>(
        (best, s) => best === undefined || s.mtime > best.mtime ? s : best,
        undefined
      )?.sessionId
      if (sessionId === undefined) return
    }
    const main: Api.SessionKey = { projectKey, sessionId }
    // the key names the files written below: whatever the store is, nothing outside the project directory
    yield* checkKey("load", main)
    const entries = yield* bounded("load", main, () => loadChecked(store, main))
    if (Option.isNone(entries)) return
    const projectDir = path.join(projectsDir, projectKey)
    yield* writeLocal(path.join(projectDir, `${sessionId}.jsonl`), entries.value)
    const subpaths = yield* bounded("listSubkeys", main, () => store.listSubkeys(main))
    for (const subpath of subpaths) {
      // a subagent's path comes from the store too: it must stay inside the session's directory
      yield* checkKey("load", { ...main, subpath })
      const sub = yield* bounded("load", { ...main, subpath }, () => loadChecked(store, { ...main, subpath }))
      if (Option.isSome(sub)) yield* writeLocal(path.join(projectDir, sessionId, `${subpath}.jsonl`), sub.value)
    }
  }).pipe(
    // what the store returned past the checks (a `list` of the wrong shape) is the store's failure too
    Effect.catchAllDefect((defect) => Effect.fail(backendFailed("load", {})(defect))),
    Effect.mapError(loadFailed),
    Effect.withSpan("TranscriptStore.prepare")
  )

/**
 * Whether the session `sessionId` has a transcript to resume, in the CLI's config dir or in the store. A store that
 * fails or does not answer within `loadTimeout` counts as having it: the resume then goes ahead and reports what is
 * wrong.
 *
 * @internal
 */
export const hasTranscript = (
  store: Api.Service,
  settings: Api.MirrorSettings,
  options: MirrorOptions,
  sessionId: string
): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const projectKey = projectKeyOf(options.cwd ?? process.cwd())
    const projectsDir = projectsDirOf(options)
    if (projectsDir !== undefined && fs.existsSync(path.join(projectsDir, projectKey, `${sessionId}.jsonl`))) {
      return Effect.succeed(true)
    }
    const key = { projectKey, sessionId }
    return callStore("load", key, () => store.load(key)).pipe(
      Effect.map(Option.isSome),
      Effect.disconnect,
      Effect.timeout(settings.loadTimeout),
      Effect.orElseSucceed(() => true)
    )
  })

// ---------------------------------------------------------------------------------------------------------------------
// mirroring
// ---------------------------------------------------------------------------------------------------------------------

/**
 * What the owner of a session learns of its mirror, when it provides this service to the session: the cluster's
 * entity, whose next CLI resumes from the store, so that a CLI whose transcript holds entries the store has not must
 * take no further prompt.
 *
 * @internal
 */
export interface MirrorWatchService {
  /** The mirror dropped entries (the store refused them, or fell behind): the CLI's transcript and the store differ. */
  readonly dropped: Effect.Effect<void>
  /**
   * Called once, as the mirror starts, with what completes once every entry the CLI has reported so far is appended
   * or dropped (at once when the mirror has closed).
   */
  readonly started: (drained: Effect.Effect<void>) => Effect.Effect<void>
}

/** @internal */
export class MirrorWatch extends Context.Tag("effect-claude-agent/TranscriptStore/MirrorWatch")<
  MirrorWatch,
  MirrorWatchService
>() {}

type Item =
  | { readonly _tag: "Entries"; readonly key: Api.SessionKey; readonly entries: ReadonlyArray<Api.Entry> }
  | { readonly _tag: "Flush" }
  | { readonly _tag: "Drain"; readonly done: Deferred.Deferred<void> }
  | { readonly _tag: "Invalid"; readonly description: string }

const messageOf = (u: unknown): string => u instanceof Error ? u.message : String(u)

const sameKey = (a: Api.SessionKey, b: Api.SessionKey) =>
  a.projectKey === b.projectKey && a.sessionId === b.sessionId && a.subpath === b.subpath

/** @internal */
export interface Mirroring {
  /** Sees every SDK message on the reader: keeps `transcript_mirror` frames from the consumer and queues them. */
  readonly onMessage: (m: Message.SdkMessage) => boolean
  /** Registers the close: the CLI's last entries are read, then what is pending is appended (bounded). */
  readonly onProtocol: (protocol: ControlProtocol) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * The mirroring of one session (one CLI process). Frames are queued synchronously on the reader (never waiting for
 * the store) and appended in order by one writer fiber; a rejected append is retried (3 attempts in all), a
 * timed-out one is not, and a batch that still fails is dropped with a warning in the log (and told to the
 * session's `MirrorWatch`, when it has one).
 *
 * @internal
 */
export const make = (
  store: Api.Service,
  settings: Api.MirrorSettings,
  options: MirrorOptions
): Effect.Effect<Mirroring, never, Scope.Scope> =>
  Effect.gen(function*() {
    const projectsDir = projectsDirOf(options)
    const watch = yield* Effect.serviceOption(MirrorWatch)
    const items = yield* Mailbox.make<Item>()
    let pending = 0
    let dropped = 0
    let droppedSeen = 0
    const reportDropped = Option.isSome(watch) ? watch.value.dropped : Effect.void

    const appendOne = (key: Api.SessionKey, entries: ReadonlyArray<Api.Entry>) =>
      // a defect of the store is no rejection: not retried, dropped below like a batch that still fails
      Effect.suspend(() => store.append(key, entries)).pipe(
        Effect.disconnect,
        Effect.timeoutFail({
          duration: APPEND_TIMEOUT,
          onTimeout: () =>
            new TranscriptStoreError({ reason: "Timeout", method: "append", ...key, description: "append timed out" })
        }),
        Effect.retry({
          times: APPEND_ATTEMPTS - 1,
          schedule: Schedule.exponential(Duration.millis(100)),
          while: (e) => e.reason !== "Timeout" && e.reason !== "InvalidKey" && e.reason !== "InvalidEntry"
        }),
        Effect.catchAllCause((cause) =>
          Cause.isInterrupted(cause) ? Effect.interrupt : Effect.zipRight(
            Effect.logWarning(
              `transcript mirror: ${entries.length} entries dropped: ${messageOf(Cause.squash(cause))}`
            ),
            reportDropped
          )
        ),
        Effect.ensuring(Effect.sync(() => {
          pending -= entries.length
        }))
      )

    /** Appends batches in order, consecutive batches of one transcript in one call. */
    const appendAll = (batches: ReadonlyArray<Extract<Item, { _tag: "Entries" }>>) =>
      Effect.gen(function*() {
        let i = 0
        while (i < batches.length) {
          const key = batches[i]!.key
          const entries: Array<Api.Entry> = []
          while (i < batches.length && sameKey(batches[i]!.key, key)) entries.push(...batches[i++]!.entries)
          yield* appendOne(key, entries)
        }
      })

    const writer = Effect.gen(function*() {
      let held: Array<Extract<Item, { _tag: "Entries" }>> = []
      let heldEntries = 0
      while (true) {
        const [chunk, done] = yield* items.takeAll
        for (const item of chunk) {
          if (item._tag === "Invalid") {
            yield* Effect.logWarning(`transcript mirror: ${item.description}`)
          } else if (item._tag === "Flush" || item._tag === "Drain") {
            yield* appendAll(held)
            held = []
            heldEntries = 0
            if (item._tag === "Drain") yield* Deferred.succeed(item.done, undefined)
          } else if (settings.flush === "eager") {
            yield* appendOne(item.key, item.entries)
          } else {
            held.push(item)
            heldEntries += item.entries.length
            if (heldEntries >= BATCH_ENTRIES) {
              yield* appendAll(held)
              held = []
              heldEntries = 0
            }
          }
        }
        // frames dropped on the reader because the store fell behind
        if (dropped > droppedSeen) {
          droppedSeen = dropped
          yield* reportDropped
        }
        if (done) {
          yield* appendAll(held)
          if (dropped > 0) {
            yield* Effect.logWarning(`transcript mirror: ${dropped} entries dropped (the store fell behind)`)
          }
          return
        }
      }
    })
    const writerFiber = yield* Effect.forkScoped(writer)
    if (Option.isSome(watch)) {
      yield* watch.value.started(Effect.flatMap(Deferred.make<void>(), (done) =>
        // a mirror that has closed has appended or dropped everything: nothing to wait for
        items.unsafeOffer({ _tag: "Drain", done })
          ? Effect.raceFirst(Deferred.await(done), Effect.asVoid(Fiber.await(writerFiber)))
          : Effect.void))
    }

    const onMessage = (m: Message.SdkMessage): boolean => {
      if (m.type === "result" && settings.flush === "batched") {
        items.unsafeOffer({ _tag: "Flush" })
        return true
      }
      const frame = mirrorFrame(projectsDir, m)
      if (frame === "other") return true
      if (frame === "invalid") {
        items.unsafeOffer({ _tag: "Invalid", description: "a frame without a transcript file or entries skipped" })
        return false
      }
      if (frame.invalid !== undefined) {
        items.unsafeOffer({ _tag: "Invalid", description: `${frame.invalid} invalid entries of a frame skipped` })
        if (frame.entries.length === 0) return false
      }
      if (pending + frame.entries.length > MAX_PENDING_ENTRIES) {
        dropped += frame.entries.length
        return false
      }
      pending += frame.entries.length
      items.unsafeOffer({ _tag: "Entries", key: frame.key, entries: frame.entries })
      return false
    }

    const closeTimeout = Duration.decode(settings.closeTimeout)
    const onProtocol = (protocol: ControlProtocol) =>
      Effect.addFinalizer(() =>
        Effect.gen(function*() {
          // the CLI writes its last entries (the turn's last prompt, its cost state) after the result and on exit:
          // close its input and read on until it is gone, so they are mirrored too
          const running = Option.isNone(yield* protocol.connection.exitStatus)
          if (running) yield* protocol.endInput
          yield* protocol.readerDone
          yield* items.end
          yield* Fiber.join(writerFiber)
        }).pipe(
          (close) => liveTimeout(Effect.disconnect(close), closeTimeout),
          Effect.flatMap((closed) =>
            Option.isSome(closed) ? Effect.void : Effect.logWarning(
              `transcript mirror: the session closed before its last entries reached the store ` +
                `(${Duration.format(closeTimeout)})`
            )
          )
        )
      )

    return { onMessage, onProtocol }
  })
