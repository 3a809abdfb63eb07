#!/usr/bin/env node
// A tiny external MCP server over stdio, written with the MCP SDK, used by examples/external-mcp.ts.
// `node examples/notes-mcp-server.mjs` serves two tools, `add_note` and `list_notes`, keeping notes in memory.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as z from "zod"

const notes = []
const text = (t) => ({ content: [{ type: "text", text: t }] })

const server = new McpServer({ name: "notes", version: "1.0.0" })

server.registerTool(
  "add_note",
  { description: "Saves a note", inputSchema: { text: z.string().min(1), tag: z.string().optional() } },
  async ({ text: note, tag }) => {
    notes.push({ note, tag })
    return text(`saved note #${notes.length}`)
  }
)

server.registerTool(
  "list_notes",
  { description: "Lists the saved notes, optionally by tag", inputSchema: { tag: z.string().optional() } },
  async ({ tag }) => {
    const found = notes.map((n, i) => ({ ...n, id: i + 1 })).filter((n) => tag === undefined || n.tag === tag)
    return text(found.length === 0 ? "no notes" : found.map((n) => `#${n.id} ${n.note}`).join("; "))
  }
)

// stdout is the protocol channel: log to stderr only
await server.connect(new StdioServerTransport())
console.error("notes MCP server ready")
