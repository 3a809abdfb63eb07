/** @internal */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ControlError, ControlTimeout, InputClosed, ProcessExited } from "../AgentError.js"
import type {
  ControlProtocol,
  InboundHandler,
  Options,
  RequestError,
  RequestOptions
} from "../ControlProtocol.js"
import type * as Message from "../Message.js"
import type * as Transport from "../Transport.js"

const DEFAULT_TIMEOUT = Duration.seconds(60)
const DEFAULT_BUFFER = 4096
const CANCEL_BOUND = Duration.seconds(1)

interface Pending {
  readonly subtype: string
  readonly deferred: Deferred.Deferred<unknown, ControlError | ProcessExited | InputClosed>
}

const errorResponse = (requestId: string, error: string): Message.ControlResponse => ({
  type: "control_response",
  response: { subtype: "error", request_id: requestId, error }
})

const successResponse = (requestId: string, response: unknown): Message.ControlResponse => ({
  type: "control_response",
  response: { subtype: "success", request_id: requestId, response: response ?? {} }
})

const defectMessage = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  if (squashed instanceof Error) return `${squashed.name}: ${squashed.message}`
  return String(squashed)
}

/** @internal */
export const make = (
  connection: Transport.Connection,
  options: Options = {}
): Effect.Effect<ControlProtocol, never, Scope.Scope> =>
  Effect.gen(function*() {
    const handlers: ReadonlyMap<string, InboundHandler> = options.handlers ?? new Map()
    const defaultTimeout = options.requestTimeout === undefined
      ? DEFAULT_TIMEOUT
      : Duration.decode(options.requestTimeout)
    const onMessage = options.onMessage
    const pending = new Map<string, Pending>()
    const prefix = Math.random().toString(36).slice(2, 8)
    let counter = 0
    let frames = 0
    let terminated: ProcessExited | InputClosed | undefined

    const out = yield* Mailbox.make<Message.SdkMessage, ProcessExited>(options.bufferSize ?? DEFAULT_BUFFER)
    const inbound = yield* FiberMap.make<string>()

    const terminate = (error: ProcessExited | InputClosed) =>
      Effect.suspend(() => {
        terminated ??= error
        const entries = [...pending.values()]
        pending.clear()
        return Effect.forEach(entries, (entry) => Deferred.fail(entry.deferred, error), { discard: true })
      })

    yield* Effect.addFinalizer(() =>
      Effect.zipRight(terminate(new InputClosed({ reason: "closed" })), Effect.asVoid(out.end))
    )

    const reply = (message: Message.ControlResponse) => Effect.ignore(connection.send(message))

    const dispatch = (frame: Message.ControlRequest): Effect.Effect<void> => {
      const requestId = frame.request_id
      const handler = handlers.get(frame.request.subtype)
      if (handler === undefined) {
        return reply(errorResponse(requestId, `Unsupported control request subtype: ${frame.request.subtype}`))
      }
      const run = Effect.suspend(() => handler({ requestId, request: frame.request })).pipe(
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
      return Effect.asVoid(FiberMap.run(inbound, requestId, run))
    }

    const resolve = (frame: Message.ControlResponse) => {
      const body = frame.response
      const entry = pending.get(body.request_id)
      if (entry === undefined) {
        return Effect.logDebug("control_response for an unknown request id was ignored").pipe(
          Effect.annotateLogs({ requestId: body.request_id })
        )
      }
      pending.delete(body.request_id)
      return body.subtype === "success"
        ? Deferred.succeed(entry.deferred, body.response)
        : Deferred.fail(
          entry.deferred,
          new ControlError({
            subtype: entry.subtype,
            error: body.error,
            ...(body.error_code !== undefined ? { errorCode: body.error_code } : {})
          })
        )
    }

    const handleChunk = (chunk: Iterable<Message.Frame>): Effect.Effect<void> =>
      Effect.suspend(() => {
        let batch: Array<Message.SdkMessage> = []
        let steps: Effect.Effect<void> = Effect.void
        const flush = () => {
          if (batch.length > 0) {
            const items = batch
            batch = []
            steps = Effect.zipRight(steps, out.offerAll(items))
          }
        }
        for (const frame of chunk) {
          frames++
          switch (frame.type) {
            case "control_response":
              flush()
              steps = Effect.zipRight(steps, resolve(frame))
              break
            case "control_request":
              flush()
              steps = Effect.zipRight(steps, dispatch(frame))
              break
            case "control_cancel_request":
              flush()
              steps = Effect.zipRight(steps, FiberMap.remove(inbound, frame.request_id))
              break
            case "keep_alive":
              break
            default:
              if (onMessage === undefined || onMessage(frame)) batch.push(frame)
          }
        }
        flush()
        return steps
      })

    yield* connection.messages.pipe(
      Stream.runForEachChunk(handleChunk),
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.gen(function*() {
          const error = Exit.isSuccess(exit)
            ? new ProcessExited({ code: 0, signal: null, stderrTail: yield* connection.stderrTail })
            : Cause.failureOption(exit.cause).pipe((o) => (o._tag === "Some" ? o.value : undefined))
          if (error !== undefined) yield* terminate(error)
          yield* out.done(Exit.isSuccess(exit) ? Exit.void : Exit.failCause(exit.cause))
        })
      ),
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
        if (terminated !== undefined) return Effect.fail(terminated)
        const requestId = `req_${++counter}_${prefix}`
        const timeout = requestOptions?.timeout === undefined
          ? defaultTimeout
          : Duration.decode(requestOptions.timeout)
        return Effect.flatMap(Deferred.make<unknown, ControlError | ProcessExited | InputClosed>(), (deferred) => {
          pending.set(requestId, { subtype, deferred })
          const awaited = Deferred.await(deferred)
          const bounded: Effect.Effect<unknown, RequestError> = Duration.isFinite(timeout)
            ? Effect.timeoutFail(awaited, {
              duration: timeout,
              onTimeout: () => new ControlTimeout({ subtype, requestId, timeoutMillis: Duration.toMillis(timeout) })
            })
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
          return connection.send({ type: "control_request", request_id: requestId, request: { ...payload, subtype } })
            .pipe(
              Effect.tapError(() => Effect.sync(() => pending.delete(requestId))),
              Effect.as(result)
            )
        })
      })

    const request = (
      subtype: string,
      payload?: Readonly<Record<string, unknown>>,
      requestOptions?: RequestOptions
    ): Effect.Effect<unknown, RequestError> => Effect.flatten(begin(subtype, payload, requestOptions))

    const protocol: ControlProtocol = {
      request,
      begin,
      send: (message) =>
        Effect.suspend(() => (terminated?._tag === "InputClosed" ? Effect.fail(terminated) : connection.send(message))),
      endInput: connection.endInput,
      messages: Mailbox.toStream(out),
      takeMessages: out.takeAll,
      pendingCount: Effect.sync(() => pending.size),
      inFlightCount: FiberMap.size(inbound),
      framesReceived: () => frames,
      connection
    }
    return protocol
  })
