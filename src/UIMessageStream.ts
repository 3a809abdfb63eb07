/**
 * A turn of Claude Code as the Vercel AI SDK's **UI message stream** (`effect-claude-agent/ui`): the exact chunks
 * (`UIMessageChunk`) that `useChat` / `Chat` (`ai` 5 to 7, stream protocol `v1`) read, as server-sent events with the
 * `x-vercel-ai-ui-message-stream: v1` header. The protocol is plain JSON: this module writes it without the `ai`
 * package (the tests judge it with `ai`'s own `uiMessageChunkSchema`, `readUIMessageStream` and `Chat`).
 *
 * What a turn becomes:
 * - `start` (with the `messageId` you pass), then a `start-step` / `finish-step` pair per API message;
 * - text and thinking as `text-*` / `reasoning-*` with stable ids (`<API message id>:<block index>`, which
 *   {@link ChatHistory} gives too);
 * - every tool call as a dynamic tool (`dynamic: true`, `providerExecuted: true`: the CLI runs it):
 *   `tool-input-start` / `-delta` / `-available` (or `-error` for input that is not valid JSON), then
 *   `tool-output-available` with the tool's structured output (`tool_use_result`, else the result's content),
 *   `tool-output-error` for a failed call, and `tool-approval-request` + `tool-approval-response` (denied) +
 *   `tool-output-denied` for a call a permission denied;
 * - a subagent's text, reasoning and tool calls as parts of the same message, tagged with the tool call that started
 *   the subagent: `toolMetadata.parentToolCallId` on tool parts, `providerMetadata.claudeCode.parentToolCallId` on
 *   text and reasoning parts (group them under that call's card);
 * - `message-metadata` with the session id and model at the start, and the cost, usage and duration at the end;
 * - `finish` with the finish reason; `abort` for a turn the CLI reports interrupted; `error` with a fixed text that
 *   never carries the error itself (pass `onError` to choose the text; log the error on the server).
 *
 * Permissions in the browser: feed an {@link ApprovalRequest} (what `canUseTool` was asked) into the same stream and
 * a `tool-approval-request` goes out once the call's input has (see {@link ChatServer} for the whole flow).
 *
 * Older clients: `ai` 5 and 6 read the same chunk types; their `uiMessageChunkSchema` is strict, so a client
 * older than the tool approval chunks (`ai` < 5.1) rejects a stream that contains one.
 *
 * @example
 * ```ts
 * import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
 * import * as Stream from "effect/Stream"
 * import { ClaudeAgent } from "effect-claude-agent"
 * import { UIMessageStream } from "effect-claude-agent/ui"
 *
 * const answer = (prompt: string): HttpServerResponse.HttpServerResponse =>
 *   ClaudeAgent.query(prompt, { includePartialMessages: true }).pipe(
 *     UIMessageStream.fromMessages({ messageId: crypto.randomUUID() }),
 *     UIMessageStream.toHttpServerResponse
 *   )
 * ```
 *
 * @since 0.1.0
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { dual } from "effect/Function"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import * as internal from "./internal/ui/chunks.js"
import * as sse from "./internal/ui/sse.js"
import type * as Message from "./Message.js"

// ---------------------------------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonValue = null | string | number | boolean | JsonObject | Array<JsonValue>

/**
 * A JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { [key: string]: JsonValue | undefined }

/**
 * Provider-specific fields, by provider (this SDK writes `claudeCode`).
 *
 * @since 0.1.0
 * @category models
 */
export type ProviderMetadata = Record<string, JsonObject>

// ---------------------------------------------------------------------------------------------------------------------
// chunks
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Why a response ended (`finish.finishReason`).
 *
 * @since 0.1.0
 * @category chunks
 */
export type FinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "interrupted" | "other"

/**
 * What {@link fromMessages} puts in `message-metadata` chunks (merged by the client into `UIMessage.metadata`).
 *
 * @since 0.1.0
 * @category chunks
 */
export interface MessageMetadata {
  [key: string]: JsonValue | undefined
  /** The CLI session that answered (resume it to continue the conversation). */
  sessionId?: string
  model?: string
  /** The turn's cost in USD, as the CLI computes it. */
  costUsd?: number
  durationMs?: number
  /** API requests in the turn. */
  numTurns?: number
  usage?: {
    inputTokens: number
    outputTokens: number
    cacheReadInputTokens?: number
    cacheCreationInputTokens?: number
  }
}

/**
 * Fields of the chunks of a tool call.
 *
 * @since 0.1.0
 * @category chunks
 */
export interface ToolChunkFields {
  toolCallId: string
  /** `true`: the CLI runs the tool (`false` for a tool the browser answers, see {@link Options.clientTools}). */
  providerExecuted?: boolean
  /** Always `true`: the CLI's tools are not declared to the client. */
  dynamic?: boolean
  /** `{ parentToolCallId }` for a subagent's call. */
  toolMetadata?: JsonObject
}

/**
 * One chunk of the UI message stream: the members of the AI SDK's `UIMessageChunk` this SDK writes, field for field
 * (a type-level test checks each against `ai`'s).
 *
 * @since 0.1.0
 * @category chunks
 */
export type UIMessageChunk =
  | { type: "start"; messageId?: string; messageMetadata?: MessageMetadata }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "text-delta"; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: "text-end"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-start"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-delta"; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-end"; id: string; providerMetadata?: ProviderMetadata }
  | ({ type: "tool-input-start"; toolName: string } & ToolChunkFields)
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | ({ type: "tool-input-available"; toolName: string; input: unknown } & ToolChunkFields)
  | ({ type: "tool-input-error"; toolName: string; input: unknown; errorText: string } & ToolChunkFields)
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string; reason?: string }
  | { type: "tool-approval-response"; approvalId: string; approved: boolean; reason?: string }
  | ({ type: "tool-output-available"; output: unknown } & ToolChunkFields)
  | ({ type: "tool-output-error"; errorText: string } & ToolChunkFields)
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "message-metadata"; messageMetadata: MessageMetadata }
  | { type: "finish"; finishReason?: FinishReason; messageMetadata?: MessageMetadata }
  | { type: "abort"; reason?: string }
  | { type: "error"; errorText: string }

// ---------------------------------------------------------------------------------------------------------------------
// messages
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A tool call's approval, as the client records it on the tool part.
 *
 * @since 0.1.0
 * @category messages
 */
export interface ToolApproval {
  id: string
  approved?: boolean
  reason?: string
}

/**
 * A tool call of a message (`type: "dynamic-tool"`), in its current state.
 *
 * @since 0.1.0
 * @category messages
 */
export type DynamicToolPart =
  & {
    type: "dynamic-tool"
    toolName: string
    toolCallId: string
    title?: string
    toolMetadata?: JsonObject
    providerExecuted?: boolean
  }
  & (
    | { state: "input-streaming"; input?: unknown }
    | { state: "input-available"; input: unknown }
    | { state: "approval-requested"; input: unknown; approval: { id: string } }
    | { state: "approval-responded"; input: unknown; approval: { id: string; approved: boolean; reason?: string } }
    | {
      state: "output-available"
      input: unknown
      output: unknown
      approval?: { id: string; approved: true; reason?: string }
    }
    | {
      state: "output-error"
      input: unknown
      errorText: string
      approval?: { id: string; approved: true; reason?: string }
    }
    | { state: "output-denied"; input: unknown; approval: { id: string; approved: false; reason?: string } }
  )

/**
 * The parts of a {@link UIMessage} this SDK writes (history) and reads (requests): text, reasoning, tool calls and
 * step boundaries.
 *
 * @since 0.1.0
 * @category messages
 */
export type UIMessagePart =
  | { type: "text"; text: string; state?: "streaming" | "done"; providerMetadata?: ProviderMetadata }
  | { type: "reasoning"; id?: string; text: string; state?: "streaming" | "done"; providerMetadata?: ProviderMetadata }
  | DynamicToolPart
  | { type: "step-start" }

/**
 * A message of a chat, as the AI SDK's `UIMessage` (assignable to it).
 *
 * @since 0.1.0
 * @category messages
 */
export interface UIMessage {
  id: string
  role: "system" | "user" | "assistant"
  metadata?: MessageMetadata
  parts: Array<UIMessagePart>
}

// ---------------------------------------------------------------------------------------------------------------------
// the machine
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A permission the CLI asked for (`canUseTool`) that the browser decides, fed into the stream beside the SDK
 * messages. `kind: "approval"` sends a `tool-approval-request` (approval id `approval:<toolCallId>`) once the call's
 * input has gone out; `kind: "input"` sends nothing (the call is a client tool the browser answers with
 * `addToolOutput`, see {@link Options.clientTools}).
 *
 * @since 0.1.0
 * @category inputs
 */
export interface ApprovalRequest {
  readonly type: "approval_request"
  readonly toolUseId: string
  readonly kind: "approval" | "input"
  /** Why the CLI asks (shown with the request). */
  readonly reason?: string | undefined
}

/**
 * What the machine reads: the SDK messages of a turn (with or without partial messages) and approval requests.
 *
 * @since 0.1.0
 * @category inputs
 */
export type Input = Message.SdkMessage | ApprovalRequest

/**
 * Options of {@link fromMessages}, {@link step} and {@link flush}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /** The id of the assistant message (`start.messageId`). Leave `undefined` to let the client choose one. */
  readonly messageId?: string | undefined
  /**
   * Tools the browser answers with `addToolOutput` (`providerExecuted: false`, so `useChat`'s `onToolCall` sees
   * them), e.g. `["AskUserQuestion"]`. Defaults to none.
   */
  readonly clientTools?: ReadonlyArray<string> | undefined
  /**
   * The `errorText` of the `error` chunk for a failed stream. Defaults to `"The agent failed."`: the error itself
   * (a stderr tail, a path, a request) never goes to the browser.
   */
  readonly onError?: ((error: unknown) => string) | undefined
}

/**
 * The machine's state between two inputs. Treat it as opaque.
 *
 * @since 0.1.0
 * @category state
 */
export type State = internal.State

/**
 * The state before the first input.
 *
 * @since 0.1.0
 * @category state
 */
export const initial: State = internal.initial

/**
 * Feeds one input: the next state and the chunks it produced (the first call also produces `start`). Pure.
 *
 * @since 0.1.0
 * @category state
 */
export const step: (state: State, input: Input, options?: Options) => readonly [State, ReadonlyArray<UIMessageChunk>] =
  internal.step

/**
 * Ends the stream: parts still open end, then `finish` with the last result's finish reason (or `abort` for an
 * interrupted turn, after an `error` for a turn that ended on an API error).
 *
 * @since 0.1.0
 * @category state
 */
export const flush: (state: State, options?: Options) => ReadonlyArray<UIMessageChunk> = internal.flush

/**
 * The approval id of a tool call's `tool-approval-request`.
 *
 * @since 0.1.0
 * @category state
 */
export const approvalId: (toolCallId: string) => string = internal.approvalIdOf

// ---------------------------------------------------------------------------------------------------------------------
// streams
// ---------------------------------------------------------------------------------------------------------------------

const isStream = (args: IArguments): boolean => Predicate.hasProperty(args[0], Stream.StreamTypeId)

/**
 * The UI message stream of a turn: `ClaudeAgent.query(prompt, { includePartialMessages: true }).pipe(
 * UIMessageStream.fromMessages({ messageId }))`. A failure of the input ends the stream with an `error` chunk (it
 * never fails); interrupting the stream interrupts the input (and reaps its CLI).
 *
 * @since 0.1.0
 * @category streams
 */
export const fromMessages: {
  (options?: Options): <E, R>(self: Stream.Stream<Input, E, R>) => Stream.Stream<UIMessageChunk, never, R>
  <E, R>(self: Stream.Stream<Input, E, R>, options?: Options): Stream.Stream<UIMessageChunk, never, R>
} = dual(
  isStream,
  <E, R>(self: Stream.Stream<Input, E, R>, options?: Options): Stream.Stream<UIMessageChunk, never, R> =>
    sse.fromMessages(self, options)
)

/**
 * The response headers of a UI message stream (`content-type: text/event-stream`,
 * `x-vercel-ai-ui-message-stream: v1`, no caching or proxy buffering).
 *
 * @since 0.1.0
 * @category encoding
 */
export const headers: Readonly<Record<string, string>> = sse.headers

/**
 * Options of the encoders.
 *
 * @since 0.1.0
 * @category encoding
 */
export interface EncodeOptions {
  /**
   * Send an SSE comment (`: keep-alive`) when nothing was sent for this long, so that proxies keep a quiet
   * connection (a long tool run) open. Leave `undefined` for none.
   */
  readonly keepAliveMs?: number | undefined
}

/**
 * Encodes chunks as server-sent events: `data: <json>\n\n` per chunk, then `data: [DONE]\n\n`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode: {
  (options?: EncodeOptions): <E, R>(self: Stream.Stream<UIMessageChunk, E, R>) => Stream.Stream<Uint8Array, E, R>
  <E, R>(self: Stream.Stream<UIMessageChunk, E, R>, options?: EncodeOptions): Stream.Stream<Uint8Array, E, R>
} = dual(
  isStream,
  <E, R>(self: Stream.Stream<UIMessageChunk, E, R>, options?: EncodeOptions): Stream.Stream<Uint8Array, E, R> =>
    sse.encode(self, options)
)

/**
 * An `@effect/platform` response streaming the chunks as a UI message stream (headers included). A client that
 * goes away interrupts the stream, and with it the query.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toHttpServerResponse: {
  (options?: EncodeOptions): (self: Stream.Stream<UIMessageChunk>) => HttpServerResponse.HttpServerResponse
  (self: Stream.Stream<UIMessageChunk>, options?: EncodeOptions): HttpServerResponse.HttpServerResponse
} = dual(
  isStream,
  (self: Stream.Stream<UIMessageChunk>, options?: EncodeOptions): HttpServerResponse.HttpServerResponse =>
    sse.toHttpServerResponse(self, options)
)

/**
 * For the Promise API: a web `Response` streaming the UI message stream of the messages of a query
 * (`effect-claude-agent/promise`'s `query(...)` with `includePartialMessages: true`), for a route handler
 * (`return UIMessageStream.toResponse(query({ prompt, options }), { messageId })`). Cancelling the body (the
 * client went away) ends the iteration, which closes the query.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toResponse: (
  messages: AsyncIterable<Input>,
  options?: Options & EncodeOptions & { readonly status?: number; readonly headers?: Record<string, string> }
) => Response = sse.toResponse
