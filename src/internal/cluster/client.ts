/**
 * The client side of the agent cluster (`AgentCluster.session`), and the layers of a cluster on one SQL database.
 *
 * @internal
 */
import type { AlreadyProcessingMessage, MailboxFull, PersistenceError } from "@effect/cluster/ClusterError"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as AgentCluster from "../../AgentCluster.js"
import { ClusterError } from "../../ClusterError.js"
import type { Transport } from "../../Transport.js"
import * as TranscriptSql from "../transcript/sql.js"
import { Mirror, TranscriptStore } from "../transcript/store.js"
import * as Directory from "./directory.js"
import * as AgentSessionEntity from "./entity.js"
import { StoreInClusterDatabase } from "./fence.js"
import * as Lease from "./lease.js"
import * as Socket from "./socket.js"
import { layerMessageStorage } from "./storage.js"

type Failure = MailboxFull | AlreadyProcessingMessage | PersistenceError

const mapFailure = <A, E, R>(
  effect: Effect.Effect<A, E | Failure, R>
): Effect.Effect<A, Exclude<E, Failure> | ClusterError, R> =>
  Effect.catchIf(
    effect,
    (e): e is Failure =>
      typeof e === "object" && e !== null && "_tag" in e &&
      (e._tag === "MailboxFull" || e._tag === "AlreadyProcessingMessage" || e._tag === "PersistenceError"),
    (e) => Effect.fail(new ClusterError({ reason: e._tag, cause: e }))
  ) as Effect.Effect<A, Exclude<E, Failure> | ClusterError, R>

/** @internal */
export const make: Effect.Effect<AgentCluster.Service, never, Sharding.Sharding> = Effect.gen(function*() {
  const client = yield* AgentSessionEntity.AgentSession.client
  const session = (id: string, options: AgentCluster.SessionOptions = {}) =>
    Effect.gen(function*() {
      const entity = client(id)
      const info = mapFailure(entity.Info())
      const handle: AgentCluster.ClusterSession = {
        id,
        turn: (prompt, turnOptions) =>
          Stream.suspend(() =>
            entity.Turn({ turnId: turnOptions?.turnId ?? crypto.randomUUID(), prompt }).pipe(
              Stream.catchAll((e) => Stream.fromEffect(mapFailure(Effect.fail(e))))
            )
          ),
        send: (prompt, turnOptions) =>
          mapFailure(
            Effect.suspend(() =>
              entity.Send({ turnId: turnOptions?.turnId ?? crypto.randomUUID(), prompt }, { discard: true })
            )
          ),
        interrupt: mapFailure(entity.Interrupt()),
        setModel: (model) => mapFailure(entity.SetModel(model === undefined ? {} : { model })),
        setPermissionMode: (mode) => mapFailure(entity.SetPermissionMode({ mode })),
        setMaxThinkingTokens: (maxThinkingTokens, display) =>
          mapFailure(
            entity.SetMaxThinkingTokens(display === undefined ? { maxThinkingTokens } : { maxThinkingTokens, display })
          ),
        close: mapFailure(entity.Close()),
        endInput: mapFailure(entity.Close()),
        sessionId: Effect.map(info, (i) => i.sessionId),
        state: Effect.map(info, (i) => i.state),
        origin: Effect.map(info, ({ origin }) => ({
          kind: origin.kind,
          requested: origin.requested,
          sessionId: origin.sessionId,
          forked: origin.forked
        })),
        initializationResult: mapFailure(entity.Initialization()),
        mcpServerStatus: mapFailure(entity.McpStatus()),
        getContextUsage: (usage) =>
          mapFailure(entity.ContextUsage(usage?.detail === undefined ? {} : { detail: usage.detail })),
        stopTask: (taskId) => mapFailure(entity.StopTask({ taskId })),
        request: (subtype, payload = {}, requestOptions) =>
          mapFailure(entity.Request({
            subtype,
            payload,
            ...(requestOptions?.timeout !== undefined
              ? { timeoutMillis: Duration.toMillis(requestOptions.timeout) }
              : {})
          }))
      }
      if (options.model !== undefined) yield* handle.setModel(options.model)
      if (options.permissionMode !== undefined) yield* handle.setPermissionMode(options.permissionMode)
      if (options.maxThinkingTokens !== undefined) yield* handle.setMaxThinkingTokens(options.maxThinkingTokens)
      return handle
    })
  return { session }
})

/**
 * The transcript store of a runner's sessions: the one provided to the runner's layer, else the SQL store on the
 * cluster's own database. A database the store cannot be created in is a defect of the runner, as for the cluster's
 * own tables.
 *
 * @internal
 */
export const layerTranscripts = (
  options: AgentCluster.RunnerOptions
): Layer.Layer<TranscriptStore | Mirror | StoreInClusterDatabase, never, SqlClient.SqlClient> =>
  Layer.merge(
    Layer.effectContext(
      Effect.flatMap(
        Effect.serviceOption(TranscriptStore),
        Option.match({
          onSome: (store) =>
            Effect.succeed(Context.make(TranscriptStore, store).pipe(Context.add(StoreInClusterDatabase, false))),
          // runners starting together race to create the table (see `createTable`)
          onNone: () =>
            TranscriptSql.make().pipe(
              Directory.createTable,
              Effect.orDie,
              Effect.map((store) =>
                Context.make(TranscriptStore, store).pipe(Context.add(StoreInClusterDatabase, true))
              )
            )
        })
      )
    ),
    Layer.effect(Mirror, Effect.map(Mirror, (settings) => ({ ...settings, flush: options.transcriptFlush ?? "eager" })))
  )

/** @internal */
export const layerRunner = (options: AgentCluster.RunnerOptions = {}) =>
  AgentSessionEntity.layer({ options: options.options, maxIdleTime: options.maxIdleTime }).pipe(
    Layer.provide(Directory.layerSql(options.prefix)),
    Layer.provide(layerTranscripts(options))
  )

/** @internal */
export const layerSqlStorage = (options: AgentCluster.RunnerOptions = {}) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(layerMessageStorage(options.prefix)),
    Layer.provideMerge(Layer.orDie(Lease.layerSql(options.prefix ?? "cluster"))),
    Layer.provide(RunnerHealth.layerNoop),
    Layer.provide(ShardingConfig.layer(shardingDefaults(options.shardingConfig)))
  )

/**
 * The cluster's settings over @effect/cluster's defaults: shard locks are leases in the database's lock table on
 * PostgreSQL too (not session advisory locks), so that a runner paused or cut off behind a connection PostgreSQL
 * still holds open loses its shards once its lease expires, as on SQLite. Given settings win.
 */
const shardingDefaults = (
  settings: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
): Partial<ShardingConfig.ShardingConfig["Type"]> => ({ shardLockDisableAdvisory: true, ...settings })

/** The sharding config of a socket runner: its address, the caller's settings over the defaults. */
const socketConfig = (options: AgentCluster.RunnerOptions & Partial<AgentCluster.SocketOptions>) =>
  ShardingConfig.layer({
    ...shardingDefaults(options.shardingConfig),
    ...(options.address !== undefined
      ? { runnerAddress: Option.some(RunnerAddress.make(options.address.host, options.address.port)) }
      : {}),
    ...(options.listenAddress !== undefined
      ? { runnerListenAddress: Option.some(RunnerAddress.make(options.listenAddress.host, options.listenAddress.port)) }
      : {})
  })

/**
 * A runner pinging the others: one that does not answer within a shard lease's length (10 s at most), three times in
 * a row, is unhealthy and its shards move. @effect/cluster's `RunnerHealth.layerPing` waits 10 s six times, so a paused
 * runner (SIGSTOP, a VM migration), whose connections stay open, kept its shards for over a minute after its leases
 * lapsed: its sessions answered nothing meanwhile.
 */
const layerRunnerHealth: Layer.Layer<
  RunnerHealth.RunnerHealth,
  never,
  Runners.Runners | ShardingConfig.ShardingConfig
> = Layer.effect(
  RunnerHealth.RunnerHealth,
  Effect.gen(function*() {
    const runners = yield* Runners.Runners
    const config = yield* ShardingConfig.ShardingConfig
    const wait = Duration.min(Duration.decode(config.shardLockExpiration), Duration.seconds(10))
    return RunnerHealth.RunnerHealth.of({
      isAlive: (address) =>
        runners.ping(address).pipe(
          Effect.timeout(wait),
          Effect.retry({ times: 2, schedule: Schedule.spaced("500 millis") }),
          Effect.isSuccess
        )
    })
  })
)

/**
 * Sharding over sockets, its storage on the `SqlClient`: a runner listens on its address and pings the others (an
 * unreachable runner is marked unhealthy and its shards move); a client-only node sends without listening.
 *
 * @internal
 */
export const layerSocketStorage = (
  options: AgentCluster.RunnerOptions & Partial<AgentCluster.SocketOptions>,
  clientOnly: boolean
) => {
  const prefix = options.prefix ?? "cluster"
  const runners = clientOnly
    ? Layer.provide(SocketRunner.layerClientOnly, Socket.layerClientProtocol)
    : Layer.provide(SocketRunner.layer, [
      NodeClusterSocket.layerSocketServer,
      Socket.layerClientProtocol,
      layerRunnerHealth.pipe(
        Layer.provide(Runners.layerRpc),
        Layer.provide(Socket.layerClientProtocol)
      )
    ])
  return runners.pipe(
    Layer.provideMerge(layerMessageStorage(prefix)),
    Layer.provideMerge(Layer.orDie(Lease.layerSql(prefix))),
    Layer.provide(socketConfig(options)),
    Layer.provide(RpcSerialization.layerMsgPack),
    Layer.orDie
  )
}

/**
 * A socket runner with its entity, on the `SqlClient` (the client is added by the public module).
 *
 * @internal
 */
export const layerSocket = (
  options: AgentCluster.SocketOptions
): Layer.Layer<Sharding.Sharding, never, Transport | SqlClient.SqlClient> =>
  Layer.provideMerge(layerRunner(options), layerSocketStorage(options, false))

/**
 * A node that only sends to the cluster's runners (no entity, no listener), on the `SqlClient`.
 *
 * @internal
 */
export const layerSocketClient = (
  options: AgentCluster.ClientOptions
): Layer.Layer<Sharding.Sharding, never, SqlClient.SqlClient> => layerSocketStorage(options, true)

/** What a runner's entities need from the runner. @internal */
export type RunnerContext = Sharding.Sharding | Transport | SqlClient.SqlClient

/**
 * The runner, its storage and its entity on the `SqlClient` (the client is added by the public module).
 *
 * @internal
 */
export const layerSql = (
  options: AgentCluster.RunnerOptions
): Layer.Layer<Sharding.Sharding, never, Transport | SqlClient.SqlClient> =>
  Layer.provideMerge(layerRunner(options), layerSqlStorage(options)).pipe(Layer.orDie)

/**
 * `layerSql` on one SQLite file. The driver is loaded when the layer is built, so that the entry point loads without
 * `@effect/sql-sqlite-node` installed.
 *
 * @internal
 */
export const layerSqlite = (
  options: AgentCluster.SqliteOptions
): Layer.Layer<Sharding.Sharding, never, Transport> =>
  Layer.provide(
    layerSql(options),
    Layer.unwrapEffect(
      Effect.promise(() => import("@effect/sql-sqlite-node/SqliteClient")).pipe(
        Effect.map((SqliteClient) => Layer.orDie(SqliteClient.layer({ filename: options.filename })))
      )
    )
  )
