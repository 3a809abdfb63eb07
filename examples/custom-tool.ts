/**
 * A custom tool, in-process: an Effect handler with an Effect Schema for its input, served to the CLI as an MCP
 * server. The handler runs in your process, with your services; the model's arguments are validated by the schema.
 *
 *   npm run example -- custom-tool
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Context, Effect, Layer, Schema, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent, SdkMcp } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

const { reply, toolUse } = ScriptedModelServer

// An application service the tool uses (a database in real life).
class Inventory extends Context.Tag("Inventory")<Inventory, {
  readonly stock: (sku: string) => Effect.Effect<number>
}>() {}

const InventoryLive = Layer.succeed(Inventory, {
  stock: (sku) => Effect.succeed(sku === "ABC-123" ? 42 : 0)
})

// The tool: its input schema becomes the JSON Schema the model sees; its handler gets the decoded input.
const stockLevel = SdkMcp.tool(
  "stock_level",
  "How many units of a product are in stock",
  Schema.Struct({
    sku: Schema.String.pipe(Schema.pattern(/^[A-Z]{3}-\d{3}$/)).annotations({ description: "a SKU like ABC-123" }),
    warehouse: Schema.optional(Schema.Literal("north", "south"))
  }),
  ({ sku, warehouse = "north" }) =>
    Effect.gen(function*() {
      const units = yield* Inventory.pipe(Effect.flatMap((inventory) => inventory.stock(sku)))
      return `${units} units of ${sku} in the ${warehouse} warehouse`
    }),
  { annotations: { readOnlyHint: true } }
)

// Offline: the scripted model first sends an invalid SKU (the schema rejects it and the model is told why),
// then a valid one; the default handler then answers with the tool's output ("tool said: …").
const script = [
  reply(toolUse("mcp__inventory__stock_level", { sku: "abc123" })),
  reply(toolUse("mcp__inventory__stock_level", { sku: "ABC-123", warehouse: "north" }))
]

const program = Effect.gen(function*() {
  const options = yield* exampleOptions(script)
  // an Effect: it captures the services the tools need (here Inventory)
  const inventory = yield* SdkMcp.createSdkMcpServer({
    name: "inventory",
    tools: [stockLevel],
    // the CLI hides MCP tools behind its ToolSearch tool unless they are always loaded; a small server can be
    alwaysLoad: true
  })

  yield* ClaudeAgent.query("How many ABC-123 do we have in stock?", {
    ...options,
    mcpServers: { inventory },
    // tools of a server named "inventory" are called mcp__inventory__<tool>; allow ours without asking
    allowedTools: ["mcp__inventory__stock_level"]
  }).pipe(
    Stream.runForEach((message) => {
      switch (message.type) {
        case "assistant":
          return Effect.forEach(
            Message.toolUses(message),
            (call) => Console.log(`[call]   ${call.name} ${JSON.stringify(call.input)}`)
          )
        case "user":
          return Effect.forEach(
            Message.toolResults(message),
            (r) => Console.log(`[result] ${r.is_error === true ? "(error) " : ""}${Message.toolResultText(r)}`)
          )
        case "result":
          return Console.log(`\nanswer: ${message.subtype === "success" ? message.result : message.subtype}`)
        default:
          return Effect.void
      }
    })
  )
})

program.pipe(Effect.scoped, Effect.provide(InventoryLive), Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
