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
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { InputClosed, isAgentError, ProcessExited, type StartupFailed } from "../../AgentError.js"
import type { Options } from "../../AgentOptions.js"
import type { Prompt, Session, SessionError, SessionState } from "../../ClaudeAgent.js"
import * as Message from "../../Message.js"
import type { Transport } from "../../Transport.js"
import { oneByOne } from "./handout.js"
import { liveTimeout } from "../transport/liveTimer.js"
import * as Opts from "./options.js"
import * as session from "./make.js"

/** How long closing the session waits for the supervisor to copy out the last messages of the dying process. */
const DRAIN_ON_CLOSE = Duration.seconds(1)

/** The `ProcessExited` behind a start-up failure (its signal included), for the policy and the final error. */
const exitOf = (error: StartupFailed): ProcessExited =>
  isAgentError(error.cause, "ProcessExited") ? error.cause : new ProcessExited({
    code: error.exitCode ?? null,
    signal: null,
    stderrTail: error.stderrTail
  })

/** One CLI process of the session, and the scope it lives in. */
interface Incarnation {
  readonly internal: session.SessionInternal
  readonly scope: Scope.CloseableScope
}

/**
 * What an auto-resumed session knows across its processes, as a value.
 *
 * @internal
 */
export interface Ledger {
  /** Prompts waiting for a process. */
  readonly waiting: ReadonlyArray<Message.UserMessage>
  /** Prompts handed to the current process whose turn has not started (given to the next one if it dies). */
  readonly handed: ReadonlyArray<Message.UserMessage>
  readonly turnRunning: boolean
  /** The session a restarted process resumes. */
  readonly resumeId: string | undefined
  /** The session's scope is closing: no process is started after that. */
  readonly closing: boolean
  /** The caller ended the input: no process is started after that, and `send` fails. */
  readonly inputEnded: boolean
  /** Why the session cannot take prompts any more. */
  readonly failure: SessionError | undefined
  /** The supervisor is copying out the current process's messages (closing waits for it, bounded). */
  readonly pumping: boolean
  /** Processes started to replace one that died. */
  readonly restarts: number
}

/** @internal */
export const ledger = {
  initial: (resumeId: string | undefined): Ledger => ({
    waiting: [],
    handed: [],
    turnRunning: false,
    resumeId,
    closing: false,
    inputEnded: false,
    failure: undefined,
    pumping: false,
    restarts: 0
  }),
  /** A prompt the caller sent. */
  queued: (l: Ledger, prompt: Message.UserMessage): Ledger => ({ ...l, waiting: [...l.waiting, prompt] }),
  /** The first waiting prompt was written to the current process. */
  handedOver: (l: Ledger): Ledger => ({ ...l, waiting: l.waiting.slice(1), handed: [...l.handed, l.waiting[0]!] }),
  /** A message of the current process: `system/init` starts the turn of the first handed prompt. */
  observed: (l: Ledger, m: Message.SdkMessage): Ledger =>
    Message.isSystemInit(m)
      ? { ...l, handed: l.handed.slice(1), turnRunning: true, resumeId: m.session_id }
      : m.type === "result"
      ? { ...l, turnRunning: false }
      : l,
  /** The process died: what it had received but not started goes to the next one. */
  died: (l: Ledger): Ledger => ({ ...l, waiting: [...l.handed, ...l.waiting], handed: [], turnRunning: false }),
  /** Another process is being started to replace the one that died. */
  restarting: (l: Ledger): Ledger => ({ ...l, restarts: l.restarts + 1 }),
  /** Prompts that a process received or will receive and that have no result yet. */
  unanswered: (l: Ledger): boolean => l.handed.length > 0 || l.waiting.length > 0 || l.turnRunning,
  failed: (l: Ledger, failure: SessionError): Ledger => ({ ...l, failure }),
  /** Why `send` fails now, if it does. */
  sendError: (l: Ledger): ProcessExited | InputClosed | undefined =>
    l.inputEnded
      ? new InputClosed({ reason: "InputEnded" })
      : l.failure !== undefined
      ? (isAgentError(l.failure, "ProcessExited") ? l.failure : new InputClosed({ reason: "SessionClosed" }))
      : l.closing
      ? new InputClosed({ reason: "SessionClosed" })
      : undefined
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

/** What the parts of an auto-resumed session share: the one cell of its ledger and its current process. */
interface Context {
  readonly options: Options
  readonly parent: Scope.Scope
  readonly out: Mailbox.Mailbox<Message.SdkMessage, SessionError>
  /** Open when there is something for the sender to do (a prompt, the end of input). */
  readonly wake: Effect.Latch
  readonly cell: MutableRef.MutableRef<Ledger>
  readonly current: MutableRef.MutableRef<Incarnation>
  /** Runtime changes made through the session, applied again (in the order first made) to every new process. */
  readonly changes: Map<string, (s: Session) => Effect.Effect<unknown, unknown>>
  readonly store: session.SessionInternal["permissionStore"]
}

const update = (ctx: Context, f: (l: Ledger) => Ledger): void => {
  MutableRef.set(ctx.cell, f(MutableRef.get(ctx.cell)))
}

const start = (parent: Scope.Scope, opts: Options, store?: session.SessionInternal["permissionStore"]) =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    return yield* session.make(opts, store === undefined ? {} : { permissionStore: store }).pipe(
      Effect.tap((internal) => internal.session.initializationResult),
      Effect.map((internal): Incarnation => ({ internal, scope })),
      Scope.extend(scope),
      Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
    )
  })

/** Hands queued prompts to a process, in order, until it fails. */
const sender = (ctx: Context, inc: Incarnation): Effect.Effect<never> =>
  Effect.gen(function*() {
    while (true) {
      yield* ctx.wake.close
      while (MutableRef.get(ctx.cell).waiting.length > 0) {
        const sent = yield* Effect.either(inc.internal.session.send(MutableRef.get(ctx.cell).waiting[0]!))
        if (sent._tag === "Left") return yield* Effect.never
        update(ctx, ledger.handedOver)
      }
      // after every prompt sent before it, like a plain session's stdin
      if (MutableRef.get(ctx.cell).inputEnded) {
        yield* Effect.ignore(inc.internal.session.endInput)
        return yield* Effect.never
      }
      yield* ctx.wake.await
    }
  })

/** Copies a process's messages out, tracking which handed prompts have started; returns how it ended. */
const pump = (ctx: Context, inc: Incarnation) =>
  inc.internal.session.messages.pipe(
    Stream.runForEach((m) =>
      Effect.suspend(() => {
        update(ctx, (l) => ledger.observed(l, m))
        return Effect.asVoid(ctx.out.offer(m))
      })
    ),
    Effect.exit
  )

/**
 * Starts processes that resume the session, following the schedule, until one starts (then announces it) or the
 * schedule gives up (then fails the stream with the last exit).
 */
const restart = (
  ctx: Context,
  driver: Schedule.ScheduleDriver<unknown, ProcessExited, never>,
  died: ProcessExited,
  interruptedTurn: boolean
): Effect.Effect<boolean, never, Transport> =>
  Effect.gen(function*() {
    let error = died
    while (true) {
      const next = yield* Effect.either(driver.next(error))
      if (next._tag === "Left") {
        update(ctx, (l) => ledger.failed(l, error))
        yield* ctx.out.fail(error)
        return false
      }
      update(ctx, ledger.restarting)
      const resumeId = MutableRef.get(ctx.cell).resumeId
      const restarted = yield* Effect.either(
        start(ctx.parent, {
          ...ctx.options,
          autoResume: undefined,
          continue: undefined,
          forkSession: undefined,
          sessionId: undefined,
          resume: resumeId
        }, ctx.store).pipe(
          // a CLI that exits before `initialize` could even be written can surface as a defect of that write
          Effect.catchSomeDefect((defect) =>
            isAgentError(defect, "ProcessExited") ? Option.some(Effect.fail(defect)) : Option.none()
          )
        )
      )
      if (restarted._tag === "Right") {
        MutableRef.set(ctx.current, restarted.right)
        yield* reapply(ctx, restarted.right.internal.session)
        yield* ctx.out.offer({
          type: "session_restarted",
          attempt: MutableRef.get(ctx.cell).restarts,
          exit: { code: error.code, signal: error.signal },
          stderrTail: error.stderrTail,
          session_id: resumeId ?? "",
          interruptedTurn
        })
        return true
      }
      const startError = restarted.left
      if (startError._tag === "StartupFailed" || startError._tag === "ProcessExited") {
        error = startError._tag === "ProcessExited" ? startError : exitOf(startError)
        continue
      }
      update(ctx, (l) => ledger.failed(l, startError))
      yield* ctx.out.fail(startError)
      return false
    }
  })

const reapply = (ctx: Context, s: Session) =>
  Effect.forEach(ctx.changes, ([key, change]) =>
    change(s).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning(`auto-resume: could not apply ${key} to the restarted CLI`, cause)
      )
    ), { discard: true })

/** Runs each process until it ends, and decides: end the stream, fail it, or restart. */
const supervise = (ctx: Context, policy: Schedule.Schedule<unknown, ProcessExited>) =>
  Effect.gen(function*() {
    const driver = yield* Schedule.driver(policy)
    while (true) {
      const inc = MutableRef.get(ctx.current)
      const senderFiber = yield* Effect.fork(sender(ctx, inc))
      update(ctx, (l) => ({ ...l, pumping: true }))
      const ended = yield* pump(ctx, inc)
      update(ctx, (l) => ({ ...l, pumping: false }))
      yield* Fiber.interrupt(senderFiber)
      const l = MutableRef.get(ctx.cell)
      if (l.closing) return yield* ctx.out.end
      if (Exit.isSuccess(ended)) {
        // a clean end is not restarted, and nothing sent later would be answered
        update(ctx, (l) => ledger.failed(l, new InputClosed({ reason: "SessionClosed" })))
        return yield* ctx.out.end
      }
      const error: SessionError | undefined = Cause.failureOption(ended.cause).pipe(Option.getOrUndefined)
      if (!isAgentError(error, "ProcessExited")) {
        update(ctx, (l) => ledger.failed(l, error ?? new InputClosed({ reason: "SessionClosed" })))
        return yield* ctx.out.failCause(ended.cause)
      }
      if (l.inputEnded) {
        // our own close of stdin: not restarted, but a death that leaves prompts unanswered is not hidden
        update(ctx, (l) => ledger.failed(l, error))
        return yield* (ledger.unanswered(l) ? ctx.out.fail(error) : ctx.out.end)
      }
      const interruptedTurn = l.turnRunning
      update(ctx, ledger.died)
      yield* Scope.close(inc.scope, Exit.void)
      if (!(yield* restart(ctx, driver, error, interruptedTurn))) return
    }
  })

/**
 * A session that survives its CLI dying: a supervisor replaces a process that exited unexpectedly with one that
 * resumes the same session, following the `autoResume` schedule. Prompts are queued until a process takes them; a
 * prompt a dying process had received but not started is given to the next one (the CLI does not have it yet);
 * a prompt whose turn had started is never sent again: the restart event says `interruptedTurn: true` instead
 * (what the resumed CLI keeps of that turn: docs/PROTOCOL-NOTES.md, "Sessions and turns").
 *
 * Not restarted: a death after the session's scope began closing (the stream then ends), a clean exit (code 0; the
 * stream ends and `send` fails with `InputClosed`), and a death after `endInput` (the stream ends, or fails with the
 * `ProcessExited` if prompts were still unanswered). `endInput` itself is queued behind the prompts sent before it.
 *
 * @internal
 */
export const make = (options: Options): Effect.Effect<Session, SessionError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const parent = yield* Effect.scope
    const first = yield* start(parent, { ...options, autoResume: undefined })
    const ctx: Context = {
      options,
      parent,
      out: yield* Mailbox.make<Message.SdkMessage, SessionError>(),
      wake: yield* Effect.makeLatch(false),
      cell: MutableRef.make(ledger.initial(first.internal.session.origin.sessionId)),
      current: MutableRef.make(first),
      changes: new Map(),
      store: first.internal.permissionStore
    }
    // whatever ends the supervisor ends the stream: a reader never waits for a supervisor that is gone
    const supervisor = yield* supervise(ctx, toSchedule(options.autoResume!)).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.suspend(() => {
          const error = Cause.squash(cause)
          update(ctx, (l) =>
            l.failure !== undefined
              ? l
              : ledger.failed(
                l,
                isAgentError(error, "ProcessExited") ? error : new InputClosed({ reason: "SessionClosed" })
              ))
          return ctx.out.failCause(cause)
        })
      ),
      Effect.forkIn(parent)
    )
    // Runs before the supervisor is interrupted: the process ends as a plain session's does, the supervisor copies
    // out what it said last (bounded), and the stream ends, whatever state the supervisor was in.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        update(ctx, (l) => ({ ...l, closing: true }))
        const draining = MutableRef.get(ctx.cell).pumping
        return Scope.close(MutableRef.get(ctx.current).scope, Exit.void).pipe(
          Effect.zipRight(draining ? liveTimeout(Fiber.await(supervisor), DRAIN_ON_CLOSE) : Effect.void),
          Effect.zipRight(Fiber.interrupt(supervisor)),
          Effect.zipRight(ctx.out.end)
        )
      })
    )
    return facade(ctx)
  })

/** The `Session` of an auto-resumed session: prompts go through the ledger, the rest to the current process. */
const facade = (ctx: Context): Session => {
  // handed out one by one, so a reader that stops leaves the rest (like a session's)
  const messages = Stream.repeatEffectOption(oneByOne(ctx.out.takeAll))
  const send = (prompt: Prompt): Effect.Effect<void, ProcessExited | InputClosed> =>
    Effect.suspend(() => {
      const error = ledger.sendError(MutableRef.get(ctx.cell))
      if (error !== undefined) return Effect.fail(error)
      update(ctx, (l) => ledger.queued(l, Opts.userMessage(ctx.options, prompt)))
      return ctx.wake.open
    })
  const on = <A, E>(f: (s: Session) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.suspend(() => f(MutableRef.get(ctx.current).internal.session))
  /** A runtime change (model, permission mode, …) that the next process must get too, remembered once it worked. */
  const remembered = <A, E>(key: string, f: (s: Session) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.tap(on(f), () => Effect.sync(() => ctx.changes.set(key, f)))
  return {
    origin: MutableRef.get(ctx.current).internal.session.origin,
    get pid() {
      return MutableRef.get(ctx.current).internal.session.pid
    },
    sessionId: on((s) => s.sessionId),
    state: Effect.map(
      on((s) => s.state),
      (state): SessionState => (MutableRef.get(ctx.cell).failure !== undefined ? "exited" : state)
    ),
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
    permissions: ctx.store,
    endInput: Effect.suspend(() => {
      update(ctx, (l) => ({ ...l, inputEnded: true }))
      return ctx.wake.open
    })
  }
}
