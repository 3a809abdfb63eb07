// The SQL backends the cluster's multi-process tests run on: an SQLite file always, PostgreSQL when the tests have a
// server (ECA_TEST_PG_URL; .ci/run starts one).
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as path from "node:path"
import type { RunnerStorage } from "../../scripts/demo-cluster-processes.js"

const pgUrl = process.env["ECA_TEST_PG_URL"]

/** Each backend's name and, unless it is skipped, where its runners keep their storage (given a scratch dir). */
export const backends: ReadonlyArray<readonly [string, ((dir: string) => RunnerStorage) | undefined]> = [
  ["SQLite", (dir) => ({ sqlite: path.join(dir, "cluster.db") })],
  [
    pgUrl === undefined ? "PostgreSQL (skipped: ECA_TEST_PG_URL is unset; .ci/run starts a server)" : "PostgreSQL",
    pgUrl === undefined ? undefined : () => ({ pgUrl })
  ]
]

/** A client of a backend's database. */
export const sqlLayer = (storage: RunnerStorage): Layer.Layer<SqlClient.SqlClient> =>
  "pgUrl" in storage
    ? Layer.orDie(PgClient.layer({ url: Redacted.make(storage.pgUrl) }))
    : Layer.orDie(SqliteClient.layer({ filename: storage.sqlite }))
