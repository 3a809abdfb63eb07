/** @internal */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

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
 * Bounds the Promise callbacks of one session (permission decisions, hooks) by one fixed duration without a fiber per
 * callback: the deadlines wait in a queue that a single fiber ({@link run}, forked in the session's scope) walks,
 * sleeping on the session's `Clock` (so `TestClock` drives it) until the oldest one. One duration for all means
 * deadlines expire in the order they were set, so the queue is an array. Effect handlers use `Effect.timeoutFail`
 * instead; why the callbacks do not is in docs/PERFORMANCE.md (P2).
 *
 * @internal
 */
export interface Deadlines {
  /**
   * `fire` runs (on the timer fiber) once the duration has passed on the loop's clock (counted from when the loop
   * starts if it has not yet), unless the returned entry was {@link cancel}led first. `fire` must not throw.
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
  // open while the queue has entries (or may have): the loop parks on it when there is nothing to wait for
  const work = Effect.unsafeMakeLatch(true)

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

  const start = (fire: () => void): Entry => {
    const entry: Entry = { at: clock === undefined ? Number.NaN : now(clock) + millis, fire }
    queue.push(entry)
    live++
    work.unsafeOpen()
    return entry
  }

  const cancel = (entry: Entry) => {
    if (entry.fire === undefined) return
    entry.fire = undefined
    live--
    trim()
  }

  // Out of work, the loop first waits one full duration before it parks: a deadline set meanwhile is due after that
  // wait ends, so it need not wake the loop (most callbacks answer before their deadline and cost the loop nothing).
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
        work.unsafeClose()
        return work.await
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

  return { start, cancel, run }
}
