/** @internal */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

/**
 * Waits for `deferred`, failing it with `onTimeout()` once `duration` has passed on the caller's `Clock` (so
 * `TestClock` drives it): what `Effect.timeoutFail(Deferred.await(deferred), …)` does for a `Deferred` no one else
 * completes with a timeout, with one timer fiber instead of a race of two child fibers (docs/PERFORMANCE.md,
 * "Issue 32 item 6"). The timer lives exactly as long as the wait: it starts with it, and whatever ends the wait (an
 * answer, the timeout, the caller's interruption) interrupts it, without waiting for it to end. A `Deferred` completed
 * before the wait starts is returned at once, with no timer.
 *
 * @internal
 */
export const awaitWithin = <A, E>(
  deferred: Deferred.Deferred<A, E>,
  options: { readonly duration: Duration.Duration; readonly onTimeout: () => E }
): Effect.Effect<A, E> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Deferred.poll(deferred), (done) => {
      if (done._tag === "Some") return done.value
      return Effect.flatMap(
        // interruptible, though forked where the caller cannot be interrupted: the end of the wait stops it
        Effect.forkDaemon(Effect.interruptible(
          Effect.zipRight(
            Effect.sleep(options.duration),
            Effect.suspend(() => Deferred.fail(deferred, options.onTimeout()))
          )
        )),
        (timer) =>
          Effect.ensuring(
            restore(Deferred.await(deferred)),
            Effect.fiberIdWith((id) => Fiber.interruptAsFork(timer, id))
          )
      )
    })
  )

/**
 * A deadline whose timer is someone else's fiber (the session's one timer, ../session/watchdog.ts, for the start-up
 * bound): the waits bounded by it register what to do when it passes, and cost no fiber of their own.
 *
 * @internal
 */
export interface Expiry {
  /** Runs `fire` once the deadline passes (at once if it has); returns what forgets it. `fire` must not throw. */
  readonly onExpired: (fire: () => void) => () => void
}

/**
 * An {@link Expiry} and what its timer needs: when it is due, and the call that makes it pass.
 *
 * @internal
 */
export interface ExpiryTimer extends Expiry {
  /** Due time, in milliseconds on the session's `Clock`. */
  readonly at: number
  /** Whether it passed already. */
  readonly expired: () => boolean
  /** Makes it pass: runs every `fire` registered and not forgotten (once; later calls do nothing). */
  readonly expire: () => void
}

/** @internal */
export const makeExpiry = (at: number): ExpiryTimer => {
  let expired = false
  const waiting = new Set<() => void>()
  return {
    at,
    expired: () => expired,
    onExpired: (fire) => {
      if (expired) {
        fire()
        return noop
      }
      // a wrapper of its own, so that the same function registered twice is forgotten once per registration
      const entry = () => fire()
      waiting.add(entry)
      return () => void waiting.delete(entry)
    },
    expire: () => {
      if (expired) return
      expired = true
      const fires = [...waiting]
      waiting.clear()
      for (const fire of fires) fire()
    }
  }
}

const noop = (): void => undefined

/**
 * {@link awaitWithin} with the deadline of an {@link Expiry}: waits for `deferred`, failing it with `onTimeout()` once
 * the deadline passes (at once if it has), with no fiber; whatever ends the wait forgets the registration.
 *
 * @internal
 */
export const awaitUntil = <A, E>(
  deferred: Deferred.Deferred<A, E>,
  expiry: Expiry,
  onTimeout: () => E
): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    const forget = expiry.onExpired(() => Deferred.unsafeDone(deferred, Exit.fail(onTimeout())))
    return Effect.ensuring(Deferred.await(deferred), Effect.sync(forget))
  })
