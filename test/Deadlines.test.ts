// The shared deadline timer behind permission and hook timeouts (src/internal/deadlines.ts).
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Deadlines from "../src/internal/deadlines.js"

class TimedOut {
  readonly _tag = "TimedOut"
}

/** Lets forked fibers run up to their next wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("Deadlines", () => {
  it.scoped("an effect that completes in time keeps its value, its failure, and leaves no deadline behind", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make(1000)
      yield* Effect.forkScoped(deadlines.run)
      expect(yield* deadlines.bound(Effect.succeed(1), () => new TimedOut())).toBe(1)
      const failed = yield* Effect.exit(deadlines.bound(Effect.fail("no" as const), () => new TimedOut()))
      expect(failed).toStrictEqual(Exit.fail("no"))
      const slow = yield* Effect.fork(deadlines.bound(Effect.as(Effect.sleep(999), 2), () => new TimedOut()))
      yield* settle
      yield* TestClock.adjust(999)
      expect(yield* Fiber.join(slow)).toBe(2)
      // nothing left to expire: a later adjust fires nothing
      yield* TestClock.adjust(10_000)
    }))

  it.scoped("at the deadline: the caller gets onTimeout at once and the effect is interrupted (not waited for)", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make(1000)
      yield* Effect.forkScoped(deadlines.run)
      const interrupted = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // ignores interruption until released: the answer must not wait for it
      const stubborn = Effect.uninterruptible(Deferred.await(release)).pipe(
        Effect.zipRight(Effect.never),
        Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
      )
      const answered = yield* Deferred.make<Exit.Exit<never, TimedOut>>()
      // what the caller does next (e.g. send the deny) happens at the deadline; its fiber exits once the child has
      const fiber = yield* Effect.fork(
        deadlines.bound(stubborn, () => new TimedOut()).pipe(
          Effect.exit,
          Effect.flatMap((exit) => Deferred.succeed(answered, exit))
        )
      )
      yield* settle
      yield* TestClock.adjust(999)
      yield* settle
      expect(yield* Deferred.isDone(answered)).toBe(false)
      yield* TestClock.adjust(1)
      expect(yield* Deferred.await(answered)).toStrictEqual(Exit.fail(new TimedOut()))
      expect(yield* Deferred.isDone(interrupted)).toBe(false)
      yield* Deferred.succeed(release, undefined)
      yield* Deferred.await(interrupted)
      yield* Fiber.join(fiber)
    }))

  it.scoped("interrupting the caller removes its deadline and interrupts the effect", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make(1000)
      yield* Effect.forkScoped(deadlines.run)
      const interrupted = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        deadlines.bound(Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)), () => {
          throw new Error("the deadline of an interrupted caller fired")
        })
      )
      yield* settle
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(interrupted)
      yield* TestClock.adjust(5000)
      yield* settle
    }))

  it.scoped("many deadlines expire in the order they were set, each at its own time", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make(100)
      yield* Effect.forkScoped(deadlines.run)
      const expired: Array<number> = []
      const fibers: Array<Fiber.RuntimeFiber<void>> = []
      for (let i = 0; i < 5; i++) {
        fibers.push(
          yield* Effect.fork(
            deadlines.bound(Effect.never, () => new TimedOut()).pipe(
              Effect.catchAll(() => Effect.sync(() => void expired.push(i)))
            )
          )
        )
        yield* settle
        yield* TestClock.adjust(10)
      }
      // set at 0, 10, …, 40: at 100 only the first has expired, at 130 four of them
      yield* TestClock.adjust(50)
      yield* settle
      expect(expired).toEqual([0])
      yield* TestClock.adjust(30)
      yield* settle
      expect(expired).toEqual([0, 1, 2, 3])
      yield* TestClock.adjust(10)
      yield* Fiber.joinAll(fibers)
      expect(expired).toEqual([0, 1, 2, 3, 4])
    }))

  it.scoped("a deadline set before the timer loop starts is honoured once it runs", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make(1000)
      const fiber = yield* Effect.fork(deadlines.bound(Effect.never, () => new TimedOut()))
      yield* settle
      yield* TestClock.adjust(2000)
      yield* Effect.forkScoped(deadlines.run)
      expect(yield* Fiber.await(fiber)).toStrictEqual(Exit.fail(new TimedOut()))
    }))

  it.scoped("start/cancel: with thousands cancelled behind a pending one (compacted away), the live ones fire in order", () =>
    Effect.gen(function*() {
      const deadlines = Deadlines.make(1000)
      const fired: Array<string> = []
      // set before the loop runs: counted from when it starts
      deadlines.start(() => fired.push("first"))
      yield* Effect.forkScoped(deadlines.run)
      yield* settle
      yield* TestClock.adjust(500)
      for (let i = 0; i < 5000; i++) deadlines.cancel(deadlines.start(() => fired.push(`cancelled ${i}`)))
      const late = deadlines.start(() => fired.push("late"))
      deadlines.start(() => fired.push("last"))
      deadlines.cancel(late)
      yield* TestClock.adjust(499)
      yield* settle
      expect(fired).toEqual([])
      yield* TestClock.adjust(1)
      yield* settle
      expect(fired).toEqual(["first"])
      yield* TestClock.adjust(500)
      yield* settle
      expect(fired).toEqual(["first", "last"])
    }))
})
