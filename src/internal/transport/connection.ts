/** @internal */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Connection, ConnectionCore } from "../../Transport.js"

/** @internal */
export const make = (core: ConnectionCore): Connection => ({
  ...core,
  messages: Stream.unwrapScoped(Effect.map(core.pull, (pull) => Stream.repeatEffectChunkOption(pull))),
  send: (message) =>
    Effect.suspend(() => {
      const error = core.unsafeSend(message)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
})
