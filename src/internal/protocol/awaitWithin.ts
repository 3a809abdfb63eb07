/** @internal */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
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
