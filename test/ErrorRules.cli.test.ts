import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent, type Transport } from "effect-claude-agent"
import * as ScriptedModelServer from "../src/ScriptedModelServer.js"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 120_000)

const unknownId = "00000000-0000-4000-8000-000000000000"

describe("error rules against the real CLI", () => {
  live(
    "--resume of an unknown id: the first turn of a session fails with SessionNotFound, as query does",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const fromSession = yield* Effect.gen(function*() {
          const session = yield* ClaudeAgent.session(options({ resume: unknownId }))
          return yield* Stream.runDrain(session.turn("SAY hi"))
        }).pipe(Effect.scoped, Effect.flip)
        expect(fromSession).toBeInstanceOf(AgentError.SessionNotFound)
        expect(fromSession).toMatchObject({ sessionId: unknownId })
        const fromQuery = yield* ClaudeAgent.query("SAY hi", options({ resume: unknownId })).pipe(
          Stream.runDrain,
          Effect.flip
        )
        expect(fromQuery).toStrictEqual(fromSession)
      })
  )

  live(
    "no credentials: failOnApiError fails with an ApiError that says authentication (\"Not logged in\")",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const error = yield* ClaudeAgent.query("SAY hi", options({ env: { ANTHROPIC_API_KEY: undefined } })).pipe(
          ClaudeAgent.failOnApiError,
          Stream.runDrain,
          Effect.flip
        )
        expect(error).toBeInstanceOf(AgentError.ApiError)
        expect(error).toMatchObject({ status: null, errorType: "authentication_error", isAuthentication: true })
        expect((error as AgentError.ApiError).description).toContain("Not logged in")
        expect((error as AgentError.ApiError).message).toMatch(/^Authentication failed/)
      })
  )

  live(
    "a key the API refuses (401): an ApiError that says authentication, with the CLI's message",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli({ replies: [ScriptedModelServer.httpError(401)] })
        const error = yield* ClaudeAgent.query("SAY hi", options()).pipe(
          ClaudeAgent.failOnApiError,
          Stream.runDrain,
          Effect.flip
        )
        expect(error).toBeInstanceOf(AgentError.ApiError)
        expect(error).toMatchObject({ status: 401, errorType: "authentication_error", isAuthentication: true })
        expect((error as AgentError.ApiError).description).toBe(
          "Failed to authenticate. API Error: 401 scripted 401 error"
        )
      })
  )

  live(
    "the official systemPrompt { type: \"custom\" } reaches the model as the system prompt",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli()
        yield* ClaudeAgent.query("SAY hi", options({ systemPrompt: { type: "custom", prompt: "CUSTOM-PROMPT-42" } }))
          .pipe(
            Stream.runDrain
          )
        const requests = yield* server.requests
        expect(requests.some((r) => r.systemText.includes("CUSTOM-PROMPT-42"))).toBe(true)
      })
  )
})
