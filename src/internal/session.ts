/** @internal */
import * as Cause from "effect/Cause"
import type * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import {
  IdleTimeout,
  InterruptTimeout,
  InvalidOptions,
  ProcessExited,
  ProtocolViolation,
  SessionNotFound,
  StartupFailed
} from "../AgentError.js"
import type { Options } from "../AgentOptions.js"
import type {
  ControlMethodError,
  Prompt,
  Session,
  SessionError,
  SessionState,
  StartedQuery
} from "../ClaudeAgent.js"
import * as ControlProtocol from "../ControlProtocol.js"
import * as Message from "../Message.js"
import { Transport } from "../Transport.js"
import * as ProtocolInternal from "./controlProtocol.js"
import { compiledGuard } from "./decode.js"
import { collectExtensions } from "./extensions.js"
import { oneByOne } from "./handout.js"
import * as Opts from "./options.js"
import { protectArgs } from "./argv.js"
import { liveTimeout } from "./liveTimer.js"
import type { InternalStore } from "./permissions.js"
import { resolveOrigin } from "./origin.js"
import * as PromptSource from "./promptSource.js"

const DRAIN_AFTER_LAST_RESULT = Duration.seconds(2)
const IDLE_AFTER_RESULT = Duration.seconds(1)
const DEFAULT_IDLE_TIMEOUT = Duration.minutes(10)
const DEFAULT_FIRST_MESSAGE_TIMEOUT = Duration.seconds(60)
const DEFAULT_STARTUP_TIMEOUT = Duration.seconds(60)
const WATCHDOG_TICK = Duration.seconds(1)

const decodeResponse = <A, I>(schema: Schema.Schema<A, I>, subtype: string) => {
  // `Schema.is`, compiled once per schema (the plain one took ~40 µs per initialize answer)
  const is = compiledGuard(schema)
  return (u: unknown): Effect.Effect<A, ProtocolViolation> =>
    is(u) ? Effect.succeed(u) : Effect.fail(
      new ProtocolViolation({ reason: `unexpected response to ${subtype}: ${JSON.stringify(u)?.slice(0, 500)}` })
    )
}

/** A timeout option: a `Duration` input, or `"infinity"` (no timeout). Anything else is `InvalidOptions`. */
const decodeTimeout = (
  option: string,
  input: Duration.DurationInput | "infinity" | undefined,
  fallback: Duration.Duration
): Effect.Effect<Duration.Duration, InvalidOptions> => {
  if (input === undefined) return Effect.succeed(fallback)
  if (input === "infinity") return Effect.succeed(Duration.infinity)
  return Effect.try({
    try: () => Duration.decode(input),
    catch: () => new InvalidOptions({ option, reason: `not a duration: ${String(input)}` })
  })
}

/** Internal handles of a session, shared by `session` and `query`. @internal */
export interface SessionInternal {
  readonly session: Session
  readonly protocol: ProtocolInternal.Owned
  /** Fails when the session cannot go on (e.g. `initialize` failed). */
  readonly fatal: Effect.Effect<never, SessionError>
  /**
   * Why the session could not go on, once `fatal` has failed and the watcher saw it. Its message buffer was ended if
   * the CLI was still running: a reader whose messages end normally fails with this.
   */
  readonly stoppedBy: () => SessionError | undefined
  /** Waits (bounded) for the CLI to report idle when a turn has just ended. */
  readonly settleAfterResult: Effect.Effect<void>
  /** The session's permission store (shared by every process of an auto-resumed session). */
  readonly permissionStore: InternalStore
  /** Turns a `ProcessExited` the SDK caused or can explain into the real reason (`SessionNotFound`, `IdleTimeout`…). */
  readonly refine: <E>(error: E) => E | SessionNotFound | IdleTimeout | StartupFailed
  /**
   * `refine` for a message stream that failed because the CLI is gone: it waits for `initialize` to have its outcome
   * (answered, or failed with the exit), which it has or gets at once by then; `refine` depends on it, and the fiber
   * that records it may not have run yet.
   */
  readonly refineExited: (error: ProcessExited) => Effect.Effect<SessionError>
  /** Number of `result` messages seen so far. */
  readonly resultCount: () => number
  readonly lastResult: () => Message.ResultMessage | undefined
  /** Registers a callback run (synchronously, on the reader) after every `result`. */
  readonly onResult: (f: () => void) => void
}

/** @internal */
export const make = (
  requested: Options = {},
  internals: { readonly permissionStore?: InternalStore } = {}
): Effect.Effect<SessionInternal, SessionError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    yield* Opts.validate(requested)
    const { options, origin } = resolveOrigin(requested)
    const startupLimit = yield* decodeTimeout("initializeTimeout", options.initializeTimeout, DEFAULT_STARTUP_TIMEOUT)
    const controlLimit = yield* decodeTimeout("controlRequestTimeout", options.controlRequestTimeout, Duration.seconds(60))
    const idleLimit = yield* decodeTimeout("idleTimeout", options.idleTimeout, DEFAULT_IDLE_TIMEOUT)
    const firstLimit = yield* decodeTimeout(
      "firstMessageTimeout",
      options.firstMessageTimeout,
      DEFAULT_FIRST_MESSAGE_TIMEOUT
    )
    const extensions = yield* collectExtensions(options, internals.permissionStore)
    const launch = yield* Opts.launchOf(options, extensions)
    const transport = yield* Transport
    const args = yield* protectArgs(launch.args)
    const clock = yield* Effect.clock
    // start-up is bounded as a whole (`initializeTimeout`), from here to the answer to `initialize`: finding the
    // executable, the `--version` check and the spawn (phase "spawn"), then the CLI's first line and its answer
    const startedAt = clock.unsafeCurrentTimeMillis()
    const startupMillis = Duration.toMillis(startupLimit)
    const open = transport.open({
      args,
      env: launch.env,
      envMode: options.envMode,
      keepEnv: options.keepEnv,
      cwd: options.cwd,
      executable: options.pathToClaudeCodeExecutable,
      executableArgs: options.executableArgs,
      onStderr: options.stderr,
      maxLineBytes: options.maxLineBytes,
      closeGraceMillis: options.closeGraceMillis,
      killGraceMillis: options.killGraceMillis,
      reapToolProcesses: options.reapToolProcesses,
      cliVersions: options.cliVersions
    })
    const connection = yield* (Duration.isFinite(startupLimit)
      ? Effect.timeoutFail(open, {
        duration: startupLimit,
        onTimeout: () =>
          new StartupFailed({
            phase: "spawn",
            reason:
              `the CLI was not started within ${startupMillis} ms (finding it, checking its version, spawning it)`,
            stderrTail: ""
          })
      })
      : open)

    let status: SessionState = "starting"
    let sessionId: string | undefined = origin.sessionId
    const sessionIdKnown = yield* Deferred.make<string, SessionError>()
    if (sessionId !== undefined) yield* Deferred.succeed(sessionIdKnown, sessionId)
    // a resume of a session that does not exist ends with this result, then exit 1 (initialize is never answered)
    let notFound: SessionNotFound | undefined
    // why the SDK ended the process itself (the ProcessExited that follows is only a consequence)
    let endedBySdk: IdleTimeout | StartupFailed | undefined
    let initializeAnswered = false
    const refine = <E>(error: E): E | SessionNotFound | IdleTimeout | StartupFailed => {
      if (!(error instanceof ProcessExited)) return error
      const reason = notFound ?? endedBySdk
      if (reason !== undefined) return reason
      // the CLI died before it answered initialize: that is a start-up failure, whoever sees it first
      return initializeAnswered ? error : new StartupFailed({
        phase: protocol.framesReceived() > 0 ? "initializeAck" : "firstLine",
        // the tail is a field of its own: the message adds it once
        reason: error.summary,
        exitCode: error.code,
        stderrTail: error.stderrTail,
        cause: error
      })
    }
    let commands: ReadonlyArray<Message.SlashCommand> | undefined
    let results = 0
    let lastResult: Message.ResultMessage | undefined
    const resultCallbacks: Array<() => void> = []
    // the CLI needs a moment after a result before it is idle; stdin closed in that window costs it ~2 s to exit
    let lastWasResult = false
    // older CLIs (before session_state_changed) never report idle: do not wait for it
    let reportsState = false
    let promptsSent = 0
    let turnsRequested = 0
    // SDK messages seen, and how many had been seen when the last prompt was sent (first-message detection)
    let sdkMessages = 0
    let messagesAtSend = 0
    let idleWaiters: Array<Deferred.Deferred<void>> = []
    // when the CLI last wrote an SDK message or the SDK last sent a prompt (per the Effect `Clock`)
    let lastEventAt = startedAt
    // the CLI's `system/init` named another session than the one expected: logged from a fiber of its own, with the
    // session's logger and annotations (a rare event: no fiber waits for it)
    const runtime = yield* Effect.runtime<never>()
    const reportOtherId = (expected: string, actual: string) =>
      Runtime.runFork(runtime)(
        Effect.logWarning(
          `the CLI runs session ${actual}, not ${expected} as expected; Session.sessionId now reports ${actual}`
        ).pipe(Effect.annotateLogs({ expected, actual, originKind: origin.kind, requested: origin.requested ?? "" }))
      )

    const onMessage = (m: Message.SdkMessage): boolean => {
      sdkMessages++
      lastEventAt = clock.unsafeCurrentTimeMillis()
      if (!extensions.onMessage(m)) return false
      if (sessionId === undefined && "session_id" in m && typeof m.session_id === "string" && m.session_id !== "") {
        sessionId = m.session_id
        Deferred.unsafeDone(sessionIdKnown, Effect.succeed(m.session_id))
      }
      switch (m.type) {
        case "system":
          if (m.subtype === "session_state_changed") {
            status = m.state
            reportsState = true
            if (m.state === "idle") {
              lastWasResult = false
              for (const waiter of idleWaiters) Deferred.unsafeDone(waiter, Effect.void)
              idleWaiters = []
            }
            return m.sdk_host_only !== true
          }
          lastWasResult = false
          // the CLI has the last word on the id (e.g. a resume it chose to fork)
          if (m.subtype === "init") {
            if (sessionId !== undefined && m.session_id !== sessionId) {
              reportOtherId(sessionId, m.session_id)
            }
            sessionId = m.session_id
          } else if (m.subtype === "commands_changed") commands = m.commands
          return true
        case "result":
          if (m.subtype === "error_during_execution" && results === 0) {
            const reason = m.errors.find((e) => e.startsWith("No conversation found"))
            if (reason !== undefined) notFound = new SessionNotFound({ sessionId: origin.requested ?? m.session_id, reason })
          }
          results++
          lastResult = m
          lastWasResult = true
          for (const f of resultCallbacks) f()
          return true
        default:
          lastWasResult = false
          return true
      }
    }

    /** Waits (bounded) for the CLI to report idle when a turn has just ended. */
    const awaitIdle: Effect.Effect<void> = Effect.flatMap(Deferred.make<void>(), (waiter) => {
      idleWaiters.push(waiter)
      return Effect.asVoid(liveTimeout(Deferred.await(waiter), IDLE_AFTER_RESULT))
    })
    const settleAfterResult: Effect.Effect<void> = Effect.suspend(() =>
      !lastWasResult || status === "idle" || !reportsState ? Effect.void : awaitIdle
    )

    const protocol = yield* ProtocolInternal.make(connection, {
      handlers: extensions.handlers,
      requestTimeout: controlLimit,
      bufferSize: options.messageBufferSize,
      onMessage
    })

    yield* extensions.onProtocol(protocol)
    // Closing stdin mid-turn (or right after a result) costs the CLI ~2 s to exit, SIGTERM included; interrupting a
    // running turn first and waiting for idle lets it exit in tens of milliseconds.
    const settleBeforeClose: Effect.Effect<void> = Effect.flatMap(connection.exitStatus, (exit) => {
      if (Option.isSome(exit)) return Effect.void
      const busy = !lastWasResult &&
        (status === "running" || status === "requires_action" || (status === "starting" && promptsSent > 0))
      if (!busy) return settleAfterResult
      return liveTimeout(protocol.request("interrupt", {}, { timeout: Duration.infinity }), IDLE_AFTER_RESULT).pipe(
        Effect.ignore,
        Effect.zipRight(Effect.suspend(() => (status === "idle" || !reportsState ? Effect.void : awaitIdle)))
      )
    })
    // runs before the transport's own finalizer (registered earlier): let the turn settle first. It must stay
    // uninterruptible: when the scope closes because its fiber was interrupted, an interruptible region here would
    // end at once and skip the settling (every wait inside is bounded on the wall clock).
    yield* Effect.addFinalizer(() => settleBeforeClose)

    const fatal = yield* Deferred.make<never, SessionError>()
    if (extensions.failure !== undefined) {
      yield* extensions.failure.pipe(Effect.catchAll((error) => Deferred.fail(fatal, error)), Effect.forkScoped)
    }
    const initialized = yield* Deferred.make<Message.InitializeResponse, SessionError>()
    // written before anything else the session sends; answered later, within what is left of the start-up bound.
    // A CLI gone already (it exited at once) cannot be written to: the start-up failure below reports why.
    const initialize = yield* protocol.begin("initialize", launch.initialize, {
      timeout: Duration.isFinite(startupLimit)
        ? Duration.millis(Math.max(0, startupMillis - (clock.unsafeCurrentTimeMillis() - startedAt)))
        : Duration.infinity
    }).pipe(
      Effect.catchAll((error) =>
        Effect.succeed<Effect.Effect<unknown, ControlProtocol.RequestError>>(Effect.fail(error))
      )
    )
    const startupFailed = (error: ControlProtocol.RequestError | ProtocolViolation) =>
      Effect.gen(function*() {
        const refined = refine(error)
        if (refined._tag === "SessionNotFound") return yield* Effect.fail(refined)
        const failure = new StartupFailed({
          phase: protocol.framesReceived() > 0 ? "initializeAck" : "firstLine",
          reason: error._tag === "ControlTimeout"
            ? `no answer to initialize within ${startupMillis} ms`
            : error._tag === "ProcessExited"
            ? error.summary
            : error.message,
          ...(error._tag === "ProcessExited" ? { exitCode: error.code } : {}),
          stderrTail: yield* connection.stderrTail,
          cause: error
        })
        endedBySdk = failure
        yield* connection.kill
        return yield* Effect.fail(failure)
      })
    yield* initialize.pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          initializeAnswered = true
        })
      ),
      Effect.flatMap(decodeResponse(Message.InitializeResponse, "initialize")),
      Effect.catchAll(startupFailed),
      Effect.tap((response) => extensions.onInitialized(response)),
      Effect.mapError(refine),
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.zipRight(
          Deferred.done(initialized, exit),
          exit._tag === "Failure" ? Deferred.failCause(fatal, exit.cause) : Effect.void
        )
      ),
      Effect.withSpan("Session.initialize"),
      Effect.forkScoped
    )
    // the idle watchdog: silence in the middle of a turn, while the SDK owes the CLI nothing, is a hang
    if (Duration.isFinite(idleLimit) || Duration.isFinite(firstLimit)) {
      yield* Effect.gen(function*() {
        let seen = -1
        let lastActivity = yield* Clock.currentTimeMillis
        let previousTick = lastActivity
        while (true) {
          yield* Effect.sleep(WATCHDOG_TICK)
          const now = yield* Clock.currentTimeMillis
          const frames = protocol.framesReceived()
          const activity = frames + promptsSent
          const owed = yield* protocol.inFlightCount
          if (activity !== seen || turnsRequested <= results || owed > 0) {
            seen = activity
            // the exact time when a message or a prompt is what changed; else (control frames) this tick's
            lastActivity = lastEventAt >= previousTick ? lastEventAt : now
            previousTick = now
            continue
          }
          previousTick = now
          const kind = sdkMessages === messagesAtSend ? "firstMessage" : "idle"
          const limit = kind === "firstMessage" ? firstLimit : idleLimit
          if (!Duration.isFinite(limit) || now - lastActivity < Duration.toMillis(limit)) continue
          const error = new IdleTimeout({
            lastEventAt: lastActivity,
            timeoutMillis: Duration.toMillis(limit),
            kind,
            stderrTail: yield* connection.stderrTail
          })
          endedBySdk = error
          yield* Deferred.fail(fatal, error)
          yield* connection.kill
          return
        }
      }).pipe(Effect.forkScoped)
    }

    // when the CLI is gone, whoever waits for the session id learns why (no one waits for an id known already, e.g.
    // one the SDK assigned)
    if (!(yield* Deferred.isDone(sessionIdKnown))) {
      yield* connection.awaitExit.pipe(
        Effect.flatMap((exit) =>
          Effect.flatMap(connection.stderrTail, (stderrTail) =>
            Deferred.fail(
              sessionIdKnown,
              refine(new ProcessExited({ code: exit.code, signal: exit.signal, stderrTail }))
            ))
        ),
        Effect.forkScoped
      )
    }

    const interruptTimeout = options.interruptTimeout ?? "5 seconds"
    const request = (
      subtype: string,
      payload?: Readonly<Record<string, unknown>>,
      requestOptions?: ControlProtocol.RequestOptions
    ): Effect.Effect<unknown, ControlMethodError> => protocol.request(subtype, payload, requestOptions)

    const typed = <A, I>(
      schema: Schema.Schema<A, I>,
      subtype: string,
      payload?: Readonly<Record<string, unknown>>
    ): Effect.Effect<A, ControlMethodError> =>
      Effect.flatMap(request(subtype, payload), decodeResponse(schema, subtype)).pipe(
        Effect.withSpan(`Session.${subtype}`)
      )

    const unit = (subtype: string, payload?: Readonly<Record<string, unknown>>) =>
      Effect.asVoid(request(subtype, payload)).pipe(Effect.withSpan(`Session.${subtype}`))

    // When the session cannot go on, its readers get what is buffered and then the reason. No `Stream.interruptWhen`
    // per reader: it forks and races on every pull, i.e. on every message here (about 60 KB of allocation each).
    // A CLI still running has its message buffer ended; one already gone ends the stream by itself once everything
    // it wrote has been read (frames are read as they are pulled: ending the buffer would lose them), and a failed
    // stream reports its own refined reason.
    let stoppedBy: SessionError | undefined
    yield* Deferred.await(fatal).pipe(
      Effect.catchAll((error) =>
        Effect.flatMap(connection.exitStatus, (exit) => {
          stoppedBy ??= error
          return Option.isSome(exit) ? Effect.void : protocol.endMessages
        })
      ),
      Effect.forkScoped
    )
    const whenStopped = Stream.suspend(() => (stoppedBy === undefined ? Stream.empty : Stream.fail(stoppedBy)))
    const refineExited = (error: ProcessExited): Effect.Effect<SessionError> =>
      Effect.zipRight(Effect.exit(Deferred.await(initialized)), Effect.sync(() => refine(error)))
    const messages: Stream.Stream<Message.SdkMessage, SessionError> = Stream.repeatEffectOption(
      oneByOne(protocol.takeMessages)
    ).pipe(
      Stream.catchAll((error) => Stream.fromEffect(Effect.flip(refineExited(error)))),
      Stream.concat(whenStopped)
    )

    // a turn ends with its result; the result of a resume the CLI could not find fails the turn after it is handed
    // out (as `query` does), rather than ending it normally
    const turnMessages = messages.pipe(
      Stream.takeUntil(Message.isResultMessage),
      Stream.concat(Stream.suspend(() => (notFound !== undefined ? Stream.fail(notFound) : Stream.empty)))
    )

    const send = (prompt: Prompt) =>
      Effect.zipRight(
        protocol.send(Opts.userMessage(options, prompt)),
        Effect.sync(() => {
          promptsSent++
          if (typeof prompt === "string" || prompt.shouldQuery !== false) turnsRequested++
          messagesAtSend = sdkMessages
          lastEventAt = clock.unsafeCurrentTimeMillis()
        })
      )

    const initializationResult = Deferred.await(initialized)

    const session: Session = {
      origin,
      pid: connection.pid,
      sessionId: Effect.suspend(() => (sessionId !== undefined ? Effect.succeed(sessionId) : Deferred.await(sessionIdKnown))),
      state: Effect.map(connection.exitStatus, (exit) => (Option.isSome(exit) ? "exited" : status)),
      send: (prompt) => send(prompt).pipe(Effect.withSpan("Session.send")),
      messages,
      turn: (prompt) =>
        Stream.unwrap(send(prompt).pipe(
          Effect.as(turnMessages),
          // the CLI was gone before the prompt could be written (e.g. a resume it could not find): what it wrote
          // before it exited says why, else the exit does
          Effect.catchTag("ProcessExited", (error) =>
            Effect.succeed(Stream.concat(turnMessages, Stream.fromEffect(Effect.flip(refineExited(error))))))
        )).pipe(Stream.withSpan("Session.turn")),
      interrupt: Effect.flatMap(
        request("interrupt", {}, { timeout: interruptTimeout }).pipe(
          Effect.catchTag("ControlTimeout", (e) => Effect.fail(new InterruptTimeout({ timeoutMillis: e.timeoutMillis })))
        ),
        (u) =>
        u === undefined ? Effect.succeed({}) : decodeResponse(Message.InterruptResponse, "interrupt")(u)).pipe(
          Effect.withSpan("Session.interrupt")
        ),
      setPermissionMode: (mode) =>
        Effect.map(
          typed(Schema.UndefinedOr(Schema.Struct({ mode: Schema.optional(Schema.String) })), "set_permission_mode", {
            mode
          }),
          (response) => Option.fromNullable(response?.mode)
        ),
      setModel: (model) => unit("set_model", { model: model ?? "default" }),
      setMaxThinkingTokens: (maxThinkingTokens, display) =>
        unit("set_max_thinking_tokens", {
          max_thinking_tokens: maxThinkingTokens,
          ...(display !== undefined ? { thinking_display: display } : {})
        }),
      initializationResult,
      supportedCommands: Effect.map(initializationResult, (init) => commands ?? init.commands),
      supportedModels: Effect.map(initializationResult, (init) => init.models),
      supportedAgents: Effect.map(initializationResult, (init) => init.agents),
      accountInfo: Effect.map(initializationResult, (init) => init.account),
      mcpServerStatus: Effect.flatMap(
        typed(Schema.Struct({ mcpServers: Schema.Array(Message.McpServerStatus) }), "mcp_status"),
        (response) => extensions.mcpServers.status(response.mcpServers)
      ),
      getContextUsage: (opts) =>
        typed(Message.ContextUsage, "get_context_usage", opts?.detail !== undefined ? { detail: opts.detail } : {}),
      rewindFiles: (userMessageId, opts) =>
        typed(Message.RewindFilesResult, "rewind_files", {
          user_message_id: userMessageId,
          dry_run: opts?.dryRun ?? false
        }),
      reconnectMcpServer: (serverName) =>
        unit("mcp_reconnect", { serverName }).pipe(
          Effect.catchTag("ControlError", (error) =>
            Effect.fail(extensions.mcpServers.reconnectFailed(serverName, error)))
        ),
      toggleMcpServer: (serverName, enabled) => unit("mcp_toggle", { serverName, enabled }),
      setMcpServers: (servers) =>
        Effect.zipRight(
          Opts.validateMcpServers(servers),
          extensions.mcpServers.set(servers, (wire) =>
            typed(Message.McpSetServersResult, "mcp_set_servers", { servers: wire }))
        ).pipe(Effect.withSpan("Session.setMcpServers")),
      stopTask: (taskId) => unit("stop_task", { task_id: taskId }),
      request: (subtype, payload, requestOptions) =>
        request(subtype, payload, requestOptions?.timeout !== undefined ? { timeout: requestOptions.timeout } : {})
          .pipe(Effect.withSpan(`Session.request.${subtype}`)),
      permissions: extensions.permissionStore,
      endInput: Effect.zipRight(settleAfterResult, protocol.endInput)
    }

    return {
      session,
      protocol,
      fatal: Deferred.await(fatal),
      stoppedBy: () => stoppedBy,
      settleAfterResult,
      permissionStore: extensions.permissionStore,
      refine,
      refineExited,
      resultCount: () => results,
      lastResult: () => lastResult,
      onResult: (f) => {
        resultCallbacks.push(f)
      }
    }
  })

/**
 * A query whose messages ended without an error: fine, unless the CLI exited (with code 0) without a result before it
 * answered `initialize` — then that failure, which is known at once once the CLI is gone.
 */
const endedCleanly = (s: SessionInternal): Effect.Effect<void, SessionError> =>
  Effect.flatMap(s.protocol.connection.exitStatus, (exit) =>
    Option.isNone(exit) || s.resultCount() > 0 ? Effect.void : Effect.asVoid(s.session.initializationResult))

/** @internal */
export const session = (options: Options = {}): Effect.Effect<Session, SessionError, Transport | Scope.Scope> =>
  (options.autoResume !== undefined
    ? Effect.flatMap(Effect.promise(() => import("./resilient.js")), (resilient) => resilient.make(options))
    : Effect.map(make(options), (s) => s.session)).pipe(Effect.withSpan("ClaudeAgent.session"))

/**
 * Feeds a prompt (a string or a stream of prompts) into a session and returns the pull of its messages until the CLI
 * has answered every prompt: after the last `result` stdin is closed, and the messages end when the CLI exits
 * (bounded). The Promise API pulls it directly; {@link drive} gives it as a Stream.
 *
 * @internal
 */
export const drivePull = <E, R>(
  s: SessionInternal,
  prompt: string | Stream.Stream<Prompt, E, R>
): Effect.Effect<MessagePull<E>, SessionError, R | Scope.Scope> =>
  Effect.gen(function*() {
    let expected = 0
    let inputDone = false
    const finished = yield* Deferred.make<void>()
    const check = () => {
      if (inputDone && s.resultCount() >= expected) Deferred.unsafeDone(finished, Effect.void)
    }
    s.onResult(check)

    // The other reasons to stop (the session's own watcher handles `fatal`, see `stoppedBy`) end the protocol's
    // message buffer once what it holds is handed out, and say how the stream ends. No per-chunk
    // `Stream.interruptWhen`: it costs every chunk a forked pull and a race (about 60 KB of allocation), and a stream
    // of small chunks (the CLI pausing at every can_use_tool) pays it thousands of times.
    let stoppedBy: SessionError | E | undefined
    const stop = (error?: SessionError | E) =>
      Effect.suspend(() => {
        // the first reason wins: a session that could not go on before the input failed reports that
        if (error !== undefined) stoppedBy ??= s.stoppedBy() ?? error
        return s.protocol.endMessages
      })
    // the CLI was gone before the prompt could be sent (e.g. a resume of a session that does not exist): the
    // stream reports why once it has read everything the CLI wrote, not the bare exit
    let sendFailed: ProcessExited | undefined
    if (typeof prompt === "string") {
      yield* s.session.send(prompt).pipe(
        Effect.catchTag("ProcessExited", (error) =>
          Effect.sync(() => {
            sendFailed = error
          }))
      )
      expected = 1
      inputDone = true
    } else {
      const inputFailed = yield* Deferred.make<never, E | SessionError>()
      let index = 0
      // The caller's stream is read on a fiber that the end of the query interrupts without waiting for it: its
      // release is the caller's code (e.g. the `return()` of a generator suspended at an `await`, which settles only
      // once the generator resumes) and must not hold up reaping the CLI.
      const reader = yield* prompt.pipe(
        Stream.runForEach((p): Effect.Effect<void, SessionError> => {
          const invalid = PromptSource.invalidItem(p, index++)
          if (invalid !== undefined) return Effect.fail(invalid)
          return Effect.zipRight(
            s.session.send(p),
            Effect.sync(() => {
              if (typeof p === "string" || p.shouldQuery !== false) expected++
            })
          )
        }),
        Effect.zipRight(Effect.sync(() => {
          inputDone = true
          check()
        })),
        Effect.catchAllCause((cause: Cause.Cause<E | SessionError>) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) return Deferred.fail(inputFailed, failure.value)
          // a stream that died fails the query with a typed error; interrupted, it was the query that ended
          return Cause.isInterruptedOnly(cause)
            ? Effect.void
            : Deferred.fail(inputFailed, PromptSource.died(cause))
        }),
        Effect.forkDaemon
      )
      yield* Effect.addFinalizer(() => Fiber.interruptFork(reader))
      yield* Deferred.await(inputFailed).pipe(Effect.catchAll(stop), Effect.forkScoped)
    }
    // after the last result: stdin closes, and the stream ends when the CLI exits, or after a bounded drain
    yield* Deferred.await(finished).pipe(Effect.zipRight(s.session.endInput), Effect.forkScoped)
    yield* Deferred.await(finished).pipe(
      Effect.zipRight(Effect.sleep(DRAIN_AFTER_LAST_RESULT)),
      Effect.zipRight(stop()),
      Effect.forkScoped
    )

    // How the messages end: after the CLI's stdout failed with `error`, `undefined` when that is a clean end (the
    // reasons to stop, below, still apply), else the error to fail with.
    const ended = Deferred.isDone(finished)
    const afterExit = (error: ProcessExited): Effect.Effect<SessionError | undefined> =>
      Effect.zipWith(s.refineExited(error), ended, (refined, isEnded) => {
        if (refined._tag === "SessionNotFound") return refined
        // exit 1 after stdin closed following an error result is how the CLI reports that result
        const last = s.lastResult()
        if (isEnded && error.code !== null && (error.code === 0 || (error.code === 1 && last?.is_error))) {
          return undefined
        }
        return refined
      })
    // once the messages ended cleanly: why they stopped, if something stopped them
    const stoppedReason = (): SessionError | E | undefined => {
      const reason = stoppedBy ?? s.stoppedBy()
      if (reason !== undefined) return reason
      if (sendFailed !== undefined) return s.refine(sendFailed)
      return undefined
    }

    // the one reader of the query's messages, chunk by chunk; `drive` gives it as a Stream
    let phase: "messages" | "end" | "done" = "messages"
    const end: MessagePull<E> = Effect.suspend(() => {
      phase = "done"
      const reason = stoppedReason()
      if (reason !== undefined) return Effect.fail(Option.some(reason))
      return Effect.zipRight(Effect.mapError(endedCleanly(s), Option.some), Effect.fail(Option.none()))
    })
    const pull: MessagePull<E> = Effect.suspend(() => {
      if (phase === "done") return Effect.fail(Option.none())
      if (phase === "end") return end
      return Effect.catchAll(s.protocol.pullMessages, (error) => {
        if (error._tag === "None") return end
        phase = "done"
        return Effect.flatMap(afterExit(error.value), (failure) => {
          if (failure !== undefined) return Effect.fail(Option.some(failure))
          phase = "end"
          return end
        })
      })
    })
    return pull
  })

/**
 * A driven query's messages, chunk by chunk, as `Stream.toPull` would give them: fails with `None` at the end.
 *
 * @internal
 */
export type MessagePull<E> = Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<SessionError | E>>

/**
 * {@link drivePull} as a Stream (single consumer).
 *
 * @internal
 */
export const drive = <E, R>(
  s: SessionInternal,
  prompt: string | Stream.Stream<Prompt, E, R>
): Effect.Effect<Stream.Stream<Message.SdkMessage, SessionError | E>, SessionError, R | Scope.Scope> =>
  Effect.map(drivePull(s, prompt), (pull) => Stream.repeatEffectChunkOption(pull))

/** @internal */
export const query = <E = never, R = never>(
  prompt: string | Stream.Stream<Prompt, E, R>,
  options: Options = {}
): Stream.Stream<Message.SdkMessage, SessionError | E, Transport | R> =>
  Stream.unwrapScoped(Effect.flatMap(make(options), (s) => drive(s, prompt))).pipe(
    // the span covers the whole query, start-up to the last message
    Stream.withSpan("ClaudeAgent.query")
  )

/** @internal */
export const queryWithOrigin = <E = never, R = never>(
  prompt: string | Stream.Stream<Prompt, E, R>,
  options: Options = {}
): Effect.Effect<StartedQuery<E, R>, SessionError, Transport | Scope.Scope> =>
  Effect.map(make(options), (s): StartedQuery<E, R> => ({
    origin: s.session.origin,
    pid: s.session.pid,
    sessionId: s.session.sessionId,
    messages: Stream.unwrapScoped(drive(s, prompt)).pipe(Stream.withSpan("ClaudeAgent.query"))
  })).pipe(Effect.withSpan("ClaudeAgent.queryWithOrigin"))
