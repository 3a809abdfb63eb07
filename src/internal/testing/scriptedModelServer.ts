import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Api from "../../ScriptedModelServer.js"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/** @internal */
export const ScriptedModelServerErrorTypeId: Api.ScriptedModelServerErrorTypeId = Symbol.for(
  "effect-claude-agent/ScriptedModelServer/ScriptedModelServerError"
) as Api.ScriptedModelServerErrorTypeId

/** @internal */
export class ScriptedModelServerError extends Schema.TaggedError<ScriptedModelServerError>(
  "effect-claude-agent/ScriptedModelServerError"
)("ScriptedModelServerError", {
  reason: Schema.Literal("Timeout", "Closed"),
  description: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  readonly [ScriptedModelServerErrorTypeId]: Api.ScriptedModelServerErrorTypeId = ScriptedModelServerErrorTypeId

  override get message(): string {
    return `ScriptedModelServer ${this.reason}: ${this.description}`
  }
}

/** @internal */
export const isScriptedModelServerError = (u: unknown): u is ScriptedModelServerError =>
  Predicate.hasProperty(u, ScriptedModelServerErrorTypeId)

// -------------------------------------------------------------------------------------------------
// reply constructors and guards
// -------------------------------------------------------------------------------------------------

/** @internal */
export const text = (text: string): Api.TextBlock => ({ type: "text", text })

/** @internal */
export const thinking = (thinking: string, options?: { readonly signature?: string }): Api.ThinkingBlock =>
  options?.signature === undefined ?
    { type: "thinking", thinking } :
    { type: "thinking", thinking, signature: options.signature }

/** @internal */
export const toolUse = (name: string, input: unknown, options?: { readonly id?: string }): Api.ToolUseBlock =>
  options?.id === undefined ? { type: "tool_use", name, input } : { type: "tool_use", name, input, id: options.id }

/** @internal */
export const reply = (...content: ReadonlyArray<Api.ContentBlock | string>): Api.MessageReply => ({
  content: content.map((block) => typeof block === "string" ? text(block) : block)
})

/** @internal */
export const httpError = (status: number, options?: Omit<Api.ErrorReply["error"], "status">): Api.ErrorReply => ({
  error: { ...options, status }
})

/** @internal */
export const disconnectAfter = (events: number, reply?: Api.MessageReply): Api.MessageReply => ({
  ...(reply ?? { content: [text("partial")] }),
  disconnectAfterEvents: events
})

/** @internal */
export const stall = (ms?: number): Api.StallReply => ({ stallMs: ms ?? Number.POSITIVE_INFINITY })

/** @internal */
export const isErrorReply = (reply: Api.Reply): reply is Api.ErrorReply => "error" in reply

/** @internal */
export const isStallReply = (reply: Api.Reply): reply is Api.StallReply => "stallMs" in reply

/** @internal */
export const isMessageReply = (reply: Api.Reply): reply is Api.MessageReply => "content" in reply

// -------------------------------------------------------------------------------------------------
// request decoding (total: recording must never fail, whatever the client sends)
// -------------------------------------------------------------------------------------------------

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const isSystemReminder = (text: string): boolean => text.trimStart().startsWith("<system-reminder>")

const toMessage = (u: unknown): Api.ApiMessage | undefined => {
  if (!isRecord(u) || typeof u.role !== "string") return undefined
  const content = u.content
  if (typeof content === "string") return { role: u.role, content }
  if (!Array.isArray(content)) return { role: u.role, content: [] }
  const blocks: Array<Api.ApiContentBlock> = []
  for (const block of content) {
    if (isRecord(block) && typeof block.type === "string") blocks.push({ ...block, type: block.type })
  }
  return { role: u.role, content: blocks }
}

const textBlocks = (message: Api.ApiMessage): Array<string> => {
  if (typeof message.content === "string") return [message.content]
  const texts: Array<string> = []
  for (const block of message.content) {
    if (block.type === "text" && typeof block.text === "string") texts.push(block.text)
  }
  return texts
}

const promptsOf = (message: Api.ApiMessage): Array<string> => textBlocks(message).filter((t) => !isSystemReminder(t))

const contentText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  const texts: Array<string> = []
  for (const block of content) {
    if (isRecord(block) && block.type === "text" && typeof block.text === "string") texts.push(block.text)
  }
  return texts.join("\n")
}

const toolResultsOf = (message: Api.ApiMessage): Array<Api.ToolResult> => {
  if (typeof message.content === "string") return []
  const results: Array<Api.ToolResult> = []
  for (const block of message.content) {
    if (block.type !== "tool_result") continue
    results.push({
      tool_use_id: typeof block.tool_use_id === "string" ? block.tool_use_id : "",
      content: contentText(block.content),
      is_error: block.is_error === true
    })
  }
  return results
}

const systemTextOf = (system: unknown): string => {
  if (typeof system === "string") return system
  return contentText(system)
}

const normalizeHeaders = (headers: Http.IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

const parseBody = (raw: string): unknown => {
  if (raw.length === 0) return undefined
  try {
    const parsed: unknown = JSON.parse(raw)
    return parsed
  } catch {
    return raw
  }
}

const isMessagesRoute = (method: string, path: string): boolean =>
  method === "POST" && (path.split("?")[0] ?? "").replace(/\/+$/, "") === "/v1/messages"

const lastUserMessage = (messages: ReadonlyArray<Api.ApiMessage>): Api.ApiMessage | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message?.role === "user") return message
  }
  return undefined
}

const toRecordedRequest = (
  input: Pick<Api.RecordedRequest, "index" | "receivedAt" | "method" | "path" | "headers" | "body">
): Api.RecordedRequest => {
  const body = isRecord(input.body) ? input.body : {}
  const messages: Array<Api.ApiMessage> = []
  if (Array.isArray(body.messages)) {
    for (const m of body.messages) {
      const message = toMessage(m)
      if (message !== undefined) messages.push(message)
    }
  }
  const userMessages = messages.filter((m) => m.role === "user")
  const lastUser = lastUserMessage(messages)
  let lastUserText: string | undefined
  for (let i = userMessages.length - 1; i >= 0 && lastUserText === undefined; i--) {
    const message = userMessages[i]
    if (message !== undefined) lastUserText = promptsOf(message).at(-1)
  }
  const tools: Array<string> = []
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      if (isRecord(tool) && typeof tool.name === "string") tools.push(tool.name)
    }
  }
  const isMessages = isMessagesRoute(input.method, input.path)
  const stream = body.stream === true
  const maxTokens = typeof body.max_tokens === "number" ? body.max_tokens : undefined
  return {
    ...input,
    isMessages,
    model: typeof body.model === "string" ? body.model : undefined,
    stream,
    maxTokens,
    isProbe: isMessages && !stream && maxTokens === 1,
    systemText: systemTextOf(body.system),
    tools,
    messages,
    lastUserText,
    toolResults: lastUser === undefined ? [] : toolResultsOf(lastUser),
    userPrompts: userMessages.map((m) => promptsOf(m).join("\n")).filter((p) => p.length > 0)
  }
}

// -------------------------------------------------------------------------------------------------
// handlers
// -------------------------------------------------------------------------------------------------

const TOOL_RESULT_PREVIEW = 200

/** @internal */
export const defaultHandler = (request: Api.RecordedRequest): Api.Reply => {
  const lastUser = lastUserMessage(request.messages)
  if (request.toolResults.length > 0 && (lastUser === undefined || promptsOf(lastUser).length === 0)) {
    const output = request.toolResults.map((r) => r.content).join("\n")
    return reply(`tool said: ${output.slice(0, TOOL_RESULT_PREVIEW)}`)
  }
  const prompt = (request.lastUserText ?? "").trim()
  const say = /^SAY\s+([\s\S]+)$/.exec(prompt)
  if (say?.[1] !== undefined) return reply(say[1])
  if (prompt === "HISTORY") {
    return reply(`${request.messages.length} messages; user prompts: ${request.userPrompts.join(" | ")}`)
  }
  const tool = /^TOOL\s+(\S+)\s*([\s\S]*)$/.exec(prompt)
  if (tool?.[1] !== undefined) {
    const json = (tool[2] ?? "").trim()
    try {
      const input: unknown = json.length === 0 ? {} : JSON.parse(json)
      return reply(toolUse(tool[1], input))
    } catch (error) {
      return reply(`TOOL: invalid JSON input (${String(error)})`)
    }
  }
  return reply("ok")
}

/** @internal */
export const script = (replies: Iterable<Api.Reply>, fallback: Api.Handler = defaultHandler): Api.Handler => {
  const queue = Array.from(replies)
  return (request) => {
    if (!request.isProbe) {
      const next = queue.shift()
      if (next !== undefined) return next
    }
    return fallback(request)
  }
}

// -------------------------------------------------------------------------------------------------
// rendering
// -------------------------------------------------------------------------------------------------

interface SseEvent {
  readonly event: string
  readonly data: unknown
}

interface RenderContext {
  readonly requestIndex: number
  readonly requestModel: string | undefined
  readonly toolInputFragments: number
}

const DEFAULT_MODEL = "claude-scripted"

const toolUseId = (ctx: RenderContext, blockIndex: number, block: Api.ToolUseBlock): string =>
  block.id ?? `toolu_sms_${ctx.requestIndex}_${blockIndex}`

const signatureOf = (block: Api.ThinkingBlock): string =>
  block.signature ?? `sig_${Buffer.from(block.thinking).toString("base64").slice(0, 24)}`

const stopReasonOf = (r: Api.MessageReply): Api.StopReason =>
  r.stopReason ?? (r.content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn")

const usageOf = (r: Api.MessageReply): Record<string, unknown> => {
  let chars = 0
  for (const block of r.content) {
    chars += block.type === "text" ?
      block.text.length :
      block.type === "thinking" ?
      block.thinking.length :
      JSON.stringify(block.input ?? {}).length
  }
  return {
    input_tokens: 10,
    output_tokens: Math.max(1, Math.ceil(chars / 4)),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    ...r.usage
  }
}

const wireBlock = (ctx: RenderContext, index: number, block: Api.ContentBlock): Record<string, unknown> => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text }
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: signatureOf(block) }
    case "tool_use":
      return { type: "tool_use", id: toolUseId(ctx, index, block), name: block.name, input: block.input ?? {} }
  }
}

const splitFragments = (json: string, count: number): Array<string> => {
  const chars = Array.from(json)
  const n = Math.max(1, Math.min(count, chars.length))
  const size = Math.ceil(chars.length / n)
  const fragments: Array<string> = []
  for (let i = 0; i < chars.length; i += size) fragments.push(chars.slice(i, i + size).join(""))
  return fragments
}

const messageId = (ctx: RenderContext): string => `msg_sms_${ctx.requestIndex}`

const renderEvents = (ctx: RenderContext, r: Api.MessageReply): Array<SseEvent> => {
  const usage = usageOf(r)
  const events: Array<SseEvent> = [{
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: messageId(ctx),
        type: "message",
        role: "assistant",
        model: r.model ?? ctx.requestModel ?? DEFAULT_MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 }
      }
    }
  }]
  const delta = (index: number, delta: Record<string, unknown>): SseEvent => ({
    event: "content_block_delta",
    data: { type: "content_block_delta", index, delta }
  })
  r.content.forEach((block, index) => {
    switch (block.type) {
      case "text": {
        events.push({
          event: "content_block_start",
          data: { type: "content_block_start", index, content_block: { type: "text", text: "" } }
        })
        const size = r.textDeltaChars ?? 0
        const pieces: Array<string> = []
        if (size > 0) {
          for (let at = 0; at < block.text.length; at += size) pieces.push(block.text.slice(at, at + size))
        }
        for (const text of pieces.length === 0 ? [block.text] : pieces) {
          events.push(delta(index, { type: "text_delta", text }))
        }
        break
      }
      case "thinking": {
        events.push({
          event: "content_block_start",
          data: { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }
        })
        events.push(delta(index, { type: "thinking_delta", thinking: block.thinking }))
        events.push(delta(index, { type: "signature_delta", signature: signatureOf(block) }))
        break
      }
      case "tool_use": {
        events.push({
          event: "content_block_start",
          data: {
            type: "content_block_start",
            index,
            content_block: { type: "tool_use", id: toolUseId(ctx, index, block), name: block.name, input: {} }
          }
        })
        for (const fragment of splitFragments(JSON.stringify(block.input ?? {}), ctx.toolInputFragments)) {
          events.push(delta(index, { type: "input_json_delta", partial_json: fragment }))
        }
        break
      }
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } })
  })
  events.push({
    event: "message_delta",
    data: { type: "message_delta", delta: { stop_reason: stopReasonOf(r), stop_sequence: null }, usage }
  })
  events.push({ event: "message_stop", data: { type: "message_stop" } })
  return events
}

const renderMessage = (ctx: RenderContext, r: Api.MessageReply): Record<string, unknown> => ({
  id: messageId(ctx),
  type: "message",
  role: "assistant",
  model: r.model ?? ctx.requestModel ?? DEFAULT_MODEL,
  content: r.content.map((block, index) => wireBlock(ctx, index, block)),
  stop_reason: stopReasonOf(r),
  stop_sequence: null,
  usage: usageOf(r)
})

const encodeSse = (event: SseEvent): string => `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`

const errorTypeOf = (status: number): string => {
  switch (status) {
    case 400:
      return "invalid_request_error"
    case 401:
      return "authentication_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 413:
      return "request_too_large"
    case 429:
      return "rate_limit_error"
    case 529:
      return "overloaded_error"
    default:
      return "api_error"
  }
}

const errorBody = (type: string, message: string): string => JSON.stringify({ type: "error", error: { type, message } })

// -------------------------------------------------------------------------------------------------
// node:http plumbing
// -------------------------------------------------------------------------------------------------

/** The CLI can compress request bodies (`CLAUDE_CODE_GZIP_REQUEST_BODIES`); undecodable bodies are kept raw. */
const decodeBody = (body: Buffer, encoding: string | undefined): string => {
  try {
    switch (encoding?.trim().toLowerCase()) {
      case "gzip":
        return Zlib.gunzipSync(body).toString("utf8")
      case "deflate":
        return Zlib.inflateSync(body).toString("utf8")
      case "br":
        return Zlib.brotliDecompressSync(body).toString("utf8")
      default:
        return body.toString("utf8")
    }
  } catch {
    return body.toString("utf8")
  }
}

const readBody = (req: Http.IncomingMessage): Effect.Effect<string, Error> =>
  Effect.async<string, Error>((resume) => {
    const chunks: Array<Buffer> = []
    const onData = (chunk: Buffer) => chunks.push(chunk)
    const onEnd = () => resume(Effect.succeed(decodeBody(Buffer.concat(chunks), req.headers["content-encoding"])))
    const onError = (error: Error) => resume(Effect.fail(error))
    req.on("data", onData)
    req.once("end", onEnd)
    req.once("error", onError)
    return Effect.sync(() => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
    })
  })

/** Completes when the response is closed: finished, or the client went away. */
const awaitClose = (res: Http.ServerResponse): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (res.destroyed || res.writableFinished) return resume(Effect.void)
    const onClose = () => resume(Effect.void)
    res.once("close", onClose)
    return Effect.sync(() => {
      res.off("close", onClose)
    })
  })

const write = (res: Http.ServerResponse, chunk: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (res.destroyed) return resume(Effect.void)
    res.write(chunk, () => resume(Effect.void))
  })

const end = (res: Http.ServerResponse, chunk?: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (res.destroyed) return resume(Effect.void)
    if (chunk === undefined) res.end(() => resume(Effect.void))
    else res.end(chunk, () => resume(Effect.void))
  })

const sleepMs = (ms: number | undefined): Effect.Effect<void> =>
  ms === undefined || ms <= 0 ? Effect.void : Number.isFinite(ms) ? Effect.sleep(Duration.millis(ms)) : Effect.never

const sendJson = (
  res: Http.ServerResponse,
  status: number,
  body: string,
  headers: Readonly<Record<string, string>> = {}
): Effect.Effect<void> =>
  Effect.suspend(() => {
    res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    return end(res, body)
  })

const respond = (
  res: Http.ServerResponse,
  request: Api.RecordedRequest,
  r: Api.Reply,
  toolInputFragments: number
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const requestId = `req_sms_${request.index}`
    if (isStallReply(r)) {
      yield* sleepMs(r.stallMs)
      res.destroy()
      return
    }
    yield* sleepMs(r.delayMs)
    if (isErrorReply(r)) {
      const { headers, message, retryAfter, status, type } = r.error
      const body = errorBody(type ?? errorTypeOf(status), message ?? `scripted ${status} error`)
      return yield* sendJson(res, status, body, {
        ...headers,
        "request-id": requestId,
        ...(retryAfter === undefined ? {} : { "retry-after": String(retryAfter) })
      })
    }
    const ctx: RenderContext = { requestIndex: request.index, requestModel: request.model, toolInputFragments }
    if (!request.stream) {
      if (r.disconnectAfterEvents !== undefined) {
        res.destroy()
        return
      }
      return yield* sendJson(res, 200, JSON.stringify(renderMessage(ctx, r)), { "request-id": requestId })
    }
    const events = renderEvents(ctx, r)
    const limit = r.disconnectAfterEvents === undefined ?
      events.length :
      Math.max(0, Math.min(events.length, r.disconnectAfterEvents))
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": requestId })
    res.flushHeaders()
    for (let i = 0; i < limit; i++) {
      const event = events[i]
      if (event === undefined) break
      if (i > 0) yield* sleepMs(r.eventDelayMs)
      yield* write(res, encodeSse(event))
    }
    if (r.disconnectAfterEvents !== undefined) res.destroy()
    else yield* end(res)
  })

// -------------------------------------------------------------------------------------------------
// server
// -------------------------------------------------------------------------------------------------

const DEFAULT_API_KEY = "sk-test-scripted-model-server"
const DEFAULT_WAIT = Duration.seconds(10)

const mkdir = (path: string): string => {
  Fs.mkdirSync(path, { recursive: true, mode: 0o700 })
  return path
}

/** @internal */
export const make = (options: Api.Options = {}): Effect.Effect<Api.ScriptedModelServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const toolInputFragments = Math.max(1, Math.floor(options.toolInputFragments ?? 3))
    const queue: Array<Api.Reply> = Array.from(options.replies ?? [])
    let handler: Api.Handler = options.handler ?? defaultHandler
    const recorded: Array<Api.RecordedRequest> = []

    const root = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "scripted-model-server-"))),
      (dir) =>
        Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 })).pipe(
          Effect.catchAllDefect((defect) => Effect.logDebug("ScriptedModelServer: could not remove temp dir", defect))
        )
    )
    const sharedHome = mkdir(Path.join(root, "home"))
    mkdir(Path.join(sharedHome, ".claude"))
    const runtimeDir = mkdir(Path.join(root, "run"))
    let homes = 0

    const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<Api.RecordedRequest>(), PubSub.shutdown)
    const run = yield* FiberSet.makeRuntime<never, void, never>()

    const nextReply = (request: Api.RecordedRequest): Effect.Effect<Api.Reply> =>
      Effect.suspend(() => {
        if (!request.isProbe) {
          const next = queue.shift()
          if (next !== undefined) return Effect.succeed(next)
        }
        const answer = handler(request)
        return Effect.isEffect(answer) ? answer : Effect.succeed(answer)
      })

    const handle = (req: Http.IncomingMessage, res: Http.ServerResponse): Effect.Effect<void> =>
      Effect.gen(function*() {
        const receivedAt = Date.now()
        const raw = yield* readBody(req)
        const request = toRecordedRequest({
          index: recorded.length,
          receivedAt,
          method: req.method ?? "GET",
          path: req.url ?? "/",
          headers: normalizeHeaders(req.headers),
          body: parseBody(raw)
        })
        recorded.push(request)
        yield* PubSub.publish(pubsub, request)
        if (!request.isMessages) {
          return yield* sendJson(
            res,
            404,
            errorBody("not_found_error", `ScriptedModelServer: no route for ${request.method} ${request.path}`)
          )
        }
        if (!isRecord(request.body)) {
          return yield* sendJson(res, 400, errorBody("invalid_request_error", "request body is not a JSON object"))
        }
        const r = yield* nextReply(request)
        yield* respond(res, request, r, toolInputFragments)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.suspend(() => {
            if (res.headersSent || res.destroyed) {
              res.destroy()
              return Effect.void
            }
            return sendJson(res, 500, errorBody("api_error", `ScriptedModelServer: ${Cause.pretty(cause)}`))
          })
        ),
        Effect.raceFirst(awaitClose(res)),
        Effect.onInterrupt(() => Effect.sync(() => res.destroy()))
      )

    const sockets = new Set<Net.Socket>()
    const server = yield* Effect.acquireRelease(
      Effect.async<Http.Server>((resume) => {
        const server = Http.createServer((req, res) => {
          run(handle(req, res))
        })
        server.on("connection", (socket) => {
          sockets.add(socket)
          socket.once("close", () => sockets.delete(socket))
        })
        server.once("error", (error) => resume(Effect.die(error)))
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          for (const socket of sockets) socket.destroy()
          sockets.clear()
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    // runs first when the scope closes (finalizers run in reverse): from then on `env()` makes no directory
    let closed = false
    yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))
    const address = server.address()
    const port = isRecord(address) && typeof address.port === "number" ? address.port : 0
    const url = `http://127.0.0.1:${port}`

    const env = (envOptions: Api.EnvOptions = {}): Record<string, string> => {
      if (closed) {
        // the temporary directories are gone; making them again would leave them behind
        throw new ScriptedModelServerError({
          reason: "Closed",
          description: "env() was called after the server closed (its HOME and runtime directories are removed)"
        })
      }
      let home = envOptions.home
      if (home === undefined && envOptions.freshHome === true) {
        home = mkdir(Path.join(root, `home-${++homes}`))
        mkdir(Path.join(home, ".claude"))
      }
      home ??= sharedHome
      const maxRetries = "maxRetries" in envOptions ? envOptions.maxRetries : 0
      return {
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: envOptions.apiKey ?? DEFAULT_API_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        DISABLE_AUTOUPDATER: "1",
        BUN_ENABLE_CRASH_REPORTING: "0",
        HOME: home,
        CLAUDE_CONFIG_DIR: Path.join(home, ".claude"),
        XDG_RUNTIME_DIR: runtimeDir,
        ...(envOptions.sandbox === false ? {} : { IS_SANDBOX: "1" }),
        ...(maxRetries === undefined ? {} : { CLAUDE_CODE_MAX_RETRIES: String(maxRetries) }),
        ...(envOptions.apiTimeoutMs === undefined ? {} : { API_TIMEOUT_MS: String(envOptions.apiTimeoutMs) })
      }
    }

    const requestStream: Stream.Stream<Api.RecordedRequest> = Stream.unwrapScoped(
      Effect.gen(function*() {
        const subscription = yield* PubSub.subscribe(pubsub)
        const past = recorded.slice()
        return Stream.concat(
          Stream.fromIterable(past),
          Stream.fromQueue(subscription).pipe(Stream.filter((request) => request.index >= past.length))
        )
      }).pipe(Effect.catchAllCause(() => Effect.succeed(Stream.fromIterable(recorded.slice()))))
    )

    const waitForRequest = Effect.fn("ScriptedModelServer.waitForRequest")(function*(
      predicate: (request: Api.RecordedRequest) => boolean,
      waitOptions?: { readonly timeout?: Duration.DurationInput }
    ) {
      const timeout = waitOptions?.timeout ?? DEFAULT_WAIT
      const found = yield* requestStream.pipe(
        Stream.filter(predicate),
        Stream.runHead,
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new ScriptedModelServerError({
              reason: "Timeout",
              description: `no matching request within ${Duration.format(timeout)} (${recorded.length} received)`
            })
        })
      )
      if (Option.isNone(found)) {
        return yield* new ScriptedModelServerError({
          reason: "Closed",
          description: "the server closed before a matching request arrived"
        })
      }
      return found.value
    })

    return {
      port,
      url,
      env,
      requests: Effect.sync(() => recorded.slice()),
      requestStream,
      waitForRequest,
      addReplies: (...replies) => Effect.sync(() => void queue.push(...replies)),
      setHandler: (next) => Effect.sync(() => void (handler = next ?? defaultHandler))
    } satisfies Api.ScriptedModelServer
  })

/** Runs `effect`; a failure rejects with the error itself (not a FiberFailure), so `instanceof` and `_tag` work. */
const promised = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.squash(exit.cause)
  })

/** @internal */
export const start = (options: Api.Options = {}): Promise<Api.StartedServer> => {
  const scope = Effect.runSync(Scope.make())
  let closing: Promise<void> | undefined
  const close = () => (closing ??= promised(Scope.close(scope, Exit.void)))
  return promised(Scope.extend(make(options), scope)).then((server): Api.StartedServer => ({
    port: server.port,
    url: server.url,
    env: server.env,
    requests: () => promised(server.requests),
    waitForRequest: (predicate, waitOptions) =>
      promised(
        server.waitForRequest(
          predicate,
          waitOptions?.timeoutMs === undefined ? undefined : { timeout: Duration.millis(waitOptions.timeoutMs) }
        )
      ),
    addReplies: (...replies) => Effect.runSync(server.addReplies(...replies)),
    setHandler: (next) => Effect.runSync(server.setHandler(next)),
    server,
    close,
    [Symbol.asyncDispose]: close
  }), (error: unknown) => close().then(() => Promise.reject(error)))
}
