/** @internal */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { ControlRequestBody } from "../../Message.js"
import type {
  PermissionBehavior,
  PermissionRequest,
  PermissionResult,
  PermissionStore,
  PermissionUpdate,
  Policy,
  Question,
  Rule,
  Service
} from "../../Permissions.js"
import * as Deadlines from "../protocol/deadlines.js"
import type { Contribution } from "../protocol/contribution.js"
import {
  type Decision,
  decide,
  type Handler,
  lazySignal,
  noop,
  toEffect,
  untilCliExits,
  withLazySignal
} from "../protocol/handler.js"
import { checkDecision } from "./outputs.js"
import type { BashLanguage } from "./bashParser.js"
import * as ShellPaths from "./shellPaths.js"
import * as ShellPrograms from "./shellPrograms.js"
import * as ShellRules from "./shellRules.js"
import * as ToolFamilies from "./toolFamilies.js"

const DEFAULT_TIMEOUT: Duration.DurationInput = "5 minutes"

/** @internal */
export const allowPolicy: Policy = () => Effect.succeed({ behavior: "allow" })

/** @internal */
export const denyPolicy: Policy = (request) =>
  Effect.succeed({ behavior: "deny", message: `Permission to use ${request.toolName} was denied` })

/** @internal */
export const make = <E, R>(
  policy: Policy<E, R>,
  options?: { readonly timeout?: Duration.DurationInput | undefined }
): Effect.Effect<Service, never, R> =>
  Effect.map(Effect.context<R>(), (context) => ({
    decide: (request: PermissionRequest) => Effect.provide(policy(request), context),
    timeout: options?.timeout ?? DEFAULT_TIMEOUT,
    rules: policy.rules
  }))

/**
 * A service whose decisions come from a Promise callback: the decision is the callback's Promise (or value, as
 * `await` allows), answered as it settles.
 *
 * @internal
 */
export const makePromise = (
  callback: (request: PermissionRequest) => PromiseLike<PermissionResult> | PermissionResult,
  options?: { readonly timeout?: Duration.DurationInput | undefined }
): Service => ({
  // a native Promise is handed over as it is (`Promise.resolve` returns it)
  decide: (request) => Promise.resolve(callback(request)),
  timeout: options?.timeout ?? DEFAULT_TIMEOUT
})

// ---------------------------------------------------------------------------------------------------------------------
// rules
// ---------------------------------------------------------------------------------------------------------------------

/** A rule string read as `Tool` or `Tool(content)`. @internal */
export interface ParsedRule {
  readonly tool: string
  readonly content: string | undefined
}

/** @internal */
export const parseRule = (rule: string): ParsedRule => {
  const open = rule.indexOf("(")
  if (open > 0 && rule.endsWith(")")) return { tool: rule.slice(0, open).trim(), content: rule.slice(open + 1, -1) }
  return { tool: rule.trim(), content: undefined }
}

/** Whether a rule has content that narrows it (`Tool`, `Tool()` and `Tool(*)` do not). @internal */
export const hasContent = (parsed: ParsedRule): parsed is ParsedRule & { readonly content: string } =>
  parsed.content !== undefined && parsed.content !== "" && parsed.content !== "*"

const escapeRegExp = (s: string) => s.replace(/[.+^${}()|[\]\\]/g, "\\$&")

/** `*` matches anything (including `/`), used for commands and free text. */
const wildcard = (pattern: string): RegExp => new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`, "s")

/** Path globs: `**` any number of directories, `*` anything but `/`, `?` one character. */
const globToRegExp = (glob: string): RegExp => {
  if (glob.endsWith("/**")) return new RegExp(`^${globToRegExp(glob.slice(0, -3)).source.slice(1, -1)}(?:/.*)?$`, "s")
  let out = ""
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === "*" && glob[i + 1] === "*") {
      out += glob[i + 2] === "/" ? "(?:.*/)?" : ".*"
      i += glob[i + 2] === "/" ? 2 : 1
    } else if (c === "*") out += "[^/]*"
    else if (c === "?") out += "[^/]"
    else out += escapeRegExp(c)
  }
  return new RegExp(`^${out}$`, "s")
}

/** Whether a rule's tool name covers a tool: the same name, a wildcard, an MCP server, or a family (`Read`, …). */
const toolMatches = (ruleTool: string, toolName: string): boolean => {
  if (ruleTool === toolName) return true
  if (ruleTool.includes("*")) return wildcard(ruleTool).test(toolName)
  // `mcp__server` covers every tool of that server
  if (ruleTool.startsWith("mcp__")) {
    return ruleTool.split("__").length === 2 && toolName.startsWith(`${ruleTool}__`)
  }
  return ToolFamilies.covers(ruleTool, toolName, { denyOrAsk: false })
}

/** {@link toolMatches}, plus what a deny or ask `Read(path)` rule covers beyond its family (the editing tools, …). */
const ruleCovers = (parsed: ParsedRule, toolName: string, behavior: PermissionBehavior): boolean =>
  toolMatches(parsed.tool, toolName) ||
  (behavior !== "allow" && hasContent(parsed) && ToolFamilies.covers(parsed.tool, toolName, { denyOrAsk: true }))

const PATH_FIELDS = ["file_path", "path", "notebook_path"] as const

const resolvePattern = (pattern: string, cwd: string): string => {
  if (pattern.startsWith("~/")) return path.join(os.homedir(), pattern.slice(2))
  if (pattern.startsWith("//")) return pattern.slice(1)
  if (path.isAbsolute(pattern)) return pattern
  return path.join(cwd, pattern)
}

/** How many symlinks one path may go through before it counts as a loop (Linux's own limit). */
const MAX_LINKS = 40

const errorCode = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined

/**
 * Whether nothing (not even a dangling symlink) is at a path, without the cost of a thrown error for the common
 * answer; `undefined` when that cannot be known (a loop, an unreadable directory).
 */
const isMissing = (p: string): boolean | undefined => {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false }) === undefined
  } catch (error) {
    return errorCode(error) === "ENOTDIR" ? true : undefined
  }
}

/**
 * Where a path really is: its existing part with every symlink resolved (as the kernel resolves `..` after a
 * symlink), the rest appended, and a dangling symlink followed to where a write would create its target.
 * `undefined` when it cannot be known: a symlink loop, too many links, an unreadable directory.
 */
const realLocation = (p: string, hops = 0): string | undefined => {
  if (hops > MAX_LINKS) return undefined
  const missing = isMissing(p)
  if (missing === undefined) return undefined
  if (!missing) {
    try {
      return fs.realpathSync.native(p)
    } catch (error) {
      const code = errorCode(error)
      if (code !== "ENOENT" && code !== "ENOTDIR") return undefined
    }
  }
  const parent = path.dirname(p)
  if (parent === p) return p
  const realParent = realLocation(parent, hops)
  if (realParent === undefined) return undefined
  const here = path.join(realParent, path.basename(p))
  // nothing there, not even a dangling link: the path is created where its real parent is
  if (missing) return here
  let target: string
  try {
    target = fs.readlinkSync(here)
  } catch (error) {
    const code = errorCode(error)
    return code === "EINVAL" || code === "ENOENT" || code === "ENOTDIR" ? here : undefined
  }
  return realLocation(path.isAbsolute(target) ? target : `${realParent}/${target}`, hops + 1)
}

/** A path glob with its literal directories resolved like {@link realLocation}. */
const realGlob = (glob: string): string | undefined => {
  const parts = glob.split("/")
  const firstGlob = parts.findIndex((part) => /[*?[]/.test(part))
  if (firstGlob === -1) return realLocation(glob)
  const base = realLocation(parts.slice(0, firstGlob).join("/") || "/")
  return base === undefined ? undefined : [base === "/" ? "" : base, ...parts.slice(firstGlob)].join("/")
}

/**
 * Paths the kernel resolves per process (`/proc/self/cwd/…`, `/proc/<pid>/root/…`, `/dev/fd/3`): resolved here they
 * would name the SDK's files, not those of the tool that opens them, so they cannot be judged.
 */
const PER_PROCESS = /^\/(?:proc|dev\/fd|dev\/std(?:in|out|err))(?:\/|$)/

/** The path and every directory above it, up to `/`. */
const selfAndAncestors = (p: string): Array<string> => {
  const out = [p]
  for (let dir = path.dirname(p); dir !== out[out.length - 1]; dir = path.dirname(dir)) out.push(dir)
  return out
}

const segments = (p: string): Array<string> => (p === "/" ? [""] : p.split("/"))

/** One path segment of a glob: `*` anything but `/`, `?` one character. */
const segmentRegExp = (segment: string): RegExp =>
  new RegExp(`^${segment.split("").map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : escapeRegExp(c))).join("")}$`)

/**
 * Whether a glob could match a path under `root` (both absolute): `root`'s segments match the glob's leading segments
 * one by one, until the glob has a `**` or `root` has no more segments.
 */
const mayMatchBelow = (glob: string, root: string): boolean => {
  const globSegments = segments(glob)
  const rootSegments = segments(root)
  for (let i = 0; i < rootSegments.length; i++) {
    const segment = globSegments[i]
    if (segment === undefined) return false
    if (segment.includes("**")) return true
    if (!segmentRegExp(segment).test(rootSegments[i]!)) return false
  }
  return true
}

/**
 * A path rule on what a file tool touches (see {@link ToolFamilies.Target}). An allow rule matches a file when its
 * real location matches the rule's real glob, and a tree (a search) when the glob ends in `/**` and matches the
 * tree's root, so that it matches everything under it (never when either cannot be resolved). A deny or ask rule
 * matches when the lexical or the real path, or a directory above it, matches the lexical or the real glob; a tree
 * also when the glob could match something under its root; and any path that cannot be resolved.
 */
const pathMatches = (
  content: string,
  written: string,
  cwd: string,
  behavior: PermissionBehavior,
  kind: "File" | "Tree" = "File",
  writing = false
): boolean => {
  // the CLI expands a leading `~/` of a tool's path to the home directory before it touches the file
  const value = written.startsWith("~/") ? path.join(os.homedir(), written.slice(2)) : written
  const lexicalGlob = resolvePattern(content, cwd)
  const absolute = path.isAbsolute(value) ? value : `${cwd}/${value}`
  const located = PER_PROCESS.test(path.resolve(absolute)) ? undefined : realLocation(absolute)
  const real = located !== undefined && PER_PROCESS.test(located) ? undefined : located
  const realPattern = realGlob(lexicalGlob)
  if (behavior === "allow") {
    if (real === undefined || realPattern === undefined) return false
    // a file with another name (a hard link) is written wherever its other names are: no allow rule covers that
    if (kind === "File" && writing && ShellPaths.multiplyLinked(real) !== undefined) return false
    // with a `..` after a link the path's text and the kernel disagree (`src/link/../..`); a tool may open either
    const lexical = path.resolve(absolute)
    const both = value.split(/[\\/]/).includes("..") ? [real, lexical] : [real]
    return (kind === "File" || realPattern.endsWith("/**")) &&
      both.every((p) => globToRegExp(realPattern).test(p) || globToRegExp(lexicalGlob).test(p))
  }
  if (real === undefined) return true
  const targets = [path.resolve(cwd, value), real]
  const globs = [lexicalGlob, ...(realPattern === undefined ? [] : [realPattern])]
  // a file with another name under the rule's tree is that file too (searched, at most 10 000 entries)
  const id = kind === "File" ? ShellPaths.multiplyLinked(real) : undefined
  if (id !== undefined && globs.some((g) => ShellPaths.hasNameUnder(globBase(g), id) !== false)) return true
  // what is under a path a rule matches is covered too (a denied directory denies what is in it)
  const within = targets.flatMap(selfAndAncestors)
  if (globs.map(globToRegExp).some((g) => within.some((t) => g.test(t)))) return true
  return kind === "Tree" && globs.some((g) => targets.some((t) => mayMatchBelow(g, t)))
}

/** A path rule on what a file family member's call touches. */
const targetMatches = (
  content: string,
  target: ToolFamilies.Target,
  cwd: string,
  behavior: PermissionBehavior,
  writing: boolean
): boolean => {
  switch (target._tag) {
    case "None":
      return false
    case "Unknown":
      return behavior !== "allow"
    case "File":
      return pathMatches(content, target.path, cwd, behavior, "File", writing)
    case "Tree":
      return pathMatches(content, target.root, cwd, behavior, "Tree")
  }
}

type Request = Pick<PermissionRequest, "toolName" | "input" | "cwd">

/** Whether a rule's content matches a request that is not a shell command. */
const contentMatches = (parsed: ParsedRule, request: Request, behavior: PermissionBehavior): boolean => {
  const content = parsed.content
  if (content === undefined || content === "" || content === "*") return true
  const input = request.input
  if (content.startsWith("domain:")) {
    const url = input["url"]
    if (typeof url !== "string") return false
    try {
      const host = new URL(url).hostname
      const domain = content.slice("domain:".length)
      return host === domain || host.endsWith(`.${domain}`)
    } catch {
      return false
    }
  }
  const target = ToolFamilies.targetOf(request.toolName, input)
  if (target !== undefined) {
    return targetMatches(content, target, request.cwd, behavior, ToolFamilies.writesFiles(request.toolName))
  }
  for (const field of PATH_FIELDS) {
    const value = input[field]
    if (typeof value === "string") return pathMatches(content, value, request.cwd, behavior)
  }
  return wildcard(content).test(JSON.stringify(input))
}

type RuleEntry = Rule

interface CompiledRule {
  readonly entry: RuleEntry
  readonly parsed: ParsedRule
}

const compile = (list: ReadonlyArray<RuleEntry>): ReadonlyArray<CompiledRule> =>
  list.map((entry) => ({ entry, parsed: parseRule(entry.rule) }))

// ---------------------------------------------------------------------------------------------------------------------
// shell commands
// ---------------------------------------------------------------------------------------------------------------------

/** The Bash grammar as its owner keeps it: loaded on first use, `undefined` if it cannot be (no content rule allows). */
type BashGrammar = Effect.Effect<BashLanguage | undefined>

/**
 * A Bash grammar owned by the caller (a rule policy, a session's remembered rules): loaded by the first decision
 * that needs it and kept; every parse still runs on a parser of its own (see `bashParser.ts`).
 */
const bashGrammar = (): BashGrammar => {
  let loading: Promise<BashLanguage | undefined> | undefined
  return Effect.promise(() => {
    loading ??= import("./bashParser.js").then((module) => module.load()).then((language) => language, () => undefined)
    return loading
  })
}

/** Rules for the tools that write files judge the files a shell command writes. */
const writesFiles = (parsed: ParsedRule): boolean =>
  toolMatches(parsed.tool, "Write") || toolMatches(parsed.tool, "Edit")

/** Rules for the tools that read files judge the files a shell command reads. */
const readsFiles = (parsed: ParsedRule): boolean => toolMatches(parsed.tool, "Read")

/** A file a shell command writes, as the Write request a path rule judges. */
const writeRequest = (target: string, cwd: string): Request => ({
  toolName: "Write",
  input: { file_path: target },
  cwd
})

/** A file a shell command reads, as the Read request a path rule judges. */
const readRequest = (target: string, cwd: string): Request => ({
  toolName: "Read",
  input: { file_path: target },
  cwd
})

/** The literal directories of a path glob (up to its first segment with a wildcard). */
const globBase = (glob: string): string => {
  const parts = glob.split("/")
  const first = parts.findIndex((part) => /[*?[]/.test(part))
  return first === -1 ? glob : parts.slice(0, first).join("/") || "/"
}

/** What one decision asks the file system, asked once: path rules' base directories, files' other names. */
interface Lookups {
  /** The literal directories of a path rule's glob, as written and with symlinks resolved. */
  readonly bases: (parsed: ParsedRule) => ReadonlyArray<string>
  /** The identity of a file with more than one name (see `shellPaths.ts`). */
  readonly linked: (file: string) => { readonly dev: number; readonly ino: number } | undefined
  /** Where a path really is (`realLocation`). */
  readonly real: (file: string) => string | undefined
  /** Whether a path is a directory now. */
  readonly directory: (file: string) => boolean
}

const lookups = (cwd: string): Lookups => {
  const bases = new Map<ParsedRule, ReadonlyArray<string>>()
  const linked = new Map<string, { readonly dev: number; readonly ino: number } | undefined>()
  const real = new Map<string, string | undefined>()
  return {
    bases: (parsed) => {
      const known = bases.get(parsed)
      if (known !== undefined) return known
      const lexical = resolvePattern(parsed.content ?? "", cwd)
      const found = [...new Set([globBase(lexical), globBase(realGlob(lexical) ?? lexical)])]
      bases.set(parsed, found)
      return found
    },
    linked: (file) => {
      if (!linked.has(file)) linked.set(file, ShellPaths.multiplyLinked(file))
      return linked.get(file)
    },
    real: (file) => {
      if (!real.has(file)) real.set(file, realLocation(file))
      return real.get(file)
    },
    directory: (file) => {
      try {
        return fs.statSync(file).isDirectory()
      } catch {
        return false
      }
    }
  }
}

/**
 * Whether a path rule could match a path at all: the path (as written or really) is at or under one of the rule's
 * base directories, or cannot be resolved. A path glob matches nothing outside its literal directories, so a path
 * this rejects needs no full match.
 */
const mayMatch = (parsed: ParsedRule, file: string, known: Lookups): boolean => {
  const content = parsed.content
  if (content === undefined || content === "" || content === "*") return true
  const real = known.real(file)
  if (real === undefined) return true
  const under = (p: string) => (base: string) => p === base || p.startsWith(base === "/" ? "/" : `${base}/`)
  return known.bases(parsed).some((base) => under(file)(base) || under(real)(base))
}

/**
 * Whether a deny or ask path rule matches a whole tree a command reads or writes (`grep -r x dir`, `rm -r dir`): the
 * tree is inside the rule's paths, or holds the rule's base directory. A tree that cannot be resolved matches.
 */
const treeMatches = (
  parsed: ParsedRule,
  tree: string,
  request: Request,
  behavior: PermissionBehavior,
  known: Lookups
): boolean => {
  const content = parsed.content
  if (content === undefined || content === "" || content === "*") return true
  const real = known.real(path.resolve(request.cwd, tree))
  if (real === undefined) return true
  if (known.bases(parsed).some((base) => base === real || base.startsWith(real === "/" ? "/" : `${real}/`))) {
    return true
  }
  return mayMatch(parsed, tree, known) && contentMatches(parsed, readRequest(tree, request.cwd), behavior)
}

/**
 * Whether a deny or ask path rule matches a file through another name: the file has more than one (a hard link)
 * and one of them is under the rule's base directory (or that cannot be told within the search's bound).
 */
const linkedInto = (parsed: ParsedRule, file: string, known: Lookups): boolean => {
  const id = known.linked(file)
  if (id === undefined) return false
  const content = parsed.content
  if (content === undefined || content === "" || content === "*") return true
  return known.bases(parsed).some((base) => ShellPaths.hasNameUnder(base, id) !== false)
}

/**
 * A path a shell command names, and the directories the shell may be in when it is opened (`undefined`: not known).
 */
interface Target {
  readonly word: ShellRules.Word
  readonly dirs: ReadonlyArray<string> | undefined
  /** An operand of a program `shellPrograms.ts` does not know: a directory it names may be read or written whole. */
  readonly guessed?: boolean
}

/** What a shell command may read or write. */
interface Targets {
  readonly reads: ReadonlyArray<Target>
  readonly readTrees: ReadonlyArray<Target>
  readonly writes: ReadonlyArray<Target>
  readonly writeTrees: ReadonlyArray<Target>
  /** It reads or writes files named elsewhere (`xargs cat` reads the files named on its input). */
  readonly readsUnknown: boolean
  readonly writesUnknown: boolean
  /** The directories the shell may be in when a simple command runs (`undefined`: not known). */
  readonly dirsOf: (command: ShellRules.SimpleCommand) => ReadonlyArray<string> | undefined
}

const commandWords = (command: ShellRules.SimpleCommand): ReadonlyArray<string> =>
  command.words.slice(command.assignments).map((w) => w.loose)

/** Where `cd DIR` / `pushd DIR` goes (relative to where the shell is), or `undefined` when it cannot be told. */
const cdTarget = (command: ShellRules.SimpleCommand): string | undefined => {
  if (command.assignments > 0) return undefined
  const [name, ...args] = command.words.map((w) => w.literal)
  if (name !== "cd" && name !== "pushd") return undefined
  const operands = args.filter((a) => a !== "-L" && a !== "-P" && a !== "--")
  const target = operands[0]
  return operands.length === 1 && target !== undefined && target !== "-" && !/^[-+]/.test(target) ? target : undefined
}

/**
 * Where the shell may be after a command, and what it knows of that command's exit status there: `ok` after a `cd`
 * that moved it, `failed` after one that did not, `either` after anything else.
 */
interface Place {
  readonly dir: string
  readonly status: "ok" | "failed" | "either"
}

/** The places where the command after `joiner` runs (after `&&`: unless the last failed; `||`: unless it succeeded). */
const runFrom = (places: ReadonlyArray<Place>, joiner: string | undefined): ReadonlyArray<Place> =>
  places.filter((p) => joiner === "&&" ? p.status !== "failed" : joiner === "||" ? p.status !== "ok" : true)

/** The places where the command after `joiner` is skipped: its list goes on there with the status it had. */
const skipFrom = (places: ReadonlyArray<Place>, joiner: string | undefined): ReadonlyArray<Place> =>
  joiner === "&&"
    ? places.flatMap((p) => (p.status === "ok" ? [] : [{ dir: p.dir, status: "failed" as const }]))
    : joiner === "||"
    ? places.flatMap((p) => (p.status === "failed" ? [] : [{ dir: p.dir, status: "ok" as const }]))
    : []

/** Each place once. */
const uniquePlaces = (places: ReadonlyArray<Place>): ReadonlyArray<Place> => {
  const byKey = new Map(places.map((p) => [`${p.status}:${p.dir}`, p]))
  return [...byKey.values()]
}

/**
 * The directories the shell may be in at each simple command: the session's cwd, changed by the top-level `cd DIR`s;
 * not known after any other directory change (`cd` in a subshell, a substitution or a script, `cd -`, `popd`, `cd $X`).
 * A `cd` may fail (no such directory) or be skipped (`a || cd d`), and the list goes on after `;`, a newline or `||`
 * in the directory it was in: each path through the list is followed, so after `cd d && a; b` the shell is in `d` at
 * `a` and in `d` or still here at `b`. A `cd` in a pipeline runs in a subshell: the shell may or may not have moved.
 */
const directories = (
  analysis: ShellRules.Analysis,
  cwd: string
): (command: ShellRules.SimpleCommand) => ReadonlyArray<string> | undefined => {
  const { all, top, joiners } = analysis
  const changes = all.filter((c) => ShellPrograms.changesDirectory(commandWords(c)))
  // a command run in another directory (`env -C d`, `git -C d`): the scripts it runs may be there
  const elsewhere = all.some((c) => ShellPrograms.runsElsewhere(commandWords(c)))
  if (changes.length === 0 && !elsewhere) return () => [cwd]
  if (top === undefined || joiners === undefined) return () => undefined
  const inTop = new Set(top)
  if (changes.some((c) => !inTop.has(c))) return () => undefined
  const at = new Map<ShellRules.SimpleCommand, ReadonlyArray<string> | undefined>()
  const seen = new Set<string>([cwd])
  let places: ReadonlyArray<Place> | undefined = [{ dir: cwd, status: "either" }]
  top.forEach((command, i) => {
    if (places === undefined) {
      at.set(command, undefined)
      return
    }
    // no operator before a command but the first: a commit message's `cat`, or the command after it (whose operator
    // was given to the `git commit`): it may run wherever the shell is
    const before = i === 0 ? ";" : joiners[i - 1] ?? ";"
    const running = runFrom(places, before)
    const skipped = skipFrom(places, before)
    at.set(command, [...new Set(running.map((p) => p.dir))])
    const after: Array<Place> = [...skipped]
    if (!ShellPrograms.changesDirectory(commandWords(command))) {
      after.push(...running.map((p) => ({ dir: p.dir, status: "either" as const })))
    } else {
      const target = cdTarget(command)
      if (target === undefined) {
        places = undefined
        return
      }
      const piped = [before, joiners[i]].some((j) => j === "|" || j === "|&")
      for (const p of running) {
        const next = path.resolve(p.dir, target)
        seen.add(next)
        // a `cd` in a pipeline runs in a subshell (or, with `lastpipe`, in the shell): either way its status is the
        // pipeline's, not known
        after.push(
          piped ? { dir: next, status: "either" } : { dir: next, status: "ok" },
          piped ? { dir: p.dir, status: "either" } : { dir: p.dir, status: "failed" }
        )
      }
    }
    places = uniquePlaces(after)
  })
  // a command inside another (a script given to `bash -c`) may run wherever the shell has been
  const anywhere = places === undefined || elsewhere ? undefined : [...seen]
  return (command) => (at.has(command) ? at.get(command) : anywhere)
}

/**
 * The files a shell command reads and writes: its redirections, and the operands of its programs (see
 * `shellPrograms.ts`), each with the directories it may be opened from. After a link made by one of its commands,
 * the paths of its other commands are not known.
 */
const shellTargets = (analysis: ShellRules.Analysis, cwd: string): Targets => {
  const { all } = analysis
  const dirsOf = directories(analysis, cwd)
  const reads: Array<Target> = []
  const readTrees: Array<Target> = []
  const writes: Array<Target> = []
  const writeTrees: Array<Target> = []
  const linkers = all.map((c) => ShellPrograms.makesLinks(commandWords(c)))
  const linkCount = linkers.filter((l) => l).length
  let readsUnknown = false
  let writesUnknown = false
  // `shopt -s nocaseglob` makes globs match without case, `nullglob` makes one that matches nothing vanish (a
  // search left with no path reads its directory): what a glob names is not known after either
  const caseless = all.some((c) => commandWords(c).some((w) => /nocaseglob|nullglob/.test(w)))
  const plain = (word: ShellRules.Word): ShellRules.Word =>
    caseless && word.glob !== undefined ? { literal: undefined, loose: word.loose } : word
  all.forEach((command, i) => {
    const found = ShellPrograms.fileOperands(command.words.slice(command.assignments))
    // what a command a wrapper's option runs in another directory (`git -C sub`, `env -C sub`) opens is judged from
    // there
    const away = ShellPrograms.elsewhere(command.words.slice(command.assignments).map((w) => w.literal))
    const here = linkCount - (linkers[i] ? 1 : 0) > 0 ? undefined : dirsOf(command)
    const dirs = away === undefined
      ? here
      : away.dir === undefined || here === undefined
      ? undefined
      : here.map((d) => path.resolve(d, away.dir!))
    const at = (words: ReadonlyArray<ShellRules.Word>) => words.map((word) => ({ word: plain(word), dirs }))
    // the shell opens a command's redirections where it is, before the program (and its `-C`) runs
    const shell = (words: ReadonlyArray<ShellRules.Word>) => words.map((word) => ({ word: plain(word), dirs: here }))
    // the operands of a program the lists do not know: a relative path is judged only where the shell is known to
    // be; one whose value does not depend on it (absolute, or an expansion such as `~+`, `${PWD}`: not known) always
    const guesses = found.guesses
      .filter((word) => dirs !== undefined || word.literal === undefined || path.isAbsolute(word.literal))
      .map((word) => {
        const absolute = path.isAbsolute(word.literal ?? word.glob ?? "")
        return { word: plain(word), dirs: dirs ?? (absolute ? ["/"] : undefined), guessed: true }
      })
    reads.push(
      ...shell(command.inputs),
      ...at(found.reads),
      ...at(ShellPrograms.loadedFiles(command.words)),
      ...guesses
    )
    readTrees.push(...at(found.readTrees))
    writes.push(
      ...shell(command.writes),
      ...at(found.writes),
      ...at(ShellPrograms.optionWrites(command.words.slice(command.assignments))),
      ...guesses
    )
    writeTrees.push(...at(found.writeTrees))
    if (found.readsUnknown === true) readsUnknown = true
    if (found.writesUnknown === true) writesUnknown = true
  })
  const linkedBy = (command: ShellRules.SimpleCommand) => linkCount - (linkers[all.indexOf(command)] ? 1 : 0) > 0
  return {
    reads,
    readTrees,
    writes,
    writeTrees,
    readsUnknown,
    writesUnknown,
    dirsOf: (command) => (linkedBy(command) ? undefined : dirsOf(command))
  }
}

/**
 * The paths a word may name from a directory: its value, or, for a glob, what it expands to now (and the pattern
 * itself, which bash passes when nothing matches), made absolute; `undefined` when they cannot be known.
 */
const pathsOf = (w: ShellRules.Word, dir: string): ReadonlyArray<string> | undefined => {
  const paths = w.literal !== undefined
    ? [ShellPaths.resolvePhysical(dir, w.literal)]
    : w.glob === undefined
    ? undefined
    : ShellPaths.expandGlob(w.glob, dir)?.concat(ShellPaths.unquoteGlob(w.glob)).map((p) =>
      ShellPaths.resolvePhysical(dir, p)
    )
  // a process's magic links (`/proc/self/cwd`, `/dev/fd/3`) lead where that process is: the shell's, not ours
  return paths?.some((p) => MAGIC_LINKS.test(p)) === true ? undefined : paths
}

/** Paths through a process's working directory, root or open files. */
const MAGIC_LINKS = /^\/(proc\/[^/]+(\/task\/[^/]+)?\/(cwd|root|fd|map_files)|dev\/(fd|stdin|stdout|stderr))(\/|$)/

/** Every path a target may name, from every directory it may be opened from; `undefined` when not known. */
const targetPaths = (target: Target): ReadonlyArray<string> | undefined => {
  if (target.dirs === undefined) return undefined
  const paths: Array<string> = []
  for (const dir of target.dirs) {
    const found = pathsOf(target.word, dir)
    if (found === undefined) return undefined
    paths.push(...found)
  }
  return paths
}

/** Whether a deny or ask rule for Read, Write or Edit matches what a shell command reads or writes. */
const pathRuleMatches = (
  parsed: ParsedRule,
  behavior: PermissionBehavior,
  request: Request,
  analysis: ShellRules.Analysis,
  targets: Targets,
  known: Lookups
): boolean => {
  const writing = writesFiles(parsed)
  const reading = readsFiles(parsed)
  if (!writing && !reading) return false
  if (analysis.limit || analysis.broken) return true
  const asRequest = (p: string) => (writing ? writeRequest(p, request.cwd) : readRequest(p, request.cwd))
  const file = (target: Target) => {
    const paths = targetPaths(target)
    return paths === undefined ||
      paths.some((p) =>
        (mayMatch(parsed, p, known) && contentMatches(parsed, asRequest(p), behavior)) ||
        linkedInto(parsed, p, known) ||
        (target.guessed === true && known.directory(p) && treeMatches(parsed, p, request, behavior, known))
      )
  }
  const tree = (target: Target) => {
    const paths = targetPaths(target)
    return paths === undefined || paths.some((p) => treeMatches(parsed, p, request, behavior, known))
  }
  if (writing && (targets.writesUnknown || targets.writes.some(file) || targets.writeTrees.some(tree))) return true
  if (reading && (targets.readsUnknown || targets.reads.some(file) || targets.readTrees.some(tree))) return true
  return false
}

/** The first rule that matches a shell command (see SECURITY.md, "Permission rules", for the semantics). */
const firstShellMatch = (
  rules: ReadonlyArray<CompiledRule>,
  request: Request,
  analysis: ShellRules.Analysis
): RuleEntry | undefined => {
  const { all, top } = analysis
  const tool = request.toolName
  const targets = shellTargets(analysis, request.cwd)
  const known = lookups(request.cwd)
  // a write redirection is allowed when, from every directory the shell may then be in, its target is a file an allow
  // rule for Write or Edit allows, with no other name (a hard link)
  const writeAllowed = (command: ShellRules.SimpleCommand) => {
    const dirs = targets.dirsOf(command)
    return ({ literal }: ShellRules.Word) =>
      literal !== undefined && dirs !== undefined && dirs.every((dir) => {
        const file = ShellPaths.resolvePhysical(dir, literal)
        return known.linked(file) === undefined &&
          rules.some(({ entry, parsed }) =>
            entry.behavior === "allow" && writesFiles(parsed) &&
            contentMatches(parsed, writeRequest(file, request.cwd), "allow")
          )
      })
  }
  // a program that loads what its directory holds (or a parent's: `.git`, `package.json`), run after a `cd` into a
  // tree an allow rule lets the model write, runs configuration the model may have written there
  const writable = (dir: string) =>
    rules.some(({ entry, parsed }) =>
      entry.behavior === "allow" && writesFiles(parsed) &&
      contentMatches(parsed, writeRequest(path.join(dir, ".config"), request.cwd), "allow")
    )
  const elsewhereLoads = (command: ShellRules.SimpleCommand) => {
    const name = command.words[command.assignments]?.literal
    if (name === undefined || !ShellPrograms.LOADS_FROM_DIRECTORY.has(path.basename(name))) return false
    const dirs = targets.dirsOf(command)
    if (dirs === undefined) return true
    return dirs.some((dir) => {
      for (let d = dir; d !== request.cwd && d !== path.dirname(d); d = path.dirname(d)) if (writable(d)) return true
      return false
    })
  }
  const covered = (command: ShellRules.SimpleCommand) => {
    if (elsewhereLoads(command)) return false
    const reach = command.assignments +
      ShellPrograms.allowReach(command.words.slice(command.assignments).map((w) => w.literal))
    return rules.some(({ entry, parsed }) =>
      entry.behavior === "allow" && toolMatches(parsed.tool, tool) &&
      (!hasContent(parsed) || ShellRules.allowMatches(parsed.content, command, reach))
    ) &&
      [...command.writes, ...ShellPrograms.optionWrites(command.words.slice(command.assignments))].every(
        writeAllowed(command)
      )
  }
  return rules.find(({ entry, parsed }) => {
    if (entry.behavior !== "allow" && parsed.tool !== tool) {
      // a redirection or a program's operand is a Write (or Read) of its path for deny and ask rules
      if (pathRuleMatches(parsed, entry.behavior, request, analysis, targets, known)) return true
    }
    if (!toolMatches(parsed.tool, tool)) return false
    if (!hasContent(parsed)) return true
    if (entry.behavior !== "allow") {
      return analysis.limit || ShellRules.tokensMatch(parsed.content, analysis.tokens) ||
        all.some((command) => ShellRules.denyMatches(parsed.content, command))
    }
    return top !== undefined && top.some((command) => ShellRules.allowMatches(parsed.content, command, 1)) &&
      top.every(covered)
  })?.entry
}

/** The first rule of `rules` that matches the request (a shell command is parsed once, if a rule needs it). */
const firstMatch = (
  rules: ReadonlyArray<CompiledRule>,
  request: Request,
  grammar: BashGrammar
): Effect.Effect<RuleEntry | undefined> => {
  const command = request.input["command"]
  const tool = request.toolName
  const shell = typeof command === "string" && (ToolFamilies.runsBash(tool) || tool === "PowerShell")
  if (!shell) {
    return Effect.sync(() =>
      rules.find(({ entry, parsed }) =>
        ruleCovers(parsed, tool, entry.behavior) && contentMatches(parsed, request, entry.behavior)
      )?.entry
    )
  }
  const needsParse = rules.some(({ entry, parsed }) =>
    (toolMatches(parsed.tool, tool) && hasContent(parsed)) ||
    (entry.behavior !== "allow" && (writesFiles(parsed) || readsFiles(parsed)))
  )
  if (!needsParse) {
    return Effect.succeed(rules.find(({ parsed }) => toolMatches(parsed.tool, tool))?.entry)
  }
  // a command too long to judge is decided before the grammar is even loaded
  const analysis: Effect.Effect<ShellRules.Analysis> = tool === "PowerShell"
    ? Effect.succeed(ShellRules.powerShell(command))
    : command.length > ShellRules.MAX_COMMAND_LENGTH
    ? Effect.succeed(ShellRules.limited)
    : Effect.map(
      grammar,
      (language) => language === undefined ? ShellRules.unparsed(command) : ShellRules.analyze(language, command)
    )
  return Effect.map(analysis, (a) => firstShellMatch(rules, request, a))
}

/** @internal */
export const matches = (rule: string, request: Request): Effect.Effect<boolean> =>
  Effect.suspend(() =>
    Effect.map(
      firstMatch(compile([{ behavior: "allow", rule }]), request, bashGrammar()),
      (entry) => entry !== undefined
    )
  )

/** @internal */
export const rules = <E = never, R = never>(
  spec:
    | {
      readonly allow?: ReadonlyArray<string>
      readonly deny?: ReadonlyArray<string>
      readonly ask?: ReadonlyArray<string>
      readonly fallback?: Policy<E, R>
    }
    | ReadonlyArray<RuleEntry>,
  fallbackArg?: Policy<E, R>
): Policy<E, R> => {
  const list: ReadonlyArray<RuleEntry> = Array.isArray(spec)
    ? spec
    : [
      ...((spec as { deny?: ReadonlyArray<string> }).deny ?? []).map((rule) => ({ behavior: "deny" as const, rule })),
      ...((spec as { ask?: ReadonlyArray<string> }).ask ?? []).map((rule) => ({ behavior: "ask" as const, rule })),
      ...((spec as { allow?: ReadonlyArray<string> }).allow ?? []).map((rule) => ({ behavior: "allow" as const, rule }))
    ]
  const compiled = compile(list)
  const grammar = bashGrammar()
  const fallback: Policy<E, R> = fallbackArg ??
    (Array.isArray(spec) ? undefined : (spec as { fallback?: Policy<E, R> }).fallback) ??
    ((request) => Effect.succeed({ behavior: "deny", message: `No permission rule allows ${request.toolName}` }))
  const policy = (request: PermissionRequest) =>
    Effect.flatMap(firstMatch(compiled, request, grammar), (entry): Effect.Effect<PermissionResult, E, R> => {
      if (entry === undefined || entry.behavior === "ask") return fallback(request)
      if (entry.behavior === "allow") return Effect.succeed({ behavior: "allow" })
      return Effect.succeed({ behavior: "deny", message: denyMessage(entry) })
    })
  policy.rules = list
  return policy
}

/** What the model is told when a deny rule refuses a call. @internal */
export const denyMessage = (entry: Rule): string => entry.message ?? `Denied by permission rule ${entry.rule}`

/**
 * A rule set's first rule that matches a call, compiled once: the matcher of `rules`, for the session's `PreToolUse`
 * hook.
 *
 * @internal
 */
export const firstRule = (
  list: ReadonlyArray<Rule>
): (request: Pick<PermissionRequest, "toolName" | "input" | "cwd">) => Effect.Effect<Rule | undefined> => {
  const compiled = compile(list)
  const grammar = bashGrammar()
  return (request) => firstMatch(compiled, request, grammar)
}

/** The session's remembered rules (deny before allow) as a decision, or `undefined` when none matches. */
const rememberedDecision = (
  store: InternalStore,
  request: Request,
  grammar: BashGrammar
): Effect.Effect<PermissionResult | undefined> => {
  const remembered = store.rules()
  const ordered = [
    ...remembered.filter((r) => r.behavior === "deny"),
    ...remembered.filter((r) => r.behavior === "allow")
  ]
  return Effect.map(firstMatch(compile(ordered), request, grammar), (entry) =>
    entry === undefined
      ? undefined
      : entry.behavior === "allow"
      ? { behavior: "allow" }
      : { behavior: "deny", message: `Denied by remembered rule ${entry.rule}` })
}

// ---------------------------------------------------------------------------------------------------------------------
// AskUserQuestion
// ---------------------------------------------------------------------------------------------------------------------

const questionsOf = (input: Readonly<Record<string, unknown>>): ReadonlyArray<Question> => {
  const questions = input["questions"]
  if (!Array.isArray(questions)) return []
  return questions.flatMap((q: unknown): Array<Question> => {
    if (typeof q !== "object" || q === null || !("question" in q) || typeof q.question !== "string") return []
    const options = "options" in q && Array.isArray(q.options)
      ? q.options.flatMap((o: unknown) =>
        typeof o === "object" && o !== null && "label" in o && typeof o.label === "string"
          ? [{
            label: o.label,
            description: "description" in o && typeof o.description === "string" ? o.description : undefined
          }]
          : []
      )
      : []
    return [{
      question: q.question,
      header: "header" in q && typeof q.header === "string" ? q.header : undefined,
      options,
      multiSelect: "multiSelect" in q && typeof q.multiSelect === "boolean" ? q.multiSelect : undefined
    }]
  })
}

/** @internal */
export const askUserQuestion = <E = never, R = never, E2 = never, R2 = never>(
  answer: (
    questions: ReadonlyArray<Question>,
    request: PermissionRequest
  ) => Effect.Effect<Readonly<Record<string, string>>, E, R>,
  fallback?: Policy<E2, R2>
): Policy<E | E2, R | R2> =>
(request) => {
  if (request.toolName !== "AskUserQuestion") {
    return fallback !== undefined
      ? fallback(request)
      : Effect.succeed({ behavior: "deny", message: `Permission to use ${request.toolName} was denied` })
  }
  return Effect.map(answer(questionsOf(request.input), request), (answers) => ({
    behavior: "allow" as const,
    updatedInput: { ...request.input, answers }
  }))
}

// ---------------------------------------------------------------------------------------------------------------------
// per-session store and the can_use_tool handler
// ---------------------------------------------------------------------------------------------------------------------

/** The store plus what only the SDK writes. @internal */
export interface InternalStore extends PermissionStore {
  readonly record: (update: PermissionUpdate) => void
}

/** @internal */
export const makeStore = (): InternalStore => {
  let mode: "allow" | "deny" | "ask" = "ask"
  const remembered: Array<{ readonly behavior: "allow" | "deny"; readonly rule: string }> = []
  const accepted: Array<PermissionUpdate> = []
  return {
    mode: () => mode,
    setMode: (m) => {
      mode = m
    },
    rules: () => [...remembered],
    addRule: (behavior, rule) => {
      if (!remembered.some((r) => r.behavior === behavior && r.rule === rule)) remembered.push({ behavior, rule })
    },
    accepted: () => [...accepted],
    record: (update) => {
      accepted.push(update)
    }
  }
}

/** Remembers accepted "always allow / deny" rules for the rest of the session. */
const remember = (store: InternalStore, updates: ReadonlyArray<PermissionUpdate>) => {
  for (const update of updates) {
    store.record(update)
    if (update.type !== "addRules" || update.behavior === "ask") continue
    for (const r of update.rules) {
      store.addRule(update.behavior, r.ruleContent === undefined ? r.toolName : `${r.toolName}(${r.ruleContent})`)
    }
  }
}

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isPermissionUpdate = (u: unknown): u is PermissionUpdate =>
  isRecord(u) && typeof u["type"] === "string" && typeof u["destination"] === "string"

/** What an error says; never throws (a null-prototype object has no `toString`). */
const describeError = (error: unknown): string => {
  try {
    return error instanceof Error ? error.message : String(error)
  } catch {
    return "an error that cannot be printed"
  }
}

const describeCause = (cause: Cause.Cause<unknown>): string => describeError(Cause.squash(cause))

/** The `can_use_tool` response body. */
type Answer = Readonly<Record<string, unknown>>

/** A request that needs no decision (its answer), or one to decide. */
type Prepared =
  | { readonly _tag: "Answered"; readonly answer: Answer }
  | {
    readonly _tag: "Decide"
    readonly request: PermissionRequest
    /** Aborts `request.signal`: the decision was abandoned. */
    readonly abandon: () => void
    /**
     * The answer to a decision (remembering what it allows for the rest of the session), or, when the decision is
     * not a valid `PermissionResult`, why (for `failClosed`).
     */
    readonly decided: (result: unknown) => Either.Either<Answer, string>
    /** A deny that logs why (timeout, failure): the permission handler fails closed. */
    readonly failClosed: (reason: string) => Effect.Effect<Answer>
  }

/**
 * What of a session's options the `can_use_tool` handler reads.
 *
 * @internal
 */
export interface ContributionOptions {
  /** The directory relative path rules are judged from. */
  readonly cwd?: string | undefined
  readonly permissionMode?: string | undefined
  readonly allowedTools?: ReadonlyArray<string> | undefined
}

/** @internal */
export const contribution = (
  service: Service,
  timeout: Duration.Duration,
  options: ContributionOptions,
  store: InternalStore
): Contribution => {
  const deadlines = Duration.isFinite(timeout) ? Deadlines.make(Duration.toMillis(timeout)) : undefined
  const cwd = options.cwd ?? process.cwd()
  const grammar = bashGrammar()
  const timedOut = () => `no decision within ${Duration.format(timeout)}`

  /** What every request goes through first: the answers that need no decision, or the request to decide. */
  const prepare = (body: ControlRequestBody, requestId: string): Prepared => {
    const toolUseId = str(body["tool_use_id"]) ?? ""
    const toolName = str(body["tool_name"])
    const input = body["input"]
    // the optional fields set one by one, in the order the CLI gets them (no temporary object per field)
    const answer = (result: PermissionResult): Answer => {
      const out: Record<string, unknown> = result.behavior === "allow"
        ? { behavior: "allow", updatedInput: result.updatedInput ?? (isRecord(input) ? input : {}) }
        : { behavior: "deny", message: result.message }
      if (result.behavior === "allow") {
        if (result.updatedPermissions !== undefined && result.updatedPermissions.length > 0) {
          out["updatedPermissions"] = result.updatedPermissions
        }
      } else if (result.interrupt === true) out["interrupt"] = true
      if (result.decisionClassification !== undefined) out["decisionClassification"] = result.decisionClassification
      out["toolUseID"] = toolUseId
      return out
    }
    if (toolName === undefined || !isRecord(input)) {
      return { _tag: "Answered", answer: answer({ behavior: "deny", message: "Malformed can_use_tool request" }) }
    }
    // aborted whenever the decision is abandoned: timeout, control_cancel_request, session close
    const signal = lazySignal()
    const mcp = body["mcp_server"]
    const request: PermissionRequest = withLazySignal({
      toolName,
      input,
      toolUseId,
      suggestions: Array.isArray(body["permission_suggestions"])
        ? body["permission_suggestions"].filter(isPermissionUpdate)
        : [],
      blockedPath: str(body["blocked_path"]),
      decisionReason: str(body["decision_reason"]),
      decisionReasonType: str(body["decision_reason_type"]),
      title: str(body["title"]),
      displayName: str(body["display_name"]),
      description: str(body["description"]),
      agentId: str(body["agent_id"]),
      mcpServer: isRecord(mcp) && typeof mcp["name"] === "string"
        ? { name: mcp["name"], source: str(mcp["source"]) ?? "unknown" }
        : undefined,
      requiresUserInteraction: body["requires_user_interaction"] === true ? true : undefined,
      requestId,
      cwd,
      store,
      raw: body
    }, signal.signal)

    const mode = store.mode()
    if (mode === "allow") return { _tag: "Answered", answer: answer({ behavior: "allow" }) }
    if (mode === "deny") {
      return {
        _tag: "Answered",
        answer: answer({ behavior: "deny", message: "Denied: this session's permission mode is deny" })
      }
    }
    return {
      _tag: "Decide",
      request,
      abandon: signal.abort,
      decided: (result) =>
        Either.match(checkDecision(result), {
          onLeft: (why) => Either.left(`the permission handler returned an invalid decision: ${why}`),
          onRight: (valid) => {
            if (valid.behavior === "allow" && valid.updatedPermissions) remember(store, valid.updatedPermissions)
            return Either.right(answer(valid))
          }
        }),
      failClosed: (reason) =>
        Effect.as(
          Effect.logWarning(`Permission for ${toolName} denied: ${reason}`),
          answer({ behavior: "deny", message: `Permission denied (fail closed): ${reason}` })
        )
    }
  }

  /**
   * The service's decision, after the session's remembered rules: with none remembered, the service is asked at once
   * (a Promise decision then needs no fiber).
   */
  const decision = (request: PermissionRequest): Decision<unknown> =>
    store.rules().length === 0 ? service.decide(request) : Effect.flatMap(
      rememberedDecision(store, request, grammar),
      (hit): Effect.Effect<unknown, unknown> =>
        hit === undefined ? toEffect(service.decide(request)) : Effect.succeed(hit)
    )

  // The one dispatch of can_use_tool: the answers that need no decision at once, the others when the service's
  // decision settles (an Effect on a fiber, a Promise as it settles), both bounded by the same deadlines.
  const handler: Handler = ({ request: body, requestId }, reply) => {
    const prepared = prepare(body, requestId)
    if (prepared._tag === "Answered") {
      reply.succeed(prepared.answer)
      return noop
    }
    const { abandon, decided, failClosed, request } = prepared
    const closed = (reason: string) =>
      reply.fork(Effect.flatMap(failClosed(reason), (answer) => Effect.sync(() => reply.succeed(answer))))
    return decide({
      make: () => decision(request),
      reply,
      deadlines,
      abandon,
      onValue: (result) => {
        let response: Either.Either<Answer, string>
        try {
          response = decided(result)
        } catch (error) {
          return closed(`the permission handler failed: ${describeError(error)}`)
        }
        Either.match(response, { onLeft: closed, onRight: reply.succeed })
      },
      onFailure: (cause) =>
        closed(
          Cause.isInterruptedOnly(cause)
            ? "the permission handler was interrupted"
            : `the permission handler failed: ${describeCause(cause)}`
        ),
      onTimeout: () => closed(timedOut())
    })
  }

  return {
    permissionPromptStdio: true,
    handlers: new Map([["can_use_tool", handler]]),
    onProtocol: (protocol) =>
      deadlines === undefined
        ? warnShadowing(options)
        : Effect.zipRight(untilCliExits(deadlines.run, protocol), warnShadowing(options))
  }
}

/** The warning cases the official SDK raises (CLAUDE_SDK_CAN_USE_TOOL_SHADOWED). */
const warnShadowing = (options: ContributionOptions) =>
  Effect.gen(function*() {
    if (options.permissionMode === "bypassPermissions") {
      yield* Effect.logWarning(
        "CLAUDE_SDK_CAN_USE_TOOL_SHADOWED: permissionMode is bypassPermissions, so the Permissions service is never " +
          "asked"
      )
    }
    const bare = (options.allowedTools ?? []).filter((t) => !t.includes("("))
    if (bare.length > 0) {
      yield* Effect.logWarning(
        `CLAUDE_SDK_CAN_USE_TOOL_SHADOWED: allowedTools ${bare.join(", ")} approve every call of those tools, so ` +
          "the Permissions service is never asked about them"
      )
    }
  })
