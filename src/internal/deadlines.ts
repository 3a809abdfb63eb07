/** @internal */
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"

/** Milliseconds on the session's clock, monotonic (a wall-clock step must not move deadlines). */
const now = (clock: Clock.Clock): number => Number(clock.unsafeCurrentTimeNanos() / 1_000_000n)

/** A deadline set by {@link Deadlines.start}. @internal */
export interface Entry {
  /** Due time on the loop's clock; `NaN` until the loop has started (then it is set from the start time). */
  at: number
  /** Dropped once the entry fired or was cancelled, so a waiting entry holds on to nothing. */
  fire: (() => void) | undefined
}

/**
 * Bounds many short operations of one session by one fixed duration. `Effect.timeout` costs two fibers, a timer and
 * an interrupt-and-await per operation (about 40 KB of garbage for a permission round trip); here the deadlines wait
 * in a queue that a single fiber ({@link run}, forked in the session's scope) walks, sleeping on the session's
 * `Clock` (so `TestClock` drives it) until the oldest one. One duration for all means deadlines expire in the order
 * they were set, so the queue is an array (a long-lived `Map` with an insertion and a deletion per operation made V8
 * keep every operation's objects until the next full GC).
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
  /**
   * The fork-free form, for work that is not an Effect (a pending Promise): `fire` runs (on the timer fiber) once the
   * duration has passed on the loop's clock (counted from when the loop starts if it has not yet), unless the
   * returned entry was {@link cancel}led first.
   */
  readonly start: (fire: () => void) => Entry
  /** Forgets a deadline set by {@link start} (a no-op once it fired). */
  readonly cancel: (entry: Entry) => void
  /** The timer loop: fork it in the session's scope. Deadlines set before it starts are honoured once it does. */
  readonly run: Effect.Effect<never>
}

/** @internal */
export const make = (millis: number): Deadlines => {
  let queue: Array<Entry> = []
  let head = 0
  let clock: Clock.Clock | undefined
  let parked: Deferred.Deferred<void> | undefined

  // entries still to fire; the others wait in the queue until they reach its front or a compaction drops them
  let live = 0

  /**
   * Drops fired and cancelled entries from the front, and all of them once they outnumber the live ones (one long
   * decision at the front must not keep every later, already answered one).
   */
  const trim = () => {
    while (head < queue.length && queue[head]!.fire === undefined) head++
    if (head === queue.length) {
      queue = []
      head = 0
    } else if (queue.length - head > 2 * live + 64) {
      queue = queue.slice(head).filter((entry) => entry.fire !== undefined)
      head = 0
    }
  }

  const add = (fire: () => void, from: Clock.Clock | undefined = clock): Entry => {
    const entry: Entry = { at: from === undefined ? Number.NaN : now(from) + millis, fire }
    queue.push(entry)
    live++
    if (parked !== undefined) {
      const waiter = parked
      parked = undefined
      Deferred.unsafeDone(waiter, Exit.void)
    }
    return entry
  }

  const remove = (entry: Entry) => {
    if (entry.fire === undefined) return
    entry.fire = undefined
    live--
    trim()
  }

  const bound = <A, E, R, E2>(effect: Effect.Effect<A, E, R>, onTimeout: () => E2): Effect.Effect<A, E | E2, R> =>
    Effect.clockWith((from) =>
      Effect.flatMap(Effect.fork(effect), (fiber) =>
        Effect.async<A, E | E2>((resume) => {
          let settled = false
          const entry = add(() => {
            if (settled) return
            settled = true
            fiber.unsafeInterruptAsFork(FiberId.none)
            resume(Effect.fail(onTimeout()))
          }, from)
          fiber.addObserver((exit) => {
            if (settled) return
            settled = true
            remove(entry)
            resume(exit)
          })
          return Effect.sync(() => {
            settled = true
            remove(entry)
          })
        })
      )
    )

  // Out of work, the loop first waits one full duration before it parks: a deadline set meanwhile is due after that
  // wait ends, so it need not wake the loop. Operations that end before their deadline (most) then cost the loop
  // nothing, where parking at once meant a wake-up and a park per operation.
  let idle = false
  const step = (clock: Clock.Clock): Effect.Effect<void> =>
    Effect.suspend(() => {
      trim()
      const entry = queue[head]
      if (entry === undefined) {
        if (!idle) {
          idle = true
          return Effect.sleep(millis)
        }
        const waiter = Deferred.unsafeMake<void>(FiberId.none)
        parked = waiter
        return Deferred.await(waiter)
      }
      idle = false
      const wait = entry.at - now(clock)
      if (wait > 0) return Effect.sleep(wait)
      const fire = entry.fire
      entry.fire = undefined
      live--
      fire?.()
      return Effect.void
    })

  const run: Effect.Effect<never> = Effect.clockWith((c) =>
    Effect.suspend(() => {
      clock = c
      const at = now(c) + millis
      for (let i = head; i < queue.length; i++) {
        const entry = queue[i]!
        if (Number.isNaN(entry.at)) entry.at = at
      }
      return Effect.forever(step(c))
    })
  )

  return {
    bound,
    start: (fire) => add(fire),
    cancel: remove,
    run
  }
}
