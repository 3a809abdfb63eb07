import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Transport } from "effect-claude-agent"
import { ClaudeCodeLanguageModel } from "effect-claude-agent/ai"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const { httpError, reply, text, toolUse } = ScriptedModelServer

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 90_000)

const Add = Tool.make("Add", {
  description: "Adds two numbers",
  parameters: { a: Schema.Number, b: Schema.Number },
  success: Schema.Number
})
const Calculator = Toolkit.make(Add)

describe("ClaudeCodeLanguageModel against the real CLI", () => {
  live("generateText: the answer, the system prompt, usage and cost in the finish part", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli({ replies: [reply(text("hello there"))] })
      const model = yield* ClaudeCodeLanguageModel.make({ options: options() })
      const response = yield* model.generateText({
        prompt: [{ role: "system", content: "Be terse." }, { role: "user", content: "hi" }]
      })
      expect(response.text).toBe("hello there")
      expect(response.finishReason).toBe("stop")
      const finish = response.content.find((part) => part.type === "finish")
      expect(finish?.metadata["claudeCode"]).toMatchObject({ costUsd: expect.any(Number), numTurns: 1 })
      const request = yield* server.waitForRequest((r) => r.isMessages && r.lastUserText === "hi")
      expect(request.systemText).toContain("Be terse.")
      // the CLI's built-in tools are off by default
      expect(request.tools).toEqual([])
    }))

  live(
    "a Toolkit tool: the model calls it, the Effect handler runs, its result reaches the model",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({
          replies: [reply(toolUse("mcp__toolkit__Add", { a: 2, b: 3 })), reply(text("the sum is 5"))]
        })
        const calls: Array<{ a: number; b: number }> = []
        const handlers = Calculator.toLayer({
          Add: (params) => Effect.sync(() => (calls.push(params), params.a + params.b))
        })
        const model = yield* ClaudeCodeLanguageModel.make({ options: options() })
        const response = yield* model.generateText({ prompt: "add 2 and 3", toolkit: Calculator }).pipe(
          Effect.provide(handlers)
        )
        expect(calls).toEqual([{ a: 2, b: 3 }])
        expect(response.text).toBe("the sum is 5")
        expect(response.toolCalls).toMatchObject([{ name: "Add", params: { a: 2, b: 3 }, providerExecuted: true }])
        expect(response.toolResults).toMatchObject([{
          name: "Add",
          result: 5,
          isFailure: false,
          providerExecuted: true
        }])
        const seen = yield* server.waitForRequest((r) => r.isMessages && r.toolResults.length > 0)
        expect(seen.toolResults).toEqual([expect.objectContaining({ content: "5", is_error: false })])
        expect(seen.tools).toContain("mcp__toolkit__Add")
        expect(seen.tools).not.toContain("Bash")
      })
  )

  live("generateObject: the CLI's structured output, decoded with the schema", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli({
        replies: [reply(toolUse("StructuredOutput", { city: "Paris", population: 2 })), reply(text("done"))]
      })
      const model = yield* ClaudeCodeLanguageModel.make({ options: options() })
      const City = Schema.Struct({ city: Schema.String, population: Schema.Number })
      const response = yield* model.generateObject({ prompt: "a city", schema: City })
      expect(response.value).toEqual({ city: "Paris", population: 2 })
    }))

  live("streamText: text deltas as they stream, then the finish part", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli({
        replies: [{ ...reply(text("streamed words here")), textDeltaChars: 5 }]
      })
      const model = yield* ClaudeCodeLanguageModel.make({ options: options() })
      const parts = Chunk.toReadonlyArray(yield* Stream.runCollect(model.streamText({ prompt: "go" })))
      const deltas = parts.flatMap((part) => part.type === "text-delta" ? [part.delta] : [])
      // the deltas of the partial messages, not the complete message at the end
      expect(deltas).toEqual(["strea", "med w", "ords ", "here"])
      expect(parts.map((part) => part.type)).toContain("text-start")
      expect(parts[parts.length - 1]?.type).toBe("finish")
    }))

  live("an API error: AiError.HttpResponseError with the status (401)", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli({ replies: [httpError(401)] })
      const model = yield* ClaudeCodeLanguageModel.make({ options: options() })
      const error = yield* Effect.flip(
        LanguageModel.generateText({ prompt: "x" }).pipe(
          Effect.provideService(LanguageModel.LanguageModel, model)
        )
      )
      expect(error._tag).toBe("HttpResponseError")
      expect(error).toMatchObject({ response: { status: 401 } })
    }))
})
