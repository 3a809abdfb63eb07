/**
 * The one contract the control protocol serves the CLI's requests through (`can_use_tool`, `hook_callback`,
 * `mcp_message`, `elicitation`, `request_user_dialog`), and its two adapters: an Effect ({@link fromEffect}) and a
 * decision that is an Effect or a Promise ({@link decide}, with one deadline scheduler for both forms).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import type { HandlerFailure, InboundRequest } from "../../ControlProtocol.js"
import type { Owned } from "./controlProtocol.js"
import type * as Deadlines from "./deadlines.js"

/**
 * How a handler answers, at most once (later calls are ignored, and so is everything after the request was
 * abandoned).
 *
 * @internal
 */
export interface Reply {
  /** Answers with a success response (`noAnswer`: sends nothing and ends the request). */
  readonly succeed: (response: unknown) => void
  /** Answers with an error response carrying `message`. */
  readonly fail: (message: string) => void
  /**
   * Runs an effect on a fiber of the protocol's (interrupted when the protocol closes); the effect answers through
   * this reply. Returns what interrupts it without waiting.
   */
  readonly fork: (effect: Effect.Effect<void>) => () => void
}

/**
 * The one inbound contract: called on the protocol's reader, in order; it starts handling `request`, answers through
 * `reply` now or later, and returns what to do if the request is abandoned before it answered (the CLI's
 * `control_cancel_request`, the protocol closing). A throw is answered as an error response. It must not block.
 *
 * @internal
 */
export type Handler = (request: InboundRequest, reply: Reply) => () => void

/** @internal */
export const noop = (): void => undefined

/** What an error says, for an error response; never throws (a null-prototype object has no `toString`). @internal */
export const describeError = (error: unknown): string => {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  } catch {
    return "an error that cannot be printed"
  }
}

/**
 * The Effect adapter: the effect's success is the success response, its failure the error response (its `message`),
 * a defect an error response too; it runs on a fiber of its own, and abandoning the request interrupts it (nothing is
 * sent then).
 *
 * @internal
 */
export const fromEffect =
  (handle: (request: InboundRequest) => Effect.Effect<unknown, HandlerFailure>): Handler => (request, reply) =>
    reply.fork(
      Effect.matchCause(Effect.suspend(() => handle(request)), {
        onSuccess: reply.succeed,
        onFailure: (cause) => {
          const failure = Cause.failureOption(cause)
          if (failure._tag === "Some") return reply.fail(failure.value.message)
          if (Cause.isInterruptedOnly(cause)) return reply.fail("The request handler was interrupted")
          return reply.fail(describeError(Cause.squash(cause)))
        }
      })
    )

/**
 * An `AbortSignal` built only if read (see docs/PERFORMANCE.md, P2): `abort` aborts it, or makes it start aborted.
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

/** Where {@link withLazySignal} keeps an object's signal builder: a non-enumerable property, so a spread leaves it. */
const SIGNAL_SOURCE: unique symbol = Symbol("effect-claude-agent/signalSource")

interface SignalCarrier {
  readonly [SIGNAL_SOURCE]: () => AbortSignal
}

/** The one getter of every {@link withLazySignal} object. */
const signalProperty: PropertyDescriptor = {
  get(this: SignalCarrier): AbortSignal {
    return this[SIGNAL_SOURCE]()
  },
  enumerable: true,
  configurable: true
}

/**
 * `target` with an enumerable `signal` that `signal()` builds on first read (see {@link lazySignal}). The accessor is
 * one function shared by every such object: a getter written in an object literal is a new function per object, and
 * V8 keeps each such object in dictionary mode (about a microsecond to build and a hash lookup per field read;
 * docs/PERFORMANCE.md, round 6).
 *
 * @internal
 */
export const withLazySignal = <A extends object>(
  target: A,
  signal: () => AbortSignal
): A & { readonly signal: AbortSignal } => {
  Object.defineProperty(target, SIGNAL_SOURCE, { value: signal })
  return Object.defineProperty(target, "signal", signalProperty) as A & { readonly signal: AbortSignal }
}

/**
 * What a service hands over for one request: an Effect (run on a fiber of the protocol's), or a Promise (from a Promise
 * callback: its settlement answers, with no fiber of its own), or the value itself (as `await` takes it).
 *
 * @internal
 */
export type Decision<A> = Effect.Effect<A, unknown> | PromiseLike<A> | A

/**
 * A decision as an Effect: a Promise one fails with its rejection.
 *
 * @internal
 */
export const toEffect = <A>(decision: Decision<A>): Effect.Effect<A, unknown> =>
  Effect.isEffect(decision)
    ? decision
    : Effect.tryPromise({ try: () => Promise.resolve(decision), catch: (error) => error })

/**
 * Serves one decision, whatever its form, and settles once: with its value, its failure (an Effect's failure, defect
 * or interruption; a throw or a rejection), or at its deadline on `deadlines` (the one timeout mechanism of both
 * forms), after `abandon`. `make` is called at once (a throw is a failure). Returns what abandons it unless it settled.
 * The callbacks must not throw; they answer through `reply` (a callback that needs an effect, e.g. to log, forks it).
 *
 * @internal
 */
export const decide = <A>(options: {
  readonly make: () => Decision<A>
  readonly reply: Reply
  readonly deadlines: Deadlines.Deadlines | undefined
  /** Tells the decision it is abandoned (aborts its `AbortSignal`). */
  readonly abandon: () => void
  readonly onValue: (value: A) => void
  readonly onFailure: (cause: Cause.Cause<unknown>) => void
  readonly onTimeout: () => void
}): () => void => {
  let settled = false
  let deadline: Deadlines.Entry | undefined
  let interrupt: () => void = noop
  const settle = (): boolean => {
    if (settled) return false
    settled = true
    if (deadline !== undefined) options.deadlines?.cancel(deadline)
    return true
  }
  const failed = (cause: Cause.Cause<unknown>) => {
    if (settle()) options.onFailure(cause)
  }
  try {
    const decision = options.make()
    if (Effect.isEffect(decision)) {
      interrupt = options.reply.fork(Effect.matchCause(decision, {
        onSuccess: (value) => {
          if (settle()) options.onValue(value)
        },
        onFailure: failed
      }))
    } else {
      // one reaction, no second Promise for a throwing callback: it is caught here (and, as `settle` has run,
      // ignored like any call after the first settlement)
      Promise.resolve(decision).then((value) => {
        try {
          if (settle()) options.onValue(value)
        } catch (error) {
          failed(Cause.die(error))
        }
      }, (error) => {
        try {
          failed(Cause.fail(error))
        } catch (error) {
          failed(Cause.die(error))
        }
      })
    }
  } catch (error) {
    failed(Cause.die(error))
  }
  if (!settled && options.deadlines !== undefined) {
    deadline = options.deadlines.start(() => {
      if (!settle()) return
      // the answer goes out at once; a decision that ignores interruption is not waited for
      interrupt()
      options.abandon()
      options.onTimeout()
    })
  }
  return () => {
    if (!settle()) return
    interrupt()
    options.abandon()
  }
}

/**
 * Runs a session's deadline loop in the scope until the CLI has exited (its stdout fully read): no request can be
 * pending then, and its timer must not keep the host process alive. One fiber, interrupted when the reader is done
 * (not a race of the loop with a second fiber waiting for the reader).
 *
 * @internal
 */
export const untilCliExits = (
  loop: Effect.Effect<never>,
  protocol: Pick<Owned, "whenReaderDone">
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.flatMap(
    Effect.forkScoped(loop),
    (fiber) => Effect.sync(() => protocol.whenReaderDone(() => fiber.unsafeInterruptAsFork(FiberId.none)))
  )
