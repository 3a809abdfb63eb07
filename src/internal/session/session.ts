/**
 * `ClaudeAgent.session`, `query` and `queryWithOrigin`, built from the session parts in `./session/`: one session
 * over one CLI (`make`), the turn driver (`drive`), and auto-resume (`resilient`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Options } from "../../AgentOptions.js"
import type { InvalidOptions } from "../../AgentError.js"
import type { PendingQuery, Prompt, Session, SessionError, StartedQuery } from "../../ClaudeAgent.js"
import type * as Message from "../../Message.js"
import type { Transport } from "../../Transport.js"
import { drive, drivePull } from "./driver.js"
import { make } from "./make.js"
import * as PromptSource from "./promptSource.js"
import * as Resilient from "./resilient.js"

export { drive, drivePull, type MessagePull } from "./driver.js"
export { make, type SessionInternal } from "./make.js"

/** @internal */
export const session = (options: Options = {}): Effect.Effect<Session, SessionError, Transport | Scope.Scope> =>
  (options.autoResume !== undefined
    ? Resilient.make(options)
    : Effect.map(make(options), (s) => s.session)).pipe(Effect.withSpan("ClaudeAgent.session"))

/** @internal */
export const query = <E = never, R = never>(
  prompt: string | Stream.Stream<Prompt, E, R>,
  options: Options = {}
): Stream.Stream<Message.SdkMessage, SessionError | E, Transport | R> =>
  Stream.unwrapScoped(Effect.flatMap(make(options), (s) => drive(s, prompt))).pipe(
    // the span covers the whole query, start-up to the last message
    Stream.withSpan("ClaudeAgent.query")
  )

/** @internal */
export const startQuery = (options: Options = {}): Effect.Effect<PendingQuery, SessionError, Transport | Scope.Scope> =>
  Effect.map(make(options), (s): PendingQuery => ({
    origin: s.session.origin,
    pid: s.session.pid,
    sessionId: s.session.sessionId,
    control: s.session,
    messages: (prompt) => Stream.unwrapScoped(drive(s, prompt)).pipe(Stream.withSpan("ClaudeAgent.query")),
    pull: (prompt) => drivePull(s, prompt)
  }))

/** @internal */
export const queryWithOrigin = <E = never, R = never>(
  prompt: string | Stream.Stream<Prompt, E, R>,
  options: Options = {}
): Effect.Effect<StartedQuery<E, R>, SessionError, Transport | Scope.Scope> =>
  Effect.map(startQuery(options), (q): StartedQuery<E, R> => ({ ...q, messages: q.messages(prompt) })).pipe(
    Effect.withSpan("ClaudeAgent.queryWithOrigin")
  )

/** @internal */
export const promptsFromAsyncIterable = <A>(iterable: AsyncIterable<A>): Stream.Stream<A, InvalidOptions> =>
  PromptSource.fromAsyncIterable(iterable)
