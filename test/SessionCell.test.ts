// The cell holding a session's state (src/internal/session/cell.ts): what follows from each transition.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { makeCell } from "../src/internal/session/cell.js"
import { assistant, stateChanged, success } from "./support/messages.js"

const fresh = { kind: "new", requested: undefined, sessionId: undefined, forked: false } as const

describe("session cell", () => {
  it.effect("the session id becomes known with the first message that names it", () =>
    Effect.gen(function*() {
      const cell = yield* makeCell(fresh, 0)
      expect(yield* Deferred.isDone(cell.sessionIdKnown)).toBe(false)
      cell.advance({ _tag: "Message", message: assistant, at: 1 })
      expect(yield* Deferred.isDone(cell.sessionIdKnown)).toBe(true)
      expect(yield* Deferred.await(cell.sessionIdKnown)).toBe("cli-id")
      expect(cell.get().sessionId).toBe("cli-id")
    }))

  it.effect("an id the SDK assigned is known at once", () =>
    Effect.gen(function*() {
      const cell = yield* makeCell({ ...fresh, sessionId: "sdk-id" }, 0)
      expect(yield* Deferred.await(cell.sessionIdKnown)).toBe("sdk-id")
    }))

  it.effect("awaitIdle ends at the CLI's report of idle, for every waiter; at once while it is idle", () =>
    Effect.gen(function*() {
      const cell = yield* makeCell(fresh, 0)
      const long = Duration.hours(1)
      const waiters = [yield* Effect.fork(cell.awaitIdle(long)), yield* Effect.fork(cell.awaitIdle(long))]
      yield* Effect.yieldNow()
      expect(waiters.map((w) => w.unsafePoll())).toEqual([null, null])
      cell.advance({ _tag: "Message", message: stateChanged("running"), at: 1 })
      yield* Effect.yieldNow()
      expect(waiters.map((w) => w.unsafePoll())).toEqual([null, null])
      cell.advance({ _tag: "Message", message: stateChanged("idle"), at: 2 })
      yield* Fiber.joinAll(waiters)
      // idle: at once
      yield* cell.awaitIdle(long)
      cell.advance({ _tag: "Message", message: stateChanged("running"), at: 3 })
      const next = yield* Effect.fork(cell.awaitIdle(long))
      yield* Effect.yieldNow()
      expect(next.unsafePoll()).toBe(null)
      // an interrupted wait is forgotten: the next report of idle wakes only the waits still under way
      yield* Fiber.interrupt(next)
      const last = yield* Effect.fork(cell.awaitIdle(long))
      yield* Effect.yieldNow()
      cell.advance({ _tag: "Message", message: stateChanged("idle"), at: 4 })
      yield* Fiber.join(last)
    }))

  it.effect("awaitIdle ends at its bound (on the wall clock) when the CLI never reports idle", () =>
    Effect.gen(function*() {
      const cell = yield* makeCell(fresh, 0)
      cell.advance({ _tag: "Message", message: stateChanged("running"), at: 1 })
      // TestClock is installed and never adjusted: only the wall clock can end this wait
      yield* cell.awaitIdle(Duration.millis(1))
      expect(cell.get().status).toBe("running")
    }))

  it.effect("result listeners run once per result, not for other messages", () =>
    Effect.gen(function*() {
      const cell = yield* makeCell(fresh, 0)
      let calls = 0
      cell.onResult(() => calls++)
      cell.advance({ _tag: "Message", message: assistant, at: 1 })
      cell.advance({ _tag: "Message", message: success(), at: 2 })
      cell.advance({ _tag: "Message", message: success(), at: 3 })
      expect(calls).toBe(2)
    }))
})
