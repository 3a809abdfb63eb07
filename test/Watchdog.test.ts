// The idle watchdog (src/internal/session/watchdog.ts) on the TestClock: it fires at the deadline, not before, and
// sleeps to the next possible deadline instead of waking every second.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { type ExpiryTimer, makeExpiry } from "../src/internal/protocol/awaitWithin.js"
import * as State from "../src/internal/session/state.js"
import * as Watchdog from "../src/internal/session/watchdog.js"
import { assistant } from "./support/messages.js"

/** A watchdog over a state the test steps, counting how often it looks; `fired` gets the expired deadline. */
const watched = (limits: State.IdleLimits, startup?: ExpiryTimer) =>
  Effect.gen(function*() {
    let state = State.initial({ requested: undefined, sessionId: "s" }, 0)
    let inFlight = 0
    let looks = 0
    const fired = yield* Deferred.make<State.Deadline>()
    const fiber = yield* Watchdog.run({
      state: () => state,
      inFlight: Effect.sync(() => {
        looks++
        return inFlight
      }),
      limits,
      expired: (deadline) => Deferred.succeed(fired, deadline),
      startup
    }).pipe(Effect.forkScoped)
    yield* Effect.yieldNow()
    const at = (event: (now: number) => State.Event) =>
      Effect.flatMap(TestClock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          state = State.step(state, event(now))
        }))
    return {
      fiber,
      fired,
      looks: () => looks,
      sent: at((now) => ({ _tag: "PromptSent", startsTurn: true, at: now })),
      message: at((now) => ({ _tag: "Message", message: assistant, at: now })),
      answered: at((now) => ({ _tag: "Answered", at: now })),
      setInFlight: (n: number) =>
        Effect.sync(() => {
          inFlight = n
        })
    }
  })

const limits: State.IdleLimits = { firstMessage: Duration.seconds(60), idle: Duration.seconds(30) }

describe("idle watchdog", () => {
  it.scoped("fires at the deadline of the running clock, not a millisecond before", () =>
    Effect.gen(function*() {
      const w = yield* watched(limits)
      yield* w.sent
      yield* TestClock.adjust("3 seconds")
      yield* w.message
      yield* TestClock.adjust(Duration.millis(29_999))
      expect(yield* Deferred.isDone(w.fired)).toBe(false)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Deferred.await(w.fired)).toEqual({
        reason: "Idle",
        limit: Duration.seconds(30),
        lastEventAt: 3000,
        at: 33_000
      })
    }))

  it.scoped("between turns it wakes once per shortest limit, not every second", () =>
    Effect.gen(function*() {
      const w = yield* watched(limits)
      yield* TestClock.adjust("10 minutes")
      expect(yield* Deferred.isDone(w.fired)).toBe(false)
      // one look at the start and one per 30 s
      expect(w.looks()).toBe(21)
    }))

  it.scoped("a clock that starts shorter than the one it slept for is not missed", () =>
    Effect.gen(function*() {
      const w = yield* watched({ firstMessage: Duration.seconds(60), idle: Duration.seconds(10) })
      yield* w.sent
      // the watchdog has seen the first-message clock (due at 60 s)
      yield* TestClock.adjust("12 seconds")
      // the first message switches to the idle clock: due 10 s from here, well before 60 s
      yield* w.message
      yield* TestClock.adjust("10 seconds")
      expect(yield* Deferred.isDone(w.fired)).toBe(true)
      expect(yield* Deferred.await(w.fired)).toMatchObject({ reason: "Idle", at: 22_000 })
    }))

  it.scoped("no clock while the SDK owes the CLI an answer; it restarts from the answer", () =>
    Effect.gen(function*() {
      const w = yield* watched(limits)
      yield* w.sent
      yield* w.message
      yield* w.setInFlight(1)
      yield* TestClock.adjust("5 minutes")
      expect(yield* Deferred.isDone(w.fired)).toBe(false)
      yield* w.setInFlight(0)
      yield* w.answered
      yield* TestClock.adjust(Duration.millis(29_999))
      expect(yield* Deferred.isDone(w.fired)).toBe(false)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Deferred.await(w.fired)).toMatchObject({ reason: "Idle", lastEventAt: 300_000 })
    }))

  it.scoped("no finite limit: no watchdog at all", () =>
    Effect.gen(function*() {
      const w = yield* watched({ firstMessage: Duration.infinity, idle: Duration.infinity })
      yield* w.sent
      yield* TestClock.adjust("1 day")
      expect(yield* Deferred.isDone(w.fired)).toBe(false)
      expect(w.looks()).toBe(1)
    }))

  /** A start-up deadline due at `at` ms, and when (on the TestClock) it passed. */
  const startupAt = (at: number) =>
    Effect.gen(function*() {
      const expiry = makeExpiry(at)
      const passed = yield* Deferred.make<number>()
      const clock = yield* Effect.clock
      expiry.onExpired(() => Deferred.unsafeDone(passed, Effect.succeed(clock.unsafeCurrentTimeMillis())))
      return { expiry, passed }
    })

  it.scoped("the start-up deadline passes at its due time on the same fiber, which goes on watching the idle clock", () =>
    Effect.gen(function*() {
      const startup = yield* startupAt(20_000)
      const w = yield* watched(limits, startup.expiry)
      yield* TestClock.adjust(Duration.millis(19_999))
      expect(yield* Deferred.isDone(startup.passed)).toBe(false)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Deferred.await(startup.passed)).toBe(20_000)
      yield* w.sent
      yield* TestClock.adjust("60 seconds")
      expect(yield* Deferred.await(w.fired)).toMatchObject({ reason: "FirstMessage", at: 80_000 })
    }))

  it.scoped("an idle clock shorter than the start-up bound is not slept past", () =>
    Effect.gen(function*() {
      const startup = yield* startupAt(60_000)
      const w = yield* watched({ firstMessage: Duration.seconds(10), idle: Duration.seconds(10) }, startup.expiry)
      yield* w.sent
      yield* TestClock.adjust("10 seconds")
      expect(yield* Deferred.await(w.fired)).toMatchObject({ reason: "FirstMessage", at: 10_000 })
      expect(yield* Deferred.isDone(startup.passed)).toBe(false)
    }))

  it.scoped("no finite idle limit: the timer ends once the start-up deadline passed", () =>
    Effect.gen(function*() {
      const startup = yield* startupAt(20_000)
      const w = yield* watched({ firstMessage: Duration.infinity, idle: Duration.infinity }, startup.expiry)
      yield* TestClock.adjust("20 seconds")
      expect(yield* Deferred.await(startup.passed)).toBe(20_000)
      yield* Fiber.join(w.fiber)
      expect(w.looks()).toBe(2)
    }))
})
