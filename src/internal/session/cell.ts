/**
 * The one cell holding a session's state: every event steps the pure reducer (./state.ts), and the cell acts on the
 * difference.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Runtime from "effect/Runtime"
import type { SessionError, SessionOrigin } from "../../ClaudeAgent.js"
import { make as makeConnection } from "../transport/connection.js"
import { liveWaitFor, makeWaiters } from "../transport/liveTimer.js"
import type * as TransportApi from "../../Transport.js"
import * as State from "./state.js"

/**
 * The one cell holding a session's state, and what follows from its transitions: the session id becoming known,
 * the CLI reporting idle (which ends the waits of `awaitIdle`), a result, another session id than expected.
 *
 * @internal
 */
export interface Cell {
  readonly get: () => State.SessionState
  readonly advance: (event: State.Event) => void
  readonly sessionIdKnown: Deferred.Deferred<string, SessionError>
  /**
   * Waits until the CLI reports idle (at once while it does), or until `bound` has passed on the wall clock,
   * whichever comes first. A bound for the SDK's own settling (as `liveTimeout`), with no fiber per wait: a timer and
   * a callback the transition to idle runs (docs/PERFORMANCE.md, "Issue 32 item 6").
   */
  readonly awaitIdle: (bound: Duration.Duration) => Effect.Effect<void>
  readonly onResult: (f: () => void) => void
}

/**
 * A cell holding the state of a session that has not heard from its CLI yet.
 *
 * @internal
 */
export const makeCell = (origin: SessionOrigin, startedAt: number): Effect.Effect<Cell> =>
  Effect.gen(function*() {
    const ref = MutableRef.make(State.initial(origin, startedAt))
    const sessionIdKnown = yield* Deferred.make<string, SessionError>()
    if (origin.sessionId !== undefined) yield* Deferred.succeed(sessionIdKnown, origin.sessionId)
    // the waits of `awaitIdle` under way: each ends at the transition to idle or at its own timer
    const idleWaiters = makeWaiters()
    const resultCallbacks: Array<() => void> = []
    // a rare event no fiber waits for: logged from a fiber of its own, with the session's logger and annotations
    const runtime = yield* Effect.runtime<never>()
    const reportOtherId = (other: { readonly expected: string; readonly actual: string }) =>
      Runtime.runFork(runtime)(
        Effect.logWarning(
          `the CLI runs session ${other.actual}, not ${other.expected} as expected; Session.sessionId now reports ` +
            other.actual
        ).pipe(Effect.annotateLogs({ ...other, originKind: origin.kind, requested: origin.requested ?? "" }))
      )
    const advance = (event: State.Event) => {
      const before = MutableRef.get(ref)
      const after = State.step(before, event)
      MutableRef.set(ref, after)
      if (before.sessionId === undefined && after.sessionId !== undefined) {
        Deferred.unsafeDone(sessionIdKnown, Effect.succeed(after.sessionId))
      }
      const other = State.otherSessionId(before, after)
      if (other !== undefined) reportOtherId(other)
      if (before.status !== after.status && after.status === "idle") idleWaiters.fire()
      if (before.results !== after.results) { for (const f of resultCallbacks) f() }
    }
    return {
      get: () => MutableRef.get(ref),
      advance,
      sessionIdKnown,
      awaitIdle: (bound) => Effect.asVoid(liveWaitFor(() => MutableRef.get(ref).status === "idle", idleWaiters, bound)),
      onResult: (f) => {
        resultCallbacks.push(f)
      }
    }
  })

/**
 * The connection as the protocol sees it, with every frame the CLI writes and every answer the SDK gives to one of
 * its requests stamped on the cell (the idle clock restarts from either).
 *
 * @internal
 */
export const observed = (
  connection: TransportApi.Connection,
  cell: Cell,
  now: () => number
): TransportApi.Connection =>
  makeConnection({
    ...connection,
    pull: Effect.map(connection.pull, (pull) =>
      Effect.map(pull, (frames) => {
        cell.advance({ _tag: "Frames", at: now() })
        return frames
      })),
    unsafeSend: (message) => {
      const error = connection.unsafeSend(message)
      if (error === undefined && message.type === "control_response") cell.advance({ _tag: "Answered", at: now() })
      return error
    }
  })
