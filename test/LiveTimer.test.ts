// Wall-clock bounds for the SDK's own clean-up waits (src/internal/transport/liveTimer.ts).
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { makeWakeup } from "../src/internal/protocol/wakeup.js"
import {
  liveAwaitBounded,
  liveTimeout,
  liveWaitFor,
  makeWaiters,
  type Waiters
} from "../src/internal/transport/liveTimer.js"

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const value = yield* effect
    return { value, millis: Date.now() - started }
  })

describe("liveAwaitBounded", () => {
  it.live("returns at once for a fiber that is done already", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.void)
      yield* Fiber.await(fiber)
      const { millis } = yield* elapsed(liveAwaitBounded(fiber, "10 seconds"))
      expect(millis).toBeLessThan(1000)
    }))

  it.live("returns when the fiber ends, before the bound", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(Deferred.await(gate))
      const waiter = yield* Effect.fork(liveAwaitBounded(fiber, "10 seconds"))
      yield* Effect.sleep("20 millis")
      expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      const { millis } = yield* elapsed(Fiber.join(waiter))
      expect(millis).toBeLessThan(1000)
    }))

  it.live("returns after the bound for a fiber that goes on, and leaves it running", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.never)
      const { millis } = yield* elapsed(liveAwaitBounded(fiber, "50 millis"))
      expect(millis).toBeGreaterThanOrEqual(45)
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("waits on the wall clock, whatever Clock is installed (TestClock here)", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.never)
      // TestClock never moves unless told: a bound on the Effect clock would never pass
      const { millis } = yield* elapsed(liveAwaitBounded(fiber, "30 millis"))
      expect(millis).toBeGreaterThanOrEqual(25)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.interrupt(fiber)
    }))
})

describe("liveTimeout", () => {
  it.live("None after the bound, with the effect interrupted", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const result = yield* liveTimeout(
        Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))),
        "20 millis"
      )
      expect(Option.isNone(result)).toBe(true)
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))
})

describe("liveTimeout: clocks and finalizers", () => {
  it.effect("the bound is on the wall clock, while the effect keeps the caller's Clock (TestClock here)", () =>
    Effect.gen(function*() {
      // an inner sleep on the TestClock: it ends only when the test adjusts the clock, never by itself
      const inner = yield* Effect.fork(liveTimeout(Effect.as(Effect.sleep("1 hour"), "slept"), "10 seconds"))
      yield* Effect.yieldNow()
      yield* TestClock.adjust("1 hour")
      expect(yield* Fiber.join(inner)).toEqual(Option.some("slept"))
      // and the bound itself passes on the wall clock with the TestClock standing still
      const { millis, value } = yield* elapsed(liveTimeout(Effect.never, "30 millis"))
      expect(Option.isNone(value)).toBe(true)
      expect(millis).toBeGreaterThanOrEqual(25)
    }))

  it.live("an interrupted caller interrupts the effect, and waits for it", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const caller = yield* Effect.fork(liveTimeout(
        Effect.zipRight(
          Deferred.succeed(started, undefined),
          Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
        ),
        "10 seconds"
      ))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(caller)
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))

  it.live("an interruption of a caller that cannot be interrupted (a closing scope) does not end it early", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const waiting = yield* Deferred.make<void>()
      const closing = yield* Effect.fork(Effect.uninterruptible(liveTimeout(
        Effect.zipRight(
          Deferred.succeed(waiting, undefined),
          Effect.as(Deferred.await(gate), "settled").pipe(
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
        ),
        "10 seconds"
      )))
      yield* Deferred.await(waiting)
      // the interruption waits for the uninterruptible caller; the bounded effect goes on meanwhile
      const interrupting = yield* Effect.fork(Fiber.interrupt(closing))
      yield* Effect.sleep("20 millis")
      expect(yield* Deferred.isDone(interrupted)).toBe(false)
      yield* Deferred.succeed(gate, undefined)
      const exit = yield* Fiber.join(interrupting)
      expect(yield* Deferred.isDone(interrupted)).toBe(false)
      // the caller ended with the result, then took its interruption
      expect(exit._tag).toBe("Failure")
    }))

  it.live("bounds a wait inside an uninterruptible region (a finalizer)", () =>
    Effect.gen(function*() {
      const { millis, value } = yield* elapsed(Effect.uninterruptible(liveTimeout(Effect.never, "30 millis")))
      expect(Option.isNone(value)).toBe(true)
      expect(millis).toBeLessThan(5000)
    }))
})

describe("makeWakeup", () => {
  it.live("wait resumes at the next wake, long before the bound", () =>
    Effect.gen(function*() {
      const wakeup = makeWakeup("10 seconds")
      const waiter = yield* Effect.fork(elapsed(wakeup.wait))
      yield* Effect.sleep("20 millis")
      expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
      wakeup.wake()
      const { millis } = yield* Fiber.join(waiter)
      expect(millis).toBeLessThan(5000)
    }))

  it.effect("without a wake, wait resumes once the bound passed on the wall clock (TestClock here)", () =>
    Effect.gen(function*() {
      const { millis } = yield* elapsed(makeWakeup("30 millis").wait)
      expect(millis).toBeGreaterThanOrEqual(25)
    }))

  it.live("a wake while no one waits is dropped: it does not shorten the next wait", () =>
    Effect.gen(function*() {
      const wakeup = makeWakeup("50 millis")
      wakeup.wake()
      const { millis } = yield* elapsed(wakeup.wait)
      expect(millis).toBeGreaterThanOrEqual(45)
    }))

  it.live("an interrupted wait leaves nothing behind: a later wake is dropped", () =>
    Effect.gen(function*() {
      const wakeup = makeWakeup("50 millis")
      const waiter = yield* Effect.fork(wakeup.wait)
      yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(waiter)
      wakeup.wake()
      const { millis } = yield* elapsed(wakeup.wait)
      expect(millis).toBeGreaterThanOrEqual(45)
    }))
})

/**
 * The long timers (a second or more: the bounds these tests give) set while `effect` runs and not yet cleared or
 * fired, as `pending()` tells at any point; a timer left running keeps the host alive for its whole bound. Shorter
 * timers (the tests' own sleeps, the scheduler's) are not followed.
 */
const withLongTimers = <A, E, R>(effect: (pending: () => number) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const { clearTimeout: clear, setTimeout: set } = globalThis
      const live = new Set<unknown>()
      const patched = ((callback: (...args: Array<unknown>) => void, delay?: number, ...args: Array<unknown>) => {
        if ((delay ?? 0) < 1000) return set(callback, delay, ...args)
        const handle = set(
          (...a: Array<unknown>) => {
            live.delete(handle)
            callback(...a)
          },
          delay,
          ...args
        )
        live.add(handle)
        return handle
      }) as typeof setTimeout
      globalThis.setTimeout = patched
      globalThis.clearTimeout = ((handle: Parameters<typeof clearTimeout>[0]) => {
        live.delete(handle)
        clear(handle)
      }) as typeof clearTimeout
      return {
        pending: () => live.size,
        restore: () => Object.assign(globalThis, { setTimeout: set, clearTimeout: clear })
      }
    }),
    ({ pending }) => effect(pending),
    ({ restore }) => Effect.sync(restore)
  )

/** `makeWaiters`, counting the registrations not yet fired or forgotten. */
const counted = (): Waiters & { readonly live: () => number } => {
  const inner = makeWaiters()
  let live = 0
  return {
    add: (wake) => {
      live++
      let done = false
      const forget = inner.add(() => {
        if (!done) live--
        done = true
        wake()
      })
      return () => {
        if (!done) live--
        done = true
        forget()
      }
    },
    fire: inner.fire,
    live: () => live
  }
}

describe("liveWaitFor", () => {
  it.live("true at once for what happened already: no registration", () =>
    Effect.gen(function*() {
      const waiters = counted()
      const { millis, value } = yield* elapsed(liveWaitFor(() => true, waiters, "10 seconds"))
      expect(value).toBe(true)
      expect(millis).toBeLessThan(1000)
      expect(waiters.live()).toBe(0)
    }))

  it.live("true at the fire after which it holds; a fire before that keeps the wait", () =>
    withLongTimers((pending) =>
      Effect.gen(function*() {
        const waiters = counted()
        let happened = false
        const waiter = yield* Effect.fork(elapsed(liveWaitFor(() => happened, waiters, "10 seconds")))
        yield* Effect.sleep("5 millis")
        waiters.fire()
        yield* Effect.sleep("5 millis")
        expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
        expect(waiters.live()).toBe(1)
        happened = true
        waiters.fire()
        const { millis, value } = yield* Fiber.join(waiter)
        expect(value).toBe(true)
        expect(millis).toBeLessThan(5000)
        expect(waiters.live()).toBe(0)
        // its timer went with it
        expect(pending()).toBe(0)
      })
    ))

  it.effect("false once the bound passed on the wall clock (TestClock here), its registration forgotten", () =>
    Effect.gen(function*() {
      const waiters = counted()
      const { millis, value } = yield* elapsed(liveWaitFor(() => false, waiters, "30 millis"))
      expect(value).toBe(false)
      expect(millis).toBeGreaterThanOrEqual(25)
      expect(waiters.live()).toBe(0)
    }))

  it.live("an infinite bound has no timer, a bound past Node's 32-bit delay is capped: both wait for the event", () =>
    withLongTimers((pending) =>
      Effect.gen(function*() {
        const waiters = counted()
        let happened = false
        const waiter = yield* Effect.fork(liveWaitFor(() => happened, waiters, Duration.infinity))
        // Node fires a delay of 2^31 ms or more after 1 ms
        const capped = yield* Effect.fork(liveWaitFor(() => happened, waiters, Duration.millis(2 ** 31)))
        yield* Effect.sleep("30 millis")
        expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
        expect(Option.isNone(yield* Fiber.poll(capped))).toBe(true)
        expect(pending()).toBe(1)
        happened = true
        waiters.fire()
        expect(yield* Fiber.join(waiter)).toBe(true)
        expect(yield* Fiber.join(capped)).toBe(true)
        expect(pending()).toBe(0)
      })
    ))

  it.live("interrupted, it forgets its registration; it bounds a wait inside an uninterruptible region", () =>
    withLongTimers((pending) =>
      Effect.gen(function*() {
        const waiters = counted()
        const waiter = yield* Effect.fork(liveWaitFor(() => false, waiters, "10 seconds"))
        yield* Effect.sleep("5 millis")
        expect(waiters.live()).toBe(1)
        expect(pending()).toBe(1)
        yield* Fiber.interrupt(waiter)
        expect(waiters.live()).toBe(0)
        expect(pending()).toBe(0)
        const { millis, value } = yield* elapsed(Effect.uninterruptible(liveWaitFor(() => false, waiters, "30 millis")))
        expect(value).toBe(false)
        expect(millis).toBeLessThan(5000)
      })
    ))
})
