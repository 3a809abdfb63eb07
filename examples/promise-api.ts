/**
 * The Promise API, for code that does not use Effect: the official `@anthropic-ai/claude-agent-sdk` names and
 * shapes (`startup` / `query`, `canUseTool`, `tool`, `createSdkMcpServer`), with this SDK's guarantees underneath.
 *
 *   npm run example -- promise-api
 */
import * as z from "zod"
import { createSdkMcpServer, type PermissionResult, startup, tool } from "effect-claude-agent/promise"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptionsAsync } from "./_offline.js"

const { reply, toolUse } = ScriptedModelServer

// An in-process MCP tool with a zod schema, exactly as with the official SDK.
const rates: Record<string, number> = { EUR: 0.92, GBP: 0.79, JPY: 151.2 }
const convert = tool(
  "convert",
  "Converts an amount of US dollars to another currency",
  { amount: z.number().positive(), to: z.enum(["EUR", "GBP", "JPY"]) },
  async ({ amount, to }) => ({
    content: [{ type: "text", text: `${amount} USD = ${(amount * rates[to]!).toFixed(2)} ${to}` }]
  })
)
// (`alwaysLoad`: show the model the tool's schema up front instead of behind the CLI's ToolSearch tool)
const fx = createSdkMcpServer({ name: "fx", version: "1.0.0", tools: [convert], alwaysLoad: true })

// The permission callback: allow our own tool, refuse everything else (a callback that throws or hangs is a deny).
const canUseTool = async (toolName: string, input: Record<string, unknown>): Promise<PermissionResult> => {
  console.log(`[canUseTool] ${toolName} ${JSON.stringify(input)}`)
  return toolName === "mcp__fx__convert"
    ? { behavior: "allow", updatedInput: input }
    : { behavior: "deny", message: "only currency conversion is allowed" }
}

// Offline: the scripted model tries a shell command (refused), then converts; the default handler then answers
// with the tool's output ("tool said: …").
const { options, close } = await exampleOptionsAsync([
  reply(toolUse("Bash", { command: "curl https://api.exchangerate.host/latest", description: "fetch rates" })),
  reply(toolUse("mcp__fx__convert", { amount: 250, to: "EUR" }))
])

try {
  // Start the CLI ahead of the prompt (spawn and initialize); `query({ prompt, options })` does both at once.
  const warm = await startup({ options: { ...options, mcpServers: { fx }, canUseTool } })
  for await (const message of warm.query("How much is 250 USD in euros?")) {
    if (message.type === "assistant") {
      for (const block of message.message.content) {
        if (block.type === "tool_use") console.log(`[tool call]  ${block.name} ${JSON.stringify(block.input)}`)
      }
    }
    if (message.type === "result") {
      console.log(`\n${message.subtype === "success" ? message.result : message.subtype}`)
      console.log(`denied: ${message.permission_denials.map((d) => d.tool_name).join(", ") || "nothing"}`)
    }
  }
} finally {
  await close()
}
