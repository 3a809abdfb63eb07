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
  Service
} from "../../Permissions.js"
import type { Parser } from "web-tree-sitter"
import * as Deadlines from "../protocol/deadlines.js"
import type { Contribution } from "../protocol/contribution.js"
import { type Decision, decide, type Handler, lazySignal, noop, toEffect, untilCliExits } from "../protocol/handler.js"
import { checkDecision } from "./outputs.js"
import * as ShellRules from "./shellRules.js"

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
    timeout: options?.timeout ?? DEFAULT_TIMEOUT
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

interface ParsedRule {
  readonly tool: string
  readonly content: string | undefined
}

const parseRule = (rule: string): ParsedRule => {
  const open = rule.indexOf("(")
  if (open > 0 && rule.endsWith(")")) return { tool: rule.slice(0, open).trim(), content: rule.slice(open + 1, -1) }
  return { tool: rule.trim(), content: undefined }
}

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

const toolMatches = (ruleTool: string, toolName: string): boolean => {
  if (ruleTool === toolName) return true
  if (ruleTool.includes("*")) return wildcard(ruleTool).test(toolName)
  // `mcp__server` covers every tool of that server
  return ruleTool.startsWith("mcp__") && ruleTool.split("__").length === 2 && toolName.startsWith(`${ruleTool}__`)
}

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
 * Where a path really is: its existing part with every symlink resolved (as the kernel resolves `..` after a
 * symlink), the rest appended, and a dangling symlink followed to where a write would create its target.
 * `undefined` when it cannot be known: a symlink loop, too many links, an unreadable directory.
 */
const realLocation = (p: string, hops = 0): string | undefined => {
  if (hops > MAX_LINKS) return undefined
  try {
    return fs.realpathSync.native(p)
  } catch (error) {
    const code = errorCode(error)
    if (code !== "ENOENT" && code !== "ENOTDIR") return undefined
  }
  const parent = path.dirname(p)
  if (parent === p) return p
  const realParent = realLocation(parent, hops)
  if (realParent === undefined) return undefined
  const here = path.join(realParent, path.basename(p))
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
 * A path rule on a path: an allow rule matches when the path's real location matches the rule's real glob (never
 * when either cannot be resolved); a deny or ask rule when the lexical or the real path matches the lexical or the
 * real glob, or when the path cannot be resolved.
 */
const pathMatches = (content: string, written: string, cwd: string, behavior: PermissionBehavior): boolean => {
  // the CLI expands a leading `~/` of a tool's path to the home directory before it touches the file
  const value = written.startsWith("~/") ? path.join(os.homedir(), written.slice(2)) : written
  const lexicalGlob = resolvePattern(content, cwd)
  const real = realLocation(path.isAbsolute(value) ? value : `${cwd}/${value}`)
  const realPattern = realGlob(lexicalGlob)
  if (behavior === "allow") {
    return real !== undefined && realPattern !== undefined && globToRegExp(realPattern).test(real)
  }
  if (real === undefined) return true
  const targets = [path.resolve(cwd, value), real]
  const globs = [lexicalGlob, ...(realPattern === undefined ? [] : [realPattern])].map(globToRegExp)
  return globs.some((g) => targets.some((t) => g.test(t)))
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
  for (const field of PATH_FIELDS) {
    const value = input[field]
    if (typeof value === "string") return pathMatches(content, value, request.cwd, behavior)
  }
  return wildcard(content).test(JSON.stringify(input))
}

type RuleEntry = { readonly behavior: PermissionBehavior; readonly rule: string; readonly message?: string }

interface CompiledRule {
  readonly entry: RuleEntry
  readonly parsed: ParsedRule
}

const compile = (list: ReadonlyArray<RuleEntry>): ReadonlyArray<CompiledRule> =>
  list.map((entry) => ({ entry, parsed: parseRule(entry.rule) }))

const hasContent = (parsed: ParsedRule): parsed is ParsedRule & { readonly content: string } =>
  parsed.content !== undefined && parsed.content !== "" && parsed.content !== "*"

/** The parser, loaded on first use; `undefined` if it cannot be loaded (no Bash content rule then allows). */
const bashParser: Effect.Effect<Parser | undefined> = Effect.promise(() =>
  import("./bashParser.js").then((module) => module.parser).then((parser) => parser, () => undefined)
)

/** Rules for the tools that write files judge the files a shell command's redirections write. */
const writesFiles = (parsed: ParsedRule): boolean =>
  toolMatches(parsed.tool, "Write") || toolMatches(parsed.tool, "Edit")

const writeRequest = (target: string, cwd: string): Request => ({
  toolName: "Write",
  input: { file_path: target },
  cwd
})

/** The first rule that matches a shell command (see SECURITY.md, "Permission rules", for the semantics). */
const firstShellMatch = (
  rules: ReadonlyArray<CompiledRule>,
  request: Request,
  analysis: ShellRules.Analysis
): RuleEntry | undefined => {
  const { all, top } = analysis
  const tool = request.toolName
  const writeAllowed = ({ literal }: ShellRules.Word) =>
    literal !== undefined &&
    rules.some(({ entry, parsed }) =>
      entry.behavior === "allow" && writesFiles(parsed) &&
      contentMatches(parsed, writeRequest(literal, request.cwd), "allow")
    )
  const covered = (command: ShellRules.SimpleCommand) =>
    rules.some(({ entry, parsed }) =>
      entry.behavior === "allow" && toolMatches(parsed.tool, tool) &&
      (!hasContent(parsed) || ShellRules.allowMatches(parsed.content, command))
    ) && command.writes.every(writeAllowed)
  const writes = all.flatMap((command) => command.writes)
  return rules.find(({ entry, parsed }) => {
    if (entry.behavior !== "allow" && writesFiles(parsed) && parsed.tool !== tool) {
      // a write redirection is a Write of its target for deny and ask rules
      if (writes.some((w) => contentMatches(parsed, writeRequest(w.literal ?? w.loose, request.cwd), entry.behavior))) {
        return true
      }
      // after a `cd` a redirection's target is not known: any deny or ask rule for Write or Edit matches it
      if (analysis.writesUnknown === true && writes.length > 0) return true
    }
    if (!toolMatches(parsed.tool, tool)) return false
    if (!hasContent(parsed)) return true
    if (entry.behavior !== "allow") return all.some((command) => ShellRules.denyMatches(parsed.content, command))
    return top !== undefined && top.some((command) => ShellRules.allowMatches(parsed.content, command)) &&
      top.every(covered)
  })?.entry
}

/** The first rule of `rules` that matches the request (a shell command is parsed once, if a rule needs it). */
const firstMatch = (rules: ReadonlyArray<CompiledRule>, request: Request): Effect.Effect<RuleEntry | undefined> => {
  const command = request.input["command"]
  const tool = request.toolName
  const shell = typeof command === "string" && (tool === "Bash" || tool === "PowerShell")
  if (!shell) {
    return Effect.sync(() =>
      rules.find(({ entry, parsed }) =>
        toolMatches(parsed.tool, tool) && contentMatches(parsed, request, entry.behavior)
      )?.entry
    )
  }
  const needsParse = rules.some(({ entry, parsed }) =>
    (toolMatches(parsed.tool, tool) && hasContent(parsed)) ||
    (entry.behavior !== "allow" && writesFiles(parsed))
  )
  if (!needsParse) {
    return Effect.succeed(rules.find(({ parsed }) => toolMatches(parsed.tool, tool))?.entry)
  }
  const analysis: Effect.Effect<ShellRules.Analysis> = tool === "PowerShell"
    ? Effect.succeed(ShellRules.powerShell(command))
    : Effect.map(
      bashParser,
      (parser) => parser === undefined ? ShellRules.unparsed(command) : ShellRules.analyze(parser, command)
    )
  return Effect.map(analysis, (a) => firstShellMatch(rules, request, a))
}

/** @internal */
export const matches = (rule: string, request: Request): Effect.Effect<boolean> =>
  Effect.map(firstMatch(compile([{ behavior: "allow", rule }]), request), (entry) => entry !== undefined)

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
  const fallback: Policy<E, R> = fallbackArg ??
    (Array.isArray(spec) ? undefined : (spec as { fallback?: Policy<E, R> }).fallback) ??
    ((request) => Effect.succeed({ behavior: "deny", message: `No permission rule allows ${request.toolName}` }))
  return (request) =>
    Effect.flatMap(firstMatch(compiled, request), (entry): Effect.Effect<PermissionResult, E, R> => {
      if (entry === undefined || entry.behavior === "ask") return fallback(request)
      if (entry.behavior === "allow") return Effect.succeed({ behavior: "allow" })
      return Effect.succeed({ behavior: "deny", message: entry.message ?? `Denied by permission rule ${entry.rule}` })
    })
}

/** The session's remembered rules (deny before allow) as a decision, or `undefined` when none matches. */
const rememberedDecision = (
  store: InternalStore,
  request: Request
): Effect.Effect<PermissionResult | undefined> => {
  const remembered = store.rules()
  const ordered = [
    ...remembered.filter((r) => r.behavior === "deny"),
    ...remembered.filter((r) => r.behavior === "allow")
  ]
  return Effect.map(firstMatch(compile(ordered), request), (entry) =>
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
  const timedOut = () => `no decision within ${Duration.format(timeout)}`

  /** What every request goes through first: the answers that need no decision, or the request to decide. */
  const prepare = (body: ControlRequestBody, requestId: string): Prepared => {
    const toolUseId = str(body["tool_use_id"]) ?? ""
    const toolName = str(body["tool_name"])
    const input = body["input"]
    const answer = (result: PermissionResult): Answer =>
      result.behavior === "allow"
        ? {
          behavior: "allow",
          updatedInput: result.updatedInput ?? (isRecord(input) ? input : {}),
          ...(result.updatedPermissions !== undefined && result.updatedPermissions.length > 0
            ? { updatedPermissions: result.updatedPermissions }
            : {}),
          ...(result.decisionClassification !== undefined
            ? { decisionClassification: result.decisionClassification }
            : {}),
          toolUseID: toolUseId
        }
        : {
          behavior: "deny",
          message: result.message,
          ...(result.interrupt === true ? { interrupt: true } : {}),
          ...(result.decisionClassification !== undefined
            ? { decisionClassification: result.decisionClassification }
            : {}),
          toolUseID: toolUseId
        }
    if (toolName === undefined || !isRecord(input)) {
      return { _tag: "Answered", answer: answer({ behavior: "deny", message: "Malformed can_use_tool request" }) }
    }
    // aborted whenever the decision is abandoned: timeout, control_cancel_request, session close
    const signal = lazySignal()
    const mcp = body["mcp_server"]
    const request: PermissionRequest = {
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
      get signal(): AbortSignal {
        return signal.signal()
      },
      raw: body
    }

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
      rememberedDecision(store, request),
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
        : Effect.zipRight(Effect.forkScoped(untilCliExits(deadlines.run, protocol)), warnShadowing(options))
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
