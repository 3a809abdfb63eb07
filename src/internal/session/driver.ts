/**
 * The turn driver of `query` and the Promise API: feeds a prompt (a string or a stream of prompts) into a session,
 * closes stdin once every prompt asking for a turn has its `result`, and says how the messages end.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Prompt, SessionError } from "../../ClaudeAgent.js"
import type * as Message from "../../Message.js"
import * as PromptSource from "./promptSource.js"
import type { SessionInternal } from "./make.js"
import * as State from "./state.js"
import { interruptNow } from "./termination.js"

/** How long the messages may go on after the last result before the stream ends without the CLI's exit. */
const DRAIN_MILLIS = 2_000

/**
 * A driven query's messages, chunk by chunk, as `Stream.toPull` would give them: fails with `None` at the end.
 *
 * @internal
 */
export type MessagePull<E> = Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<SessionError | E>>

/**
 * {@link drivePull} as a Stream (single consumer).
 *
 * @internal
 */
export const drive = <E, R>(
  s: SessionInternal,
  prompt: string | Stream.Stream<Prompt, E, R>
): Effect.Effect<Stream.Stream<Message.SdkMessage, SessionError | E>, SessionError, R | Scope.Scope> =>
  Effect.map(drivePull(s, prompt), (pull) => Stream.repeatEffectChunkOption(pull))

/**
 * Feeds a prompt (a string or a stream of prompts) into a session and returns the pull of its messages until the CLI
 * has answered every prompt: after the last `result` stdin is closed, and the messages end when the CLI exits
 * (bounded). How they end is the session's outcome (its termination), mapped once here. The Promise API pulls it
 * directly; {@link drive} gives it as a Stream.
 *
 * @internal
 */
export const drivePull = <E, R>(
  s: SessionInternal,
  prompt: string | Stream.Stream<Prompt, E, R>
): Effect.Effect<MessagePull<E>, SessionError, R | Scope.Scope> =>
  Effect.gen(function*() {
    const finished = yield* Deferred.make<void>()
    const check = () => {
      if (State.answered(s.state())) Deferred.unsafeDone(finished, Effect.void)
    }
    s.onResult(check)
    // the prompt stream's own failure (reported to the termination as `InputFailed`: the first reason wins)
    let inputError: Option.Option<E | SessionError> = Option.none()

    if (typeof prompt === "string") {
      // a CLI gone before the prompt could be sent: the query reports why once it has read everything the CLI wrote
      yield* s.session.send(prompt).pipe(
        Effect.catchTag("ProcessExited", (error) => Effect.sync(() => s.advance({ _tag: "PromptLost", error })))
      )
      s.advance({ _tag: "InputDone" })
    } else {
      yield* feedStream(s, prompt, {
        done: () => {
          s.advance({ _tag: "InputDone" })
          check()
        },
        failed: (error) =>
          Effect.suspend(() => {
            inputError = Option.some(error)
            return s.termination.report({ _tag: "InputFailed" })
          })
      })
    }
    // after the last result: stdin closes, and the messages end when the CLI exits, or once the drain's bound has
    // passed since that result. One fiber does both: closing stdin waits for idle at most `IDLE_AFTER_RESULT` (on
    // the wall clock), and the drain's bound is counted from the result, not from the close.
    const drain = yield* Deferred.await(finished).pipe(
      Effect.zipRight(Clock.currentTimeMillis),
      Effect.flatMap((finishedAt) =>
        Effect.zipRight(
          s.session.endInput,
          Effect.flatMap(
            Clock.currentTimeMillis,
            (now) => Effect.sleep(Duration.millis(Math.max(0, finishedAt + DRAIN_MILLIS - now)))
          )
        )
      ),
      Effect.zipRight(s.termination.report({ _tag: "Drained" })),
      Effect.forkScoped
    )
    // the CLI's exit ends the messages: the drain's timer must not keep the host alive
    yield* s.termination.onEnd(interruptNow(drain))

    // the one reader of the query's messages, chunk by chunk; at the end, the session's outcome
    let done = false
    const end: MessagePull<E> = Effect.flatMap(s.termination.outcome, (outcome) => {
      done = true
      if (outcome._tag === "Failed") return Effect.fail(Option.some(outcome.error))
      if (outcome._tag === "InputFailed" && Option.isSome(inputError)) return Effect.fail(inputError)
      return Effect.fail(Option.none())
    })
    const pull: MessagePull<E> = Effect.suspend(() =>
      done ? Effect.fail(Option.none()) : Effect.catchAll(s.protocol.pullMessages, () => end)
    )
    return pull
  })

/**
 * Sends the prompts of the caller's stream as they come, checking each, and reports each prompt sent, the end of the
 * stream, or why it failed. The stream is read on a fiber that the end of the query interrupts without waiting for
 * it: its release is the caller's code (e.g. the `return()` of a generator suspended at an `await`, which settles only
 * once the generator resumes) and must not hold up reaping the CLI.
 */
const feedStream = <E, R>(
  s: SessionInternal,
  prompts: Stream.Stream<Prompt, E, R>,
  on: {
    readonly done: () => void
    readonly failed: (error: SessionError | E) => Effect.Effect<void>
  }
): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    const inputFailed = yield* Deferred.make<never, E | SessionError>()
    const reader = yield* prompts.pipe(
      Stream.zipWithIndex,
      Stream.runForEach(([p, index]): Effect.Effect<void, SessionError> => {
        const invalid = PromptSource.invalidItem(p, index)
        if (invalid !== undefined) return Effect.fail(invalid)
        return s.session.send(p)
      }),
      Effect.zipRight(Effect.sync(on.done)),
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
    // on the scope itself: `Effect.addFinalizer` would diff the fiber's whole `FiberRefs` at close for nothing
    yield* Scope.addFinalizer(yield* Effect.scope, interruptNow(reader))
    yield* Deferred.await(inputFailed).pipe(Effect.catchAll(on.failed), Effect.forkScoped)
  })
