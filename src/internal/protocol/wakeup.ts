/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/**
 * A wake-up for one waiter at a time: `wait` resumes at the next `wake` or once the wall-clock bound passed, whichever
 * comes first, with one timer and no fiber per wait (see docs/PERFORMANCE.md, P4 slow consumer). A `wake` while no
 * one waits is dropped: it does not shorten the next wait.
 *
 * @internal
 */
export interface Wakeup {
  readonly wait: Effect.Effect<void>
  readonly wake: () => void
}

/** @internal */
export const makeWakeup = (bound: Duration.DurationInput): Wakeup => {
  const millis = Duration.toMillis(bound)
  let waiter: (() => void) | undefined
  const wake = () => {
    const resume = waiter
    waiter = undefined
    resume?.()
  }
  const wait = Effect.async<void>((resume) => {
    const timer = setTimeout(wake, millis)
    waiter = () => {
      clearTimeout(timer)
      resume(Effect.void)
    }
    return Effect.sync(() => {
      clearTimeout(timer)
      waiter = undefined
    })
  })
  return { wait, wake }
}
