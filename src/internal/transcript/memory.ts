/** @internal */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Api from "../../TranscriptStore.js"
import { checkEntries, checkKey, TranscriptStore } from "./store.js"

interface Transcript {
  readonly entries: Array<Api.Entry>
  readonly uuids: Set<string>
  mtime: number
}

/** The map key of a transcript: its parts joined by NUL, which no part may contain. */
const keyOf = (key: Api.SessionKey): string => `${key.projectKey}\0${key.sessionId}\0${key.subpath ?? ""}`

/** @internal */
export const make: Effect.Effect<Api.Service> = Effect.gen(function*() {
  const clock = yield* Effect.clock
  const transcripts = new Map<string, Transcript>()
  const now = () => clock.unsafeCurrentTimeMillis()

  return TranscriptStore.of({
    append: (key, entries) =>
      Effect.zipRight(
        checkKey("append", key),
        Effect.flatMap(checkEntries("append", key, entries), (checked) =>
          Effect.sync(() => {
            const k = keyOf(key)
            let transcript = transcripts.get(k)
            if (transcript === undefined) {
              transcript = { entries: [], uuids: new Set(), mtime: 0 }
              transcripts.set(k, transcript)
            }
            for (const entry of checked) {
              if (entry.uuid !== undefined) {
                if (transcript.uuids.has(entry.uuid)) continue
                transcript.uuids.add(entry.uuid)
              }
              // a copy, as a remote store would hold: later changes by the caller do not reach the store
              transcript.entries.push(structuredClone(entry))
            }
            transcript.mtime = now()
          }))
      ),
    load: (key) =>
      Effect.zipRight(
        checkKey("load", key),
        Effect.sync(() =>
          Option.map(Option.fromNullable(transcripts.get(keyOf(key))), (t) => t.entries.map((e) => structuredClone(e)))
        )
      ),
    list: (projectKey) =>
      Effect.zipRight(
        checkKey("list", { projectKey }),
        Effect.sync(() => {
          const out: Array<Api.SessionListing> = []
          for (const [k, t] of transcripts) {
            const [project, sessionId, subpath] = k.split("\0")
            if (project === projectKey && subpath === "" && sessionId !== undefined) {
              out.push({ sessionId, mtime: t.mtime })
            }
          }
          return out
        })
      ),
    listSubkeys: (key) =>
      Effect.zipRight(
        checkKey("listSubkeys", key),
        Effect.sync(() => {
          const prefix = `${key.projectKey}\0${key.sessionId}\0`
          const out: Array<string> = []
          for (const k of transcripts.keys()) {
            if (k.startsWith(prefix) && k.length > prefix.length) out.push(k.slice(prefix.length))
          }
          return out
        })
      ),
    delete: (key) =>
      Effect.zipRight(
        checkKey("delete", key),
        Effect.sync(() => {
          if (key.subpath !== undefined) {
            transcripts.delete(keyOf(key))
            return
          }
          const prefix = `${key.projectKey}\0${key.sessionId}\0`
          for (const k of [...transcripts.keys()]) if (k.startsWith(prefix)) transcripts.delete(k)
        })
      )
  })
})
