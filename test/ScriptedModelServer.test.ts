import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Readline from "node:readline"
import * as Zlib from "node:zlib"
import * as ScriptedModelServer from "../src/ScriptedModelServer.js"

const CLI = Path.resolve(import.meta.dirname, "../node_modules/@anthropic-ai/claude-code-linux-x64/claude")

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const record = (u: unknown): Record<string, unknown> => {
  if (!isRecord(u)) throw new Error(`expected an object, got ${JSON.stringify(u)}`)
  return u
}

const array = (u: unknown): ReadonlyArray<unknown> => {
  if (!Array.isArray(u)) throw new Error(`expected an array, got ${JSON.stringify(u)}`)
  return u
}

interface SseEvent {
  readonly event: string
  readonly data: Record<string, unknown>
}

/** Strict SSE parser: every frame must be exactly `event: <type>\ndata: <json>\n\n`. */
const parseSse = (body: string): Array<SseEvent> => {
  if (body.length === 0) return []
  expect(body.endsWith("\n\n")).toBe(true)
  return body.slice(0, -2).split("\n\n").map((frame) => {
    const match = /^event: ([a-z_]+)\ndata: (.+)$/.exec(frame)
    if (match === null || match[1] === undefined || match[2] === undefined) throw new Error(`bad frame ${frame}`)
    const data = record(JSON.parse(match[2]))
    expect(data.type).toBe(match[1])
    return { event: match[1], data }
  })
}

const completeFrames = (body: string): string => body.slice(0, body.lastIndexOf("\n\n") + 2)

const userMessage = (...content: ReadonlyArray<unknown>) => ({ role: "user", content })
const textBlock = (text: string) => ({ type: "text", text })
const reminder = textBlock("<system-reminder>\nsome context\n</system-reminder>\n")

const messagesBody = (messages: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  model: "claude-test-1",
  max_tokens: 1000,
  stream: true,
  system: [textBlock("x-anthropic-billing-header: test;"), textBlock("You are a test.")],
  tools: [{ name: "Bash", input_schema: {} }, { name: "Read", input_schema: {} }],
  messages,
  ...extra
})

const post = (server: ScriptedModelServer.ScriptedModelServer, body: unknown, path = "/v1/messages?beta=true") =>
  Effect.promise(() =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-test" },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
  )

const postText = (server: ScriptedModelServer.ScriptedModelServer, body: unknown, path?: string) =>
  Effect.flatMap(
    post(server, body, path),
    (response) => Effect.promise(async () => ({ response, text: await response.text() }))
  )

/** The assistant text of a non-streaming reply. */
const replyText = (server: ScriptedModelServer.ScriptedModelServer, messages: ReadonlyArray<unknown>) =>
  Effect.map(postText(server, messagesBody(messages, { stream: false })), ({ text }) => {
    const content = array(record(JSON.parse(text)).content)
    return content.map((block) => String(record(block).text ?? JSON.stringify(record(block)))).join("")
  })

/** Reads a body to its end or to the first error, keeping what arrived. */
const readPartial = (response: Response) =>
  Effect.promise(async () => {
    const reader = response.body?.getReader()
    const decoder = new TextDecoder()
    let text = ""
    let failed = false
    if (reader !== undefined) {
      try {
        for (;;) {
          const chunk = await reader.read()
          if (chunk.done) break
          text += decoder.decode(chunk.value, { stream: true })
        }
      } catch {
        failed = true
      }
    }
    return { text, failed }
  })

const settle = <A>(promise: Promise<A>) =>
  Effect.promise(() =>
    promise.then((value) => ({ ok: true, value }) as const, (error: unknown) => ({ ok: false, error }) as const)
  )

// -------------------------------------------------------------------------------------------------
// unit tests against the HTTP API
// -------------------------------------------------------------------------------------------------

describe("ScriptedModelServer", () => {
  it.scopedLive("streams text, thinking and tool_use as Anthropic SSE", () =>
    Effect.gen(function*() {
      const input = { command: "touch x && echo 'quoted \"text\"' && echo €", nested: { list: [1, 2, 3] } }
      const server = yield* ScriptedModelServer.make({
        replies: [
          ScriptedModelServer.reply(
            ScriptedModelServer.thinking("let me think"),
            ScriptedModelServer.text("Calling Bash."),
            ScriptedModelServer.toolUse("Bash", input)
          )
        ]
      })
      const { response, text } = yield* postText(server, messagesBody([userMessage(textBlock("go"))]))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("text/event-stream")
      const events = parseSse(text)
      expect(events.map((e) => e.event)).toStrictEqual([
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop"
      ])
      const message = record(events[0]?.data.message)
      expect(message.model).toBe("claude-test-1")
      expect(message.role).toBe("assistant")
      const deltas = events.filter((e) => e.event === "content_block_delta").map((e) => record(e.data.delta))
      expect(deltas.map((d) => d.type)).toStrictEqual([
        "thinking_delta",
        "signature_delta",
        "text_delta",
        "input_json_delta",
        "input_json_delta",
        "input_json_delta"
      ])
      expect(deltas[0]?.thinking).toBe("let me think")
      expect(deltas[2]?.text).toBe("Calling Bash.")
      const fragments = deltas.filter((d) => d.type === "input_json_delta").map((d) => String(d.partial_json))
      expect(fragments.every((f) => f.length > 0)).toBe(true)
      expect(JSON.parse(fragments.join(""))).toStrictEqual(input)
      const toolStart = record(events[8]?.data.content_block)
      expect(toolStart).toStrictEqual({ type: "tool_use", id: "toolu_sms_0_2", name: "Bash", input: {} })
      expect(events[8]?.data.index).toBe(2)
      const messageDelta = events[13]?.data
      expect(record(messageDelta?.delta).stop_reason).toBe("tool_use")
      expect(record(messageDelta?.usage).input_tokens).toBe(10)
    }))

  it.scopedLive("answers non-streaming requests with one JSON message", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({
        replies: [{
          ...ScriptedModelServer.reply("hello", ScriptedModelServer.toolUse("Read", { file_path: "/x" }, { id: "t1" })),
          stopReason: "end_turn",
          usage: { input_tokens: 42, output_tokens: 7 },
          model: "claude-other"
        }]
      })
      const body = messagesBody([userMessage(textBlock("go"))], { stream: false })
      const { response, text } = yield* postText(server, body)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("application/json")
      expect(JSON.parse(text)).toStrictEqual({
        id: "msg_sms_0",
        type: "message",
        role: "assistant",
        model: "claude-other",
        content: [
          { type: "text", text: "hello" },
          { type: "tool_use", id: "t1", name: "Read", input: { file_path: "/x" } }
        ],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 42, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
      })
    }))

  it.scopedLive("answers scripted HTTP errors with an Anthropic error body", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      yield* server.addReplies(
        ScriptedModelServer.httpError(529),
        ScriptedModelServer.httpError(429, { retryAfter: 3 }),
        ScriptedModelServer.httpError(400, { message: "bad things", headers: { "x-should-retry": "false" } })
      )
      const body = messagesBody([userMessage(textBlock("SAY hi"))])
      const overloaded = yield* postText(server, body)
      expect(overloaded.response.status).toBe(529)
      expect(JSON.parse(overloaded.text)).toStrictEqual({
        type: "error",
        error: { type: "overloaded_error", message: "scripted 529 error" }
      })
      const limited = yield* postText(server, body)
      expect(limited.response.status).toBe(429)
      expect(limited.response.headers.get("retry-after")).toBe("3")
      expect(record(JSON.parse(limited.text)).error).toStrictEqual({
        type: "rate_limit_error",
        message: "scripted 429 error"
      })
      const invalid = yield* postText(server, body)
      expect(invalid.response.status).toBe(400)
      expect(invalid.response.headers.get("x-should-retry")).toBe("false")
      expect(record(JSON.parse(invalid.text)).error).toStrictEqual({
        type: "invalid_request_error",
        message: "bad things"
      })
      // the queue is exhausted: back to the default handler
      const after = yield* postText(server, body)
      expect(after.response.status).toBe(200)
      expect(parseSse(after.text).some((e) => isRecord(e.data.delta) && e.data.delta.text === "hi")).toBe(true)
    }))

  it.scopedLive("answers other routes with 404 and records them", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const models = yield* Effect.promise(() => fetch(`${server.url}/v1/models`))
      expect(models.status).toBe(404)
      expect(yield* Effect.promise(() => models.json())).toStrictEqual({
        type: "error",
        error: { type: "not_found_error", message: "ScriptedModelServer: no route for GET /v1/models" }
      })
      const count = yield* postText(server, { messages: [] }, "/v1/messages/count_tokens?beta=true")
      expect(count.response.status).toBe(404)
      const notJson = yield* postText(server, "not json")
      expect(notJson.response.status).toBe(400)
      const requests = yield* server.requests
      expect(requests.map((r) => [r.method, r.path, r.isMessages])).toStrictEqual([
        ["GET", "/v1/models", false],
        ["POST", "/v1/messages/count_tokens?beta=true", false],
        ["POST", "/v1/messages?beta=true", true]
      ])
      expect(requests[2]?.body).toBe("not json")
    }))

  it.scopedLive("records requests with derived fields", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const messages = [
        userMessage(reminder, textBlock("SAY first")),
        { role: "system", content: [textBlock("# Environment")] },
        { role: "assistant", content: [textBlock("first")] },
        userMessage(textBlock("TOOL Bash {\"command\":\"ls\"}")),
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }] },
        userMessage(
          { type: "tool_result", tool_use_id: "toolu_1", content: [textBlock("a.txt"), textBlock("b.txt")] },
          { type: "tool_result", tool_use_id: "toolu_2", content: "boom", is_error: true }
        )
      ]
      yield* post(server, messagesBody(messages))
      const [request] = yield* server.requests
      expect(request).toBeDefined()
      if (request === undefined) return
      expect(request.index).toBe(0)
      expect(request.method).toBe("POST")
      expect(request.path).toBe("/v1/messages?beta=true")
      expect(request.headers["x-api-key"]).toBe("sk-test")
      expect(request.model).toBe("claude-test-1")
      expect(request.stream).toBe(true)
      expect(request.maxTokens).toBe(1000)
      expect(request.isProbe).toBe(false)
      expect(request.systemText).toBe("x-anthropic-billing-header: test;\nYou are a test.")
      expect(request.tools).toStrictEqual(["Bash", "Read"])
      expect(request.messages.map((m) => m.role)).toStrictEqual([
        "user",
        "system",
        "assistant",
        "user",
        "assistant",
        "user"
      ])
      expect(request.lastUserText).toBe("TOOL Bash {\"command\":\"ls\"}")
      expect(request.toolResults).toStrictEqual([
        { tool_use_id: "toolu_1", content: "a.txt\nb.txt", is_error: false },
        { tool_use_id: "toolu_2", content: "boom", is_error: true }
      ])
      expect(request.userPrompts).toStrictEqual(["SAY first", "TOOL Bash {\"command\":\"ls\"}"])
    }))

  it.scopedLive("decodes gzip request bodies", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const body = Zlib.gzipSync(JSON.stringify(messagesBody([userMessage(textBlock("SAY zipped"))])))
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/messages`, { method: "POST", headers: { "content-encoding": "gzip" }, body })
      )
      const events = parseSse(yield* Effect.promise(() => response.text()))
      expect(events.some((e) => isRecord(e.data.delta) && e.data.delta.text === "zipped")).toBe(true)
      expect((yield* server.requests)[0]?.lastUserText).toBe("SAY zipped")
    }))

  it.scopedLive("default handler: SAY, HISTORY, TOOL, tool results and ok", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      expect(yield* replyText(server, [userMessage(reminder, textBlock("SAY hello  world"))])).toBe("hello  world")
      expect(yield* replyText(server, [{ role: "user", content: "SAY plain string" }])).toBe("plain string")
      expect(
        yield* replyText(server, [
          userMessage(reminder, textBlock("SAY first")),
          { role: "system", content: [textBlock("env")] },
          { role: "assistant", content: [textBlock("first")] },
          userMessage(textBlock("HISTORY"))
        ])
      ).toBe("4 messages; user prompts: SAY first | HISTORY")
      const tool = yield* postText(
        server,
        messagesBody([userMessage(textBlock("TOOL Bash {\"command\":\"echo hi\"}"))], { stream: false })
      )
      const toolMessage = record(JSON.parse(tool.text))
      expect(toolMessage.stop_reason).toBe("tool_use")
      expect(array(toolMessage.content)[0]).toStrictEqual({
        type: "tool_use",
        id: "toolu_sms_3_0",
        name: "Bash",
        input: { command: "echo hi" }
      })
      const long = "x".repeat(300)
      expect(
        yield* replyText(server, [
          userMessage(textBlock("TOOL Bash {\"command\":\"echo hi\"}")),
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_sms_3_0", name: "Bash", input: {} }] },
          userMessage({ type: "tool_result", tool_use_id: "toolu_sms_3_0", content: long })
        ])
      ).toBe(`tool said: ${"x".repeat(200)}`)
      expect(yield* replyText(server, [userMessage(textBlock("what is this?"))])).toBe("ok")
    }))

  it.scopedLive("replies: queue, addReplies, setHandler, script, probes", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({ replies: [ScriptedModelServer.reply("one")] })
      const ask = (text: string) => replyText(server, [userMessage(textBlock(text))])
      expect(yield* ask("SAY default")).toBe("one")
      expect(yield* ask("SAY default")).toBe("default")
      yield* server.addReplies(ScriptedModelServer.reply("two"), ScriptedModelServer.reply("three"))
      // a probe (non-streaming, max_tokens 1) never takes a queued reply
      const probe = yield* postText(
        server,
        { model: "claude-haiku-4-5", max_tokens: 1, messages: [userMessage(textBlock("Hi"))] }
      )
      expect(array(record(JSON.parse(probe.text)).content)).toStrictEqual([{ type: "text", text: "ok" }])
      expect(yield* ask("x")).toBe("two")
      yield* server.setHandler((request) =>
        Effect.succeed(ScriptedModelServer.reply(`handled ${request.lastUserText ?? ""}`))
      )
      expect(yield* ask("x")).toBe("three")
      expect(yield* ask("y")).toBe("handled y")
      yield* server.setHandler(ScriptedModelServer.script([ScriptedModelServer.reply("scripted")]))
      expect(yield* ask("SAY z")).toBe("scripted")
      expect(yield* ask("SAY z")).toBe("z")
      yield* server.setHandler(() => Effect.die("handler exploded"))
      const failed = yield* postText(server, messagesBody([userMessage(textBlock("x"))]))
      expect(failed.response.status).toBe(500)
      expect(record(record(JSON.parse(failed.text)).error).type).toBe("api_error")
      yield* server.setHandler(undefined)
      expect(yield* ask("SAY back")).toBe("back")
      const requests = yield* server.requests
      expect(requests.filter((r) => r.isProbe).map((r) => r.index)).toStrictEqual([2])
    }))

  it.scopedLive("disconnectAfterEvents destroys the socket mid-stream", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({
        replies: [ScriptedModelServer.disconnectAfter(3, ScriptedModelServer.reply("abc", "def"))]
      })
      const response = yield* post(server, messagesBody([userMessage(textBlock("go"))]))
      expect(response.status).toBe(200)
      const { failed, text } = yield* readPartial(response)
      expect(failed).toBe(true)
      expect(parseSse(completeFrames(text)).map((e) => e.event)).toStrictEqual([
        "message_start",
        "content_block_start",
        "content_block_delta"
      ])
    }))

  it.scopedLive("delayMs and eventDelayMs slow the reply down", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({
        replies: [{ ...ScriptedModelServer.reply("slow"), delayMs: 150, eventDelayMs: 20 }]
      })
      const started = Date.now()
      const { text } = yield* postText(server, messagesBody([userMessage(textBlock("go"))]))
      const events = parseSse(text)
      expect(events).toHaveLength(6)
      expect(Date.now() - started).toBeGreaterThanOrEqual(150 + 5 * 20 - 10)
    }))

  it.scopedLive("stall sends nothing, then drops the connection", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({
        replies: [ScriptedModelServer.stall(), ScriptedModelServer.stall(150)]
      })
      const body = JSON.stringify(messagesBody([userMessage(textBlock("go"))]))
      const aborted = yield* settle(
        fetch(`${server.url}/v1/messages`, { method: "POST", body, signal: AbortSignal.timeout(300) })
      )
      expect(aborted.ok).toBe(false)
      const started = Date.now()
      const dropped = yield* settle(fetch(`${server.url}/v1/messages`, { method: "POST", body }))
      expect(dropped.ok).toBe(false)
      expect(Date.now() - started).toBeGreaterThanOrEqual(140)
      expect((yield* server.requests).length).toBe(2)
    }))

  it.live("closing the scope ends stalled replies, closes the port and removes temp dirs", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* ScriptedModelServer.make({ replies: [ScriptedModelServer.stall()] }).pipe(
        Scope.extend(scope)
      )
      const env = server.env()
      const fresh = server.env({ freshHome: true })
      const home = env.HOME ?? ""
      expect(Fs.existsSync(Path.join(home, ".claude"))).toBe(true)
      expect(fresh.HOME).not.toBe(home)
      const pending = fetch(`${server.url}/v1/messages`, {
        method: "POST",
        body: JSON.stringify(messagesBody([userMessage(textBlock("go"))]))
      }).then(() => "answered", () => "failed")
      yield* server.waitForRequest((r) => r.isMessages, { timeout: "5 seconds" })
      const waiter = yield* Effect.fork(server.waitForRequest(() => false, { timeout: "30 seconds" }))
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      expect(yield* Effect.promise(() => pending)).toBe("failed")
      expect(Date.now() - started).toBeLessThan(2_000)
      const error = yield* Effect.flip(Fiber.join(waiter))
      expect(ScriptedModelServer.isScriptedModelServerError(error)).toBe(true)
      expect(error.reason).toBe("Closed")
      const refused = yield* settle(fetch(`${server.url}/v1/models`))
      expect(refused.ok).toBe(false)
      expect(Fs.existsSync(home)).toBe(false)
      expect(Fs.existsSync(fresh.HOME ?? "")).toBe(false)
    }))

  it.scopedLive("waitForRequest and requestStream see past and live requests; timeouts fail typed", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      yield* replyText(server, [userMessage(textBlock("SAY one"))])
      const past = yield* server.waitForRequest((r) => r.lastUserText === "SAY one")
      expect(past.index).toBe(0)
      const live = yield* Effect.fork(server.waitForRequest((r) => r.lastUserText === "SAY two"))
      const streamed = yield* Effect.fork(server.requestStream.pipe(Stream.take(3), Stream.runCollect))
      yield* Effect.sleep("20 millis")
      yield* replyText(server, [userMessage(textBlock("SAY two"))])
      yield* replyText(server, [userMessage(textBlock("SAY three"))])
      expect((yield* Fiber.join(live)).index).toBe(1)
      expect(Array.from(yield* Fiber.join(streamed)).map((r) => r.lastUserText)).toStrictEqual([
        "SAY one",
        "SAY two",
        "SAY three"
      ])
      const timedOut = yield* Effect.flip(server.waitForRequest(() => false, { timeout: "50 millis" }))
      expect(timedOut._tag).toBe("ScriptedModelServerError")
      expect(timedOut.reason).toBe("Timeout")
      expect(timedOut).toBeInstanceOf(ScriptedModelServer.ScriptedModelServerError)
    }))

  it.scopedLive("env points the CLI at the server, offline and isolated", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const env = server.env()
      expect(env.ANTHROPIC_BASE_URL).toBe(`http://127.0.0.1:${server.port}`)
      expect(server.url).toBe(env.ANTHROPIC_BASE_URL)
      expect(env.ANTHROPIC_API_KEY).toMatch(/^sk-test-/)
      expect(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).toBe("1")
      expect(env.DISABLE_TELEMETRY).toBe("1")
      expect(env.DISABLE_AUTOUPDATER).toBe("1")
      expect(env.DISABLE_ERROR_REPORTING).toBe("1")
      expect(env.IS_SANDBOX).toBe("1")
      expect(env.CLAUDE_CODE_MAX_RETRIES).toBe("0")
      expect(env.API_TIMEOUT_MS).toBeUndefined()
      expect(env.HOME?.startsWith(Os.tmpdir())).toBe(true)
      expect(env.CLAUDE_CONFIG_DIR).toBe(Path.join(env.HOME ?? "", ".claude"))
      expect(Fs.statSync(env.XDG_RUNTIME_DIR ?? "").isDirectory()).toBe(true)
      expect(server.env().HOME).toBe(env.HOME)
      const custom = server.env({
        maxRetries: undefined,
        sandbox: false,
        apiTimeoutMs: 2_000,
        apiKey: "sk-test-other",
        home: "/tmp/somewhere"
      })
      expect("CLAUDE_CODE_MAX_RETRIES" in custom).toBe(false)
      expect("IS_SANDBOX" in custom).toBe(false)
      expect(custom.API_TIMEOUT_MS).toBe("2000")
      expect(custom.ANTHROPIC_API_KEY).toBe("sk-test-other")
      expect(custom.CLAUDE_CONFIG_DIR).toBe("/tmp/somewhere/.claude")
      expect(server.env({ maxRetries: 2 }).CLAUDE_CODE_MAX_RETRIES).toBe("2")
    }))
})

// -------------------------------------------------------------------------------------------------
// the real CLI
// -------------------------------------------------------------------------------------------------

interface CliRun {
  readonly pid: number
  readonly code: number | null
  readonly stderr: string
  readonly messages: ReadonlyArray<Record<string, unknown>>
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

interface Cli {
  readonly pid: number
  readonly messages: ReadonlyArray<Record<string, unknown>>
  readonly stderr: () => string
  /** Resolves with the exit code once the process exited and its stdio closed. */
  readonly closed: Promise<number | null>
}

/** SIGTERM, a grace period, then SIGKILL; waits until the process is gone. */
const kill = (child: ChildProcessWithoutNullStreams, closed: Promise<number | null>) =>
  Effect.promise(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 2_000)
      await closed
      clearTimeout(timer)
    }
  })

/**
 * Starts the real CLI in a temp cwd and writes one user line, then ends stdin. The child is killed (if still
 * running) and the cwd removed when the scope closes.
 */
const startCli = (options: {
  readonly server: ScriptedModelServer.ScriptedModelServer
  readonly prompt: string
  readonly args?: ReadonlyArray<string>
}) =>
  Effect.gen(function*() {
    const cwd = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "sms-cli-cwd-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    const { child, closed } = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(
          CLI,
          ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", ...(options.args ?? [])],
          { cwd, env: { ...process.env, ...options.server.env() }, stdio: ["pipe", "pipe", "pipe"] }
        )
        const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
        return { child, closed }
      }),
      ({ child, closed }) => kill(child, closed)
    )
    const messages: Array<Record<string, unknown>> = []
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    Readline.createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.length > 0) messages.push(record(JSON.parse(line)))
    })
    child.stdin.end(
      JSON.stringify({
        type: "user",
        session_id: "",
        message: { role: "user", content: [{ type: "text", text: options.prompt }] },
        parent_tool_use_id: null
      }) + "\n"
    )
    return { pid: child.pid ?? -1, messages, stderr: () => stderr, closed } satisfies Cli
  })

/** `startCli`, then wait for the process to exit (the CLI exits after the turn since stdin is closed). */
const runCli = (options: Parameters<typeof startCli>[0]) =>
  Effect.gen(function*() {
    const cli = yield* startCli(options)
    const code = yield* Effect.promise(() => cli.closed).pipe(Effect.timeout("45 seconds"), Effect.orDie)
    return { pid: cli.pid, code, stderr: cli.stderr(), messages: cli.messages } satisfies CliRun
  })

const assistantText = (run: CliRun): string =>
  run.messages
    .filter((m) => m.type === "assistant")
    .flatMap((m) => array(record(m.message).content))
    .map((block) => record(block))
    .filter((block) => block.type === "text")
    .map((block) => String(block.text))
    .join("")

const resultOf = (run: CliRun): Record<string, unknown> | undefined => run.messages.find((m) => m.type === "result")

describe("ScriptedModelServer with the real claude CLI", () => {
  it.scopedLive("SAY: init, assistant text and a successful result", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const run = yield* Effect.scoped(runCli({ server, prompt: "SAY hello from the model server" }))
      expect(isAlive(run.pid)).toBe(false)
      expect(run.code, run.stderr).toBe(0)
      expect(run.messages.some((m) => m.type === "system" && m.subtype === "init")).toBe(true)
      expect(assistantText(run)).toBe("hello from the model server")
      expect(resultOf(run)).toMatchObject({ type: "result", subtype: "success", is_error: false })
      const requests = yield* server.requests
      expect(requests.every((r) => r.isMessages && r.stream)).toBe(true)
      expect(requests.map((r) => r.lastUserText)).toStrictEqual(["SAY hello from the model server"])
      expect(requests[0]?.userPrompts).toStrictEqual(["SAY hello from the model server"])
      expect(requests[0]?.tools).toContain("Bash")
      expect(requests[0]?.headers["x-api-key"]).toBe(server.env().ANTHROPIC_API_KEY)
    }))

  it.scopedLive("TOOL Bash under bypassPermissions: the tool result reaches the model", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const run = yield* Effect.scoped(runCli({
        server,
        prompt: "TOOL Bash {\"command\":\"echo hi-from-bash > marker.txt && cat marker.txt\"}",
        args: ["--permission-mode", "bypassPermissions"]
      }))
      expect(isAlive(run.pid)).toBe(false)
      expect(run.code, run.stderr).toBe(0)
      const requests = yield* server.requests
      expect(requests).toHaveLength(2)
      const second = requests[1]
      expect(second?.toolResults).toHaveLength(1)
      expect(second?.toolResults[0]?.content).toContain("hi-from-bash")
      expect(second?.toolResults[0]?.is_error).toBe(false)
      expect(second?.toolResults[0]?.tool_use_id).toBe("toolu_sms_0_0")
      expect(assistantText(run)).toBe("tool said: hi-from-bash")
      expect(resultOf(run)).toMatchObject({ type: "result", subtype: "success", is_error: false })
    }))

  it.scopedLive("a CLI stuck on a stalled request is killed when its scope closes", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({ replies: [ScriptedModelServer.stall()] })
      const pid = yield* Effect.scoped(Effect.gen(function*() {
        const cli = yield* startCli({ server, prompt: "SAY never" })
        yield* server.waitForRequest((r) => r.isMessages, { timeout: "30 seconds" })
        expect(isAlive(cli.pid)).toBe(true)
        return cli.pid
      }))
      expect(isAlive(pid)).toBe(false)
    }))

  it.scopedLive("a scripted 529 fails the turn at once (CLAUDE_CODE_MAX_RETRIES=0)", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make({ replies: [ScriptedModelServer.httpError(529)] })
      const run = yield* Effect.scoped(runCli({ server, prompt: "SAY never" }))
      // "at once" by count, not by the clock: one request, no retry announced
      expect(isAlive(run.pid)).toBe(false)
      expect(run.messages.some((m) => m.type === "system" && m.subtype === "api_retry")).toBe(false)
      expect(resultOf(run)).toMatchObject({ type: "result", is_error: true })
      expect(run.code).toBe(1)
      expect(yield* server.requests).toHaveLength(1)
    }))
})
