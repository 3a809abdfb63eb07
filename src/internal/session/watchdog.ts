/**
 * The idle watchdog: silence in the middle of a turn, while the SDK owes the CLI nothing, is a hang. It sleeps to
 * the next deadline (per the Effect `Clock`, so `TestClock` drives it), never polls.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as State from "./state.js"

/**
 * Watches the session's state until its idle clock expires, then runs `expired` and returns; never returns while no
 * clock expires, and returns at once when no limit is finite.
 *
 * @internal
 */
export const run = <E, R>(options: {
  readonly state: () => State.SessionState
  /** How many of the CLI's requests the SDK is still answering. */
  readonly inFlight: Effect.Effect<number>
  readonly limits: State.IdleLimits
  readonly expired: (deadline: State.Deadline) => Effect.Effect<void, E, R>
}): Effect.Effect<void, E, R> =>
  Effect.gen(function*() {
    while (true) {
      const now = yield* Clock.currentTimeMillis
      const running = State.deadline(options.state(), yield* options.inFlight, options.limits)
      if (running !== undefined && running.at <= now) return yield* options.expired(running)
      const until = State.sleepUntil(now, running, options.limits)
      if (until === undefined) return
      yield* Effect.sleep(Duration.millis(until - now))
    }
  })
