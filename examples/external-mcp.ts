/**
 * An external MCP server: the CLI starts it (stdio) and the model calls its tools. Here it is a tiny server written
 * with `@modelcontextprotocol/sdk` (`examples/notes-mcp-server.mjs`), run with `node`; any stdio, HTTP or SSE MCP
 * server is configured the same way.
 *
 *   npm run example -- external-mcp
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as path from "node:path"
import { exampleOptions } from "./_offline.js"

const { reply, toolUse } = ScriptedModelServer

// Offline: the scripted model saves two notes, then lists the tagged ones; the default handler then answers with
// the last tool output ("tool said: …").
const script = [
  reply(toolUse("mcp__notes__add_note", { text: "buy milk", tag: "home" })),
  reply(toolUse("mcp__notes__add_note", { text: "ship v1", tag: "work" })),
  reply(toolUse("mcp__notes__list_notes", { tag: "work" }))
]

const program = Effect.gen(function*() {
  const options = yield* exampleOptions(script)
  yield* ClaudeAgent.query("Note 'buy milk' (tag home) and 'ship v1' (tag work), then list my work notes.", {
    ...options,
    mcpServers: {
      // the key ("notes") names the tools: mcp__notes__add_note, mcp__notes__list_notes
      notes: {
        type: "stdio",
        command: process.execPath, // node
        args: [path.join(import.meta.dirname, "notes-mcp-server.mjs")],
        alwaysLoad: true // show the model the tools' schemas up front (instead of behind ToolSearch)
      }
    },
    strictMcpConfig: true, // only the servers given here (ignore .mcp.json and user settings)
    allowedTools: ["mcp__notes"] // every tool of the server, without asking
  }).pipe(
    Stream.runForEach((message) => {
      if (Message.isSystemInit(message)) {
        return Console.log(
          `MCP servers: ${message.mcp_servers.map((s) => `${s.name} (${s.status})`).join(", ")}\n` +
            `their tools: ${message.tools.filter((t) => t.startsWith("mcp__")).join(", ")}`
        )
      }
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

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
