/**
 * How a Claude Code tool call looks in an editor: its ACP kind, title, locations and content (a diff for an edit),
 * and its result. Pure functions of the tool's name and input, which are the model's (untrusted): every field is
 * read with a type check, and what does not fit is left out rather than guessed.
 *
 * @internal
 */
import * as path from "node:path"
import type * as Message from "../../Message.js"
import type { OutContent, PlanEntry, ToolCallContent, ToolCallFields, ToolCallLocation, ToolKind } from "./schema.js"

type Input = Readonly<Record<string, unknown>>

const str = (input: Input, key: string): string | undefined => {
  const value = input[key]
  return typeof value === "string" ? value : undefined
}

const num = (input: Input, key: string): number | undefined => {
  const value = input[key]
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined
}

const isInput = (u: unknown): u is Input => typeof u === "object" && u !== null && !Array.isArray(u)

/** The longest title we send (a command can be long). */
const MAX_TITLE = 200

const clip = (text: string, max = MAX_TITLE): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** A path as the editor should see it: absolute, resolved against the session's cwd. */
const absolute = (cwd: string, p: string): string => (path.isAbsolute(p) ? path.normalize(p) : path.resolve(cwd, p))

/** A path for a title: relative to the cwd when inside it. */
const shown = (cwd: string, p: string): string => {
  const abs = absolute(cwd, p)
  const rel = path.relative(cwd, abs)
  return rel.length > 0 && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : abs
}

/** The ACP kind of a Claude Code tool. @internal */
export const kindOf = (toolName: string): ToolKind => {
  switch (baseName(toolName)) {
    case "Read":
    case "NotebookRead":
      return "read"
    case "Edit":
    case "MultiEdit":
    case "Write":
    case "NotebookEdit":
      return "edit"
    case "Bash":
    case "BashOutput":
    case "KillShell":
    case "KillBash":
    case "PowerShell":
      return "execute"
    case "Glob":
    case "Grep":
    case "LS":
    case "ToolSearch":
      return "search"
    case "WebFetch":
    case "WebSearch":
      return "fetch"
    case "Task":
    case "Agent":
    case "TodoWrite":
      return "think"
    case "ExitPlanMode":
    case "EnterPlanMode":
      return "switch_mode"
    default:
      return "other"
  }
}

/** Tools served by this server's own MCP server (`mcp__acp__Read`) are shown as the built-in tool they replace. */
const baseName = (toolName: string): string =>
  toolName.startsWith(CLIENT_TOOL_PREFIX) ? toolName.slice(CLIENT_TOOL_PREFIX.length) : toolName

/** The prefix of the tools served through the client's file system and terminals. @internal */
export const CLIENT_TOOL_PREFIX = "mcp__acp__"

/** What an editor shows for a tool call before it runs. @internal */
export interface ToolInfo {
  readonly title: string
  readonly kind: ToolKind
  readonly locations: ReadonlyArray<ToolCallLocation>
  readonly content: ReadonlyArray<ToolCallContent>
}

const fileTitle = (verb: string, cwd: string, p: string | undefined, suffix = "") =>
  p === undefined ? verb : `${verb} ${shown(cwd, p)}${suffix}`

const location = (cwd: string, p: string | undefined, line?: number): ReadonlyArray<ToolCallLocation> =>
  p === undefined ? [] : [line === undefined ? { path: absolute(cwd, p) } : { path: absolute(cwd, p), line }]

const diff = (cwd: string, p: string | undefined, oldText: string | null, newText: string | undefined) =>
  p === undefined || newText === undefined ? [] : [{ type: "diff" as const, path: absolute(cwd, p), oldText, newText }]

/** The title, kind, locations and content (diffs of edits) of a tool call. @internal */
export const toolInfo = (toolName: string, rawInput: unknown, cwd: string): ToolInfo => {
  const input: Input = isInput(rawInput) ? rawInput : {}
  const kind = kindOf(toolName)
  const name = baseName(toolName)
  const file = str(input, "file_path") ?? str(input, "notebook_path")
  switch (name) {
    case "Read": {
      const offset = num(input, "offset")
      const limit = num(input, "limit")
      const range = offset !== undefined && limit !== undefined
        ? ` (${offset} - ${offset + limit})`
        : offset !== undefined
        ? ` (from line ${offset})`
        : ""
      return { title: fileTitle("Read", cwd, file, range), kind, locations: location(cwd, file, offset), content: [] }
    }
    case "Edit": {
      const oldString = str(input, "old_string")
      return {
        title: fileTitle("Edit", cwd, file),
        kind,
        locations: location(cwd, file),
        content: diff(cwd, file, oldString ?? null, str(input, "new_string"))
      }
    }
    case "MultiEdit": {
      const edits = Array.isArray(input["edits"]) ? input["edits"].filter(isInput) : []
      return {
        title: fileTitle("Edit", cwd, file),
        kind,
        locations: location(cwd, file),
        content: edits.flatMap((edit) => diff(cwd, file, str(edit, "old_string") ?? null, str(edit, "new_string")))
      }
    }
    case "Write":
      return {
        title: fileTitle("Write", cwd, file),
        kind,
        locations: location(cwd, file),
        content: diff(cwd, file, null, str(input, "content"))
      }
    case "NotebookEdit":
      return { title: fileTitle("Edit notebook", cwd, file), kind, locations: location(cwd, file), content: [] }
    case "Bash":
    case "PowerShell": {
      const command = str(input, "command")
      const description = str(input, "description")
      // the title is cut; the command the user is asked about is in the content whole, with the model's description
      return {
        title: command === undefined ? name : inlineCode(clip(command, MAX_TITLE - 8)),
        kind,
        locations: [],
        content: [
          ...(command === undefined ? [] : [text(fence(command))]),
          ...(description === undefined ? [] : [text(description)])
        ]
      }
    }
    case "Glob": {
      const pattern = str(input, "pattern")
      const dir = str(input, "path")
      return {
        title: clip(`Find ${dir === undefined ? "" : `${shown(cwd, dir)} `}${pattern ?? ""}`),
        kind,
        locations: location(cwd, dir),
        content: []
      }
    }
    case "Grep": {
      const pattern = str(input, "pattern")
      const dir = str(input, "path")
      return {
        title: clip(
          `grep ${pattern === undefined ? "" : JSON.stringify(pattern)}${
            dir === undefined ? "" : ` ${shown(cwd, dir)}`
          }`
        ),
        kind,
        locations: location(cwd, dir),
        content: []
      }
    }
    case "WebFetch": {
      const url = str(input, "url")
      return { title: clip(url === undefined ? "Fetch" : `Fetch ${url}`), kind, locations: [], content: [] }
    }
    case "WebSearch": {
      const query = str(input, "query")
      return { title: clip(query === undefined ? "Web search" : `Search: ${query}`), kind, locations: [], content: [] }
    }
    case "Task":
    case "Agent": {
      const description = str(input, "description")
      const prompt = str(input, "prompt")
      return {
        title: clip(description ?? "Task"),
        kind,
        locations: [],
        content: prompt === undefined ? [] : [text(prompt)]
      }
    }
    case "TodoWrite":
      return { title: "Update plan", kind, locations: [], content: [] }
    case "ExitPlanMode": {
      const plan = str(input, "plan")
      return { title: "Ready to code?", kind, locations: [], content: plan === undefined ? [] : [text(plan)] }
    }
    default:
      return { title: clip(toolName), kind, locations: location(cwd, file), content: [] }
  }
}

const text = (value: string): ToolCallContent => ({ type: "content", content: { type: "text", text: value } })

/** The plan of a `TodoWrite` call: its todos, the one in progress named by its `activeForm`. @internal */
export const planOf = (rawInput: unknown): ReadonlyArray<PlanEntry> | undefined => {
  if (!isInput(rawInput) || !Array.isArray(rawInput["todos"])) return undefined
  return rawInput["todos"].filter(isInput).flatMap((todo): Array<PlanEntry> => {
    const content = str(todo, "content")
    const status = str(todo, "status")
    if (content === undefined || (status !== "pending" && status !== "in_progress" && status !== "completed")) return []
    const active = str(todo, "activeForm")
    return [{
      content: status === "in_progress" && active !== undefined ? active : content,
      status,
      priority: "medium"
    }]
  })
}

/** The text of a `tool_result` content (a string, or text and image blocks). @internal */
export const resultContent = (content: Message.ToolResultBlock["content"]): ReadonlyArray<OutContent> => {
  if (content === undefined) return []
  if (typeof content === "string") return content.length === 0 ? [] : [{ type: "text", text: content }]
  return content.flatMap((block): Array<OutContent> => {
    if (!isInput(block)) return []
    if (block["type"] === "text" && typeof block["text"] === "string") return [{ type: "text", text: block["text"] }]
    const source = block["source"]
    if (
      block["type"] === "image" && isInput(source) && typeof source["data"] === "string" &&
      typeof source["media_type"] === "string"
    ) {
      return [{ type: "image", data: source["data"], mimeType: source["media_type"] }]
    }
    return []
  })
}

/** The update of a finished tool call: its status, and its output (in a code block for a command). @internal */
export const toolResult = (
  toolName: string | undefined,
  block: Message.ToolResultBlock
): ToolCallFields => {
  const failed = block.is_error === true
  const content = resultContent(block.content)
  const kind = toolName === undefined ? undefined : kindOf(toolName)
  const shownContent: ReadonlyArray<ToolCallContent> = kind === "execute"
    ? content.map((c) =>
      c.type === "text"
        ? { type: "content", content: { type: "text", text: fence(c.text) } }
        : { type: "content", content: c }
    )
    : kind === "edit" && !failed
    // the diff is already shown; the CLI's confirmation adds nothing
    ? []
    : content.map((c) => ({ type: "content", content: c }))
  return {
    toolCallId: block.tool_use_id,
    status: failed ? "failed" : "completed",
    content: shownContent,
    rawOutput: block.content ?? null
  }
}

/** Inline Markdown code that no backtick run inside `body` can close. */
const inlineCode = (body: string): string => {
  const runs = body.match(/`+/g) ?? []
  const ticks = "`".repeat(runs.reduce((n, run) => Math.max(n, run.length), 0) + 1)
  return ticks.length === 1 ? `\`${body}\`` : `${ticks} ${body} ${ticks}`
}

/** A Markdown code block that no backtick run inside `body` can close. */
const fence = (body: string): string => {
  const runs = body.match(/`+/g) ?? []
  const longest = runs.reduce((n, run) => Math.max(n, run.length), 0)
  const ticks = "`".repeat(Math.max(3, longest + 1))
  return `${ticks}\n${body.endsWith("\n") ? body : `${body}\n`}${ticks}`
}
