/**
 * Chat-UI events from partial messages: {@link assemble} turns the `stream_event` messages of a session (present
 * with `includePartialMessages: true`) into complete typed content blocks and incremental events — text, thinking
 * and tool input as they stream, tool input parsed when its block ends, tool output when the CLI reports the
 * result, and the start and finish of every API message.
 *
 * The event names follow the UI message stream of the Vercel AI SDK (`text-start` / `text-delta` / `text-end`,
 * `tool-input-available`, `tool-output-available`, …), so they map one to one onto common chat components.
 *
 * What it handles:
 * - interleaved blocks, by `index`; tool input split into any number of `input_json_delta` fragments;
 * - thinking with its `signature_delta`;
 * - several API messages per turn, and subagents: events keep the `parentToolUseId` of their message, and each
 *   agent (parent) has its own current message, so interleaved subagent streams do not mix;
 * - interrupts: blocks that never stopped are ended with `abandoned: true` (a tool call gets a `tool-input-error`
 *   with reason `abandoned`) and the message finishes with `abandoned: true` — on the CLI's synthetic
 *   `message_stop` (with `abandoned_blocks`), at the turn's `result`, or when the stream ends;
 * - a tool input that is not valid JSON: a `tool-input-error` with reason `invalid_json`, never a failure;
 * - replies that were not streamed (partial messages off, or the CLI's non-streaming retry after a dropped
 *   connection): their complete `assistant` messages are turned into the same events.
 *
 * The state machine is pure ({@link initial}, {@link step}, {@link flush}), e.g. for a React reducer; {@link assemble}
 * runs it over a `Stream`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 * import { ClaudeAgent, NodeClaudeAgent, PartialMessages } from "effect-claude-agent"
 *
 * const program = ClaudeAgent.query("Explain monads briefly", { includePartialMessages: true }).pipe(
 *   PartialMessages.assemble,
 *   Stream.runForEach((event) => {
 *     switch (event.type) {
 *       case "text-delta":
 *         return Effect.sync(() => process.stdout.write(event.delta))
 *       case "tool-input-available":
 *         return Effect.log(`calling ${event.toolName}`, event.input)
 *       case "message-finish":
 *         return Effect.log(`stop: ${event.stopReason}`)
 *       default:
 *         return Effect.void
 *     }
 *   })
 * )
 *
 * Effect.runPromise(program.pipe(Effect.provide(NodeClaudeAgent.layer)))
 * ```
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/session/partialMessages.js"
import type * as Message from "./Message.js"

// ---------------------------------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Fields of the events of one content block of one API message.
 *
 * @since 0.1.0
 * @category events
 */
export interface BlockEventFields {
  /** The API message id (`msg_…`). */
  readonly messageId: string
  /** The block's index in its message. */
  readonly index: number
  /** The `Task` tool call that started the subagent this message belongs to; `null` for the main agent. */
  readonly parentToolUseId: string | null
}

/**
 * An API message started.
 *
 * @since 0.1.0
 * @category events
 */
export interface MessageStart {
  readonly type: "message-start"
  readonly messageId: string
  readonly parentToolUseId: string | null
  readonly sessionId: string
  readonly model: string | undefined
  /** Usage as reported at the start (input tokens). */
  readonly usage: Message.Usage | undefined
}

/**
 * An API message ended.
 *
 * @since 0.1.0
 * @category events
 */
export interface MessageFinish {
  readonly type: "message-finish"
  readonly messageId: string
  readonly parentToolUseId: string | null
  /** `end_turn`, `tool_use`, `max_tokens`, …; `null` when the message was interrupted. */
  readonly stopReason: string | null
  readonly stopSequence: string | null
  /** The start usage updated by the final `message_delta`. */
  readonly usage: Message.Usage | undefined
  /**
   * The complete blocks of the message, by index: those that ended, minus those the CLI reported abandoned and
   * tool calls whose input was not valid JSON.
   */
  readonly content: ReadonlyArray<Message.ContentBlock>
  /** `true` when the message was cut short (interrupt, or the stream ended before `message_stop`). */
  readonly abandoned: boolean
}

/**
 * @since 0.1.0
 * @category events
 */
export interface TextStart extends BlockEventFields {
  readonly type: "text-start"
}

/**
 * @since 0.1.0
 * @category events
 */
export interface TextDelta extends BlockEventFields {
  readonly type: "text-delta"
  readonly delta: string
}

/**
 * A text block ended; `text` is all of it.
 *
 * @since 0.1.0
 * @category events
 */
export interface TextEnd extends BlockEventFields {
  readonly type: "text-end"
  readonly text: string
  readonly block: Message.TextBlock
  /** `true` when the block never stopped (interrupt); `text` is what had arrived. */
  readonly abandoned: boolean
}

/**
 * @since 0.1.0
 * @category events
 */
export interface ThinkingStart extends BlockEventFields {
  readonly type: "thinking-start"
}

/**
 * @since 0.1.0
 * @category events
 */
export interface ThinkingDelta extends BlockEventFields {
  readonly type: "thinking-delta"
  readonly delta: string
}

/**
 * A thinking block ended; `thinking` is all of it.
 *
 * @since 0.1.0
 * @category events
 */
export interface ThinkingEnd extends BlockEventFields {
  readonly type: "thinking-end"
  readonly thinking: string
  /** From the `signature_delta`, when one arrived. */
  readonly signature: string | undefined
  readonly block: Message.ThinkingBlock
  readonly abandoned: boolean
}

/**
 * The kind of block a tool call is: a client tool (`tool_use`), a server tool (`server_tool_use`: web search, …) or
 * an MCP connector tool (`mcp_tool_use`).
 *
 * @since 0.1.0
 * @category events
 */
export type ToolBlockType = "tool_use" | "server_tool_use" | "mcp_tool_use"

/**
 * A tool call started; its input streams next.
 *
 * @since 0.1.0
 * @category events
 */
export interface ToolInputStart extends BlockEventFields {
  readonly type: "tool-input-start"
  readonly toolUseId: string
  readonly toolName: string
  readonly blockType: ToolBlockType
}

/**
 * A fragment of a tool call's JSON input (concatenate them for the JSON text so far).
 *
 * @since 0.1.0
 * @category events
 */
export interface ToolInputDelta extends BlockEventFields {
  readonly type: "tool-input-delta"
  readonly toolUseId: string
  readonly delta: string
}

/**
 * A tool call's input is complete and parsed.
 *
 * @since 0.1.0
 * @category events
 */
export interface ToolInputAvailable extends BlockEventFields {
  readonly type: "tool-input-available"
  readonly toolUseId: string
  readonly toolName: string
  readonly input: unknown
  readonly block: Message.ToolUseBlock | Message.ServerToolUseBlock | Message.McpToolUseBlock
}

/**
 * A tool call's input could not be completed: its JSON does not parse (`invalid_json`, `error` says why), or the
 * block never stopped (`abandoned`).
 *
 * @since 0.1.0
 * @category events
 */
export interface ToolInputError extends BlockEventFields {
  readonly type: "tool-input-error"
  readonly toolUseId: string
  readonly toolName: string
  readonly reason: "invalid_json" | "abandoned"
  /** The JSON text received. */
  readonly inputText: string
  readonly error: string
}

/**
 * A tool's result, from the `tool_result` block of the `user` message the CLI writes after running it.
 *
 * @since 0.1.0
 * @category events
 */
export interface ToolOutputAvailable {
  readonly type: "tool-output-available"
  readonly toolUseId: string
  /** The tool's name when its call was seen on this stream. */
  readonly toolName: string | undefined
  readonly parentToolUseId: string | null
  /** The result's content: a string or content blocks. */
  readonly output: Message.ToolResultBlock["content"]
  /** The text parts of the result joined. */
  readonly text: string
  readonly isError: boolean
  /** The tool's structured output (`tool_use_result` of the user message), when the CLI sent one. */
  readonly toolUseResult: unknown
  readonly block: Message.ToolResultBlock
}

/**
 * A complete block of another kind: redacted thinking, a server tool's result, a block unknown to this SDK, ….
 *
 * @since 0.1.0
 * @category events
 */
export interface ContentBlockEvent extends BlockEventFields {
  readonly type: "content-block"
  readonly block: Message.ContentBlock
  readonly abandoned: boolean
}

/**
 * An original message of the input stream (see {@link Options.passThrough}).
 *
 * @since 0.1.0
 * @category events
 */
export interface MessageEvent {
  readonly type: "message"
  readonly message: Message.SdkMessage
}

/**
 * Everything {@link assemble} yields.
 *
 * @since 0.1.0
 * @category events
 */
export type UiEvent =
  | MessageStart
  | MessageFinish
  | TextStart
  | TextDelta
  | TextEnd
  | ThinkingStart
  | ThinkingDelta
  | ThinkingEnd
  | ToolInputStart
  | ToolInputDelta
  | ToolInputAvailable
  | ToolInputError
  | ToolOutputAvailable
  | ContentBlockEvent
  | MessageEvent

// ---------------------------------------------------------------------------------------------------------------------
// assembling
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Options of {@link assembleWith} and {@link step}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /**
   * Which input messages to yield as they are, as `{ type: "message", message }`, after the events derived from
   * them: `"none"`, `"others"` (every message except `stream_event`s: assistant, user, system, result, …) or
   * `"all"`. Defaults to `"none"`.
   */
  readonly passThrough?: "none" | "others" | "all" | undefined
}

/**
 * The state of the assembler between two messages. Treat it as opaque.
 *
 * @since 0.1.0
 * @category state
 */
export type State = internal.State

/**
 * The state before the first message.
 *
 * @since 0.1.0
 * @category state
 */
export const initial: State = internal.initial

/**
 * Feeds one message: returns the next state and the events it produced. Pure.
 *
 * @since 0.1.0
 * @category state
 */
export const step = (
  state: State,
  message: Message.SdkMessage,
  options?: Options
): readonly [State, ReadonlyArray<UiEvent>] => internal.step(state, message, options)

/**
 * Ends every message still open (as abandoned) — what {@link assemble} does when its input ends.
 *
 * @since 0.1.0
 * @category state
 */
export const flush = (state: State): ReadonlyArray<UiEvent> => internal.flush(state)

/**
 * Turns a stream of SDK messages into {@link UiEvent}s. Errors of the input pass through; when the input ends,
 * messages still open are finished as abandoned. `stream.pipe(PartialMessages.assemble)`; see {@link assembleWith}
 * for options.
 *
 * @since 0.1.0
 * @category combinators
 */
export const assemble = <E, R>(self: Stream.Stream<Message.SdkMessage, E, R>): Stream.Stream<UiEvent, E, R> =>
  internal.assemble(self)

/**
 * {@link assemble} with options: `stream.pipe(PartialMessages.assembleWith({ passThrough: "others" }))` or
 * `PartialMessages.assembleWith(stream, options)`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const assembleWith: {
  (options: Options): <E, R>(self: Stream.Stream<Message.SdkMessage, E, R>) => Stream.Stream<UiEvent, E, R>
  <E, R>(self: Stream.Stream<Message.SdkMessage, E, R>, options: Options): Stream.Stream<UiEvent, E, R>
} = dual(
  2,
  <E, R>(self: Stream.Stream<Message.SdkMessage, E, R>, options: Options): Stream.Stream<UiEvent, E, R> =>
    internal.assemble(self, options)
)
