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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

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

/** @internal */
export interface Service {
  readonly get: (entityId: string) => Effect.Effect<Option.Option<SessionRecord>>
  readonly set: (entityId: string, record: SessionRecord) => Effect.Effect<void>
}

/** @internal */
export class SessionDirectory extends Context.Tag("effect-claude-agent/AgentCluster/SessionDirectory")<
  SessionDirectory,
  Service
>() {}

/** @internal */
export const layerMemory: Layer.Layer<SessionDirectory> = Layer.effect(
  SessionDirectory,
  Effect.map(Ref.make(new Map<string, SessionRecord>()), (ref) =>
    SessionDirectory.of({
      get: (id) => Effect.map(Ref.get(ref), (m) => Option.fromNullable(m.get(id))),
      set: (id, record) => Ref.update(ref, (m) => new Map(m).set(id, record))
    }))
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
 * The records in a table of the cluster's database. A database the cluster cannot read or write is a defect of the
 * entity (the cluster's own storage fails the same way), not an error of the turn.
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
        createTable(sql`CREATE TABLE IF NOT EXISTS ${table} (entity_id TEXT PRIMARY KEY, record TEXT NOT NULL)`)
      )
      return SessionDirectory.of({
        get: (id) =>
          sql<{ readonly record: string }>`SELECT record FROM ${table} WHERE entity_id = ${id}`.pipe(
            Effect.flatMap((rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(decode(rows[0]!.record))),
            Effect.orDie
          ),
        set: (id, record) =>
          encode(record).pipe(
            Effect.flatMap((json) =>
              sql`INSERT INTO ${table} (entity_id, record) VALUES (${id}, ${json})
                ON CONFLICT (entity_id) DO UPDATE SET record = excluded.record`
            ),
            Effect.asVoid,
            Effect.orDie
          )
      })
    })
  )
