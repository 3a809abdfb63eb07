/**
 * What a session adds so that a rule set's deny and ask rules hold for every tool call, not only those the CLI asks
 * about (the CLI reads inside its working directory, runs read-only commands and, in `acceptEdits` mode, edits
 * without asking):
 * - the CLI's own permission settings ({@link cliPermissions}): the deny rules checked before any allow or ask rule
 *   become `permissions.deny`, the floor the CLI enforces by itself; every other deny rule and every ask rule becomes
 *   `permissions.ask`, so the CLI asks and the rules decide in their own order; allow rules are never handed over;
 * - a `PreToolUse` hook ({@link hooks}) that the CLI calls for every tool call, asked or not: the rules' own matcher
 *   (families, real paths, the Bash parser) denies what a deny rule matches first and has the CLI ask about what an
 *   ask rule matches first.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as os from "node:os"
import * as path from "node:path"
import type { HookCallback, HookOutput, HookRegistrations } from "../../Hooks.js"
import type { Rule } from "../../Permissions.js"
import { denyMessage, firstRule, hasContent, parseRule } from "./permissions.js"
import type * as Contribution from "../protocol/contribution.js"
import * as ToolFamilies from "./toolFamilies.js"

/**
 * Rules for the CLI's settings (`permissions.deny`, `permissions.ask`), in its syntax.
 *
 * @internal
 */
export type CliPermissions = Contribution.CliPermissions

/** Characters a path's literal part must escape in a CLI path rule (a gitignore-style pattern). */
const escapeLiteral = (s: string): string => s.replace(/[\\*?[\]{}]/g, "\\$&")

/** The same for a rule's own glob: `*` and `?` keep their meaning, the rest is literal as in the SDK's globs. */
const escapeGlob = (s: string): string => s.replace(/[\\[\]{}]/g, "\\$&")

/**
 * A path rule's glob as an absolute CLI path pattern (`//abs/...`): resolved as the SDK resolves it (relative to the
 * session's cwd, `~/` from the home directory, `//x` and `/x` absolute), with the literal part escaped. The CLI reads
 * `/x` as relative to the settings' directory, so every pattern is written absolute.
 */
const cliPath = (content: string, cwd: string): string => {
  const [base, rest] = content.startsWith("~/")
    ? [os.homedir(), content.slice(2)]
    : content.startsWith("//")
    ? ["/", content.slice(1)]
    : path.isAbsolute(content)
    ? ["/", content]
    : [cwd, content]
  const absolute = path.join(escapeLiteral(base), escapeGlob(rest)).replace(/ $/, "\\ ")
  return `/${absolute}`
}

const PLAIN_TOOL = /^[A-Za-z0-9_-]+$/

/**
 * A rule in the CLI's syntax, with the CLI's meaning equal to the SDK's, or none when the CLI cannot say it (the
 * hook alone enforces those): a family name stands for each of its members, `Read(path)` stays a `Read` rule,
 * `Edit(path)` and `Write(path)` become `Edit(path)` (the CLI matches no `Write(path)` rule), Bash and PowerShell
 * rules and `WebFetch(domain:…)` keep their content. Tool-name wildcards, path rules on a single file tool
 * (`Grep(…)`, `NotebookEdit(…)`) and content rules of other tools are left to the hook.
 *
 * @internal
 */
export const cliForms = (rule: string, cwd: string): ReadonlyArray<string> => {
  const parsed = parseRule(rule)
  const tool = parsed.tool
  if (!PLAIN_TOOL.test(tool)) return []
  if (!hasContent(parsed)) return ToolFamilies.familyMembers(tool) ?? [tool]
  const content = parsed.content
  switch (tool) {
    case "Read":
      return [`Read(${cliPath(content, cwd)})`]
    case "Edit":
    case "Write":
      return [`Edit(${cliPath(content, cwd)})`]
    case "Bash":
    case "PowerShell":
      return [`${tool}(${content})`]
    case "WebFetch":
      return content.startsWith("domain:") ? [`WebFetch(${content})`] : []
    default:
      return []
  }
}

const unique = (list: ReadonlyArray<string>): Array<string> => [...new Set(list)]

/**
 * The rules handed to the CLI: the deny rules the SDK checks before any allow or ask rule as `deny` (the CLI never
 * refuses what the rules would allow), every other deny rule and every ask rule as `ask` (the CLI asks, and the
 * rules decide in their order). Allow rules are never handed over: an SDK allow never widens what the CLI refuses.
 *
 * @internal
 */
export const cliPermissions = (rules: ReadonlyArray<Rule>, cwd: string): CliPermissions => {
  const firstOther = rules.findIndex((r) => r.behavior !== "deny")
  const leading = firstOther === -1 ? rules : rules.slice(0, firstOther)
  const deny = unique(leading.flatMap((r) => cliForms(r.rule, cwd)))
  const ask = unique(
    rules.slice(leading.length).filter((r) => r.behavior !== "allow").flatMap((r) => cliForms(r.rule, cwd))
  ).filter((rule) => !deny.includes(rule))
  return { deny, ask }
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const decision = (
  permissionDecision: "deny" | "ask",
  permissionDecisionReason: string
): HookOutput<"PreToolUse"> => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision, permissionDecisionReason }
})

/**
 * The `PreToolUse` hook that checks every tool call against the rules, or `undefined` when they have no deny or ask
 * rule. A tool's relative paths are resolved against the directory the CLI reports for the call; the rules' own paths
 * stay relative to the session's `cwd`.
 *
 * @internal
 */
export const hooks = (rules: ReadonlyArray<Rule>, cwd: string): HookRegistrations | undefined => {
  if (!rules.some((r) => r.behavior !== "allow")) return undefined
  const first = firstRule(rules)
  const check: HookCallback<"PreToolUse"> = (input) => {
    const toolInput = isRecord(input.tool_input) ? input.tool_input : {}
    const directory = input.cwd === "" ? cwd : input.cwd
    const request = {
      toolName: input.tool_name,
      input: ToolFamilies.resolvePaths(input.tool_name, toolInput, directory),
      cwd
    }
    return Effect.map(
      first(request),
      (rule): HookOutput<"PreToolUse"> =>
        rule === undefined || rule.behavior === "allow"
          ? {}
          : rule.behavior === "deny"
          ? decision("deny", denyMessage(rule))
          : decision("ask", `The permission rule ${rule.rule} asks about this call`)
    )
  }
  return { PreToolUse: [{ hooks: [check] }] }
}
