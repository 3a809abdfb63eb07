/**
 * The shard leases of a runner as its database last confirmed them. @effect/cluster's `Sharding` keeps the shards it
 * holds in memory and learns that it lost one only from its next lock refresh; a runner that was paused (a GC pause,
 * SIGSTOP, a VM migration) past the lease's length runs on that stale view until then. Here every lock call of the
 * runner's `RunnerStorage` is watched: a shard's lease is held from the moment a call that confirmed it was made,
 * for `shardLockExpiration` (the database cannot have given the shard to another runner before that), on the
 * monotonic clock. An entity acts for its session only while its shard's lease is held, and ends its CLI as soon as
 * it lapses.
 *
 * @internal
 */
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import type * as ShardId from "@effect/cluster/ShardId"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** @internal */
export interface Service {
  /** The lease's length (`shardLockExpiration`). */
  readonly length: Duration.Duration
  /** Whether the lease on `shard` was confirmed by the database less than the lease's length ago. */
  readonly held: (shard: ShardId.ShardId) => Effect.Effect<boolean>
  /**
   * Waits until the lease on `shard` is held. A runner that no longer holds the shard releases it and interrupts its
   * entities, this wait with them.
   */
  readonly awaitHeld: (shard: ShardId.ShardId) => Effect.Effect<void>
  /** Completes once the lease on `shard` is not held (at once when it is not). */
  readonly lapsed: (shard: ShardId.ShardId) => Effect.Effect<void>
}

/** @internal */
export class ShardLeases extends Context.Tag("effect-claude-agent/AgentCluster/ShardLeases")<
  ShardLeases,
  Service
>() {}

const POLL = Duration.millis(50)

/**
 * `RunnerStorage` with the leases it confirms recorded in `ShardLeases`.
 *
 * @internal
 */
export const watch = (
  storage: RunnerStorage.RunnerStorage["Type"],
  expiration: Duration.Duration
): Effect.Effect<Context.Context<RunnerStorage.RunnerStorage | ShardLeases>> =>
  Effect.sync(() => {
    const length = Duration.unsafeToNanos(expiration)
    /** Each shard held: when the last call that confirmed it was made (monotonic nanoseconds). */
    const confirmed = new Map<string, bigint>()
    const now = Clock.currentTimeNanos

    const record = (
      made: bigint,
      asked: ReadonlyArray<ShardId.ShardId>,
      got: ReadonlyArray<ShardId.ShardId>,
      forgetMissing: boolean
    ) => {
      const kept = new Set(got.map(String))
      for (const shard of kept) confirmed.set(shard, made)
      if (forgetMissing) { for (const shard of asked) if (!kept.has(String(shard))) confirmed.delete(String(shard)) }
    }

    const remaining = (shard: ShardId.ShardId) =>
      Effect.map(now, (at) => {
        const made = confirmed.get(String(shard))
        return made === undefined ? BigInt(0) : made + length - at
      })

    const held = (shard: ShardId.ShardId) => Effect.map(remaining(shard), (left) => left > BigInt(0))

    const leases = ShardLeases.of({
      length: expiration,
      held,
      awaitHeld: (shard) =>
        Effect.gen(function*() {
          while (!(yield* held(shard))) yield* Effect.sleep(POLL)
        }),
      lapsed: (shard) =>
        Effect.gen(function*() {
          while (true) {
            const left = yield* remaining(shard)
            if (left <= BigInt(0)) return
            // woken at the deadline, then checked again: a refresh made meanwhile moved it
            yield* Effect.sleep(Duration.nanos(left))
          }
        })
    })

    const watched = RunnerStorage.RunnerStorage.of({
      ...storage,
      acquire: (address, shardIds) => {
        const asked = Array.from(shardIds)
        return Effect.flatMap(now, (made) =>
          Effect.tap(storage.acquire(address, asked), (got) =>
            Effect.sync(() => record(made, asked, got, false))))
      },
      refresh: (address, shardIds) => {
        const asked = Array.from(shardIds)
        return Effect.flatMap(now, (made) =>
          Effect.tap(storage.refresh(address, asked), (got) =>
            Effect.sync(() =>
              record(made, asked, got, true)
            )))
      },
      release: (address, shardId) =>
        Effect.zipRight(
          Effect.sync(() =>
            confirmed.delete(String(shardId))
          ),
          storage.release(address, shardId)
        ),
      releaseAll: (address) => Effect.zipRight(Effect.sync(() => confirmed.clear()), storage.releaseAll(address))
    })
    return Context.make(RunnerStorage.RunnerStorage, watched).pipe(Context.add(ShardLeases, leases))
  })

/**
 * @effect/cluster's `SqlRunnerStorage` (tables prefixed with `prefix`), its leases watched.
 *
 * @internal
 */
export const layerSql = (
  prefix: string
): Layer.Layer<RunnerStorage.RunnerStorage | ShardLeases, SqlError, SqlClient | ShardingConfig.ShardingConfig> =>
  Layer.scopedContext(Effect.gen(function*() {
    const config = yield* ShardingConfig.ShardingConfig
    const storage = yield* SqlRunnerStorage.make({ prefix })
    return yield* watch(storage, Duration.decode(config.shardLockExpiration))
  }))
