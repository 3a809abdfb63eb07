// The PostgreSQL store for the transcript store's tests: only with ECA_TEST_PG_URL (a server the test may create
// tables in, e.g. `postgres://postgres@127.0.0.1:5432/postgres`); each store gets a table of its own, dropped after.
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { TranscriptStore } from "effect-claude-agent"
import { TranscriptStoreSql } from "effect-claude-agent/sql"

/** The server's URL, when the tests have one. */
export const pgUrl: string | undefined = process.env["ECA_TEST_PG_URL"]

/** `@effect/sql-pg`'s `PgClient`, imported by name at run time: its typings need `@types/pg`, not installed here. */
const PG_CLIENT = "@effect/sql-pg/PgClient"

const pgClientLayer = (url: string) =>
  Effect.promise((): Promise<{ layer: (config: { url: Redacted.Redacted }) => Layer.Layer<SqlClient.SqlClient> }> =>
    import(PG_CLIENT)
  ).pipe(Effect.map((PgClient) => PgClient.layer({ url: Redacted.make(url) })))

/** A store on the server, in a fresh table dropped when the scope closes. */
export const makePgStore = (url: string) =>
  Effect.gen(function*() {
    const table = `eca_test_${Math.random().toString(36).slice(2, 10)}`
    const ctx = yield* Layer.build(yield* pgClientLayer(url))
    const sql = Context.get(ctx, SqlClient.SqlClient)
    yield* Effect.addFinalizer(() => Effect.ignore(sql`DROP TABLE IF EXISTS ${sql(table)}`))
    return yield* TranscriptStoreSql.make({ table }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  })

/** {@link makePgStore} as a layer. */
export const layerPgStore = (url: string) => Layer.scoped(TranscriptStore.TranscriptStore, makePgStore(url))
