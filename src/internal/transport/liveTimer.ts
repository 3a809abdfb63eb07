/** @internal */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Option from "effect/Option"

/** The wall clock, whatever `Clock` a caller installed (e.g. `TestClock`). */
const wallClock: Clock.Clock = Clock.make()

/**
 * `effect`'s result, or `None` if the bound passes first on the wall clock (the effect is then interrupted). Used
 * only for the SDK's own clean-up bounds (closing a session, reaping a process), so that a test running under
 * `TestClock` cannot hang in a finalizer; every timeout a caller sees (control requests, permission decisions,
 * hooks) uses the installed `Clock` and stays testable. `effect` itself runs with the caller's `Clock`, and is made
 * interruptible, so this also bounds waits inside finalizers.
 *
 * @internal
 */
export const liveTimeout = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  duration: Duration.DurationInput
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.clockWith((callers) =>
    Effect.timeoutOption(Effect.interruptible(Effect.withClock(effect, callers)), duration).pipe(
      Effect.withClock(wallClock)
    )
  )

/**
 * Waits until `fiber` is done or the wall-clock bound passes, whichever comes first, without interrupting it.
 *
 * @internal
 */
export const liveAwaitBounded = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  duration: Duration.DurationInput
): Effect.Effect<void> => Effect.asVoid(liveTimeout(Fiber.await(fiber), duration))
