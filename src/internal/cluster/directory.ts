/**
 * What an `AgentSession` entity keeps between its incarnations: the CLI session it runs, the turn in flight, and
 * the settings changed through it. One small record per entity, in the cluster's SQL database (or in memory).
 *
 * The conversation itself is not here: it is in the runner's transcript store (by default in the same database),
 * loaded into the CLI's config dir before a resume.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { ShardLeases } from "./lease.js"

/** @internal */
export const SessionRecord = Schema.Struct({
  /** The CLI session id the entity runs: resumed by the next incarnation. */
  sessionId: Schema.String,
  /** Whether a turn has run, so that the CLI has a transcript to resume. */
  started: Schema.Boolean,
  /** The turn whose prompt went to the CLI and whose result has not been seen yet. */
  openTurn: Schema.NullOr(Schema.String),
  /** The session was closed: its entity starts no CLI any more. */
  closed: Schema.Boolean,
  model: Schema.optional(Schema.String),
  permissionMode: Schema.optional(Schema.String),
  maxThinkingTokens: Schema.optional(Schema.NullOr(Schema.Number))
})

/** @internal */
export type SessionRecord = typeof SessionRecord.Type

/**
 * A write refused because the entity's incarnation no longer owns its record: another incarnation (on another runner,
 * or a later one here) claimed it since. Internal: what a stale incarnation does reaches no caller.
 *
 * @internal
 */
export class Fenced extends Data.TaggedError("Fenced")<{
  readonly entityId: string
  readonly epoch: number
}> {
  override get message(): string {
    return `AgentSession ${this.entityId}: epoch ${this.epoch} was fenced off by a later claim`
  }
}

/**
 * What an incarnation gets from its claim: its epoch (the fencing token of every write it makes) and the record as
 * the last incarnation left it.
 *
 * @internal
 */
export interface Claim {
  readonly epoch: number
  readonly record: Option.Option<SessionRecord>
}

/** @internal */
export interface Service {
  /**
   * Claims the entity's record for a new incarnation: its epoch goes up by one (a record never claimed starts at 1),
   * which refuses every later write of the incarnations before. `guard` runs before each attempt, the first and each
   * one made again after the database refused the claim: it waits until the runner may claim (its shard's lease
   * held), or interrupts the claim (the runner let the shard go), so that no attempt is made for a shard another
   * runner may hold by then.
   */
  readonly claim: (entityId: string, owner: string, guard?: Effect.Effect<void>) => Effect.Effect<Claim>
  /** Writes the record, unless a later incarnation claimed it since `epoch`. */
  readonly set: (entityId: string, epoch: number, record: SessionRecord) => Effect.Effect<void, Fenced>
  /**
   * Runs `effect` (a write elsewhere in the same database, e.g. a reply or a transcript entry) in one transaction with
   * a check that the incarnation of `epoch` still owns the record; the check holds the record's row until the
   * transaction ends, so that a claim is ordered before the write or after it, never across it.
   */
  readonly fenced: <A, E, R>(
    entityId: string,
    epoch: number,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | Fenced | SqlError, R>
  /** Checks, without a transaction around anything else, that the incarnation of `epoch` still owns the record. */
  readonly check: (entityId: string, epoch: number) => Effect.Effect<void, Fenced | SqlError>
}

/** @internal */
export class SessionDirectory extends Context.Tag("effect-claude-agent/AgentCluster/SessionDirectory")<
  SessionDirectory,
  Service
>() {}

interface MemoryRow {
  readonly epoch: number
  readonly record: SessionRecord | undefined
}

/** @internal */
export const layerMemory: Layer.Layer<SessionDirectory> = Layer.effect(
  SessionDirectory,
  Effect.map(Ref.make(new Map<string, MemoryRow>()), (ref) => {
    const check = (entityId: string, epoch: number) =>
      Effect.flatMap(
        Ref.get(ref),
        (rows) => rows.get(entityId)?.epoch === epoch ? Effect.void : Effect.fail(new Fenced({ entityId, epoch }))
      )
    return SessionDirectory.of({
      claim: (entityId, _owner, guard = Effect.void) =>
        Effect.zipRight(
          guard,
          Ref.modify(ref, (rows) => {
            const row = rows.get(entityId)
            const next = { epoch: (row?.epoch ?? 0) + 1, record: row?.record }
            return [{ epoch: next.epoch, record: Option.fromNullable(row?.record) }, new Map(rows).set(entityId, next)]
          })
        ),
      set: (entityId, epoch, record) =>
        Effect.zipRight(
          check(entityId, epoch),
          Ref.update(ref, (rows) => new Map(rows).set(entityId, { epoch, record }))
        ),
      fenced: (entityId, epoch, effect) => Effect.zipRight(check(entityId, epoch), effect),
      check
    })
  })
)

const decode = Schema.decodeUnknown(Schema.parseJson(SessionRecord))
const encode = Schema.encode(Schema.parseJson(SessionRecord))

/**
 * Creates a table of the cluster's database. Runners starting together race to create it, and PostgreSQL can fail one
 * of two concurrent `CREATE TABLE IF NOT EXISTS` (on its catalog's unique index): the loser tries again and finds it.
 *
 * @internal
 */
export const createTable = <A, E, R>(create: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(create, { times: 3, schedule: Schedule.exponential("100 millis") })

/**
 * How long a claim or a record write the database refuses is tried again (a database restarting, a disk full) before
 * it is a defect: a defect restarts the entity (its turn in flight ends with `session_restarted`), and a runner with
 * an entity so restarted was seen slow to stop (docs/GUARANTEES.md). Both writes can be made twice: a claim made twice
 * only takes one epoch more, and a record is written whole.
 */
const WRITE_RETRY = Schedule.exponential("100 millis").pipe(
  Schedule.union(Schedule.spaced("1 second")),
  Schedule.upTo("30 seconds")
)

/**
 * The records in a table of the cluster's database, one row per entity: its record (JSON), its epoch and the runner
 * that claimed it last. A database the cluster cannot read or write (past `WRITE_RETRY`) is a defect of the entity
 * (the cluster's own storage fails the same way), not an error of the turn.
 *
 * @internal
 */
export const layerSql = (prefix = "cluster"): Layer.Layer<SessionDirectory, never, SqlClient.SqlClient> =>
  Layer.effect(
    SessionDirectory,
    Effect.gen(function*() {
      const sql = (yield* SqlClient.SqlClient).withoutTransforms()
      const table = sql(`${prefix}_agent_sessions`)
      yield* Effect.orDie(
        createTable(
          sql`CREATE TABLE IF NOT EXISTS ${table} (entity_id TEXT PRIMARY KEY, record TEXT, epoch BIGINT NOT NULL DEFAULT 0, owner TEXT)`
        )
      )
      // a table made before the epochs: the columns are added (by one of the runners starting together)
      yield* Effect.orDie(createTable(Effect.catchAll(
        Effect.asVoid(sql`SELECT epoch, owner FROM ${table} WHERE 1 = 0`),
        () =>
          Effect.zipRight(
            sql`ALTER TABLE ${table} ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0`,
            sql`ALTER TABLE ${table} ADD COLUMN owner TEXT`
          )
      )))
      const leases = yield* Effect.serviceOption(ShardLeases)
      // PostgreSQL ends a session left idle in a transaction for longer than a shard lease: a runner cut off from the
      // database between a fenced transaction's check (which holds the row's lock) and its write would otherwise keep
      // the row locked, and the runner taking the session over would wait on it (all its sessions with it, its
      // storage loop claiming) until the cut heals. Set with the check, in the same statement (no round trip more).
      const idleLimit = Option.match(leases, {
        onNone: () => undefined,
        onSome: (l) => String(Math.ceil(Duration.toMillis(l.length)))
      })
      const check = (entityId: string, epoch: number) =>
        // an update that changes nothing: it takes the row's write lock (PostgreSQL) or the database's (SQLite)
        sql.onDialectOrElse({
          pg: () =>
            idleLimit === undefined
              ? sql<{ readonly epoch: unknown }>`UPDATE ${table} SET epoch = epoch
                  WHERE entity_id = ${entityId} AND epoch = ${epoch} RETURNING epoch`
              : sql<{ readonly epoch: unknown }>`UPDATE ${table} SET epoch = ${table}.epoch
                  FROM (SELECT set_config('idle_in_transaction_session_timeout', ${idleLimit}, true)) AS limited
                  WHERE entity_id = ${entityId} AND epoch = ${epoch} RETURNING ${table}.epoch`,
          orElse: () =>
            sql<{ readonly epoch: unknown }>`UPDATE ${table} SET epoch = epoch
              WHERE entity_id = ${entityId} AND epoch = ${epoch} RETURNING epoch`
        }).pipe(
          Effect.flatMap((rows) => rows.length === 1 ? Effect.void : Effect.fail(new Fenced({ entityId, epoch })))
        )
      return SessionDirectory.of({
        claim: (entityId, owner, guard = Effect.void) =>
          // the guard before every attempt: a claim the database refused while the lease was held, tried again once
          // it lapsed (a runner cut off from the database, healed after its shard moved), took the record from the
          // runner that held the shard by then, cutting its turn off
          Effect.zipRight(
            guard,
            sql<{ readonly epoch: number | string | bigint; readonly record: string | null }>`
            INSERT INTO ${table} (entity_id, record, epoch, owner) VALUES (${entityId}, NULL, 1, ${owner})
            ON CONFLICT (entity_id) DO UPDATE SET epoch = ${table}.epoch + 1, owner = excluded.owner
            RETURNING epoch, record`
          ).pipe(
            Effect.retry(WRITE_RETRY),
            Effect.flatMap((rows) =>
              Effect.map(
                rows[0]!.record === null ? Effect.succeedNone : Effect.asSome(decode(rows[0]!.record)),
                (record): Claim => ({ epoch: Number(rows[0]!.epoch), record })
              )
            ),
            Effect.orDie
          ),
        set: (entityId, epoch, record) =>
          encode(record).pipe(
            Effect.orDie,
            Effect.flatMap((json) =>
              sql<{ readonly epoch: unknown }>`UPDATE ${table} SET record = ${json}
                WHERE entity_id = ${entityId} AND epoch = ${epoch} RETURNING epoch`.pipe(
                Effect.retry(WRITE_RETRY),
                Effect.orDie
              )
            ),
            Effect.flatMap((rows) => rows.length === 1 ? Effect.void : Effect.fail(new Fenced({ entityId, epoch })))
          ),
        fenced: (entityId, epoch, effect) => sql.withTransaction(Effect.zipRight(check(entityId, epoch), effect)),
        check
      })
    })
  )
