/**
 * Fencing of the writes an `AgentSession` incarnation makes outside its own record: the replies of the turns it runs
 * (saved by @effect/cluster's message storage, on fibers that are not the entity's). The incarnation registers, for
 * each request it handles, the fence its writes go through (its lease held, its epoch still the record's); the
 * runner's message storage saves a reply of a registered request only through it.
 *
 * @internal
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Fenced } from "./directory.js"

/**
 * What a fence checks before a write: `"lease"`, that the incarnation owns its session (its shard's lease held, its
 * epoch still the record's); `"epoch"`, only that no later incarnation claimed the session (its epoch still the
 * record's), for a write of what the incarnation made while it owned the session, whose lease may have lapsed since
 * (a reply the database refused until then, a turn's end).
 *
 * @internal
 */
export type FenceCheck = "lease" | "epoch"

/**
 * A write made only while an incarnation owns its session (refused with `Fenced` otherwise; see {@link FenceCheck}),
 * in one transaction with the check when the write is to the cluster's database.
 *
 * @internal
 */
export type Fence = <A, E, R>(
  write: Effect.Effect<A, E, R>,
  check?: FenceCheck
) => Effect.Effect<A, E | Fenced | SqlError, R>

/** @internal */
export interface Service {
  /** The fence of the incarnation handling `requestId`, if one registered it. */
  readonly get: (requestId: string) => Fence | undefined
  /** `fence` handles `requestId` (replacing the fence of an earlier incarnation that did). */
  readonly register: (requestId: string, fence: Fence) => void
  /** `requestId` is answered: its replies need no fence any more (unless another incarnation registered it). */
  readonly done: (requestId: string, fence: Fence) => void
  /** The incarnation of `fence` has ended: none of the requests it handled keeps it. */
  readonly release: (fence: Fence) => void
}

/** @internal */
export class ReplyFences extends Context.Tag("effect-claude-agent/AgentCluster/ReplyFences")<ReplyFences, Service>() {}

/** @internal */
export const make = (): Service => {
  const fences = new Map<string, Fence>()
  return {
    get: (requestId) => fences.get(requestId),
    register: (requestId, fence) => {
      fences.set(requestId, fence)
    },
    done: (requestId, fence) => {
      if (fences.get(requestId) === fence) fences.delete(requestId)
    },
    release: (fence) => {
      for (const [requestId, f] of fences) if (f === fence) fences.delete(requestId)
    }
  }
}

/**
 * What the store holds of a request's replies: none, chunks, chunks the last of which holds a turn's `result` (the
 * turn ended, its end perhaps not written), or its final reply (it was answered).
 *
 * @internal
 */
export type Replied = "none" | "chunks" | "result" | "final"

/**
 * The replies the store holds for a request, whichever runner wrote them: a request delivered to a runner can have been
 * answered elsewhere meanwhile (the runner's storage read loop delivers a message it read before it was held up, by an
 * entity's build waiting for its shard's lease, while another runner held the shard and answered it). `"none"` too when
 * the store could not be read.
 *
 * @internal
 */
export class ReplyLog extends Context.Tag("effect-claude-agent/AgentCluster/ReplyLog")<
  ReplyLog,
  { readonly replied: (requestId: string) => Effect.Effect<Replied> }
>() {}

/**
 * Whether the runner's transcript store is the SQL one in the cluster's own database, so that an append and its
 * fence's check can be one transaction (another store is checked first, then written).
 *
 * @internal
 */
export class StoreInClusterDatabase extends Context.Reference<StoreInClusterDatabase>()(
  "effect-claude-agent/AgentCluster/StoreInClusterDatabase",
  { defaultValue: () => false }
) {}
