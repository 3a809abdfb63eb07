/** @internal */
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"

/** Milliseconds on the session's clock, monotonic (a wall-clock step must not move deadlines). */
const now = (clock: Clock.Clock): number => Number(clock.unsafeCurrentTimeNanos() / 1_000_000n)

interface Entry {
  readonly at: number
  readonly fire: () => void
}

/**
 * Bounds many short operations of one session by one fixed duration. `Effect.timeout` costs two fibers, a timer and
 * an interrupt-and-await per operation (about 40 KB of garbage for a permission round trip); here each operation
 * runs on one forked fiber and the deadlines wait in an insertion-ordered map that a single fiber ({@link run},
 * forked in the session's scope) walks, sleeping on the session's `Clock` (so `TestClock` drives it) until the
 * oldest one. One duration for all means deadlines expire in the order they were set.
 *
 * @internal
 */
export interface Deadlines {
  /**
   * Runs `effect` on a child fiber; if it has not completed `millis` after the call, fails with `onTimeout()` at
   * once and interrupts the child without waiting for it: the caller goes on (e.g. sends its answer) even if the
   * child ignores interruption; only the caller's fiber, as every fiber, waits for its children before it exits.
   * Interrupting the caller removes the deadline; the child is interrupted with the caller's fiber.
   */
  readonly bound: <A, E, R, E2>(effect: Effect.Effect<A, E, R>, onTimeout: () => E2) => Effect.Effect<A, E | E2, R>
  /** The timer loop: fork it in the session's scope. Deadlines set before it starts are honoured once it does. */
  readonly run: Effect.Effect<never>
}

/** @internal */
export const make = (millis: number): Deadlines => {
  const entries = new Map<number, Entry>()
  let counter = 0
  let parked: Deferred.Deferred<void> | undefined

  const add = (at: number, fire: () => void): number => {
    const id = counter++
    entries.set(id, { at, fire })
    if (parked !== undefined) {
      const waiter = parked
      parked = undefined
      Deferred.unsafeDone(waiter, Exit.void)
    }
    return id
  }

  const bound = <A, E, R, E2>(effect: Effect.Effect<A, E, R>, onTimeout: () => E2): Effect.Effect<A, E | E2, R> =>
    Effect.clockWith((clock) =>
      Effect.flatMap(Effect.fork(effect), (fiber) =>
        Effect.async<A, E | E2>((resume) => {
          let settled = false
          const id = add(now(clock) + millis, () => {
            if (settled) return
            settled = true
            fiber.unsafeInterruptAsFork(FiberId.none)
            resume(Effect.fail(onTimeout()))
          })
          fiber.addObserver((exit) => {
            if (settled) return
            settled = true
            entries.delete(id)
            resume(exit)
          })
          return Effect.sync(() => {
            settled = true
            entries.delete(id)
          })
        })
      )
    )

  const step: Effect.Effect<void> = Effect.clockWith((clock) =>
    Effect.suspend(() => {
      const head = entries.entries().next()
      if (head.done === true) {
        const waiter = Deferred.unsafeMake<void>(FiberId.none)
        parked = waiter
        return Deferred.await(waiter)
      }
      const [id, entry] = head.value
      const wait = entry.at - now(clock)
      if (wait > 0) return Effect.sleep(wait)
      entries.delete(id)
      entry.fire()
      return Effect.void
    })
  )

  return { bound, run: Effect.forever(step) }
}
