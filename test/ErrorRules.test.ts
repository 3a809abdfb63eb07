import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent } from "effect-claude-agent"
import * as promise from "effect-claude-agent/promise"
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

/** Waits until the session's CLI has exited. */
const exited = (session: ClaudeAgent.Session) =>
  Effect.repeat(session.state, { until: (state) => state === "exited", schedule: Schedule.spaced("5 millis") })

describe("writes after end of input vs after the CLI exited: one rule", () => {
  it.live("after the caller's own endInput, send and control requests fail with InputClosed, also once the CLI exited", () =>
    Effect.gen(function*() {
      // the scripted CLI exits 0 once stdin closes
      const layer = ScriptedCli.layer(() => Effect.void)
      const errors = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        yield* session.initializationResult
        yield* session.endInput
        const beforeExit = yield* Effect.flip(session.send("late"))
        yield* exited(session)
        return [beforeExit, yield* Effect.flip(session.send("later")), yield* Effect.flip(session.setModel("haiku"))]
      }).pipe(Effect.scoped, Effect.provide(layer))
      for (const error of errors) expect(error).toStrictEqual(new AgentError.InputClosed({ reason: "endInput" }))
    }))

  it.live("after the CLI exited on its own, send and control requests fail with ProcessExited (code, stderr tail)", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.exit(3, "boom\n")))
      const errors = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        yield* session.initializationResult
        yield* session.send("hi")
        yield* exited(session)
        return [yield* Effect.flip(session.send("again")), yield* Effect.flip(session.setModel("haiku"))]
      }).pipe(Effect.scoped, Effect.provide(layer))
      for (const error of errors) {
        expect(error).toBeInstanceOf(AgentError.ProcessExited)
        expect(error).toMatchObject({ code: 3, stderrTail: "boom\n" })
      }
    }))

  it("Promise API: methods after the CLI died reject with why it died (ProcessExited), not InputClosed", async () => {
    const q = promise.query({
      prompt: "hi",
      options: { transport: ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.exit(3, "boom\n"))) }
    })
    const failure = await q.next().catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(promise.ProcessExited)
    await expect(q.setModel("haiku")).rejects.toBe(failure)
    await expect(q.interrupt()).rejects.toBe(failure)
  })

  it("Promise API: methods after close() reject with InputClosed", async () => {
    const q = promise.query({
      prompt: "hi",
      options: { transport: ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, Effect.zipRight(cli.init(), cli.stall))) }
    })
    await q.next()
    await q.close()
    await expect(q.setModel("haiku")).rejects.toBeInstanceOf(promise.InputClosed)
  })
})
