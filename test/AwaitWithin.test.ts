// The bounded wait of outbound control requests (src/internal/protocol/awaitWithin.ts): Effect.timeoutFail's
// behaviour on a Deferred, with its timer living exactly as long as the wait. "No timer left" is read from TestClock's
// root fibers (the timer is a daemon), after the timer fiber has had a turn to process its interruption.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { awaitUntil, awaitWithin, type Expiry, makeExpiry } from "../src/internal/protocol/awaitWithin.js"

const within = (deferred: Deferred.Deferred<number, string>) =>
  awaitWithin(deferred, { duration: Duration.seconds(10), onTimeout: () => "timed out" })

/** Lets forked fibers (the timer, its interruption) run up to their next wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 3)

/** The timers running: the daemon fibers waiting on the TestClock. */
const running = Effect.map(Fiber.roots, (roots) => roots.filter((fiber) => fiber.unsafePoll() === null).length)

/** A fiber waiting `within` on a new Deferred, its timer started; `timers` counts the timers started since. */
const waiting = Effect.gen(function*() {
  const deferred = yield* Deferred.make<number, string>()
  const before = yield* running
  const timers = Effect.map(running, (n) => n - before)
  const fiber = yield* Effect.fork(within(deferred))
  yield* settle
  return { deferred, fiber, timers }
})

describe("awaitWithin", () => {
  it.effect("an answer before the deadline: its value, and the timer is gone", () =>
    Effect.gen(function*() {
      const { deferred, fiber, timers } = yield* waiting
      expect(yield* timers).toBe(1)
      yield* TestClock.adjust("9999 millis")
      yield* Deferred.succeed(deferred, 7)
      expect(yield* Fiber.join(fiber)).toBe(7)
      yield* settle
      expect(yield* timers).toBe(0)
    }))

  it.effect("no answer: fails with onTimeout() at the deadline, not before, and fails the Deferred", () =>
    Effect.gen(function*() {
      const { deferred, fiber, timers } = yield* waiting
      yield* TestClock.adjust("9999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.await(fiber)).toStrictEqual(Exit.fail("timed out"))
      expect(
        yield* Deferred.poll(deferred).pipe(
          Effect.flatMap((done) => done._tag === "Some" ? Effect.exit(done.value) : Effect.die("not done"))
        )
      )
        .toStrictEqual(Exit.fail("timed out"))
      yield* settle
      expect(yield* timers).toBe(0)
    }))

  it.effect("an answer after the deadline is too late: the timeout stays", () =>
    Effect.gen(function*() {
      const { deferred, fiber, timers } = yield* waiting
      yield* TestClock.adjust("10 seconds")
      expect(yield* Deferred.succeed(deferred, 7)).toBe(false)
      expect(yield* Fiber.await(fiber)).toStrictEqual(Exit.fail("timed out"))
      yield* settle
      expect(yield* timers).toBe(0)
    }))

  it.effect("the waiter interrupted: the timer is gone, the Deferred is not failed", () =>
    Effect.gen(function*() {
      const { deferred, fiber, timers } = yield* waiting
      expect(yield* timers).toBe(1)
      yield* Fiber.interrupt(fiber)
      yield* settle
      expect(yield* timers).toBe(0)
      yield* TestClock.adjust("1 minute")
      expect(yield* Deferred.isDone(deferred)).toBe(false)
    }))

  it.effect("a Deferred done before the wait: its outcome at once, with no timer", () =>
    Effect.gen(function*() {
      const deferred = yield* Deferred.make<number, string>()
      const before = yield* running
      const timers = Effect.map(running, (n) => n - before)
      yield* Deferred.fail(deferred, "refused")
      expect(yield* Effect.exit(within(deferred))).toStrictEqual(Exit.fail("refused"))
      expect(yield* timers).toBe(0)
    }))
})

describe("awaitUntil (a deadline whose timer is another fiber's)", () => {
  /** `expiry`, counting the registrations not forgotten yet. */
  const counted = (expiry: Expiry) => {
    let live = 0
    const wrapped: Expiry = {
      onExpired: (fire) => {
        live++
        const forget = expiry.onExpired(fire)
        return () => {
          live--
          forget()
        }
      }
    }
    return { wrapped, live: () => live }
  }

  /** A fiber waiting `awaitUntil` a deadline due at 10 s, registered; `live` counts its registrations. */
  const waitingUntil = Effect.gen(function*() {
    const expiry = makeExpiry(10_000)
    const { live, wrapped } = counted(expiry)
    const deferred = yield* Deferred.make<number, string>()
    const fiber = yield* Effect.fork(awaitUntil(deferred, wrapped, () => "timed out"))
    yield* settle
    return { deferred, expiry, fiber, live }
  })

  it.effect("the deadline passes: fails with onTimeout(), and the answer after it is too late", () =>
    Effect.gen(function*() {
      const { deferred, expiry, fiber } = yield* waitingUntil
      expect(fiber.unsafePoll()).toBeNull()
      expiry.expire()
      expect(yield* Fiber.await(fiber)).toStrictEqual(Exit.fail("timed out"))
      expect(yield* Deferred.succeed(deferred, 7)).toBe(false)
    }))

  it.effect("an answer first: its value, and the registration is forgotten", () =>
    Effect.gen(function*() {
      const { deferred, fiber, live } = yield* waitingUntil
      expect(live()).toBe(1)
      yield* Deferred.succeed(deferred, 7)
      expect(yield* Fiber.join(fiber)).toBe(7)
      expect(live()).toBe(0)
    }))

  it.effect("the waiter interrupted: the registration is forgotten, the Deferred is not failed", () =>
    Effect.gen(function*() {
      const { deferred, expiry, fiber, live } = yield* waitingUntil
      yield* Fiber.interrupt(fiber)
      expect(live()).toBe(0)
      expiry.expire()
      expect(yield* Deferred.isDone(deferred)).toBe(false)
    }))

  it.effect("a deadline passed already: fails at once", () =>
    Effect.gen(function*() {
      const expiry = makeExpiry(0)
      expiry.expire()
      const deferred = yield* Deferred.make<number, string>()
      expect(yield* Effect.exit(awaitUntil(deferred, expiry, () => "timed out"))).toStrictEqual(
        Exit.fail("timed out")
      )
    }))
})
