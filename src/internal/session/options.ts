/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schedule from "effect/Schedule"
import * as AST from "effect/SchemaAST"
import * as Schema from "effect/Schema"
import { InvalidOptions, type OptionProblem, type ProcessExited } from "../../AgentError.js"
import type { CliRequirement, Extensions, Launch, Options } from "../../AgentOptions.js"
import * as Message from "../../Message.js"
import { compiledIs } from "../message/decode.js"
import { processMcpServers } from "../mcp/sdkMcp.js"
import { isInlineJson, isRecord } from "../transport/argv.js"
import { STRIPPED_ENV } from "../transport/env.js"

const invalid = (option: string, reason: string) => Effect.fail(new InvalidOptions({ option, description: reason }))

const flag = (name: string, value: string | number) => `--${name}=${value}`

const json = (value: unknown) => JSON.stringify(value)

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text.trim())
  } catch {
    return undefined
  }
}

/**
 * `extraArgs` names refused because their value would sit on the command line, where every user of the machine can
 * read it, with the option that carries the same value off it. (`--settings` and `--mcp-config` are accepted: an
 * inline JSON value of theirs goes into a private file.)
 */
const EXTRA_ARGS_WITH_OPTIONS: Readonly<Record<string, string>> = {
  "managed-settings": "managedSettings",
  "agents": "agents",
  "system-prompt": "systemPrompt",
  "append-system-prompt": "systemPrompt",
  "append-subagent-system-prompt": "agents"
}

// --- the options schema ------------------------------------------------------------------------------------------
// One schema checks every option before anything is spawned; both APIs run it (the Promise API extends its fields
// with its own). It only checks: the options are passed on as given (functions, Effect Schemas and layers keep
// their identity). Unknown fields are ignored, as the official SDK ignores them, with a warning (see `validate`).

const show = (u: unknown): string => {
  if (typeof u === "function") return "a function"
  try {
    const text = JSON.stringify(u)
    return text === undefined ? String(u) : text.length > 200 ? `${text.slice(0, 200)}…` : text
  } catch {
    return String(u)
  }
}

/** @internal */
export const isFunction = (u: unknown): u is (...args: ReadonlyArray<never>) => unknown => typeof u === "function"

/** Any function (a callback option). @internal */
export const fn = Schema.declare(isFunction, { identifier: "function" })

const noNul = (what: string) => (s: string) => !s.includes("\0") || `${what} must not contain a NUL byte`

const Text = Schema.String.pipe(Schema.filter(noNul("a string passed to the CLI")))
const Path = Schema.String.pipe(
  Schema.filter((s) => s.length > 0 || "must be a non-empty path"),
  Schema.filter(noNul("a path"))
)
const Strings = Schema.Array(Text)

const PositiveInt = Schema.Number.pipe(
  Schema.filter((n) => (Number.isInteger(n) && n > 0) || `must be a positive integer, got ${n}`)
)
const NonNegativeInt = Schema.Number.pipe(
  Schema.filter((n) => (Number.isInteger(n) && n >= 0) || `must be a non-negative integer, got ${n}`)
)
const PositiveNumber = Schema.Number.pipe(
  Schema.filter((n) => (Number.isFinite(n) && n > 0) || `must be a positive number, got ${n}`)
)
const Millis = Schema.Number.pipe(
  Schema.filter((n) => (Number.isFinite(n) && n >= 0) || `must be a number of milliseconds ≥ 0, got ${n}`)
)

const isDuration = (u: unknown) => Option.isSome(Duration.decodeUnknown(u))
const DurationInput = Schema.Unknown.pipe(Schema.filter((u) => isDuration(u) || `not a duration: ${show(u)}`))
const Timeout = Schema.Unknown.pipe(
  Schema.filter((u) => u === "infinity" || isDuration(u) || `not a duration: ${show(u)} (or "infinity")`)
)

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A record whose keys must pass `check` (a Record's key schema drops keys that fail it rather than rejecting them). */
const keysChecked = <V extends Schema.Schema.Any>(value: V, check: (key: string) => string | undefined) =>
  Schema.Record({ key: Schema.String, value }).pipe(Schema.filter((record) => {
    for (const key of Object.keys(record)) {
      const problem = check(key)
      if (problem !== undefined) return { path: [key], message: problem }
    }
    return undefined
  }))

const envName = (key: string) =>
  key.length > 0 && !key.includes("=") && !key.includes("\0")
    ? undefined
    : `${JSON.stringify(key)} is not an environment variable name (non-empty, without "=" or NUL)`

// `undefined` removes a variable (the official SDK's `Record<string, string | undefined>`)
const Env = keysChecked(
  Schema.UndefinedOr(Schema.String.pipe(Schema.filter(noNul("an environment variable's value")))),
  envName
)

const PermissionMode = Schema.Literal("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto")
const Effort = Schema.Literal("low", "medium", "high", "xhigh", "max")
const ThinkingDisplay = Schema.optional(Schema.Literal("summarized", "omitted"))

const Thinking = Schema.Union(
  Schema.Struct({ type: Schema.Literal("adaptive"), display: ThinkingDisplay }).annotations({
    identifier: "{ type: \"adaptive\", display? }"
  }),
  Schema.Struct({
    type: Schema.Literal("enabled"),
    budgetTokens: Schema.optional(PositiveInt),
    display: ThinkingDisplay
  })
    .annotations({ identifier: "{ type: \"enabled\", budgetTokens?, display? }" }),
  Schema.Struct({ type: Schema.Literal("disabled") }).annotations({ identifier: "{ type: \"disabled\" }" })
)

const OutputFormat = Schema.Struct({
  type: Schema.Literal("json_schema"),
  schema: Schema.Union(
    Schema.declare((u: unknown): u is Schema.Schema.Any => Schema.isSchema(u), { identifier: "Schema" }),
    JsonObject
  )
})

const SystemPrompt = Schema.Union(
  Schema.String,
  Schema.Array(Schema.String),
  Schema.Struct({
    type: Schema.Literal("preset"),
    preset: Schema.Literal("claude_code"),
    append: Schema.optional(Schema.String),
    excludeDynamicSections: Schema.optional(Schema.Boolean),
    snapshot: Schema.optional(Schema.Boolean)
  }),
  Schema.Struct({
    type: Schema.Literal("custom"),
    prompt: Schema.Union(Schema.String, Schema.Array(Schema.String)),
    snapshot: Schema.optional(Schema.Boolean)
  })
)

const AgentDefinition = Schema.Struct({
  description: Schema.String,
  prompt: Schema.String,
  tools: Schema.optional(Strings),
  disallowedTools: Schema.optional(Strings),
  model: Schema.optional(Schema.String),
  skills: Schema.optional(Strings),
  initialPrompt: Schema.optional(Schema.String),
  maxTurns: Schema.optional(PositiveInt),
  background: Schema.optional(Schema.Boolean),
  memory: Schema.optional(Schema.Literal("user", "project", "local")),
  effort: Schema.optional(Schema.Union(Effort, Schema.Number)),
  permissionMode: Schema.optional(PermissionMode),
  mcpServers: Schema.optional(Schema.Array(Schema.Union(Schema.String, JsonObject)))
}).annotations({ identifier: "AgentDefinition" })

const McpTimeout = Schema.optional(PositiveNumber)
const McpStdio = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Path,
  args: Schema.optional(Strings),
  env: Schema.optional(keysChecked(Text, envName)),
  timeout: McpTimeout,
  alwaysLoad: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "McpStdioServerConfig" })
const McpRemote = Schema.Struct({
  type: Schema.Literal("http", "sse"),
  url: Schema.String.pipe(Schema.filter((s) => URL.canParse(s) || `${JSON.stringify(s)} is not a URL`)),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  timeout: McpTimeout,
  alwaysLoad: Schema.optional(Schema.Boolean),
  tools: Schema.optional(Schema.Array(JsonObject))
}).annotations({ identifier: "McpRemoteServerConfig" })
const McpSdk = Schema.Struct({
  type: Schema.Literal("sdk"),
  name: Schema.String,
  instance: Schema.Struct({ connect: fn, close: fn }),
  timeout: McpTimeout
}).annotations({ identifier: "McpSdkServerConfig" })
const McpServers = Schema.Record({ key: Schema.String, value: Schema.Union(McpStdio, McpRemote, McpSdk) })

/** A settings file's path, or settings as a JSON string (one that starts with `{` or `[`), which must parse to an object. */
const SettingsString = Schema.String.pipe(
  Schema.filter((s) => {
    if (!isInlineJson(s)) return s.length > 0 || "must be a settings file's path or a JSON object"
    try {
      const parsed: unknown = JSON.parse(s.trim())
      return (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) || "is not a JSON object"
    } catch (error) {
      return `is not valid JSON (${error instanceof Error ? error.message : String(error)})`
    }
  })
)

const flagName = (key: string) => {
  if (!/^[^\s=\0-][^\s=\0]*$/.test(key)) {
    return `${JSON.stringify(key)} is not a flag name (without a leading "-", "=", spaces or NUL; "--" is added)`
  }
  const option = EXTRA_ARGS_WITH_OPTIONS[key]
  return option === undefined ? undefined : `--${key} would put its value on the command line; use the ${option} option`
}

const SkillName = Schema.String.pipe(
  Schema.filter((s) => /^[\w:.-]+$/.test(s) || `invalid skill name ${JSON.stringify(s)}`)
)

const AutoResume = Schema.Union(
  Schema.declare((u: unknown): u is Schedule.Schedule<unknown, ProcessExited> => Schedule.isSchedule(u), {
    identifier: "Schedule"
  }),
  Schema.Struct({
    maxRestarts: NonNegativeInt,
    initialDelayMillis: Schema.optional(Millis),
    maxDelayMillis: Schema.optional(Millis)
  })
)

const Delivery = Schema.Literal("argv", "initialize")

/** The fields of {@link Options}, each as a Schema. @internal */
export const optionFields = {
  model: Schema.optional(Text),
  fallbackModel: Schema.optional(Text),
  thinking: Schema.optional(Thinking),
  maxThinkingTokens: Schema.optional(NonNegativeInt),
  effort: Schema.optional(Effort),
  betas: Schema.optional(Strings),
  outputFormat: Schema.optional(OutputFormat),
  maxTurns: Schema.optional(PositiveInt),
  maxBudgetUsd: Schema.optional(PositiveNumber),
  taskBudget: Schema.optional(Schema.Struct({ total: PositiveInt })),
  cwd: Schema.optional(Path),
  additionalDirectories: Schema.optional(Schema.Array(Path)),
  env: Schema.optional(Env),
  envMode: Schema.optional(Schema.Literal("overlay", "replace")),
  keepEnv: Schema.optional(Schema.Array(Schema.Literal(...STRIPPED_ENV))),
  pathToClaudeCodeExecutable: Schema.optional(Path),
  executable: Schema.optional(Schema.Literal("node", "bun", "deno")),
  executableArgs: Schema.optional(Strings),
  extraArgs: Schema.optional(keysChecked(Schema.NullOr(Text), flagName)),
  stderr: Schema.optional(fn),
  debug: Schema.optional(Schema.Boolean),
  debugFile: Schema.optional(Path),
  allowedTools: Schema.optional(Strings),
  disallowedTools: Schema.optional(Strings),
  tools: Schema.optional(
    Schema.Union(Strings, Schema.Struct({ type: Schema.Literal("preset"), preset: Schema.Literal("claude_code") }))
  ),
  permissionMode: Schema.optional(PermissionMode),
  allowDangerouslySkipPermissions: Schema.optional(Schema.Boolean),
  permissionPromptToolName: Schema.optional(Text),
  permissionPrompts: Schema.optional(Schema.Literal("host", "none")),
  skills: Schema.optional(Schema.Union(Schema.Literal("all"), Schema.Array(SkillName))),
  toolAliases: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  toolConfig: Schema.optional(Schema.Struct({
    askUserQuestion: Schema.optional(Schema.Struct({
      previewFormat: Schema.optional(Schema.Literal("markdown", "html"))
    }))
  })),
  systemPrompt: Schema.optional(SystemPrompt),
  agents: Schema.optional(Schema.Record({ key: Schema.String, value: AgentDefinition })),
  agent: Schema.optional(Text),
  settingSources: Schema.optional(Schema.Array(Schema.Literal("user", "project", "local"))),
  settings: Schema.optional(Schema.Union(SettingsString, JsonObject)),
  managedSettings: Schema.optional(JsonObject),
  sandbox: Schema.optional(JsonObject),
  plugins: Schema.optional(Schema.Array(Schema.Struct({
    type: Schema.Literal("local"),
    path: Path,
    skipMcpDiscovery: Schema.optional(Schema.Boolean)
  }))),
  pluginDelivery: Schema.optional(Delivery),
  planModeInstructions: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  projectConfigRoot: Schema.optional(Path),
  mcpServers: Schema.optional(McpServers),
  mcpServersDelivery: Schema.optional(Delivery),
  strictMcpConfig: Schema.optional(Schema.Boolean),
  onElicitation: Schema.optional(fn),
  onUserDialog: Schema.optional(fn),
  supportedDialogKinds: Schema.optional(Schema.Array(Text.pipe(
    Schema.filter((s) => s.length > 0 || "a dialog kind must be a non-empty string")
  ))),
  perTaskStopAffordance: Schema.optional(Schema.Boolean),
  resume: Schema.optional(Text),
  continue: Schema.optional(Schema.Boolean),
  forkSession: Schema.optional(Schema.Boolean),
  sessionId: Schema.optional(Schema.UUID),
  resumeSessionAt: Schema.optional(Text),
  resumeDropsTurn: Schema.optional(Text),
  persistSession: Schema.optional(Schema.Boolean),
  enableFileCheckpointing: Schema.optional(Schema.Boolean),
  includePartialMessages: Schema.optional(Schema.Boolean),
  includeHookEvents: Schema.optional(Schema.Boolean),
  forwardSubagentText: Schema.optional(Schema.Boolean),
  promptSuggestions: Schema.optional(Schema.Boolean),
  agentProgressSummaries: Schema.optional(Schema.Boolean),
  verbatimPrompts: Schema.optional(Schema.Boolean),
  controlRequestTimeout: Schema.optional(Timeout),
  initializeTimeout: Schema.optional(Timeout),
  idleTimeout: Schema.optional(Timeout),
  firstMessageTimeout: Schema.optional(Timeout),
  interruptTimeout: Schema.optional(DurationInput),
  closeGraceMillis: Schema.optional(Millis),
  killGraceMillis: Schema.optional(Millis),
  reapToolProcesses: Schema.optional(Schema.Boolean),
  maxLineBytes: Schema.optional(PositiveInt),
  cliVersions: Schema.optional(Schema.String),
  autoResume: Schema.optional(AutoResume),
  messageBufferSize: Schema.optional(PositiveInt)
}

const fieldsSchema = Schema.Struct(optionFields)

/**
 * Rules between options, each naming the option to change: every rule broken. They read the options as given (any
 * value may be there), so that they are checked with the fields, not only once the fields are right.
 *
 * @internal
 */
export const combinations = (options: { readonly [option: string]: unknown }): ReadonlyArray<OptionProblem> => {
  const problems: Array<OptionProblem> = []
  const at = (option: string, description: string) => problems.push({ option, description })
  if (options["fallbackModel"] !== undefined && options["fallbackModel"] === options["model"]) {
    at("fallbackModel", "must differ from model")
  }
  const resumes = options["resume"] !== undefined || options["continue"] === true
  if (options["resume"] !== undefined && options["continue"] === true) {
    at("resume", "resume and continue are mutually exclusive")
  }
  if (options["sessionId"] !== undefined && resumes && options["forkSession"] !== true) {
    at("sessionId", "with resume or continue, sessionId requires forkSession: true")
  }
  if (options["forkSession"] === true && !resumes) at("forkSession", "forkSession requires resume or continue")
  const settings = options["settings"]
  if (typeof settings === "string" && !isInlineJson(settings) && options["sandbox"] !== undefined) {
    at("sandbox", "cannot be merged into settings given as a file path; pass settings as an object")
  }
  if (options["permissionMode"] === "bypassPermissions" && options["allowDangerouslySkipPermissions"] !== true) {
    at("permissionMode", "bypassPermissions requires allowDangerouslySkipPermissions: true")
  }
  return problems
}

/**
 * Every option, as a Schema that only checks (its type and encoded side are the options as given).
 *
 * @internal
 */
export const OptionsSchema = fieldsSchema.pipe(
  Schema.filter((options) =>
    combinations(options).map(({ description, option }) => ({ path: [option], message: description }))
  )
)

/**
 * How one value differs from what a union takes: the member it came close to (it failed inside, not on its kind or
 * on a literal such as `type`), or the union as a whole.
 */
const unionIssue = (issue: ParseResult.Composite): ParseResult.ParseIssue => {
  const members = (Array.isArray(issue.issues) ? issue.issues : [issue.issues]).filter((member) =>
    !(member._tag === "Type" && AST.isUndefinedKeyword(member.ast))
  )
  const close = members.filter((member) => !missesLiteral(member) && !wrongKind(member))
  if (close.length === 1) return close[0]!
  if (close.length === 0 && members.length === 1) return members[0]!
  return new ParseResult.Type(issue.ast, issue.actual, `Expected ${expected(issue.ast)}, actual ${show(issue.actual)}`)
}

/** The value is not even of the member's kind (a string where an object goes). */
const wrongKind = (issue: ParseResult.ParseIssue): boolean => issue._tag === "Type" && !AST.isRefinement(issue.ast)

const isLiteralish = (ast: AST.AST): boolean =>
  AST.isLiteral(ast) || AST.isUndefinedKeyword(ast) || (AST.isUnion(ast) && ast.types.every(isLiteralish))

const missesLiteral = (issue: ParseResult.ParseIssue): boolean => {
  switch (issue._tag) {
    case "Type":
      return isLiteralish(issue.ast)
    case "Missing":
      return isLiteralish(issue.ast.type)
    case "Pointer":
      return !Array.isArray(issue.path) && missesLiteral(issue.issue)
    case "Composite":
      return AST.isUnion(issue.ast) && isLiteralish(issue.ast) ||
        (AST.isTypeLiteral(issue.ast) &&
          (Array.isArray(issue.issues) ? issue.issues : [issue.issues]).some(missesLiteral))
    default:
      return false
  }
}

/** A type as a caller reads it: without `undefined` (an option may always be left undefined) or refinements. */
const expected = (ast: AST.AST): string => {
  const id = AST.getIdentifierAnnotation(ast)
  if (Option.isSome(id)) return id.value
  if (AST.isUnion(ast)) return ast.types.filter((t) => !AST.isUndefinedKeyword(t)).map(expected).join(" | ")
  if (AST.isRefinement(ast)) return expected(ast.from)
  if (AST.isTupleType(ast) && ast.elements.length === 0 && ast.rest.length === 1) {
    return `Array<${expected(ast.rest[0]!.type)}>`
  }
  return String(ast)
}

/** One problem found in the options: where (the path from the options object), and what is wrong. */
interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Every issue under `issue` (a union contributes the one member the value came closest to), in order. */
const allIssues = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): ReadonlyArray<Issue> => {
  switch (issue._tag) {
    case "Pointer":
      return allIssues(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])])
    case "Composite": {
      if (AST.isUnion(issue.ast)) {
        const inner = unionIssue(issue)
        return inner === issue
          ? [{ path, message: ParseResult.TreeFormatter.formatIssueSync(inner) }]
          : allIssues(inner, path)
      }
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues]
      const found = issues.flatMap((inner) => allIssues(inner, path))
      return found.length === 0 ? [{ path, message: "is invalid" }] : found
    }
    case "Refinement":
      return allIssues(issue.issue, path)
    case "Type":
      return [{ path, message: issue.message ?? `Expected ${expected(issue.ast)}, actual ${show(issue.actual)}` }]
    default:
      return [{ path, message: ParseResult.TreeFormatter.formatIssueSync(issue) }]
  }
}

/** Every problem as an option and what is wrong with it (the path inside the option leads the description). */
const problemsOf = (issues: ReadonlyArray<Issue>, options: unknown): ReadonlyArray<OptionProblem> =>
  issues.map(({ message, path }) => {
    const [option, ...inside] = path
    if (option === undefined) return { option: "options", description: `must be an object, got ${show(options)}` }
    return {
      option: String(option),
      description: inside.length === 0 ? message : `${inside.map(String).join(".")}: ${message}`
    }
  })

/**
 * One `InvalidOptions` for every problem of one call: `option` / `description` are the first, `problems` all of them
 * when there are several.
 *
 * @internal
 */
export const invalidAll = (problems: ReadonlyArray<OptionProblem>): InvalidOptions | undefined => {
  const [first] = problems
  if (first === undefined) return undefined
  return problems.length === 1
    ? new InvalidOptions({ option: first.option, description: first.description })
    : new InvalidOptions({ option: first.option, description: first.description, problems })
}

/**
 * Checks options against a schema (`OptionsSchema`, or the Promise API's extension of it): `undefined` when they
 * are valid, else an `InvalidOptions` naming every option at fault and why (with the path inside it); `option` and
 * `description` are the first problem.
 *
 * @internal
 */
export const checker = <A, I>(schema: Schema.Schema<A, I>) => {
  const problems = problemsChecker(schema)
  return (options: unknown): InvalidOptions | undefined => invalidAll(problems(options))
}

/**
 * Every problem `options` have against `schema`, in order (none when they are valid). Valid options, what nearly
 * every query passes, are told by the schema's compiled guard (what `Schema.is` answers, without a parse per option);
 * only options it rejects are parsed, to name every problem.
 */
const problemsChecker = <A, I>(schema: Schema.Schema<A, I>) => {
  const valid = compiledIs(schema)
  const validate = ParseResult.validateEither(schema, { errors: "all", onExcessProperty: "ignore" })
  return (options: unknown): ReadonlyArray<OptionProblem> => {
    if (valid(options)) return []
    const result = validate(options)
    return Either.isRight(result) ? [] : problemsOf(allIssues(result.left, []), options)
  }
}

const fieldProblems = problemsChecker(fieldsSchema)

/** The known option nearest to an unknown one (a different case, `_` or `-`, or up to two letters off), if any. */
const nearest = (name: string, known: ReadonlyArray<string>): string | undefined => {
  const normal = (key: string) => key.toLowerCase().replace(/[-_]/g, "")
  const target = normal(name)
  let best: { readonly key: string; readonly distance: number } | undefined
  for (const key of known) {
    const distance = editDistance(target, normal(key))
    if (distance <= Math.min(2, Math.floor(target.length / 3)) && (best === undefined || distance < best.distance)) {
      best = { key, distance }
    }
  }
  return best?.key
}

/** Levenshtein distance. */
const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * The options given that no option is named, each with the known option nearest to it: `maxTurn (did you mean
 * maxTurns?)`. Empty when every key is known.
 *
 * @internal
 */
export const unknownOptions = (options: object, known: ReadonlyArray<string>): ReadonlyArray<string> =>
  Object.keys(options).filter((key) => !known.includes(key)).map((key) => {
    const near = nearest(key, known)
    return near === undefined ? key : `${key} (did you mean ${near}?)`
  })

const OPTION_NAMES: ReadonlyArray<string> = Object.keys(optionFields)

/**
 * An `InvalidOptions` (option `hooks`) naming every event registered under a name that is no hook event, with the
 * nearest event and the list of events; `undefined` when every name is an event. (A misspelled event would otherwise
 * never fire: the CLI ignores the names it does not know.)
 *
 * @internal
 */
export const unknownHookEvents = (
  registrations: ReadonlyArray<object>,
  events: ReadonlyArray<string>
): InvalidOptions | undefined =>
  invalidAll(
    registrations.flatMap((registration) =>
      Object.keys(registration).filter((event) => !events.includes(event)).map((event) => {
        const near = nearest(event, events)
        return {
          option: "hooks",
          description: `${JSON.stringify(event)} is not a hook event${
            near === undefined ? "" : ` (did you mean ${near}?)`
          }; the events are ${events.join(", ")}`
        }
      })
    )
  )

/**
 * Checks every option before anything is spawned (the one entry point of both APIs): one `InvalidOptions` listing
 * every problem, fields and the rules between them alike. An option this SDK does not know is not an error (it is
 * ignored, as the official SDK ignores it, so that options written for a newer official SDK still run): it is logged
 * once, as a warning naming the nearest known option.
 *
 * @internal
 */
export const validate = (options: Options): Effect.Effect<void, InvalidOptions> =>
  Effect.suspend(() => {
    const record: { readonly [option: string]: unknown } | undefined = isRecord(options) ? options : undefined
    const invalid = invalidAll([...fieldProblems(options), ...(record === undefined ? [] : combinations(record))])
    if (invalid !== undefined) return Effect.fail(invalid)
    const unknown = unknownOptions(options, OPTION_NAMES)
    return unknown.length === 0
      ? Effect.void
      : Effect.logWarning(`Unknown option${unknown.length === 1 ? "" : "s"}, ignored: ${unknown.join(", ")}`)
  })

const checkMcpServers = checker(Schema.Struct({ mcpServers: McpServers }))

/**
 * Checks the servers given to `setMcpServers` as the `mcpServers` option is checked.
 *
 * @internal
 */
export const validateMcpServers = (servers: unknown): Effect.Effect<void, InvalidOptions> =>
  Effect.suspend(() => {
    const invalid = checkMcpServers({ mcpServers: servers })
    return invalid === undefined ? Effect.void : Effect.fail(invalid)
  })

/** @internal */
export const toLaunch = (options: Options, extensions: Extensions = {}): Effect.Effect<Launch, InvalidOptions> =>
  Effect.zipRight(validate(options), launchOf(options, extensions))

/** `toLaunch` for options already validated. @internal */
export const launchOf = (options: Options, extensions: Extensions = {}): Effect.Effect<Launch, InvalidOptions> =>
  Effect.suspend(() => {
    const args: Array<string> = []
    const env: Record<string, string | undefined> = { ...options.env }
    const initialize: Record<string, unknown> = {}

    if (options.permissionPromptToolName !== undefined && extensions.permissionPromptStdio === true) {
      return invalid("permissionPromptToolName", "cannot be combined with a Permissions handler (canUseTool)")
    }
    if ((options.supportedDialogKinds?.length ?? 0) > 0 && options.onUserDialog === undefined) {
      return invalid("supportedDialogKinds", "requires onUserDialog: the CLI would send dialogs nobody answers")
    }
    // a settings string the CLI would read as JSON goes into a private file like an object (the schema checked that
    // it parses to an object)
    const parsedSettings = typeof options.settings === "string" && isInlineJson(options.settings)
      ? parseJson(options.settings)
      : options.settings
    const settingsObject = isRecord(parsedSettings) ? parsedSettings : undefined

    // --- argv ----------------------------------------------------------------------------------------------------
    if (options.effort !== undefined) args.push(flag("effort", options.effort))
    if (options.maxTurns !== undefined) args.push(flag("max-turns", options.maxTurns))
    if (options.maxBudgetUsd !== undefined) args.push(flag("max-budget-usd", options.maxBudgetUsd))
    if (options.taskBudget !== undefined) args.push(flag("task-budget", options.taskBudget.total))
    if (options.model !== undefined) args.push(flag("model", options.model))
    if (options.fallbackModel !== undefined) args.push(flag("fallback-model", options.fallbackModel))
    if (options.agent !== undefined) args.push(flag("agent", options.agent))

    if (extensions.permissionPromptStdio === true) args.push(flag("permission-prompt-tool", "stdio"))
    else if (options.permissionPromptToolName !== undefined) {
      args.push(flag("permission-prompt-tool", options.permissionPromptToolName))
    }
    if (options.permissionPrompts !== undefined) args.push(flag("permission-prompts", options.permissionPrompts))

    const allowedTools = [...(options.allowedTools ?? []), ...(extensions.allowedTools ?? [])]
    if (options.skills === "all") allowedTools.push("Skill")
    else if (options.skills !== undefined) { for (const s of options.skills) allowedTools.push(`Skill(${s})`) }
    if (allowedTools.length > 0) args.push(flag("allowedTools", allowedTools.join(",")))
    if (options.disallowedTools !== undefined && options.disallowedTools.length > 0) {
      args.push(flag("disallowedTools", options.disallowedTools.join(",")))
    }
    if (options.tools !== undefined) {
      args.push(flag("tools", Array.isArray(options.tools) ? options.tools.join(",") : "default"))
    }

    const delivered = deliver(options)
    args.push(...delivered.args)
    Object.assign(initialize, delivered.initialize)
    if (options.strictMcpConfig === true) args.push("--strict-mcp-config")
    if (options.settingSources !== undefined) args.push(flag("setting-sources", options.settingSources.join(",")))
    if (options.permissionMode !== undefined) args.push(flag("permission-mode", options.permissionMode))
    if (options.allowDangerouslySkipPermissions === true) args.push("--allow-dangerously-skip-permissions")
    if (options.includePartialMessages === true) args.push("--include-partial-messages")
    if (options.includeHookEvents === true) args.push("--include-hook-events")
    for (const dir of options.additionalDirectories ?? []) args.push(flag("add-dir", dir))

    if (options.thinking !== undefined) {
      const t = options.thinking
      if (t.type === "disabled") args.push(flag("thinking", "disabled"))
      else if (t.type === "enabled" && t.budgetTokens !== undefined) {
        args.push(flag("max-thinking-tokens", t.budgetTokens))
      } else args.push(flag("thinking", "adaptive"))
      if (t.type !== "disabled" && t.display !== undefined) args.push(flag("thinking-display", t.display))
    } else if (options.maxThinkingTokens !== undefined) {
      args.push(
        options.maxThinkingTokens === 0
          ? flag("thinking", "disabled")
          : flag("max-thinking-tokens", options.maxThinkingTokens)
      )
    }
    if (options.betas !== undefined && options.betas.length > 0) args.push(flag("betas", options.betas.join(",")))
    if (options.outputFormat !== undefined) {
      const schema = Schema.isSchema(options.outputFormat.schema)
        ? JSONSchema.make(options.outputFormat.schema)
        : options.outputFormat.schema
      args.push(flag("json-schema", json(schema)))
      initialize["jsonSchema"] = schema
    }

    if (options.resume !== undefined) args.push(flag("resume", options.resume))
    if (options.continue === true) args.push("--continue")
    if (options.forkSession === true) args.push("--fork-session")
    if (options.sessionId !== undefined) args.push(flag("session-id", options.sessionId))
    if (options.resumeSessionAt !== undefined) args.push(flag("resume-session-at", options.resumeSessionAt))
    if (options.resumeDropsTurn !== undefined) args.push(flag("resume-drops-turn", options.resumeDropsTurn))
    if (options.persistSession === false) args.push("--no-session-persistence")
    if (extensions.sessionMirror === true) {
      if (options.persistSession === false) {
        return invalid("persistSession", "cannot be false with a transcript store (the CLI mirrors what it writes)")
      }
      args.push("--session-mirror")
    }

    const mirrored = extensions.cliPermissions
    const mirrors = mirrored !== undefined && (mirrored.deny.length > 0 || mirrored.ask.length > 0)
    if (options.settings !== undefined || options.sandbox !== undefined || mirrors) {
      if (settingsObject === undefined && typeof options.settings === "string") {
        // a second `--settings` would replace the caller's file: a deny rule that must hold cannot be added to it
        if (mirrors) {
          return invalid(
            "settings",
            "cannot take the deny and ask rules of the Permissions rules when given as a file path; pass settings " +
              "as an object"
          )
        }
        args.push("--settings", options.settings)
      } else {
        const settings: Record<string, unknown> = { ...settingsObject }
        if (options.sandbox !== undefined) {
          const sandbox = { ...options.sandbox }
          if (sandbox["enabled"] === true && sandbox["failIfUnavailable"] === undefined) {
            sandbox["failIfUnavailable"] = true
          }
          settings["sandbox"] = sandbox
        }
        if (mirrors) settings["permissions"] = withRules(settings["permissions"], mirrored)
        args.push("--settings", json(settings))
      }
    }
    // the CLI reads `--managed-settings` only as JSON on the command line: they travel in `initialize` instead
    if (options.managedSettings !== undefined || delivered.awaitInitialize) args.push("--await-initialize")
    if (options.managedSettings !== undefined) {
      args.push("--managed-settings-in-initialize")
      initialize["managedSettings"] = options.managedSettings
    }
    args.push(...delivered.pluginArgs)
    if (options.projectConfigRoot !== undefined) args.push(flag("project-config-root", options.projectConfigRoot))
    if (options.debug === true) args.push("--debug")
    if (options.debugFile !== undefined) args.push(flag("debug-file", options.debugFile))

    for (const [name, value] of Object.entries(options.extraArgs ?? {})) {
      if (value === null) args.push(`--${name}`)
      else if (value.startsWith("-")) args.push(`--${name}=${value}`)
      else args.push(`--${name}`, value)
    }

    // --- environment ---------------------------------------------------------------------------------------------
    if (options.enableFileCheckpointing === true) env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] = "true"
    const previewFormat = options.toolConfig?.askUserQuestion?.previewFormat
    if (previewFormat !== undefined) env["CLAUDE_CODE_QUESTION_PREVIEW_FORMAT"] = previewFormat
    // a permission handler judges every Bash command from the session's cwd: the CLI's Bash tool is made to start
    // each command there (it otherwise keeps the directory a `cd` left it in); see SECURITY.md, "The shell's directory"
    if (extensions.permissionPromptStdio === true) env["CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR"] = "1"

    // --- initialize ----------------------------------------------------------------------------------------------
    const sp = options.systemPrompt
    if (sp === undefined) initialize["systemPrompt"] = [""]
    else if (typeof sp === "string") initialize["systemPrompt"] = [sp]
    else if (!("type" in sp)) initialize["systemPrompt"] = [...sp]
    else if (sp.type === "custom") {
      initialize["systemPrompt"] = typeof sp.prompt === "string"
        ? [sp.prompt]
        : [...sp.prompt]
    } else {
      if (sp.append !== undefined) initialize["appendSystemPrompt"] = sp.append
      if (sp.excludeDynamicSections !== undefined) initialize["excludeDynamicSections"] = sp.excludeDynamicSections
    }
    if (options.agents !== undefined) initialize["agents"] = options.agents
    if (options.title !== undefined) initialize["title"] = options.title
    if (options.skills !== undefined && options.skills !== "all") initialize["skills"] = options.skills
    if (options.promptSuggestions === true) initialize["promptSuggestions"] = true
    if (options.agentProgressSummaries === true) initialize["agentProgressSummaries"] = true
    if (options.forwardSubagentText === true) initialize["forwardSubagentText"] = true
    if (options.planModeInstructions !== undefined) initialize["planModeInstructions"] = options.planModeInstructions
    if (options.toolAliases !== undefined) initialize["toolAliases"] = options.toolAliases
    if (options.supportedDialogKinds !== undefined) initialize["supportedDialogKinds"] = options.supportedDialogKinds
    if (options.perTaskStopAffordance === true) initialize["perTaskStopAffordance"] = true
    Object.assign(initialize, extensions.initialize)

    return Effect.succeed({ args, env, initialize, requirements: delivered.requirements })
  })

/** The caller's `permissions` settings with the rules added to its `deny` and `ask` lists (after the caller's). */
const withRules = (
  permissions: unknown,
  rules: { readonly deny: ReadonlyArray<string>; readonly ask: ReadonlyArray<string> }
): Record<string, unknown> => {
  const out: Record<string, unknown> = isRecord(permissions) ? { ...permissions } : {}
  const list = (key: string): ReadonlyArray<unknown> => {
    const value = out[key]
    return Array.isArray(value) ? value : []
  }
  if (rules.deny.length > 0) out["deny"] = [...list("deny"), ...rules.deny]
  if (rules.ask.length > 0) out["ask"] = [...list("ask"), ...rules.ask]
  return out
}

/** The first CLI version that reads `plugins` and `mcpServers` in `initialize` under `--await-initialize`. */
const INITIALIZE_DELIVERY_VERSIONS = ">=2.1.261"

/**
 * Where the MCP servers the CLI runs and the plugins go: argv (`--mcp-config`, `--plugin-dir`) or, with
 * `"initialize"` delivery, the `initialize` request of a CLI started with `--await-initialize`.
 */
const deliver = (options: Options): {
  readonly args: ReadonlyArray<string>
  readonly pluginArgs: ReadonlyArray<string>
  readonly initialize: Readonly<Record<string, unknown>>
  readonly awaitInitialize: boolean
  readonly requirements: ReadonlyArray<CliRequirement>
} => {
  const args: Array<string> = []
  const pluginArgs: Array<string> = []
  const initialize: Record<string, unknown> = {}
  const requirements: Array<CliRequirement> = []
  const external = options.mcpServers === undefined ? {} : processMcpServers(options.mcpServers)
  // a session given `--sdk-url` cannot read the request at launch (the official SDK's rule)
  const remote = options.extraArgs?.["sdk-url"] !== undefined
  if (Object.keys(external).length > 0) {
    if (options.mcpServersDelivery === "initialize" && !remote) {
      initialize["mcpServers"] = external
      requirements.push({ option: "mcpServersDelivery: \"initialize\"", versions: INITIALIZE_DELIVERY_VERSIONS })
    } else args.push("--mcp-config", json({ mcpServers: external }))
  }
  const plugins = options.plugins ?? []
  if (plugins.length > 0 && options.pluginDelivery === "initialize") {
    initialize["plugins"] = plugins
    requirements.push({ option: "pluginDelivery: \"initialize\"", versions: INITIALIZE_DELIVERY_VERSIONS })
  } else {
    for (const plugin of plugins) {
      pluginArgs.push(flag(plugin.skipMcpDiscovery === true ? "plugin-dir-no-mcp" : "plugin-dir", plugin.path))
    }
  }
  return { args, pluginArgs, initialize, awaitInitialize: requirements.length > 0, requirements }
}

/** @internal */
export const userMessage = (options: Options, prompt: string | Message.UserMessage): Message.UserMessage => {
  const message = typeof prompt === "string" ? Message.userMessage(prompt) : prompt
  return options.verbatimPrompts === true && message.client_composed === undefined
    ? { ...message, client_composed: true }
    : message
}
