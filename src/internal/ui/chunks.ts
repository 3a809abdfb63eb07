/** @internal */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Message from "../../Message.js"
import * as PartialMessages from "../../PartialMessages.js"
import type * as Api from "../../UIMessageStream.js"

// ---------------------------------------------------------------------------------------------------------------------
// state
// ---------------------------------------------------------------------------------------------------------------------

interface ToolInfo {
  readonly name: string
  readonly parentToolCallId: string | null
  /** The input is complete (`tool-input-available` went out). */
  readonly available: boolean
  /** A `tool-approval-request` went out for it. */
  readonly approvalSent: boolean
  /** Its result went out. */
  readonly done: boolean
}

/** @internal */
export interface State {
  readonly started: boolean
  readonly partial: PartialMessages.State
  readonly tools: ReadonlyMap<string, ToolInfo>
  /** Approval requests for calls whose input has not gone out yet, by tool call id. */
  readonly waiting: ReadonlyMap<string, Api.ApprovalRequest>
  /** Text, reasoning and tool-input parts started and not ended. */
  readonly open: ReadonlySet<string>
  /** An approval request (or a call the browser answers) went out since the last {@link takePause}. */
  readonly pauseRequested: boolean
  readonly lastResult: Message.ResultMessage | undefined
  readonly sessionId: string | undefined
  readonly model: string | undefined
}

/** @internal */
export const initial: State = {
  started: false,
  partial: PartialMessages.initial,
  tools: new Map(),
  waiting: new Map(),
  open: new Set(),
  pauseRequested: false,
  lastResult: undefined,
  sessionId: undefined,
  model: undefined
}

const withEntry = <K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> => new Map(map).set(key, value)

const without = <K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> => {
  if (!map.has(key)) return map
  const copy = new Map(map)
  copy.delete(key)
  return copy
}

const opened = (set: ReadonlySet<string>, id: string): ReadonlySet<string> => new Set(set).add(id)

const closed = (set: ReadonlySet<string>, id: string): ReadonlySet<string> => {
  if (!set.has(id)) return set
  const copy = new Set(set)
  copy.delete(id)
  return copy
}

const updateTool = (state: State, id: string, patch: Partial<ToolInfo>): State => {
  const tool = state.tools.get(id)
  return tool === undefined ? state : { ...state, tools: withEntry(state.tools, id, { ...tool, ...patch }) }
}

// ---------------------------------------------------------------------------------------------------------------------
// ids and metadata
// ---------------------------------------------------------------------------------------------------------------------

/** The id of a text or reasoning part: the API message id and the block's index, so history gives the same id. */
export const partId = (messageId: string, index: number): string => `${messageId}:${index}`

/** The approval id of a tool call: derived from the call, so history and a later response name it the same. */
export const approvalIdOf = (toolCallId: string): string => `approval:${toolCallId}`

const subagentMetadata = (parentToolCallId: string | null) =>
  parentToolCallId === null ? {} : { providerMetadata: { claudeCode: { parentToolCallId } } }

const toolMetadata = (parentToolCallId: string | null) =>
  parentToolCallId === null ? {} : { toolMetadata: { parentToolCallId } }

// ---------------------------------------------------------------------------------------------------------------------
// tool results
// ---------------------------------------------------------------------------------------------------------------------

/**
 * What the CLI records of a tool call it did not run because a permission was denied: `tool_result_meta` on the
 * live `user` message (`permissionDecision` in the transcript). Not modeled by `Message.UserMessage`, so parsed here.
 */
const ToolResultMeta = Schema.Struct({
  tool_result_meta: Schema.Array(Schema.Struct({
    id: Schema.String,
    permission_decision: Schema.optional(Schema.Struct({ decision: Schema.String }))
  }))
})
const decodeMeta = Schema.decodeUnknownOption(ToolResultMeta)

const rejectedIds = (message: Message.UserMessage): ReadonlySet<string> => {
  const meta = decodeMeta(message)
  if (Option.isNone(meta)) return new Set()
  return new Set(
    meta.value.tool_result_meta.filter((m) => m.permission_decision?.decision === "reject").map((m) => m.id)
  )
}

/** A tool result as the transcript and the live stream both carry it. */
export interface ToolResult {
  readonly block: Message.ToolResultBlock
  /** The tool's structured output when the message carries one result only. */
  readonly structured: unknown
  /** The call was not run because a permission was denied. */
  readonly rejected: boolean
}

/** The results of a user message (live or from a transcript). */
export const toolResults = (
  content: Message.UserContent,
  structured: unknown,
  rejected: ReadonlySet<string>
): ReadonlyArray<ToolResult> => {
  const blocks = typeof content === "string"
    ? []
    : content.filter((b): b is Message.ToolResultBlock => b.type === "tool_result")
  return blocks.map((block) => ({
    block,
    structured: blocks.length === 1 ? structured : undefined,
    rejected: rejected.has(block.tool_use_id)
  }))
}

/** The final state of a tool call from its result: the part fields history writes and the chunks the stream sends. */
export type Outcome =
  | { readonly state: "output-available"; readonly output: unknown }
  | { readonly state: "output-error"; readonly errorText: string }
  | { readonly state: "output-denied"; readonly reason: string }

export const outcomeOf = (result: ToolResult): Outcome => {
  const text = Message.toolResultText(result.block)
  if (result.rejected) return { state: "output-denied", reason: text }
  if (result.block.is_error === true) return { state: "output-error", errorText: text }
  return { state: "output-available", output: result.structured ?? result.block.content ?? "" }
}

const resultChunks = (state: State, result: ToolResult, out: Array<Api.UIMessageChunk>): State => {
  const toolCallId = result.block.tool_use_id
  const tool = state.tools.get(toolCallId)
  // a result for a call this stream never showed (an earlier turn's) would make the client fail
  if (tool === undefined || tool.done || !tool.available) return state
  const outcome = outcomeOf(result)
  const common = { toolCallId, providerExecuted: true, dynamic: true, ...toolMetadata(tool.parentToolCallId) }
  switch (outcome.state) {
    case "output-available":
      out.push({ type: "tool-output-available", ...common, output: outcome.output })
      break
    case "output-error":
      out.push({ type: "tool-output-error", ...common, errorText: outcome.errorText })
      break
    case "output-denied": {
      const approvalId = approvalIdOf(toolCallId)
      if (!tool.approvalSent) out.push({ type: "tool-approval-request", approvalId, toolCallId })
      out.push({ type: "tool-approval-response", approvalId, approved: false, reason: outcome.reason })
      out.push({ type: "tool-output-denied", toolCallId })
      break
    }
  }
  return updateTool(state, toolCallId, { done: true, approvalSent: true })
}

// ---------------------------------------------------------------------------------------------------------------------
// events of the assembler
// ---------------------------------------------------------------------------------------------------------------------

const approvalChunks = (
  state: State,
  request: Api.ApprovalRequest,
  out: Array<Api.UIMessageChunk>
): State => {
  const tool = state.tools.get(request.toolUseId)
  if (tool === undefined || !tool.available) {
    return { ...state, waiting: withEntry(state.waiting, request.toolUseId, request) }
  }
  if (tool.done) return state
  if (request.kind === "approval" && !tool.approvalSent) {
    out.push({
      type: "tool-approval-request",
      approvalId: approvalIdOf(request.toolUseId),
      toolCallId: request.toolUseId,
      ...(request.reason !== undefined ? { reason: request.reason } : {})
    })
  }
  const next = request.kind === "approval" ? updateTool(state, request.toolUseId, { approvalSent: true }) : state
  return { ...next, pauseRequested: true }
}

const onToolAvailable = (
  state: State,
  event: PartialMessages.ToolInputAvailable,
  options: Api.Options,
  out: Array<Api.UIMessageChunk>
): State => {
  const clientTool = options.clientTools?.includes(event.toolName) === true
  let next: State = {
    ...state,
    open: closed(state.open, event.toolUseId),
    tools: withEntry(state.tools, event.toolUseId, {
      name: event.toolName,
      parentToolCallId: event.parentToolUseId,
      available: true,
      approvalSent: false,
      done: false
    })
  }
  out.push({
    type: "tool-input-available",
    toolCallId: event.toolUseId,
    toolName: event.toolName,
    input: event.input,
    providerExecuted: !clientTool,
    dynamic: true,
    ...toolMetadata(event.parentToolUseId)
  })
  const waiting = next.waiting.get(event.toolUseId)
  if (waiting !== undefined) {
    next = { ...next, waiting: without(next.waiting, event.toolUseId) }
    next = approvalChunks(next, waiting, out)
  }
  return next
}

const onEvent = (
  state: State,
  event: PartialMessages.UiEvent,
  options: Api.Options,
  out: Array<Api.UIMessageChunk>
): State => {
  switch (event.type) {
    case "message-start": {
      out.push({ type: "start-step" })
      return state
    }
    case "message-finish": {
      out.push({ type: "finish-step" })
      return state
    }
    case "text-start":
    case "thinking-start": {
      const id = partId(event.messageId, event.index)
      out.push({
        type: event.type === "text-start" ? "text-start" : "reasoning-start",
        id,
        ...subagentMetadata(event.parentToolUseId)
      })
      return { ...state, open: opened(state.open, id) }
    }
    case "text-delta":
    case "thinking-delta": {
      const id = partId(event.messageId, event.index)
      out.push({ type: event.type === "text-delta" ? "text-delta" : "reasoning-delta", id, delta: event.delta })
      return state
    }
    case "text-end":
    case "thinking-end": {
      const id = partId(event.messageId, event.index)
      out.push({ type: event.type === "text-end" ? "text-end" : "reasoning-end", id })
      return { ...state, open: closed(state.open, id) }
    }
    case "tool-input-start": {
      const clientTool = options.clientTools?.includes(event.toolName) === true
      out.push({
        type: "tool-input-start",
        toolCallId: event.toolUseId,
        toolName: event.toolName,
        providerExecuted: !clientTool,
        dynamic: true,
        ...toolMetadata(event.parentToolUseId)
      })
      return { ...state, open: opened(state.open, event.toolUseId) }
    }
    case "tool-input-delta": {
      out.push({ type: "tool-input-delta", toolCallId: event.toolUseId, inputTextDelta: event.delta })
      return state
    }
    case "tool-input-available":
      return onToolAvailable(state, event, options, out)
    case "tool-input-error": {
      out.push({
        type: "tool-input-error",
        toolCallId: event.toolUseId,
        toolName: event.toolName,
        input: event.inputText,
        providerExecuted: true,
        dynamic: true,
        errorText: event.reason === "abandoned" ? "The tool call was cut short." : "The tool input is not valid JSON.",
        ...toolMetadata(event.parentToolUseId)
      })
      return { ...state, open: closed(state.open, event.toolUseId) }
    }
    case "message":
      return onMessage(state, event.message, out)
    case "tool-output-available":
    case "content-block":
      return state
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// whole messages
// ---------------------------------------------------------------------------------------------------------------------

/** The metadata the stream sends: the session, the model, and at the end of a turn its cost and usage. */
export const resultMetadata = (result: Message.ResultMessage): Api.MessageMetadata => ({
  sessionId: result.session_id,
  costUsd: result.total_cost_usd,
  durationMs: result.duration_ms,
  numTurns: result.num_turns,
  usage: {
    inputTokens: result.usage.input_tokens ?? 0,
    outputTokens: result.usage.output_tokens ?? 0,
    ...(result.usage.cache_read_input_tokens != null
      ? { cacheReadInputTokens: result.usage.cache_read_input_tokens }
      : {}),
    ...(result.usage.cache_creation_input_tokens != null
      ? { cacheCreationInputTokens: result.usage.cache_creation_input_tokens }
      : {})
  }
})

const onMessage = (state: State, message: Message.SdkMessage, out: Array<Api.UIMessageChunk>): State => {
  switch (message.type) {
    case "system": {
      if (message.subtype !== "init" || state.sessionId === message.session_id) return state
      out.push({ type: "message-metadata", messageMetadata: { sessionId: message.session_id, model: message.model } })
      return { ...state, sessionId: message.session_id, model: message.model }
    }
    case "user": {
      let next = state
      const rejected = rejectedIds(message)
      for (const result of toolResults(message.message.content, message.tool_use_result, rejected)) {
        next = resultChunks(next, result, out)
      }
      return next
    }
    case "result": {
      out.push({ type: "message-metadata", messageMetadata: resultMetadata(message) })
      return { ...state, lastResult: message }
    }
    default:
      return state
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// the machine
// ---------------------------------------------------------------------------------------------------------------------

const startChunk = (options: Api.Options): Api.UIMessageChunk =>
  options.messageId === undefined ? { type: "start" } : { type: "start", messageId: options.messageId }

/** @internal */
export const step = (
  state: State,
  input: Api.Input,
  options: Api.Options = {}
): readonly [State, ReadonlyArray<Api.UIMessageChunk>] => {
  const out: Array<Api.UIMessageChunk> = []
  let next = state
  if (!next.started) {
    out.push(startChunk(options))
    next = { ...next, started: true }
  }
  if (input.type === "approval_request") {
    return [approvalChunks(next, input, out), out]
  }
  const [partial, events] = PartialMessages.step(next.partial, input, { passThrough: "others" })
  next = { ...next, partial }
  for (const event of events) next = onEvent(next, event, options, out)
  return [next, out]
}

/** The finish reason of a turn from its result. */
export const finishReasonOf = (result: Message.ResultMessage | undefined): Api.FinishReason => {
  if (result === undefined) return "other"
  if (result.is_error) return "error"
  switch (result.subtype) {
    case "success": {
      switch (result.stop_reason) {
        case "max_tokens":
        case "model_context_window_exceeded":
          return "length"
        case "refusal":
          return "content-filter"
        case "tool_use":
          return "tool-calls"
        default:
          return "stop"
      }
    }
    case "error_max_turns":
    case "error_max_budget_usd":
      return "length"
    default:
      return "error"
  }
}

/** `true` when the turn was interrupted (the CLI's `terminal_reason` is `aborted_*`). */
export const wasInterrupted = (result: Message.ResultMessage | undefined): boolean =>
  result?.terminal_reason?.startsWith("aborted") === true

/** @internal */
export const flush = (state: State, options: Api.Options = {}): ReadonlyArray<Api.UIMessageChunk> => {
  const out: Array<Api.UIMessageChunk> = []
  let next = state
  if (!next.started) out.push(startChunk(options))
  for (const event of PartialMessages.flush(next.partial)) next = onEvent(next, event, options, out)
  const result = next.lastResult
  if (result !== undefined && (result.terminal_reason === "api_error" || typeof result.api_error_status === "number")) {
    const status = result.api_error_status
    out.push({
      type: "error",
      errorText: typeof status === "number" ? `The model API failed (status ${status}).` : "The model API failed."
    })
  }
  if (wasInterrupted(result)) out.push({ type: "abort", reason: "interrupted" })
  else out.push({ type: "finish", finishReason: finishReasonOf(result) })
  return out
}

/** @internal */
export const takePause = (state: State): readonly [boolean, State] =>
  state.pauseRequested && state.open.size === 0 ? [true, { ...state, pauseRequested: false }] : [false, state]
