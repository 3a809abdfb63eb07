import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { unknownSession } from "./support/scripts.js"

const unknownId = "00000000-0000-4000-8000-000000000000"
const notFound = new AgentError.SessionNotFound({
  sessionId: unknownId,
  reason: `No conversation found with session ID: ${unknownId}`
})

describe("SessionNotFound from the first turn of a resumed session", () => {
  it.scoped("session({ resume: unknown }): the first turn fails with SessionNotFound", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer(unknownSession, { responders: { initialize: () => Effect.never } })
      const error = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ resume: unknownId })
        return yield* Stream.runDrain(session.turn("hi"))
      }).pipe(Effect.flip, Effect.provide(layer))
      expect(error).toStrictEqual(notFound)
    }))

  it.scoped("also when the CLI reads the prompt before it reports the unknown session", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, unknownSession(cli)), {
        responders: { initialize: () => Effect.never }
      })
      const error = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ resume: unknownId })
        return yield* Stream.runDrain(session.turn("hi"))
      }).pipe(Effect.flip, Effect.provide(layer))
      expect(error).toStrictEqual(notFound)
    }))

  it.scoped("the CLI's error result is still handed out before the failure, as query does", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer(unknownSession, { responders: { initialize: () => Effect.never } })
      const seen: Array<string> = []
      const error = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ resume: unknownId })
        return yield* Stream.runForEach(session.turn("hi"), (m) => Effect.sync(() => seen.push(m.type)))
      }).pipe(Effect.flip, Effect.provide(layer))
      expect(error).toStrictEqual(notFound)
      expect(seen).toStrictEqual(["result"])
    }))
})
