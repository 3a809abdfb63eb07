/** @internal */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import { InputClosed, InvalidOptions } from "../../AgentError.js"
import type * as AgentOptions from "../../AgentOptions.js"
import type * as Elicitation from "../../Elicitation.js"
import * as Hooks from "../../Hooks.js"
import type * as Message from "../../Message.js"
import * as NodeClaudeAgent from "../../NodeClaudeAgent.js"
import * as Permissions from "../../Permissions.js"
import type * as Transport from "../../Transport.js"
import type { CanUseTool, HookCallbackMatcher, OnElicitation, Options, Query, WarmQuery } from "../../promise.js"
import * as HooksInternal from "../rules/hooks.js"
import * as Opts from "../session/options.js"
import * as PermissionsInternal from "../rules/permissions.js"
import * as PromiseLogger from "./promiseLogger.js"
import * as PromptSource from "../session/promptSource.js"
import * as session from "../session/session.js"
import * as SessionStoreOptions from "../transcript/promiseOptions.js"

/** @internal */
export class AbortError extends Error {
  constructor(message = "Claude Code process aborted by user") {
    super(message)
    this.name = "AbortError"
  }
}

/** The real error of a failed Exit: the SDK's tagged error (not a FiberFailure), or the defect. */
const squash = (cause: Cause.Cause<unknown>, aborted: boolean): unknown => {
  if (aborted && Cause.isInterruptedOnly(cause)) return new AbortError()
  return Cause.squash(cause)
}

const noDecision: Permissions.PermissionResult = { behavior: "deny", message: "canUseTool returned no decision" }

/**
 * The official-style callback as a Promise policy: the session calls it directly, without a fiber of its own. The
 * signal it gets is the request's, built only if the callback reads it (an `AbortController` per request was a large
 * share of a permission round trip); `null` (the official "answered out of band") has no channel here: fail closed.
 */
const permissionsService = (canUseTool: CanUseTool, timeout: number | undefined): Permissions.Service =>
  PermissionsInternal.makePromise(
    (request) => {
      const options = {
        get signal(): AbortSignal {
          return request.signal
        },
        suggestions: request.suggestions,
        toolUseID: request.toolUseId,
        requestId: request.requestId,
        ...(request.blockedPath !== undefined ? { blockedPath: request.blockedPath } : {}),
        ...(request.decisionReason !== undefined ? { decisionReason: request.decisionReason } : {}),
        ...(request.title !== undefined ? { title: request.title } : {}),
        ...(request.displayName !== undefined ? { displayName: request.displayName } : {}),
        ...(request.description !== undefined ? { description: request.description } : {}),
        ...(request.agentId !== undefined ? { agentID: request.agentId } : {}),
        ...(request.mcpServer !== undefined ? { mcpServer: request.mcpServer } : {})
      }
      // `await`-like: a callback that returns its decision without a Promise is accepted too
      return Promise.resolve(canUseTool(request.toolName, request.input as Record<string, unknown>, options)).then(
        (result) => result === null || result === undefined ? noDecision : result
      )
    },
    timeout !== undefined ? { timeout: Duration.millis(timeout) } : undefined
  )

const hooksLayer = (
  hooks: Partial<Record<Hooks.HookEvent, ReadonlyArray<HookCallbackMatcher>>>
): Layer.Layer<Hooks.Hooks> => {
  const registrations: Record<string, Array<Hooks.HookMatcher>> = {}
  for (const [event, matchers] of Object.entries(hooks)) {
    if (matchers === undefined) continue
    registrations[event] = matchers.map((m) => ({
      matcher: m.matcher,
      timeout: m.timeout,
      onFailure: m.onFailure,
      // called directly by the session, without a fiber of its own (see hooks.ts)
      hooks: m.hooks.map((callback) =>
        HooksInternal.fromPromise((input, toolUseId, options) => callback(input, toolUseId, options))
      )
    }))
  }
  return Hooks.layer(registrations as Hooks.HookRegistrations)
}

/** Why `value` is not a timeout in milliseconds (a number ≥ 0; `Infinity`: none), if it is not. */
const notMillis = (value: unknown): string | undefined =>
  typeof value === "number" && !Number.isNaN(value) && value >= 0
    ? undefined
    : `${String(value)} is not a number of milliseconds ≥ 0 (Infinity: no timeout)`

/**
 * The official SDK's options this SDK does not implement, and values it cannot take, each with why (`undefined`: this
 * value is fine). Passing one (from plain JavaScript, or through a cast) fails the query with `InvalidOptions` naming
 * it, rather than being silently ignored. An option set to `undefined` counts as not passed.
 */
const unsupportedOptions: Readonly<Record<string, (value: unknown) => string | undefined>> = {
  executable: (value) =>
    value === "node"
      ? undefined
      : `${JSON.stringify(value)} is not supported: a JavaScript CLI (.js/.mjs/.cjs) is always run with the current ` +
        `Node executable (executable: "node"); for another runtime, set pathToClaudeCodeExecutable to a native ` +
        `binary or a wrapper script`,
  spawnClaudeCodeProcess: () =>
    "a custom spawn function is not supported; pass options.transport (a Transport layer) to run the CLI elsewhere",
  onUserDialog: () => "rendering the CLI's dialogs (request_user_dialog) is not supported",
  supportedDialogKinds: () => "only applies to onUserDialog, which is not supported",
  perTaskStopAffordance: () =>
    "not supported: the initialize request never carries it, so interrupt() behaves as without it",
  mcpServersDelivery: (value) =>
    value === "argv"
      ? undefined
      : `${JSON.stringify(value)} is not supported: MCP server configs are passed in argv (--mcp-config), ` +
        `in-process ones in the initialize request`,
  pluginDelivery: (value) =>
    value === "argv"
      ? undefined
      : `${JSON.stringify(value)} is not supported: plugins are passed in argv (--plugin-dir)`
}

/** The first official option passed that this SDK does not implement, as an `InvalidOptions`. @internal */
export const unsupportedOption = (options: object): InvalidOptions | undefined => {
  const given: { readonly [option: string]: unknown } = { ...options }
  for (const [option, check] of Object.entries(unsupportedOptions)) {
    const value = given[option]
    if (value === undefined) continue
    const reason = check(value)
    if (reason !== undefined) return new InvalidOptions({ option, description: reason })
  }
  return undefined
}

const { fn, isFunction } = Opts

/**
 * The fields the Promise API reads itself, checked before it reads them; the other options are checked once, by the
 * session, before anything is spawned (`onElicitation` is checked here because the session sees only its wrapper).
 */
const PromiseOptionsSchema = Schema.Struct({
  onElicitation: Opts.optionFields.onElicitation,
  abortController: Schema.optional(Schema.declare(
    (u: unknown): u is AbortController =>
      Predicate.hasProperty(u, "signal") && Predicate.hasProperty(u.signal, "aborted") &&
      typeof u.signal.aborted === "boolean" && Predicate.hasProperty(u.signal, "addEventListener") &&
      isFunction(u.signal.addEventListener) && Predicate.hasProperty(u.signal, "removeEventListener") &&
      isFunction(u.signal.removeEventListener),
    { identifier: "AbortController" }
  )),
  canUseTool: Schema.optional(fn),
  permissionTimeoutMs: Schema.optional(Schema.Number.pipe(Schema.filter(notMillis))),
  hooks: Schema.optional(Schema.Record({
    key: Schema.String,
    value: Schema.Array(
      Schema.Struct({
        matcher: Schema.optional(Schema.String),
        hooks: Schema.Array(fn),
        timeout: Schema.optional(Schema.Number.pipe(
          Schema.filter((n) => (Number.isFinite(n) && n > 0) || `must be a positive number of seconds, got ${n}`)
        )),
        onFailure: Schema.optional(Schema.Literal("continue", "block"))
      }).annotations({ identifier: "HookCallbackMatcher" })
    )
  })),
  transport: Schema.optional(Schema.declare(Layer.isLayer, { identifier: "Layer" })),
  logger: Schema.optional(fn),
  logLevel: Schema.optional(Schema.Literal(...PromiseLogger.minimumLevels)),
  ...SessionStoreOptions.optionFields
})

const checkPromiseOptions = Opts.checker(PromiseOptionsSchema)

/**
 * Why the options cannot be used, if they cannot: an official option this SDK does not implement, or a field of the
 * Promise API's own that fails its schema (the session checks the rest).
 *
 * @internal
 */
export const invalidOptions = (options: unknown): InvalidOptions | undefined =>
  (typeof options === "object" && options !== null ? unsupportedOption(options) : undefined) ??
    checkPromiseOptions(options)

/**
 * The official callback as an `onElicitation` Effect: a throw or a rejection fails (the session then answers
 * `cancel`), interruption aborts the signal; `null` (the official "answered out of band") has no channel here: fail.
 */
const elicitationHandler = (onElicitation: OnElicitation): Elicitation.OnElicitation => ({ requestId, ...request }) =>
  Effect.flatMap(
    Effect.tryPromise({ try: (signal) => onElicitation(request, { signal, requestId }), catch: (error) => error }),
    (result) =>
      result === null || result === undefined
        ? Effect.fail(new Error("onElicitation returned no answer"))
        : Effect.succeed(result)
  )

const toEffectOptions = (options: Options): AgentOptions.Options => {
  const {
    abortController: _a,
    canUseTool: _c,
    hooks: _h,
    logger: _l,
    logLevel: _ll,
    onElicitation,
    permissionTimeoutMs: _p,
    transport: _t,
    sessionStore: _s,
    sessionStoreFlush: _sf,
    loadTimeoutMs: _lt,
    ...rest
  } = options
  return onElicitation === undefined ? rest : { ...rest, onElicitation: elicitationHandler(onElicitation) }
}

/**
 * The default transport's services, shared by every query of the process: the CLI resolver's knowledge (where the CLI
 * is, its version, a `--version` probe running for concurrent start-ups) is what makes the second query cheap. Each
 * session's process and fibers live in that session's scope, not here. `ManagedRuntime.make` builds nothing until the
 * first query; the runtime lives as long as the process, as the module does (nothing in it holds a process).
 */
const nodeRuntime: ManagedRuntime.ManagedRuntime<Transport.Transport, never> = ManagedRuntime.make(
  NodeClaudeAgent.layer
)

type PromptInput = string | AsyncIterable<Message.UserMessage>

/** A query started without its prompt (`startup`). @internal */
interface Warm {
  /** Resolves once the CLI answered `initialize`; rejects with why the query could not start (the CLI is reaped). */
  readonly ready: Promise<void>
  /** Sends the prompt (called at most once). */
  readonly give: (prompt: PromptInput) => void
}

const noop = (): void => undefined

/** What a query that has its prompt gets for `Warm`. */
const notWarm: Warm = { ready: Promise.resolve(), give: noop }

/** A string or an async iterable (a prompt from JavaScript, or through a cast, may be anything). */
const isPrompt = (prompt: unknown): prompt is PromptInput =>
  typeof prompt === "string" || (typeof prompt === "object" && prompt !== null && Symbol.asyncIterator in prompt)

const promptError = (prompt: unknown) =>
  new InvalidOptions({
    option: "prompt",
    description: `${prompt === null ? "null" : typeof prompt} is not a string or an async iterable of user messages`
  })

/** @internal */
export const query = (
  params: {
    readonly prompt: PromptInput
    readonly options?: Options | undefined
  } | undefined
): Query => begin(false, params?.prompt, params?.options ?? {}).query

/** @internal */
export const startup = (params: {
  readonly options?: Options | undefined
  readonly initializeTimeoutMs?: number | undefined
} = {}): Promise<WarmQuery> => {
  const ms = params.initializeTimeoutMs
  const invalid = ms === undefined ? undefined : notMillis(ms)
  if (invalid !== undefined) {
    return Promise.reject(new InvalidOptions({ option: "initializeTimeoutMs", description: invalid }))
  }
  const given = params.options ?? {}
  const options: Options = ms === undefined
    ? given
    : { ...given, initializeTimeout: Number.isFinite(ms) ? Duration.millis(ms) : "infinity" }
  const { query: held, warm } = begin(true, undefined, options)
  // the process is the warm query's until `query()` hands it to the Query it returns
  let state: "warm" | "taken" | "closed" = "warm"
  const handle: WarmQuery = {
    query: (prompt) => {
      if (state === "closed") throw new InputClosed({ reason: "SessionClosed" })
      if (state === "taken") {
        throw new InvalidOptions({
          option: "prompt",
          description: "WarmQuery.query() can be called once: this warm query's CLI already runs the query it returned"
        })
      }
      if (!isPrompt(prompt)) throw promptError(prompt)
      state = "taken"
      warm.give(prompt)
      return held
    },
    close: () => {
      if (state !== "warm") return Promise.resolve()
      state = "closed"
      return held.close()
    },
    // as the official one: the end of an `await using` block closes the query it handed out too
    [Symbol.asyncDispose]: () => {
      if (state === "warm") state = "closed"
      return held.close()
    }
  }
  return warm.ready.then(
    () => handle,
    async (error: unknown) => {
      // the session is gone already; this releases a transport of the caller's own
      await held.close()
      throw error
    }
  )
}

/**
 * A query with its prompt, or a warm one (`warm`): the CLI is spawned and initialized now, the prompt is sent when
 * `give` is called, and closing the query before that reaps the CLI.
 */
const begin = (
  warm: boolean,
  promptNow: unknown,
  given: Options
): { readonly query: Query; readonly warm: Warm } => {
  // options that fail the check are not read at all: the query fails with why, through the iterator and the methods
  const invalid = invalidOptions(given)
  const options: Options = invalid === undefined ? given : {}
  // a transport of the caller's own is built for this query alone (it may hold state); the default one is shared
  const runtime: ManagedRuntime.ManagedRuntime<Transport.Transport, never> = options.transport === undefined
    ? nodeRuntime
    : ManagedRuntime.make(options.transport)
  const ownRuntime = options.transport !== undefined
  // every call into the runtime logs through the query's logger, finalizers included (never to stdout)
  const logged = PromiseLogger.withLogging(options)
  // the session reads its Permissions and Hooks services once, when it starts
  const withExtensions = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
    const { canUseTool, hooks, permissionTimeoutMs } = options
    const permitted = canUseTool === undefined
      ? effect
      : Effect.provideService(effect, Permissions.Permissions, permissionsService(canUseTool, permissionTimeoutMs))
    const hooked = hooks === undefined ? permitted : Effect.provide(permitted, hooksLayer(hooks))
    return SessionStoreOptions.withSessionStore(options)(hooked)
  }
  const abort = options.abortController
  let aborted = abort?.signal.aborted === true
  let closing: Promise<void> | undefined
  let done = false
  // why the query ended when it failed (the CLI died, a timeout…): later method calls reject with it, not InputClosed
  let failedWith: unknown

  // the caller's iterable is read so that giving the query up never waits for it (see promptSource.ts)
  const asPrompt = (prompt: PromptInput): string | Stream.Stream<Message.UserMessage, InvalidOptions> =>
    typeof prompt === "string" ? prompt : PromptSource.fromAsyncIterable(prompt)
  // a warm query's prompt: `undefined` when the query is closed before one was given
  let give: (prompt: PromptInput | undefined) => void = noop
  const promptLater = !warm ? undefined : new Promise<PromptInput | undefined>((resolve) => {
    give = resolve
  })
  let markReady: () => void = noop
  let failReady: (error: unknown) => void = noop
  const ready = promptLater === undefined ? undefined : new Promise<void>((resolve, reject) => {
    markReady = resolve
    failReady = reject
  })

  // One fiber pulls for next() for the whole query (see docs/PERFORMANCE.md, P1): next() offers a receiver to
  // `receivers` (a Mailbox), the pump takes it, pulls one chunk of the query's messages (`session.drivePull`) and
  // hands it the outcome. next() calls run one at a time (below), so at most one receiver waits. Once the pump is gone
  // (the query's scope closed), `receivers` is done and every receiver, the one it was pulling for and later ones
  // included, gets the end of the messages.
  type Pulled = Exit.Exit<Chunk.Chunk<Message.SdkMessage>, Option.Option<unknown>>
  type Receiver = (pulled: Pulled) => void
  const ended: Pulled = Exit.fail(Option.none())
  const pump = (
    receivers: Mailbox.Mailbox<Receiver>,
    pull: Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<unknown>>
  ): Effect.Effect<void> => {
    const loop: Effect.Effect<void, Cause.NoSuchElementException> = Effect.flatMap(
      receivers.take,
      (receive) =>
        Effect.flatMap(
          Effect.onInterrupt(Effect.exit(pull), () => Effect.sync(() => receive(ended))),
          (pulled) => Effect.suspend(() => (receive(pulled), loop))
        )
    )
    return loop.pipe(
      Effect.ignore,
      Effect.ensuring(Effect.flatMap(
        Effect.zipRight(receivers.end, receivers.takeAll),
        ([waiting]) => Effect.sync(() => Chunk.forEach(waiting, (receive) => receive(ended)))
      ))
    )
  }
  const pullChunk = (receivers: Mailbox.Mailbox<Receiver>): Promise<Pulled> =>
    new Promise((resolve) => {
      if (!receivers.unsafeOffer(resolve)) resolve(ended)
    })

  // start-up stops at once when the query is closed or aborted meanwhile (the `--version` probe included)
  const starting = new AbortController()
  // one scope for the whole query: the session (process) and its message pull live in it
  const started = runtime.runPromiseExit(
    logged(withExtensions(
      Effect.gen(function*() {
        if (invalid !== undefined) return yield* Effect.fail(invalid)
        if (!warm && !isPrompt(promptNow)) return yield* Effect.fail(promptError(promptNow))
        const scope = yield* Scope.make()
        return yield* Effect.gen(function*() {
          const internal = yield* session.make(toEffectOptions(options))
          let prompt = isPrompt(promptNow) ? promptNow : undefined
          if (promptLater !== undefined) {
            // closing the query before the prompt came ends the wait, initialize answered or not
            const given = Effect.promise(() => promptLater)
            const closedFirst = Effect.flatMap(
              given,
              (p) => p === undefined ? Effect.fail(new InputClosed({ reason: "SessionClosed" })) : Effect.never
            )
            yield* Effect.raceFirst(internal.session.initializationResult, closedFirst)
            markReady()
            prompt = yield* given
          }
          if (prompt === undefined) {
            return yield* Effect.fail(new InputClosed({ reason: "SessionClosed" }))
          }
          const pull = yield* session.drivePull(internal, asPrompt(prompt))
          const receivers = yield* Mailbox.make<Receiver>()
          yield* Effect.forkScoped(pump(receivers, pull))
          return { scope, internal, receivers }
        }).pipe(
          Scope.extend(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
      })
    )),
    { signal: starting.signal }
  )
  // never an unhandled rejection: failures surface through next() and the methods
  started.catch(() => undefined)

  // the messages of the chunk pulled last, handed out one by one
  let buffer: ReadonlyArray<Message.SdkMessage> = []
  let position = 0
  // A pulled chunk's array is this iterator's alone: the session's buffer hands its array over on every take and the
  // stream stages between (catchAll, concat, interruptWhen) pass chunks through without keeping them. Stream machinery
  // that is already garbage can still point at it, though; emptying it once every message was handed out lets
  // young-generation GCs reclaim the messages instead of promoting them (docs/PERFORMANCE.md, P1).
  const release = () => {
    if (Array.isArray(buffer)) (buffer as Array<Message.SdkMessage>).length = 0
    buffer = []
    position = 0
  }

  const close = (): Promise<void> => {
    if (closing !== undefined) return closing
    done = true
    // a warm query waiting for its prompt stops waiting, and its start-up fails with InputClosed
    give(undefined)
    // what was pulled but not handed out yet is dropped: next() is done from here on
    release()
    abort?.signal.removeEventListener("abort", onAbort)
    starting.abort()
    closing = started.then(async (exit) => {
      if (Exit.isSuccess(exit)) await runtime.runPromise(logged(Scope.close(exit.value.scope, Exit.void)))
      if (ownRuntime) await runtime.dispose()
    }).catch(() => undefined)
    return closing
  }

  const onAbort = () => {
    aborted = true
    void close()
  }
  abort?.signal.addEventListener("abort", onAbort, { once: true })
  if (aborted) void close()

  /** Why the query could not start: start-up stopped by `close()` is `InputClosed`, by an abort `AbortError`. */
  const startFailure = (cause: Cause.Cause<unknown>): unknown =>
    closing !== undefined && !aborted && Cause.isInterruptedOnly(cause)
      ? new InputClosed({ reason: "SessionClosed" })
      : squash(cause, aborted)

  const handles = () =>
    started.then((exit) => {
      if (Exit.isFailure(exit)) throw startFailure(exit.cause)
      return exit.value
    })

  const run = async <A>(f: (s: session.SessionInternal) => Effect.Effect<A, unknown>): Promise<A> => {
    const { internal } = await handles()
    if (aborted) throw new AbortError()
    if (closing !== undefined) throw failedWith ?? new InputClosed({ reason: "SessionClosed" })
    const exit = await runtime.runPromiseExit(logged(f(internal)))
    if (Exit.isFailure(exit)) throw squash(exit.cause, aborted)
    return exit.value
  }

  /** The next message of the chunk pulled last, if any is left. */
  const fromBuffer = (): IteratorResult<Message.SdkMessage, void> | undefined => {
    if (position >= buffer.length) return undefined
    const value = buffer[position++]!
    if (position === buffer.length) release()
    return { done: false, value }
  }

  /** Pulls chunks until one has a message, or the stream ends (then the query closes). */
  const pullNext = async (): Promise<IteratorResult<Message.SdkMessage, void>> => {
    try {
      while (true) {
        const buffered = fromBuffer()
        if (buffered !== undefined) return buffered
        if (done) {
          await closing
          if (aborted) throw new AbortError()
          return { done: true, value: undefined }
        }
        const start = await started
        if (Exit.isFailure(start)) {
          // closed or aborted while starting: ends as above
          if (done) continue
          throw startFailure(start.cause)
        }
        const exit = await pullChunk(start.value.receivers)
        if (Exit.isSuccess(exit)) {
          // closed while pulling: what arrived is dropped
          if (!done) {
            buffer = Chunk.toReadonlyArray(exit.value)
            position = 0
          }
          continue
        }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure) && Option.isNone(failure.value)) {
          await close()
          if (aborted) throw new AbortError()
          return { done: true, value: undefined }
        }
        throw Option.isSome(failure) && Option.isSome(failure.value)
          ? failure.value.value
          : squash(exit.cause, aborted)
      }
    } catch (error) {
      if (closing === undefined) failedWith = error
      await close()
      throw aborted ? new AbortError() : error
    }
  }

  // A call that has to pull runs alone: calls made meanwhile wait for the call before them, so they settle in call
  // order, as an async generator's would; handing out a pulled chunk needs no waiting.
  let last: Promise<IteratorResult<Message.SdkMessage, void>> | undefined
  const step = (): Promise<IteratorResult<Message.SdkMessage, void>> => {
    const buffered = fromBuffer()
    return buffered !== undefined ? Promise.resolve(buffered) : pullNext()
  }
  const next = (): Promise<IteratorResult<Message.SdkMessage, void>> => {
    let current: Promise<IteratorResult<Message.SdkMessage, void>>
    if (last !== undefined) {
      current = last.then(step, step)
    } else {
      const buffered = fromBuffer()
      if (buffered !== undefined) return Promise.resolve(buffered)
      current = pullNext()
    }
    last = current
    const settled = () => {
      if (last === current) last = undefined
    }
    current.then(settled, settled)
    return current
  }

  const iterator: Query = {
    next,
    return: async () => {
      await close()
      return { done: true, value: undefined }
    },
    throw: async (error: unknown) => {
      await close()
      throw error
    },
    [Symbol.asyncIterator]() {
      return this
    },
    [Symbol.asyncDispose]: () => close(),
    close,
    interrupt: () => run((s) => s.session.interrupt),
    setPermissionMode: (mode) =>
      run((s) => Effect.map(s.session.setPermissionMode(mode), (m) => ({ mode: Option.getOrUndefined(m) }))),
    setModel: (model) => run((s) => s.session.setModel(model)),
    setMaxThinkingTokens: (n, display) => run((s) => s.session.setMaxThinkingTokens(n, display)),
    supportedCommands: () => run((s) => Effect.map(s.session.supportedCommands, (c) => [...c])),
    supportedModels: () => run((s) => Effect.map(s.session.supportedModels, (m) => [...m])),
    supportedAgents: () => run((s) => Effect.map(s.session.supportedAgents, (a) => [...a])),
    accountInfo: () => run((s) => s.session.accountInfo),
    initializationResult: () => run((s) => s.session.initializationResult),
    mcpServerStatus: () => run((s) => Effect.map(s.session.mcpServerStatus, (m) => [...m])),
    getContextUsage: (opts) => run((s) => s.session.getContextUsage(opts)),
    rewindFiles: (id, opts) => run((s) => s.session.rewindFiles(id, opts)),
    reconnectMcpServer: (name) => run((s) => s.session.reconnectMcpServer(name)),
    toggleMcpServer: (name, enabled) => run((s) => s.session.toggleMcpServer(name, enabled)),
    setMcpServers: (servers) => run((s) => s.session.setMcpServers(servers)),
    stopTask: (taskId) => run((s) => s.session.stopTask(taskId)),
    sessionId: () => run((s) => s.session.sessionId),
    pid: () => run((s) => Effect.succeed(Option.getOrUndefined(s.session.pid)))
  }
  if (ready === undefined) return { query: iterator, warm: notWarm }
  void started.then((exit) => {
    if (Exit.isFailure(exit)) failReady(aborted ? new AbortError() : startFailure(exit.cause))
  })
  return { query: iterator, warm: { ready, give } }
}
