/**
 * The `session/update`s of a turn, from the session's messages: text and thinking as chunks (streamed from partial
 * messages when the CLI sends them, else from the complete message), tool calls and their results, the plan of a
 * `TodoWrite`. A translator is made per session and is not shared: it remembers which messages were streamed and
 * which tool each result belongs to.
 *
 * @internal
 */
import type * as Message from "../../Message.js"
import * as SessionStore from "../../SessionStore.js"
import type { OutContent, SessionUpdate } from "./schema.js"
import { planOf, toolInfo, toolResult } from "./tools.js"

/** @internal */
export interface Translator {
  /** The updates of one message of the session. */
  readonly step: (message: Message.SdkMessage) => ReadonlyArray<SessionUpdate>
  /** The updates of one entry of a transcript (a `session/load` replay). */
  readonly replay: (entry: SessionStore.TranscriptItem) => ReadonlyArray<SessionUpdate>
  /**
   * The `tool_call` of a call the CLI asks permission for, unless it was sent already (a permission request can be
   * read before the message that holds the call): the editor must know a call before it is asked about it.
   */
  readonly announce: (toolUseId: string, toolName: string, input: unknown) => ReadonlyArray<SessionUpdate>
  /** Records that a tool call runs in a terminal of the client: its result shows the terminal. */
  readonly terminalOf: (toolUseId: string, terminalId: string) => void
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export const makeTranslator = (cwd: string): Translator => {
  /** API messages of the main agent whose text and thinking were streamed as deltas. */
  const streamed = new Set<string>()
  let streaming: string | undefined
  const tools = new Map<string, { readonly name: string; readonly input: unknown }>()
  const planCalls = new Set<string>()
  const announced = new Set<string>()
  const terminals = new Map<string, string>()

  const toolUse = (id: string, name: string, input: unknown): ReadonlyArray<SessionUpdate> => {
    if (announced.has(id)) return []
    announced.add(id)
    tools.set(id, { name, input })
    if (name === "TodoWrite") {
      planCalls.add(id)
      const entries = planOf(input)
      return entries === undefined ? [] : [{ sessionUpdate: "plan", entries }]
    }
    const info = toolInfo(name, input, cwd)
    return [{
      sessionUpdate: "tool_call",
      toolCallId: id,
      title: info.title,
      kind: info.kind,
      status: "pending",
      content: info.content,
      locations: info.locations,
      rawInput: input
    }]
  }

  const assistantBlocks = (
    blocks: ReadonlyArray<Message.ContentBlock>,
    chunks: boolean
  ): ReadonlyArray<SessionUpdate> =>
    blocks.flatMap((block): ReadonlyArray<SessionUpdate> => {
      switch (block.type) {
        case "text":
          return chunks && block.text.length > 0 ? [chunk("agent_message_chunk", block.text)] : []
        case "thinking":
          return chunks && block.thinking.length > 0 ? [chunk("agent_thought_chunk", block.thinking)] : []
        case "tool_use":
          return toolUse(block.id, block.name, block.input)
        default:
          return []
      }
    })

  const toolResults = (content: Message.UserContent): ReadonlyArray<SessionUpdate> =>
    typeof content === "string" ? [] : content.flatMap((block): ReadonlyArray<SessionUpdate> => {
      if (block.type !== "tool_result" || planCalls.has(block.tool_use_id)) return []
      const result = toolResult(tools.get(block.tool_use_id)?.name, block)
      const terminalId = terminals.get(block.tool_use_id)
      return [{
        sessionUpdate: "tool_call_update",
        ...result,
        // the terminal shows the output (the client keeps it after the terminal is released)
        ...(terminalId === undefined ? {} : { content: [{ type: "terminal", terminalId }] })
      }]
    })

  const streamEvent = (message: Message.StreamEventMessage): ReadonlyArray<SessionUpdate> => {
    if (message.parent_tool_use_id !== null) return []
    const event = message.event
    if (event.type === "message_start") {
      streaming = event.message.id
      return []
    }
    if (event.type !== "content_block_delta") return []
    const delta = event.delta
    if (delta.type === "text_delta" && delta.text.length > 0) {
      if (streaming !== undefined) streamed.add(streaming)
      return [chunk("agent_message_chunk", delta.text)]
    }
    if (delta.type === "thinking_delta" && delta.thinking.length > 0) {
      if (streaming !== undefined) streamed.add(streaming)
      return [chunk("agent_thought_chunk", delta.thinking)]
    }
    return []
  }

  const step = (message: Message.SdkMessage): ReadonlyArray<SessionUpdate> => {
    switch (message.type) {
      case "stream_event":
        return streamEvent(message)
      case "assistant": {
        const main = message.parent_tool_use_id === null
        const chunks = main && !streamed.has(message.message.id)
        return assistantBlocks(message.message.content, chunks)
      }
      case "user":
        return message.isReplay === true ? [] : toolResults(message.message.content)
      default:
        return []
    }
  }

  const replay = (entry: SessionStore.TranscriptItem): ReadonlyArray<SessionUpdate> => {
    if (entry.type !== "user" && entry.type !== "assistant") return []
    if (entry.isSidechain === true) return []
    if (entry.type === "assistant") return assistantBlocks(entry.message.content, true)
    const content = entry.message.content
    return SessionStore.isPrompt(entry) ? promptChunks(content) : toolResults(content)
  }

  return {
    step,
    replay,
    announce: toolUse,
    terminalOf: (toolUseId, terminalId) => void terminals.set(toolUseId, terminalId)
  }
}

const chunk = (
  sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
  text: string
): SessionUpdate => ({ sessionUpdate, content: { type: "text", text } })

/** A prompt of the history as `user_message_chunk`s (its text and images). */
const promptChunks = (content: Message.UserContent): ReadonlyArray<SessionUpdate> => {
  if (typeof content === "string") return content.length === 0 ? [] : [chunk("user_message_chunk", content)]
  return content.flatMap((block): ReadonlyArray<SessionUpdate> => {
    if (block.type === "text") return block.text.length === 0 ? [] : [chunk("user_message_chunk", block.text)]
    if (block.type === "image" && isRecord(block.source)) {
      const data = block.source["data"]
      const mimeType = block.source["media_type"]
      if (typeof data === "string" && typeof mimeType === "string") {
        const image: OutContent = { type: "image", data, mimeType }
        return [{ sessionUpdate: "user_message_chunk", content: image }]
      }
    }
    return []
  })
}
