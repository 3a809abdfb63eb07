/**
 * One session over one CLI process: start-up, the state cell stepped by everything the CLI says and the SDK sends,
 * the idle watchdog, and the `Session` value.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { IdleTimeout, InputClosed, ProcessExited } from "../../AgentError.js"
import type { Options } from "../../AgentOptions.js"
import type { Prompt, Session, SessionError, SessionOrigin } from "../../ClaudeAgent.js"
import * as Message from "../../Message.js"
import type { Transport } from "../../Transport.js"
import type * as TransportApi from "../../Transport.js"
import * as ProtocolInternal from "../protocol/controlProtocol.js"
import { collectExtensions, type SessionExtensions } from "./extensions.js"
import { oneByOne } from "./handout.js"
import { liveTimeout } from "../transport/liveTimer.js"
import * as Opts from "./options.js"
import { resolveOrigin } from "./origin.js"
import type { InternalStore } from "../rules/permissions.js"
import { type Cell, makeCell, observed } from "./cell.js"
import * as Control from "./control.js"
import * as Startup from "./startup.js"
import * as State from "./state.js"
import { interruptNow, make as makeTermination, type Termination } from "./termination.js"
import * as Watchdog from "./watchdog.js"
import { prepare as prepareTranscript } from "../transcript/mirror.js"
import { Mirror as MirrorSettings, TranscriptStore } from "../transcript/store.js"

/** How long the CLI may take to report idle after a result before stdin is closed anyway. */
const IDLE_AFTER_RESULT = Duration.seconds(1)

/** Internal handles of a session, shared by `session`, `query`, the pool and auto-resume. @internal */
export interface SessionInternal {
  readonly session: Session
  readonly protocol: ProtocolInternal.Owned
  /** How the session ends: report to it, read its outcome. */
  readonly termination: Termination
  /** The session's state, and what steps it (for the query driver's own events). */
  readonly state: () => State.SessionState
  readonly advance: (event: State.Event) => void
  /** Registers a callback run (synchronously, as the result is read) after every `result`. */
  readonly onResult: (f: () => void) => void
  /** Waits (bounded) for the CLI to report idle when a turn has just ended. */
  readonly settleAfterResult: Effect.Effect<void>
  /** The session's permission store (shared by every process of an auto-resumed session). */
  readonly permissionStore: InternalStore
}

/** @internal */
export const make = (
  requested: Options = {},
  internals: { readonly permissionStore?: InternalStore } = {}
): Effect.Effect<SessionInternal, SessionError, Transport | Scope.Scope> => {
  // the session's timer runs from before the spawn: a start-up that fails stops it (the caller's scope may live on,
  // and the timer's sleeps must not keep the host alive)
  let stopTimer: Effect.Effect<void> = Effect.void
  return Effect.gen(function*() {
    yield* Opts.validate(requested)
    const transcripts = yield* Effect.serviceOption(TranscriptStore)
    if (Option.isSome(transcripts)) yield* prepareTranscript(transcripts.value, yield* MirrorSettings, requested)
    const { options, origin } = resolveOrigin(requested)
    const limits = yield* Startup.limitsOf(options)
    const scope = yield* Effect.scope
    const extensions = yield* collectExtensions(options, internals.permissionStore)
    const launch = yield* Opts.launchOf(options, extensions)
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    // start-up is bounded as a whole (`initializeTimeout`), from here to the answer to `initialize`
    const startedAt = now()
    const cell = yield* makeCell(origin, startedAt)
    // one timer for the session: the start-up bound, then the idle watchdog
    const timer = yield* Watchdog.start(cell.get, limits, startedAt)
    if (timer.fiber !== undefined) stopTimer = interruptNow(timer.fiber)
    const connection = yield* Startup.spawn(options, launch, timer.bound)
    const initialized = yield* Deferred.make<Message.InitializeResponse, SessionError>()
    // the protocol's reader reports the end of the CLI's stdout to the termination, made right after the protocol
    const ended = yield* Deferred.make<Termination>()
    const protocol = yield* ProtocolInternal.make(observed(connection, cell, now), {
      onEnd: (exit) => Effect.flatMap(Deferred.await(ended), (t) => t.report({ _tag: "Exited", exit })),
      handlers: extensions.handlers,
      requestTimeout: limits.control,
      bufferSize: options.messageBufferSize,
      onMessage: (m) => {
        const keep = extensions.onMessage(m)
        cell.advance({ _tag: "Message", message: m, at: now() })
        return keep && State.delivered(m)
      }
    })
    const termination = yield* makeTermination({
      cell,
      connection,
      endMessages: protocol.endMessages,
      readerDone: protocol.readerDone,
      initialized: Deferred.await(initialized)
    })
    yield* Deferred.succeed(ended, termination)
    yield* Scope.addFinalizer(scope, termination.report({ _tag: "Closed" }))
    yield* extensions.onProtocol(protocol)

    const awaitIdle = cell.awaitIdle(IDLE_AFTER_RESULT)
    const settleAfterResult = Effect.suspend(() => State.awaitsIdle(cell.get()) ? awaitIdle : Effect.void)
    // Closing stdin mid-turn (or right after a result) makes the CLI slow to exit, SIGTERM included; interrupting a
    // running turn first and waiting for idle lets it exit at once.
    const settleBeforeClose = Effect.flatMap(connection.exitStatus, (exit) => {
      if (Option.isSome(exit)) return Effect.void
      if (!State.busy(cell.get())) return settleAfterResult
      return liveTimeout(protocol.request("interrupt", {}, { timeout: Duration.infinity }), IDLE_AFTER_RESULT).pipe(
        Effect.ignore,
        Effect.zipRight(Effect.suspend(() => {
          const state = cell.get()
          return state.status === "idle" || !state.reportsState ? Effect.void : awaitIdle
        }))
      )
    })
    // runs before the transport's own finalizer (registered earlier): let the turn settle first. It must stay
    // uninterruptible: when the scope closes because its fiber was interrupted, an interruptible region here would
    // end at once and skip the settling (every wait inside is bounded on the wall clock).
    yield* Scope.addFinalizer(scope, Effect.uninterruptible(settleBeforeClose))

    const stop = (error: SessionError) => termination.report({ _tag: "Failed", error })
    if (extensions.failure !== undefined) yield* extensions.failure.pipe(Effect.catchAll(stop), Effect.forkScoped)
    const answer = yield* Startup.initialize(protocol, launch.initialize, extensions, {
      startedAt,
      bound: timer.bound
    }, {
      answered: Effect.sync(() => cell.advance({ _tag: "InitializeAnswered" })),
      explain: (exit) => State.explainExit(cell.get(), exit),
      wroteAnything: () => cell.get().wroteAnything
    })
    yield* answer.pipe(
      Effect.tapError((error) =>
        Effect.zipRight(Effect.sync(() => cell.advance({ _tag: "InitializeFailed", error })), stop(error))
      ),
      Effect.exit,
      Effect.flatMap((exit) => Deferred.done(initialized, exit)),
      Effect.forkScoped
    )
    timer.watch({
      inFlight: protocol.inFlightCount,
      expired: (deadline) =>
        Effect.gen(function*() {
          // reported before the kill: the exit the kill causes is only a consequence
          yield* stop(
            new IdleTimeout({
              lastEventAt: deadline.lastEventAt,
              timeoutMillis: Duration.toMillis(deadline.limit),
              reason: deadline.reason,
              stderrTail: yield* connection.stderrTail
            })
          )
          yield* connection.kill
        })
    })
    // once the session has ended no idle deadline matters (the timer's sleep must not keep the host alive); a start-up
    // still waiting for the answer to `initialize` keeps its bound: then the timer stops once that wait is settled
    yield* termination.onEnd(
      Effect.flatMap(Deferred.isDone(initialized), (done) =>
        done
          ? stopTimer
          : Effect.asVoid(Effect.forkIn(Effect.zipRight(Effect.exit(Deferred.await(initialized)), stopTimer), scope)))
    )

    // when the session ends, whoever waits for the session id learns why (no one waits for an id known already)
    if (!(yield* Deferred.isDone(cell.sessionIdKnown))) {
      yield* termination.outcome.pipe(
        Effect.flatMap((outcome) =>
          outcome._tag === "Failed"
            ? Deferred.fail(cell.sessionIdKnown, outcome.error)
            : Effect.flatMap(connection.stderrTail, (stderrTail) =>
              Effect.flatMap(connection.exitStatus, (exit) =>
                Deferred.fail(
                  cell.sessionIdKnown,
                  Option.isSome(exit)
                    ? new ProcessExited({ code: exit.value.code, signal: exit.value.signal, stderrTail })
                    : new InputClosed({ reason: "SessionClosed" })
                )))
        ),
        Effect.forkScoped
      )
    }

    const initializationResult = Deferred.await(initialized)
    const session = assemble({
      options,
      origin,
      connection,
      protocol,
      cell,
      extensions,
      now,
      termination,
      initializationResult,
      settleAfterResult
    })

    return {
      session,
      protocol,
      termination,
      state: cell.get,
      advance: cell.advance,
      onResult: cell.onResult,
      settleAfterResult,
      permissionStore: extensions.permissionStore
    }
  }).pipe(Effect.onError(() => stopTimer))
}

/** The `Session` value: prompts step the cell; the messages are the protocol's, ended by the session's reason. */
const assemble = (parts: {
  readonly options: Options
  readonly origin: SessionOrigin
  readonly connection: TransportApi.Connection
  readonly protocol: ProtocolInternal.Owned
  readonly cell: Cell
  readonly extensions: SessionExtensions & { readonly permissionStore: InternalStore }
  readonly now: () => number
  readonly termination: Termination
  readonly initializationResult: Effect.Effect<Message.InitializeResponse, SessionError>
  readonly settleAfterResult: Effect.Effect<void>
}): Session => {
  const { cell, connection, options, protocol, termination } = parts
  // once the buffer is done: how the session ended
  const whenEnded = Stream.unwrap(
    Effect.map(termination.outcome, (outcome) => outcome._tag === "Failed" ? Stream.fail(outcome.error) : Stream.empty)
  )
  const messages: Stream.Stream<Message.SdkMessage, SessionError> = Stream.repeatEffectOption(
    oneByOne(protocol.takeMessages)
  ).pipe(Stream.concat(whenEnded))
  // a turn ends with its result; the result of a resume the CLI could not find fails the turn after it is handed
  // out (as `query` does), rather than ending it normally
  const turnMessages = messages.pipe(
    Stream.takeUntil(Message.isResultMessage),
    Stream.concat(Stream.suspend(() => {
      const notFound = cell.get().notFound
      return notFound !== undefined ? Stream.fail(notFound) : Stream.empty
    }))
  )
  const send = (prompt: Prompt) =>
    Effect.zipRight(
      protocol.send(Opts.userMessage(options, prompt)),
      Effect.sync(() =>
        cell.advance({
          _tag: "PromptSent",
          startsTurn: typeof prompt === "string" || prompt.shouldQuery !== false,
          at: parts.now()
        })
      )
    )
  return {
    origin: parts.origin,
    pid: connection.pid,
    sessionId: Effect.suspend(() => {
      const id = cell.get().sessionId
      return id !== undefined ? Effect.succeed(id) : Deferred.await(cell.sessionIdKnown)
    }),
    state: Effect.map(connection.exitStatus, (exit) => (Option.isSome(exit) ? "exited" : cell.get().status)),
    send: (prompt) => send(prompt).pipe(Effect.withSpan("Session.send")),
    messages,
    turn: (prompt) =>
      Stream.unwrap(
        send(prompt).pipe(
          Effect.as(turnMessages),
          // the CLI was gone before the prompt could be written (e.g. a resume it could not find): what it wrote
          // before it exited says why, else the exit does
          Effect.catchTag("ProcessExited", (error) =>
            Effect.sync(() => {
              cell.advance({ _tag: "PromptLost", error })
              return turnMessages
            }))
        )
      ).pipe(Stream.withSpan("Session.turn")),
    ...Control.make(protocol, parts.extensions, options, parts.initializationResult, () => cell.get().commands),
    permissions: parts.extensions.permissionStore,
    endInput: Effect.zipRight(parts.settleAfterResult, protocol.endInput)
  }
}
