/** @internal */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
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

/**
 * Callbacks run once when something happens (the CLI's exit, its stderr's end, its report of idle), for the waits of
 * {@link liveWaitFor}: `add` registers one and returns what forgets it; `fire` runs (and forgets) every registered one.
 *
 * @internal
 */
export interface Waiters {
  readonly add: (wake: () => void) => () => void
  readonly fire: () => void
}

/** @internal */
export const makeWaiters = (): Waiters => {
  const waiting = new Set<() => void>()
  return {
    add: (wake) => {
      // a wrapper of its own, so that the same function registered twice is forgotten once per registration
      const entry = () => wake()
      waiting.add(entry)
      return () => void waiting.delete(entry)
    },
    fire: () => {
      if (waiting.size === 0) return
      const wakes = [...waiting]
      waiting.clear()
      for (const wake of wakes) wake()
    }
  }
}

/**
 * Waits until `happened()` holds — checked now, then at each `fire` of `waiters` — or until `duration` has passed on
 * the wall clock, whichever comes first: `true` if it happened. What `liveTimeout` does for a wait on an event, with
 * one timer and no fiber, where `Effect.timeoutOption` races two child fibers (docs/PERFORMANCE.md, "Issue 32 item 6").
 * Interrupted, it forgets its timer and its registration.
 *
 * @internal
 */
export const liveWaitFor = (
  happened: () => boolean,
  waiters: Waiters,
  duration: Duration.DurationInput
): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    if (happened()) return resume(Effect.succeed(true))
    let forget = noop
    const millis = Duration.toMillis(duration)
    // no timer for an infinite bound; Node fires at once a delay beyond a 32-bit int: capped (~24.8 days)
    const timer = Number.isFinite(millis)
      ? setTimeout(() => {
        forget()
        resume(Effect.succeed(false))
      }, Math.min(millis, MAX_TIMER_MILLIS))
      : undefined
    const wake = () => {
      if (!happened()) {
        forget = waiters.add(wake)
        return
      }
      clearTimeout(timer)
      resume(Effect.succeed(true))
    }
    forget = waiters.add(wake)
    return Effect.sync(() => {
      clearTimeout(timer)
      forget()
    })
  })

const noop = (): void => undefined

const MAX_TIMER_MILLIS = 2 ** 31 - 1
