/** @internal */
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"
import * as Message from "../../Message.js"
import type * as Api from "../../PartialMessages.js"

// ---------------------------------------------------------------------------------------------------------------------
// state
// ---------------------------------------------------------------------------------------------------------------------

type BlockState =
  | {
    readonly kind: "text"
    readonly index: number
    readonly text: string
    readonly citations: ReadonlyArray<unknown> | undefined
  }
  | {
    readonly kind: "thinking"
    readonly index: number
    readonly thinking: string
    readonly signature: string | undefined
  }
  | {
    readonly kind: "tool"
    readonly index: number
    readonly blockType: Api.ToolBlockType
    readonly id: string
    readonly name: string
    readonly serverName: string | undefined
    readonly startInput: unknown
    readonly json: string
  }
  | { readonly kind: "other"; readonly index: number; readonly block: Message.ContentBlock }

interface MessageState {
  readonly messageId: string
  readonly parentToolUseId: string | null
  /** `true` when its blocks arrive as stream events; `false` for a reply seen only as `assistant` messages. */
  readonly streamed: boolean
  readonly usage: Message.Usage | undefined
  readonly stopReason: string | null
  readonly stopSequence: string | null
  /** Blocks started and not stopped yet, by index. */
  readonly open: ReadonlyMap<number, BlockState>
  /** Blocks that ended, in the order they ended. */
  readonly done: ReadonlyArray<readonly [number, Message.ContentBlock]>
  /** Next block index of a reply that is not streamed. */
  readonly nextIndex: number
}

/** @internal */
export interface State {
  /** The current message of each agent: key `""` for the main agent, else the parent tool use id. */
  readonly messages: ReadonlyMap<string, MessageState>
  /** Ids of messages that were streamed in this turn (their `assistant` messages are then not re-emitted). */
  readonly streamedIds: ReadonlySet<string>
  /** Tool names by tool use id, for tool outputs. */
  readonly tools: ReadonlyMap<string, string>
  /** Counter for messages whose id never arrived. */
  readonly anonymous: number
}

/** @internal */
export const initial: State = { messages: new Map(), streamedIds: new Set(), tools: new Map(), anonymous: 0 }

const withEntry = <K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> => new Map(map).set(key, value)

const without = <K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> => {
  if (!map.has(key)) return map
  const copy = new Map(map)
  copy.delete(key)
  return copy
}

const keyOf = (parentToolUseId: string | null): string => parentToolUseId ?? ""

// ---------------------------------------------------------------------------------------------------------------------
// blocks
// ---------------------------------------------------------------------------------------------------------------------

const startBlock = (index: number, block: Message.ContentBlock): BlockState => {
  switch (block.type) {
    case "text":
      return { kind: "text", index, text: block.text, citations: block.citations ?? undefined }
    case "thinking":
      return {
        kind: "thinking",
        index,
        thinking: block.thinking,
        signature: block.signature !== undefined && block.signature.length > 0 ? block.signature : undefined
      }
    case "tool_use":
    case "server_tool_use":
    case "mcp_tool_use":
      return {
        kind: "tool",
        index,
        blockType: block.type,
        id: block.id,
        name: block.name,
        serverName: block.type === "mcp_tool_use" ? block.server_name : undefined,
        startInput: block.input,
        json: ""
      }
    default:
      return { kind: "other", index, block }
  }
}

const fields = (msg: MessageState, index: number): Api.BlockEventFields => ({
  messageId: msg.messageId,
  index,
  parentToolUseId: msg.parentToolUseId
})

const startEvents = (msg: MessageState, block: BlockState, out: Array<Api.UiEvent>) => {
  const f = fields(msg, block.index)
  switch (block.kind) {
    case "text": {
      out.push({ type: "text-start", ...f })
      if (block.text.length > 0) out.push({ type: "text-delta", ...f, delta: block.text })
      return
    }
    case "thinking": {
      out.push({ type: "thinking-start", ...f })
      if (block.thinking.length > 0) out.push({ type: "thinking-delta", ...f, delta: block.thinking })
      return
    }
    case "tool": {
      out.push({
        type: "tool-input-start",
        ...f,
        toolUseId: block.id,
        toolName: block.name,
        blockType: block.blockType
      })
      return
    }
    case "other":
      return
  }
}

const toolBlock = (
  block: Extract<BlockState, { kind: "tool" }>,
  input: unknown
): Message.ToolUseBlock | Message.ServerToolUseBlock | Message.McpToolUseBlock =>
  block.blockType === "mcp_tool_use"
    ? { type: "mcp_tool_use", id: block.id, name: block.name, server_name: block.serverName ?? "", input }
    : { type: block.blockType, id: block.id, name: block.name, input }

/** Emits the end of a block; returns the complete block, or `undefined` when there is none. */
const endBlock = (
  msg: MessageState,
  block: BlockState,
  abandoned: boolean,
  out: Array<Api.UiEvent>
): Message.ContentBlock | undefined => {
  const f = fields(msg, block.index)
  switch (block.kind) {
    case "text": {
      const complete: Message.TextBlock = block.citations === undefined
        ? { type: "text", text: block.text }
        : { type: "text", text: block.text, citations: block.citations }
      out.push({ type: "text-end", ...f, text: block.text, block: complete, abandoned })
      return complete
    }
    case "thinking": {
      const complete: Message.ThinkingBlock = block.signature === undefined
        ? { type: "thinking", thinking: block.thinking }
        : { type: "thinking", thinking: block.thinking, signature: block.signature }
      out.push({
        type: "thinking-end",
        ...f,
        thinking: block.thinking,
        signature: block.signature,
        block: complete,
        abandoned
      })
      return complete
    }
    case "tool": {
      const base = { ...f, toolUseId: block.id, toolName: block.name, inputText: block.json }
      if (abandoned) {
        out.push({ type: "tool-input-error", ...base, reason: "abandoned", error: "the tool call was cut short" })
        return undefined
      }
      let input: unknown
      if (block.json.trim().length === 0) input = block.startInput ?? {}
      else {
        try {
          input = JSON.parse(block.json)
        } catch (e) {
          out.push({
            type: "tool-input-error",
            ...base,
            reason: "invalid_json",
            error: e instanceof Error ? e.message : "invalid JSON"
          })
          return undefined
        }
      }
      const complete = toolBlock(block, input)
      out.push({
        type: "tool-input-available",
        ...f,
        toolUseId: block.id,
        toolName: block.name,
        input,
        block: complete
      })
      return complete
    }
    case "other": {
      out.push({ type: "content-block", ...f, block: block.block, abandoned })
      return block.block
    }
  }
}

const applyDelta = (block: BlockState, delta: Message.ContentBlockDelta): BlockState | undefined => {
  switch (delta.type) {
    case "text_delta":
      return block.kind === "text" ? { ...block, text: block.text + delta.text } : undefined
    case "citations_delta":
      return block.kind === "text" ? { ...block, citations: [...(block.citations ?? []), delta.citation] } : undefined
    case "thinking_delta":
      return block.kind === "thinking" ? { ...block, thinking: block.thinking + delta.thinking } : undefined
    case "signature_delta":
      return block.kind === "thinking" ? { ...block, signature: delta.signature } : undefined
    case "input_json_delta":
      return block.kind === "tool" ? { ...block, json: block.json + delta.partial_json } : undefined
  }
}

const deltaEvent = (
  msg: MessageState,
  block: BlockState,
  delta: Message.ContentBlockDelta
): Api.UiEvent | undefined => {
  const f = fields(msg, block.index)
  switch (delta.type) {
    case "text_delta":
      return { type: "text-delta", ...f, delta: delta.text }
    case "thinking_delta":
      return { type: "thinking-delta", ...f, delta: delta.thinking }
    case "input_json_delta":
      return block.kind === "tool"
        ? { type: "tool-input-delta", ...f, toolUseId: block.id, delta: delta.partial_json }
        : undefined
    case "signature_delta":
    case "citations_delta":
      return undefined
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// messages
// ---------------------------------------------------------------------------------------------------------------------

const newMessage = (
  messageId: string,
  parentToolUseId: string | null,
  streamed: boolean,
  usage: Message.Usage | undefined
): MessageState => ({
  messageId,
  parentToolUseId,
  streamed,
  usage,
  stopReason: null,
  stopSequence: null,
  open: new Map(),
  done: [],
  nextIndex: 0
})

/**
 * Ends a message: blocks still open end as abandoned, then `message-finish`. `fromIndex`: the CLI dropped the
 * blocks from this index on (`abandoned_blocks`).
 */
const finishMessage = (
  msg: MessageState,
  options: { readonly abandoned: boolean; readonly fromIndex?: number | undefined },
  out: Array<Api.UiEvent>
) => {
  const open = [...msg.open.values()].sort((a, b) => a.index - b.index)
  for (const block of open) endBlock(msg, block, true, out)
  const fromIndex = options.fromIndex
  const content = [...msg.done]
    .filter(([index]) => fromIndex === undefined || index < fromIndex)
    .sort((a, b) => a[0] - b[0])
    .map(([, block]) => block)
  out.push({
    type: "message-finish",
    messageId: msg.messageId,
    parentToolUseId: msg.parentToolUseId,
    stopReason: msg.stopReason,
    stopSequence: msg.stopSequence,
    usage: msg.usage,
    content,
    abandoned: options.abandoned || open.length > 0 || fromIndex !== undefined
  })
}

/** Ends the current message of `key`, if any: a streamed one was cut short, a reply seen whole is complete. */
const closeCurrent = (state: State, key: string, out: Array<Api.UiEvent>): State => {
  const current = state.messages.get(key)
  if (current === undefined) return state
  finishMessage(current, { abandoned: current.streamed }, out)
  return { ...state, messages: without(state.messages, key) }
}

const closeAll = (state: State, out: Array<Api.UiEvent>): State => {
  for (const msg of state.messages.values()) finishMessage(msg, { abandoned: msg.streamed }, out)
  return { ...state, messages: new Map() }
}

const startMessage = (
  state: State,
  key: string,
  msg: MessageState,
  sessionId: string,
  model: string | undefined,
  out: Array<Api.UiEvent>
): State => {
  out.push({
    type: "message-start",
    messageId: msg.messageId,
    parentToolUseId: msg.parentToolUseId,
    sessionId,
    model,
    usage: msg.usage
  })
  return {
    ...state,
    messages: withEntry(state.messages, key, msg),
    streamedIds: msg.streamed ? new Set(state.streamedIds).add(msg.messageId) : state.streamedIds
  }
}

/** The streamed message a block event belongs to, started implicitly when its `message_start` was missed. */
const currentStreamed = (
  state: State,
  m: Message.StreamEventMessage,
  out: Array<Api.UiEvent>
): readonly [State, MessageState] => {
  const key = keyOf(m.parent_tool_use_id)
  const current = state.messages.get(key)
  if (current !== undefined && current.streamed && (m.api_message_id ?? current.messageId) === current.messageId) {
    return [state, current]
  }
  let next = closeCurrent(state, key, out)
  let messageId = m.api_message_id
  if (messageId === undefined) {
    next = { ...next, anonymous: next.anonymous + 1 }
    messageId = `unknown_${next.anonymous}`
  }
  const msg = newMessage(messageId, m.parent_tool_use_id, true, undefined)
  next = startMessage(next, key, msg, m.session_id, undefined, out)
  return [next, msg]
}

const putMessage = (state: State, msg: MessageState): State => ({
  ...state,
  messages: withEntry(state.messages, keyOf(msg.parentToolUseId), msg)
})

const rememberTool = (state: State, id: string, name: string): State =>
  state.tools.get(id) === name ? state : { ...state, tools: withEntry(state.tools, id, name) }

const abandonedFrom = (m: Message.StreamEventMessage): number | undefined => {
  if (!("abandoned_blocks" in m)) return undefined
  const abandoned = m.abandoned_blocks
  if (typeof abandoned !== "object" || abandoned === null || !("from_block_index" in abandoned)) return undefined
  return typeof abandoned.from_block_index === "number" ? abandoned.from_block_index : undefined
}

const onStreamEvent = (state: State, m: Message.StreamEventMessage, out: Array<Api.UiEvent>): State => {
  const key = keyOf(m.parent_tool_use_id)
  const event = m.event
  switch (event.type) {
    case "message_start": {
      const next = closeCurrent(state, key, out)
      const msg = newMessage(event.message.id, m.parent_tool_use_id, true, event.message.usage)
      return startMessage(next, key, msg, m.session_id, event.message.model, out)
    }
    case "content_block_start": {
      const [next, msg] = currentStreamed(state, m, out)
      const previous = msg.open.get(event.index)
      let updated = msg
      if (previous !== undefined) {
        // the same index started twice: the first never stopped
        endBlock(msg, previous, true, out)
      }
      const block = startBlock(event.index, event.content_block)
      updated = { ...updated, open: withEntry(updated.open, event.index, block) }
      startEvents(updated, block, out)
      const withTool = block.kind === "tool" ? rememberTool(next, block.id, block.name) : next
      return putMessage(withTool, updated)
    }
    case "content_block_delta": {
      const [next, msg] = currentStreamed(state, m, out)
      const block = msg.open.get(event.index)
      if (block === undefined) return next
      const applied = applyDelta(block, event.delta)
      if (applied === undefined) return next
      const e = deltaEvent(msg, applied, event.delta)
      if (e !== undefined) out.push(e)
      return putMessage(next, { ...msg, open: withEntry(msg.open, event.index, applied) })
    }
    case "content_block_stop": {
      const [next, msg] = currentStreamed(state, m, out)
      const block = msg.open.get(event.index)
      if (block === undefined) return next
      const complete = endBlock(msg, block, false, out)
      return putMessage(next, {
        ...msg,
        open: without(msg.open, event.index),
        done: complete === undefined ? msg.done : [...msg.done, [event.index, complete]]
      })
    }
    case "message_delta": {
      const [next, msg] = currentStreamed(state, m, out)
      return putMessage(next, {
        ...msg,
        stopReason: event.delta.stop_reason ?? msg.stopReason,
        stopSequence: event.delta.stop_sequence ?? msg.stopSequence,
        usage: event.usage === undefined ? msg.usage : { ...msg.usage, ...event.usage }
      })
    }
    case "message_stop": {
      const current = state.messages.get(key)
      if (current === undefined || !current.streamed) return state
      finishMessage(current, { abandoned: false, fromIndex: abandonedFrom(m) }, out)
      return { ...state, messages: without(state.messages, key) }
    }
  }
}

/** A reply seen as complete `assistant` messages only: emit the events its stream would have produced. */
const onAssistant = (state: State, m: Message.AssistantMessage, out: Array<Api.UiEvent>): State => {
  let next = state
  for (const block of Message.toolUses(m)) next = rememberTool(next, block.id, block.name)
  if (next.streamedIds.has(m.message.id)) return next
  const key = keyOf(m.parent_tool_use_id)
  let msg = next.messages.get(key)
  if (msg === undefined || msg.streamed || msg.messageId !== m.message.id) {
    next = closeCurrent(next, key, out)
    msg = newMessage(m.message.id, m.parent_tool_use_id, false, m.message.usage)
    next = startMessage(next, key, msg, m.session_id, m.message.model, out)
  }
  let index = msg.nextIndex
  const done = [...msg.done]
  for (const content of m.message.content) {
    const block = startBlock(index, content)
    startEvents(msg, block, out)
    const complete = endBlock(msg, block, false, out)
    if (complete !== undefined) done.push([index, complete])
    index++
  }
  return putMessage(next, {
    ...msg,
    done,
    nextIndex: index,
    stopReason: m.message.stop_reason ?? msg.stopReason,
    stopSequence: m.message.stop_sequence ?? msg.stopSequence
  })
}

const onUser = (state: State, m: Message.UserMessage, out: Array<Api.UiEvent>): State => {
  const key = keyOf(m.parent_tool_use_id)
  let next = state
  const current = next.messages.get(key)
  // a reply seen whole ends with the next user message (a streamed one ends with its message_stop: an interrupt
  // marker arrives before the CLI's synthetic stop events)
  if (current !== undefined && !current.streamed) next = closeCurrent(next, key, out)
  for (const block of Message.toolResults(m)) {
    out.push({
      type: "tool-output-available",
      toolUseId: block.tool_use_id,
      toolName: next.tools.get(block.tool_use_id),
      parentToolUseId: m.parent_tool_use_id,
      output: block.content,
      text: Message.toolResultText(block),
      isError: block.is_error === true,
      toolUseResult: m.tool_use_result,
      block
    })
    next = { ...next, tools: without(next.tools, block.tool_use_id) }
  }
  return next
}

/** @internal */
export const step = (
  state: State,
  message: Message.SdkMessage,
  options?: Api.Options
): readonly [State, ReadonlyArray<Api.UiEvent>] => {
  const out: Array<Api.UiEvent> = []
  let next = state
  switch (message.type) {
    case "stream_event": {
      next = onStreamEvent(state, message, out)
      break
    }
    case "assistant": {
      next = onAssistant(state, message, out)
      break
    }
    case "user": {
      next = onUser(state, message, out)
      break
    }
    case "result": {
      // the turn is over: whatever is still open was cut short
      next = { ...closeAll(state, out), streamedIds: new Set(), tools: new Map() }
      break
    }
  }
  const passThrough = options?.passThrough ?? "none"
  if (passThrough === "all" || (passThrough === "others" && message.type !== "stream_event")) {
    out.push({ type: "message", message })
  }
  return [next, out]
}

/** @internal */
export const flush = (state: State): ReadonlyArray<Api.UiEvent> => {
  const out: Array<Api.UiEvent> = []
  closeAll(state, out)
  return out
}

/** @internal */
export const assemble = <E, R>(
  self: Stream.Stream<Message.SdkMessage, E, R>,
  options?: Api.Options
): Stream.Stream<Api.UiEvent, E, R> =>
  Stream.suspend(() => {
    let state = initial
    return self.pipe(
      Stream.mapChunks((chunk) => {
        const out: Array<Api.UiEvent> = []
        for (const message of chunk) {
          const [next, events] = step(state, message, options)
          state = next
          for (const event of events) out.push(event)
        }
        return Chunk.unsafeFromArray(out)
      }),
      Stream.concat(Stream.suspend(() => Stream.fromIterable(flush(state))))
    )
  })
