/**
 * How a session ends, recorded once: everything that can end it (the protocol's reader at the end of the CLI's stdout,
 * start-up, a feature that finds the session unusable, the idle watchdog, the query's driver, the scope) reports to
 * it; the first report wins (a `Deferred`), the message buffer is ended here and nowhere else, and every reader maps
 * the same {@link State.outcome} to its result.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Transport from "../../Transport.js"
import type { Cell } from "./cell.js"
import * as State from "./state.js"

/** @internal */
export interface Termination {
  /**
   * Reports why the session ends; the first report wins. The message buffer ends: at once while the CLI runs (what it
   * writes later is dropped), else once the reader has routed everything it wrote. `Closed` ends it at once in any
   * case (no reader is left).
   */
  readonly report: (ending: State.Ending) => Effect.Effect<void>
  /** The first reason reported, once there is one. */
  readonly ending: Effect.Effect<State.Ending>
  /**
   * Runs `effect` once the session has ended (at once if it has): for work that only makes sense while it runs, e.g.
   * a fiber that sleeps to the next idle deadline, which must not keep the host process alive after the CLI is gone.
   */
  readonly onEnd: (effect: Effect.Effect<void>) => Effect.Effect<void>
  /**
   * How the messages end for their readers, once the session has ended: after an exit, once start-up has its outcome
   * too (the CLI being gone, it gets one at once), as start-up failures explain the exit.
   */
  readonly outcome: Effect.Effect<State.Outcome>
}

/**
 * Interrupts `fiber` from the caller without waiting for it to end: what `Fiber.interruptFork` does, without the
 * fiber that one forks to wait. For timers and watchers the session's end makes pointless. A fiber that reports the
 * end itself (the watchdog that expired, the drain timer) is not interrupted: it ends with what it is doing (the
 * watchdog's kill of the CLI, the rest of the end's work), which an interruption told now would cut short.
 *
 * @internal
 */
export const interruptNow = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<void> =>
  Effect.fiberIdWith((id) => Equal.equals(id, fiber.id()) ? Effect.void : Fiber.interruptAsFork(fiber, id))

/** @internal */
export const make = (parts: {
  readonly cell: Cell
  readonly connection: Transport.Connection
  /** Ends the protocol's message buffer once everything in it has been taken. */
  readonly endMessages: Effect.Effect<void>
  /** Completes once the protocol's reader has routed everything the CLI wrote. */
  readonly readerDone: Effect.Effect<void>
  /** Start-up's outcome (`initialize` answered, or why not). */
  readonly initialized: Effect.Effect<unknown, unknown>
}): Effect.Effect<Termination, never, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* Deferred.make<State.Ending>()
    const scope = yield* Effect.scope
    const { cell, connection, endMessages, initialized, readerDone } = parts

    const endBuffer = (ending: State.Ending): Effect.Effect<void> => {
      if (ending._tag === "Exited" || ending._tag === "Closed") return endMessages
      return Effect.flatMap(connection.exitStatus, (exit) =>
        Option.isNone(exit)
          ? endMessages
          // frames are read as they are pulled: ending the buffer now would lose what the CLI wrote last
          : Effect.asVoid(Effect.forkIn(Effect.zipRight(readerDone, endMessages), scope)))
    }

    const atEnd: Array<Effect.Effect<void>> = []
    const report = (ending: State.Ending): Effect.Effect<void> =>
      Effect.flatMap(Deferred.succeed(first, ending), (isFirst) => {
        if (!isFirst) return ending._tag === "Closed" ? endMessages : Effect.void
        const work = atEnd.splice(0)
        return work.length === 0 ? endBuffer(ending) : Effect.zipRight(endBuffer(ending), Effect.all(work))
      })

    const ending = Deferred.await(first)
    return {
      report,
      ending,
      onEnd: (effect) =>
        Effect.flatMap(Deferred.isDone(first), (done) => done ? effect : Effect.sync(() => void atEnd.push(effect))),
      outcome: Effect.flatMap(ending, (end) =>
        Effect.zipRight(
          end._tag === "Exited" ? Effect.exit(initialized) : Effect.void,
          Effect.sync(() => State.outcome(cell.get(), end))
        ))
    }
  })
