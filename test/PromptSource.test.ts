// The Effect API never waits for the caller's prompt Stream: a stream stuck in its release (an async generator
// suspended at an `await`, read through `Stream.fromAsyncIterable`) does not hold up the end of the query; a stream
// that dies fails the query with a typed error, one that fails with its own error; prompt items that are not user
// messages fail at once and are never written; and interrupting start-up kills the `--version` probe.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent, CliResolver, Message, Transport } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { NodeClaudeAgent } from "./support/cli.js"
import { isAlive, killPending, ownedProcesses } from "./support/process.js"
import { fromAsyncIterable } from "../src/internal/session/promptSource.js"
import { leftAfterKill, probeRunning, slowVersionCli } from "./support/slowVersion.js"
import { eventually } from "./support/wait.js"

/** How long the test waits before it calls something a hang (the measured settle is a few milliseconds). */
const HANG = "2 seconds"

/** An echoing scripted CLI that records whether its script still runs (it ends when the session is reaped). */
const echoing = () => {
  const state = { ended: false }
  const layer = ScriptedCli.layer(
    (cli) =>
      Effect.gen(function*() {
        while (true) {
          const next = yield* Effect.either(cli.expectUser)
          if (next._tag === "Left") return
          yield* cli.turn(`echo: ${ScriptedCli.textOf(next.right)}`)
        }
      }).pipe(Effect.ensuring(Effect.sync(() => (state.ended = true)))),
    { stepTimeout: "365 days" }
  )
  return { layer, state }
}

/** Fails the test when `effect` does not end within {@link HANG} (without waiting for it to stop then). */
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(Effect.disconnect(effect), {
    duration: HANG,
    onTimeout: () => new Error(`still running after ${HANG}`)
  })

/** A value a caller might smuggle into a stream of prompts through a cast. */
const smuggle = (value: unknown): ClaudeAgent.Prompt => value as ClaudeAgent.Prompt

describe("a prompt Stream never holds the query up", () => {
  it.live("a stream whose release waits for a generator suspended at an await: the query still ends", () =>
    Effect.gen(function*() {
      const { layer, state } = echoing()
      async function* suspended(): AsyncGenerator<ClaudeAgent.Prompt> {
        yield "hi"
        await new Promise<never>(() => {})
      }
      const messages = yield* ClaudeAgent.query(Stream.fromAsyncIterable(suspended(), (e) => e)).pipe(
        Stream.takeUntil(Message.isResultMessage),
        Stream.runCollect,
        Effect.provide(layer),
        bounded
      )
      expect([...messages].at(-1)).toMatchObject({ type: "result", result: "echo: hi" })
      expect(state.ended).toBe(true)
    }))

  it.live("interrupting a query whose prompt stream never ends returns at once", () =>
    Effect.gen(function*() {
      const { layer, state } = echoing()
      const first = yield* Deferred.make<void>()
      const prompts = Stream.concat(
        Stream.make<Array<ClaudeAgent.Prompt>>("hi"),
        // a finalizer that never ends: the caller's stream cannot be released
        Stream.scoped(Effect.addFinalizer(() => Effect.never)).pipe(Stream.zipRight(Stream.never))
      )
      const fiber = yield* ClaudeAgent.query(prompts).pipe(
        Stream.tap((m) => (m.type === "result" ? Deferred.succeed(first, undefined) : Effect.void)),
        Stream.runDrain,
        Effect.provide(layer),
        // not a child of the test's fiber: a failing run must not hang the test's own end
        Effect.forkDaemon
      )
      yield* Deferred.await(first)
      yield* bounded(Fiber.interrupt(fiber))
      expect(state.ended).toBe(true)
    }))
})

describe("an async iterable read as a prompt can always be given up", () => {
  /**
   * An iterator over `values` that then never answers (`stuck` is done once a `next()` is left pending); it records
   * its `return()` calls, answered by `returned`.
   */
  const spy = (values: ReadonlyArray<string>, returned: () => Promise<IteratorResult<string>>) => {
    const calls = { next: 0, return: 0 }
    const stuck = Deferred.unsafeMake<void>(FiberId.none)
    const iterable: AsyncIterable<string> = {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          const i = calls.next++
          if (i < values.length) return Promise.resolve({ done: false, value: values[i]! })
          Deferred.unsafeDone(stuck, Exit.void)
          return new Promise<IteratorResult<string>>(() => {})
        },
        return: () => {
          calls.return++
          return returned()
        }
      })
    }
    return { iterable, calls, stuck }
  }

  it.live("releasing it calls return() and does not wait for it (a generator suspended at an await)", () =>
    Effect.gen(function*() {
      const { calls, iterable } = spy(["a", "b"], () => new Promise(() => {}))
      const taken = yield* fromAsyncIterable(iterable).pipe(Stream.take(1), Stream.runCollect, bounded)
      expect([...taken]).toEqual(["a"])
      expect(calls.return).toBe(1)
      // interrupted while next() is pending: the same
      const pending = spy([], () => new Promise(() => {}))
      const fiber = yield* fromAsyncIterable(pending.iterable).pipe(Stream.runDrain, Effect.fork)
      yield* Deferred.await(pending.stuck)
      yield* bounded(Fiber.interrupt(fiber))
      expect(pending.calls.return).toBe(1)
    }))

  it.live("a return() that rejects or throws is dropped (no unhandled rejection)", () =>
    Effect.gen(function*() {
      const unhandled: Array<unknown> = []
      const onUnhandled = (reason: unknown) => unhandled.push(reason)
      yield* Effect.acquireRelease(
        Effect.sync(() => process.on("unhandledRejection", onUnhandled)),
        () => Effect.sync(() => process.off("unhandledRejection", onUnhandled))
      )
      const rejecting = spy(["a", "b"], () => Promise.reject(new Error("cannot return")))
      yield* fromAsyncIterable(rejecting.iterable).pipe(Stream.take(1), Stream.runDrain, bounded)
      const throwing = spy(["a", "b"], () => {
        throw new Error("cannot return either")
      })
      yield* fromAsyncIterable(throwing.iterable).pipe(Stream.take(1), Stream.runDrain, bounded)
      expect([rejecting.calls.return, throwing.calls.return]).toEqual([1, 1])
      // Node reports a rejection nobody handled once the microtasks have run: before the next macrotask
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(unhandled).toEqual([])
    }).pipe(Effect.scoped))

  it.live("an iterator read to its end, or whose next() rejected, gets no return()", () =>
    Effect.gen(function*() {
      const values = ["a", "b"]
      const calls = { return: 0 }
      const ended: AsyncIterable<string> = {
        [Symbol.asyncIterator]: () => {
          let i = 0
          return {
            next: () => {
              const value = values[i++]
              return Promise.resolve(value !== undefined ? { done: false, value } : { done: true, value: undefined })
            },
            return: () => {
              calls.return++
              return Promise.resolve({ done: true, value: undefined })
            }
          }
        }
      }
      expect([...yield* Stream.runCollect(fromAsyncIterable(ended))]).toEqual(["a", "b"])
      const failing: AsyncIterable<string> = {
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.reject(new Error("broken")),
          return: () => {
            calls.return++
            return Promise.resolve({ done: true, value: undefined })
          }
        })
      }
      const error = yield* Effect.flip(Stream.runDrain(fromAsyncIterable(failing)))
      expect(error).toMatchObject({
        _tag: "InvalidOptions",
        option: "prompt",
        description: "its next() rejected: Error: broken"
      })
      expect(calls.return).toBe(0)
    }))
})

describe("a prompt Stream that fails or dies fails the query", () => {
  it.live("Stream.die: InvalidOptions { option: \"prompt\" } carrying the defect", () =>
    Effect.gen(function*() {
      const { layer, state } = echoing()
      const defect = new Error("prompt source crashed")
      const error = yield* ClaudeAgent.query(Stream.die(defect)).pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.provide(layer),
        bounded
      )
      expect(error).toBeInstanceOf(AgentError.InvalidOptions)
      expect(error).toMatchObject({ option: "prompt", cause: defect })
      expect(state.ended).toBe(true)
    }))

  it.live("Stream.die after a first prompt: the first turn, then the typed error", () =>
    Effect.gen(function*() {
      const { layer, state } = echoing()
      const answered = yield* Deferred.make<void>()
      const prompts = Stream.concat(
        Stream.make<Array<ClaudeAgent.Prompt>>("hi"),
        Stream.fromEffect(Effect.zipRight(Deferred.await(answered), Effect.dieMessage("no more input")))
      )
      const seen: Array<Message.SdkMessage> = []
      const error = yield* ClaudeAgent.query(prompts).pipe(
        Stream.tap((m) => {
          seen.push(m)
          return m.type === "result" ? Deferred.succeed(answered, undefined) : Effect.void
        }),
        Stream.runDrain,
        Effect.flip,
        Effect.provide(layer),
        bounded
      )
      expect(seen.at(-1)).toMatchObject({ type: "result", result: "echo: hi" })
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "prompt" })
      expect(String(error.message)).toContain("no more input")
      expect(state.ended).toBe(true)
    }))

  it.live("Stream.fail: the stream's own error", () =>
    Effect.gen(function*() {
      const { layer, state } = echoing()
      const error = yield* ClaudeAgent.query(
        Stream.concat(Stream.make<Array<ClaudeAgent.Prompt>>("hi"), Stream.fail("input broke" as const))
      ).pipe(Stream.runDrain, Effect.flip, Effect.provide(layer), bounded)
      expect(error).toBe("input broke")
      expect(state.ended).toBe(true)
    }))
})

describe("prompt items that are not user messages", () => {
  it.live("fail with InvalidOptions naming the item, before it is written", () =>
    Effect.gen(function*() {
      const handle = yield* Deferred.make<ScriptedCli.ScriptedCli>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* Deferred.succeed(handle, cli)
          yield* cli.expectUser
          yield* cli.turn("first")
          yield* cli.peer.inputEnded
        })
      )
      const error = yield* ClaudeAgent.query(
        Stream.make("first", smuggle({ type: "user", message: { role: "user" } }))
      ).pipe(Stream.runDrain, Effect.flip, Effect.provide(layer), bounded)
      expect(error).toBeInstanceOf(AgentError.InvalidOptions)
      expect(error).toMatchObject({ option: "prompt" })
      expect(error.message).toContain("item 1")
      expect(error.message).toContain("content")
      const sent = yield* (yield* Deferred.await(handle)).received
      expect(sent.filter((frame) => frame.type === "user").length).toBe(1)
    }))
})

describe("start-up is interruptible during the --version probe", () => {
  const withSlowCli = <A, E, R>(body: (executable: string) => Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(slowVersionCli),
      (cli) => body(cli.executable),
      (cli) => Effect.sync(cli.remove)
    )

  // the start-ups share one Node layer (one CliResolver), as the sessions of a program do
  const started = (executable: string) =>
    ClaudeAgent.query("hi", { pathToClaudeCodeExecutable: executable }).pipe(Stream.runDrain, Effect.fork)

  it.live("interrupting the query returns at once and kills the probe process", () =>
    withSlowCli((executable) =>
      Effect.gen(function*() {
        const fiber = yield* started(executable)
        const probe = yield* Effect.promise(() => probeRunning())
        yield* bounded(Fiber.interrupt(fiber))
        // the probe is killed with SIGKILL when its last waiter leaves
        expect(yield* Effect.promise(() => leftAfterKill(probe))).toEqual([])
      })
    ).pipe(Effect.provide(NodeClaudeAgent.layer)))

  it.live("a probe shared by two start-ups runs until the last of them leaves", () =>
    Effect.gen(function*() {
      // the fibers that reached the version check, as they reach it
      const checking = yield* Queue.unbounded<Fiber.RuntimeFiber<unknown, unknown>>()
      const resolver = Layer.scoped(
        CliResolver.CliResolver,
        Effect.map(CliResolver.make(), (inner) =>
          CliResolver.CliResolver.of({
            ...inner,
            checkVersion: (cli, range) =>
              Effect.withFiberRuntime((fiber) => Effect.zipRight(checking.offer(fiber), inner.checkVersion(cli, range)))
          }))
      )
      const layer = Transport.layerProcess.pipe(
        Layer.provide(NodeCommandExecutor.layer),
        Layer.provide(NodeFileSystem.layer),
        Layer.provide(resolver)
      )
      yield* withSlowCli((executable) =>
        Effect.gen(function*() {
          const first = yield* started(executable)
          const second = yield* started(executable)
          const probe = yield* Effect.promise(() => probeRunning())
          // both start-ups wait for the probe's answer: the second one has joined the running probe
          const waiters = [yield* checking.take, yield* checking.take]
          for (const fiber of waiters) {
            yield* eventually(
              "a start-up waiting for the probe",
              Effect.map(fiber.status, (s) => s._tag === "Suspended")
            )
          }
          // one probe for both
          expect(ownedProcesses()).toEqual(probe)
          yield* bounded(Fiber.interrupt(first))
          // not killed: a SIGKILL shows as pending from the moment it is sent until the process ends
          expect(probe.filter((pid) => isAlive(pid) && !killPending(pid))).toEqual(probe)
          yield* bounded(Fiber.interrupt(second))
          expect(yield* Effect.promise(() => leftAfterKill(probe))).toEqual([])
        })
      ).pipe(Effect.provide(layer))
    }))
})
