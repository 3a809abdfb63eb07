// The session records of the cluster while the database refuses writes for a while (restarting, its disk full): a
// refused record write was a defect, which restarted the entity (docs/GUARANTEES.md, "The cluster under Jepsen-style
// faults").
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { layerSql, SessionDirectory } from "../src/internal/cluster/directory.js"

/** The directory on a scratch SQLite file, and its SQL client. */
const directoryLayer = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-cluster-directory-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(
    Effect.map((dir) =>
      layerSql("t").pipe(
        Layer.provideMerge(Layer.orDie(SqliteClient.layer({ filename: path.join(dir, "cluster.db") })))
      )
    )
  )
)

describe("the cluster's session records while the database refuses writes", () => {
  it.scopedLive("a claim and a record write wait until the database takes them", () =>
    Effect.gen(function*() {
      const directory = yield* SessionDirectory
      const sql = yield* SqlClient.SqlClient
      const record = { sessionId: "s", started: true, openTurn: null, closed: false }
      // every write fails (SQLITE_READONLY) until it is turned off again
      yield* sql`PRAGMA query_only = ON`
      const claiming = yield* Effect.fork(directory.claim("e1", "runner"))
      yield* Effect.sleep("1 second")
      expect(Option.isNone(yield* Fiber.poll(claiming))).toBe(true)
      yield* sql`PRAGMA query_only = OFF`
      const { epoch } = yield* Fiber.join(claiming)
      yield* sql`PRAGMA query_only = ON`
      const setting = yield* Effect.fork(directory.set("e1", epoch, record))
      yield* Effect.sleep("1 second")
      expect(Option.isNone(yield* Fiber.poll(setting))).toBe(true)
      yield* sql`PRAGMA query_only = OFF`
      yield* Fiber.join(setting)
      const again = yield* directory.claim("e1", "runner")
      expect(again.record).toEqual(Option.some(record))
    }).pipe(Effect.provide(directoryLayer)), 20_000)

  it.scopedLive(
    "a claim the database refused is tried again only while its guard lets it: never once the runner's lease lapsed",
    () =>
      Effect.gen(function*() {
        const directory = yield* SessionDirectory
        const sql = yield* SqlClient.SqlClient
        // the runner's lease on the shard: held until it lapses, held again once `renewed` is done
        const lapsed = yield* Ref.make(false)
        const renewed = yield* Deferred.make<void>()
        const leaseHeld = Effect.flatMap(Ref.get(lapsed), (gone) => gone ? Deferred.await(renewed) : Effect.void)
        yield* sql`PRAGMA query_only = ON`
        const claiming = yield* Effect.fork(directory.claim("e1", "cut-off", leaseHeld))
        yield* Effect.sleep("300 millis")
        // its lease lapses while the database refuses the claim; the shard's next holder claims the session
        yield* Ref.set(lapsed, true)
        yield* sql`PRAGMA query_only = OFF`
        const taken = yield* directory.claim("e1", "next")
        expect(taken.epoch).toBe(1)
        // the cut-off runner's attempts (100 ms apart, then up to 1 s) do not take it back while its lease is lapsed
        yield* Effect.sleep("2500 millis")
        expect(Option.isNone(yield* Fiber.poll(claiming))).toBe(true)
        const rows = yield* sql<{ readonly epoch: number }>`SELECT epoch FROM t_agent_sessions WHERE entity_id = 'e1'`
        expect(rows.map((r) => Number(r.epoch))).toEqual([1])
        yield* directory.check("e1", taken.epoch)
        // once its lease is held again, its claim goes through (and fences the other off)
        yield* Deferred.succeed(renewed, undefined)
        expect((yield* Fiber.join(claiming)).epoch).toBe(2)
      }).pipe(Effect.provide(directoryLayer)),
    20_000
  )
})
