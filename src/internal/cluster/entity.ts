/**
 * The `AgentSession` entity: one Claude Code session per entity id, its CLI started in the entity's scope (so it is
 * reaped when the entity stops: idle, rebalanced, shut down) and resumed by the next incarnation.
 *
 * @internal
 */
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Entity from "@effect/cluster/Entity"
import * as Rpc from "@effect/rpc/Rpc"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import { AgentError, InputClosed, type SessionError } from "../../AgentError.js"
import type { Options, PermissionMode } from "../../AgentOptions.js"
import type { Session } from "../../ClaudeAgent.js"
import * as Message from "../../Message.js"
import { session as startSession } from "../session/session.js"
import { hasTranscript } from "../transcript/mirror.js"
import { Mirror, TranscriptStore } from "../transcript/store.js"
import { SessionDirectory, type SessionRecord } from "./directory.js"

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

/**
 * The handlers of one entity. Runs in the entity's scope: the CLI it starts is the entity's, and so are the
 * Permissions / Hooks / MCP services of the runner's context.
 */
const build = (base: Options) =>
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const entityScope = yield* Effect.scope
    const entityId = address.entityId
    const directory = yield* SessionDirectory
    const stored = Option.getOrElse(yield* directory.get(entityId), (): SessionRecord => ({
      sessionId: crypto.randomUUID(),
      started: false,
      openTurn: null,
      closed: false
    }))
    // a first turn cut off before any of it reached the store (or the config dir) left nothing to resume: the
    // session starts anew under the same id
    const transcripts = yield* Effect.serviceOption(TranscriptStore)
    const resumable = stored.started && stored.openTurn !== null && Option.isSome(transcripts)
      ? yield* hasTranscript(transcripts.value, yield* Mirror, base, stored.sessionId)
      : true
    const cell = yield* SynchronizedRef.make<SessionRecord>(resumable ? stored : { ...stored, started: false })
    const save = (f: (record: SessionRecord) => SessionRecord) =>
      SynchronizedRef.updateAndGetEffect(cell, (record) => {
        const next = f(record)
        return Effect.as(directory.set(entityId, next), next)
      })
    const first = yield* SynchronizedRef.get(cell)
    // one CLI for the life of the entity; a failure to start is every request's failure
    const started: Either.Either<Session, SessionError> = first.closed
      ? Either.left(new InputClosed({ reason: "SessionClosed" }))
      : yield* Effect.either(startSession(optionsOf(base, first)))
    const live = Effect.suspend(() =>
      Effect.flatMap(started, (session) =>
        Effect.flatMap(
          SynchronizedRef.get(cell),
          (record) =>
            record.closed ? Effect.fail(new InputClosed({ reason: "SessionClosed" })) : Effect.succeed(session)
        ))
    )
    // one turn at a time: a second waits for the first's result, as prompts queue in a local session
    const turns = yield* Effect.makeSemaphore(1)
    // whether the last turn started has not given its result to its reader
    const unanswered = yield* Ref.make(false)

    const runTurn = (
      turnId: string,
      prompt: Message.Prompt,
      lastSentChunk: Option.Option<unknown>
    ): Stream.Stream<Message.SdkMessage, SessionError> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        yield* turns.take(1).pipe(Effect.acquireRelease(() => turns.release(1)))
        const session = yield* live
        const record = yield* SynchronizedRef.get(cell)
        if (record.openTurn === turnId || Option.isSome(lastSentChunk)) {
          // its prompt reached a CLI that is gone: never run twice, never end silently
          yield* save((r) => ({ ...r, openTurn: null }))
          return Stream.make(cutOff(record))
        }
        // a caller that left mid-turn left the CLI mid-turn: the rest of that turn is read first, so that this turn
        // reads only its own messages
        if (yield* Ref.get(unanswered)) yield* settle(session)
        yield* save((r) => ({ ...r, started: true, openTurn: turnId }))
        yield* Ref.set(unanswered, true)
        // on the way out (the caller left, the runner stops), a turn without its result is interrupted, on a fiber of
        // the entity's scope: a CLI that does not answer holds up neither this turn's end nor the entity's stop
        yield* Effect.addFinalizer(() =>
          Effect.whenEffect(
            Effect.forkIn(Effect.interruptible(Effect.ignore(session.interrupt)), entityScope),
            Ref.get(unanswered)
          )
        )
        return session.turn(prompt).pipe(
          Stream.tap((m) => m.type === "result" ? Ref.set(unanswered, false) : Effect.void),
          // an interrupt is the runner shutting down (the turn is delivered again) or the caller leaving: the turn
          // stays open, so that its redelivery is announced instead of run again
          Stream.onDone(() => Effect.asVoid(save((r) => ({ ...r, openTurn: null })))),
          Stream.onError((cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.void : Effect.asVoid(save((r) => ({ ...r, openTurn: null })))
          )
        )
      }))

    return AgentSession.of({
      Turn: ({ lastSentChunk, payload }) => runTurn(payload.turnId, payload.prompt, lastSentChunk),
      Send: ({ payload }) => Stream.runDrain(runTurn(payload.turnId, payload.prompt, Option.none())),
      Interrupt: () => Effect.flatMap(live, (session) => session.interrupt),
      SetModel: ({ payload }) =>
        Effect.flatMap(live, (session) => session.setModel(payload.model)).pipe(
          Effect.zipRight(
            save(({ model: _model, ...r }) => payload.model === undefined ? r : { ...r, model: payload.model })
          ),
          Effect.asVoid
        ),
      SetPermissionMode: ({ payload }) =>
        Effect.flatMap(live, (session) => session.setPermissionMode(payload.mode)).pipe(
          Effect.tap(() => save((r) => ({ ...r, permissionMode: payload.mode })))
        ),
      SetMaxThinkingTokens: ({ payload }) =>
        Effect.flatMap(live, (session) => session.setMaxThinkingTokens(payload.maxThinkingTokens, payload.display))
          .pipe(
            Effect.zipRight(save((r) => ({ ...r, maxThinkingTokens: payload.maxThinkingTokens }))),
            Effect.asVoid
          ),
      Info: () =>
        Effect.gen(function*() {
          const record = yield* SynchronizedRef.get(cell)
          if (Either.isLeft(started)) {
            return { sessionId: record.sessionId, state: "exited" as const, origin: originOf(first) }
          }
          const { kind, requested, sessionId, forked } = started.right.origin
          return {
            sessionId: record.sessionId,
            state: record.closed ? "exited" as const : yield* started.right.state,
            origin: {
              kind,
              forked,
              ...(requested !== undefined ? { requested } : {}),
              ...(sessionId !== undefined ? { sessionId } : {})
            }
          }
        }),
      ContextUsage: ({ payload }) =>
        Effect.flatMap(
          live,
          (session) => session.getContextUsage(payload.detail === undefined ? {} : { detail: payload.detail })
        ),
      McpStatus: () => Effect.flatMap(live, (session) => session.mcpServerStatus),
      Initialization: () => Effect.flatMap(live, (session) => session.initializationResult),
      StopTask: ({ payload }) => Effect.flatMap(live, (session) => session.stopTask(payload.taskId)),
      Request: ({ payload }) =>
        Effect.flatMap(live, (session) =>
          session.request(
            payload.subtype,
            payload.payload,
            payload.timeoutMillis === undefined ? {} : { timeout: payload.timeoutMillis }
          )),
      Close: () =>
        Effect.flatMap(live, (session) => session.endInput).pipe(
          Effect.zipRight(save((r) => ({ ...r, closed: true }))),
          Effect.asVoid
        )
    })
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
  AgentSession.toLayer(build(options.options ?? {}), {
    concurrency: "unbounded",
    ...(options.maxIdleTime !== undefined ? { maxIdleTime: options.maxIdleTime } : {})
  })
