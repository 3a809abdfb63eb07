/**
 * Stream an agent's partial output to a browser: a small `node:http` server runs one query per request with
 * `includePartialMessages`, turns the partial messages into UI events (`PartialMessages.assemble`: text and
 * thinking deltas, tool input as it streams, tool output, …) and sends them as server-sent events.
 *
 *   npm run example -- ui-streaming            offline: starts the server, connects to it itself, prints the events
 *   npm run example -- ui-streaming --serve    keeps serving: open http://localhost:3000 (always so with an API key)
 *
 * When the browser goes away mid-answer, the request's fiber is interrupted and the CLI is reaped.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Fiber, Runtime, Stream } from "effect"
import { ClaudeAgent, NodeClaudeAgent, PartialMessages, type Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as http from "node:http"
import { exampleOptions, online } from "./_offline.js"

const serve = online || process.argv.includes("--serve")
const port = serve ? Number(process.env["PORT"] ?? 3000) : 0 // 0: any free port

// Offline, the scripted model thinks, says something, runs a shell command, then answers with its output. Each SSE
// event of its replies is 30 ms apart, so the answer streams.
const { reply, thinking, toolUse } = ScriptedModelServer
const model: ScriptedModelServer.Handler = (request) => ({
  ...(request.toolResults.length > 0
    ? reply(`The shell says "${request.toolResults[0]?.content.trim()}". Anything else?`)
    : reply(thinking("The shell can greet."), "Let me ask the shell.", toolUse("Bash", { command: "echo hello" }))),
  eventDelayMs: 30
})

const page = `<!doctype html><meta charset="utf-8"><title>agent</title>
<form><input name="prompt" value="Say hello using the shell" size="50"><button>Ask</button></form><pre id="out"></pre>
<script>
document.querySelector("form").onsubmit = (submit) => {
  submit.preventDefault()
  const out = document.querySelector("#out"), add = (text) => (out.textContent += text)
  out.textContent = ""
  const source = new EventSource("/chat?prompt=" + encodeURIComponent(submit.target.prompt.value))
  source.onerror = () => source.close() // or EventSource reconnects, asking again
  source.onmessage = (message) => {
    const event = JSON.parse(message.data)
    if (event.type === "text-delta") add(event.delta)
    if (event.type === "tool-input-available") add("\\n[" + event.toolName + " " + JSON.stringify(event.input))
    if (event.type === "tool-output-available") add(" → " + event.text.trim() + "]\\n")
    if (event.type === "done") source.close()
  }
}
</script>`

const program = Effect.gen(function*() {
  const options = yield* exampleOptions({ handler: model })

  /** One chat request: the query's UI events, written as SSE `data:` lines, then a `done` event. */
  const chat = (prompt: string, res: http.ServerResponse) =>
    ClaudeAgent.query(prompt, { ...options, includePartialMessages: true, allowedTools: ["Bash(echo:*)"] }).pipe(
      PartialMessages.assemble,
      Stream.runForEach((event) => Effect.sync(() => res.write(`data: ${JSON.stringify(event)}\n\n`))),
      Effect.catchAll((error) => Effect.sync(() => res.write(`data: ${JSON.stringify({ type: "error", error })}\n\n`))),
      Effect.ensuring(Effect.sync(() => res.end(`data: {"type":"done"}\n\n`)))
    )

  // request handlers are callbacks: run their Effects with this program's runtime (and its Transport)
  const runFork = Runtime.runFork(yield* Effect.runtime<Transport.Transport>())
  const server = yield* Effect.acquireRelease(
    Effect.async<http.Server>((resume) => {
      const server = http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://localhost")
        if (url.pathname !== "/chat") return void res.writeHead(200, { "content-type": "text/html" }).end(page)
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        const fiber = runFork(chat(url.searchParams.get("prompt") ?? "hello", res))
        // the browser left (or the answer is complete): interrupting stops the query and reaps its CLI
        res.on("close", () => runFork(Fiber.interrupt(fiber)))
      })
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)).closeAllConnections())
  )
  const address = server.address()
  const url = `http://localhost:${typeof address === "object" && address !== null ? address.port : port}`

  if (serve) {
    yield* Console.log(`serving on ${url} (Ctrl-C to stop)`)
    return yield* Effect.never
  }

  // Offline: be the browser. Read the SSE stream and print one line per event.
  yield* Console.log(`GET ${url}/chat?prompt=…`)
  const prompt = encodeURIComponent("Say hello using the shell")
  const response = yield* Effect.promise(() => fetch(`${url}/chat?prompt=${prompt}`))
  yield* Stream.fromReadableStream(() => response.body!, (error) => error).pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.filter((line) => line.startsWith("data: ")),
    Stream.map((line): Record<string, unknown> => JSON.parse(line.slice("data: ".length))),
    Stream.runForEach((event) => Console.log(`${String(event["type"]).padEnd(22)} ${summary(event)}`))
  )
})

/** The interesting field of each UI event, for printing. */
const summary = (event: Record<string, unknown>): string => {
  const pick = (key: string) => JSON.stringify(event[key])
  switch (event["type"]) {
    case "text-delta":
    case "thinking-delta":
    case "tool-input-delta":
      return pick("delta")
    case "tool-input-start":
      return pick("toolName")
    case "tool-input-available":
      return `${event["toolName"]} ${pick("input")}`
    case "tool-output-available":
      return pick("text")
    case "message-finish":
      return `stop: ${event["stopReason"]}`
    case "error":
      return pick("error")
    default:
      return ""
  }
}

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
