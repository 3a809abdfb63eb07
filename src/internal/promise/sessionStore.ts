/**
 * The official `sessionStore`, `sessionStoreFlush` and `loadTimeoutMs` options of the Promise API, and
 * `importSessionToStore`.
 *
 * @internal
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SessionHistory from "../../SessionHistory.js"
import * as TranscriptStore from "../../TranscriptStore.js"

/** An object with the two required methods of the official `SessionStore`. @internal */
export const isSessionStore = (u: unknown): u is TranscriptStore.PromiseSessionStore =>
  Predicate.hasProperty(u, "append") && Predicate.isFunction(u.append) && Predicate.hasProperty(u, "load") &&
  Predicate.isFunction(u.load)

const millis = Schema.Number.pipe(
  Schema.filter((n) => (Number.isFinite(n) && n > 0) || `must be a positive finite number of milliseconds, got ${n}`)
)

/** The schema fields of the three options, for the Promise API's own option schema. @internal */
export const optionFields = {
  sessionStore: Schema.optional(
    Schema.declare(isSessionStore, { identifier: "SessionStore (an object with append and load methods)" })
  ),
  sessionStoreFlush: Schema.optional(Schema.Literal("batched", "eager")),
  loadTimeoutMs: Schema.optional(millis)
}

/** The three options (as the Promise API's `Options` has them). @internal */
export interface SessionStoreOptions {
  readonly sessionStore?: TranscriptStore.PromiseSessionStore | undefined
  readonly sessionStoreFlush?: "batched" | "eager" | undefined
  readonly loadTimeoutMs?: number | undefined
}

/**
 * Provides the session a `TranscriptStore` made from the official `sessionStore` (and the flush mode and load
 * timeout it asks for); without one, the effect as it is.
 *
 * @internal
 */
export const withSessionStore = (options: SessionStoreOptions) =>
<A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const store = options.sessionStore
  if (store === undefined) return effect
  const settings: TranscriptStore.MirrorSettings = {
    flush: options.sessionStoreFlush ?? "batched",
    loadTimeout: Duration.millis(options.loadTimeoutMs ?? 60_000),
    closeTimeout: Duration.seconds(10)
  }
  return effect.pipe(
    Effect.provideService(TranscriptStore.TranscriptStore, TranscriptStore.fromSessionStore(store)),
    Effect.provideService(TranscriptStore.Mirror, settings)
  )
}

/** The official `ImportSessionToStoreOptions`. @internal */
export interface ImportOptions {
  readonly dir?: string | undefined
  readonly includeSubagents?: boolean | undefined
  readonly batchSize?: number | undefined
}

/** The project directory (under `projectsDir`) that holds a session's transcript, searched in every project. */
const findProject = (projectsDir: string, sessionId: string): string | undefined => {
  let names: Array<string>
  try {
    names = fs.readdirSync(projectsDir)
  } catch {
    return undefined
  }
  return names.find((name) => fs.existsSync(path.join(projectsDir, name, `${sessionId}.jsonl`)))
}

const importFailed = (sessionId: string, description: string) =>
  new TranscriptStore.TranscriptStoreError({
    reason: "InvalidKey",
    method: "importSessionToStore",
    sessionId,
    description
  })

/** The CLI's config directory in this process's environment (`CLAUDE_CONFIG_DIR`, else `~/.claude`). */
const configDir = (): string | undefined => {
  const explicit = process.env["CLAUDE_CONFIG_DIR"]
  if (explicit !== undefined && explicit !== "") return explicit
  const home = process.env["HOME"] ?? os.homedir()
  return home === "" ? undefined : path.join(home, ".claude")
}

/** The project key of a directory: its real path, encoded as the CLI names its project directory. */
const projectKeyOf = (dir: string): string => {
  const absolute = path.resolve(dir)
  let real = absolute
  try {
    real = fs.realpathSync(absolute)
  } catch {
    // a directory that does not exist has no sessions: the import finds nothing
  }
  return SessionHistory.encodeCwd(real)
}

/** @internal */
export const importSessionToStore = async (
  sessionId: string,
  store: TranscriptStore.PromiseSessionStore,
  options: ImportOptions = {}
): Promise<void> => {
  const program = Effect.gen(function*() {
    if (!isSessionStore(store)) {
      return yield* importFailed(sessionId, "store is not a SessionStore (no append and load methods)")
    }
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      return yield* importFailed(String(sessionId), "sessionId must be a non-empty string")
    }
    const dir = configDir()
    if (dir === undefined) return yield* importFailed(sessionId, "no config directory (HOME is not set)")
    const projectsDir = path.join(dir, "projects")
    const projectKey = options.dir !== undefined ? projectKeyOf(options.dir) : findProject(projectsDir, sessionId)
    if (projectKey === undefined) return yield* importFailed(sessionId, `no transcript under ${projectsDir}`)
    yield* TranscriptStore.importSession({ projectsDir, projectKey, sessionId }, options).pipe(
      Effect.provideService(TranscriptStore.TranscriptStore, TranscriptStore.fromSessionStore(store))
    )
  })
  const exit = await Effect.runPromiseExit(
    program.pipe(Effect.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))
  )
  if (exit._tag === "Failure") throw Cause.squash(exit.cause)
}
