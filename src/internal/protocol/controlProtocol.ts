/** @internal */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ControlError, ControlTimeout, InputClosed, ProcessExited } from "../../AgentError.js"
import type { ControlProtocol, Options, RequestError, RequestOptions } from "../../ControlProtocol.js"
import type * as Message from "../../Message.js"
import type * as Transport from "../../Transport.js"
import { refusal } from "../message/refusal.js"
import { awaitUntil, awaitWithin, type Expiry } from "./awaitWithin.js"
import * as Handler from "./handler.js"
import { makeWakeup } from "./wakeup.js"

const DEFAULT_TIMEOUT = Duration.seconds(60)
const DEFAULT_BUFFER = 4096

/** Sends no response (see `ControlProtocol.noAnswer`). @internal */
export const noAnswer: unique symbol = Symbol.for("effect-claude-agent/ControlProtocol/noAnswer")

/**
 * Past this many buffered messages the reader waits for the consumer before its next read, at most
 * `CONSUMER_WAIT` per read: a slow consumer keeps a few hundred parsed messages in memory instead of the whole
 * buffer, while a consumer that stopped (e.g. it awaits a control response) still sees the reader go on, one read per
 * wait, up to the buffer size.
 */
const SOFT_LIMIT = 256
const CONSUMER_WAIT = Duration.millis(10)

/**
 * Options only the session (the protocol's owner) passes.
 *
 * @internal
 */
export interface OwnerOptions extends Omit<Options, "handlers"> {
  /** Handlers by request subtype, in the one inbound contract (./handler.ts). */
  readonly handlers?: ReadonlyMap<string, Handler.Handler> | undefined
  /**
   * Called by the reader for every SDK message before it is buffered, in order, for state that must be current
   * whether or not anyone consumes the messages (the session id, the CLI's state). Return `false` to keep the message
   * out of the buffer. It must not throw; it runs on the reader.
   */
  readonly onMessage?: ((message: Message.SdkMessage) => boolean) | undefined
  /**
   * Told when the reader reached the end of the CLI's stdout, once the process exited (`exit`: why, unless it exited
   * 0). With it, the owner ends the message buffer (`endMessages`) and says why the messages ended; without it, the
   * protocol ends the buffer itself, with the exit, and when its scope closes.
   */
  readonly onEnd?: ((exit: ProcessExited | undefined) => Effect.Effect<void>) | undefined
}

/**
 * The protocol as its owner (the session) sees it: the public interface plus what only the owner of the message
 * buffer may do.
 *
 * @internal
 */
export interface Owned extends ControlProtocol {
  /**
   * Writes a control request now and returns the effect that waits for its response (with the timeout and
   * cancellation of `request`): for a request that must be on the wire before anything written after it.
   */
  readonly begin: (
    subtype: string,
    payload?: Readonly<Record<string, unknown>>,
    options?: BeginOptions
  ) => Effect.Effect<Effect.Effect<unknown, RequestError>, RequestError>
  /**
   * Takes every SDK message buffered so far (waiting for at least one), and whether the buffer is done: the same
   * buffer as `messages` and `pullMessages` (use one of the three).
   */
  readonly takeMessages: Effect.Effect<readonly [Chunk.Chunk<Message.SdkMessage>, boolean], ProcessExited>
  /** `messages` as a pull (what `messages` runs): fails with `None` once the buffer is done and empty. */
  readonly pullMessages: Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<ProcessExited>>
  /**
   * Ends the buffer once everything in it has been taken, without touching the CLI: for a consumer that has heard
   * all it waits for, or has to stop. SDK messages the CLI writes later are dropped.
   */
  readonly endMessages: Effect.Effect<void>
  /** Completes once the reader has seen the end of the CLI's stdout (every frame it wrote has been routed). */
  readonly readerDone: Effect.Effect<void>
  /** Calls `f` (synchronously, on the reader) once `readerDone` completes; at once if it has. `f` must not throw. */
  readonly whenReaderDone: (f: () => void) => void
}

/**
 * Options of {@link Owned.begin}: `expiry`, when given, is the deadline of the wait (its timer is the owner's), and
 * `timeout` only what its `ControlTimeout` reports.
 *
 * @internal
 */
export interface BeginOptions extends RequestOptions {
  readonly expiry?: Expiry | undefined
}

/**
 * A timeout: `"infinity"` (and `Duration.infinity`) waits forever; an input `Duration` cannot read falls back to the
 * default.
 */
const toDuration = (input: Duration.DurationInput | "infinity"): Duration.Duration =>
  input === "infinity" ? Duration.infinity : Option.getOrElse(Duration.decodeUnknown(input), () => DEFAULT_TIMEOUT)

interface Pending {
  readonly subtype: string
  readonly deferred: Deferred.Deferred<unknown, RequestError>
}

const errorResponse = (requestId: string, error: string): Message.ControlResponse => ({
  type: "control_response",
  response: { subtype: "error", request_id: requestId, error }
})

const successResponse = (requestId: string, response: unknown): Message.ControlResponse => ({
  type: "control_response",
  response: { subtype: "success", request_id: requestId, response: response ?? {} }
})

/**
 * Our requests to the CLI: one `Deferred` per request id in `pending`, settled by the reader through `resolve`,
 * bounded by `awaitWithin` and cancelled on the wire on timeout or interruption.
 */
interface Outbound extends Pick<ControlProtocol, "request" | "send" | "endInput" | "pendingCount"> {
  readonly begin: Owned["begin"]
  /** Settles the pending request a response answers: synchronous, unless the id is unknown (then it logs). */
  readonly resolve: (frame: Message.ControlResponse) => Effect.Effect<void> | undefined
  /**
   * Ends the protocol: every pending request fails with `reason` (made when first needed), and so does every later
   * one. The first reason stays.
   */
  readonly terminate: (reason: () => ProcessExited | InputClosed) => Effect.Effect<void>
}

const makeOutbound = (connection: Transport.Connection, options: OwnerOptions): Outbound => {
  const defaultTimeout = options.requestTimeout === undefined
    ? DEFAULT_TIMEOUT
    : toDuration(options.requestTimeout)
  const pending = new Map<string, Pending>()
  const prefix = Math.random().toString(36).slice(2, 8)
  let counter = 0
  // why the protocol ended, made when first needed (on a clean exit no one asks, and a tagged error is not free)
  let terminated: (() => ProcessExited | InputClosed) | undefined
  // the caller ended stdin: later requests fail with `InputClosed`, even once the CLI has exited
  let inputEnded = false

  const terminate = (reason: () => ProcessExited | InputClosed) =>
    Effect.suspend(() => {
      let error: ProcessExited | InputClosed | undefined
      const made = () => (error ??= reason())
      terminated ??= made
      if (pending.size === 0) return Effect.void
      const entries = [...pending.values()]
      pending.clear()
      return Effect.forEach(entries, (entry) => Deferred.fail(entry.deferred, made()), { discard: true })
    })

  const resolve = (frame: Message.ControlResponse): Effect.Effect<void> | undefined => {
    const body = frame.response
    const entry = pending.get(body.request_id)
    if (entry === undefined) {
      return Effect.logDebug("control_response for an unknown request id was ignored").pipe(
        Effect.annotateLogs({ requestId: body.request_id })
      )
    }
    pending.delete(body.request_id)
    Deferred.unsafeDone(
      entry.deferred,
      body.subtype === "success"
        ? Exit.succeed(body.response)
        : Exit.fail(
          new ControlError({
            subtype: entry.subtype,
            description: body.error,
            ...(body.error_code !== undefined ? { errorCode: body.error_code } : {})
          })
        )
    )
    return undefined
  }

  // best effort: a CLI gone already needs no cancel
  const cancel = (requestId: string) =>
    Effect.sync(() => {
      connection.unsafeSend({ type: "control_cancel_request", request_id: requestId })
    })

  const begin = (
    subtype: string,
    payload?: Readonly<Record<string, unknown>>,
    requestOptions?: BeginOptions
  ): Effect.Effect<Effect.Effect<unknown, RequestError>, RequestError> =>
    Effect.suspend(() => {
      const refused = refusal(inputEnded, terminated)
      if (refused !== undefined) return Effect.fail(refused)
      const requestId = `req_${++counter}_${prefix}`
      const timeout = requestOptions?.timeout === undefined
        ? defaultTimeout
        : toDuration(requestOptions.timeout)
      const deferred = Deferred.unsafeMake<unknown, RequestError>(FiberId.none)
      pending.set(requestId, { subtype, deferred })
      const onTimeout = () => new ControlTimeout({ subtype, requestId, timeoutMillis: Duration.toMillis(timeout) })
      const expiry = requestOptions?.expiry
      const bounded: Effect.Effect<unknown, RequestError> = expiry !== undefined
        ? awaitUntil(deferred, expiry, onTimeout)
        : Duration.isFinite(timeout)
        ? awaitWithin(deferred, { duration: timeout, onTimeout })
        : Deferred.await(deferred)
      const result = bounded.pipe(
        Effect.onExit((exit) => {
          pending.delete(requestId)
          if (Exit.isSuccess(exit)) return Effect.void
          const failure = Cause.failureOption(exit.cause)
          const timedOut = failure._tag === "Some" && failure.value._tag === "ControlTimeout"
          return timedOut || Cause.isInterruptedOnly(exit.cause) ? cancel(requestId) : Effect.void
        })
      )
      let error: ProcessExited | InputClosed | undefined
      try {
        error = connection.unsafeSend({
          type: "control_request",
          request_id: requestId,
          request: { ...payload, subtype }
        })
      } catch (defect) {
        // a payload that cannot be written (a BigInt, a cycle): nothing was sent, nothing stays pending
        pending.delete(requestId)
        return Effect.die(defect)
      }
      if (error === undefined) return Effect.succeed(result)
      pending.delete(requestId)
      return Effect.fail(error)
    })

  const request = (
    subtype: string,
    payload?: Readonly<Record<string, unknown>>,
    requestOptions?: RequestOptions
  ): Effect.Effect<unknown, RequestError> =>
    // no interruption between the write and the wait: the wait's finalizer is what cancels and forgets the request
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(begin(subtype, payload, requestOptions), (awaitResponse) => restore(awaitResponse))
    )

  return {
    begin,
    request,
    resolve,
    terminate,
    send: (message) =>
      Effect.suspend(() => {
        const error = terminated?.()
        return error?._tag === "InputClosed" ? Effect.fail(error) : connection.send(message)
      }),
    endInput: Effect.suspend(() => {
      inputEnded = true
      return connection.endInput
    }),
    pendingCount: Effect.sync(() => pending.size)
  }
}

/**
 * The CLI's requests to us: each is dispatched to the handler registered for its subtype (the one contract of
 * ./handler.ts), and the CLI always gets an answer. A handler is called in place, on the reader; it answers through
 * `unsafeSend`, with no fiber unless it forks one.
 */
interface Inbound {
  /** Dispatches a request, synchronously. */
  readonly dispatch: (frame: Message.ControlRequest) => void
  /** The CLI cancelled a request: its handler is told, synchronously. */
  readonly cancel: (requestId: string) => void
  /** Abandons every request still being answered, for the scope's close; forked fibers end with their `FiberSet`. */
  readonly abandonAll: Effect.Effect<void>
  readonly inFlightCount: Effect.Effect<number>
}

/** Forks a handler's fiber, interrupted when the protocol's scope closes. */
type RunFork = (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>

const makeInbound = (
  connection: Transport.Connection,
  handlers: ReadonlyMap<string, Handler.Handler>
): Effect.Effect<Inbound, never, Scope.Scope> =>
  Effect.gen(function*() {
    // the CLI always gets an answer: a response that cannot be written (a BigInt, a cycle) becomes an error one
    const answer = (message: Message.ControlResponse): void => {
      try {
        connection.unsafeSend(message)
      } catch (error) {
        connection.unsafeSend(
          errorResponse(
            message.response.request_id,
            `The response could not be written: ${Handler.describeError(error)}`
          )
        )
      }
    }
    // The handlers' fibers: a `FiberSet` made when a handler first forks one (most sessions never do), in a scope of
    // its own that this finalizer closes, so the fibers are interrupted where the set's own finalizer would run.
    let forked: { readonly scope: Scope.CloseableScope; readonly runFork: RunFork } | undefined
    const scope = yield* Effect.scope
    yield* Scope.addFinalizerExit(
      scope,
      (exit) => Effect.suspend(() => (forked === undefined ? Effect.void : Scope.close(forked.scope, exit)))
    )
    const runtime = yield* Effect.runtime<never>()
    const runFork: RunFork = (effect) => {
      forked ??= Runtime.runSync(runtime)(Effect.gen(function*() {
        const scope = yield* Scope.make()
        return { scope, runFork: yield* Scope.extend(FiberSet.makeRuntime<never, void, never>(), scope) }
      }))
      return forked.runFork(effect)
    }

    // Requests being answered: an array, not a Map (see docs/PERFORMANCE.md, P2). Usually empty or nearly so.
    const pending: Array<{ readonly requestId: string; abandon: () => void }> = []
    const forget = (entry: (typeof pending)[number]): boolean => {
      const index = pending.indexOf(entry)
      if (index === -1) return false
      pending.splice(index, 1)
      return true
    }

    const dispatch = (frame: Message.ControlRequest): void => {
      const requestId = frame.request_id
      const handler = handlers.get(frame.request.subtype)
      if (handler === undefined) {
        return answer(errorResponse(requestId, `Unsupported control request subtype: ${frame.request.subtype}`))
      }
      const entry = { requestId, abandon: Handler.noop }
      pending.push(entry)
      try {
        entry.abandon = handler({ requestId, request: frame.request }, {
          succeed: (response) => {
            if (forget(entry) && response !== noAnswer) answer(successResponse(requestId, response))
          },
          fail: (message) => {
            if (forget(entry)) answer(errorResponse(requestId, message))
          },
          fork: (effect) => {
            const fiber = runFork(effect)
            return () => fiber.unsafeInterruptAsFork(FiberId.none)
          }
        })
      } catch (error) {
        // a handler that throws instead of answering: the same answer as a defect
        if (forget(entry)) answer(errorResponse(requestId, Handler.describeError(error)))
      }
    }

    const cancel = (requestId: string): void => {
      const entry = pending.find((c) => c.requestId === requestId)
      if (entry === undefined) return
      forget(entry)
      entry.abandon()
    }

    return {
      dispatch,
      cancel,
      abandonAll: Effect.sync(() => {
        for (const entry of pending.splice(0)) entry.abandon()
      }),
      inFlightCount: Effect.sync(() => pending.length)
    }
  })

/**
 * The one buffer of SDK messages (a `Mailbox`) and its consumer's side: `messages`, `takeMessages`, `pullMessages`
 * and `endMessages` all read it; the reader offers into `mailbox`.
 */
interface MessageBuffer extends Pick<Owned, "takeMessages" | "pullMessages" | "endMessages"> {
  readonly mailbox: Mailbox.Mailbox<Message.SdkMessage, ProcessExited>
  /** Whether the buffer holds `SOFT_LIMIT` messages or more: then the reader waits with `awaitConsumer`. */
  readonly backlogged: () => boolean
  /** Resumes when the consumer next takes messages, or after `CONSUMER_WAIT`. */
  readonly awaitConsumer: Effect.Effect<void>
}

const makeMessageBuffer = (bufferSize: number): Effect.Effect<MessageBuffer> =>
  Effect.map(Mailbox.make<Message.SdkMessage, ProcessExited>(bufferSize), (out) => {
    // the consumer took messages: a reader waiting past the soft limit goes on (see SOFT_LIMIT)
    const consumed = makeWakeup(CONSUMER_WAIT)
    const softLimit = Math.min(SOFT_LIMIT, bufferSize)
    const backlogged = (): boolean => {
      const size = out.unsafeSize()
      return (size._tag === "Some" ? size.value : 0) >= softLimit
    }

    const takeMessages = Effect.tap(out.takeAll, () => consumed.wake())
    let messagesEnded = false
    const pullMessages: Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<ProcessExited>> = Effect
      .suspend(() => {
        if (messagesEnded) return Effect.fail(Option.none())
        return Effect.matchEffect(takeMessages, {
          onFailure: (error) => Effect.fail(Option.some(error)),
          onSuccess: ([chunk, done]) => {
            if (!done) return Effect.succeed(chunk)
            messagesEnded = true
            return chunk.length > 0 ? Effect.succeed(chunk) : Effect.fail(Option.none())
          }
        })
      })

    return {
      mailbox: out,
      backlogged,
      awaitConsumer: consumed.wait,
      takeMessages,
      pullMessages,
      endMessages: Effect.asVoid(out.end)
    }
  })

/**
 * The one reader of the connection: a batch of frames per stdout read, routed in order and synchronously where it
 * can be (SDK messages into the buffer, responses to `outbound`, the CLI's requests and cancels to `inbound`). When
 * the connection ends, the protocol is terminated with why, and the owner is told (`onEnd`), or else the buffer is done
 * with the same exit. The connection's pull is opened in the protocol's scope (no scope of the reader's own).
 */
const readConnection = (
  connection: Transport.Connection,
  { onEnd, onMessage }: Pick<OwnerOptions, "onMessage" | "onEnd">,
  outbound: Outbound,
  inbound: Inbound,
  buffer: MessageBuffer
): Effect.Effect<void, never, Scope.Scope> => {
  const { resolve, terminate } = outbound
  const { cancel, dispatch } = inbound
  const { awaitConsumer, backlogged } = buffer
  const out = buffer.mailbox

  /**
   * Routes frames in order, synchronously as far as possible: SDK messages go straight into the buffer, responses
   * settle their request; an effect is built only for what needs one (inbound requests, cancels, a full buffer),
   * and the rest of the frames follow it. Returns `undefined` when everything was handled synchronously.
   */
  const handleFrames = (batch: ReadonlyArray<Message.Frame>, from: number): Effect.Effect<void> | undefined => {
    for (let i = from; i < batch.length; i++) {
      const frame = batch[i]!
      let step: Effect.Effect<void> | undefined
      switch (frame.type) {
        case "control_response":
          step = resolve(frame)
          break
        case "control_request":
          dispatch(frame)
          break
        case "control_cancel_request":
          cancel(frame.request_id)
          break
        case "keep_alive":
          break
        default:
          if ((onMessage === undefined || onMessage(frame)) && !out.unsafeOffer(frame)) {
            // the buffer is full (backpressure: wait for the consumer) or closed (then this returns at once)
            step = Effect.asVoid(out.offer(frame))
          }
      }
      if (step !== undefined) {
        if (i + 1 === batch.length) return step
        const next = i + 1
        return Effect.flatMap(step, () => handleFrames(batch, next) ?? Effect.void)
      }
    }
    return undefined
  }

  const readFrames: Effect.Effect<void, ProcessExited, Scope.Scope> = Effect.flatMap(connection.pull, (pull) => {
    const onFrames = (chunk: Chunk.Chunk<Message.Frame>): Effect.Effect<void, Option.Option<ProcessExited>> => {
      const rest = handleFrames(Chunk.toReadonlyArray(chunk), 0)
      const next = backlogged() ? Effect.zipRight(awaitConsumer, loop) : loop
      return rest === undefined ? next : Effect.zipRight(rest, next)
    }
    const loop: Effect.Effect<void, Option.Option<ProcessExited>> = Effect.flatMap(pull, onFrames)
    return Effect.catchAll(loop, (end) => (end._tag === "None" ? Effect.void : Effect.fail(end.value)))
  })

  return readFrames.pipe(
    Effect.exit,
    Effect.flatMap((exit) =>
      Effect.gen(function*() {
        const failure = Exit.isSuccess(exit) ? undefined : Cause.failureOption(exit.cause)
        if (failure === undefined) {
          const stderrTail = yield* connection.stderrTail
          yield* terminate(() => new ProcessExited({ code: 0, signal: null, stderrTail }))
        } else if (failure._tag === "Some") {
          yield* terminate(() => failure.value)
        }
        if (onEnd === undefined) return yield* out.done(Exit.isSuccess(exit) ? Exit.void : Exit.failCause(exit.cause))
        // interrupted (the scope closed): the owner knows already
        if (failure === undefined) yield* onEnd(undefined)
        else if (failure._tag === "Some") yield* onEnd(failure.value)
      })
    )
  )
}

/** @internal */
export const make = (
  connection: Transport.Connection,
  options: OwnerOptions = {}
): Effect.Effect<Owned, never, Scope.Scope> =>
  Effect.gen(function*() {
    const outbound = makeOutbound(connection, options)
    const buffer = yield* makeMessageBuffer(options.bufferSize ?? DEFAULT_BUFFER)
    const inbound = yield* makeInbound(connection, options.handlers ?? new Map())
    // Finalizers run in reverse: on close the reader stops, the callbacks still answering are abandoned, pending
    // requests fail and the buffer ends, and last the handlers' fibers are interrupted (the `FiberSet` in `inbound`).
    const scope = yield* Effect.scope
    yield* Scope.addFinalizer(
      scope,
      Effect.zipRight(
        outbound.terminate(() => new InputClosed({ reason: "SessionClosed" })),
        options.onEnd === undefined ? buffer.endMessages : Effect.void
      )
    )
    yield* Scope.addFinalizer(scope, inbound.abandonAll)
    const readerDone = yield* Deferred.make<void>()
    // told when the reader is done, without a fiber waiting for `readerDone`
    let atReaderDone: Array<() => void> | undefined = []
    const whenReaderDone = (f: () => void) => {
      if (atReaderDone === undefined) f()
      else atReaderDone.push(f)
    }
    yield* Effect.forkScoped(
      readConnection(connection, options, outbound, inbound, buffer).pipe(
        Effect.ensuring(Effect.zipRight(
          Deferred.succeed(readerDone, undefined),
          Effect.sync(() => {
            const told = atReaderDone ?? []
            atReaderDone = undefined
            for (const f of told) f()
          })
        ))
      )
    )

    return {
      request: outbound.request,
      begin: outbound.begin,
      send: outbound.send,
      endInput: outbound.endInput,
      messages: Stream.repeatEffectChunkOption(buffer.pullMessages),
      takeMessages: buffer.takeMessages,
      pullMessages: buffer.pullMessages,
      endMessages: buffer.endMessages,
      readerDone: Deferred.await(readerDone),
      whenReaderDone,
      pendingCount: outbound.pendingCount,
      inFlightCount: inbound.inFlightCount,
      connection
    }
  })

/**
 * The protocol as `ControlProtocol.make` offers it: the handlers given are Effect handlers, served through the Effect
 * adapter of the one inbound contract.
 *
 * @internal
 */
export const makePublic = (
  connection: Transport.Connection,
  options: Options = {}
): Effect.Effect<ControlProtocol, never, Scope.Scope> => {
  const { handlers, ...rest } = options
  return make(connection, {
    ...rest,
    handlers: handlers === undefined
      ? undefined
      : new Map([...handlers].map(([subtype, handler]) => [subtype, Handler.fromEffect(handler.handle)]))
  })
}
