/** @internal */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Fiber from "effect/Fiber"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { InputClosed, ProcessExited } from "../AgentError.js"
import type { Options } from "../AgentOptions.js"
import type { Prompt, Session, SessionError, SessionState } from "../ClaudeAgent.js"
import * as Message from "../Message.js"
import type { Transport } from "../Transport.js"
import * as Opts from "./options.js"
import * as session from "./session.js"

interface Incarnation {
  readonly internal: session.SessionInternal
  readonly scope: Scope.CloseableScope
}

/** The retry policy of `autoResume`, as a Schedule. @internal */
export const toSchedule = (
  policy: NonNullable<Options["autoResume"]>
): Schedule.Schedule<unknown, ProcessExited> => {
  if (Schedule.isSchedule(policy)) return policy
  const initial = Duration.millis(policy.initialDelayMillis ?? 200)
  const max = Duration.millis(policy.maxDelayMillis ?? 10_000)
  return Schedule.exponential(initial).pipe(
    Schedule.modifyDelay((d) => Duration.min(d, max)),
    Schedule.intersect(Schedule.recurs(policy.maxRestarts))
  )
}

/**
 * A session that survives its CLI dying: a supervisor replaces a process that exited unexpectedly with one that
 * resumes the same session, following the `autoResume` schedule. Prompts are queued until a process takes them; a
 * prompt a dying process had received but not started is given to the next one (the CLI does not have it yet);
 * a prompt whose turn had started is not sent again (the CLI has it in the transcript).
 *
 * @internal
 */
export const make = (options: Options): Effect.Effect<Session, SessionError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const policy = toSchedule(options.autoResume!)
    const parent = yield* Effect.scope
    const out = yield* Mailbox.make<Message.SdkMessage, SessionError>()
    let closing = false
    let failure: SessionError | undefined

    // prompts: waiting for a process; handed to the current process but not started yet (replayed on restart)
    let waiting: Array<Message.UserMessage> = []
    let handed: Array<Message.UserMessage> = []
    let wake = yield* Deferred.make<void>()
    const signal = Effect.suspend(() => Deferred.succeed(wake, undefined))
    let turnRunning = false

    const start = (opts: Options, store?: session.SessionInternal["permissionStore"]) =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
        return yield* session.make(opts, store === undefined ? {} : { permissionStore: store }).pipe(
          Effect.tap((internal) => internal.session.initializationResult),
          Effect.map((internal): Incarnation => ({ internal, scope })),
          Scope.extend(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
      })

    let current = yield* start({ ...options, autoResume: undefined })
    const store = current.internal.permissionStore
    let resumeId = current.internal.session.origin.sessionId

    /** Hands queued prompts to a process, in order, until it fails. */
    const sender = (inc: Incarnation): Effect.Effect<never> =>
      Effect.gen(function*() {
        while (true) {
          while (waiting.length > 0) {
            const prompt = waiting[0]!
            const sent = yield* Effect.either(inc.internal.session.send(prompt))
            if (sent._tag === "Left") return yield* Effect.never
            waiting.shift()
            handed.push(prompt)
          }
          yield* Deferred.await(wake)
          wake = yield* Deferred.make<void>()
        }
      })

    /** Copies a process's messages out, tracking which handed prompts have started; returns how it ended. */
    const pump = (inc: Incarnation) =>
      inc.internal.session.messages.pipe(
        Stream.runForEach((m) =>
          Effect.suspend(() => {
            if (Message.isSystemInit(m)) {
              handed.shift()
              turnRunning = true
              resumeId = m.session_id
            } else if (m.type === "result") turnRunning = false
            return Effect.asVoid(out.offer(m))
          })
        ),
        Effect.exit
      )

    const supervise = Effect.gen(function*() {
      const driver = yield* Schedule.driver(policy)
      let attempt = 0
      while (true) {
        const inc = current
        const senderFiber = yield* Effect.fork(sender(inc))
        const ended = yield* pump(inc)
        yield* Fiber.interrupt(senderFiber)
        if (closing) return yield* out.end
        if (Exit.isSuccess(ended)) return yield* out.end
        let error: SessionError | undefined = Cause.failureOption(ended.cause).pipe(Option.getOrUndefined)
        if (!(error instanceof ProcessExited)) {
          failure = error ?? new InputClosed({ reason: "closed" })
          return yield* out.failCause(Exit.isFailure(ended) ? ended.cause : Cause.empty)
        }
        // the process died: what it had received but not started goes to the next one
        waiting = [...handed, ...waiting]
        handed = []
        const interruptedTurn = turnRunning
        turnRunning = false
        yield* Scope.close(inc.scope, Exit.void)
        while (true) {
          const next = yield* Effect.either(driver.next(error))
          if (next._tag === "Left") {
            failure = error
            return yield* out.fail(error)
          }
          attempt++
          const restarted = yield* Effect.either(
            start({
              ...options,
              autoResume: undefined,
              continue: undefined,
              forkSession: undefined,
              sessionId: undefined,
              resume: resumeId
            }, store)
          )
          if (restarted._tag === "Right") {
            current = restarted.right
            yield* out.offer({
              type: "session_restarted",
              attempt,
              exit: { code: error.code, signal: error.signal },
              stderrTail: error.stderrTail,
              session_id: resumeId ?? "",
              interruptedTurn
            })
            break
          }
          const startError = restarted.left
          if (startError._tag === "StartupFailed" || startError._tag === "ProcessExited") {
            error = new ProcessExited({
              code: startError._tag === "ProcessExited" ? startError.code : (startError.exitCode ?? null),
              signal: startError._tag === "ProcessExited" ? startError.signal : null,
              stderrTail: startError.stderrTail
            })
            continue
          }
          failure = startError
          return yield* out.fail(startError)
        }
      }
    })
    yield* Effect.forkIn(supervise, parent)
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        return Scope.close(current.scope, Exit.void)
      })
    )

    // the outer stream hands messages out one by one so a reader that stops leaves the rest (like a session's)
    let buffered: Array<Message.SdkMessage> = []
    let position = 0
    let done = false
    const next: Effect.Effect<Message.SdkMessage, Option.Option<SessionError>> = Effect.suspend(() => {
      if (position < buffered.length) return Effect.succeed(buffered[position++]!)
      if (done) return Effect.fail(Option.none())
      return out.takeAll.pipe(
        Effect.mapError(Option.some),
        Effect.flatMap(([chunk, isDone]) => {
          buffered = Chunk.toArray(chunk)
          position = 0
          done = isDone
          return next
        })
      )
    })
    const messages = Stream.repeatEffectOption(next)

    const send = (prompt: Prompt): Effect.Effect<void, ProcessExited | InputClosed> =>
      Effect.suspend(() => {
        if (failure !== undefined) {
          return Effect.fail(failure instanceof ProcessExited ? failure : new InputClosed({ reason: "closed" }))
        }
        if (closing) return Effect.fail(new InputClosed({ reason: "endInput" }))
        waiting.push(Opts.userMessage(options, prompt))
        return signal
      })

    const on = <A, E>(f: (s: Session) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.suspend(() => f(current.internal.session))

    const resilient: Session = {
      origin: current.internal.session.origin,
      get pid() {
        return current.internal.session.pid
      },
      sessionId: on((s) => s.sessionId),
      state: Effect.map(on((s) => s.state), (state): SessionState => (failure !== undefined ? "exited" : state)),
      send,
      messages,
      turn: (prompt) =>
        Stream.unwrap(Effect.as(send(prompt), messages)).pipe(
          Stream.takeUntil((m) => m.type === "result" || (m.type === "session_restarted" && m.interruptedTurn))
        ),
      interrupt: on((s) => s.interrupt),
      setPermissionMode: (mode) => on((s) => s.setPermissionMode(mode)),
      setModel: (model) => on((s) => s.setModel(model)),
      setMaxThinkingTokens: (n, display) => on((s) => s.setMaxThinkingTokens(n, display)),
      initializationResult: on((s) => s.initializationResult),
      supportedCommands: on((s) => s.supportedCommands),
      supportedModels: on((s) => s.supportedModels),
      supportedAgents: on((s) => s.supportedAgents),
      accountInfo: on((s) => s.accountInfo),
      mcpServerStatus: on((s) => s.mcpServerStatus),
      getContextUsage: (o) => on((s) => s.getContextUsage(o)),
      rewindFiles: (id, o) => on((s) => s.rewindFiles(id, o)),
      reconnectMcpServer: (name) => on((s) => s.reconnectMcpServer(name)),
      toggleMcpServer: (name, enabled) => on((s) => s.toggleMcpServer(name, enabled)),
      setMcpServers: (servers) => on((s) => s.setMcpServers(servers)),
      stopTask: (taskId) => on((s) => s.stopTask(taskId)),
      request: (subtype, payload, o) => on((s) => s.request(subtype, payload, o)),
      permissions: store,
      endInput: Effect.suspend(() => {
        closing = true
        return on((s) => s.endInput)
      })
    }
    return resilient
  })
