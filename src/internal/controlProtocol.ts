/** @internal */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import { constVoid } from "effect/Function"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ControlError, ControlTimeout, InputClosed, ProcessExited } from "../AgentError.js"
import type {
  ControlProtocol,
  HandlerFailure,
  InboundHandler,
  Options,
  RequestError,
  RequestOptions
} from "../ControlProtocol.js"
import type * as Message from "../Message.js"
import type * as Transport from "../Transport.js"
import { type CallbackHandler, callbackOf, type SyncSend, syncSendOf } from "./fastPaths.js"
import { frameSourceOf } from "./processTransport.js"

const DEFAULT_TIMEOUT = Duration.seconds(60)
const DEFAULT_BUFFER = 4096
const CANCEL_BOUND = Duration.seconds(1)
/** A stdout read this large means more output was already waiting (Node reads pipes 64 KiB at a time). */
const FULL_READ_BYTES = 64 * 1024
const COALESCE_MAX_MESSAGES = 256
/**
 * Messages all sessions of the process may hold back for coalescing at once: with many sessions streaming together,
 * event-loop turns are long and holding chunks back costs memory (100 sessions: 310 MB peak RSS instead of 190 MB).
 */
const COALESCE_BUDGET = 1024
let coalescing = 0
/**
 * Past this many buffered messages the reader waits for the consumer before its next read, at most
 * `CONSUMER_WAIT_MILLIS` per read: a slow consumer keeps a few hundred parsed messages in memory instead of the whole
 * buffer, while a consumer that stopped (e.g. it awaits a control response) still sees the reader go on, one read per
 * wait, up to the buffer size.
 */
const SOFT_LIMIT = 256
const CONSUMER_WAIT_MILLIS = 10

/** Resumes after the next event-loop turn's I/O (two check phases later), so reads in flight have landed. */
const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  let handle = setImmediate(() => {
    handle = setImmediate(() => resume(Effect.void))
  })
  return Effect.sync(() => clearImmediate(handle))
})

/** The chunks of `messages`, pulled without stream machinery; fails with `None` at the end. @internal */
export type ChunkPull = Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<ProcessExited>>

const chunkPulls = new WeakMap<ControlProtocol, () => ChunkPull>()

/**
 * A pull of this protocol's `messages` (its single consumer), chunk by chunk, without stream machinery: a pull through
 * the stream costs tens of Effect operations per chunk. `undefined` for a protocol this module did not make.
 *
 * @internal
 */
export const chunkPullOf = (protocol: ControlProtocol): ChunkPull | undefined => chunkPulls.get(protocol)?.()

/**
 * A timeout: `"infinity"` (and `Duration.infinity`) waits forever. `Duration.decode` throws on `"infinity"` in this
 * Effect version, and on anything it cannot read; an unreadable input falls back to the default.
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

/** What an error says, for an error response; never throws (a null-prototype object has no `toString`). */
const describeError = (error: unknown): string => {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  } catch {
    return "an error that cannot be printed"
  }
}

const defectMessage = (cause: Cause.Cause<unknown>): string => describeError(Cause.squash(cause))

/** @internal */
export const make = (
  connection: Transport.Connection,
  options: Options = {}
): Effect.Effect<ControlProtocol, never, Scope.Scope> =>
  Effect.gen(function*() {
    const handlers: ReadonlyMap<string, InboundHandler> = options.handlers ?? new Map()
    const defaultTimeout = options.requestTimeout === undefined
      ? DEFAULT_TIMEOUT
      : toDuration(options.requestTimeout)
    const onMessage = options.onMessage
    const pending = new Map<string, Pending>()
    const prefix = Math.random().toString(36).slice(2, 8)
    let counter = 0
    let frames = 0
    // why the protocol ended, made when first needed (on a clean exit no one asks, and a tagged error is not free)
    let terminated: (() => ProcessExited | InputClosed) | undefined
    // the caller ended stdin: later requests fail with `InputClosed`, even once the CLI has exited
    let inputEnded = false

    const out = yield* Mailbox.make<Message.SdkMessage, ProcessExited>(options.bufferSize ?? DEFAULT_BUFFER)
    const inbound = yield* FiberMap.make<string>()

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

    yield* Effect.addFinalizer(() =>
      Effect.zipRight(terminate(() => new InputClosed({ reason: "SessionClosed" })), Effect.asVoid(out.end))
    )

    // the CLI always gets an answer: a response that cannot be written (a BigInt, a cycle) becomes an error one
    const reply = (message: Message.ControlResponse): Effect.Effect<void> =>
      connection.send(message).pipe(
        Effect.catchAllDefect((defect) =>
          connection.send(
            errorResponse(message.response.request_id, `The response could not be written: ${describeError(defect)}`)
          )
        ),
        Effect.ignore
      )

    /** Runs a handler's effect on a fiber of its own (cancellable by request id) and answers with its outcome. */
    const replyWith = (requestId: string, handled: Effect.Effect<unknown, HandlerFailure>): Effect.Effect<void> =>
      handled.pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          if (Exit.isSuccess(exit)) return reply(successResponse(requestId, exit.value))
          const failure = Cause.failureOption(exit.cause)
          if (failure._tag === "Some") return reply(errorResponse(requestId, failure.value.message))
          if (Cause.isInterruptedOnly(exit.cause)) {
            return reply(errorResponse(requestId, "The request handler was interrupted"))
          }
          return reply(errorResponse(requestId, defectMessage(exit.cause)))
        })
      )
    const runInbound = yield* FiberMap.runtime(inbound)<never>()

    // Requests answered by a handler's callback form (see fastPaths.ts): no fiber each; an array, not a Map, so that
    // V8 does not keep each request's objects alive after it is answered. Usually empty or nearly so.
    const sendNow = syncSendOf(connection)
    const callbacks: Array<{ readonly requestId: string; abandon: () => void }> = []
    const forget = (entry: (typeof callbacks)[number]): boolean => {
      const index = callbacks.indexOf(entry)
      if (index === -1) return false
      callbacks.splice(index, 1)
      return true
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const entry of callbacks.splice(0)) entry.abandon()
      })
    )

    const dispatchCallback = (send: SyncSend, callback: CallbackHandler, frame: Message.ControlRequest): void => {
      const requestId = frame.request_id
      // as `reply` does, synchronously
      const answer = (response: Message.ControlResponse) => {
        try {
          send(response)
        } catch (error) {
          send(errorResponse(requestId, `The response could not be written: ${describeError(error)}`))
        }
      }
      const entry = { requestId, abandon: constVoid }
      callbacks.push(entry)
      try {
        entry.abandon = callback({ requestId, request: frame.request }, {
          succeed: (response) => {
            if (forget(entry)) answer(successResponse(requestId, response))
          },
          fail: (message) => {
            if (forget(entry)) answer(errorResponse(requestId, message))
          },
          run: (effect) => {
            if (forget(entry)) runInbound(requestId, replyWith(requestId, effect))
          }
        })
      } catch (error) {
        // a handler that throws instead of answering: the same answer as a defect on its fiber
        if (forget(entry)) answer(errorResponse(requestId, describeError(error)))
      }
    }

    const dispatch = (frame: Message.ControlRequest): Effect.Effect<void> | undefined => {
      const requestId = frame.request_id
      const handler = handlers.get(frame.request.subtype)
      if (handler === undefined) {
        return reply(errorResponse(requestId, `Unsupported control request subtype: ${frame.request.subtype}`))
      }
      const callback = callbackOf(handler)
      if (sendNow !== undefined && callback !== undefined) {
        dispatchCallback(sendNow, callback, frame)
        return undefined
      }
      const run = replyWith(requestId, Effect.suspend(() => handler({ requestId, request: frame.request })))
      return Effect.asVoid(FiberMap.run(inbound, requestId, run))
    }

    const cancelInbound = (requestId: string): Effect.Effect<void> | undefined => {
      const entry = callbacks.find((c) => c.requestId === requestId)
      if (entry === undefined) return FiberMap.remove(inbound, requestId)
      forget(entry)
      entry.abandon()
      return undefined
    }

    /** Settles the pending request a response answers: synchronous, unless the id is unknown (then it logs). */
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

    /**
     * Routes frames in order, synchronously as far as possible: SDK messages go straight into the buffer, responses
     * settle their request; an effect is built only for what needs one (inbound requests, cancels, a full buffer),
     * and the rest of the frames follow it. Returns `undefined` when everything was handled synchronously.
     */
    const handleFrames = (batch: ReadonlyArray<Message.Frame>, from: number): Effect.Effect<void> | undefined => {
      for (let i = from; i < batch.length; i++) {
        const frame = batch[i]!
        frames++
        let step: Effect.Effect<void> | undefined
        switch (frame.type) {
          case "control_response":
            step = resolve(frame)
            break
          case "control_request":
            step = dispatch(frame)
            break
          case "control_cancel_request":
            step = cancelInbound(frame.request_id)
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

    const handleChunk = (chunk: Chunk.Chunk<Message.Frame>): Effect.Effect<void> =>
      Effect.suspend(() => handleFrames(Chunk.toReadonlyArray(chunk), 0) ?? Effect.void)

    const softLimit = Math.min(SOFT_LIMIT, options.bufferSize ?? DEFAULT_BUFFER)
    const backlog = (): number => {
      const size = out.unsafeSize()
      return size._tag === "Some" ? size.value : 0
    }
    // the reader waiting for a take (see SOFT_LIMIT)
    let onTake: (() => void) | undefined
    const taken = <A>(effect: Effect.Effect<A, ProcessExited>): Effect.Effect<A, ProcessExited> =>
      Effect.tap(effect, () => {
        const wake = onTake
        onTake = undefined
        wake?.()
      })
    const awaitConsumer: Effect.Effect<void> = Effect.async<void>((resume) => {
      const done = () => {
        clearTimeout(timer)
        onTake = undefined
        resume(Effect.void)
      }
      const timer = setTimeout(done, CONSUMER_WAIT_MILLIS)
      onTake = done
      return Effect.sync(() => {
        clearTimeout(timer)
        onTake = undefined
      })
    })

    // Statistics of the process reader, for `messages` (see `takeCoalesced`).
    let reads = 0
    let lastReadBytes: () => number = () => 0

    const readFrames: Effect.Effect<void, ProcessExited, Scope.Scope> = Effect.suspend(() => {
      const makeSource = frameSourceOf(connection.messages)
      if (makeSource === undefined) return connection.messages.pipe(Stream.runForEachChunk(handleChunk))
      return Effect.flatMap(makeSource, (source) => {
        lastReadBytes = source.lastReadBytes
        // one reusable step per read: parse, route, read again
        const onFrames = (batch: ReadonlyArray<Message.Frame>): Effect.Effect<void, Option.Option<ProcessExited>> => {
          reads++
          const rest = handleFrames(batch, 0)
          const next = backlog() >= softLimit ? Effect.zipRight(awaitConsumer, loop) : loop
          return rest === undefined ? next : Effect.zipRight(rest, next)
        }
        const loop: Effect.Effect<void, Option.Option<ProcessExited>> = Effect.flatMap(source.pull, onFrames)
        return Effect.catchAll(loop, (end) => (end._tag === "None" ? Effect.void : Effect.fail(end.value)))
      })
    })

    yield* readFrames.pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.gen(function*() {
          if (Exit.isSuccess(exit)) {
            const stderrTail = yield* connection.stderrTail
            yield* terminate(() => new ProcessExited({ code: 0, signal: null, stderrTail }))
          } else {
            const failure = Cause.failureOption(exit.cause)
            if (failure._tag === "Some") yield* terminate(() => failure.value)
          }
          yield* out.done(Exit.isSuccess(exit) ? Exit.void : Exit.failCause(exit.cause))
        })
      ),
      Effect.scoped,
      Effect.forkScoped
    )

    const cancel = (requestId: string) =>
      connection.send({ type: "control_cancel_request", request_id: requestId }).pipe(
        Effect.timeout(CANCEL_BOUND),
        Effect.ignore
      )

    const begin = (
      subtype: string,
      payload?: Readonly<Record<string, unknown>>,
      requestOptions?: RequestOptions
    ): Effect.Effect<Effect.Effect<unknown, RequestError>, RequestError> =>
      Effect.suspend(() => {
        if (terminated !== undefined) {
          // the caller's own end of input wins over the exit that may have followed it
          return Effect.fail(inputEnded ? new InputClosed({ reason: "InputEnded" }) : terminated())
        }
        const requestId = `req_${++counter}_${prefix}`
        const timeout = requestOptions?.timeout === undefined
          ? defaultTimeout
          : toDuration(requestOptions.timeout)
        return Effect.flatMap(Deferred.make<unknown, RequestError>(), (deferred) => {
          pending.set(requestId, { subtype, deferred })
          const awaited = Deferred.await(deferred)
          // the timer fails the request's Deferred itself: one fiber, where `Effect.timeout` races two
          const bounded: Effect.Effect<unknown, RequestError> = Duration.isFinite(timeout)
            ? Effect.flatMap(
              Effect.fork(Effect.zipRight(
                Effect.sleep(timeout),
                Effect.suspend(() =>
                  Deferred.fail(
                    deferred,
                    new ControlTimeout({ subtype, requestId, timeoutMillis: Duration.toMillis(timeout) })
                  )
                )
              )),
              (timer) => Effect.ensuring(awaited, Fiber.interrupt(timer))
            )
            : awaited
          const result = bounded.pipe(
            Effect.onExit((exit) => {
              pending.delete(requestId)
              if (Exit.isSuccess(exit)) return Effect.void
              const failure = Cause.failureOption(exit.cause)
              const timedOut = failure._tag === "Some" && failure.value._tag === "ControlTimeout"
              return timedOut || Cause.isInterruptedOnly(exit.cause) ? cancel(requestId) : Effect.void
            })
          )
          // interrupted while writing: the request may be on the wire, so it is cancelled (harmless if it is not)
          return connection.send({ type: "control_request", request_id: requestId, request: { ...payload, subtype } })
            .pipe(
              Effect.onExit((exit) => {
                if (Exit.isSuccess(exit)) return Effect.void
                pending.delete(requestId)
                return Cause.isInterruptedOnly(exit.cause) ? cancel(requestId) : Effect.void
              }),
              Effect.as(result)
            )
        })
      })

    const request = (
      subtype: string,
      payload?: Readonly<Record<string, unknown>>,
      requestOptions?: RequestOptions
    ): Effect.Effect<unknown, RequestError> =>
      // no interruption between the write and the wait: the wait's finalizer is what cancels and forgets the request
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(begin(subtype, payload, requestOptions)), (awaitResponse) => restore(awaitResponse))
      )

    /**
     * Takes every buffered message, like `Mailbox.toStream` does, with one difference: while the CLI writes faster
     * than we read (full stdout reads), the hand-over waits a few event-loop turns (bounded) so that the reads already
     * on their way join the same chunk. Every chunk costs the stages of the consumer's stream the same, whatever its
     * size; at full speed this makes chunks ~10x larger for a delay of about a millisecond. Slower output (a turn's
     * partial reads, control round trips) is handed over at once.
     */
    const takeAll = taken(out.takeAll)
    const takeCoalesced: Effect.Effect<readonly [Chunk.Chunk<Message.SdkMessage>, boolean], ProcessExited> = Effect
      .flatMap(takeAll, (first) => {
        if (
          first[1] || lastReadBytes() < FULL_READ_BYTES || first[0].length >= COALESCE_MAX_MESSAGES ||
          coalescing + COALESCE_MAX_MESSAGES > COALESCE_BUDGET
        ) {
          return Effect.succeed(first)
        }
        // the buffer's array, handed over by `takeAll`
        const gathered = Chunk.toReadonlyArray(first[0]) as Array<Message.SdkMessage>
        coalescing += COALESCE_MAX_MESSAGES
        const gather = (seen: number): Effect.Effect<readonly [Chunk.Chunk<Message.SdkMessage>, boolean]> =>
          Effect.flatMap(nextTurn, () => {
            const size = out.unsafeSize()
            if (size._tag === "None" || size.value === 0) return Effect.succeed([Chunk.unsafeFromArray(gathered), false])
            // not empty: `takeAll` neither waits nor fails
            return Effect.flatMap(Effect.orDie(takeAll), ([more, done]) => {
              const moreArray = Chunk.toReadonlyArray(more) as Array<Message.SdkMessage>
              for (const message of moreArray) gathered.push(message)
              // handed over by the buffer and copied: emptied so that nothing stale keeps the messages alive
              moreArray.length = 0
              if (!done && reads !== seen && lastReadBytes() >= FULL_READ_BYTES && gathered.length < COALESCE_MAX_MESSAGES) {
                return gather(reads)
              }
              return Effect.succeed([Chunk.unsafeFromArray(gathered), done] as const)
            })
          })
        return Effect.ensuring(
          gather(reads),
          Effect.sync(() => {
            coalescing -= COALESCE_MAX_MESSAGES
          })
        )
      })

    const makeChunkPull = (): ChunkPull => {
      let ended = false
      return Effect.suspend(() => {
        if (ended) return Effect.fail(Option.none())
        return Effect.matchEffect(takeCoalesced, {
          onFailure: (error) => Effect.fail(Option.some(error)),
          onSuccess: ([chunk, done]): ChunkPull => {
            if (!done) return Effect.succeed(chunk)
            ended = true
            return chunk.length > 0 ? Effect.succeed(chunk) : Effect.fail(Option.none())
          }
        })
      })
    }
    const messages: Stream.Stream<Message.SdkMessage, ProcessExited> = Stream.suspend(() =>
      Stream.repeatEffectChunkOption(makeChunkPull())
    )

    const protocol: ControlProtocol = {
      request,
      begin,
      send: (message) =>
        Effect.suspend(() => {
          const error = terminated?.()
          return error?._tag === "InputClosed" ? Effect.fail(error) : connection.send(message)
        }),
      endInput: Effect.suspend(() => {
        inputEnded = true
        return connection.endInput
      }),
      messages,
      takeMessages: takeAll,
      endMessages: Effect.asVoid(out.end),
      pendingCount: Effect.sync(() => pending.size),
      inFlightCount: Effect.map(FiberMap.size(inbound), (n) => n + callbacks.length),
      framesReceived: () => frames,
      connection
    }
    chunkPulls.set(protocol, makeChunkPull)
    return protocol
  })
