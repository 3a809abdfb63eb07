/**
 * The SQL storage of an agent cluster: @effect/cluster's own `SqlMessageStorage` and `SqlRunnerStorage`, with one
 * read corrected.
 *
 * `SqlMessageStorage` 0.60.2 stores a streamed reply's chunks with `kind = NULL` and reads every reply back with
 * `Number(row.kind) === 0`, so a chunk read from storage is taken for the final reply (`Number(null)` is `0`) and the
 * client's stream dies with a ParseError before its first message. A streamed, persisted RPC (an agent turn) reads
 * its replies from storage on every path, so `repliesFor` is answered here by the same query, reading `NULL` as a
 * chunk.
 *
 * Its runner reads a stored message only while the request it belongs to has no unacknowledged chunk, and that holds
 * for an `Interrupt` too: a caller that leaves a streamed turn before acknowledging the chunk it last received (it
 * stopped reading) stores an interrupt no runner ever reads, and the turn runs on. Whether that happens depends on
 * how the chunks were batched (with PostgreSQL it does). A caller that interrupts a request reads none of its
 * replies any more, so `saveEnvelope` acknowledges them as it stores the interrupt.
 *
 * A streamed request's entity writes its next chunk only once the caller has acknowledged the last one (@effect/rpc's
 * `RpcServer`, `streamEffect`: `latch.await`, unbounded), and the caller's acknowledgement and interrupt reach it only
 * through this storage. In 0.60.2 the caller loses both when the database refuses the write (restarting, its disk
 * full): a failed `AckChunk` save fails the caller's stream (`RpcClient`: the mailbox is done with the error), and the
 * `Interrupt` its leaving sends is then dropped (`Sharding`, the client's `onFromClient`, case `"Interrupt"`:
 * `Effect.ignore(sendOutgoing(…))`, which retries only `EntityNotAssignedToRunner` / `RunnerUnavailable`). The turn
 * then waits for ever, and its session's later turns behind it. So `saveEnvelope` tries an acknowledgement again
 * until it is stored (bounded: the caller's stream waits meanwhile), and an interrupt, without holding up the caller
 * that left, until it is stored or the node stops.
 *
 * A reply to a request that an `AgentSession` incarnation handles is saved only through that incarnation's fence (see
 * `fence.ts`): in one transaction with the check that the incarnation still owns its session, so that a runner that
 * lost the session (paused past its lease, cut off) answers nothing its successor does not know of. A reply the store
 * refuses is tried again (bounded; a refusal of the fence is final): @effect/cluster 0.60.2 drops a final reply it
 * could not store within its own 800 ms of attempts, and its request waits unanswered until its caller gives up. A
 * reply of the entity not stored ends its request as interrupted, which @effect/cluster does not take for a defect of
 * the entity.
 *
 * Everything else is the package's own.
 *
 * @internal
 */
import { type MalformedMessage, PersistenceError } from "@effect/cluster/ClusterError"
import * as Message from "@effect/cluster/Message"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Reply from "@effect/cluster/Reply"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import type * as Rpc from "@effect/rpc/Rpc"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Fences from "./fence.js"
import { ShardLeases } from "./lease.js"

interface ReplyRow {
  readonly id: string | bigint
  readonly kind: string | number | bigint | null
  readonly request_id: string | bigint
  readonly payload: string
  readonly sequence: string | number | bigint | null
}

const WITH_EXIT = 0

/**
 * How long a caller's acknowledgement of a chunk is tried again while the store refuses it (a database restarting, a
 * disk full): beyond, the caller's turn fails, and its interrupt is stored in its place.
 */
const ACK_RETRY = Schedule.exponential("100 millis").pipe(
  Schedule.union(Schedule.spaced("1 second")),
  Schedule.upTo("30 seconds")
)

/**
 * How long a reply the store refuses is tried again (a database restarting, a disk full). Beyond @effect/cluster's own
 * attempts (`retryRespond`: 4, 200 ms apart) a refused final reply is dropped (its request stays active, unanswered,
 * until its caller gives up) and a refused chunk restarts its entity; within this bound neither happens.
 */
const REPLY_RETRY = ACK_RETRY

/** How often an interrupt the store refused is tried again (until it is stored, or the node stops). */
const INTERRUPT_RETRY = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("2 seconds")))

const fromRow = (row: ReplyRow): Reply.ReplyEncoded<Rpc.Any> =>
  row.kind !== null && Number(row.kind) === WITH_EXIT
    ? { _tag: "WithExit", id: String(row.id), requestId: String(row.request_id), exit: JSON.parse(row.payload) }
    : {
      _tag: "Chunk",
      id: String(row.id),
      requestId: String(row.request_id),
      values: JSON.parse(row.payload),
      sequence: Number(row.sequence)
    }

/** The SQL client the storage uses (without transforms). */
type Sql = SqlClient.SqlClient

/** Whether `reply` is an entity's (a chunk, or a final reply through a fence), not a defect the runner reports. */
const ofEntity = (reply: Reply.Reply<Rpc.Any>, fence: Fences.Fence | undefined) =>
  reply._tag === "Chunk" || (fence !== undefined && !(Exit.isFailure(reply.exit) && Cause.isDie(reply.exit.cause)))

/**
 * The package's `saveReply`, each reply of a registered request through its incarnation's fence, a reply the store
 * refuses tried again (bounded), and a reply of the entity not stored ending its request as interrupted.
 */
const fencedSaveReply = (
  storage: MessageStorage.MessageStorage["Type"],
  sql: Sql,
  replies: ReturnType<Sql>,
  fences: Fences.Service
): MessageStorage.MessageStorage["Type"]["saveReply"] => {
  /**
   * Whether the reply is stored: its request's final reply, or its chunk of that sequence (a save whose commit was
   * not confirmed may have stored it, and @effect/cluster tries a reply again under a new id).
   */
  const isReplySaved = (reply: Reply.Reply<Rpc.Any>) =>
    (reply._tag === "WithExit"
      ? sql<{ readonly found: number }>`SELECT 1 AS found FROM ${replies}
        WHERE request_id = ${String(reply.requestId)} AND kind = ${WITH_EXIT}`
      : sql<{ readonly found: number }>`SELECT 1 AS found FROM ${replies}
        WHERE request_id = ${String(reply.requestId)} AND sequence = ${reply.sequence}`).pipe(
        Effect.map((rows) => rows.length > 0),
        PersistenceError.refail
      )

  return (reply) =>
    Effect.suspend(() => {
      const requestId = String(reply.reply.requestId)
      const fence = fences.get(requestId)
      const save = (check: Fences.FenceCheck) =>
        fence === undefined ? storage.saveReply(reply) : fence(storage.saveReply(reply), check).pipe(
          // @effect/sql ends a transaction whose COMMIT or ROLLBACK the database did not answer (its connection lost:
          // a restart) with a defect, which restarted the entity: the save is as unsure as a refused one, and tried
          // again the same way (each attempt first looking whether it was stored after all)
          Effect.catchSomeDefect((defect) =>
            Predicate.isTagged(defect, "SqlError")
              ? Option.some(Effect.fail(new PersistenceError({ cause: defect })))
              : Option.none()
          ),
          Effect.catchTag("SqlError", (cause) => Effect.fail(new PersistenceError({ cause })))
        )
      // what a reply of the entity carries was made while its incarnation owned the session: each message of a turn
      // is answered only once that was checked (`entity.ts`, `runTurn`), and a failure after the loss of the session
      // is the loss's own answer (`ProcessExited`). So its save checks only that no later incarnation claimed the
      // session, not the lease, which may lapse meanwhile (the database locked or slow past it, its save tried again
      // meanwhile, below) with the runner keeping the shard: a reply refused then was left unanswered in
      // @effect/cluster's active requests until its caller gave up. An interruption (the caller left, or the request
      // is left to the session's next incarnation) is stored only while the lease is held: elsewhere it is the
      // session's next owner that answers the request. A store that refuses (not the fence: a refusal of its is
      // final) is tried again
      const refused = (e: { readonly _tag: string }) => e._tag === "PersistenceError"
      const check: Fences.FenceCheck = reply.reply._tag === "WithExit" && Exit.isInterrupted(reply.reply.exit)
        ? "lease"
        : "epoch"
      return save(check).pipe(
        Effect.catchIf(refused, () =>
          Effect.flatMap(isReplySaved(reply.reply), (saved) =>
            saved ? Effect.void : save(check)).pipe(
              Effect.retry({ schedule: REPLY_RETRY, while: refused })
            )),
        Effect.catchTag("Fenced", (cause) =>
          Effect.fail(new PersistenceError({ cause }))),
        // a reply of the entity the store did not take (its fence refused it, or the database past the retries) ends
        // its request as interrupted, unanswered here: @effect/cluster takes a reply it could not save for a defect
        // of the entity (`internal/entityManager.ts`, `onFromServer`: a chunk's `Effect.orDie`; a final reply's, when
        // its RPC server answers an interrupt of a request it no longer runs, `RpcServer.write`'s `catchAllDefect`)
        // and restarts it, and a restart of an entity stopping meanwhile stalls its runner (docs/GUARANTEES.md). The
        // request is left to the session's owner, which reads it from the store. A defect the runner reports for a
        // request (its storage read loop, which ignores a failure but not an interruption) still fails
        Effect.catchTag("PersistenceError", (e) => ofEntity(reply.reply, fence) ? Effect.interrupt : Effect.fail(e)),
        Effect.tap(() =>
          fence !== undefined && reply.reply._tag === "WithExit"
            ? Effect.sync(() => fences.done(requestId, fence))
            : Effect.void
        )
      )
    })
}

/**
 * `SqlMessageStorage.make`, with `repliesFor` reading chunks as chunks, an interrupt acknowledging its request, and
 * replies saved through their fences. The reply handlers (a reply sent on to a waiting caller once saved) are those of
 * `MessageStorage.make` around it: a reply reaches a caller only once its fenced save has committed.
 */
const make = (prefix: string, fences: Fences.Service) =>
  Effect.gen(function*() {
    const storage = yield* SqlMessageStorage.make({ prefix })
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const snowflakes = yield* Snowflake.Generator
    const replies = sql(`${prefix}_replies`)
    const messages = sql(`${prefix}_messages`)
    const unacked = sql.onDialectOrElse({ sqlite: () => 0, mssql: () => 0, orElse: () => false })
    const acked = sql.onDialectOrElse({ sqlite: () => 1, mssql: () => 1, orElse: () => true })

    const scope = yield* Effect.scope

    /** Whether the envelope `id` is stored: a save whose commit was not confirmed (the connection died) may have. */
    const isSaved = (id: string) =>
      sql<{ readonly found: number }>`SELECT 1 AS found FROM ${messages} WHERE id = ${id}`.pipe(
        Effect.map((rows) => rows.length > 0),
        PersistenceError.refail
      )
    /**
     * `save` of envelope `id` tried again after it failed, while the store refuses it, within `schedule`: each attempt
     * first looks whether the one before was stored after all, so that the envelope is stored once.
     */
    const retried = (
      id: string,
      save: Effect.Effect<void, PersistenceError | MalformedMessage>,
      schedule: Schedule.Schedule<unknown, unknown>
    ) =>
      Effect.flatMap(isSaved(id), (saved) => saved ? Effect.void : save).pipe(
        Effect.retry({ schedule, while: (e) => e._tag === "PersistenceError" })
      )

    const saveEnvelope: MessageStorage.MessageStorage["Type"]["saveEnvelope"] = (message) => {
      const envelope = message.envelope
      const id = String(envelope.id)
      switch (envelope._tag) {
        case "AckChunk":
          // the runner sends the next chunk only once this is stored: lost, the turn would wait for it for ever
          return Effect.catchTag(
            storage.saveEnvelope(message),
            "PersistenceError",
            () => retried(id, storage.saveEnvelope(message), ACK_RETRY)
          )
        case "Interrupt": {
          const save = sql`UPDATE ${replies} SET acked = ${acked} WHERE request_id = ${String(envelope.requestId)}
            AND kind IS NULL`.pipe(PersistenceError.refail, Effect.zipRight(storage.saveEnvelope(message)))
          // @effect/cluster's client ignores an interrupt it could not store, and the turn would wait for ever for
          // the acknowledgement its caller will never send: one the store refuses is stored as soon as it can be,
          // for as long as this node runs, without holding up the caller that left (the runner reads it at its next
          // poll)
          return Effect.catchTag(save, "PersistenceError", () =>
            retried(id, save, INTERRUPT_RETRY).pipe(
              Effect.tapError((error) =>
                Effect.logWarning(`An interrupt of request ${String(envelope.requestId)} could not be stored`, error)
              ),
              Effect.ignore,
              Effect.forkIn(scope),
              Effect.asVoid
            ))
        }
      }
    }

    const repliesFor: MessageStorage.MessageStorage["Type"]["repliesFor"] = (requests) =>
      Effect.gen(function*() {
        const byId = new Map(Array.from(requests, (request) => [String(request.envelope.requestId), request]))
        if (byId.size === 0) return []
        const rows = yield* sql<ReplyRow>`
          SELECT id, kind, request_id, payload, sequence
          FROM ${replies}
          WHERE request_id IN (${sql.literal(Array.from(byId.keys()).join(","))})
          AND (kind = ${WITH_EXIT} OR (kind IS NULL AND acked = ${unacked}))
          ORDER BY rowid ASC
        `.unprepared.pipe(Effect.provideService(SqlClient.SafeIntegers, true), PersistenceError.refail)
        const out: Array<Reply.Reply<Rpc.Any>> = []
        // as the package does: a reply that does not decode ends its request with a defect, and the rest of that
        // request's replies are skipped
        const broken = new Set<string>()
        for (const row of rows) {
          const encoded = fromRow(row)
          const request = byId.get(encoded.requestId)
          if (request === undefined || broken.has(encoded.requestId)) continue
          const decoded = yield* Schema.decode(Reply.Reply(request.rpc))(encoded).pipe(
            Effect.locally(FiberRef.currentContext, request.context),
            Effect.either
          )
          if (decoded._tag === "Right") {
            out.push(decoded.right)
          } else {
            broken.add(encoded.requestId)
            out.push(
              new Reply.WithExit({
                id: snowflakes.unsafeNext(),
                requestId: Snowflake.Snowflake(encoded.requestId),
                exit: Exit.die(decoded.left)
              })
            )
          }
        }
        return out
      })

    const saveReply = fencedSaveReply(storage, sql, replies, fences)

    const holdsResult = (payload: string) =>
      Effect.try(() => {
        const values: unknown = JSON.parse(payload)
        return Array.isArray(values) &&
          values.some((m: unknown) => Predicate.hasProperty(m, "type") && m.type === "result")
      }).pipe(Effect.orElseSucceed(() => false))
    const replyLog = Fences.ReplyLog.of({
      replied: (requestId) =>
        sql<{ readonly kind: string | number | bigint | null; readonly payload: string }>`
          SELECT kind, payload FROM ${replies} WHERE request_id = ${requestId}`.pipe(
          Effect.flatMap((rows): Effect.Effect<Fences.Replied> =>
            rows.some((r) => r.kind !== null && Number(r.kind) === WITH_EXIT)
              ? Effect.succeed("final")
              : Effect.map(
                Effect.exists(rows, (r) => holdsResult(r.payload)),
                (result) => result ? "result" : rows.length > 0 ? "chunks" : "none"
              )
          ),
          Effect.orElseSucceed((): Fences.Replied => "none")
        )
    })

    // a request read from storage is answered through the fenced `saveReply` (the package's own answers through its
    // inner storage, whose reply handlers are not the ones callers register)
    let answer: MessageStorage.MessageStorage["Type"]["saveReply"] = saveReply
    const answeredHere = <R extends Rpc.Any>(messages: Array<Message.Incoming<R>>): Array<Message.Incoming<R>> =>
      messages.map((message) =>
        message._tag === "IncomingRequest"
          ? new Message.IncomingRequest({
            envelope: message.envelope,
            lastSentReply: message.lastSentReply,
            respond: (reply) => answer(reply)
          })
          : message
      )
    // whether a read of the unprocessed messages failed since the last reset of their read marks: the package's read
    // marks the messages it returns as read (`last_read`, not read again for 10 minutes) in the statement that returns
    // them, so a read whose connection died after that statement committed lost its messages for 10 minutes (an
    // acknowledgement lost so holds its turn, and its session, as long); the next read resets the marks of the
    // runner's shards first, as the package does when it acquires a shard (a message read twice is skipped by the
    // runner: a request it is processing, an acknowledgement of a chunk that is not its request's last)
    const marksUnsure = yield* Ref.make(false)
    const leases = yield* Effect.serviceOption(ShardLeases)
    const {
      registerReplyHandler: _register,
      unregisterReplyHandler: _unregister,
      unregisterShardReplyHandlers: _unregisterShard,
      ...rest
    } = storage
    const outer = yield* MessageStorage.make({
      ...rest,
      saveEnvelope,
      repliesFor,
      saveReply,
      unprocessedMessages: (shardIds) =>
        Effect.gen(function*() {
          if (yield* Ref.get(marksUnsure)) {
            yield* storage.resetShards(shardIds)
            yield* Ref.set(marksUnsure, false)
          }
          // only the shards whose lease the database confirmed: a runner back from a pause still lists the shards it
          // held until its next lock refresh, and a read marks the messages it returns as read for 10 minutes, so the
          // runner that took them over would not read them (a turn sent to it then waited until its caller gave up)
          const leased = Option.isSome(leases)
            ? yield* Effect.filter(Array.from(shardIds), (shard) => leases.value.held(shard))
            : Array.from(shardIds)
          if (leased.length === 0) return []
          return answeredHere(
            yield* Effect.onError(storage.unprocessedMessages(leased), () => Ref.set(marksUnsure, true))
          )
        }),
      unprocessedMessagesById: (ids) => Effect.map(storage.unprocessedMessagesById(ids), answeredHere)
    })
    answer = outer.saveReply
    return { storage: outer, replyLog }
  })

/**
 * The cluster's message storage on the `SqlClient` (tables prefixed with `prefix`).
 *
 * @internal
 */
export const layerMessageStorage = (
  prefix = "cluster"
): Layer.Layer<
  MessageStorage.MessageStorage | Fences.ReplyFences | Fences.ReplyLog,
  never,
  SqlClient.SqlClient | ShardingConfig.ShardingConfig
> =>
  Layer.scopedContext(Effect.gen(function*() {
    const fences = Fences.make()
    const { replyLog, storage } = yield* make(prefix, fences)
    return Context.make(MessageStorage.MessageStorage, storage).pipe(
      Context.add(Fences.ReplyFences, fences),
      Context.add(Fences.ReplyLog, replyLog)
    )
  })).pipe(Layer.provide(Snowflake.layerGenerator))
