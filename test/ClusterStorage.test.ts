// The caller's control envelopes (an acknowledgement of a chunk, an interrupt) in the cluster's message storage when
// the database refuses writes for a while (restarting, its disk full): lost, a turn waits for ever for the
// acknowledgement of its last chunk (docs/GUARANTEES.md, "The cluster under Jepsen-style faults").
import * as EntityAddress from "@effect/cluster/EntityAddress"
import * as EntityId from "@effect/cluster/EntityId"
import * as EntityType from "@effect/cluster/EntityType"
import * as Envelope from "@effect/cluster/Envelope"
import * as Message from "@effect/cluster/Message"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Reply from "@effect/cluster/Reply"
import * as ShardId from "@effect/cluster/ShardId"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ProcessExited } from "../src/AgentError.js"
import type { SdkMessage } from "../src/Message.js"
import { Turn } from "../src/internal/cluster/entity.js"
import { Fenced } from "../src/internal/cluster/directory.js"
import { type Fence, type FenceCheck, ReplyFences, ReplyLog } from "../src/internal/cluster/fence.js"
import { layerMessageStorage } from "../src/internal/cluster/storage.js"

const address = EntityAddress.make({
  shardId: ShardId.make("default", 1),
  entityType: EntityType.EntityType.make("effect-claude-agent/AgentSession"),
  entityId: EntityId.make("s1")
})

/** The message storage on a scratch SQLite file, and its SQL client. */
const storageLayer = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-cluster-storage-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(
    Effect.map((dir) =>
      layerMessageStorage("t").pipe(
        Layer.provideMerge(Layer.orDie(SqliteClient.layer({ filename: path.join(dir, "cluster.db") }))),
        Layer.provide(ShardingConfig.layer())
      )
    )
  )
)

/** Whether the envelope `id` is in the messages table. */
const stored = (id: bigint) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(
        sql<{ readonly id: number }>`SELECT id FROM t_messages WHERE id = ${String(id)}`,
        (rows) => rows.length
      )
  )

/** A turn request's final reply, as the entity's RPC server hands it to the storage. */
const finalReply = (requestId: bigint, id: number, exit: Reply.WithExit<typeof Turn>["exit"]) =>
  new Reply.ReplyWithContext({
    reply: new Reply.WithExit<typeof Turn>({
      id: Snowflake.Snowflake(BigInt(id)),
      requestId: Snowflake.Snowflake(requestId),
      exit
    }),
    rpc: Turn,
    context: Context.empty()
  })

/** A chunk of a turn request's messages. */
const chunkReply = (
  requestId: bigint,
  id: number,
  values: Reply.Chunk<typeof Turn>["values"],
  sequence = 0
) =>
  new Reply.ReplyWithContext({
    reply: new Reply.Chunk<typeof Turn>({
      id: Snowflake.Snowflake(BigInt(id)),
      requestId: Snowflake.Snowflake(requestId),
      sequence,
      values
    }),
    rpc: Turn,
    context: Context.empty()
  })

/** What the entity answers for a turn whose prompt reached a CLI that is gone. */
const cutOffTurn: Reply.Chunk<typeof Turn>["values"] = [{
  type: "session_restarted",
  attempt: 1,
  exit: { code: null, signal: null },
  stderrTail: "",
  session_id: "s",
  interruptedTurn: true
}]

describe("the cluster's message storage while the database refuses writes", () => {
  it.scopedLive(
    "an acknowledgement waits until it is stored; an interrupt returns at once and is stored later",
    () =>
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        const sql = yield* SqlClient.SqlClient
        const requestId = Snowflake.Snowflake(BigInt(1000))
        // every write fails (SQLITE_READONLY) until it is turned off again
        yield* sql`PRAGMA query_only = ON`
        const ack = yield* storage.saveEnvelope(
          new Message.OutgoingEnvelope({
            envelope: new Envelope.AckChunk({
              id: Snowflake.Snowflake(BigInt(1001)),
              address,
              requestId,
              replyId: Snowflake.Snowflake(BigInt(999))
            }),
            rpc: Turn
          })
        ).pipe(Effect.fork)
        yield* storage.saveEnvelope(
          new Message.OutgoingEnvelope({
            envelope: new Envelope.Interrupt({ id: Snowflake.Snowflake(BigInt(1002)), address, requestId }),
            rpc: Turn
          })
        )
        yield* Effect.sleep("600 millis")
        expect(Option.isNone(yield* Fiber.poll(ack))).toBe(true)
        expect(yield* stored(BigInt(1001))).toBe(0)
        yield* sql`PRAGMA query_only = OFF`
        yield* Fiber.join(ack)
        expect(yield* stored(BigInt(1001))).toBe(1)
        // the interrupt's next attempt (2 s apart at most) stores it
        yield* stored(BigInt(1002)).pipe(
          Effect.repeat({ until: (n) => n === 1, schedule: Schedule.spaced("100 millis"), times: 50 })
        )
        expect(yield* stored(BigInt(1002))).toBe(1)
      }).pipe(Effect.provide(storageLayer)),
    20_000
  )

  it.scopedLive(
    "a reply waits until it is stored, past @effect/cluster's 800 ms of attempts, and is stored once",
    () =>
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        const sql = yield* SqlClient.SqlClient
        const requestId = Snowflake.Snowflake(BigInt(2000))
        const reply = (id: number) => finalReply(requestId, id, Exit.void)
        const replies = Effect.map(
          sql<{ readonly id: number }>`SELECT id FROM t_replies WHERE request_id = ${String(requestId)}`,
          (rows) => rows.length
        )
        yield* sql`PRAGMA query_only = ON`
        const saving = yield* Effect.fork(storage.saveReply(reply(2001)))
        yield* Effect.sleep("1200 millis")
        expect(Option.isNone(yield* Fiber.poll(saving))).toBe(true)
        yield* sql`PRAGMA query_only = OFF`
        yield* Fiber.join(saving)
        expect(yield* replies).toBe(1)
        // the same final reply again (@effect/cluster tries again under a new id): stored already, not twice
        yield* storage.saveReply(reply(2002))
        expect(yield* replies).toBe(1)
      }).pipe(Effect.provide(storageLayer)),
    20_000
  )

  it.scopedLive(
    "a fenced reply whose transaction's end the database did not answer (@effect/sql: a defect) is tried again, stored once",
    () =>
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        const fences = yield* ReplyFences
        const sql = yield* SqlClient.SqlClient
        const requestId = Snowflake.Snowflake(BigInt(3000))
        // the first save's write is done and its COMMIT's answer lost (the connection died): @effect/sql dies with the
        // SqlError; later saves go through
        const attempts = yield* Ref.make(0)
        const fence: Fence = (write) =>
          Effect.flatMap(Ref.getAndUpdate(attempts, (n) => n + 1), (n) =>
            n === 0
              ? Effect.zipRight(
                write,
                Effect.die(new SqlError({ cause: new Error("Connection terminated"), message: "COMMIT" }))
              )
              : write)
        fences.register(String(requestId), fence)
        yield* storage.saveReply(finalReply(requestId, 3001, Exit.void))
        expect(yield* Ref.get(attempts)).toBe(1)
        const rows = yield* sql<{ readonly id: number }>`SELECT id FROM t_replies WHERE request_id = ${
          String(requestId)
        }`
        expect(rows.length).toBe(1)
      }).pipe(Effect.provide(storageLayer)),
    20_000
  )

  it.scopedLive(
    "a reply the database refused until its lease lapsed is stored once it can be, unless a later incarnation claimed the session; an interruption needs the lease",
    () =>
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        const fences = yield* ReplyFences
        const sql = yield* SqlClient.SqlClient
        // the incarnation's lease (held until `lapse`), and whether a later incarnation claimed the session
        const held = yield* Ref.make(true)
        const claimed = yield* Ref.make(false)
        const fence: Fence = <A, E, R>(write: Effect.Effect<A, E, R>, check: FenceCheck = "lease") =>
          Effect.flatMap(
            Effect.zip(Ref.get(held), Ref.get(claimed)),
            ([held, claimed]): Effect.Effect<A, E | Fenced, R> =>
              claimed || (check === "lease" && !held) ? Effect.fail(new Fenced({ entityId: "s1", epoch: 1 })) : write
          )
        const chunk = (requestId: bigint, id: number) => chunkReply(requestId, id, cutOffTurn)
        const replies = (requestId: bigint) =>
          Effect.map(
            sql<{ readonly id: number }>`SELECT id FROM t_replies WHERE request_id = ${String(requestId)}`,
            (rows) => rows.length
          )
        // a chunk the database refuses (locked, restarting) while the lease lapses: stored once the database is back
        fences.register("5000", fence)
        yield* sql`PRAGMA query_only = ON`
        const saving = yield* Effect.fork(storage.saveReply(chunk(BigInt(5000), 5001)))
        yield* Effect.sleep("300 millis")
        yield* Ref.set(held, false)
        yield* Effect.sleep("300 millis")
        yield* sql`PRAGMA query_only = OFF`
        expect(Exit.isSuccess(yield* Fiber.await(saving))).toBe(true)
        expect(yield* replies(BigInt(5000))).toBe(1)
        // a turn's end (a final success) with the lease lapsed: stored (its chunks were made while the lease was held)
        yield* storage.saveReply(finalReply(BigInt(5000), 5002, Exit.void))
        expect(yield* replies(BigInt(5000))).toBe(2)
        // an interruption with the lease lapsed is refused (the request is the session's next owner's to answer)
        fences.register("6000", fence)
        const interrupted = storage.saveReply(finalReply(BigInt(6000), 6001, Exit.interrupt(FiberId.none)))
        expect(Exit.isInterrupted(yield* Effect.exit(interrupted))).toBe(true)
        // a chunk the handler checked before the lease lapsed, and a typed failure (what a request ends with once every
        // incarnation it was tried on lost the session): stored
        fences.register("8000", fence)
        yield* storage.saveReply(chunk(BigInt(8000), 8001))
        yield* storage.saveReply(
          finalReply(
            BigInt(8000),
            8002,
            Exit.fail(new ProcessExited({ code: null, signal: "SIGKILL", stderrTail: "" }))
          )
        )
        expect(yield* replies(BigInt(8000))).toBe(2)
        // a chunk the database refused, the session claimed meanwhile by a later incarnation: refused
        yield* Ref.set(held, true)
        fences.register("7000", fence)
        yield* sql`PRAGMA query_only = ON`
        const late = yield* Effect.fork(storage.saveReply(chunk(BigInt(7000), 7001)))
        yield* Effect.sleep("300 millis")
        yield* Ref.set(claimed, true)
        yield* sql`PRAGMA query_only = OFF`
        expect(Exit.isInterrupted(yield* Fiber.await(late))).toBe(true)
        expect(yield* replies(BigInt(6000))).toBe(0)
        expect(yield* replies(BigInt(7000))).toBe(0)
      }).pipe(Effect.provide(storageLayer)),
    20_000
  )

  it.scopedLive(
    "tells what the store holds of a request's replies: none, chunks, the turn's result, its final reply",
    () =>
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        const log = yield* ReplyLog
        const chunk = (requestId: number, id: number, sequence: number, type: "assistant" | "result") =>
          storage.saveReply(chunkReply(BigInt(requestId), id, [{ type, session_id: "s" } as SdkMessage], sequence))
        expect(yield* log.replied("9000")).toBe("none")
        yield* chunk(9000, 9001, 0, "assistant")
        expect(yield* log.replied("9000")).toBe("chunks")
        yield* chunk(9000, 9002, 1, "result")
        expect(yield* log.replied("9000")).toBe("result")
        yield* storage.saveReply(finalReply(BigInt(9000), 9003, Exit.void))
        expect(yield* log.replied("9000")).toBe("final")
      }).pipe(Effect.provide(storageLayer)),
    20_000
  )

  it.scopedLive(
    "a reply its fence refuses ends the save interrupted, not failed (@effect/cluster restarts an entity whose reply failed)",
    () =>
      Effect.gen(function*() {
        const storage = yield* MessageStorage.MessageStorage
        const fences = yield* ReplyFences
        const requestId = Snowflake.Snowflake(BigInt(4000))
        const fence: Fence = () => Effect.fail(new Fenced({ entityId: "s1", epoch: 1 }))
        fences.register(String(requestId), fence)
        const chunk = yield* Effect.exit(storage.saveReply(chunkReply(requestId, 4001, cutOffTurn)))
        expect(Exit.isInterrupted(chunk)).toBe(true)
        // and so does a final reply (its RPC server saves one for an interrupt of a request it no longer runs, where a
        // failure is a defect too)
        const final = (id: number, exit: Exit.Exit<void, never>) =>
          Effect.exit(storage.saveReply(finalReply(requestId, id, exit)))
        expect(Exit.isInterrupted(yield* final(4002, Exit.void))).toBe(true)
        // a defect the runner reports for the request fails (its storage read loop ignores a failure, not an interrupt)
        const defect = yield* final(4003, Exit.die("boom"))
        expect(Exit.isFailure(defect) && !Exit.isInterrupted(defect)).toBe(true)
      }).pipe(Effect.provide(storageLayer)),
    20_000
  )
})
