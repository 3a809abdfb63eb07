/**
 * Auto-resume: a session that survives its CLI dying.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
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
import { InputClosed, ProcessExited, type StartupFailed } from "../../AgentError.js"
import type { Options } from "../../AgentOptions.js"
import type { Prompt, Session, SessionError, SessionState } from "../../ClaudeAgent.js"
import * as Message from "../../Message.js"
import type { Transport } from "../../Transport.js"
import { oneByOne } from "../handout.js"
import { liveTimeout } from "../liveTimer.js"
import * as Opts from "../options.js"
import * as session from "./make.js"

/** How long closing the session waits for the supervisor to copy out the last messages of the dying process. */
const DRAIN_ON_CLOSE = Duration.seconds(1)

/** The `ProcessExited` behind a start-up failure (its signal included), for the policy and the final error. */
const exitOf = (error: StartupFailed): ProcessExited =>
  error.cause instanceof ProcessExited ? error.cause : new ProcessExited({
    code: error.exitCode ?? null,
    signal: null,
    stderrTail: error.stderrTail
  })

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
 * a prompt whose turn had started is never sent again: the restart event says `interruptedTurn: true` instead (the
 * CLI 2.1.332 resumes with that prompt followed by a synthetic "No response requested." when it had written it to
 * its transcript, which it does within a few hundred milliseconds of the turn's start, else without it).
 *
 * Not restarted: a death after the session's scope began closing (the stream then ends), a clean exit (code 0; the
 * stream ends and `send` fails with `InputClosed`), and a death after `endInput` (the stream ends, or fails with the
 * `ProcessExited` if prompts were still unanswered). `endInput` itself is queued behind the prompts sent before it.
 *
 * @internal
 */
export const make = (options: Options): Effect.Effect<Session, SessionError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const policy = toSchedule(options.autoResume!)
    const parent = yield* Effect.scope
    const out = yield* Mailbox.make<Message.SdkMessage, SessionError>()
    // the session's scope is closing / the caller ended the input: no process is started after either
    let closing = false
    let inputEnded = false
    let failure: SessionError | undefined

    // prompts: waiting for a process; handed to the current process but not started yet (replayed on restart)
    let waiting: Array<Message.UserMessage> = []
    let handed: Array<Message.UserMessage> = []
    // open when there is something for the sender to do (a prompt, the end of input)
    const wake = yield* Effect.makeLatch(false)
    const signal = wake.open
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

    // runtime changes made through the session, applied again (in the order first made) to every new process
    const changes = new Map<string, (s: Session) => Effect.Effect<unknown, unknown>>()
    const reapply = (s: Session) =>
      Effect.forEach(changes, ([key, change]) =>
        change(s).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(`auto-resume: could not apply ${key} to the restarted CLI`, cause)
          )
        ), { discard: true })

    let current = yield* start({ ...options, autoResume: undefined })
    const store = current.internal.permissionStore
    let resumeId = current.internal.session.origin.sessionId

    /** Hands queued prompts to a process, in order, until it fails. */
    const sender = (inc: Incarnation): Effect.Effect<never> =>
      Effect.gen(function*() {
        while (true) {
          yield* wake.close
          while (waiting.length > 0) {
            const prompt = waiting[0]!
            const sent = yield* Effect.either(inc.internal.session.send(prompt))
            if (sent._tag === "Left") return yield* Effect.never
            waiting.shift()
            handed.push(prompt)
          }
          // after every prompt sent before it, like a plain session's stdin
          if (inputEnded) {
            yield* Effect.ignore(inc.internal.session.endInput)
            return yield* Effect.never
          }
          yield* wake.await
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

    let pumping = false
    const supervise = Effect.gen(function*() {
      const driver = yield* Schedule.driver(policy)
      let attempt = 0
      while (true) {
        const inc = current
        const senderFiber = yield* Effect.fork(sender(inc))
        pumping = true
        const ended = yield* pump(inc)
        pumping = false
        yield* Fiber.interrupt(senderFiber)
        if (closing) return yield* out.end
        if (Exit.isSuccess(ended)) {
          // a clean end is not restarted, and nothing sent later would be answered
          failure = new InputClosed({ reason: "closed" })
          return yield* out.end
        }
        let error: SessionError | undefined = Cause.failureOption(ended.cause).pipe(Option.getOrUndefined)
        if (!(error instanceof ProcessExited)) {
          failure = error ?? new InputClosed({ reason: "closed" })
          return yield* out.failCause(ended.cause)
        }
        if (inputEnded) {
          // our own close of stdin: not restarted, but a death that leaves prompts unanswered is not hidden
          failure = error
          return yield* (handed.length > 0 || waiting.length > 0 || turnRunning ? out.fail(error) : out.end)
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
            }, store).pipe(
              // a CLI that exits before `initialize` could even be written can surface as a defect of that write
              Effect.catchSomeDefect((defect) =>
                defect instanceof ProcessExited ? Option.some(Effect.fail(defect)) : Option.none()
              )
            )
          )
          if (restarted._tag === "Right") {
            current = restarted.right
            yield* reapply(current.internal.session)
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
            error = startError._tag === "ProcessExited" ? startError : exitOf(startError)
            continue
          }
          failure = startError
          return yield* out.fail(startError)
        }
      }
    })
    // whatever ends the supervisor ends the stream: a reader never waits for a supervisor that is gone
    const supervisor = yield* supervise.pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.suspend(() => {
          const error = Cause.squash(cause)
          failure ??= error instanceof ProcessExited ? error : new InputClosed({ reason: "closed" })
          return out.failCause(cause)
        })
      ),
      Effect.forkIn(parent)
    )
    // Runs before the supervisor is interrupted: the process ends as a plain session's does, the supervisor copies
    // out what it said last (bounded), and the stream ends, whatever state the supervisor was in.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        const draining = pumping
        return Scope.close(current.scope, Exit.void).pipe(
          Effect.zipRight(draining ? liveTimeout(Fiber.await(supervisor), DRAIN_ON_CLOSE) : Effect.void),
          Effect.zipRight(Fiber.interrupt(supervisor)),
          Effect.zipRight(out.end)
        )
      })
    )

    // handed out one by one, so a reader that stops leaves the rest (like a session's)
    const messages = Stream.repeatEffectOption(oneByOne(out.takeAll))

    const send = (prompt: Prompt): Effect.Effect<void, ProcessExited | InputClosed> =>
      Effect.suspend(() => {
        if (inputEnded) return Effect.fail(new InputClosed({ reason: "endInput" }))
        if (failure !== undefined) {
          return Effect.fail(failure instanceof ProcessExited ? failure : new InputClosed({ reason: "closed" }))
        }
        if (closing) return Effect.fail(new InputClosed({ reason: "closed" }))
        waiting.push(Opts.userMessage(options, prompt))
        return signal
      })

    const on = <A, E>(f: (s: Session) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.suspend(() => f(current.internal.session))

    /** A runtime change (model, permission mode, …) that the next process must get too, remembered once it worked. */
    const remembered = <A, E>(key: string, f: (s: Session) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.tap(on(f), () => Effect.sync(() => changes.set(key, f)))

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
      setPermissionMode: (mode) => remembered("permissionMode", (s) => s.setPermissionMode(mode)),
      setModel: (model) => remembered("model", (s) => s.setModel(model)),
      setMaxThinkingTokens: (n, display) => remembered("maxThinkingTokens", (s) => s.setMaxThinkingTokens(n, display)),
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
      setMcpServers: (servers) => remembered("mcpServers", (s) => s.setMcpServers(servers)),
      stopTask: (taskId) => on((s) => s.stopTask(taskId)),
      request: (subtype, payload, o) => on((s) => s.request(subtype, payload, o)),
      permissions: store,
      endInput: Effect.suspend(() => {
        inputEnded = true
        return signal
      })
    }
    return resilient
  })
