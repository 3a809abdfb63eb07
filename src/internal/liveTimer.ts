/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"

/**
 * Sleeps on the wall clock, whatever `Clock` is installed. Used only for the SDK's own clean-up bounds (closing a
 * session, reaping a process), so that a test running under `TestClock` cannot hang in a finalizer; every timeout a
 * caller sees (control requests, permission decisions, hooks) uses the Effect `Clock` and stays testable.
 *
 * @internal
 */
export const liveSleep = (duration: Duration.DurationInput): Effect.Effect<void> =>
  Effect.interruptible(Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Duration.toMillis(duration))
    return Effect.sync(() => clearTimeout(timer))
  }))

/**
 * `effect`'s result, or `None` if the wall-clock bound passes first (the effect is then interrupted). Both sides
 * are interruptible, so this also bounds waits inside finalizers.
 *
 * @internal
 */
export const liveTimeout = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  duration: Duration.DurationInput
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.raceFirst(
    Effect.interruptible(Effect.map(effect, Option.some)),
    Effect.as(liveSleep(duration), Option.none<A>())
  )

/**
 * Waits until `fiber` is done or the wall-clock bound passes, whichever comes first, without interrupting it. Unlike
 * {@link liveTimeout} it forks nothing (a race costs two fibers): it observes the fiber and sets a timer.
 *
 * @internal
 */
export const liveAwaitBounded = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  duration: Duration.DurationInput
): Effect.Effect<void> =>
  Effect.interruptible(Effect.async<void>((resume) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const done = () => {
      clearTimeout(timer)
      fiber.removeObserver(done)
      resume(Effect.void)
    }
    timer = setTimeout(done, Duration.toMillis(duration))
    // called at once when the fiber is done already
    fiber.addObserver(done)
    return Effect.sync(() => {
      clearTimeout(timer)
      fiber.removeObserver(done)
    })
  }))
