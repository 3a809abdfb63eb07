/**
 * The pipes of a started process, read and written with Node's own stream calls: no Effect `Stream` and no fiber per
 * pipe (docs/PERFORMANCE.md, "The process's pipes"). stdout is read one `read()` at a time by whoever pulls frames,
 * stderr is handed to a callback as it comes, stdin is written in call order, and the exit is a callback.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import type { Readable, Writable } from "node:stream"
import type { ExitStatus, SpawnedProcess } from "../../Transport.js"

const noop = () => {}

/** A chunk as bytes: a stream given a text encoding (`setEncoding`) yields strings, turned back into their bytes. */
const bytesOf = (readable: Readable, chunk: unknown): Uint8Array =>
  typeof chunk === "string" ? Buffer.from(chunk, readable.readableEncoding ?? "utf8") : (chunk as Uint8Array)

/**
 * The next chunk of `readable`, or `undefined` once it has ended (or failed: a pipe that breaks just ends). Listens
 * from the call on, so a process that exits before anyone reads keeps its output (Node resumes, and so discards, the
 * output of an exited child that nobody listens to); what is not read waits in the stream, which stops reading the
 * pipe past its high-water mark (the process then waits to write).
 *
 * @internal
 */
export const reader = (readable: Readable): Effect.Effect<Uint8Array | undefined> => {
  let done = false
  let waiter: (() => void) | undefined
  const wake = () => {
    const resume = waiter
    waiter = undefined
    resume?.()
  }
  const finish = () => {
    done = true
    wake()
  }
  readable.on("readable", wake)
  readable.once("end", finish)
  readable.once("close", finish)
  readable.on("error", finish)
  const read: Effect.Effect<Uint8Array | undefined> = Effect.suspend(() => {
    const chunk: unknown = readable.read()
    if (chunk !== null) return Effect.succeed(bytesOf(readable, chunk))
    if (done || readable.readableEnded || readable.destroyed) return Effect.succeed(undefined)
    // No canceler: an interrupted wait is settled by the runtime through this same `resume`, so a later wake-up is
    // a no-op, and the next wait replaces `waiter`. A canceler would wrap every wait in `onInterrupt` (an
    // uninterruptible region and an exit handler per stdout read; docs/PERFORMANCE.md, round 6).
    return Effect.async<Uint8Array | undefined>((resume) => {
      waiter = () => resume(read)
    })
  })
  return read
}

/**
 * Hands every chunk of `readable` to `push` as it comes, until the scope closes, and calls `onEnd` once it has ended
 * (at once when there is none). A pipe that fails just ends.
 *
 * @internal
 */
export const drain = (
  readable: Readable | undefined,
  push: (chunk: Uint8Array) => void,
  onEnd: () => void
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (readable === undefined) return onEnd()
    let done = false
    const finish = () => {
      if (done) return
      done = true
      onEnd()
    }
    const onData = (chunk: unknown) => push(bytesOf(readable, chunk))
    readable.on("data", onData)
    readable.once("end", finish)
    readable.once("close", finish)
    readable.on("error", finish)
    // nothing reaches `push` after the scope (the caller's callbacks included); the stream stays flowing, so a
    // process still writing to it is not blocked
    yield* Scope.addFinalizer(yield* Effect.scope, Effect.sync(() => readable.off("data", onData)))
  })

/**
 * Writes to `writable` in call order (Node queues what the pipe does not take at once), and ends it. A write to a
 * process that has exited fails in the stream (`EPIPE`), which is ignored: the exit tells the caller.
 *
 * @internal
 */
export const writer = (
  writable: Writable
): { readonly write: (bytes: Uint8Array) => void; readonly end: () => void } => {
  writable.on("error", noop)
  return {
    write: (bytes) => {
      if (!writable.writableEnded && !writable.destroyed) writable.write(bytes)
    },
    end: () => {
      if (!writable.writableEnded && !writable.destroyed) writable.end()
    }
  }
}

/** A process as far as its exit is concerned: a `SpawnedProcess`, a `ChildProcess`. @internal */
export type Exiting = Pick<SpawnedProcess, "exitCode" | "signalCode" | "on" | "once">

/** Whether `child` has exited (its exit code or its signal is known). @internal */
export const hasExited = (child: Exiting): boolean =>
  child.exitCode !== null || (child.signalCode !== undefined && child.signalCode !== null)

/**
 * Calls `onExit` once, when `child` exits (at once if it has): its `exit` event, or an `error` event of a process that
 * never started (a missing command emits only that, and has no pid). An `error` of a running process (an abort
 * signal, a failed kill) does not end it: only its `exit` does. Every error goes to `onError`.
 *
 * @internal
 */
export const watchExit = (
  child: Exiting,
  onError: (error: Error) => void,
  onExit: (status: ExitStatus) => void
): void => {
  let called = false
  const exit = (status: ExitStatus) => {
    if (called) return
    called = true
    onExit(status)
  }
  child.on("error", (error: Error) => {
    onError(error)
    if (hasExited(child)) exit({ code: child.exitCode, signal: child.signalCode ?? null })
    else if (!("pid" in child) || typeof child.pid !== "number") exit({ code: null, signal: null })
  })
  if (hasExited(child)) {
    exit({ code: child.exitCode, signal: child.signalCode ?? null })
    return
  }
  child.once("exit", (code, signal) => exit({ code, signal }))
}
