/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"

/**
 * `effect`'s result, or `None` if the bound passes first on the wall clock (the effect is then interrupted, and waited
 * for). Used only for the SDK's own clean-up bounds (closing a session, reaping a process), so that a test running
 * under `TestClock` cannot hang in a finalizer; every timeout a caller sees (control requests, permission decisions,
 * hooks) uses the installed `Clock` and stays testable. `effect` runs with the caller's `Clock`, made interruptible,
 * on a daemon fiber watched by {@link liveWaitFor}'s timer: so this also bounds waits inside finalizers, and an
 * interruption of a caller that cannot be interrupted (a fiber closing a scope) does not end it early, as it ends the
 * child fibers of `Effect.timeoutOption`'s race.
 *
 * @internal
 */
export const liveTimeout = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  duration: Duration.DurationInput
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(
      Effect.forkDaemon(Effect.interruptible(effect)),
      (fiber) =>
        restore(liveWaitFor(() => fiber.unsafePoll() !== null, endOf(fiber), duration)).pipe(
          Effect.onInterrupt(() => Fiber.interrupt(fiber)),
          Effect.flatMap((ended) =>
            ended ? Effect.map(Fiber.join(fiber), Option.some) : Effect.as(Fiber.interrupt(fiber), Option.none())
          )
        )
    )
  )

/** A fiber's end, to wait for with {@link liveWaitFor}: its observers. */
const endOf = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Pick<Waiters, "add"> => ({
  add: (wake) => {
    const observer = () => wake()
    fiber.addObserver(observer)
    return () => fiber.removeObserver(observer)
  }
})

/**
 * Waits until `fiber` is done or the wall-clock bound passes, whichever comes first, without interrupting it.
 *
 * @internal
 */
export const liveAwaitBounded = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  duration: Duration.DurationInput
): Effect.Effect<void> => Effect.asVoid(liveWaitFor(() => fiber.unsafePoll() !== null, endOf(fiber), duration))

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
  waiters: Pick<Waiters, "add">,
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
