/**
 * Claude Code behind @effect/ai: a program written only against `LanguageModel` and a `Toolkit` runs on Claude Code
 * by providing `ClaudeCodeLanguageModel.layer`. The toolkit is served to the CLI as an in-process MCP server, so the
 * CLI's agent loop calls the Effect handler below (in this process, with its services); the call and its result come
 * back in the response as `tool-call` / `tool-result` parts marked `providerExecuted`.
 *
 *   npm run example -- effect-ai
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer, Schema, Stream } from "effect"
import { NodeClaudeAgent } from "effect-claude-agent"
import { ClaudeCodeLanguageModel } from "effect-claude-agent/ai"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

// --- the app: written against @effect/ai only --------------------------------------------------------------------

const GetStock = Tool.make("GetStock", {
  description: "How many units of a product are in stock",
  parameters: { sku: Schema.String.annotations({ description: "the product's SKU" }) },
  success: Schema.Struct({ sku: Schema.String, units: Schema.Number })
})

const Inventory = Toolkit.make(GetStock)

const stock: Record<string, number> = { "MUG-01": 12, "CAP-07": 0 }

const InventoryLive = Inventory.toLayer({
  GetStock: ({ sku }) => Effect.log(`GetStock(${sku}) runs in the app`).pipe(Effect.as({ sku, units: stock[sku] ?? 0 }))
})

const Restock = Schema.Struct({
  sku: Schema.String,
  order: Schema.Number.annotations({ description: "units to order" })
})

const app = Effect.gen(function*() {
  // a tool call served to the CLI, then the answer
  const answer = yield* LanguageModel.generateText({
    prompt: [
      { role: "system", content: "You are a terse inventory assistant." },
      { role: "user", content: "Is CAP-07 in stock?" }
    ],
    toolkit: Inventory
  })
  for (const call of answer.toolCalls) yield* Console.log(`tool call: ${call.name}(${JSON.stringify(call.params)})`)
  for (const result of answer.toolResults) yield* Console.log(`tool result: ${JSON.stringify(result.result)}`)
  yield* Console.log(`answer: ${answer.text}`)

  // structured output
  const restock = yield* LanguageModel.generateObject({ prompt: "Restock CAP-07 to 20 units.", schema: Restock })
  yield* Console.log(`restock: ${JSON.stringify(restock.value)}`)

  // streaming
  yield* LanguageModel.streamText({ prompt: "Say thanks." }).pipe(
    Stream.runForEach((part) => part.type === "text-delta" ? Console.log(`delta: ${part.delta}`) : Effect.void)
  )
})

// --- wiring: one Layer puts Claude Code behind LanguageModel -----------------------------------------------------

// Offline, the scripted model calls the tool, answers with its result, then answers the next two calls.
const script = [
  ScriptedModelServer.reply(ScriptedModelServer.toolUse("mcp__toolkit__GetStock", { sku: "CAP-07" })),
  ScriptedModelServer.reply(ScriptedModelServer.text("CAP-07 is out of stock (0 units).")),
  ScriptedModelServer.reply(ScriptedModelServer.toolUse("StructuredOutput", { sku: "CAP-07", order: 20 })),
  { ...ScriptedModelServer.reply(ScriptedModelServer.text("Thanks for checking!")), textDeltaChars: 8 }
]

const program = Effect.gen(function*() {
  const options = yield* exampleOptions(script)
  const ClaudeCode = ClaudeCodeLanguageModel.layer({ options }).pipe(Layer.provide(NodeClaudeAgent.layer))
  yield* app.pipe(Effect.provide(Layer.merge(ClaudeCode, InventoryLive)))
})

NodeRuntime.runMain(Effect.scoped(program))
