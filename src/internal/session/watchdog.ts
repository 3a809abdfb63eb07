/**
 * The session's one timer: the start-up bound, then the idle watchdog (silence in the middle of a turn, while the SDK
 * owes the CLI nothing, is a hang). It sleeps to the nearest deadline (per the Effect `Clock`, so `TestClock` drives
 * it), never polls.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { type ExpiryTimer, makeExpiry } from "../protocol/awaitWithin.js"
import type { Bound, Limits } from "./startup.js"
import * as State from "./state.js"

/**
 * Watches the session's state until its idle clock expires, then runs `expired` and returns; never returns while no
 * clock expires, and returns at once when no limit is finite and there is no `startup` deadline. `startup`, the
 * start-up bound, is made to pass at its due time by the same fiber (what waits for it registered with it, see
 * ../protocol/awaitWithin.ts): no deadline of the idle clock can fall before `now` plus its shortest limit
 * ({@link State.sleepUntil}) and the start-up deadline is fixed from the start, so neither ever needs to wake the
 * sleep early.
 *
 * @internal
 */
export const run = <E, R>(options: {
  readonly state: () => State.SessionState
  /** How many of the CLI's requests the SDK is still answering. */
  readonly inFlight: Effect.Effect<number>
  readonly limits: State.IdleLimits
  readonly expired: (deadline: State.Deadline) => Effect.Effect<void, E, R>
  readonly startup?: ExpiryTimer | undefined
}): Effect.Effect<void, E, R> =>
  Effect.gen(function*() {
    const { startup } = options
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (startup !== undefined && !startup.expired() && startup.at <= now) startup.expire()
      const running = State.deadline(options.state(), yield* options.inFlight, options.limits)
      if (running !== undefined && running.at <= now) return yield* options.expired(running)
      const idleUntil = State.sleepUntil(now, running, options.limits)
      const until = startup === undefined || startup.expired()
        ? idleUntil
        : Math.min(idleUntil ?? Number.POSITIVE_INFINITY, startup.at)
      if (until === undefined) return
      yield* Effect.sleep(Duration.millis(until - now))
    }
  })

/**
 * The session's timer, started before the spawn: `bound` is the start-up bound the spawn and `initialize` wait with,
 * and `watch` hands the idle watchdog the parts made after the spawn (until then no turn is owed, so no idle clock
 * runs).
 *
 * @internal
 */
export interface Timer {
  readonly bound: Bound
  readonly watch: (parts: {
    readonly inFlight: Effect.Effect<number>
    readonly expired: (deadline: State.Deadline) => Effect.Effect<void>
  }) => void
  /** The timer's fiber; none when no limit is finite. */
  readonly fiber: Fiber.RuntimeFiber<void> | undefined
}

const noneInFlight = Effect.succeed(0)

/**
 * Starts the session's timer in the scope: one fiber for the start-up bound (from `startedAt`) and the idle watchdog,
 * none when every limit is infinite.
 *
 * @internal
 */
export const start = (
  state: () => State.SessionState,
  limits: Limits,
  startedAt: number
): Effect.Effect<Timer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const startup = Duration.isFinite(limits.startup)
      ? makeExpiry(startedAt + Duration.toMillis(limits.startup))
      : undefined
    let parts: Parameters<Timer["watch"]>[0] = { inFlight: noneInFlight, expired: () => Effect.void }
    const watch: Timer["watch"] = (given) => {
      parts = given
    }
    const bound = { limit: limits.startup, expiry: startup }
    if (startup === undefined && !Duration.isFinite(limits.idle) && !Duration.isFinite(limits.firstMessage)) {
      return { bound, watch, fiber: undefined }
    }
    const fiber = yield* run({
      state,
      inFlight: Effect.suspend(() => parts.inFlight),
      limits,
      expired: (deadline) => parts.expired(deadline),
      startup
    }).pipe(Effect.forkScoped)
    return { bound, watch, fiber }
  })
