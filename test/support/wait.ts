import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

const liveClock = Clock.make()

/**
 * Waits, on the live clock, until `condition` holds: for what no event announces (a process gone, a file written
 * by another process, a fiber's status). Polled every 10 ms; `guard` only turns a condition that never comes into a
 * failure naming `what`, it never decides whether the test passes.
 */
export const eventually = (
  what: string,
  condition: (() => boolean) | Effect.Effect<boolean>,
  guard: Duration.DurationInput = "10 seconds"
): Effect.Effect<void> =>
  (Effect.isEffect(condition) ? condition : Effect.sync(condition)).pipe(
    Effect.flatMap((holds) => (holds ? Effect.void : Effect.fail(what))),
    Effect.retry(Schedule.spaced("10 millis")),
    Effect.timeoutFail({ duration: guard, onTimeout: () => what }),
    Effect.catchAll((what) =>
      Effect.die(new Error(`not seen within ${Duration.format(Duration.decode(guard))}: ${what}`))
    ),
    // the wall clock, also under a TestClock: the process it waits for lives in real time
    Effect.withClock(liveClock)
  )
