/**
 * A chat UI on Claude Code: the AI SDK's React `useChat` page (examples/chat/page.tsx, bundled by esbuild at start)
 * served with `ChatServer` on `@effect/platform`'s HTTP server. Tool calls ask for approval in the browser.
 *
 *   npm run example -- chat            offline: starts the server, chats with it as the page would (an approval
 *                                      included), prints the UI message stream, and exits
 *   npm run example -- chat --serve    keeps serving: open http://localhost:3000 (always so with an API key)
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import { NodeClaudeAgent } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { ChatServer, ChatStore } from "effect-claude-agent/ui"
import * as fs from "node:fs"
import { createServer } from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { pageRoutes } from "./_chatPage.js"
import { exampleOptions, online } from "./_offline.js"

const serve = online || process.argv.includes("--serve")
const port = serve ? Number(process.env["PORT"] ?? 3000) : 0

// Offline, the scripted model thinks, says something and runs a shell command (which the browser approves), then
// reports the command's output. Its events are 40 ms apart, so the answer streams.
const { reply, thinking, toolUse } = ScriptedModelServer
const model: ScriptedModelServer.Handler = (request) => ({
  ...(request.toolResults.length > 0
    ? reply(`The shell says: ${request.toolResults[0]?.content.trim()}`)
    : reply(
      thinking(`The user asks: "${request.lastUserText ?? ""}". A file and a listing will show it.`),
      "Let me write a file and list the directory.",
      toolUse("Bash", { command: "echo hello > hello.txt && ls -l", description: "Write hello.txt and list" })
    )),
  eventDelayMs: 40,
  textDeltaChars: 8
})

/** The chat server (the page's routes included) on `port`, for the rest of the scope; its URL. */
const startServer = Effect.gen(function*() {
  const options = yield* exampleOptions({ handler: model })
  const chats = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-chats-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  const page = yield* pageRoutes
  const context = yield* Layer.build(
    ChatServer.layer({ options, allow: ["Read"] }, page).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
      Layer.provide(ChatStore.layerFileSystem({ directory: chats })),
      Layer.provide(NodeClaudeAgent.layer),
      Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
    )
  )
  const address = (yield* HttpServer.HttpServer.pipe(Effect.provide(context))).address
  return `http://localhost:${address._tag === "TcpAddress" ? address.port : port}`
})

/** One request as `useChat` sends it; prints each chunk of the answer, returns them. */
const send = (url: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    const chunks: Array<Record<string, unknown>> = []
    for (const event of (await response.text()).split("\n\n")) {
      if (!event.startsWith("data: ") || event === "data: [DONE]") continue
      chunks.push(JSON.parse(event.slice("data: ".length)))
    }
    return chunks
  }).pipe(Effect.tap((chunks) => Effect.forEach(chunks, (chunk) => Console.log(line(chunk)))))

const line = (chunk: Record<string, unknown>): string => {
  const { type, ...rest } = chunk
  const detail = JSON.stringify(rest)
  return `  ${String(type).padEnd(22)} ${detail.length > 90 ? `${detail.slice(0, 89)}…` : detail}`
}

const program = Effect.gen(function*() {
  const url = yield* startServer
  if (serve) {
    yield* Console.log(`chat on ${url} (Ctrl-C to stop)`)
    return yield* Effect.never
  }

  // Offline: be the page. Send a message; the answer stops at an approval request, which we approve.
  const user = { id: "u1", role: "user", parts: [{ type: "text", text: "Say hello using the shell" }] }
  yield* Console.log(`POST ${url}/api/chat (a user message)`)
  const first = yield* send(url, { id: "example", messages: [user], trigger: "submit-message" })
  const request = first.find((c) => c["type"] === "tool-approval-request")
  if (request === undefined) return yield* Effect.die(new Error("no approval request"))

  yield* Console.log(`POST ${url}/api/chat (the approval, as addToolApprovalResponse sends it)`)
  const assistant = {
    id: String(first[0]?.["messageId"]),
    role: "assistant",
    parts: [{
      type: "dynamic-tool",
      toolName: "Bash",
      toolCallId: request["toolCallId"],
      state: "approval-responded",
      input: {},
      approval: { id: request["approvalId"], approved: true }
    }]
  }
  yield* send(url, { id: "example", messages: [user, assistant], trigger: "submit-message" })

  const history = yield* Effect.promise(() =>
    fetch(`${url}/api/chats/example`).then((r) => r.json() as Promise<{ messages: Array<{ role: string }> }>)
  )
  yield* Console.log(`GET ${url}/api/chats/example: ${history.messages.map((m) => m.role).join(", ")}`)
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
