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
  description: `No conversation found with session ID: ${unknownId}`
})

/** The first turn of a session resuming `unknownId` on a CLI running `script`: its failure and the messages seen. */
const firstTurn = (script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<void, ScriptedCli.ScriptError>) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    const error = yield* Effect.gen(function*() {
      const session = yield* ClaudeAgent.session({ resume: unknownId })
      return yield* Stream.runForEach(session.turn("hi"), (m) => Effect.sync(() => seen.push(m.type)))
    }).pipe(
      Effect.flip,
      Effect.provide(ScriptedCli.layer(script, { responders: { initialize: () => Effect.never } }))
    )
    return { error, seen }
  })

describe("SessionNotFound from the first turn of a resumed session", () => {
  it.scoped("session({ resume: unknown }): the first turn fails with SessionNotFound after the CLI's error result", () =>
    Effect.gen(function*() {
      const { error, seen } = yield* firstTurn(unknownSession)
      expect(error).toStrictEqual(notFound)
      // handed out before the failure, as query does
      expect(seen).toStrictEqual(["result"])
    }))

  it.scoped("also when the CLI reads the prompt before it reports the unknown session", () =>
    Effect.gen(function*() {
      const { error } = yield* firstTurn((cli) => Effect.zipRight(cli.expectUser, unknownSession(cli)))
      expect(error).toStrictEqual(notFound)
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
      for (const error of errors) expect(error).toStrictEqual(new AgentError.InputClosed({ reason: "InputEnded" }))
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
      options: {
        transport: ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, Effect.zipRight(cli.init(), cli.stall)))
      }
    })
    await q.next()
    await q.close()
    await expect(q.setModel("haiku")).rejects.toBeInstanceOf(promise.InputClosed)
  })
})

describe("authentication failures through failOnApiError", () => {
  /** What the CLI 2.1.332 writes without credentials: a synthetic assistant message, then an error result. */
  const notLoggedIn = (cli: ScriptedCli.ScriptedCli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.emit({
        type: "assistant",
        message: {
          id: "m",
          type: "message",
          role: "assistant",
          model: "<synthetic>",
          content: [{ type: "text", text: "Not logged in · Please run /login" }]
        },
        parent_tool_use_id: null,
        session_id: cli.sessionId,
        uuid: "00000000-0000-4000-8000-000000000001",
        error: "authentication_failed",
        is_api_error_message: true
      })
      yield* cli.result("Not logged in · Please run /login", {
        is_error: true,
        terminal_reason: "api_error",
        api_error_status: null
      })
      yield* cli.expectEndInput
      yield* cli.exit(1)
    })

  it.scoped("\"Not logged in\" (no status): an ApiError that says authentication, with the CLI's message", () =>
    Effect.gen(function*() {
      const error = yield* ClaudeAgent.query("x").pipe(
        ClaudeAgent.failOnApiError,
        Stream.runDrain,
        Effect.flip,
        Effect.provide(ScriptedCli.layer(notLoggedIn))
      )
      expect(error._tag).toBe("ApiError")
      const apiError = error as AgentError.ApiError
      expect(apiError.isAuthentication).toBe(true)
      expect(apiError.errorType).toBe("authentication_error")
      expect(apiError.status).toBeNull()
      expect(apiError.description).toBe("Not logged in · Please run /login")
      expect(apiError.message).toMatch(/^Authentication failed \(no status\): Not logged in · Please run \/login/)
    }))

  it("fromResult: a 401 is an authentication failure; another API error is not", () => {
    const result = (fields: object) => ({
      type: "result" as const,
      subtype: "success" as const,
      is_error: true,
      result: "Invalid API key · Fix external API key",
      terminal_reason: "api_error",
      session_id: "s",
      duration_ms: 1,
      duration_api_ms: 0,
      num_turns: 1,
      total_cost_usd: 0,
      usage: {},
      modelUsage: {},
      permission_denials: [],
      uuid: "u",
      ...fields
    })
    const refused = AgentError.fromResult(result({ api_error_status: 401 }) as never)
    expect(refused).toMatchObject({ _tag: "ApiError", status: 401, errorType: "authentication_error" })
    expect((refused as AgentError.ApiError).message).toMatch(/^Authentication failed \(401\)/)
    const other = AgentError.fromResult(result({ api_error_status: 500 }) as never)
    expect((other as AgentError.ApiError).isAuthentication).toBe(false)
    expect(other?.message).toMatch(/^Anthropic API error \(500\)/)
  })
})

describe("StartupFailed's message", () => {
  it.scoped("carries the stderr tail once", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) => cli.exit(1, "config is broken\n"), {
        responders: { initialize: () => Effect.never }
      })
      const error = yield* ClaudeAgent.query("x").pipe(Stream.runDrain, Effect.flip, Effect.provide(layer))
      expect(error._tag).toBe("StartupFailed")
      expect(error.message.split("config is broken").length - 1).toBe(1)
      expect(error.message).toBe(
        "Claude Code failed to start (FirstLine: no output): Claude Code process exited with code 1\n" +
          "--- stderr (last 17 chars) ---\nconfig is broken\n"
      )
    }))
})
