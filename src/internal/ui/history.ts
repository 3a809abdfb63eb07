/** @internal */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Message from "../../Message.js"
import * as SessionStore from "../../SessionStore.js"
import * as TranscriptStore from "../../TranscriptStore.js"
import type * as Api from "../../UIMessageStream.js"
import { approvalIdOf, outcomeOf, partId, toolResults } from "./chunks.js"

type Item = SessionStore.TranscriptItem

/** The transcript of a subagent, by its agent id (`undefined` when there is none). */
export type Subagents = (agentId: string) => ReadonlyArray<Item> | undefined

/** What the CLI records of a tool result beyond the `tool_result` block (not modeled by `SessionStore.UserEntry`). */
const ResultEntryExtras = Schema.Struct({
  permissionDecision: Schema.optional(Schema.Struct({ decision: Schema.String }))
})
const decodeExtras = Schema.decodeUnknownOption(ResultEntryExtras)

/** The agent a tool call started, from the tool's structured output (`Agent` / `Task` results carry `agentId`). */
const AgentResult = Schema.Struct({ agentId: Schema.String })
const decodeAgentResult = Schema.decodeUnknownOption(AgentResult)

interface Builder {
  readonly messages: Array<Api.UIMessage>
  current: Api.UIMessage | undefined
  /** The tool parts of the current message, by tool call id. */
  readonly tools: Map<string, Api.DynamicToolPart>
  readonly subagents: Subagents
  /** Subagents already inserted (a transcript is read once, however often it is referenced). */
  readonly seen: Set<string>
}

const assistant = (b: Builder, entry: SessionStore.AssistantEntry): Api.UIMessage => {
  if (b.current !== undefined) return b.current
  const message: Api.UIMessage = {
    id: entry.uuid,
    role: "assistant",
    metadata: {
      sessionId: entry.sessionId,
      ...(entry.message.model !== undefined ? { model: entry.message.model } : {})
    },
    parts: []
  }
  b.messages.push(message)
  b.current = message
  b.tools.clear()
  return message
}

const providerMetadata = (parent: string | null) =>
  parent === null ? {} : { providerMetadata: { claudeCode: { parentToolCallId: parent } } }

const blockPart = (
  b: Builder,
  block: Message.ContentBlock,
  messageId: string,
  index: number,
  parent: string | null
): Api.UIMessagePart | undefined => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text, state: "done", ...providerMetadata(parent) }
    case "thinking":
      return {
        type: "reasoning",
        id: partId(messageId, index),
        text: block.thinking,
        state: "done",
        ...providerMetadata(parent)
      }
    case "tool_use":
    case "server_tool_use":
    case "mcp_tool_use": {
      const part: Api.DynamicToolPart = {
        type: "dynamic-tool",
        toolName: block.name,
        toolCallId: block.id,
        state: "input-available",
        input: block.input,
        providerExecuted: true,
        ...(parent === null ? {} : { toolMetadata: { parentToolCallId: parent } })
      }
      b.tools.set(block.id, part)
      return part
    }
    default:
      return undefined
  }
}

/** The final state of a tool part from its result (the same fields the stream's chunks give it). */
const settle = (part: Api.DynamicToolPart, result: ReturnType<typeof toolResults>[number]): Api.DynamicToolPart => {
  const base = part
  const common = {
    type: base.type,
    toolName: base.toolName,
    toolCallId: base.toolCallId,
    input: base.input,
    ...(base.providerExecuted !== undefined ? { providerExecuted: base.providerExecuted } : {}),
    ...(base.toolMetadata !== undefined ? { toolMetadata: base.toolMetadata } : {})
  }
  const outcome = outcomeOf(result)
  switch (outcome.state) {
    case "output-available":
      return { ...common, state: "output-available", output: outcome.output }
    case "output-error":
      return { ...common, state: "output-error", errorText: outcome.errorText }
    case "output-denied":
      return {
        ...common,
        state: "output-denied",
        approval: { id: approvalIdOf(base.toolCallId), approved: false, reason: outcome.reason }
      }
  }
}

/** Appends the parts of one transcript (the main one, or a subagent's with `parent` set) to the builder. */
const replay = (b: Builder, items: Iterable<Item>, parent: string | null): void => {
  let messageId: string | undefined
  let subagentStep: string | undefined
  let index = 0
  for (const item of items) {
    if (item.type === "user") {
      if (parent === null && SessionStore.isPrompt(item)) {
        b.current = undefined
        messageId = undefined
        b.messages.push({ id: item.uuid, role: "user", parts: [{ type: "text", text: SessionStore.entryText(item) }] })
        continue
      }
      onResults(b, item, parent)
      continue
    }
    if (item.type !== "assistant" || (item.isSidechain === true) !== (parent !== null)) continue
    const message = assistant(b, item)
    if (item.message.id !== messageId) {
      messageId = item.message.id
      index = 0
      // a subagent's replies reach the live stream with their tool calls only: a step for those that have one
      if (parent === null) message.parts.push({ type: "step-start" })
    }
    for (const block of item.message.content) {
      const isTool = block.type === "tool_use" || block.type === "server_tool_use" || block.type === "mcp_tool_use"
      if (parent !== null && isTool && subagentStep !== messageId) {
        subagentStep = messageId
        message.parts.push({ type: "step-start" })
      }
      const part = parent === null || isTool ? blockPart(b, block, messageId, index, parent) : undefined
      if (part !== undefined) message.parts.push(part)
      index++
    }
  }
}

const onResults = (b: Builder, entry: SessionStore.UserEntry, parent: string | null): void => {
  if ((entry.isSidechain === true) !== (parent !== null) || b.current === undefined) return
  const extras = decodeExtras(entry)
  const rejected = Option.isSome(extras) && extras.value.permissionDecision?.decision === "reject"
  const content = entry.message.content
  const ids = typeof content === "string" ? [] : content.flatMap((c) => c.type === "tool_result" ? [c.tool_use_id] : [])
  for (const result of toolResults(content, entry.toolUseResult, rejected ? new Set(ids) : new Set())) {
    const id = result.block.tool_use_id
    const part = b.tools.get(id)
    if (part === undefined || (part.state !== "input-available" && part.state !== "input-streaming")) continue
    // a subagent's activity comes before its call's result, as it does on the live stream
    const agent = decodeAgentResult(result.structured)
    if (Option.isSome(agent) && !b.seen.has(agent.value.agentId)) {
      b.seen.add(agent.value.agentId)
      const transcript = b.subagents(agent.value.agentId)
      if (transcript !== undefined) replay(b, transcript, id)
    }
    const settled = settle(part, result)
    const parts = b.current.parts
    parts[parts.indexOf(part)] = settled
    b.tools.set(id, settled)
  }
}

/** @internal */
export const fromTranscript = (items: Iterable<Item>, subagents?: Subagents): Array<Api.UIMessage> => {
  const b: Builder = {
    messages: [],
    current: undefined,
    tools: new Map(),
    subagents: subagents ?? (() => undefined),
    seen: new Set()
  }
  replay(b, items, null)
  return b.messages
}

// ---------------------------------------------------------------------------------------------------------------------
// sources
// ---------------------------------------------------------------------------------------------------------------------

const AGENT_FILE = /^agent-(.+)\.jsonl$/

/** @internal */
export const fromSessionFiles = (sessionId: string, cwd: string) =>
  Effect.gen(function*() {
    const store = yield* SessionStore.SessionStore
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const main = yield* Stream.runCollect(store.entries(sessionId, cwd))
    const directory = path.join(yield* store.projectDir(cwd), sessionId, "subagents")
    const names = yield* fs.readDirectory(directory).pipe(Effect.orElseSucceed(() => []))
    const subagents = new Map<string, ReadonlyArray<Item>>()
    for (const name of names) {
      const match = AGENT_FILE.exec(name)
      if (match === null) continue
      const text = yield* fs.readFileString(path.join(directory, name)).pipe(Effect.orElseSucceed(() => ""))
      subagents.set(match[1]!, decodeLines(text.split("\n")))
    }
    return fromTranscript(main, (agentId) => subagents.get(agentId))
  })

const decodeLines = (lines: ReadonlyArray<string>): ReadonlyArray<Item> => {
  const items: Array<Item> = []
  lines.forEach((line, i) => {
    const item = SessionStore.decodeLine(line, i + 1)
    if (item !== undefined) items.push(item)
  })
  return items
}

const decodeEntries = (entries: ReadonlyArray<TranscriptStore.Entry>): ReadonlyArray<Item> =>
  decodeLines(entries.map((entry) => JSON.stringify(entry)))

/** @internal */
export const fromTranscriptStore = (key: { readonly projectKey: string; readonly sessionId: string }) =>
  Effect.gen(function*() {
    const store = yield* TranscriptStore.TranscriptStore
    const main = yield* store.load(key)
    if (Option.isNone(main)) return Option.none<Array<Api.UIMessage>>()
    const subagents = new Map<string, ReadonlyArray<Item>>()
    for (const subpath of yield* store.listSubkeys(key)) {
      const match = /^subagents\/agent-(.+)$/.exec(subpath)
      if (match === null) continue
      const entries = yield* store.load({ ...key, subpath })
      if (Option.isSome(entries)) subagents.set(match[1]!, decodeEntries(entries.value))
    }
    return Option.some(fromTranscript(decodeEntries(main.value), (agentId) => subagents.get(agentId)))
  })
