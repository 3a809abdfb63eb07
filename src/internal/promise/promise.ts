/**
 * The Promise API (`effect-claude-agent/promise`): the official SDK's `query` / `startup` as an adapter over the public
 * Effect API (`ClaudeAgent.startQuery`, `Permissions`, `Hooks`, `TranscriptStore`), run on the runtime its entry point
 * passes in ({@link make}).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as AgentError from "../../AgentError.js"
import { InputClosed, InvalidOptions } from "../../AgentError.js"
import * as AgentOptions from "../../AgentOptions.js"
import * as ClaudeAgent from "../../ClaudeAgent.js"
import * as CliResolver from "../../CliResolver.js"
import type * as Elicitation from "../../Elicitation.js"
import * as Hooks from "../../Hooks.js"
import type * as Message from "../../Message.js"
import * as Permissions from "../../Permissions.js"
import * as Transport from "../../Transport.js"
import type * as UserDialog from "../../UserDialog.js"
import type {
  CanUseTool,
  HookCallbackMatcher,
  OnElicitation,
  OnUserDialog,
  Options,
  Query,
  WarmQuery
} from "../../promise.js"
import * as PromiseLogger from "./promiseLogger.js"
import * as SessionStoreOptions from "./sessionStore.js"

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

/** The options a `canUseTool` callback gets. */
type CanUseToolOptions = Parameters<CanUseTool>[2]

type Mutable<A> = { -readonly [K in keyof A]: A[K] }

/** Where a `canUseTool` call's options keep their request: a non-enumerable property, so a spread leaves it. */
const REQUEST: unique symbol = Symbol("effect-claude-agent/canUseToolRequest")

interface RequestCarrier {
  readonly [REQUEST]: Permissions.PermissionRequest
}

/** The one `signal` getter of every call's options: the request's signal, built only if read. */
const requestSignal: PropertyDescriptor = {
  get(this: RequestCarrier): AbortSignal {
    return this[REQUEST].signal
  },
  enumerable: true,
  configurable: true
}

/**
 * The options of one `canUseTool` call, a plain object, the optional fields left to set. `signal` is an own
 * enumerable property (first, as in the official SDK's), read through one getter shared by every call's options: a
 * getter written in an object literal is a new function per object, which leaves V8 every such object in dictionary
 * mode, about a microsecond to build (docs/PERFORMANCE.md, round 6). The getter reads a symbol-keyed property, so it
 * also works through a `Proxy` of the options or an object that inherits from them.
 */
const callbackOptions = (request: Permissions.PermissionRequest): Mutable<CanUseToolOptions> => {
  const options = {} as Mutable<CanUseToolOptions>
  Object.defineProperty(options, REQUEST, { value: request })
  Object.defineProperty(options, "signal", requestSignal)
  options.suggestions = request.suggestions
  options.toolUseID = request.toolUseId
  options.requestId = request.requestId
  return options
}

const noDecision: Permissions.PermissionResult = { behavior: "deny", message: "canUseTool returned no decision" }

/**
 * The official-style callback as a Promise policy: the session calls it directly, without a fiber of its own. The
 * signal it gets is the request's, built only if the callback reads it (an `AbortController` per request was a large
 * share of a permission round trip); `null` (the official "answered out of band") has no channel here: fail closed.
 */
const permissionsService = (canUseTool: CanUseTool, timeout: number | undefined): Permissions.Service =>
  Permissions.makePromise(
    (request) => {
      // the optional fields set one by one: a spread of a conditional object per field cost a round trip two
      // temporary objects per field (docs/PERFORMANCE.md, round 6)
      const options = callbackOptions(request)
      if (request.blockedPath !== undefined) options.blockedPath = request.blockedPath
      if (request.decisionReason !== undefined) options.decisionReason = request.decisionReason
      if (request.title !== undefined) options.title = request.title
      if (request.displayName !== undefined) options.displayName = request.displayName
      if (request.description !== undefined) options.description = request.description
      if (request.agentId !== undefined) options.agentID = request.agentId
      if (request.mcpServer !== undefined) options.mcpServer = request.mcpServer
      // `await`-like: a callback that returns its decision without a Promise is accepted too
      return Promise.resolve(canUseTool(request.toolName, request.input as Record<string, unknown>, options)).then(
        (result) => result === null || result === undefined ? noDecision : result
      )
    },
    timeout !== undefined ? { timeout: Duration.millis(timeout) } : undefined
  )

const hooksService = (
  hooks: Partial<Record<Hooks.HookEvent, ReadonlyArray<HookCallbackMatcher>>>
): Hooks.Service => {
  const registrations: Record<string, Array<Hooks.HookMatcher>> = {}
  for (const [event, matchers] of Object.entries(hooks)) {
    if (matchers === undefined) continue
    registrations[event] = matchers.map((m) => ({
      matcher: m.matcher,
      timeout: m.timeout,
      onFailure: m.onFailure,
      // the official callbacks are Promise hooks as they are: answered as their Promises settle
      hooks: m.hooks
    }))
  }
  return Hooks.make(registrations as Hooks.HookRegistrations)
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
const unsupportedOptions: Readonly<Record<string, (value: unknown) => string | undefined>> = {}

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

const isFunction = Predicate.isFunction
const fn = Schema.declare((u: unknown): u is (...args: ReadonlyArray<never>) => unknown => isFunction(u), {
  identifier: "function"
})

/**
 * The fields the Promise API reads itself, checked before it reads them; the other options are checked once, by the
 * session, before anything is spawned (`onElicitation` is checked here because the session sees only its wrapper).
 */
const PromiseOptionsSchema = Schema.Struct({
  onElicitation: Schema.optional(fn),
  onUserDialog: Schema.optional(fn),
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
  spawnClaudeCodeProcess: Schema.optional(fn),
  logger: Schema.optional(fn),
  logLevel: Schema.optional(Schema.Literal(...PromiseLogger.minimumLevels)),
  failOnApiError: Schema.optional(Schema.Boolean),
  ...SessionStoreOptions.optionFields
})

const checkPromiseOptions = AgentOptions.checker(PromiseOptionsSchema)

/**
 * Why the options cannot be used, if they cannot: an official option this SDK does not implement, or a field of the
 * Promise API's own that fails its schema (the session checks the rest).
 *
 * @internal
 */
export const invalidOptions = (options: unknown): InvalidOptions | undefined =>
  (typeof options === "object" && options !== null ? unsupportedOption(options) : undefined) ??
    checkPromiseOptions(options) ?? bothTransports(options)

/** `transport` and `spawnClaudeCodeProcess` both say how to start the CLI: one of them only. */
const bothTransports = (options: unknown): InvalidOptions | undefined =>
  Predicate.hasProperty(options, "transport") && options.transport !== undefined &&
    Predicate.hasProperty(options, "spawnClaudeCodeProcess") && options.spawnClaudeCodeProcess !== undefined
    ? new InvalidOptions({
      option: "spawnClaudeCodeProcess",
      description: "cannot be combined with transport: pass one of them"
    })
    : undefined

/**
 * The caller's own Transport: `transport`, or the process transport over `spawnClaudeCodeProcess` (with its own CLI
 * resolver, for the command the spawn function is asked to run).
 */
const ownTransport = (options: Options): Layer.Layer<Transport.Transport> | undefined =>
  options.transport ??
    (options.spawnClaudeCodeProcess === undefined
      ? undefined
      : Transport.layerSpawn(options.spawnClaudeCodeProcess).pipe(Layer.provide(CliResolver.layer())))

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

/**
 * The official callback as an `onUserDialog` Effect: a throw or a rejection fails (the session then answers
 * `cancelled`), interruption aborts the signal, `null` (answered out of band) sends nothing.
 */
const userDialogHandler = (onUserDialog: OnUserDialog): UserDialog.OnUserDialog => ({ requestId, ...request }) =>
  Effect.tryPromise({ try: (signal) => onUserDialog(request, { signal, requestId }), catch: (error) => error })

const toEffectOptions = (options: Options): AgentOptions.Options => {
  const {
    abortController: _a,
    canUseTool: _c,
    hooks: _h,
    logger: _l,
    logLevel: _ll,
    onElicitation,
    onUserDialog,
    permissionTimeoutMs: _p,
    transport: _t,
    sessionStore: _s,
    sessionStoreFlush: _sf,
    loadTimeoutMs: _lt,
    spawnClaudeCodeProcess: _spawn,
    failOnApiError: _f,
    ...rest
  } = options
  return {
    ...rest,
    ...(onElicitation === undefined ? {} : { onElicitation: elicitationHandler(onElicitation) }),
    ...(onUserDialog === undefined ? {} : { onUserDialog: userDialogHandler(onUserDialog) })
  }
}

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
const notWarm = (): Warm => ({ ready: Promise.resolve(), give: noop })

/** A string or an async iterable (a prompt from JavaScript, or through a cast, may be anything). */
const isPrompt = (prompt: unknown): prompt is PromptInput =>
  typeof prompt === "string" || (typeof prompt === "object" && prompt !== null && Symbol.asyncIterator in prompt)

const promptError = (prompt: unknown) =>
  new InvalidOptions({
    option: "prompt",
    description: `${prompt === null ? "null" : typeof prompt} is not a string or an async iterable of user messages`
  })

/**
 * The runtime the Promise API runs its queries on: the default transport's services, shared by every query that has
 * no transport of its own (the CLI resolver's knowledge is what makes the second query cheap). The entry point makes
 * it; each query's process and fibers live in that query's scope, not in it.
 *
 * @internal
 */
export type Runtime = ManagedRuntime.ManagedRuntime<Transport.Transport, never>

/**
 * The Promise API's `query` and `startup` over `runtime`.
 *
 * @internal
 */
export const make = (runtime: Runtime): {
  readonly query: (params: { readonly prompt: PromptInput; readonly options?: Options | undefined }) => Query
  readonly startup: (params?: {
    readonly options?: Options | undefined
    readonly initializeTimeoutMs?: number | undefined
  }) => Promise<WarmQuery>
} => ({
  query: (params) => begin(runtime, params?.prompt, params?.options ?? {}, false).query,
  startup: (params) => startup(runtime, params)
})

const startup = (runtime: Runtime, params: {
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
  const { query: held, warm } = begin(runtime, undefined, options, true)
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

// ---------------------------------------------------------------------------------------------------------------------
// One query: `begin` wires the parts below together. The query runs as one fiber (`runSession`): start-up, then the
// pump that pulls the messages (`pump`); `next()` hands them out chunk by chunk (`iterate`), the control methods run on
// the session the start-up made (`queryMethods`), and `close()` (`lifecycle`) is the one way the query ends.
// ---------------------------------------------------------------------------------------------------------------------

/** A pull's outcome as the pump hands it to a `next()`: a chunk of messages, the end (`None`), or the failure. */
type Pulled = Exit.Exit<Chunk.Chunk<Message.SdkMessage>, Option.Option<unknown>>

/** A `next()` waiting for the pump's next pull. */
type Receiver = (pulled: Pulled) => void

const ended: Pulled = Exit.fail(Option.none())

/**
 * What the query's fiber does once started: it pulls for `next()` for the whole query (see docs/PERFORMANCE.md, P1).
 * `next()` offers a receiver to `receivers`, the pump takes it, pulls one chunk of the query's messages
 * (`ClaudeAgent.PendingQuery.pull`) and hands it the outcome. `next()` calls run one at a time (see `iterate`), so at most one
 * receiver waits. It runs until interrupted; then `receivers` is done and every receiver, the one it was pulling for and later ones included,
 * gets the end of the messages.
 */
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

/** Asks the pump for its next pull; the end of the messages once the pump is gone. */
const pullChunk = (receivers: Mailbox.Mailbox<Receiver>): Promise<Pulled> =>
  new Promise((resolve) => {
    if (!receivers.unsafeOffer(resolve)) resolve(ended)
  })

/** What a query's start-up hands the iterator and the methods: the session, and the pump's receivers. */
interface Started {
  readonly pending: ClaudeAgent.PendingQuery
  readonly receivers: Mailbox.Mailbox<Receiver>
}

/** A warm query's prompt, given after start-up; `ready` settles once the CLI answered `initialize` (or start-up failed). */
interface WarmGate {
  readonly prompt: Deferred.Deferred<PromptInput>
  readonly ready: Promise<void>
  readonly markReady: () => void
  readonly failReady: (error: unknown) => void
}

const warmGate = (): WarmGate => {
  let markReady: () => void = noop
  let failReady: (error: unknown) => void = noop
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve
    failReady = reject
  })
  return { prompt: Deferred.unsafeMake(FiberId.none), ready, markReady, failReady }
}

/**
 * A warm query's prompt, once the CLI answered `initialize` and the prompt was given. Closing the query interrupts
 * start-up, this wait included, initialize answered or not (see `lifecycle`).
 */
const warmPrompt = (pending: ClaudeAgent.PendingQuery, gate: WarmGate): Effect.Effect<PromptInput, unknown> =>
  pending.control.initializationResult.pipe(
    Effect.zipRight(Effect.sync(gate.markReady)),
    Effect.zipRight(Deferred.await(gate.prompt))
  )

/** The caller's iterable is read so that giving the query up never waits for it (see promptSource.ts). */
const asPrompt = (prompt: PromptInput): string | Stream.Stream<Message.UserMessage, InvalidOptions> =>
  typeof prompt === "string" ? prompt : ClaudeAgent.promptsFromAsyncIterable(prompt)

/**
 * A query's whole life as one fiber, in one scope: start-up (the session, i.e. the process; once there is a prompt,
 * `source` or a warm query's given later, the turn driver), then `started` with what the iterator and the methods need,
 * then the pump, until `close()` interrupts the fiber. The scope closes when the fiber ends: with why, if start-up
 * failed or was interrupted (the CLI is reaped either way).
 */
const runSession = (
  options: Options,
  source: PromptInput | WarmGate,
  started: (started: Started) => void
): Effect.Effect<void, unknown, Transport.Transport> =>
  Effect.suspend(() => {
    let running = false
    return Effect.acquireUseRelease(
      Scope.make(),
      (scope) =>
        Effect.flatMap(
          Scope.extend(
            Effect.gen(function*() {
              const pending = yield* ClaudeAgent.startQuery(toEffectOptions(options))
              const prompt = isPrompt(source) ? source : yield* warmPrompt(pending, source)
              const messages = yield* pending.pull(asPrompt(prompt))
              const pull = options.failOnApiError === true ? failingOnApiError(messages) : messages
              const receivers = yield* Mailbox.make<Receiver>()
              return { pending, pull, receivers }
            }),
            scope
          ),
          ({ pending, pull, receivers }) => {
            running = true
            started({ pending, receivers })
            return pump(receivers, pull)
          }
        ),
      (scope, exit) => Scope.close(scope, running ? Exit.void : exit)
    )
  })

/**
 * `pull`, failing with the typed `ApiFailure` (`ApiError`, `Overloaded`, `RateLimited`) right after a `result` that
 * reports an Anthropic API error, as `ClaudeAgent.failOnApiError` fails a Stream: the messages up to that result are
 * handed out first (`AgentError.fromResult` decides, with the kind of error the turn's synthetic assistant message
 * reported).
 */
const failingOnApiError = <E>(
  pull: Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<E>>
): Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<E | AgentError.ApiFailure>> => {
  let assistantError: string | undefined
  let failure: AgentError.ApiFailure | undefined
  return Effect.suspend(
    (): Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<E | AgentError.ApiFailure>> => {
      if (failure !== undefined) return Effect.fail(Option.some(failure))
      return Effect.map(pull, (chunk) => {
        const messages = Chunk.toReadonlyArray(chunk)
        for (let i = 0; i < messages.length; i++) {
          const message = messages[i]!
          if (message.type === "assistant") assistantError = message.error
          if (message.type !== "result") continue
          failure = AgentError.fromResult(message, assistantError)
          assistantError = undefined
          if (failure !== undefined) return Chunk.unsafeFromArray(messages.slice(0, i + 1))
        }
        return chunk
      })
    }
  )
}

/** The logging of a query without `logger` or `logLevel` (the same for every such query). */
const defaultLogging = PromiseLogger.withLogging({})

/**
 * Runs effects of a query with its logging: every call into the runtime logs through the query's logger, finalizers
 * included (never to stdout).
 */
const loggingOf = (options: Options) =>
  options.logger === undefined && options.logLevel === undefined ? defaultLogging : PromiseLogger.withLogging(options)

/**
 * Provides a query's Permissions and Hooks services and its transcript store (the session reads them once, when it
 * starts), and the OpenTelemetry trace context active now, when the query is made, for the CLI to inherit
 * (src/internal/transport/traceContext.ts).
 */
const withExtensions = <A, E, R>(options: Options, effect: Effect.Effect<A, E, R>) => {
  const { canUseTool, hooks, permissionTimeoutMs } = options
  const permitted = canUseTool === undefined
    ? effect
    : Effect.provideService(effect, Permissions.Permissions, permissionsService(canUseTool, permissionTimeoutMs))
  const hooked = hooks === undefined ? permitted : Effect.provideService(permitted, Hooks.Hooks, hooksService(hooks))
  return Transport.withActiveOpenTelemetry(SessionStoreOptions.withSessionStore(options)(hooked))
}

/**
 * The messages of the chunk pulled last, handed out one by one. A pulled chunk's array is this buffer's alone: the
 * session's buffer hands its array over on every take and the stream stages between pass chunks through without
 * keeping them. Stream machinery that is already garbage can still point at it, though; emptying it once every message
 * was handed out lets young-generation GCs reclaim the messages instead of promoting them (docs/PERFORMANCE.md, P1).
 */
class ChunkBuffer {
  private messages: ReadonlyArray<Message.SdkMessage> = []
  private position = 0

  /** The next message, if any is left. */
  take(): IteratorResult<Message.SdkMessage, void> | undefined {
    if (this.position >= this.messages.length) return undefined
    const value = this.messages[this.position++]!
    if (this.position === this.messages.length) this.release()
    return { done: false, value }
  }

  fill(chunk: Chunk.Chunk<Message.SdkMessage>): void {
    this.messages = Chunk.toReadonlyArray(chunk)
    this.position = 0
  }

  /** Drops what is left, emptying the array. */
  release(): void {
    if (Array.isArray(this.messages)) (this.messages as Array<Message.SdkMessage>).length = 0
    this.messages = []
    this.position = 0
  }
}

/** One query's state, shared by its iterator and its methods; `close()` is the one way it ends. */
interface Life {
  /** The start-up's outcome (never rejects). */
  readonly started: Promise<Exit.Exit<Started, unknown>>
  readonly buffer: ChunkBuffer
  /** Ends the query (idempotent): drops what was pulled, stops a start-up under way, closes the query's scope. */
  readonly close: () => Promise<void>
  /** The caller's `abortController` aborted: the query ends with `AbortError`. */
  aborted: boolean
  /** Set by the first `close()`: `next()` hands out nothing more, the methods reject. */
  closing: Promise<void> | undefined
  /** Why the messages failed (the CLI died, a timeout…): later method calls reject with it, not `InputClosed`. */
  failedWith: unknown
}

/**
 * Starts a query (`start`: its fiber, which calls `up` once start-up is done) and owns its end: `close()`, and the
 * caller's abort signal. `close()` interrupts the fiber, at any point: start-up stops at once (the `--version` probe and
 * a warm query's wait for its prompt included; `startFailure` makes it `InputClosed`), a running pump ends, and the
 * query's scope closes.
 */
const lifecycle = (
  runtime: Runtime,
  ownRuntime: boolean,
  start: (up: (started: Started) => void) => Effect.Effect<void, unknown, Transport.Transport>,
  abort: AbortController | undefined
): Life => {
  let settle: (exit: Exit.Exit<Started, unknown>) => void = noop
  const started = new Promise<Exit.Exit<Started, unknown>>((resolve) => {
    settle = resolve
  })
  const fiber = runtime.runFork(start((s) => settle(Exit.succeed(s))))
  const ended = new Promise<void>((resolve) =>
    fiber.addObserver((exit) => {
      // the fiber ends only by interruption or failure; if start-up was done, `started` has settled already
      settle(
        Exit.isFailure(exit) ? Exit.failCause(exit.cause) : Exit.fail(new InputClosed({ reason: "SessionClosed" }))
      )
      resolve()
    })
  )
  const close = (): Promise<void> => {
    if (life.closing !== undefined) return life.closing
    // what was pulled but not handed out yet is dropped: next() is done from here on
    life.buffer.release()
    abort?.signal.removeEventListener("abort", onAbort)
    fiber.unsafeInterruptAsFork(fiber.id())
    life.closing = ownRuntime ? ended.then(() => runtime.dispose()).catch(noop) : ended
    return life.closing
  }
  const life: Life = {
    started,
    buffer: new ChunkBuffer(),
    close,
    aborted: abort?.signal.aborted === true,
    closing: undefined,
    failedWith: undefined
  }
  const onAbort = () => {
    life.aborted = true
    void close()
  }
  abort?.signal.addEventListener("abort", onAbort, { once: true })
  if (life.aborted) void close()
  return life
}

/** Why the query could not start: start-up stopped by `close()` is `InputClosed`, by an abort `AbortError`. */
const startFailure = (life: Life, cause: Cause.Cause<unknown>): unknown =>
  life.closing !== undefined && !life.aborted && Cause.isInterruptedOnly(cause)
    ? new InputClosed({ reason: "SessionClosed" })
    : squash(cause, life.aborted)

/**
 * The query's `next()`: the pulled chunk's messages without waiting, else one pull through the pump. A call that has
 * to pull runs alone: calls made meanwhile wait for the call before them, so they settle in call order, as an async
 * generator's would. The end of the messages, or their failure, closes the query.
 */
const iterate = (life: Life): () => Promise<IteratorResult<Message.SdkMessage, void>> => {
  const { buffer } = life
  /** Pulls chunks until one has a message, or the messages end. */
  const pullNext = async (): Promise<IteratorResult<Message.SdkMessage, void>> => {
    try {
      while (true) {
        const buffered = buffer.take()
        if (buffered !== undefined) return buffered
        if (life.closing !== undefined) {
          await life.closing
          if (life.aborted) throw new AbortError()
          return { done: true, value: undefined }
        }
        const start = await life.started
        if (Exit.isFailure(start)) {
          // closed or aborted while starting: ends as above
          if (life.closing !== undefined) continue
          throw startFailure(life, start.cause)
        }
        const exit = await pullChunk(start.value.receivers)
        if (Exit.isSuccess(exit)) {
          // closed while pulling: what arrived is dropped
          if (life.closing === undefined) buffer.fill(exit.value)
          continue
        }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure) && Option.isNone(failure.value)) {
          await life.close()
          if (life.aborted) throw new AbortError()
          return { done: true, value: undefined }
        }
        throw Option.isSome(failure) && Option.isSome(failure.value)
          ? failure.value.value
          : squash(exit.cause, life.aborted)
      }
    } catch (error) {
      if (life.closing === undefined) life.failedWith = error
      await life.close()
      throw life.aborted ? new AbortError() : error
    }
  }
  const step = (): Promise<IteratorResult<Message.SdkMessage, void>> => {
    const buffered = buffer.take()
    return buffered !== undefined ? Promise.resolve(buffered) : pullNext()
  }
  let last: Promise<IteratorResult<Message.SdkMessage, void>> | undefined
  return () => {
    let current: Promise<IteratorResult<Message.SdkMessage, void>>
    if (last !== undefined) {
      current = last.then(step, step)
    } else {
      const buffered = buffer.take()
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
}

/** Runs a control request on the query's session, once it started; rejects once the query is closed or aborted. */
type Run = <A>(f: (q: ClaudeAgent.PendingQuery) => Effect.Effect<A, unknown>) => Promise<A>

const runOn = (
  life: Life,
  runtime: Runtime,
  logged: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
): Run =>
async (f) => {
  const start = await life.started
  if (Exit.isFailure(start)) throw startFailure(life, start.cause)
  if (life.aborted) throw new AbortError()
  if (life.closing !== undefined) throw life.failedWith ?? new InputClosed({ reason: "SessionClosed" })
  const exit = await runtime.runPromiseExit(logged(f(start.value.pending)))
  if (Exit.isFailure(exit)) throw squash(exit.cause, life.aborted)
  return exit.value
}

/** The `Query` object: the async iterator over `next` and the official control methods, each a request on `run`. */
const queryMethods = (
  next: () => Promise<IteratorResult<Message.SdkMessage, void>>,
  close: () => Promise<void>,
  run: Run
): Query => ({
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
  interrupt: () => run((q) => q.control.interrupt),
  setPermissionMode: (mode) =>
    run((q) => Effect.map(q.control.setPermissionMode(mode), (m) => ({ mode: Option.getOrUndefined(m) }))),
  setModel: (model) => run((q) => q.control.setModel(model)),
  setMaxThinkingTokens: (n, display) => run((q) => q.control.setMaxThinkingTokens(n, display)),
  supportedCommands: () => run((q) => Effect.map(q.control.supportedCommands, (c) => [...c])),
  supportedModels: () => run((q) => Effect.map(q.control.supportedModels, (m) => [...m])),
  supportedAgents: () => run((q) => Effect.map(q.control.supportedAgents, (a) => [...a])),
  accountInfo: () => run((q) => q.control.accountInfo),
  initializationResult: () => run((q) => q.control.initializationResult),
  mcpServerStatus: () => run((q) => Effect.map(q.control.mcpServerStatus, (m) => [...m])),
  getContextUsage: (opts) => run((q) => q.control.getContextUsage(opts)),
  rewindFiles: (id, opts) => run((q) => q.control.rewindFiles(id, opts)),
  reconnectMcpServer: (name) => run((q) => q.control.reconnectMcpServer(name)),
  toggleMcpServer: (name, enabled) => run((q) => q.control.toggleMcpServer(name, enabled)),
  setMcpServers: (servers) => run((q) => q.control.setMcpServers(servers)),
  stopTask: (taskId) => run((q) => q.control.stopTask(taskId)),
  sessionId: () => run((q) => q.sessionId),
  pid: () => run((q) => Effect.succeed(Option.getOrUndefined(q.pid)))
})

/**
 * A query with its prompt, or a warm one (`warm`): the CLI is spawned and initialized now, the prompt is sent when
 * `give` is called, and closing the query before that reaps the CLI.
 */
const begin = (
  defaultRuntime: Runtime,
  promptNow: unknown,
  given: Options,
  warm: boolean
): { readonly query: Query; readonly warm: Warm } => {
  // options that fail the check are not read at all: the query fails with why, through the iterator and the methods
  const invalid = invalidOptions(given)
  const options: Options = invalid === undefined ? given : {}
  // a transport of the caller's own is built for this query alone (it may hold state); the default one is shared
  const own = ownTransport(options)
  const runtime = own === undefined ? defaultRuntime : ManagedRuntime.make(own)
  const logged = loggingOf(options)
  const gate = warm ? warmGate() : undefined
  const source = gate ?? (isPrompt(promptNow) ? promptNow : undefined)
  const start = (up: (started: Started) => void) =>
    logged(withExtensions(
      options,
      invalid !== undefined
        ? Effect.fail(invalid)
        : source === undefined
        ? Effect.fail(promptError(promptNow))
        : runSession(options, source, up)
    ))
  const life = lifecycle(runtime, own !== undefined, start, options.abortController)
  const query = queryMethods(iterate(life), life.close, runOn(life, runtime, logged))
  if (gate === undefined) return { query, warm: notWarm() }
  void life.started.then((exit) => {
    if (Exit.isFailure(exit)) gate.failReady(life.aborted ? new AbortError() : startFailure(life, exit.cause))
  })
  return { query, warm: { ready: gate.ready, give: (p) => Deferred.unsafeDone(gate.prompt, Exit.succeed(p)) } }
}
