/**
 * The official SDK's `SessionStore` (an object of Promise methods) as a `TranscriptStore.Service`, and back.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Api from "../../TranscriptStore.js"
import { backendFailed, checkEntries, checkKey, type KeyParts, TranscriptStore, TranscriptStoreError } from "./store.js"

/** Calls a user method: a throw or a rejection is a `BackendFailed` error. */
const call = <A>(method: string, key: KeyParts, f: () => Promise<A> | A) =>
  Effect.tryPromise({ try: async () => await f(), catch: backendFailed(method, key) })

const plainKey = (key: Api.SessionKey): { projectKey: string; sessionId: string; subpath?: string } =>
  key.subpath === undefined
    ? { projectKey: key.projectKey, sessionId: key.sessionId }
    : { projectKey: key.projectKey, sessionId: key.sessionId, subpath: key.subpath }

const invalidResult = (method: string, key: KeyParts, description: string) =>
  new TranscriptStoreError({ reason: "BackendFailed", method, ...key, description })

/** @internal */
export const fromSessionStore = (store: Api.PromiseSessionStore): Api.Service =>
  TranscriptStore.of({
    append: (key, entries) =>
      Effect.gen(function*() {
        yield* checkKey("append", key)
        const checked = yield* checkEntries("append", key, entries)
        yield* call("append", key, () => store.append(plainKey(key), [...checked]))
      }),
    load: (key) =>
      Effect.gen(function*() {
        yield* checkKey("load", key)
        const loaded: unknown = yield* call("load", key, () => store.load(plainKey(key)))
        if (loaded === null || loaded === undefined) return Option.none()
        const entries = yield* checkEntries("load", key, loaded).pipe(
          Effect.mapError((e) => invalidResult("load", key, e.description ?? "invalid entry"))
        )
        return Option.some(entries)
      }),
    list: (projectKey) =>
      Effect.gen(function*() {
        yield* checkKey("list", { projectKey })
        const listSessions = store.listSessions
        if (listSessions === undefined) return []
        const listed: unknown = yield* call("list", { projectKey }, () => listSessions.call(store, projectKey))
        if (!Array.isArray(listed)) {
          return yield* invalidResult("list", { projectKey }, "listSessions returned no array")
        }
        const out: Array<Api.SessionListing> = []
        for (const item of listed) {
          if (
            typeof item === "object" && item !== null && "sessionId" in item && typeof item.sessionId === "string" &&
            "mtime" in item && typeof item.mtime === "number"
          ) out.push({ sessionId: item.sessionId, mtime: item.mtime })
        }
        return out
      }),
    listSubkeys: (key) =>
      Effect.gen(function*() {
        yield* checkKey("listSubkeys", key)
        const listSubkeys = store.listSubkeys
        if (listSubkeys === undefined) return []
        const listed: unknown = yield* call(
          "listSubkeys",
          key,
          () => listSubkeys.call(store, { projectKey: key.projectKey, sessionId: key.sessionId })
        )
        if (!Array.isArray(listed)) return yield* invalidResult("listSubkeys", key, "listSubkeys returned no array")
        return listed.filter((s): s is string => typeof s === "string" && s.length > 0)
      }),
    delete: (key) =>
      Effect.gen(function*() {
        yield* checkKey("delete", key)
        const remove = store.delete
        if (remove !== undefined) yield* call("delete", key, () => remove.call(store, plainKey(key)))
      })
  })

/** @internal */
export const toSessionStore = (
  service: Api.Service,
  run: <A>(effect: Effect.Effect<A, TranscriptStoreError>) => Promise<A>
): Required<Api.PromiseSessionStore> => ({
  append: (key, entries) => run(service.append(key, entries)),
  load: (key) => run(Effect.map(service.load(key), (o) => Option.isSome(o) ? [...o.value] : null)),
  listSessions: (projectKey) => run(Effect.map(service.list(projectKey), (l) => l.map((s) => ({ ...s })))),
  delete: (key) => run(service.delete(key)),
  listSubkeys: (key) => run(Effect.map(service.listSubkeys(key), (l) => [...l]))
})
