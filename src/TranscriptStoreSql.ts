/**
 * A `TranscriptStore` in a SQL database through `@effect/sql`: SQLite embedded (`@effect/sql-sqlite-node`, one file,
 * no server) or any `SqlClient` (e.g. `@effect/sql-pg` for a database shared by several machines).
 *
 * Reached through its own entry point, `effect-claude-agent/sql`, so that `@effect/sql` stays an optional peer:
 * `import "effect-claude-agent"` never loads it.
 *
 * One table (`claude_transcript_entries` unless told otherwise) holds every entry, one row each: the key
 * (`project_key`, `session_id`, `subpath`, `''` for the main transcript), the entry's `uuid` (unique per transcript:
 * an entry appended twice is stored once), the entry as JSON text, and the time it was written (what `list` reports).
 * The table and its indexes are created when the store is built, if missing.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import { ClaudeAgent, NodeClaudeAgent } from "effect-claude-agent"
 * import { TranscriptStoreSql } from "effect-claude-agent/sql"
 *
 * // every session of the program mirrors to (and resumes from) ./transcripts.db
 * const Live = Layer.merge(NodeClaudeAgent.layer, TranscriptStoreSql.layerSqlite({ filename: "transcripts.db" }))
 *
 * // or, shared by several machines:
 * // import { PgClient } from "@effect/sql-pg"
 * // TranscriptStoreSql.layer().pipe(Layer.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL!) })))
 * ```
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/transcript/sql.js"
import { TranscriptStore, type TranscriptStoreError } from "./internal/transcript/store.js"
import type * as Api from "./TranscriptStore.js"

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /**
   * The table to use (letters, digits and `_`, at most 63 characters). Defaults to `claude_transcript_entries`.
   */
  readonly table?: string | undefined
}

/**
 * Builds the store on the `SqlClient` in the environment, creating its table and indexes if missing. A bad table
 * name is a `TranscriptStoreError` (reason `InvalidKey`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<Api.Service, SqlError | TranscriptStoreError, SqlClient.SqlClient> = internal.make

/**
 * The store on the `SqlClient` the caller provides (SQLite, PostgreSQL, …).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: Options
): Layer.Layer<TranscriptStore, SqlError | TranscriptStoreError, SqlClient.SqlClient> =>
  Layer.effect(TranscriptStore, make(options))

/**
 * The store in an SQLite file (`@effect/sql-sqlite-node`, loaded when the layer is built), created if missing; WAL
 * mode, so several processes of one machine may share it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (
  options: Options & { readonly filename: string }
): Layer.Layer<TranscriptStore, SqlError | TranscriptStoreError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.promise(() => import("@effect/sql-sqlite-node/SqliteClient")),
      (SqliteClient) => layer(options).pipe(Layer.provide(SqliteClient.layer({ filename: options.filename })))
    )
  )
