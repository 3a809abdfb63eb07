/**
 * The permission policy of an ACP session: the SDK's rules first (a deny rule is never asked, an allow rule is not
 * asked), then the editor, through `session/request_permission` with allow once / always allow / reject. "Always"
 * is remembered as an allow rule of the session, judged after the deny and ask rules like the configured allow
 * rules (so it never overrides a deny rule). Every answer that is not a valid choice, an error of the client, and a
 * client that is gone are a deny; the session's permission timeout denies an editor that never answers.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Permissions from "../../Permissions.js"
import { type Connection, decodeParams } from "./jsonRpc.js"
import { type PermissionOption, RequestPermissionResponse, type SessionUpdate } from "./schema.js"
import { CLIENT_TOOL_PREFIX, toolInfo } from "./tools.js"

/** @internal */
export interface PolicyContext {
  readonly connection: Connection
  readonly cwd: string
  readonly rules: {
    readonly allow: ReadonlyArray<string>
    readonly deny: ReadonlyArray<string>
    readonly ask: ReadonlyArray<string>
  }
  /** The rules "always allow" added in this session (mutated here). */
  readonly always: Array<string>
  readonly sessionId: () => string
  readonly notify: (update: SessionUpdate) => Effect.Effect<void>
  readonly announce: (toolUseId: string, toolName: string, input: unknown) => ReadonlyArray<SessionUpdate>
  /** Whether `Read` goes through the client (then reads in the working directory are not asked about). */
  readonly clientFs: boolean
}

const ALLOW = "allow_once"
const ALWAYS = "allow_always"
const REJECT = "reject_once"

/**
 * The rule "always allow" remembers for a request: the allow rules Claude Code suggests for it, else the tool
 * (`Read`, `mcp__x__y`), or for a command the exact command; none when no rule would be as narrow as the request
 * (a command with a `*`, which a rule reads as a wildcard).
 *
 * @internal
 */
export const alwaysRules = (request: Permissions.PermissionRequest): ReadonlyArray<string> => {
  const suggested = request.suggestions.flatMap((update) =>
    update.type === "addRules" && update.behavior === "allow"
      ? update.rules.map((r) => r.ruleContent === undefined ? r.toolName : `${r.toolName}(${r.ruleContent})`)
      : []
  )
  if (suggested.length > 0) return suggested
  if (request.toolName === "Bash" || request.toolName === "PowerShell") {
    const command = request.input["command"]
    return typeof command === "string" && !command.includes("*") && !command.includes(")") && command.length > 0
      ? [`${request.toolName}(${command})`]
      : []
  }
  return [request.toolName]
}

const options = (always: ReadonlyArray<string>): ReadonlyArray<PermissionOption> => [
  { optionId: ALLOW, name: "Allow", kind: "allow_once" },
  ...(always.length === 0
    ? []
    : [{ optionId: ALWAYS, name: `Always allow ${always.join(", ")}`, kind: "allow_always" as const }]),
  { optionId: REJECT, name: "Reject", kind: "reject_once" }
]

/**
 * A request as the rules judge it: a tool served through the client (`mcp__acp__Bash`) under the name of the built-in
 * tool it replaces, with its input, so that `Bash(rm:*)` denies it too; Claude Code's suggestions for it (a rule
 * for the whole MCP tool) are dropped.
 */
const judged = (request: Permissions.PermissionRequest): Permissions.PermissionRequest =>
  request.toolName.startsWith(CLIENT_TOOL_PREFIX)
    ? { ...request, toolName: request.toolName.slice(CLIENT_TOOL_PREFIX.length), suggestions: [] }
    : request

/** @internal */
export const editorPolicy = (ctx: PolicyContext): Permissions.Policy => {
  const askEditor: Permissions.Policy = (request) =>
    Effect.gen(function*() {
      if (request.toolName === "AskUserQuestion") {
        return Permissions.deny("This editor cannot show multiple-choice questions: ask the question in your reply")
      }
      for (const update of ctx.announce(request.toolUseId, request.toolName, request.input)) yield* ctx.notify(update)
      const info = toolInfo(request.toolName, request.input, ctx.cwd)
      const always = alwaysRules(request)
      const answer = yield* ctx.connection.request("session/request_permission", {
        sessionId: ctx.sessionId(),
        toolCall: {
          toolCallId: request.toolUseId,
          title: info.title,
          kind: info.kind,
          status: "pending",
          content: info.content,
          locations: info.locations,
          rawInput: request.input
        },
        options: options(always)
      }).pipe(Effect.flatMap(decodeParams(RequestPermissionResponse)), Effect.either)
      if (Either.isLeft(answer)) {
        return Permissions.deny(`Permission denied: the editor did not answer (${answer.left.message})`)
      }
      const outcome = answer.right.outcome
      if (outcome.outcome === "cancelled") return Permissions.deny("The prompt was cancelled")
      const chosen = outcome.optionId
      if (chosen === REJECT) return Permissions.deny("The user rejected this tool call")
      if (chosen !== ALLOW && (chosen !== ALWAYS || always.length === 0)) {
        return Permissions.deny(`Permission denied: the editor chose an option that was not offered (${chosen})`)
      }
      if (chosen === ALWAYS) { for (const rule of always) if (!ctx.always.includes(rule)) ctx.always.push(rule) }
      yield* ctx.notify({ sessionUpdate: "tool_call_update", toolCallId: request.toolUseId, status: "in_progress" })
      return Permissions.allow()
    })

  // reads in the working directory run without asking, as Claude Code runs its own Read there
  const implied = ctx.clientFs ? ["Read(./**)"] : []
  return (request) =>
    Permissions.rules({
      deny: ctx.rules.deny,
      ask: ctx.rules.ask,
      allow: [...ctx.rules.allow, ...implied, ...ctx.always],
      fallback: askEditor
    })(judged(request))
}
