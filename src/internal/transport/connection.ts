/** @internal */
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Message from "../../Message.js"
import type { Connection, ExitStatus, FramePull, SendError } from "../../Transport.js"

/**
 * What a transport implements; {@link make} derives the rest of a `Connection` from it: `messages` is `pull` as a
 * Stream, `send` is `unsafeSend` as an Effect. A wrapper (the recorder, the session's activity stamp) wraps the core
 * and derives the rest the same way, so it behaves exactly like the connection it wraps.
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

/** @internal */
export const make = (core: Core): Connection => ({
  ...core,
  messages: Stream.unwrapScoped(Effect.map(core.pull, (pull) => Stream.repeatEffectChunkOption(pull))),
  send: (message) =>
    Effect.suspend(() => {
      const error = core.unsafeSend(message)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
})
