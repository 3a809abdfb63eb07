/**
 * The tool families permission rules name, in one table. A rule names a family, not a tool: `Read(…)` governs every
 * tool that reads files, `Edit(…)` and `Write(…)` every tool that changes them, `Bash(…)` every tool that runs a Bash
 * command. Each member says where its call reads or writes (its path fields), so a rule's path is judged on every
 * member the same way.
 *
 * The members are the file and shell tools the CLI has had: 2.1.332's `init` message names `Read`, `Edit`, `Write`,
 * `NotebookEdit`, `Bash`, `Monitor` (whose `command` it judges as a Bash command) and `Workflow` (which may run a
 * script file), and `Grep` and `Glob` in some configurations; `LS`, `NotebookRead` and `MultiEdit` are members of
 * other versions.
 *
 * @internal
 */
import * as os from "node:os"
import * as path from "node:path"

/**
 * What a family member's call touches, with paths as the tool input wrote them (relative to the directory the tool
 * runs in, or starting with `~/`):
 * - `File`: one file;
 * - `Tree`: a directory and everything under it (a search: `Grep`, `Glob`, `LS`);
 * - `Unknown`: the input does not say (a missing or malformed path field, a `..` after a glob): deny and ask rules
 *   match it, allow rules do not;
 * - `None`: this call reads no file (a `Workflow` given its script inline): no path rule matches it.
 *
 * @internal
 */
export type Target =
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Tree"; readonly root: string }
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "None" }

/**
 * The families: `Read` for the tools that only read files, `Edit` for those that change them, `Bash` for shells,
 * `Script` for tools that run a script they read from a file (no rule names it: deny and ask `Read(path)` rules cover
 * the file it reads).
 */
type Family = "Read" | "Edit" | "Bash" | "Script"

interface Member {
  readonly family: Family
  /** Where the call reads or writes (`undefined` for a shell: its command is judged by the shell rules). */
  readonly target: ((input: Readonly<Record<string, unknown>>) => Target) | undefined
  /** The input fields holding a path the tool resolves against its working directory. */
  readonly pathFields: ReadonlyArray<string>
}

const unknown: Target = { _tag: "Unknown" }

const none: Target = { _tag: "None" }

const file = (field: string): Member["target"] => (input) => {
  const value = input[field]
  return typeof value === "string" && value !== "" ? { _tag: "File", path: value } : unknown
}

/** A file read only when `field` is given. */
const optionalFile = (field: string): Member["target"] => (input) => {
  const value = input[field]
  if (value === undefined) return none
  return typeof value === "string" && value !== "" ? { _tag: "File", path: value } : unknown
}

/** A search rooted at `field` (the tool's working directory when the field is absent, if `optional`). */
const tree = (field: string, optional: boolean): Member["target"] => (input) => {
  const value = input[field]
  if (value === undefined && optional) return { _tag: "Tree", root: "." }
  return typeof value === "string" && value !== "" ? { _tag: "Tree", root: value } : unknown
}

const GLOB_CHAR = /[*?[{]/

/**
 * `Glob`: the pattern's literal leading directories extend the search root (`src/**` searches `src`, `/etc/*`
 * searches `/etc`); a `..` anywhere after them could climb out of it, and a backslash escapes what follows it, so the
 * call's reach is unknown then.
 */
const glob: Member["target"] = (input) => {
  const pattern = input["pattern"]
  const root = input["path"]
  // a backslash escapes the next character in the CLI's globs (`secre\ts/*` is `secrets/*`): where it leads is not
  // read here
  if (typeof pattern !== "string" || pattern.startsWith("~") || pattern.includes("\\")) return unknown
  if (root !== undefined && (typeof root !== "string" || root === "")) return unknown
  const segments = pattern.split("/")
  const firstGlob = segments.findIndex((segment) => GLOB_CHAR.test(segment))
  const literal = firstGlob === -1 ? segments.slice(0, -1) : segments.slice(0, firstGlob)
  const rest = segments.slice(literal.length)
  if (rest.some((segment) => segment === "..")) return unknown
  const base = literal.join("/")
  const start = typeof root === "string" ? root : "."
  if (base === "" && pattern.startsWith("/")) return { _tag: "Tree", root: "/" }
  return { _tag: "Tree", root: base === "" ? start : path.isAbsolute(base) ? base : `${start}/${base}` }
}

/**
 * Every tool a rule family covers, with its path fields. `Write` names the same family as `Edit` (both change files;
 * see SECURITY.md), the CLI judges `Monitor`'s `command` as a Bash command, and `Workflow` reads the script it runs
 * from `scriptPath` when given one.
 *
 * @internal
 */
export const MEMBERS: ReadonlyMap<string, Member> = new Map<string, Member>([
  ["Read", { family: "Read", target: file("file_path"), pathFields: ["file_path"] }],
  ["NotebookRead", { family: "Read", target: file("notebook_path"), pathFields: ["notebook_path"] }],
  ["Grep", { family: "Read", target: tree("path", true), pathFields: ["path"] }],
  ["Glob", { family: "Read", target: glob, pathFields: ["path"] }],
  ["LS", { family: "Read", target: tree("path", false), pathFields: ["path"] }],
  ["Edit", { family: "Edit", target: file("file_path"), pathFields: ["file_path"] }],
  ["MultiEdit", { family: "Edit", target: file("file_path"), pathFields: ["file_path"] }],
  ["Write", { family: "Edit", target: file("file_path"), pathFields: ["file_path"] }],
  ["NotebookEdit", { family: "Edit", target: file("notebook_path"), pathFields: ["notebook_path"] }],
  ["Bash", { family: "Bash", target: undefined, pathFields: [] }],
  ["Monitor", { family: "Bash", target: undefined, pathFields: [] }],
  ["Workflow", { family: "Script", target: optionalFile("scriptPath"), pathFields: ["scriptPath"] }]
])

/** The family a rule's tool name stands for, when it is one of the family names. */
const FAMILY_OF_RULE: ReadonlyMap<string, Family> = new Map<string, Family>([
  ["Read", "Read"],
  ["Edit", "Edit"],
  ["Write", "Edit"],
  ["Bash", "Bash"]
])

/**
 * The members of the family a rule's tool name stands for (`Read`, `Edit`, `Write`, `Bash`), or `undefined` when it
 * names a single tool.
 *
 * @internal
 */
export const familyMembers = (ruleTool: string): ReadonlyArray<string> | undefined => {
  const family = FAMILY_OF_RULE.get(ruleTool)
  return family === undefined ? undefined : [...MEMBERS].filter(([, m]) => m.family === family).map(([name]) => name)
}

/**
 * Whether a rule naming `ruleTool` covers a call of `toolName` through a family: `Read` covers the reading tools,
 * `Edit` and `Write` the editing tools, `Bash` the tools that run a Bash command. A deny or ask `Read` rule with a
 * path also covers the editing tools (a file that may not be read may not be changed either: the editing tools
 * read the file they change and show part of it, and the CLI refuses them under a `Read` deny rule too) and the tools
 * that run a script read from a file (`Workflow`'s `scriptPath`, which the CLI also judges as a read).
 *
 * @internal
 */
export const covers = (ruleTool: string, toolName: string, options: { readonly denyOrAsk: boolean }): boolean => {
  const family = FAMILY_OF_RULE.get(ruleTool)
  if (family === undefined) return false
  const member = MEMBERS.get(toolName)
  if (member === undefined) return false
  return member.family === family ||
    (options.denyOrAsk && family === "Read" && (member.family === "Edit" || member.family === "Script"))
}

/**
 * What a file tool's call reads or writes, or `undefined` when the tool is not a file family member.
 *
 * @internal
 */
export const targetOf = (toolName: string, input: Readonly<Record<string, unknown>>): Target | undefined =>
  MEMBERS.get(toolName)?.target?.(input)

/**
 * Whether a tool runs its `command` as a Bash command (`Bash`, `Monitor`).
 *
 * @internal
 */
export const runsBash = (toolName: string): boolean => MEMBERS.get(toolName)?.family === "Bash"

/**
 * Whether a tool changes the files its path fields name (the `Edit` family).
 *
 * @internal
 */
export const writesFiles = (toolName: string): boolean => MEMBERS.get(toolName)?.family === "Edit"

/**
 * The input with a file tool's relative path fields made absolute against the directory the tool runs in (and a
 * leading `~/` expanded, as the CLI does), so that the rules can judge them from the session's directory.
 *
 * @internal
 */
export const resolvePaths = (
  toolName: string,
  input: Readonly<Record<string, unknown>>,
  directory: string
): Readonly<Record<string, unknown>> => {
  const member = MEMBERS.get(toolName)
  if (member === undefined || member.pathFields.length === 0) return input
  const out: Record<string, unknown> = { ...input }
  for (const field of member.pathFields) {
    const value = input[field]
    if (typeof value !== "string" || value === "") continue
    out[field] = value.startsWith("~/") ? path.join(os.homedir(), value.slice(2)) : path.resolve(directory, value)
  }
  if (toolName === "Grep" && input["path"] === undefined) out["path"] = directory
  if (toolName === "Glob" && input["path"] === undefined) out["path"] = directory
  return out
}
