/**
 * The turn driver of `query` and the Promise API: feeds a prompt (a string or a stream of prompts) into a session,
 * closes stdin once every prompt asking for a turn has its `result`, and says how the messages end.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ProcessExited } from "../../AgentError.js"
import type { Prompt, SessionError } from "../../ClaudeAgent.js"
import type * as Message from "../../Message.js"
import * as PromptSource from "../promptSource.js"
import type { SessionInternal } from "./make.js"

/** How long the messages may go on after the last result before the stream ends without the CLI's exit. */
const DRAIN_AFTER_LAST_RESULT = Duration.seconds(2)

/**
 * A query whose messages ended without an error: fine, unless the CLI exited (with code 0) without a result before it
 * answered `initialize` — then that failure, which is known at once once the CLI is gone.
 */
const endedCleanly = (s: SessionInternal): Effect.Effect<void, SessionError> =>
  Effect.flatMap(s.protocol.connection.exitStatus, (exit) =>
    Option.isNone(exit) || s.resultCount() > 0 ? Effect.void : Effect.asVoid(s.session.initializationResult))

/**
 * Feeds a prompt (a string or a stream of prompts) into a session and returns its messages until the CLI has
 * answered every prompt: after the last `result` stdin is closed, and the stream ends when the CLI exits (bounded).
 *
 * @internal
 */
export const drive = <E, R>(
  s: SessionInternal,
  prompt: string | Stream.Stream<Prompt, E, R>
): Effect.Effect<Stream.Stream<Message.SdkMessage, SessionError | E>, SessionError, R | Scope.Scope> =>
  Effect.gen(function*() {
    let expected = 0
    let inputDone = false
    const finished = yield* Deferred.make<void>()
    const check = () => {
      if (inputDone && s.resultCount() >= expected) Deferred.unsafeDone(finished, Effect.void)
    }
    s.onResult(check)

    // The other reasons to stop (the session's own watcher handles `fatal`, see `stoppedBy`) end the protocol's
    // message buffer once what it holds is handed out, and say how the stream ends (no per-chunk
    // `Stream.interruptWhen`: docs/PERFORMANCE.md, "Ending a session's messages").
    let stoppedBy: SessionError | E | undefined
    const stop = (error?: SessionError | E) =>
      Effect.suspend(() => {
        // the first reason wins: a session that could not go on before the input failed reports that
        if (error !== undefined) stoppedBy ??= s.stoppedBy() ?? error
        return s.protocol.endMessages
      })
    // the CLI was gone before the prompt could be sent (e.g. a resume of a session that does not exist): the
    // stream reports why once it has read everything the CLI wrote, not the bare exit
    let sendFailed: ProcessExited | undefined
    if (typeof prompt === "string") {
      yield* s.session.send(prompt).pipe(
        Effect.catchTag("ProcessExited", (error) =>
          Effect.sync(() => {
            sendFailed = error
          }))
      )
      expected = 1
      inputDone = true
    } else {
      const inputFailed = yield* Deferred.make<never, E | SessionError>()
      let index = 0
      // The caller's stream is read on a fiber that the end of the query interrupts without waiting for it: its
      // release is the caller's code (e.g. the `return()` of a generator suspended at an `await`, which settles only
      // once the generator resumes) and must not hold up reaping the CLI.
      const reader = yield* prompt.pipe(
        Stream.runForEach((p): Effect.Effect<void, SessionError> => {
          const invalid = PromptSource.invalidItem(p, index++)
          if (invalid !== undefined) return Effect.fail(invalid)
          return Effect.zipRight(
            s.session.send(p),
            Effect.sync(() => {
              if (typeof p === "string" || p.shouldQuery !== false) expected++
            })
          )
        }),
        Effect.zipRight(Effect.sync(() => {
          inputDone = true
          check()
        })),
        Effect.catchAllCause((cause: Cause.Cause<E | SessionError>) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) return Deferred.fail(inputFailed, failure.value)
          // a stream that died fails the query with a typed error; interrupted, it was the query that ended
          return Cause.isInterruptedOnly(cause)
            ? Effect.void
            : Deferred.fail(inputFailed, PromptSource.died(cause))
        }),
        Effect.forkDaemon
      )
      yield* Effect.addFinalizer(() => Fiber.interruptFork(reader))
      yield* Deferred.await(inputFailed).pipe(Effect.catchAll(stop), Effect.forkScoped)
    }
    // after the last result: stdin closes, and the stream ends when the CLI exits, or after a bounded drain
    yield* Deferred.await(finished).pipe(Effect.zipRight(s.session.endInput), Effect.forkScoped)
    yield* Deferred.await(finished).pipe(
      Effect.zipRight(Effect.sleep(DRAIN_AFTER_LAST_RESULT)),
      Effect.zipRight(stop()),
      Effect.forkScoped
    )

    // How the messages end: after the CLI's stdout failed with `error`, `undefined` when that is a clean end (the
    // reasons to stop, below, still apply), else the error to fail with.
    const ended = Deferred.isDone(finished)
    const afterExit = (error: ProcessExited): Effect.Effect<SessionError | undefined> =>
      Effect.zipWith(s.refineExited(error), ended, (refined, isEnded) => {
        if (refined._tag === "SessionNotFound") return refined
        // exit 1 after stdin closed following an error result is how the CLI reports that result
        const last = s.lastResult()
        if (isEnded && error.code !== null && (error.code === 0 || (error.code === 1 && last?.is_error))) {
          return undefined
        }
        return refined
      })
    // once the messages ended cleanly: why they stopped, if something stopped them
    const stoppedReason = (): SessionError | E | undefined => {
      const reason = stoppedBy ?? s.stoppedBy()
      if (reason !== undefined) return reason
      if (sendFailed !== undefined) return s.refine(sendFailed)
      return undefined
    }

    const messages: Stream.Stream<Message.SdkMessage, SessionError | E> = s.protocol.messages.pipe(
      Stream.catchAll((error) =>
        Stream.unwrap(
          Effect.map(afterExit(error), (failure) => (failure === undefined ? Stream.empty : Stream.fail(failure)))
        )
      ),
      Stream.concat(
        Stream.suspend(() => {
          const reason = stoppedReason()
          return reason !== undefined ? Stream.fail(reason) : Stream.execute(endedCleanly(s))
        })
      )
    )

    return messages
  })
