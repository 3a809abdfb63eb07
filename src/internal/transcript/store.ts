/**
 * The transcript store's tag, error and key rules, shared by every implementation (kept here so that the public
 * module only re-exports them and the implementations need no import from it at the value level).
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Api from "../../TranscriptStore.js"

/** @internal */
export const TranscriptStoreErrorTypeId: unique symbol = Symbol.for(
  "effect-claude-agent/TranscriptStore/TranscriptStoreError"
)

/** @internal */
export type TranscriptStoreErrorTypeId = typeof TranscriptStoreErrorTypeId

/** @internal */
export class TranscriptStoreError extends Schema.TaggedError<TranscriptStoreError>(
  "effect-claude-agent/TranscriptStoreError"
)("TranscriptStoreError", {
  reason: Schema.Literal("InvalidKey", "InvalidEntry", "BackendFailed", "Timeout"),
  /** The store method that failed: `append`, `load`, `list`, `delete`, `listSubkeys`. */
  method: Schema.String,
  projectKey: Schema.optional(Schema.String),
  sessionId: Schema.optional(Schema.String),
  subpath: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  readonly [TranscriptStoreErrorTypeId]: TranscriptStoreErrorTypeId = TranscriptStoreErrorTypeId
  override get message(): string {
    const key = this.sessionId === undefined
      ? this.projectKey === undefined ? "" : ` (project ${this.projectKey})`
      : ` (session ${this.sessionId}${this.subpath === undefined ? "" : `/${this.subpath}`})`
    const what = this.description === undefined ? "" : `: ${this.description}`
    switch (this.reason) {
      case "InvalidKey":
        return `TranscriptStore.${this.method}: invalid key${key}${what}`
      case "InvalidEntry":
        return `TranscriptStore.${this.method}: invalid entry${key}${what}`
      case "BackendFailed":
        return `TranscriptStore.${this.method} failed${key}${what}`
      case "Timeout":
        return `TranscriptStore.${this.method} timed out${key}${what}`
    }
  }
}

/** @internal */
export class TranscriptStore extends Context.Tag("effect-claude-agent/TranscriptStore")<
  TranscriptStore,
  Api.Service
>() {}

/** Any part of a key. @internal */
export interface KeyParts {
  readonly projectKey?: string | undefined
  readonly sessionId?: string | undefined
  readonly subpath?: string | undefined
}

/** @internal */
export class Mirror extends Context.Reference<Mirror>()("effect-claude-agent/TranscriptStore/Mirror", {
  defaultValue: (): Api.MirrorSettings => ({
    flush: "batched",
    loadTimeout: "60 seconds",
    closeTimeout: "10 seconds"
  })
}) {}

const keyFields = (key: KeyParts) => ({
  ...(key.projectKey !== undefined ? { projectKey: key.projectKey } : {}),
  ...(key.sessionId !== undefined ? { sessionId: key.sessionId } : {}),
  ...(key.subpath !== undefined ? { subpath: key.subpath } : {})
})

/** A failure of the backend behind `method`, with the key it was called with. @internal */
export const backendFailed = (method: string, key: KeyParts) => (cause: unknown) =>
  new TranscriptStoreError({
    reason: "BackendFailed",
    method,
    ...keyFields(key),
    description: cause instanceof Error ? cause.message : String(cause),
    cause
  })

/** A segment of a key: not empty, no path separator, not `.`/`..`, no NUL; at most 255 characters. */
const isSegment = (s: string): boolean =>
  s.length > 0 && s.length <= 255 && s !== "." && s !== ".." && !/[/\\\0]/.test(s)

/**
 * Checks a key the way every implementation needs it (the file-system one uses its parts as path segments):
 * `projectKey` and `sessionId` are single path segments; `subpath`, when present, is a non-empty `/`-separated list
 * of segments (the official contract: an empty subpath is invalid, leave it out for the main transcript).
 *
 * @internal
 */
export const checkKey = (
  method: string,
  key: { readonly projectKey: string; readonly sessionId?: string | undefined; readonly subpath?: string | undefined }
): Effect.Effect<void, TranscriptStoreError> => {
  const invalid = (description: string) =>
    Effect.fail(new TranscriptStoreError({ reason: "InvalidKey", method, ...keyFields(key), description }))
  if (typeof key.projectKey !== "string" || !isSegment(key.projectKey)) {
    return invalid("projectKey must be a non-empty name without path separators")
  }
  if (key.sessionId !== undefined && (typeof key.sessionId !== "string" || !isSegment(key.sessionId))) {
    return invalid("sessionId must be a non-empty name without path separators")
  }
  if (key.subpath !== undefined && (typeof key.subpath !== "string" || !key.subpath.split("/").every(isSegment))) {
    return invalid("subpath must be non-empty `/`-separated names (leave it out for the main transcript)")
  }
  return Effect.void
}

/**
 * A plain JSON object (prototype `Object.prototype` or `null`) whose own `type` is a string data property: what every
 * transcript entry is. Reads no getter; a value whose inspection throws (a hostile Proxy) is no entry.
 *
 * @internal
 */
export const isEntry = (u: unknown): u is Api.Entry => {
  if (typeof u !== "object" || u === null) return false
  try {
    const proto: unknown = Object.getPrototypeOf(u)
    if (proto !== Object.prototype && proto !== null) return false
    const type = Object.getOwnPropertyDescriptor(u, "type")
    return type !== undefined && "value" in type && typeof type.value === "string"
  } catch {
    return false
  }
}

/** Entries one call takes or returns at most: checked before any iteration (a sparse array's length is free). */
export const MAX_ENTRIES = 1_000_000

/**
 * Checks entries from a caller or a store: an array of at most `MAX_ENTRIES` entries, each a JSON object with a
 * string `type`. Returns a copy, so that what was checked is what is used.
 *
 * @internal
 */
export const checkEntries = (
  method: string,
  key: Api.SessionKey,
  entries: unknown
): Effect.Effect<ReadonlyArray<Api.Entry>, TranscriptStoreError> => {
  const invalid = (description: string) =>
    Effect.fail(new TranscriptStoreError({ reason: "InvalidEntry", method, ...keyFields(key), description }))
  try {
    if (!Array.isArray(entries)) return invalid("entries are not an array")
    const length: unknown = entries.length
    if (typeof length !== "number" || length > MAX_ENTRIES) {
      return invalid(`more than ${MAX_ENTRIES} entries in one call`)
    }
    const out: Array<Api.Entry> = new Array(length)
    for (let i = 0; i < length; i++) {
      const entry: unknown = entries[i]
      if (!isEntry(entry)) return invalid(`entry ${i} is not an object with a string \`type\``)
      out[i] = entry
    }
    return Effect.succeed(out)
  } catch (cause) {
    return invalid(`the entries could not be read: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

/**
 * Runs a store method the way a caller can rely on: a synchronous throw or a defect of the store becomes a
 * `BackendFailed` error (interruption passes through).
 *
 * @internal
 */
export const callStore = <A>(
  method: string,
  key: KeyParts,
  f: () => Effect.Effect<A, TranscriptStoreError>
): Effect.Effect<A, TranscriptStoreError> =>
  Effect.catchAllDefect(Effect.suspend(f), (defect) => Effect.fail(backendFailed(method, key)(defect)))
