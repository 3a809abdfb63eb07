import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"

/**
 * Waits until something sleeps on the TestClock until `duration` from now (a timeout armed, a delay started), so
 * that a following `TestClock.adjust(duration)` fires it: the condition is the timer itself, not a count of yields.
 */
export const sleeping = (duration: Duration.DurationInput): Effect.Effect<void> =>
  Effect.gen(function*() {
    const now = yield* TestClock.currentTimeMillis
    const due = now + Duration.toMillis(duration)
    while (!Chunk.some(yield* TestClock.sleeps(), (at) => at === due)) yield* Effect.yieldNow()
  })
