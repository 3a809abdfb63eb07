/** @internal */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Api from "../../TranscriptStore.js"
import { backendFailed, checkEntries, checkKey, isEntry, TranscriptStore, TranscriptStoreError } from "./store.js"

const isNotFound = (e: PlatformError.PlatformError): boolean => e._tag === "SystemError" && e.reason === "NotFound"

/** The entries of a JSONL text; lines that are not entries (a line cut short by a crash) are skipped. @internal */
export const parseLines = (text: string): Array<Api.Entry> => {
  const out: Array<Api.Entry> = []
  for (const line of text.split("\n")) {
    if (line.trim().length === 0) continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      continue
    }
    if (isEntry(value)) out.push(value)
  }
  return out
}

/** @internal */
export const make = (
  options: Api.FileSystemOptions
): Effect.Effect<Api.Service, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = path.resolve(options.directory)
    // appends are serialized, so the uuids known for a file stay in step with the file
    const lock = yield* Effect.makeSemaphore(1)
    const knownUuids = new Map<string, Set<string>>()

    const sessionDir = (key: { readonly projectKey: string; readonly sessionId: string }) =>
      path.join(root, key.projectKey, key.sessionId)
    const fileOf = (key: Api.SessionKey) =>
      key.subpath === undefined
        ? path.join(root, key.projectKey, `${key.sessionId}.jsonl`)
        : path.join(sessionDir(key), `${key.subpath}.jsonl`)

    const readEntries = (file: string): Effect.Effect<Option.Option<Array<Api.Entry>>, PlatformError.PlatformError> =>
      fs.readFileString(file).pipe(
        Effect.map((text) => Option.some(parseLines(text))),
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
      )

    const uuidsOf = (file: string) =>
      Effect.suspend(() => {
        const known = knownUuids.get(file)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.map(readEntries(file), (entries) => {
          const uuids = new Set<string>()
          for (const e of Option.getOrElse(entries, () => [])) if (typeof e.uuid === "string") uuids.add(e.uuid)
          knownUuids.set(file, uuids)
          return uuids
        })
      })

    const append = (key: Api.SessionKey, entries: ReadonlyArray<Api.Entry>) =>
      Effect.gen(function*() {
        yield* checkKey("append", key)
        const checked = yield* checkEntries("append", key, entries)
        const file = fileOf(key)
        yield* lock.withPermits(1)(
          Effect.gen(function*() {
            const uuids = yield* uuidsOf(file)
            const lines: Array<string> = []
            const added: Array<string> = []
            for (const entry of checked) {
              if (entry.uuid !== undefined) {
                if (uuids.has(entry.uuid) || added.includes(entry.uuid)) continue
                added.push(entry.uuid)
              }
              lines.push(JSON.stringify(entry))
            }
            if (lines.length === 0) return
            // transcripts hold prompts and tool output: readable by their owner only, as the CLI writes them
            yield* fs.makeDirectory(path.dirname(file), { recursive: true, mode: 0o700 })
            yield* fs.writeFileString(file, `${lines.join("\n")}\n`, { flag: "a", mode: 0o600 })
            for (const uuid of added) uuids.add(uuid)
          }).pipe(
            // what was written is unknown after a failure: read the uuids again next time
            Effect.tapError(() => Effect.sync(() => knownUuids.delete(file))),
            Effect.mapError(backendFailed("append", key))
          )
        )
      })

    const load = (key: Api.SessionKey) =>
      Effect.zipRight(checkKey("load", key), readEntries(fileOf(key)).pipe(Effect.mapError(backendFailed("load", key))))

    const list = (projectKey: string) => Effect.zipRight(checkKey("list", { projectKey }), listProject(projectKey))

    const listProject = (projectKey: string) =>
      Effect.gen(function*() {
        const dir = path.join(root, projectKey)
        const names = yield* fs.readDirectory(dir).pipe(
          Effect.catchIf(isNotFound, () => Effect.succeed<Array<string>>([]))
        )
        const listed = yield* Effect.forEach(
          names.filter((name) => name.endsWith(".jsonl")),
          (name) =>
            fs.stat(path.join(dir, name)).pipe(
              Effect.map((info): Api.SessionListing | undefined =>
                info.type !== "File" ? undefined : {
                  sessionId: name.slice(0, -".jsonl".length),
                  mtime: Math.floor(Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => 0))
                }
              ),
              Effect.catchIf(isNotFound, () => Effect.succeed(undefined))
            ),
          { concurrency: 8 }
        )
        return listed.filter((l): l is Api.SessionListing => l !== undefined)
      }).pipe(Effect.mapError(backendFailed("list", { projectKey })))

    const listSubkeys = (key: { readonly projectKey: string; readonly sessionId: string }) =>
      Effect.zipRight(
        checkKey("listSubkeys", key),
        fs.readDirectory(sessionDir(key), { recursive: true }).pipe(
          Effect.map((names) =>
            names.filter((name) => name.endsWith(".jsonl")).map((name) =>
              name.slice(0, -".jsonl".length).split(path.sep).join("/")
            )
          ),
          Effect.catchIf(isNotFound, () => Effect.succeed<Array<string>>([])),
          Effect.mapError(backendFailed("listSubkeys", key))
        )
      )

    const remove = (key: Api.SessionKey) =>
      Effect.zipRight(
        checkKey("delete", key),
        lock.withPermits(1)(
          Effect.gen(function*() {
            const file = fileOf(key)
            yield* fs.remove(file, { force: true })
            knownUuids.delete(file)
            if (key.subpath === undefined) {
              const dir = sessionDir(key)
              for (const known of [...knownUuids.keys()]) if (known.startsWith(dir + path.sep)) knownUuids.delete(known)
              yield* fs.remove(dir, { recursive: true, force: true })
            }
          }).pipe(Effect.mapError(backendFailed("delete", key)))
        )
      )

    return TranscriptStore.of({ append, load, list, listSubkeys, delete: remove })
  })

/** @internal */
export const importSession = (
  source: { readonly projectsDir: string; readonly projectKey: string; readonly sessionId: string },
  options: { readonly includeSubagents?: boolean | undefined; readonly batchSize?: number | undefined } = {}
): Effect.Effect<void, TranscriptStoreError, TranscriptStore | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const target = yield* TranscriptStore
    const local = yield* make({ directory: source.projectsDir })
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? 500))
    const main = { projectKey: source.projectKey, sessionId: source.sessionId }
    const subpaths = options.includeSubagents === false ? [] : yield* local.listSubkeys(main)
    for (const key of [main, ...subpaths.map((subpath) => ({ ...main, subpath }))]) {
      const entries = yield* local.load(key)
      if (Option.isNone(entries)) {
        if (key === main) {
          return yield* new TranscriptStoreError({
            reason: "InvalidKey",
            method: "importSession",
            ...main,
            description: `no transcript under ${source.projectsDir}`
          })
        }
        continue
      }
      for (let i = 0; i < entries.value.length; i += batchSize) {
        yield* target.append(key, entries.value.slice(i, i + batchSize))
      }
    }
  })
