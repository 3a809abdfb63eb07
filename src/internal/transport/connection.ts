/** @internal */
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Message from "../../Message.js"
import type { Connection, ExitStatus, FramePull, SendError } from "../../Transport.js"

/**
 * What the SDK's transports implement; {@link make} derives a `Connection` from it: `messages` is `pull` as a Stream,
 * `send` is `unsafeSend` as an Effect (the synchronous write stays here: the public `Connection` has `send` only).
 *
 * @internal
 */
export interface Core {
  readonly pid: Option.Option<number>
  readonly command: ReadonlyArray<string>
  readonly pull: Effect.Effect<FramePull, never, Scope.Scope>
  /**
   * Writes one frame to stdin now (it is queued for the single writer), or returns why it cannot (see
   * `refusal` in ../message/refusal.ts). Never throws for a frame that `JSON.stringify` can write.
   */
  readonly unsafeSend: (message: Message.StdinMessage) => SendError | undefined
  readonly endInput: Effect.Effect<void>
  readonly awaitExit: Effect.Effect<ExitStatus>
  readonly exitStatus: Effect.Effect<Option.Option<ExitStatus>>
  readonly stderrTail: Effect.Effect<string>
  readonly kill: Effect.Effect<void>
}

const messagesOf = (pull: Core["pull"]): Connection["messages"] =>
  Stream.unwrapScoped(Effect.map(pull, (next) => Stream.repeatEffectChunkOption(next)))

/** @internal */
export const make = ({ unsafeSend, ...core }: Core): Connection => ({
  ...core,
  messages: messagesOf(core.pull),
  send: (message) =>
    Effect.suspend(() => {
      const error = unsafeSend(message)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
})

/**
 * What a wrapper replaces of the connection it wraps (the recorder, the session's activity stamp).
 *
 * @internal
 */
export interface Overrides {
  readonly pull?: Connection["pull"]
  readonly send?: Connection["send"]
  readonly endInput?: Connection["endInput"]
}

/**
 * A connection that wraps another: its members, with those of `overrides` in their place, and `messages` derived from
 * the new `pull`, so the wrapper behaves exactly like the connection it wraps.
 *
 * @internal
 */
export const wrap = (connection: Connection, overrides: Overrides): Connection => ({
  ...connection,
  ...overrides,
  messages: overrides.pull === undefined ? connection.messages : messagesOf(overrides.pull)
})
