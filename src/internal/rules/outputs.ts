/**
 * Schemas of what user code answers the CLI with: a hook's output per event and a permission decision. They follow
 * the CLI's own schemas (Claude Code 2.1.332) and the official SDK's `SyncHookJSONOutput`, `AsyncHookJSONOutput` and
 * `PermissionResult`: a known field must have its type and value; a field the SDK does not know passes through (a
 * newer CLI may read it); a field known at another place of the answer (a decision at the top level, a legacy
 * `decision` inside `hookSpecificOutput`, another event's field, a `canUseTool` field in a hook output) is an error,
 * since the CLI would drop it silently.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { HookEvent, HookOutput } from "../../Hooks.js"
import type { PermissionResult } from "../../Permissions.js"

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

/** Prints a value for an error message; never throws. */
const show = (u: unknown): string => {
  try {
    const json = JSON.stringify(u)
    return json === undefined ? String(u) : json.length > 60 ? `${json.slice(0, 57)}...` : json
  } catch {
    return typeof u
  }
}

/** One of several strings, with one message for all of them (a union of literals reports each one otherwise). */
const oneOf = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.Literal(...values).annotations({
    message: (issue) => ({
      message: `Expected ${values.map((v) => JSON.stringify(v)).join(" | ")}, actual ${show(issue.actual)}`,
      override: true
    })
  })

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

// ---------------------------------------------------------------------------------------------------------------------
// permission decisions
// ---------------------------------------------------------------------------------------------------------------------

const Destination = oneOf("userSettings", "projectSettings", "localSettings", "session", "cliArg")
const Behavior = oneOf("allow", "deny", "ask")
const KNOWN_UPDATES: ReadonlySet<string> = new Set([
  "addRules",
  "replaceRules",
  "removeRules",
  "setMode",
  "addDirectories",
  "removeDirectories"
])

const rulesUpdate = (type: "addRules" | "replaceRules" | "removeRules") =>
  Schema.Struct({
    type: Schema.Literal(type),
    rules: Schema.Array(Schema.Struct({ toolName: Schema.String, ruleContent: opt(Schema.String) })),
    behavior: Behavior,
    destination: Destination
  })

const directoriesUpdate = (type: "addDirectories" | "removeDirectories") =>
  Schema.Struct({ type: Schema.Literal(type), directories: Schema.Array(Schema.String), destination: Destination })

/** A permission update (`updatedPermissions` entry); a kind a newer CLI may add passes on for the CLI to judge. */
const PermissionUpdate = Schema.Union(
  rulesUpdate("addRules"),
  rulesUpdate("replaceRules"),
  rulesUpdate("removeRules"),
  Schema.Struct({ type: Schema.Literal("setMode"), mode: Schema.String, destination: Destination }),
  directoriesUpdate("addDirectories"),
  directoriesUpdate("removeDirectories"),
  Schema.Struct({
    type: Schema.String.pipe(Schema.filter((type) => !KNOWN_UPDATES.has(type))),
    destination: Schema.String
  })
)

const Classification = Schema.optional(oneOf("user_temporary", "user_permanent", "user_reject"))

/**
 * A `canUseTool` / `Permissions` decision. `Schema.optional` (not exact): an `undefined` field is absent, as the
 * answer built from it leaves it out.
 */
const Decision = Schema.Union(
  Schema.Struct({
    behavior: Schema.Literal("allow"),
    updatedInput: Schema.optional(JsonObject),
    updatedPermissions: Schema.optional(Schema.Array(PermissionUpdate)),
    toolUseID: Schema.optional(Schema.String),
    decisionClassification: Classification
  }),
  Schema.Struct({
    behavior: Schema.Literal("deny"),
    message: Schema.String,
    interrupt: Schema.optional(Schema.Boolean),
    toolUseID: Schema.optional(Schema.String),
    decisionClassification: Classification
  })
)

const decodeDecision = ParseResult.decodeUnknownEither(Decision)

const MAX_DETAIL = 200

/** A schema's description in a message, when it is an object or array type: what kind of value was expected. */
const STRUCTURAL = /^Expected (\{|ReadonlyArray<)[\s\S]*?, actual ([\s\S]*)$/

/** The first issue of a parse error, on one line and short: `path.to.field: what is wrong`. */
const firstIssue = (error: ParseResult.ParseIssue): string => {
  const issue = ParseResult.ArrayFormatter.formatIssueSync(error)[0]
  if (issue === undefined) return ParseResult.TreeFormatter.formatIssueSync(error).slice(0, MAX_DETAIL)
  const structural = STRUCTURAL.exec(issue.message)
  const message = structural === null
    ? issue.message
    : `Expected ${structural[1] === "{" ? "an object" : "an array"}, actual ${structural[2]}`
  const detail = issue.path.length === 0 ? message : `${issue.path.join(".")}: ${message}`
  return detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL - 3)}...` : detail
}

const notAnObject = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && !Array.isArray(u)
    ? undefined
    : `it is not an object (got ${Array.isArray(u) ? "an array" : u === null ? "null" : typeof u})`

/**
 * `result` as a permission decision, or why it is not one (the object itself is returned: the answer is built from
 * its known fields).
 *
 * @internal
 */
export const checkDecision = (result: unknown): Either.Either<PermissionResult, string> => {
  const why = notAnObject(result)
  if (why !== undefined) return Either.left(why)
  const decoded = decodeDecision(result)
  // validated: the fields the answer reads have the official types (a newer kind of permission update included)
  return Either.isRight(decoded) ? Either.right(result as PermissionResult) : Either.left(firstIssue(decoded.left))
}

// ---------------------------------------------------------------------------------------------------------------------
// hook outputs
// ---------------------------------------------------------------------------------------------------------------------

const context = { additionalContext: opt(Schema.String) }
const watchPaths = { watchPaths: opt(Schema.Array(Schema.String)) }
const toolDecision = {
  permissionDecision: opt(oneOf("allow", "deny", "ask", "defer")),
  permissionDecisionReason: opt(Schema.String),
  updatedInput: opt(JsonObject)
}
const elicitation = { action: opt(oneOf("accept", "decline", "cancel")), content: opt(JsonObject) }

/** The fields of each event's `hookSpecificOutput` besides `hookEventName`. */
const SPECIFIC: { readonly [E in HookEvent]: Schema.Struct.Fields } = {
  PreToolUse: { ...toolDecision, ...context },
  PostToolUse: {
    ...context,
    classifierContext: opt(Schema.String),
    updatedToolOutput: opt(Schema.Unknown),
    updatedMCPToolOutput: opt(Schema.Unknown)
  },
  PostToolUseFailure: context,
  PostToolBatch: context,
  Notification: context,
  UserPromptSubmit: { ...context, sessionTitle: opt(Schema.String), suppressOriginalPrompt: opt(Schema.Boolean) },
  UserPromptExpansion: { ...context, suppressOriginalPrompt: opt(Schema.Boolean) },
  SessionStart: {
    ...context,
    initialUserMessage: opt(Schema.String),
    sessionTitle: opt(Schema.String),
    ...watchPaths,
    reloadSkills: opt(Schema.Boolean)
  },
  SessionEnd: {},
  Stop: context,
  StopFailure: {},
  SubagentStart: context,
  SubagentStop: context,
  PreCompact: {},
  PostCompact: {},
  PreModelSwitch: {
    permissionDecision: opt(oneOf("allow", "deny", "ask")),
    permissionDecisionReason: opt(Schema.String)
  },
  PostModelSwitch: context,
  PermissionRequest: {
    decision: Schema.Union(
      Schema.Struct({
        behavior: Schema.Literal("allow"),
        updatedInput: opt(JsonObject),
        updatedPermissions: opt(Schema.Array(PermissionUpdate))
      }),
      Schema.Struct({ behavior: Schema.Literal("deny"), message: opt(Schema.String), interrupt: opt(Schema.Boolean) })
    )
  },
  PermissionDenied: { retry: opt(Schema.Boolean) },
  Setup: context,
  TeammateIdle: {},
  TaskCreated: {},
  TaskCompleted: {},
  Elicitation: elicitation,
  ElicitationResult: elicitation,
  ConfigChange: {},
  WorktreeCreate: { worktreePath: Schema.String },
  WorktreeRemove: {},
  InstructionsLoaded: {},
  CwdChanged: watchPaths,
  FileChanged: watchPaths,
  DirectoryAdded: {},
  MessageDisplay: { displayContent: opt(Schema.String) },
  PreSkillShellCommand: toolDecision
}

/** The top-level fields of a (synchronous) hook output, `hookSpecificOutput` aside. */
const COMMON = {
  continue: opt(Schema.Boolean),
  suppressOutput: opt(Schema.Boolean),
  stopReason: opt(Schema.String),
  decision: opt(oneOf("approve", "block")),
  systemMessage: opt(Schema.String),
  reason: opt(Schema.String),
  terminalSequence: opt(Schema.String),
  async: opt(Schema.Literal(false))
}

/** The fields of a permission decision (what `canUseTool` answers), never part of a hook output. */
const DECISION_FIELDS: ReadonlySet<string> = new Set([
  "behavior",
  "message",
  "interrupt",
  "updatedPermissions",
  "decisionClassification"
])

const TOP_FIELDS: ReadonlySet<string> = new Set([...Object.keys(COMMON), "asyncTimeout", "hookSpecificOutput"])

const SPECIFIC_FIELDS: ReadonlySet<string> = new Set([
  "hookEventName",
  ...Object.values(SPECIFIC).flatMap((fields) => Object.keys(fields))
])

/** The first key of `object` that is not in `own` but known elsewhere, with why it does not belong here. */
const misplacedKey = (
  object: object,
  own: ReadonlySet<string>,
  why: (key: string) => string | undefined
): string | undefined => {
  for (const key of Object.keys(object)) {
    if (own.has(key)) continue
    const reason = why(key)
    if (reason !== undefined) return `${key}: ${reason}`
  }
  return undefined
}

/**
 * A field known at another place of a hook output, where the CLI would drop it silently: the top level, an event's
 * `hookSpecificOutput` and `{ async: true }` each take only their own.
 */
const misplaced = (event: HookEvent) => {
  const ownSpecific: ReadonlySet<string> = new Set(["hookEventName", ...Object.keys(SPECIFIC[event])])
  const ownAsync: ReadonlySet<string> = new Set(["async", "asyncTimeout"])
  const topLevel = (key: string) =>
    key === "asyncTimeout"
      ? "belongs only in an async output ({ async: true })"
      : SPECIFIC_FIELDS.has(key)
      ? "belongs in hookSpecificOutput, not at the top level"
      : DECISION_FIELDS.has(key)
      ? "is a field of a canUseTool decision, not of a hook output"
      : undefined
  const inSpecific = (key: string) =>
    TOP_FIELDS.has(key)
      ? "belongs at the top level of the output, not in hookSpecificOutput"
      : SPECIFIC_FIELDS.has(key) || DECISION_FIELDS.has(key)
      ? `is not a field of the ${event} hookSpecificOutput`
      : undefined
  const inAsync = (key: string) =>
    TOP_FIELDS.has(key) || SPECIFIC_FIELDS.has(key) || DECISION_FIELDS.has(key)
      ? "is ignored in an async output ({ async: true })"
      : undefined
  return (output: { readonly async?: unknown; readonly hookSpecificOutput?: unknown }): string | undefined => {
    if (output.async === true) return misplacedKey(output, ownAsync, inAsync)
    const specific = output.hookSpecificOutput
    const top = misplacedKey(output, TOP_FIELDS, topLevel)
    if (top !== undefined || typeof specific !== "object" || specific === null) return top
    const inside = misplacedKey(specific, ownSpecific, inSpecific)
    return inside === undefined ? undefined : `hookSpecificOutput.${inside}`
  }
}

/** The synchronous output of a hook for `event`. */
const syncOutput = (event: HookEvent) =>
  Schema.Struct({
    ...COMMON,
    hookSpecificOutput: opt(Schema.Struct({ hookEventName: Schema.Literal(event), ...SPECIFIC[event] }))
  })

const AsyncOutput = Schema.Struct({ async: Schema.Literal(true), asyncTimeout: opt(Schema.Number) })

type Decode = (u: unknown) => Either.Either<unknown, ParseResult.ParseIssue>

/**
 * Checks the output of a hook for `event`: the output as the CLI will read it (a JSON copy: `undefined` fields left
 * out, `toJSON` applied), or why it is invalid. `undefined` is "no opinion" (`{}`).
 *
 * @internal
 */
export const hookOutputCheck = (event: HookEvent): (output: unknown) => Either.Either<HookOutput, string> => {
  const decodeSync: Decode = ParseResult.decodeUnknownEither(syncOutput(event))
  const decodeAsync: Decode = ParseResult.decodeUnknownEither(AsyncOutput)
  const misplacedIn = misplaced(event)
  return (output) => {
    if (output === undefined) return Either.right({})
    let json: unknown
    try {
      const text = JSON.stringify(output)
      json = text === undefined ? output : JSON.parse(text)
    } catch (error) {
      return Either.left(`it cannot be written as JSON: ${error instanceof Error ? error.message : show(error)}`)
    }
    const why = notAnObject(json)
    if (why !== undefined) return Either.left(why)
    const object = json as { readonly async?: unknown; readonly hookSpecificOutput?: unknown }
    const decoded = object.async === true ? decodeAsync(object) : decodeSync(object)
    if (Either.isLeft(decoded)) return Either.left(firstIssue(decoded.left))
    const wrongPlace = misplacedIn(object)
    // validated against the event's output schema (fields it does not know are kept)
    return wrongPlace === undefined ? Either.right(object as HookOutput) : Either.left(wrongPlace)
  }
}
