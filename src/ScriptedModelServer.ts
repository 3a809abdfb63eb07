/**
 * A scripted, offline stand-in for the Anthropic Messages API, so that the real `claude` CLI can run in tests.
 *
 * `make` starts a `node:http` server on `127.0.0.1` (random port) that answers `POST /v1/messages` with Anthropic
 * SSE streams (or plain JSON for non-streaming requests), records every request it sees, and is closed when its
 * `Scope` closes. `env()` gives the environment variables that point the CLI at it, offline and isolated.
 *
 * Replies are plain data (`reply(text("hi"))`, `httpError(529)`, `stall(5_000)`, …). A request takes the next
 * queued reply (`replies` option, `addReplies`), else the handler (`handler` option, `setHandler`), which
 * defaults to `defaultHandler`, a small rule set driven by the last user prompt:
 *
 * | prompt | reply |
 * |---|---|
 * | `SAY <words>` | text `<words>` |
 * | `HISTORY` | text `<n> messages; user prompts: p1 \| p2 \| …` |
 * | `TOOL <ToolName> <json input>` | a `tool_use` block, then `tool said: <output>` for its `tool_result` |
 * | anything else | text `ok` |
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ScriptedModelServer } from "effect-claude-agent/testing"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* ScriptedModelServer.make({
 *     replies: [
 *       ScriptedModelServer.reply(ScriptedModelServer.toolUse("Bash", { command: "touch x" })),
 *       ScriptedModelServer.reply(ScriptedModelServer.text("done"))
 *     ]
 *   })
 *   const env = { ...process.env, ...server.env() }
 *   // … spawn `claude` with `env` …
 *   const second = yield* server.waitForRequest((request) => request.toolResults.length > 0)
 *   return second.toolResults
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/testing/scriptedModelServer.js"

// -------------------------------------------------------------------------------------------------
// replies
// -------------------------------------------------------------------------------------------------

/**
 * A text content block of a scripted reply.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextBlock {
  readonly type: "text"
  readonly text: string
}

/**
 * A thinking content block of a scripted reply. Streamed as `thinking_delta` followed by `signature_delta`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ThinkingBlock {
  readonly type: "thinking"
  readonly thinking: string
  /**
   * The signature sent in the `signature_delta`. Defaults to a fake derived from the text (the CLI does not
   * verify it; only the real API does).
   */
  readonly signature?: string
}

/**
 * A tool call of a scripted reply. Streamed as `content_block_start` followed by several `input_json_delta`
 * fragments of `JSON.stringify(input)`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolUseBlock {
  readonly type: "tool_use"
  readonly name: string
  readonly input: unknown
  /**
   * The `tool_use` id. Leave `undefined` to get a unique `toolu_sms_<request>_<block>` id.
   */
  readonly id?: string
}

/**
 * One content block of a scripted reply.
 *
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock

/**
 * A Messages API `stop_reason`.
 *
 * @since 0.1.0
 * @category models
 */
export type StopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded"

/**
 * Token usage reported for a reply (wire names). Missing fields default to `input_tokens: 10`,
 * `output_tokens: ceil(output characters / 4)` (at least 1) and `0` for the cache counters; extra fields are sent
 * as given.
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage {
  readonly input_tokens?: number
  readonly output_tokens?: number
  readonly cache_creation_input_tokens?: number
  readonly cache_read_input_tokens?: number
  readonly [key: string]: unknown
}

/**
 * A successful assistant message, streamed as SSE when the request has `stream: true` and returned as one JSON
 * message otherwise.
 *
 * @since 0.1.0
 * @category models
 */
export interface MessageReply {
  readonly content: ReadonlyArray<ContentBlock>
  /**
   * Defaults to `"tool_use"` when `content` holds a `tool_use` block, else `"end_turn"`.
   */
  readonly stopReason?: StopReason
  /**
   * Merged over the default usage (see `Usage`).
   */
  readonly usage?: Usage
  /**
   * The `model` reported in the message. Defaults to the request's `model`.
   */
  readonly model?: string
  /**
   * Milliseconds to wait before sending the response headers. Defaults to `0`.
   */
  readonly delayMs?: number
  /**
   * Milliseconds to wait between two SSE events. Defaults to `0`.
   */
  readonly eventDelayMs?: number
  /**
   * Split each text block into `text_delta` events of at most this many characters (as a real stream does).
   * Leave `undefined` to send each text block in one delta.
   */
  readonly textDeltaChars?: number
  /**
   * Send only this many SSE events, then destroy the socket (a mid-stream disconnect). For a non-streaming
   * request the socket is destroyed before anything is written. Leave `undefined` to send the whole reply.
   *
   * With `CLAUDE_CODE_MAX_RETRIES=0` the CLI 2.1.332 answers a mid-stream disconnect by sending the same request
   * once more without streaming (`stream` false, `max_tokens: 64000`); that request takes the next reply. With
   * retries enabled it re-sends the streaming request after a backoff instead.
   */
  readonly disconnectAfterEvents?: number
}

/**
 * An HTTP error with an Anthropic error body: `{"type":"error","error":{"type":…,"message":…}}`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorReply {
  readonly error: {
    /**
     * The HTTP status, e.g. `400`, `429`, `500`, `529`.
     */
    readonly status: number
    /**
     * The Anthropic error type. Defaults from the status: 400 `invalid_request_error`, 401 `authentication_error`,
     * 403 `permission_error`, 404 `not_found_error`, 413 `request_too_large`, 429 `rate_limit_error`,
     * 529 `overloaded_error`, anything else `api_error`.
     */
    readonly type?: string
    /**
     * Defaults to `"scripted <status> error"`.
     */
    readonly message?: string
    /**
     * Seconds, sent as the `retry-after` header.
     */
    readonly retryAfter?: number
    /**
     * Extra response headers, e.g. `{ "x-should-retry": "false" }`.
     */
    readonly headers?: Readonly<Record<string, string>>
  }
  /**
   * Milliseconds to wait before answering. Defaults to `0`.
   */
  readonly delayMs?: number
}

/**
 * Accept the request, then send nothing for `stallMs` milliseconds and destroy the socket. Use `Infinity` to
 * stall until the client gives up or the server's scope closes.
 *
 * @since 0.1.0
 * @category models
 */
export interface StallReply {
  readonly stallMs: number
}

/**
 * What the server answers to one `POST /v1/messages`.
 *
 * @since 0.1.0
 * @category models
 */
export type Reply = MessageReply | ErrorReply | StallReply

/**
 * Decides the reply to a `POST /v1/messages` that has no queued reply. May be effectful; a defect becomes an HTTP
 * 500 `api_error`.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = (request: RecordedRequest) => Reply | Effect.Effect<Reply>

// -------------------------------------------------------------------------------------------------
// recorded requests
// -------------------------------------------------------------------------------------------------

/**
 * A content block of a request message, as sent by the client.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApiContentBlock {
  readonly type: string
  readonly [key: string]: unknown
}

/**
 * A message of a request body. Note that the CLI also sends `role: "system"` entries.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApiMessage {
  readonly role: string
  readonly content: string | ReadonlyArray<ApiContentBlock>
}

/**
 * A `tool_result` block of the last user message, with its content flattened to text.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResult {
  readonly tool_use_id: string
  /**
   * The text blocks of the result joined with `"\n"` (or the string content as is).
   */
  readonly content: string
  readonly is_error: boolean
}

/**
 * One HTTP request the server received, with fields derived from a Messages API body. Derived fields are empty
 * (`undefined`, `false`, `""`, `[]`) when the body does not have them.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedRequest {
  /**
   * 0-based arrival order, over all requests of this server.
   */
  readonly index: number
  /**
   * `Date.now()` when the request was received.
   */
  readonly receivedAt: number
  readonly method: string
  /**
   * The request target with its query, e.g. `/v1/messages?beta=true`.
   */
  readonly path: string
  /**
   * Lower-case header names; repeated headers joined with `", "`.
   */
  readonly headers: Readonly<Record<string, string>>
  /**
   * The parsed JSON body; the raw text when it is not JSON; `undefined` when empty.
   */
  readonly body: unknown
  /**
   * `true` for `POST /v1/messages` (with any query), the only route that is answered with a reply.
   */
  readonly isMessages: boolean
  readonly model: string | undefined
  readonly stream: boolean
  readonly maxTokens: number | undefined
  /**
   * `true` for the CLI's model probe: a non-streaming request with `max_tokens: 1` (sent after `set_model`).
   * Probes never take a queued reply; they go to the handler.
   */
  readonly isProbe: boolean
  /**
   * The system prompt; its text blocks joined with `"\n"`.
   */
  readonly systemText: string
  /**
   * The names of the tools offered to the model.
   */
  readonly tools: ReadonlyArray<string>
  readonly messages: ReadonlyArray<ApiMessage>
  /**
   * The last prompt text of the last `role: "user"` message that has one: its last text block that is not a
   * `<system-reminder>`.
   */
  readonly lastUserText: string | undefined
  /**
   * The `tool_result` blocks of the last `role: "user"` message.
   */
  readonly toolResults: ReadonlyArray<ToolResult>
  /**
   * The prompt of every user turn, oldest first: the non-`<system-reminder>` text blocks of each `role: "user"`
   * message joined with `"\n"`, skipping messages that have none (e.g. tool results only).
   */
  readonly userPrompts: ReadonlyArray<string>
}

// -------------------------------------------------------------------------------------------------
// server
// -------------------------------------------------------------------------------------------------

/**
 * Options of `make`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Answers requests that have no queued reply. Defaults to `defaultHandler`.
   */
  readonly handler?: Handler
  /**
   * Replies queued at start: each non-probe `POST /v1/messages` takes the next one, then the handler answers.
   */
  readonly replies?: Iterable<Reply>
  /**
   * How many `input_json_delta` fragments a `tool_use` input is split into (fewer if the JSON is shorter).
   * Defaults to `3`.
   */
  readonly toolInputFragments?: number
}

/**
 * Options of `ScriptedModelServer.env`.
 *
 * @since 0.1.0
 * @category models
 */
export interface EnvOptions {
  /**
   * `ANTHROPIC_API_KEY`. Defaults to `"sk-test-scripted-model-server"`.
   */
  readonly apiKey?: string
  /**
   * `CLAUDE_CODE_MAX_RETRIES`: how often the CLI retries a 429/5xx/529 or a dropped connection (the CLI honours
   * `0`). Defaults to `0`, so that a scripted error answers at once instead of after the CLI's backoff (the CLI's
   * own default is 10 retries with exponential backoff). Set `undefined` to leave the variable unset.
   */
  readonly maxRetries?: number | undefined
  /**
   * `API_TIMEOUT_MS`: the CLI's per-request timeout, e.g. to make a `stall()` fail the turn quickly. Leave
   * `undefined` for the CLI's default (10 minutes).
   */
  readonly apiTimeoutMs?: number
  /**
   * `IS_SANDBOX=1`, needed for `--permission-mode bypassPermissions` when running as root. Defaults to `true`.
   */
  readonly sandbox?: boolean
  /**
   * Give this call a new, empty `HOME` (and `CLAUDE_CONFIG_DIR`), removed with the server. By default every
   * `env()` call of a server shares one `HOME`, so sessions can be resumed across processes.
   */
  readonly freshHome?: boolean
  /**
   * Use this directory as `HOME` instead of a temporary one (the caller owns it). Wins over `freshHome`.
   */
  readonly home?: string
}

/**
 * A running scripted model server.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedModelServer {
  readonly port: number
  /**
   * `http://127.0.0.1:<port>`, the value of `ANTHROPIC_BASE_URL`.
   */
  readonly url: string
  /**
   * The environment variables that point the real CLI at this server, offline and isolated. Spread them over
   * `process.env` (they win over inherited ones; an inherited `ANTHROPIC_AUTH_TOKEN` or provider switch such as
   * `CLAUDE_CODE_USE_BEDROCK` is not removed):
   *
   * - `ANTHROPIC_BASE_URL` — this server.
   * - `ANTHROPIC_API_KEY` — a fake key (without a key the CLI answers "Not logged in" and sends nothing).
   * - `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` — no request other than `POST /v1/messages` reaches any host.
   * - `DISABLE_TELEMETRY=1`, `DISABLE_ERROR_REPORTING=1`, `DISABLE_AUTOUPDATER=1`,
   *   `BUN_ENABLE_CRASH_REPORTING=0` — nothing leaves the machine, nothing is installed.
   * - `HOME`, `CLAUDE_CONFIG_DIR=<HOME>/.claude` — temporary, so no user settings, credentials, `CLAUDE.md`
   *   or session files leak in or out.
   * - `XDG_RUNTIME_DIR` — temporary; the CLI creates `cc-socks/<pid>.sock` there (left behind after crashes).
   * - `IS_SANDBOX=1` — lets `bypassPermissions` run as root (see `EnvOptions.sandbox`).
   * - `CLAUDE_CODE_MAX_RETRIES=0` — see `EnvOptions.maxRetries`.
   * - `API_TIMEOUT_MS` — only when `EnvOptions.apiTimeoutMs` is given.
   *
   * Temporary directories live under `os.tmpdir()` and are removed when the server's scope closes. Called after
   * that, `env()` throws `ScriptedModelServerError` (`reason: "Closed"`) and creates nothing: a closed server
   * cannot answer the CLI, and directories made then would never be removed.
   */
  readonly env: (options?: EnvOptions) => Record<string, string>
  /**
   * Every request received so far, in arrival order (including 404s).
   */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /**
   * Every request: the ones received so far, then live ones. Ends when the server closes.
   */
  readonly requestStream: Stream.Stream<RecordedRequest>
  /**
   * The first request (already received or future) matching `predicate`. Fails with reason `"Timeout"` after
   * `timeout` (default 10 seconds) and with `"Closed"` if the server closes first.
   */
  readonly waitForRequest: (
    predicate: (request: RecordedRequest) => boolean,
    options?: { readonly timeout?: Duration.DurationInput }
  ) => Effect.Effect<RecordedRequest, ScriptedModelServerError>
  /**
   * Queue replies after those already queued.
   */
  readonly addReplies: (...replies: ReadonlyArray<Reply>) => Effect.Effect<void>
  /**
   * Replace the handler; `undefined` restores `defaultHandler`.
   */
  readonly setHandler: (handler: Handler | undefined) => Effect.Effect<void>
}

/**
 * Start a scripted model server on `127.0.0.1` and a random port. Closing the scope interrupts in-flight replies,
 * destroys every open socket, closes the server and removes the temporary directories made by `env()`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<ScriptedModelServer, never, Scope.Scope> = internal.make

/**
 * A scripted model server started from Promise code ({@link start}): the same server, with Promise methods, and
 * `close()` in place of a Scope.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartedServer extends AsyncDisposable {
  readonly port: number
  /** `http://127.0.0.1:<port>`, the value of `ANTHROPIC_BASE_URL`. */
  readonly url: string
  /**
   * The environment variables that point the real CLI at this server (see `ScriptedModelServer.env`); pass them as
   * a query's `env` (which overlays `process.env`), e.g. `options: { env: server.env() }`. Throws
   * `ScriptedModelServerError` (`reason: "Closed"`) after `close()`, and then creates nothing.
   */
  readonly env: (options?: EnvOptions) => Record<string, string>
  /** Every request received so far, in arrival order. */
  readonly requests: () => Promise<ReadonlyArray<RecordedRequest>>
  /**
   * The first request (received already or later) matching `predicate`. Rejects with `ScriptedModelServerError`:
   * `reason: "Timeout"` after `timeoutMs` (default 10 000), `"Closed"` if the server closes first.
   */
  readonly waitForRequest: (
    predicate: (request: RecordedRequest) => boolean,
    options?: { readonly timeoutMs?: number }
  ) => Promise<RecordedRequest>
  /** Queues replies after those already queued. */
  readonly addReplies: (...replies: ReadonlyArray<Reply>) => void
  /** Replaces the handler; `undefined` restores `defaultHandler`. */
  readonly setHandler: (handler: Handler | undefined) => void
  /** The server itself, for Effect code. */
  readonly server: ScriptedModelServer
  /**
   * Stops the server: in-flight replies end, sockets are destroyed, the temporary directories of `env()` are
   * removed. Idempotent; resolves once all of that is done. Until then the server keeps Node running.
   */
  readonly close: () => Promise<void>
  /** `await using server = await ScriptedModelServer.start()`: closes the server when the block ends. */
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * Starts a scripted model server from Promise code, without a Scope: stop it with `close()`, or let `await using`
 * do it. (`Effect.runPromise(Effect.scoped(make()))` would close the server as soon as it resolves.)
 *
 * ```ts
 * import { query } from "effect-claude-agent/promise"
 * import { ScriptedModelServer } from "effect-claude-agent/testing"
 *
 * await using server = await ScriptedModelServer.start()
 * for await (const message of query({ prompt: "SAY hello", options: { env: server.env() } })) {
 *   if (message.type === "result") console.log(message)
 * }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const start: (options?: Options) => Promise<StartedServer> = internal.start

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const ScriptedModelServerErrorTypeId: unique symbol = internal.ScriptedModelServerErrorTypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type ScriptedModelServerErrorTypeId = typeof ScriptedModelServerErrorTypeId

/**
 * `waitForRequest` gave up: `reason` is `"Timeout"` (nothing matched in time) or `"Closed"` (the server closed).
 *
 * @since 0.1.0
 * @category errors
 */
export const ScriptedModelServerError: typeof internal.ScriptedModelServerError = internal.ScriptedModelServerError

/**
 * @since 0.1.0
 * @category errors
 */
export type ScriptedModelServerError = internal.ScriptedModelServerError

/**
 * @since 0.1.0
 * @category guards
 */
export const isScriptedModelServerError: (u: unknown) => u is ScriptedModelServerError =
  internal.isScriptedModelServerError

// -------------------------------------------------------------------------------------------------
// reply constructors
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category constructors
 */
export const text: (text: string) => TextBlock = internal.text

/**
 * @since 0.1.0
 * @category constructors
 */
export const thinking: (thinking: string, options?: { readonly signature?: string }) => ThinkingBlock =
  internal.thinking

/**
 * @since 0.1.0
 * @category constructors
 */
export const toolUse: (name: string, input: unknown, options?: { readonly id?: string }) => ToolUseBlock =
  internal.toolUse

/**
 * A message reply with these blocks; a string is a text block. Add options by spreading:
 * `{ ...reply(text("x")), stopReason: "max_tokens" }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reply: (...content: ReadonlyArray<ContentBlock | string>) => MessageReply = internal.reply

/**
 * @since 0.1.0
 * @category constructors
 */
export const httpError: (status: number, options?: Omit<ErrorReply["error"], "status">) => ErrorReply =
  internal.httpError

/**
 * Stream `events` SSE events of `reply` (default: a text reply `"partial"`), then destroy the socket.
 *
 * @since 0.1.0
 * @category constructors
 */
export const disconnectAfter: (events: number, reply?: MessageReply) => MessageReply = internal.disconnectAfter

/**
 * Send nothing for `ms` milliseconds (default: until the scope closes), then destroy the socket.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stall: (ms?: number) => StallReply = internal.stall

// -------------------------------------------------------------------------------------------------
// handlers
// -------------------------------------------------------------------------------------------------

/**
 * The rule-based handler used when nothing else answers (see the module documentation). Probes and unknown
 * prompts get `ok`.
 *
 * @since 0.1.0
 * @category handlers
 */
export const defaultHandler: (request: RecordedRequest) => Reply = internal.defaultHandler

/**
 * A handler that answers each non-probe request with the next of `replies`, then delegates to `fallback`
 * (default `defaultHandler`). The handler keeps its own position: use it for one server.
 *
 * @since 0.1.0
 * @category handlers
 */
export const script: (replies: Iterable<Reply>, fallback?: Handler) => Handler = internal.script

// -------------------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category guards
 */
export const isErrorReply: (reply: Reply) => reply is ErrorReply = internal.isErrorReply

/**
 * @since 0.1.0
 * @category guards
 */
export const isStallReply: (reply: Reply) => reply is StallReply = internal.isStallReply

/**
 * @since 0.1.0
 * @category guards
 */
export const isMessageReply: (reply: Reply) => reply is MessageReply = internal.isMessageReply
