/**
 * The `AgentSession` entity: one Claude Code session per entity id, its CLI started in the entity's scope (so it is
 * reaped when the entity stops: idle, rebalanced, shut down) and resumed by the next incarnation.
 *
 * @internal
 */
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Entity from "@effect/cluster/Entity"
import * as Sharding from "@effect/cluster/Sharding"
import type * as Reply from "@effect/cluster/Reply"
import * as Rpc from "@effect/rpc/Rpc"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, InputClosed, ProcessExited, type SessionError } from "../../AgentError.js"
import type { Options, PermissionMode } from "../../AgentOptions.js"
import type { Session } from "../../ClaudeAgent.js"
import type { Transport } from "../../Transport.js"
import * as Message from "../../Message.js"
import { session as startSession } from "../session/session.js"
import * as Reaper from "../transport/reaper.js"
import { hasTranscript, MirrorWatch, projectKeyOf, projectsDirOf } from "../transcript/mirror.js"
import { Mirror, TranscriptStore, TranscriptStoreError } from "../transcript/store.js"
import type * as TranscriptStoreApi from "../../TranscriptStore.js"
import { Fenced, SessionDirectory, type SessionRecord } from "./directory.js"
import { type Fence, type Replied, ReplyFences, ReplyLog, StoreInClusterDatabase } from "./fence.js"
import { ShardLeases } from "./lease.js"

/** An SDK message as it crosses the cluster: validated where the CLI wrote it, carried as JSON. */
const SdkMessageWire = Schema.declare(
  (u: unknown): u is Message.SdkMessage => Predicate.isRecord(u) && typeof u["type"] === "string",
  { identifier: "SdkMessage" }
)

/** A prompt as it crosses the cluster; the session validates it as it does a local prompt. */
const PromptWire = Schema.Union(
  Schema.String,
  Schema.declare(
    (u: unknown): u is Message.UserMessage => Predicate.isRecord(u) && u["type"] === "user",
    { identifier: "UserMessage" }
  )
)

const PermissionModeWire = Schema.Literal("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto")

/** @internal */
export const Turn = Rpc.make("Turn", {
  payload: { turnId: Schema.String, prompt: PromptWire },
  success: SdkMessageWire,
  error: AgentError,
  stream: true,
  primaryKey: (payload) => payload.turnId
}).annotate(ClusterSchema.Persisted, true)

/** @internal */
export const Send = Rpc.make("Send", {
  payload: { turnId: Schema.String, prompt: PromptWire },
  error: AgentError,
  primaryKey: (payload) => payload.turnId
}).annotate(ClusterSchema.Persisted, true)

/** @internal */
export const Interrupt = Rpc.make("Interrupt", { success: Message.InterruptResponse, error: AgentError })

/** @internal */
export const SetModel = Rpc.make("SetModel", {
  payload: { model: Schema.optional(Schema.String) },
  error: AgentError
})

/** @internal */
export const SetPermissionMode = Rpc.make("SetPermissionMode", {
  payload: { mode: PermissionModeWire },
  success: Schema.Option(Schema.String),
  error: AgentError
})

/** @internal */
export const SetMaxThinkingTokens = Rpc.make("SetMaxThinkingTokens", {
  payload: {
    maxThinkingTokens: Schema.NullOr(Schema.Number),
    display: Schema.optional(Schema.Literal("summarized", "omitted", "highlights"))
  },
  error: AgentError
})

/** @internal */
export const Close = Rpc.make("Close", { error: AgentError })

/** @internal */
export const SessionInfo = Schema.Struct({
  sessionId: Schema.String,
  state: Schema.Literal("starting", "idle", "running", "requires_action", "exited"),
  origin: Schema.Struct({
    kind: Schema.Literal("new", "resume", "continue", "fork"),
    requested: Schema.optional(Schema.String),
    sessionId: Schema.optional(Schema.String),
    forked: Schema.Boolean
  })
})

/** @internal */
export const Info = Rpc.make("Info", { success: SessionInfo, error: AgentError })

/** @internal */
export const ContextUsage = Rpc.make("ContextUsage", {
  payload: { detail: Schema.optional(Schema.Literal("summary", "full")) },
  success: Message.ContextUsage,
  error: AgentError
})

/** @internal */
export const McpStatus = Rpc.make("McpStatus", { success: Schema.Array(Message.McpServerStatus), error: AgentError })

/** @internal */
export const Initialization = Rpc.make("Initialization", { success: Message.InitializeResponse, error: AgentError })

/** @internal */
export const StopTask = Rpc.make("StopTask", { payload: { taskId: Schema.String }, error: AgentError })

/** @internal */
export const Request = Rpc.make("Request", {
  payload: {
    subtype: Schema.String,
    payload: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    timeoutMillis: Schema.optional(Schema.Number)
  },
  success: Schema.Unknown,
  error: AgentError
})

/** @internal */
export const AgentSession = Entity.make("effect-claude-agent/AgentSession", [
  Turn,
  Send,
  Interrupt,
  SetModel,
  SetPermissionMode,
  SetMaxThinkingTokens,
  Close,
  Info,
  ContextUsage,
  McpStatus,
  Initialization,
  StopTask,
  Request
])

/** The options of an incarnation: the runner's, the settings changed through the session, and which session. */
const optionsOf = (base: Options, record: SessionRecord): Options => {
  const {
    continue: _continue,
    forkSession: _forkSession,
    resume: _resume,
    sessionId: _sessionId,
    resumeSessionAt: _resumeSessionAt,
    ...rest
  } = base
  return {
    ...rest,
    ...(record.model !== undefined ? { model: record.model } : {}),
    // checked against the literals when it was set
    ...(record.permissionMode !== undefined ? { permissionMode: record.permissionMode as PermissionMode } : {}),
    ...(record.maxThinkingTokens !== undefined && record.maxThinkingTokens !== null
      ? { maxThinkingTokens: record.maxThinkingTokens }
      : {}),
    ...(record.started ? { resume: record.sessionId } : { sessionId: record.sessionId })
  }
}

/** The origin of an incarnation whose CLI did not start: what it was asked to be. */
const originOf = (record: SessionRecord) =>
  record.started
    ? { kind: "resume" as const, requested: record.sessionId, sessionId: record.sessionId, forked: false }
    : { kind: "new" as const, sessionId: record.sessionId, forked: false }

/** What a turn cut off by the death of the runner that ran it ends with, as with `autoResume`. */
const cutOff = (record: SessionRecord): Message.SessionRestartedMessage => ({
  type: "session_restarted",
  attempt: 1,
  exit: { code: null, signal: null },
  stderrTail: "",
  session_id: record.sessionId,
  interruptedTurn: true
})

/**
 * What a turn delivered to an incarnation comes to, from the session's record, the last chunk its delivery says was
 * sent, and what the store holds of its replies (whichever runner wrote them): answered already (a request delivered
 * late, read before the runner was held up and answered by another runner meanwhile: never run again); ended already
 * (its caller has its `result`: the runner that ran it lost the session before it could write the turn's end); answered
 * as cut off (its prompt reached a CLI that is gone: never run twice, never end silently); or run.
 */
const deliveryOf = (
  record: SessionRecord,
  turnId: string,
  lastSentChunk: Option.Option<Reply.Chunk<typeof Turn>>,
  replied: Replied
): "answered already" | "ended already" | "answered as cut off" | "run" => {
  if (replied === "final") return "answered already"
  if (record.openTurn !== turnId && Option.isNone(lastSentChunk) && replied === "none") return "run"
  const resultSent = Option.exists(lastSentChunk, (chunk) => chunk.values.some((m) => m.type === "result"))
  return resultSent || replied === "result" ? "ended already" : "answered as cut off"
}

/** How long the rest of a turn its caller left may take to come, once interrupted. */
const SETTLE_TIMEOUT = "5 seconds"

/** Reads what is left of a turn its caller left, up to its `result` (bounded). */
const settle = (session: Session) =>
  session.messages.pipe(
    Stream.takeUntil((m) => m.type === "result"),
    Stream.runDrain,
    Effect.timeout(SETTLE_TIMEOUT),
    Effect.ignore
  )

/** How often a claim waiting for its shard's lease looks whether the runner still has the shard. */
const POLL = "50 millis"

/**
 * What an incarnation owns: its claim on the session's record, taken on a shard lease its database confirmed (a runner
 * back from a pause claims nothing), and the fence its writes go through. It loses the session when its lease lapses
 * or a write of it is refused (a later incarnation claimed the record); from then on it writes nothing (its fence
 * refuses) and `lost` is done.
 */
const own = (entityId: string) =>
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const runner = yield* Entity.CurrentRunnerAddress
    const directory = yield* SessionDirectory
    const leases = yield* Effect.serviceOption(ShardLeases)
    const sharding = yield* Effect.serviceOption(Sharding.Sharding)
    // a claim (each attempt of it) waits for the lease to be held, while the runner still has the shard: one it let go
    // (its entities are stopping) ends the wait as interrupted, which holds up neither the entity's stop nor the
    // request waiting here
    const leaseHeld = Option.match(leases, {
      onNone: () => Effect.void,
      onSome: (leases) => {
        const letGo = Effect.gen(function*() {
          while (Option.isNone(sharding) || sharding.value.hasShardId(address.shardId)) yield* Effect.sleep(POLL)
          return yield* Effect.interrupt
        })
        return Effect.raceFirst(leases.awaitHeld(address.shardId), letGo)
      }
    })
    const { epoch, record } = yield* directory.claim(entityId, `${runner.host}:${runner.port}`, leaseHeld)
    yield* Effect.logDebug(`AgentSession ${entityId} claimed epoch ${epoch}`)
    const lost = yield* Deferred.make<void>()
    const lose = Effect.flatMap(Deferred.succeed(lost, undefined), (first) =>
      first
        ? Effect.logWarning(`AgentSession ${entityId} (epoch ${epoch}) lost its session: its CLI is ended`)
        : Effect.void)
    if (Option.isSome(leases)) {
      yield* Effect.forkScoped(Effect.zipRight(leases.value.lapsed(address.shardId), lose))
    }
    const held = Option.isSome(leases) ? leases.value.held(address.shardId) : Effect.succeed(true)
    /** Completes once the session is not this incarnation's: lost, or its lease lapsed. */
    const notOwnedAny = Effect.raceFirst(
      Deferred.await(lost),
      Option.isSome(leases) ? leases.value.lapsed(address.shardId) : Effect.never
    )
    /** Refuses at once when the session is lost, or the lease is not held (which loses it). */
    const owned = Effect.gen(function*() {
      if (yield* Deferred.isDone(lost)) return yield* new Fenced({ entityId, epoch })
      if (!(yield* held)) {
        yield* lose
        return yield* new Fenced({ entityId, epoch })
      }
    })
    const losing = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.tapError(effect, (e) => Predicate.isTagged(e, "Fenced") ? lose : Effect.void)
    const fence: Fence = (write, check = "lease") =>
      losing(
        check === "lease"
          ? Effect.zipRight(owned, directory.fenced(entityId, epoch, write))
          : directory.fenced(entityId, epoch, write)
      )
    /** Checked first, then written: for a store outside the cluster's database. */
    const check = losing(Effect.zipRight(owned, directory.check(entityId, epoch)))
    /** Writes the record; a refused write loses the session. */
    const set = (next: SessionRecord) => losing(Effect.zipRight(owned, directory.set(entityId, epoch, next)))
    return {
      epoch,
      record,
      lost,
      lose,
      lapsed: notOwnedAny,
      owned: losing(owned),
      fence,
      check,
      set,
      refusal: new Fenced({ entityId, epoch })
    }
  })

/** What an incarnation owns (see {@link own}). */
type Ownership = Effect.Effect.Success<ReturnType<typeof own>>

/** The transcript store as an incarnation writes it: each append through its fence. */
const fencedStore = (
  store: TranscriptStoreApi.Service,
  ownership: Ownership,
  inDatabase: boolean
): TranscriptStoreApi.Service => ({
  ...store,
  append: (key, entries) =>
    (inDatabase
      ? ownership.fence(store.append(key, entries))
      : Effect.zipRight(ownership.check, store.append(key, entries))).pipe(
        Effect.catchTags({
          Fenced: (e) =>
            Effect.fail(
              new TranscriptStoreError({ reason: "BackendFailed", method: "append", ...key, description: e.message })
            ),
          SqlError: (e) =>
            Effect.fail(
              new TranscriptStoreError({ reason: "BackendFailed", method: "append", ...key, cause: e })
            )
        })
      )
})

/**
 * Closes `scope` whole, whatever interrupts the fiber closing it. A scope is marked closed as its close begins, so a
 * close cut off midway skips the finalizers left for good (a second close does nothing): the CLI's last ones remove a
 * local transcript the store has not, which the next CLI on this runner would otherwise resume with.
 */
const closeWhole = (scope: Scope.CloseableScope, exit: Exit.Exit<unknown, unknown>) =>
  Effect.uninterruptible(Scope.close(scope, exit))

/** The CLI of an incarnation, and the scope it lives in (closed when it is replaced or the session is lost). */
interface Cli {
  readonly session: Session
  readonly scope: Scope.CloseableScope
  /** Completes once every transcript entry the CLI has reported so far is in the store, or dropped. */
  readonly drained: Effect.Effect<void>
  /**
   * Done once the store refused an entry of the CLI's for good: the CLI's transcript holds what the store has not, so
   * it is ended and takes no further prompt; the next CLI resumes from the store.
   */
  readonly diverged: Deferred.Deferred<void>
}

/**
 * The CLI of an incarnation: started with it; started again (resuming the session) by the next request once it has
 * died (an idle timeout, a crash), as a local session with `autoResume` would; ended at once (SIGKILL) when the
 * incarnation loses the session, so that it runs no tool for a session another runner now holds.
 */
const cliOf = (
  base: Options,
  ownership: Ownership,
  cell: SynchronizedRef.SynchronizedRef<SessionRecord>
) =>
  Effect.gen(function*() {
    const entityScope = yield* Effect.scope
    // what a CLI started later (by a request) is started with: the entity's own context
    const context = yield* Effect.context<Transport>()
    const transcripts = yield* Effect.serviceOption(TranscriptStore)
    const settings = yield* Mirror
    const inDatabase = yield* StoreInClusterDatabase
    const store = Option.map(transcripts, (store) => fencedStore(store, ownership, inDatabase))
    const start = (stored: SessionRecord, forgotten: boolean) =>
      Effect.gen(function*() {
        // a first turn cut off before any of it reached the store (or the config dir), or whose entries the store
        // refused, left nothing to resume: the session starts anew under the same id
        const resumable = stored.started && (stored.openTurn !== null || forgotten) && Option.isSome(store)
          ? yield* hasTranscript(store.value, settings, base, stored.sessionId)
          : true
        const record = resumable ? stored : { ...stored, started: false }
        yield* SynchronizedRef.set(cell, record)
        const scope = yield* Scope.fork(entityScope, ExecutionStrategy.sequential)
        const notOwned = Effect.map(Effect.either(ownership.owned), Either.isLeft)
        const diverged = yield* Deferred.make<void>()
        const drained = yield* Ref.make<Effect.Effect<void>>(Effect.void)
        // completed once the scope has closed: what watches the CLI while it closes stops then
        const done = yield* Deferred.make<void>()
        const closed = Deferred.await(done)
        yield* Scope.addFinalizer(scope, Deferred.succeed(done, undefined))
        // last, once the CLI is gone: a CLI that ran on after the session was lost (a paused runner's), or whose
        // entries the store refused, has entries in its local transcript that the store has not; the store's copy is
        // loaded by the next CLI
        if (Option.isSome(store)) {
          const options = optionsOf(base, record)
          yield* Scope.addFinalizer(
            scope,
            Effect.whenEffect(
              Effect.sync(() => forgetLocal(options, record.sessionId)),
              Effect.zipWith(notOwned, Deferred.isDone(diverged), (lost, refused) => lost || refused)
            )
          )
        }
        const watch = MirrorWatch.of({
          dropped: Deferred.succeed(diverged, undefined),
          started: (effect) => Ref.set(drained, effect)
        })
        const started = yield* startSession(optionsOf(base, record)).pipe(
          Scope.extend(scope),
          (start) =>
            Option.isSome(store)
              ? start.pipe(
                Effect.provideService(TranscriptStore, store.value),
                Effect.provideService(MirrorWatch, watch)
              )
              : start,
          Effect.either
        )
        if (Either.isLeft(started)) {
          yield* closeWhole(scope, Exit.void)
        } else {
          // closed while the session is not this incarnation's (the runner learnt it lost the shard, or its lease
          // lapsed): no graceful end, whose waits (the turn settling, the last transcript entries) would let the CLI
          // run on; it is killed first, its tools reaped as the rest of the scope closes
          const pid = started.right.pid
          const kill = Effect.sync(() => Option.map(pid, killGroup))
          yield* Scope.addFinalizer(scope, Effect.whenEffect(kill, notOwned))
          // and killed the moment the session stops being this incarnation's, until its scope has closed: whatever the
          // entity is doing then (a runner that cannot reach its database lets its shards go with their leases still
          // running, and its entities' graceful stops wait for the CLI's last transcript entries)
          yield* Effect.forkDaemon(
            Effect.interruptible(Effect.raceFirst(Effect.zipRight(ownership.lapsed, kill), closed))
          )
          // and killed the moment the store refuses one of its entries for good, so that it runs no further turn on a
          // history the store has not
          yield* Effect.forkDaemon(
            Effect.interruptible(Effect.raceFirst(
              Effect.zipRight(
                Deferred.await(diverged),
                Effect.zipRight(
                  Effect.logWarning(
                    `AgentSession ${record.sessionId}: the transcript store refused entries of its CLI: the CLI is ` +
                      `ended, the next turn resumes from the store`
                  ),
                  kill
                )
              ),
              closed
            ))
          )
        }
        const drainedNow = Effect.flatten(Ref.get(drained))
        return Either.map(started, (session): Cli => ({ session, scope, drained: drainedNow, diverged }))
      })
    const first = yield* SynchronizedRef.get(cell)
    const current = yield* SynchronizedRef.make<Either.Either<Cli, SessionError>>(
      first.closed ? Either.left(new InputClosed({ reason: "SessionClosed" })) : yield* start(first, false)
    )
    // the session lost: the CLI and its process group at once, then the rest of its tools as its scope closes
    yield* Effect.forkScoped(
      Effect.zipRight(
        Deferred.await(ownership.lost),
        Effect.flatMap(SynchronizedRef.get(current), (cli) =>
          Either.isLeft(cli) ? Effect.void : Effect.zipRight(
            Effect.sync(() => Option.map(cli.right.session.pid, (pid) => killGroup(pid))),
            closeWhole(cli.right.scope, Exit.void)
          ))
      )
    )
    const liveCli: Effect.Effect<Cli, SessionError | Fenced> = Effect.gen(function*() {
      if (yield* Deferred.isDone(ownership.lost)) return yield* Effect.fail(ownership.refusal)
      const record = yield* SynchronizedRef.get(cell)
      if (record.closed) return yield* new InputClosed({ reason: "SessionClosed" })
      const cli = yield* SynchronizedRef.modifyEffect(current, (cli) =>
        Effect.gen(function*() {
          if (
            Either.isRight(cli) && !(yield* Deferred.isDone(cli.right.diverged)) &&
            (yield* cli.right.session.state) !== "exited"
          ) return [cli, cli] as const
          const forgotten = Either.isRight(cli) && (yield* Deferred.isDone(cli.right.diverged))
          if (Either.isRight(cli)) yield* closeWhole(cli.right.scope, Exit.void)
          const next = yield* Effect.provide(start(yield* SynchronizedRef.get(cell), forgotten), context)
          return [next, next] as const
        }))
      return yield* cli
    })
    const live = Effect.map(liveCli, (cli) => cli.session)
    return { first, current, live, liveCli }
  })

/** Removes a session's local transcript (the main file and its subagents' directory) from the CLI's config dir. */
const forgetLocal = (options: Options, sessionId: string) => {
  const projectsDir = projectsDirOf(options)
  if (projectsDir === undefined) return
  const projectDir = path.join(projectsDir, projectKeyOf(options.cwd ?? process.cwd()))
  fs.rmSync(path.join(projectDir, `${sessionId}.jsonl`), { force: true })
  fs.rmSync(path.join(projectDir, sessionId), { recursive: true, force: true })
}

/**
 * SIGKILLs a CLI's process group (the CLI leads its own), or the CLI alone when that fails, and its descendants
 * outside the group (the Bash tool runs in a session of its own): at once, not when the session's scope has closed
 * and its graceful waits are over.
 */
const killGroup = (pid: number) => {
  const tools = Reaper.supported ? Reaper.descendants(pid) : []
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }
  Reaper.send(tools, "SIGKILL")
}

/** What an incarnation of the entity is: its claim on the session, its record, its CLI, in a scope of its own. */
interface Incarnation {
  readonly ownership: Ownership
  readonly scope: Scope.CloseableScope
  readonly cell: SynchronizedRef.SynchronizedRef<SessionRecord>
  /** Writes the record (through the incarnation's fence). */
  readonly save: (f: (record: SessionRecord) => SessionRecord) => Effect.Effect<SessionRecord, Fenced>
  readonly first: SessionRecord
  readonly current: SynchronizedRef.SynchronizedRef<Either.Either<Cli, SessionError>>
  readonly live: Effect.Effect<Session, SessionError | Fenced>
  readonly liveCli: Effect.Effect<Cli, SessionError | Fenced>
  /** The CLI whose last turn has not given its result to its reader, if any. */
  readonly unanswered: Ref.Ref<Session | undefined>
}

/** How many incarnations a request is tried on before it ends with {@link gone}. */
const ATTEMPTS = 3

/**
 * What a request ends with when every incarnation it was tried on lost the session: the CLI of each was ended
 * (SIGKILL) as its loss was seen.
 */
const gone = () => new ProcessExited({ code: null, signal: "SIGKILL", stderrTail: "" })

/** Whether `cause` (not an interruption) is the loss of the session by `inc`, rather than an error to answer. */
const isLoss = (inc: Incarnation, cause: Cause.Cause<AgentError | Fenced>) =>
  Cause.isDie(cause) || Option.exists(Cause.failureOption(cause), (e) => e._tag === "Fenced")
    ? Effect.succeed(true)
    : Deferred.isDone(inc.ownership.lost)

/** The failure of a cause that is not a loss: its error, or its interruption. */
const unlessLost = <E extends AgentError>(cause: Cause.Cause<E | Fenced>): Cause.Cause<E | ProcessExited> =>
  Cause.map(cause, (e) => e._tag === "Fenced" ? gone() : e)

/** Ends `inc` after `what` (its CLI at once), so that the next request runs on a new incarnation. */
const abandon = (entityId: string, inc: Incarnation, what: unknown) =>
  Effect.zipRight(
    Effect.logWarning(`AgentSession ${entityId} (epoch ${inc.ownership.epoch}) ends: the session was lost`, what),
    inc.ownership.lose
  )

/**
 * What a request's failure on `inc` leads to: succeeds when the request is to run again on a new incarnation (`inc`
 * lost the session and attempts are `left`; `inc` is ended first), fails with what the request ends with otherwise.
 */
const again = <E extends AgentError>(
  entityId: string,
  inc: Incarnation,
  cause: Cause.Cause<E | Fenced>,
  left: number
): Effect.Effect<void, E | ProcessExited> =>
  Cause.isInterruptedOnly(cause)
    ? Effect.failCause(unlessLost(cause))
    : Effect.flatMap(isLoss(inc, cause), (loss) =>
      !loss
        ? Effect.failCause(unlessLost(cause))
        : Effect.zipRight(abandon(entityId, inc, cause), left > 1 ? Effect.void : Effect.fail(gone())))

/**
 * The handlers of one entity. Runs in the entity's scope: the CLIs it starts are the entity's, and so are the
 * Permissions / Hooks / MCP services of the runner's context.
 *
 * No defect leaves a handler: @effect/cluster 0.60.2 restarts an entity after a defect (`internal/entityManager.ts`,
 * `onDefect`), and a restart of an entity that stops meanwhile (its shard moved) leaves the entity's `ResourceRef`
 * latch closed, on which the runner's storage read loop then waits for ever (docs/GUARANTEES.md). The loss of the
 * session (a write fenced off, the lease lapsed, a write refused for good, any defect) ends that incarnation instead:
 * its CLI is ended, and the request (and every later one) runs on a new incarnation, which claims the session again
 * once the shard's lease is held (or waits until the entity stops, its shard gone). A turn whose prompt reached the
 * lost incarnation's CLI is answered by the new one with `session_restarted`, as @effect/cluster's restart did.
 */
const build = (base: Options) =>
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const entityScope = yield* Effect.scope
    const entityId = address.entityId
    // the stop's progress, for a runner that is slow to stop
    yield* Effect.addFinalizer(() => Effect.logDebug(`AgentSession ${entityId} stopped`))
    const replyFences = yield* Effect.serviceOption(ReplyFences)
    const replyLog = yield* Effect.serviceOption(ReplyLog)
    const context = yield* Effect.context<
      Transport | SessionDirectory | Entity.CurrentAddress | Entity.CurrentRunnerAddress
    >()

    const incarnate: Effect.Effect<Incarnation> = Effect.gen(function*() {
      const scope = yield* Scope.fork(entityScope, ExecutionStrategy.sequential)
      return yield* Effect.onError(
        Effect.gen(function*() {
          const ownership = yield* own(entityId)
          // the requests it handled stop using its fence as it ends, unless it lost the session: its fence, which
          // refuses every write from then on, keeps refusing their replies until another incarnation handles them (a
          // request cut off by the loss is answered by the session's owner, not from here)
          if (Option.isSome(replyFences)) {
            yield* Effect.addFinalizer(() =>
              Effect.unlessEffect(
                Effect.sync(() => replyFences.value.release(ownership.fence)),
                Deferred.isDone(ownership.lost)
              )
            )
          }
          const cell = yield* SynchronizedRef.make<SessionRecord>(
            Option.getOrElse(ownership.record, (): SessionRecord => ({
              sessionId: crypto.randomUUID(),
              started: false,
              openTurn: null,
              closed: false
            }))
          )
          const save = (f: (record: SessionRecord) => SessionRecord) =>
            SynchronizedRef.updateAndGetEffect(cell, (record) => {
              const next = f(record)
              return Effect.as(ownership.set(next), next)
            })
          const { current, first, live, liveCli } = yield* cliOf(base, ownership, cell)
          const unanswered = yield* Ref.make<Session | undefined>(undefined)
          return { ownership, scope, cell, save, first, current, live, liveCli, unanswered } satisfies Incarnation
        }).pipe(Scope.extend(scope)),
        (cause) => closeWhole(scope, Exit.failCause(cause))
      )
    }).pipe(Effect.provide(context))

    const incarnation = yield* SynchronizedRef.make(yield* incarnate)
    /** The incarnation a request runs on: a new one (claiming the session again) once the last one lost it. */
    const incarnationNow: Effect.Effect<Incarnation> = SynchronizedRef.modifyEffect(incarnation, (inc) =>
      Effect.gen(function*() {
        if (!(yield* Deferred.isDone(inc.ownership.lost))) {
          return [inc, inc] as const
        }
        // the lost incarnation is gone first (its CLI, its local transcript), then the next claims the session
        yield* closeWhole(inc.scope, Exit.void)
        const next = yield* incarnate
        return [next, next] as const
      }))
    /**
     * The incarnation a request runs on. A claim the database refused for good (a defect of the directory) ends the
     * request with {@link gone}. A persisted request (a turn) arriving at an incarnation that lost the session is
     * registered with its fence first: a reply made before a new incarnation takes it (its claim ended as interrupted,
     * the runner having let the shard go) is refused, and the request is left to the session's owner.
     */
    const incarnationFor = (requestId: string | undefined) =>
      Effect.gen(function*() {
        const last = yield* SynchronizedRef.get(incarnation)
        if (requestId !== undefined && Option.isSome(replyFences) && (yield* Deferred.isDone(last.ownership.lost))) {
          replyFences.value.register(requestId, last.ownership.fence)
        }
        return yield* Effect.catchAllDefect(incarnationNow, (defect) =>
          Effect.zipRight(
            Effect.logWarning(`AgentSession ${entityId}: the session could not be claimed`, defect),
            Effect.fail(gone())
          ))
      })
    /** Runs `request` on the current incarnation; on a loss of the session, again on a new one (up to `ATTEMPTS`). */
    const attempt = <A>(
      request: (inc: Incarnation) => Effect.Effect<A, AgentError | Fenced>,
      left = ATTEMPTS
    ): Effect.Effect<A, AgentError> =>
      Effect.flatMap(incarnationFor(undefined), (inc) =>
        Effect.catchAllCause(request(inc), (cause) =>
          Effect.zipRight(again(entityId, inc, cause, left), attempt(request, left - 1))))

    // one turn at a time: a second waits for the first's result, as prompts queue in a local session
    const turns = yield* Effect.makeSemaphore(1)

    const runTurn = (
      inc: Incarnation,
      requestId: string,
      turnId: string,
      prompt: Message.Prompt,
      lastSentChunk: Option.Option<Reply.Chunk<typeof Turn>>
    ): Stream.Stream<Message.SdkMessage, SessionError | Fenced> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const { ownership, save, unanswered } = inc
        // its replies are this incarnation's writes: saved only while it owns the session
        if (Option.isSome(replyFences)) {
          replyFences.value.register(requestId, ownership.fence)
        }
        yield* turns.take(1).pipe(Effect.acquireRelease(() =>
          turns.release(1)
        ))
        yield* Effect.logDebug(`AgentSession ${entityId} (epoch ${ownership.epoch}): turn ${turnId}`)
        // a CLI takes a prompt only once the store holds every entry it reported: one whose entries the store refused
        // is ended instead, and the prompt goes to a CLI resumed from the store
        let cli = yield* inc.liveCli
        yield* cli.drained
        if (yield* Deferred.isDone(cli.diverged)) {
          cli = yield* inc.liveCli
        }
        const session = cli.session
        const record = yield* SynchronizedRef.get(inc.cell)
        const delivery = deliveryOf(
          record,
          turnId,
          lastSentChunk,
          Option.isSome(replyLog) ? yield* replyLog.value.replied(requestId) : "none"
        )
        if (delivery !== "run") {
          if (delivery !== "answered already") {
            yield* save((r) => ({ ...r, openTurn: null }))
          }
          yield* Effect.logDebug(`AgentSession ${entityId} (epoch ${ownership.epoch}): turn ${turnId} ${delivery}`)
          return delivery === "answered as cut off" ? Stream.make(cutOff(record)) : Stream.empty
        }
        // a caller that left mid-turn left the CLI mid-turn: the rest of that turn is read first, so that this turn
        // reads only its own messages
        if ((yield* Ref.get(unanswered)) === session) {
          yield* settle(session)
        }
        yield* save((r) => ({ ...r, started: true, openTurn: turnId }))
        // the prompt goes to the CLI only while the session is this incarnation's (the save above was fenced; the
        // lease is checked again after it)
        yield* ownership.owned
        yield* Ref.set(unanswered, session)
        // on the way out (the caller left, the runner stops), a turn without its result is interrupted, on a fiber of
        // the incarnation's scope: a CLI that does not answer holds up neither this turn's end nor the entity's stop
        yield* Effect.addFinalizer(() =>
          Effect.whenEffect(
            Effect.forkIn(Effect.interruptible(Effect.ignore(session.interrupt)), inc.scope),
            Effect.map(Ref.get(unanswered), (s) =>
              s === session)
          )
        )
        // the turn's end, written to the record: a write refused ends the incarnation, not this turn (its messages
        // were answered); the record's open turn is then cut off by the next incarnation only if delivered again
        const ended = Effect.catchAllCause(save((r) => ({ ...r, openTurn: null })), (cause) =>
          abandon(entityId, inc, cause))
        return session.turn(prompt).pipe(
          Stream.tap((m) =>
            m.type === "result" ? Ref.set(unanswered, undefined) : Effect.void
          ),
          // each message is answered only while the session is this incarnation's: one read from a CLI that ran on
          // after the session was lost (a paused runner's) is dropped, and the turn goes on in a new incarnation. Its
          // reply is fenced too, but a reply refused there would end the request outside the turn (below)
          Stream.tap(() =>
            ownership.owned
          ),
          // an interrupt is the runner shutting down (the turn is delivered again) or the caller leaving: the turn
          // stays open, so that its redelivery is announced instead of run again
          Stream.onDone(() => ended),
          Stream.onError((cause) => Cause.isInterruptedOnly(cause) ? Effect.void : ended)
        )
      }))

    /** A turn, run again on a new incarnation when its own lost the session (answered there as cut off). */
    const turn = (
      requestId: string,
      turnId: string,
      prompt: Message.Prompt,
      lastSentChunk: Option.Option<Reply.Chunk<typeof Turn>>,
      left = ATTEMPTS
    ): Stream.Stream<Message.SdkMessage, SessionError> =>
      Stream.unwrap(Effect.map(incarnationFor(requestId), (inc) =>
        runTurn(inc, requestId, turnId, prompt, lastSentChunk).pipe(
          Stream.catchAllCause((cause) =>
            Stream.unwrap(
              Effect.as(again(entityId, inc, cause, left), turn(requestId, turnId, prompt, lastSentChunk, left - 1))
            )
          )
        )))

    yield* Effect.addFinalizer(() =>
      Effect.logDebug(`AgentSession ${entityId} stopping`)
    )
    return handlersOf(turn, attempt, incarnation)
  })

/**
 * The entity's handlers: a turn through `turn`, every other request but `Info` through `attempt` (run again on a new
 * incarnation when its own lost the session), `Info` from the current incarnation as it is.
 */
const handlersOf = (
  turn: (
    requestId: string,
    turnId: string,
    prompt: Message.Prompt,
    lastSentChunk: Option.Option<Reply.Chunk<typeof Turn>>
  ) => Stream.Stream<Message.SdkMessage, SessionError>,
  attempt: <A>(request: (inc: Incarnation) => Effect.Effect<A, AgentError | Fenced>) => Effect.Effect<A, AgentError>,
  incarnation: SynchronizedRef.SynchronizedRef<Incarnation>
) =>
  AgentSession.of({
    Turn: ({ lastSentChunk, payload, requestId }) =>
      turn(String(requestId), payload.turnId, payload.prompt, lastSentChunk),
    Send: ({ payload, requestId }) =>
      Stream.runDrain(turn(String(requestId), payload.turnId, payload.prompt, Option.none())),
    Interrupt: () => attempt((inc) => Effect.flatMap(inc.live, (session) => session.interrupt)),
    SetModel: ({ payload }) =>
      attempt((inc) =>
        Effect.flatMap(inc.live, (session) => session.setModel(payload.model)).pipe(
          Effect.zipRight(
            inc.save(({ model: _model, ...r }) => payload.model === undefined ? r : { ...r, model: payload.model })
          ),
          Effect.asVoid
        )
      ),
    SetPermissionMode: ({ payload }) =>
      attempt((inc) =>
        Effect.flatMap(inc.live, (session) => session.setPermissionMode(payload.mode)).pipe(
          Effect.tap(() => inc.save((r) => ({ ...r, permissionMode: payload.mode })))
        )
      ),
    SetMaxThinkingTokens: ({ payload }) =>
      attempt((inc) =>
        Effect.flatMap(
          inc.live,
          (session) => session.setMaxThinkingTokens(payload.maxThinkingTokens, payload.display)
        ).pipe(
          Effect.zipRight(inc.save((r) => ({ ...r, maxThinkingTokens: payload.maxThinkingTokens }))),
          Effect.asVoid
        )
      ),
    Info: () =>
      Effect.gen(function*() {
        const inc = yield* SynchronizedRef.get(incarnation)
        const record = yield* SynchronizedRef.get(inc.cell)
        const cli = yield* SynchronizedRef.get(inc.current)
        if (Either.isLeft(cli)) {
          return { sessionId: record.sessionId, state: "exited" as const, origin: originOf(inc.first) }
        }
        const { kind, requested, sessionId, forked } = cli.right.session.origin
        return {
          sessionId: record.sessionId,
          state: record.closed ? "exited" as const : yield* cli.right.session.state,
          origin: {
            kind,
            forked,
            ...(requested !== undefined ? { requested } : {}),
            ...(sessionId !== undefined ? { sessionId } : {})
          }
        }
      }),
    ContextUsage: ({ payload }) =>
      attempt((inc) =>
        Effect.flatMap(
          inc.live,
          (session) => session.getContextUsage(payload.detail === undefined ? {} : { detail: payload.detail })
        )
      ),
    McpStatus: () => attempt((inc) => Effect.flatMap(inc.live, (session) => session.mcpServerStatus)),
    Initialization: () => attempt((inc) => Effect.flatMap(inc.live, (session) => session.initializationResult)),
    StopTask: ({ payload }) =>
      attempt((inc) => Effect.flatMap(inc.live, (session) => session.stopTask(payload.taskId))),
    Request: ({ payload }) =>
      attempt((inc) =>
        Effect.flatMap(inc.live, (session) =>
          session.request(
            payload.subtype,
            payload.payload,
            payload.timeoutMillis === undefined ? {} : { timeout: payload.timeoutMillis }
          ))
      ),
    Close: () =>
      attempt((inc) =>
        Effect.flatMap(inc.live, (session) => session.endInput).pipe(
          Effect.zipRight(inc.save((r) => ({ ...r, closed: true }))),
          Effect.asVoid
        )
      )
  })

/**
 * The handlers of a build its entity's stop interrupted (`inScope`). @effect/cluster discards them (the entity is
 * closed) once it has sent them again the requests its defect cut off; each ends as an interruption, which it takes for
 * the entity shutting down: a persisted request (a turn) is left to the session's next incarnation, never answered
 * from here.
 */
const stoppedHandlers = AgentSession.of({
  Turn: () => Stream.fromEffect(Effect.interrupt),
  Send: () => Effect.interrupt,
  Interrupt: () => Effect.interrupt,
  SetModel: () => Effect.interrupt,
  SetPermissionMode: () => Effect.interrupt,
  SetMaxThinkingTokens: () => Effect.interrupt,
  Close: () => Effect.interrupt,
  Info: () => Effect.interrupt,
  ContextUsage: () => Effect.interrupt,
  McpStatus: () => Effect.interrupt,
  Initialization: () => Effect.interrupt,
  StopTask: () => Effect.interrupt,
  Request: () => Effect.interrupt
})

/**
 * An entity's build, run on a fiber of its own forked into the entity's scope, interruptible: the entity's stop
 * (closing that scope) interrupts the build wherever it is, and every fiber the build forked, whatever the fiber
 * @effect/cluster runs the build on.
 *
 * @effect/cluster 0.60.2 rebuilds an entity after a defect on a fiber forked from its RPC server's request fiber, which
 * runs uninterruptibly (`RpcServer`: `RuntimeFlags.disable(…, Interruption)`; `internal/entityManager.ts`,
 * `onDefect`: `Effect.forkIn(…, managerScope)`), and nothing interrupts that fiber when the entity stops. A build run
 * on it directly made every fiber it forked (the CLI's reader, the transcript mirror's writer, the ownership watchers)
 * uninterruptible: the entity's stop, which interrupts them, waited for them for ever, and with it the release of the
 * entity's shard (`interruptShard` waits for the entity's scope to close) and with that every shard the runner held
 * when its shard locks failed (a forced release is one release of them all, and no shard is acquired while it runs):
 * the runner kept their locks and ran nothing. And a rebuild for an entity that had stopped meanwhile (its shard moved)
 * went on to claim the session, fencing off the incarnation running it.
 *
 * A build whose scope closed before it ended, on a fiber that cannot be interrupted (that rebuild), ends with
 * {@link stoppedHandlers}, which @effect/cluster discards (its entity is closed), and not with an interruption, which
 * @effect/cluster would retry for ever on that fiber, holding up the runner's stop. On an interruptible fiber (an
 * entity's first build) the interruption is the build's end, as before.
 */
const inScope = <A, B, R>(build: Effect.Effect<A, never, R>, stopped: B) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const closed = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkIn(Effect.interruptible(build), scope)
    // done as the scope closes, before the build is interrupted (finalizers run last added first); at once when the
    // scope had closed already (the build is then interrupted before it starts)
    yield* Scope.addFinalizer(scope, Deferred.succeed(closed, undefined))
    const exit = yield* Effect.onInterrupt(Fiber.await(fiber), () => Fiber.interrupt(fiber))
    const cannotBeInterrupted = !(yield* Effect.checkInterruptible(Effect.succeed))
    if (Exit.isInterrupted(exit) && cannotBeInterrupted && (yield* Deferred.isDone(closed))) {
      return stopped
    }
    return yield* exit
  })

/** @internal */
export interface EntityOptions {
  readonly options?: Options | undefined
  readonly maxIdleTime?: Duration.DurationInput | undefined
}

/**
 * The entity's behaviour, registered on the runner's `Sharding`.
 *
 * @internal
 */
export const layer = (options: EntityOptions = {}) =>
  AgentSession.toLayer(inScope(build(options.options ?? {}), stoppedHandlers), {
    concurrency: "unbounded",
    ...(options.maxIdleTime !== undefined ? { maxIdleTime: options.maxIdleTime } : {})
  })
