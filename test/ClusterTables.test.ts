// The cluster's own tables on PostgreSQL: runners starting together each create them (`CREATE TABLE IF NOT EXISTS`),
// and PostgreSQL can fail one of two concurrent creations; every runner must still start.
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Directory from "../src/internal/cluster/directory.js"

const pgUrl = process.env["ECA_TEST_PG_URL"]

describe.skipIf(pgUrl === undefined)(
  "the cluster's tables on PostgreSQL (ECA_TEST_PG_URL; .ci/run starts a server)",
  () => {
    it.live(
      "eight runners creating the session table at once all start, three times over",
      () =>
        Effect.gen(function*() {
          const pg = Layer.orDie(PgClient.layer({ url: Redacted.make(pgUrl!) }))
          for (let round = 0; round < 3; round++) {
            const prefix = `race_${process.pid}_${Date.now()}_${round}`
            const start = Effect.scoped(Layer.build(Directory.layerSql(prefix).pipe(Layer.provide(pg))))
            const exits = yield* Effect.all(
              Array.from({ length: 8 }, () => Effect.exit(start)),
              {
                concurrency: "unbounded"
              }
            )
            expect(exits.filter(Exit.isFailure)).toEqual([])
          }
        }),
      60_000
    )
  }
)
