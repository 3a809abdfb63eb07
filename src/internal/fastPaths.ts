/** @internal */
import * as Effect from "effect/Effect"
import type { InputClosed, ProcessExited } from "../AgentError.js"
import type { HandlerFailure, InboundHandler, InboundRequest } from "../ControlProtocol.js"
import type * as Message from "../Message.js"
import type * as Transport from "../Transport.js"
import type * as Deadlines from "./deadlines.js"

// Two optional fast paths between internal modules, keyed by the public value they belong to (so a wrapped
// connection or a handler of the user's own never matches): together they let a `can_use_tool` request answered by
// a Promise callback go from stdout to stdin without a fiber of its own. A fiber per request costs an insertion into
// and a deletion from long-lived `Set`s and `Map`s of the Effect runtime (the global fiber roots, a `FiberMap`); V8
// then keeps everything the fiber referenced until the next full GC, which doubled the young-generation GC time of a
// stream of permission round trips.

/**
 * The synchronous form of a connection's `send`: writes the message, or returns why it cannot.
 *
 * @internal
 */
export type SyncSend = (message: Message.StdinMessage) => ProcessExited | InputClosed | undefined

const syncSends = new WeakMap<Transport.Connection["send"], SyncSend>()

/** Builds a connection's `send` from its synchronous form, and remembers the pair. @internal */
export const sendFrom = (sync: SyncSend): Transport.Connection["send"] => {
  const send: Transport.Connection["send"] = (message) =>
    Effect.suspend(() => {
      const error = sync(message)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
  syncSends.set(send, sync)
  return send
}

/** The synchronous form of `connection.send`, if its transport has one. @internal */
export const syncSendOf = (connection: Transport.Connection): SyncSend | undefined => syncSends.get(connection.send)

/**
 * How a {@link CallbackHandler} answers, at most once (later calls are ignored): with a success response, an error
 * response, or the outcome of an effect (run on a fiber of its own; for rare paths such as logging a failure).
 *
 * @internal
 */
export interface Reply {
  readonly succeed: (response: unknown) => void
  readonly fail: (message: string) => void
  readonly run: (effect: Effect.Effect<unknown, HandlerFailure>) => void
}

/**
 * An inbound handler in callback form: starts handling, answers through `reply` (now or later), and returns what to
 * do if the request is abandoned before it answered (`control_cancel_request`, the protocol closing).
 *
 * @internal
 */
export type CallbackHandler = (request: InboundRequest, reply: Reply) => () => void

const callbackHandlers = new WeakMap<InboundHandler, CallbackHandler>()

/**
 * The handler that answers as `callback` does, on the fiber that runs it (what a transport without a synchronous
 * `send` gets); the control protocol calls `callback` itself where it can.
 *
 * @internal
 */
export const handlerFrom = (callback: CallbackHandler): InboundHandler => {
  const handler: InboundHandler = (request) =>
    Effect.async<unknown, HandlerFailure>((resume) => {
      let done = false
      const once = (effect: Effect.Effect<unknown, HandlerFailure>) => {
        if (done) return
        done = true
        resume(effect)
      }
      const abandon = callback(request, {
        succeed: (response) => once(Effect.succeed(response)),
        fail: (message) => once(Effect.fail({ _tag: "HandlerFailure", message })),
        run: once
      })
      return Effect.sync(() => {
        if (done) return
        done = true
        abandon()
      })
    })
  callbackHandlers.set(handler, callback)
  return handler
}

/** The callback form of `handler`, if it has one. @internal */
export const callbackOf = (handler: InboundHandler): CallbackHandler | undefined => callbackHandlers.get(handler)

/**
 * An `AbortSignal` built only if read (an `AbortController` per request was a large share of a permission round
 * trip): `abort` aborts it, or makes it start aborted.
 *
 * @internal
 */
export const lazySignal = (): { readonly signal: () => AbortSignal; readonly abort: () => void } => {
  let controller: AbortController | undefined
  let aborted = false
  return {
    signal: () => {
      if (controller === undefined) {
        controller = new AbortController()
        if (aborted) controller.abort()
      }
      return controller.signal
    },
    abort: () => {
      aborted = true
      controller?.abort()
    }
  }
}

/**
 * Calls a Promise callback (or one that returns its value directly, as `await` allows) on behalf of a
 * {@link CallbackHandler}, and settles once: with its value, its failure (a throw or a rejection), or at its deadline,
 * after `abandon`. Returns what the handler returns: abandon it unless it settled. Nothing it starts can reject
 * unobserved; `onValue` must not throw.
 *
 * @internal
 */
export const settleOnce = <A>(options: {
  readonly call: () => PromiseLike<A> | A
  readonly deadlines: Deadlines.Deadlines | undefined
  readonly abandon: () => void
  readonly onValue: (value: A) => void
  readonly onFailure: (error: unknown) => void
  readonly onTimeout: () => void
}): () => void => {
  let settled = false
  let deadline: Deadlines.Entry | undefined
  const settle = (): boolean => {
    if (settled) return false
    settled = true
    if (deadline !== undefined) options.deadlines?.cancel(deadline)
    return true
  }
  const failed = (error: unknown) => {
    if (settle()) options.onFailure(error)
  }
  try {
    Promise.resolve(options.call()).then((value) => {
      if (settle()) options.onValue(value)
    }, failed).then(undefined, failed)
  } catch (error) {
    failed(error)
  }
  if (!settled && options.deadlines !== undefined) {
    deadline = options.deadlines.start(() => {
      if (!settle()) return
      options.abandon()
      options.onTimeout()
    })
  }
  return () => {
    if (settle()) options.abandon()
  }
}
