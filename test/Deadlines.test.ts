// The shared deadline timer behind the Promise callbacks' timeouts (src/internal/protocol/deadlines.ts). Every check that a
// deadline did NOT fire is made after a later deadline was seen to fire: the loop has walked past it by then.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as TestClock from "effect/TestClock"
import * as Deadlines from "../src/internal/protocol/deadlines.js"
import { untilCliExits } from "../src/internal/protocol/handler.js"

/** Lets the forked timer loop run up to its next wait. */
const settle = Effect.yieldNow()

/** A deadline that records its name when it fires and completes `done`. */
const recorder = Effect.gen(function*() {
  const fired: Array<string> = []
  const signals = new Map<string, Deferred.Deferred<void>>()
  const fire = (name: string) => () => {
    fired.push(name)
    const signal = signals.get(name)
    if (signal !== undefined) Deferred.unsafeDone(signal, Effect.void)
  }
  const firedAll = (...names: Array<string>) =>
    Effect.forEach(names, (name) => Deferred.await(signals.get(name)!), { discard: true })
  const track = (name: string) => {
    signals.set(name, Deferred.unsafeMake<void>(FiberId.none))
    return fire(name)
  }
  return { fired, track, firedAll }
})

describe("Deadlines", () => {
  it.scoped("fires at the deadline, not before", () =>
    Effect.gen(function*() {
      const { fired, firedAll, track } = yield* recorder
      const deadlines = Deadlines.make(1000)
      yield* Effect.forkScoped(deadlines.run)
      yield* settle
      deadlines.start(track("a"))
      yield* TestClock.adjust(999)
      expect(fired).toEqual([])
      yield* TestClock.adjust(1)
      yield* firedAll("a")
      expect(fired).toEqual(["a"])
    }))

  it.scoped("a cancelled deadline never fires; the live one after it does", () =>
    Effect.gen(function*() {
      const { fired, firedAll, track } = yield* recorder
      const deadlines = Deadlines.make(1000)
      yield* Effect.forkScoped(deadlines.run)
      yield* settle
      const cancelled = deadlines.start(track("cancelled"))
      yield* TestClock.adjust(10)
      deadlines.start(track("live"))
      deadlines.cancel(cancelled)
      // cancelling twice, or after the fact, changes nothing
      deadlines.cancel(cancelled)
      yield* TestClock.adjust(5000)
      yield* firedAll("live")
      expect(fired).toEqual(["live"])
    }))

  it.scoped("many deadlines expire in the order they were set, each at its own time", () =>
    Effect.gen(function*() {
      const { fired, firedAll, track } = yield* recorder
      const deadlines = Deadlines.make(100)
      yield* Effect.forkScoped(deadlines.run)
      yield* settle
      for (let i = 0; i < 5; i++) {
        deadlines.start(track(String(i)))
        yield* TestClock.adjust(10)
      }
      // set at 0, 10, …, 40: at 100 only the first has expired, at 130 four of them
      yield* TestClock.adjust(50)
      yield* firedAll("0")
      expect(fired).toEqual(["0"])
      yield* TestClock.adjust(30)
      yield* firedAll("1", "2", "3")
      expect(fired).toEqual(["0", "1", "2", "3"])
      yield* TestClock.adjust(10)
      yield* firedAll("4")
      expect(fired).toEqual(["0", "1", "2", "3", "4"])
    }))

  it.scoped("a deadline set before the timer loop starts is counted from when it starts", () =>
    Effect.gen(function*() {
      const { fired, firedAll, track } = yield* recorder
      const deadlines = Deadlines.make(1000)
      deadlines.start(track("early"))
      yield* TestClock.adjust(2000)
      expect(fired).toEqual([])
      yield* Effect.forkScoped(deadlines.run)
      yield* settle
      yield* TestClock.adjust(1000)
      yield* firedAll("early")
      expect(fired).toEqual(["early"])
    }))

  it.scoped("an idle loop parks, and a deadline set later wakes it and fires on time", () =>
    Effect.gen(function*() {
      const { fired, firedAll, track } = yield* recorder
      const deadlines = Deadlines.make(1000)
      yield* Effect.forkScoped(deadlines.run)
      yield* settle
      deadlines.start(track("first"))
      yield* TestClock.adjust(1000)
      yield* firedAll("first")
      // out of work: one idle wait, then parked
      yield* TestClock.adjust(5000)
      yield* settle
      deadlines.start(track("after idle"))
      yield* settle
      yield* TestClock.adjust(999)
      expect(fired).toEqual(["first"])
      yield* TestClock.adjust(1)
      yield* firedAll("after idle")
      expect(fired).toEqual(["first", "after idle"])
    }))

  it.scoped("start/cancel: with thousands cancelled behind a pending one (compacted away), the live ones fire in order", () =>
    Effect.gen(function*() {
      const { fired, firedAll, track } = yield* recorder
      const deadlines = Deadlines.make(1000)
      // set before the loop runs: counted from when it starts
      deadlines.start(track("first"))
      yield* Effect.forkScoped(deadlines.run)
      yield* settle
      yield* TestClock.adjust(500)
      for (let i = 0; i < 5000; i++) deadlines.cancel(deadlines.start(track(`cancelled ${i}`)))
      const late = deadlines.start(track("late"))
      deadlines.start(track("last"))
      deadlines.cancel(late)
      yield* TestClock.adjust(499)
      expect(fired).toEqual([])
      yield* TestClock.adjust(1)
      yield* firedAll("first")
      expect(fired).toEqual(["first"])
      yield* TestClock.adjust(500)
      yield* firedAll("last")
      expect(fired).toEqual(["first", "last"])
    }))

  it.scoped("untilCliExits: the loop runs until the reader is done, then stops (a later deadline never fires)", () =>
    Effect.gen(function*() {
      const { fired, firedAll, track } = yield* recorder
      let readerDone: () => void = () => undefined
      const deadlines = Deadlines.make(1000)
      yield* untilCliExits(deadlines.run, {
        whenReaderDone: (f) => {
          readerDone = f
        }
      })
      yield* settle
      deadlines.start(track("a"))
      yield* TestClock.adjust(1000)
      yield* firedAll("a")
      deadlines.start(track("b"))
      readerDone()
      yield* settle
      yield* TestClock.adjust(5000)
      expect(fired).toEqual(["a"])
    }))
})
