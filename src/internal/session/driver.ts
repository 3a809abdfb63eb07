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
import type * as Chunk from "effect/Chunk"
import * as Fiber from "effect/Fiber"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ProcessExited } from "../../AgentError.js"
import type { Prompt, SessionError } from "../../ClaudeAgent.js"
import type * as Message from "../../Message.js"
import * as PromptSource from "./promptSource.js"
import type { SessionInternal } from "./make.js"

/** How long the messages may go on after the last result before the stream ends without the CLI's exit. */
const DRAIN_AFTER_LAST_RESULT = Duration.seconds(2)

/**
 * A query whose messages ended without an error: fine, unless the CLI exited (with code 0) without a result before it
 * answered `initialize` — then that failure, which is known at once once the CLI is gone.
 */
const endedCleanly = (s: SessionInternal): Effect.Effect<void, SessionError> =>
  Effect.flatMap(
    s.protocol.connection.exitStatus,
    (exit) => Option.isNone(exit) || s.resultCount() > 0 ? Effect.void : Effect.asVoid(s.session.initializationResult)
  )

/**
 * What the driver of one query knows: how many turns the prompts asked for, whether the prompts are all sent, and
 * why the messages must stop early.
 *
 * @internal
 */
export interface Feed<E> {
  /** Turns asked for so far (prompts without `shouldQuery: false`). */
  readonly expected: number
  /** Every prompt is sent. */
  readonly inputDone: boolean
  /** Why the messages stop early (the first reason wins). */
  readonly stoppedBy: SessionError | E | undefined
  /** The CLI was gone before the prompt could be sent (e.g. a resume of a session that does not exist). */
  readonly sendFailed: ProcessExited | undefined
  /** Where the reader is: taking messages, at the end (why the messages stopped comes next), or done. */
  readonly phase: "messages" | "end" | "done"
}

/**
 * Whether the CLI has answered every prompt of the query, having seen `results` results.
 *
 * @internal
 */
export const answered = <E>(feed: Feed<E>, results: number): boolean => feed.inputDone && results >= feed.expected

/**
 * How the messages end after the CLI's stdout failed with `exit` (`refined`: the session's explanation of it):
 * `undefined` for a clean end, else the error to fail with. A resume that found nothing fails; once every prompt was
 * answered, exit 0 is clean, and so is exit 1 after an error result (how the CLI reports that result once stdin is
 * closed).
 *
 * @internal
 */
export const afterExit = (
  exit: ProcessExited,
  refined: SessionError,
  allAnswered: boolean,
  lastResult: Message.ResultMessage | undefined
): SessionError | undefined => {
  if (refined._tag === "SessionNotFound") return refined
  const clean = exit.code === 0 || (exit.code === 1 && lastResult?.is_error === true)
  return allAnswered && exit.code !== null && clean ? undefined : refined
}

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
 * (bounded). The Promise API pulls it directly; {@link drive} gives it as a Stream.
 *
 * @internal
 */
export const drivePull = <E, R>(
  s: SessionInternal,
  prompt: string | Stream.Stream<Prompt, E, R>
): Effect.Effect<MessagePull<E>, SessionError, R | Scope.Scope> =>
  Effect.gen(function*() {
    const feed = MutableRef.make<Feed<E>>({
      expected: 0,
      inputDone: false,
      stoppedBy: undefined,
      sendFailed: undefined,
      phase: "messages"
    })
    const update = (f: (feed: Feed<E>) => Feed<E>) => MutableRef.update(feed, f)
    const finished = yield* Deferred.make<void>()
    const check = () => {
      if (answered(MutableRef.get(feed), s.resultCount())) Deferred.unsafeDone(finished, Effect.void)
    }
    s.onResult(check)

    // The other reasons to stop (the session's own watcher handles `fatal`, see `stoppedBy`) end the protocol's
    // message buffer once what it holds is handed out, and say how the stream ends (no per-chunk
    // `Stream.interruptWhen`: docs/PERFORMANCE.md, "Ending a session's messages").
    const stop = (error?: SessionError | E) =>
      Effect.suspend(() => {
        // the first reason wins: a session that could not go on before the input failed reports that
        if (error !== undefined) update((f) => ({ ...f, stoppedBy: f.stoppedBy ?? s.stoppedBy() ?? error }))
        return s.protocol.endMessages
      })
    if (typeof prompt === "string") {
      // a CLI gone before the prompt could be sent: the stream reports why once it has read everything the CLI
      // wrote, not the bare exit
      yield* s.session.send(prompt).pipe(
        Effect.catchTag("ProcessExited", (error) => Effect.sync(() => update((f) => ({ ...f, sendFailed: error }))))
      )
      update((f) => ({ ...f, expected: 1, inputDone: true }))
    } else {
      yield* feedStream(s, prompt, {
        sent: (startsTurn) => update((f) => ({ ...f, expected: f.expected + (startsTurn ? 1 : 0) })),
        done: () => {
          update((f) => ({ ...f, inputDone: true }))
          check()
        },
        failed: stop
      })
    }
    // after the last result: stdin closes, and the stream ends when the CLI exits, or after a bounded drain
    yield* Deferred.await(finished).pipe(Effect.zipRight(s.session.endInput), Effect.forkScoped)
    yield* Deferred.await(finished).pipe(
      Effect.zipRight(Effect.sleep(DRAIN_AFTER_LAST_RESULT)),
      Effect.zipRight(stop()),
      Effect.forkScoped
    )

    // once the messages ended cleanly: why they stopped, if something stopped them
    const stoppedReason = (): SessionError | E | undefined => {
      const { sendFailed, stoppedBy } = MutableRef.get(feed)
      return stoppedBy ?? s.stoppedBy() ?? (sendFailed !== undefined ? s.refine(sendFailed) : undefined)
    }
    // the one reader of the query's messages, chunk by chunk
    const phase = (next: Feed<E>["phase"]) => update((f) => ({ ...f, phase: next }))
    const end: MessagePull<E> = Effect.suspend(() => {
      phase("done")
      const reason = stoppedReason()
      if (reason !== undefined) return Effect.fail(Option.some(reason))
      return Effect.zipRight(Effect.mapError(endedCleanly(s), Option.some), Effect.fail(Option.none()))
    })
    const pull: MessagePull<E> = Effect.suspend(() => {
      const at = MutableRef.get(feed).phase
      if (at === "done") return Effect.fail(Option.none())
      if (at === "end") return end
      return Effect.catchAll(s.protocol.pullMessages, (error) => {
        if (error._tag === "None") return end
        phase("done")
        return Effect.flatMap(
          Effect.zipWith(s.refineExited(error.value), Deferred.isDone(finished), (refined, allAnswered) =>
            afterExit(error.value, refined, allAnswered, s.lastResult())),
          (failure) => {
            if (failure !== undefined) {
              return Effect.fail(Option.some(failure))
            }
            phase("end")
            return end
          }
        )
      })
    })
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
    readonly sent: (startsTurn: boolean) => void
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
        return Effect.zipRight(
          s.session.send(p),
          Effect.sync(() => on.sent(typeof p === "string" || p.shouldQuery !== false))
        )
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
    yield* Effect.addFinalizer(() => Fiber.interruptFork(reader))
    yield* Deferred.await(inputFailed).pipe(Effect.catchAll(on.failed), Effect.forkScoped)
  })
