/**
 * Every error this SDK can put in the error channel, as `Schema.TaggedError`s.
 *
 * Each error has a stable `_tag` (use `Effect.catchTag("ProcessExited", …)` or `Match.tag`), carries the data
 * needed to act on it, and renders a readable `message`. They are real `Error` instances, so the Promise API can
 * throw them as-is. One model throughout: where an error has variants, `reason` is a literal naming the variant
 * (`StartupFailed.reason: "Spawn" | "FirstLine" | "InitializeAck"`); free text (what the CLI or the OS said) is
 * `description`.
 *
 * `instanceof` is the plain prototype check. To recognise an error made by another copy of this package (the Promise
 * entry is a bundle with its own copy of these classes), use {@link isAgentError}, optionally with a tag:
 * `isAgentError(error, "ProcessExited")`. It checks the package's brand, a registered symbol every copy shares.
 *
 * | error | when |
 * |---|---|
 * | `CliNotFound` | no `claude` executable was found; `searched` lists every place looked at |
 * | `SpawnFailed` | the executable exists but could not be started (permissions, bad binary, …) |
 * | `ProcessExited` | the CLI exited while the session needed it; exit code, signal and the stderr tail |
 * | `InputClosed` | a write after our side closed stdin (`endInput`) or the session was closed |
 * | `LineTooLong` | one stdout line exceeded the configured limit (delivered in-band, the stream goes on) |
 * | `MalformedLine` | one stdout line was not a JSON object (delivered in-band, the stream goes on) |
 * | `ControlError` | the CLI answered one of our control requests with an error |
 * | `ControlTimeout` | the CLI did not answer one of our control requests in time |
 * | `SessionNotFound` | `resume` / `continue` named a session that does not exist |
 * | `IdleTimeout` | the CLI went silent mid-turn; it was killed |
 * | `StartupFailed` | the CLI could not be started, exited or hung before answering `initialize` (`reason`: how far it got) |
 * | `InterruptTimeout` | an interrupt was not acknowledged in time |
 * | `VersionIncompatible` | the CLI version is outside the tested range |
 * | `InvalidOptions` | options were rejected before anything was spawned, or the prompt could not be read (`option: "prompt"`) |
 * | `ProtocolViolation` | the CLI broke the protocol in a way the session cannot continue from |
 * | `RateLimited`, `Overloaded`, `ApiError` | a turn ended on an Anthropic API error after the CLI's own retries (opt-in: `ClaudeAgent.failOnApiError`) |
 * | `McpServerFailed` | an in-process MCP server was not connected at the start of a turn |
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { ResultMessage } from "./Message.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-claude-agent/AgentError")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * `true` for any error defined in this module, made by this copy of the package or another one (the brand is a
 * registered symbol); with a `tag`, only for the error of that tag. Use it instead of `instanceof` where an error may
 * come from another copy, e.g. an error of a `transport` built with the Effect API, seen by Promise API code:
 *
 * ```ts
 * import { AgentError } from "effect-claude-agent"
 *
 * declare const error: unknown
 * if (AgentError.isAgentError(error, "ProcessExited")) console.error(error.code, error.stderrTail)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isAgentError: {
  (u: unknown): u is AgentError
  <Tag extends AgentError["_tag"]>(u: unknown, tag: Tag): u is Extract<AgentError, { readonly _tag: Tag }>
} = (u: unknown, tag?: string): u is AgentError =>
  Predicate.hasProperty(u, TypeId) && (tag === undefined || (Predicate.hasProperty(u, "_tag") && u._tag === tag))

const tail = (s: string): string => (s.length === 0 ? "" : `\n--- stderr (last ${s.length} chars) ---\n${s}`)

/**
 * No `claude` executable could be found; or the one named by `pathToClaudeCodeExecutable` / `CLAUDE_CLI_PATH` cannot
 * be run (`named` says which path, `reason` why).
 *
 * @since 0.1.0
 * @category errors
 */
export class CliNotFound extends Schema.TaggedError<CliNotFound>("effect-claude-agent/CliNotFound")("CliNotFound", {
  /** Every path or lookup that was tried, in order. */
  searched: Schema.Array(Schema.String),
  /**
   * `"NotFound"`: nothing usable in any place searched. Otherwise why the path the caller named (`named`) cannot be
   * run: it does not exist (`"Missing"`), is a directory (`"Directory"`), is a file this process may not execute
   * (`"NotExecutable"`: a native binary without the execute permission) or not a regular file (`"NotAFile"`).
   */
  reason: Schema.Literal("NotFound", "Missing", "Directory", "NotExecutable", "NotAFile"),
  /** The path the caller named, and where: the option or the environment variable. */
  named: Schema.optional(Schema.Struct({
    source: Schema.Literal("pathToClaudeCodeExecutable", "CLAUDE_CLI_PATH"),
    path: Schema.String
  }))
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    if (this.named !== undefined && this.reason !== "NotFound") {
      const { path, source } = this.named
      const unset = source === "CLAUDE_CLI_PATH" ? "unset CLAUDE_CLI_PATH" : "leave pathToClaudeCodeExecutable unset"
      return `Claude Code CLI not found: ${source} is ${path}, which ${namedProblems[this.reason]}. Fix the path, ` +
        `or ${unset} to use the CLI installed with the SDK (@anthropic-ai/claude-code).`
    }
    return `Claude Code CLI not found. Searched:\n  ${this.searched.join("\n  ")}\n` +
      "Install @anthropic-ai/claude-code, put `claude` on PATH, or set pathToClaudeCodeExecutable / CLAUDE_CLI_PATH."
  }
}

const namedProblems: Readonly<Record<Exclude<CliNotFound["reason"], "NotFound">, string>> = {
  Missing: "does not exist",
  Directory: "is a directory (name the executable in it)",
  NotExecutable: "is not executable by this process (`chmod +x` it; a .js/.mjs/.cjs CLI is run with Node instead)",
  NotAFile: "is not a regular file"
}

/**
 * The executable was found but the operating system refused to start it.
 *
 * @since 0.1.0
 * @category errors
 */
export class SpawnFailed extends Schema.TaggedError<SpawnFailed>("effect-claude-agent/SpawnFailed")("SpawnFailed", {
  command: Schema.String,
  /** What the operating system said. */
  description: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Failed to start ${this.command}: ${this.description}`
  }
}

/**
 * The CLI process exited while the session still needed it, or was killed by a signal.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProcessExited extends Schema.TaggedError<ProcessExited>("effect-claude-agent/ProcessExited")(
  "ProcessExited",
  {
    /** Exit code, `null` when the process was killed by a signal. */
    code: Schema.NullOr(Schema.Number),
    /** The signal that killed the process, if any (e.g. `"SIGKILL"`). */
    signal: Schema.NullOr(Schema.String),
    /** The last bytes the CLI wrote to stderr (bounded, 64 KiB by default). */
    stderrTail: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /**
   * How the process ended, without the stderr tail (e.g. "Claude Code process exited with code 1").
   *
   * @since 0.1.0
   */
  get summary(): string {
    return `Claude Code process ${
      this.signal !== null ? `was killed by ${this.signal}` : `exited with code ${this.code}`
    }`
  }
  /** @since 0.1.0 */
  override get message(): string {
    return `${this.summary}${tail(this.stderrTail)}`
  }
}

const messages: Record<InputClosed["reason"], string> = {
  InputEnded: "Cannot write to the CLI: its input was already ended",
  SessionClosed: "Cannot write to the CLI: the session is closed",
  PoolClosed: "Cannot start a session: the SessionPool is closed"
}

/**
 * A write was attempted after stdin was closed by our side, or a session was asked of a closed `SessionPool`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputClosed extends Schema.TaggedError<InputClosed>("effect-claude-agent/InputClosed")("InputClosed", {
  /**
   * `"InputEnded"`: `endInput` was called; `"SessionClosed"`: the session (or the query) was closed;
   * `"PoolClosed"`: a session or query was asked of a `SessionPool` whose scope has closed.
   */
  reason: Schema.Literal("InputEnded", "SessionClosed", "PoolClosed")
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return messages[this.reason]
  }
}

/**
 * One stdout line was longer than the configured limit. The line is skipped (only its first bytes are kept) and
 * the stream continues with the next line.
 *
 * @since 0.1.0
 * @category errors
 */
export class LineTooLong extends Schema.TaggedError<LineTooLong>("effect-claude-agent/LineTooLong")("LineTooLong", {
  /** Size of the line in bytes, as far as it was read (at least `limit + 1`). */
  bytes: Schema.Number,
  /** The configured limit in bytes. */
  limit: Schema.Number,
  /** The first bytes of the line, decoded as UTF-8 (at most 1 KiB). */
  head: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `A stdout line of ${this.bytes} bytes exceeded the limit of ${this.limit} bytes and was skipped`
  }
}

/**
 * One stdout line was not a JSON object (a banner, a log line, truncated output). It is delivered in-band and the
 * stream continues.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedLine extends Schema.TaggedError<MalformedLine>("effect-claude-agent/MalformedLine")(
  "MalformedLine",
  {
    /** The line (truncated to 4 KiB). */
    line: Schema.String,
    /** `"InvalidJson"`: `JSON.parse` failed; `"NotAnObject"`: the JSON value is not an object. */
    reason: Schema.Literal("InvalidJson", "NotAnObject"),
    /** What the parser said. */
    description: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Non-protocol output on stdout (${this.description}): ${this.line.slice(0, 200)}`
  }
}

/**
 * The CLI answered one of our control requests with an error response.
 *
 * @since 0.1.0
 * @category errors
 */
export class ControlError extends Schema.TaggedError<ControlError>("effect-claude-agent/ControlError")("ControlError", {
  /** The request subtype, e.g. `"set_model"`. */
  subtype: Schema.String,
  /** The error text the CLI sent. */
  description: Schema.String,
  /** The CLI's `error_code`, when it sent one (e.g. `"unsupported_request"`). */
  errorCode: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Control request ${this.subtype} failed: ${this.description}${this.errorCode ? ` (${this.errorCode})` : ""}`
  }
}

/**
 * The CLI did not answer one of our control requests within its timeout. A `control_cancel_request` was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class ControlTimeout extends Schema.TaggedError<ControlTimeout>("effect-claude-agent/ControlTimeout")(
  "ControlTimeout",
  {
    subtype: Schema.String,
    requestId: Schema.String,
    timeoutMillis: Schema.Number
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Control request ${this.subtype} (${this.requestId}) got no answer within ${this.timeoutMillis} ms`
  }
}

/**
 * A session to resume or continue does not exist (the CLI answered "No conversation found").
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>("effect-claude-agent/SessionNotFound")(
  "SessionNotFound",
  {
    /** The session id that was asked for (undefined for `continue` with no session to continue). */
    sessionId: Schema.optional(Schema.String),
    /** What the CLI said. */
    description: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Session ${this.sessionId ?? "(latest)"} not found: ${this.description}`
  }
}

/**
 * The CLI went silent in the middle of a turn (nothing on stdout while the SDK owed it nothing) for longer than
 * `idleTimeout` (or `firstMessageTimeout` right after a prompt). The CLI was killed.
 *
 * @since 0.1.0
 * @category errors
 */
export class IdleTimeout extends Schema.TaggedError<IdleTimeout>("effect-claude-agent/IdleTimeout")("IdleTimeout", {
  /** When the CLI last wrote anything (epoch milliseconds, per the Effect `Clock`). */
  lastEventAt: Schema.Number,
  /** The timeout that expired, in milliseconds. */
  timeoutMillis: Schema.Number,
  /** `"FirstMessage"`: nothing at all after the prompt; `"Idle"`: silence in the middle of a turn. */
  reason: Schema.Literal("FirstMessage", "Idle"),
  stderrTail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const what = this.reason === "FirstMessage" ? "no message after the prompt" : "no output in the middle of a turn"
    return `Claude Code went silent (${what}) for ${this.timeoutMillis} ms and was killed${tail(this.stderrTail)}`
  }
}

const phases: Record<StartupFailed["reason"], string> = {
  Spawn: "not running yet",
  FirstLine: "no output",
  InitializeAck: "initialize not answered"
}

/**
 * The CLI did not start within `initializeTimeout` (or exited first): `reason` says how far it got —
 * `"Spawn"`: it was not even running (finding the executable, the `--version` check and the spawn took too long);
 * `"FirstLine"`: it ran but wrote nothing; `"InitializeAck"`: it wrote something but never answered `initialize`.
 * `description` says what happened (no answer in time, the exit, the error). No process is left behind.
 *
 * @since 0.1.0
 * @category errors
 */
export class StartupFailed extends Schema.TaggedError<StartupFailed>("effect-claude-agent/StartupFailed")(
  "StartupFailed",
  {
    reason: Schema.Literal("Spawn", "FirstLine", "InitializeAck"),
    description: Schema.String,
    /** The exit code when the CLI exited during start-up. */
    exitCode: Schema.optional(Schema.NullOr(Schema.Number)),
    stderrTail: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const phase = `${this.reason}: ${phases[this.reason]}`
    return `Claude Code failed to start (${phase}): ${this.description}${tail(this.stderrTail)}`
  }
}

/**
 * The CLI did not acknowledge an interrupt within `interruptTimeout`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InterruptTimeout extends Schema.TaggedError<InterruptTimeout>("effect-claude-agent/InterruptTimeout")(
  "InterruptTimeout",
  { timeoutMillis: Schema.Number }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `The CLI did not acknowledge the interrupt within ${this.timeoutMillis} ms`
  }
}

/**
 * The CLI's version is outside the range this SDK was tested with (override with the `cliVersions` option; `"*"`
 * accepts any version): `reason: "OutOfRange"`. `reason: "Unknown"` (and `found: "unknown"`) when `--version` did not
 * report a version (it failed, printed no `x.y.z`, or did not answer in time); `description` then says which.
 *
 * @since 0.1.0
 * @category errors
 */
export class VersionIncompatible extends Schema.TaggedError<VersionIncompatible>(
  "effect-claude-agent/VersionIncompatible"
)("VersionIncompatible", {
  /** The version `--version` reported, or `"unknown"`. */
  found: Schema.String,
  /** The accepted range (`cliVersions`, or the SDK's default). */
  supported: Schema.String,
  reason: Schema.Literal("OutOfRange", "Unknown"),
  /** Why the version is unknown, or what to do, when it says. */
  description: Schema.optional(Schema.String),
  /** The executable that was judged (the CLI's file), when known. */
  executable: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const at = this.executable === undefined ? "" : ` at ${this.executable}`
    return `Claude Code ${this.found}${at} is outside the supported range ${this.supported}` +
      (this.description !== undefined ? ` (${this.description})` : "")
  }
}

/**
 * Options were rejected before anything was spawned; or, with `option: "prompt"`, the prompt could not be read: an
 * item that is not a user message (rejected before it is written; `description` names its index), or a prompt source
 * that threw, rejected or died (`cause`).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidOptions extends Schema.TaggedError<InvalidOptions>("effect-claude-agent/InvalidOptions")(
  "InvalidOptions",
  {
    /** The option at fault (`"prompt"` for the prompt); the first one when there are several. */
    option: Schema.String,
    /** What is wrong with it. */
    description: Schema.String,
    /**
     * Every problem of the options of one call, in order, when there are several (the first is `option` /
     * `description`): a call is refused once, with all of them. Absent when there is one: read it as
     * `error.problems ?? [error]`.
     */
    problems: Schema.optional(Schema.Array(Schema.Struct({ option: Schema.String, description: Schema.String }))),
    /** What the prompt source threw, rejected or died with, when that is why. */
    cause: Schema.optional(Schema.Defect)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    const problems = this.problems ?? []
    return problems.length > 1
      ? problems.map((p) => `Invalid option ${p.option}: ${p.description}`).join("\n")
      : `Invalid option ${this.option}: ${this.description}`
  }
}

/**
 * One problem of {@link InvalidOptions}: the option and what is wrong with it.
 *
 * @since 0.1.0
 * @category errors
 */
export interface OptionProblem {
  readonly option: string
  readonly description: string
}

/**
 * The CLI broke the protocol in a way the session cannot recover from.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProtocolViolation extends Schema.TaggedError<ProtocolViolation>("effect-claude-agent/ProtocolViolation")(
  "ProtocolViolation",
  {
    /** What the CLI did. */
    description: Schema.String,
    stderrTail: Schema.optionalWith(Schema.String, { default: () => "" })
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Protocol violation: ${this.description}${tail(this.stderrTail)}`
  }
}

const AUTHENTICATION_ERROR = "authentication_error"

const apiErrorFields = {
  /** The HTTP status of the last attempt (`429`, `529`, …), `null` when the request never got one. */
  status: Schema.NullOr(Schema.Number),
  /** The API's error type, e.g. `"rate_limit_error"`, `"overloaded_error"`, `"authentication_error"`. */
  errorType: Schema.optional(Schema.String),
  /** What the CLI reported (the result's text). */
  description: Schema.String,
  /** The session whose turn failed. */
  sessionId: Schema.String
}

/**
 * The Anthropic API rejected the turn's requests as rate limited (HTTP 429), after the CLI's own retries (each one
 * visible as a `system/api_retry` message). Waiting before the next attempt is the remedy.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimited extends Schema.TaggedError<RateLimited>("effect-claude-agent/RateLimited")(
  "RateLimited",
  apiErrorFields
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `Rate limited by the Anthropic API (${this.status ?? "no status"}): ${this.description}`
  }
}

/**
 * The Anthropic API was overloaded (HTTP 529) for every attempt the CLI made. Usually temporary.
 *
 * @since 0.1.0
 * @category errors
 */
export class Overloaded extends Schema.TaggedError<Overloaded>("effect-claude-agent/Overloaded")(
  "Overloaded",
  apiErrorFields
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `The Anthropic API is overloaded (${this.status ?? "no status"}): ${this.description}`
  }
}

/**
 * Any other Anthropic API error that ended a turn (authentication, invalid request, server error, connection
 * failure, …).
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiError extends Schema.TaggedError<ApiError>("effect-claude-agent/ApiError")("ApiError", apiErrorFields) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /**
   * `true` when the CLI could not authenticate: no credentials ("Not logged in", `status: null`) or a key the API
   * refused (401). `errorType` is then `"authentication_error"`.
   *
   * @since 0.1.0
   */
  get isAuthentication(): boolean {
    return this.errorType === AUTHENTICATION_ERROR || this.status === 401
  }
  /** @since 0.1.0 */
  override get message(): string {
    if (this.isAuthentication) {
      return `Authentication failed (${this.status ?? "no status"}): ${this.description} — set ANTHROPIC_API_KEY or ` +
        `log the CLI in (claude /login)`
    }
    const status = `${this.status ?? "no status"}${this.errorType ? `, ${this.errorType}` : ""}`
    return `Anthropic API error (${status}): ${this.description}`
  }
}

/**
 * A turn that ended on an API error, as a typed error.
 *
 * @since 0.1.0
 * @category errors
 */
export type ApiFailure = RateLimited | Overloaded | ApiError

/**
 * The API error a `result` reports, if it ended on one (`terminal_reason: "api_error"`, or an error result with an
 * `api_error_status`): `RateLimited` for 429s, `Overloaded` for 529s, else `ApiError`. `undefined` for any other
 * result, including a turn that failed for another reason (turns or budget used up, interrupted).
 *
 * An authentication failure is an `ApiError` with `errorType: "authentication_error"`: a 401, or a CLI without
 * credentials ("Not logged in", no request sent, no status). The CLI marks the latter only on the synthetic
 * assistant message before the result (`error: "authentication_failed"`): pass that message's `error` as
 * `assistantError` (`ClaudeAgent.failOnApiError` does).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromResult = (result: ResultMessage, assistantError?: string | undefined): ApiFailure | undefined => {
  const status = typeof result.api_error_status === "number" ? result.api_error_status : null
  if (result.terminal_reason !== "api_error" && !(result.is_error && status !== null)) return undefined
  const reported = Predicate.hasProperty(result, "api_error_type") && typeof result.api_error_type === "string"
    ? result.api_error_type
    : undefined
  const errorType = reported ??
    (status === 401 || assistantError === "authentication_failed" ? AUTHENTICATION_ERROR : undefined)
  const fields = {
    status,
    ...(errorType !== undefined ? { errorType } : {}),
    description: result.subtype === "success" ? result.result : result.errors.join("; "),
    sessionId: result.session_id
  }
  if (status === 429 || errorType === "rate_limit_error") return new RateLimited(fields)
  if (status === 529 || errorType === "overloaded_error") return new Overloaded(fields)
  return new ApiError(fields)
}

/**
 * The CLI did not report an in-process server as `connected` at the start of a turn (`system/init` `mcp_servers`):
 * `status` is what it reported (`"failed"`, `"pending"`, `"needs-auth"`, …), or `"missing"` when it did not list the
 * server at all. Its tools are then not available to the model. What a session does about it is the server's
 * `onConnectFailure`. Also exported as `SdkMcp.McpServerFailed`.
 *
 * @since 0.1.0
 * @category errors
 */
export class McpServerFailed extends Schema.TaggedError<McpServerFailed>("effect-claude-agent/McpServerFailed")(
  "McpServerFailed",
  {
    /** The server's name. */
    name: Schema.String,
    /** The status the CLI reported, or `"missing"`. */
    status: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return this.status === "missing"
      ? `SDK MCP server "${this.name}" is not among the CLI's MCP servers`
      : `SDK MCP server "${this.name}" is not connected (status: ${this.status})`
  }
}

/**
 * Errors raised by a Transport: starting the CLI, writing to it, or the CLI going away.
 *
 * @since 0.1.0
 * @category errors
 */
export type TransportError = CliNotFound | SpawnFailed | ProcessExited | InputClosed

/**
 * Errors that are delivered in-band on the message stream; the stream continues after them.
 *
 * @since 0.1.0
 * @category errors
 */
export type LineError = LineTooLong | MalformedLine

/**
 * Errors that can end a session or a query.
 *
 * @since 0.1.0
 * @category errors
 */
export type SessionError =
  | CliNotFound
  | SpawnFailed
  | InvalidOptions
  | ProcessExited
  | InputClosed
  | ControlError
  | ControlTimeout
  | ProtocolViolation
  | SessionNotFound
  | IdleTimeout
  | StartupFailed
  | VersionIncompatible
  | McpServerFailed

/**
 * Every error defined by this SDK.
 *
 * @since 0.1.0
 * @category errors
 */
export type AgentError =
  | CliNotFound
  | SpawnFailed
  | ProcessExited
  | InputClosed
  | LineTooLong
  | MalformedLine
  | ControlError
  | ControlTimeout
  | SessionNotFound
  | IdleTimeout
  | StartupFailed
  | InterruptTimeout
  | VersionIncompatible
  | InvalidOptions
  | ProtocolViolation
  | RateLimited
  | Overloaded
  | ApiError
  | McpServerFailed

/**
 * Schema of {@link AgentError}, e.g. to serialize errors across a process boundary.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AgentError = Schema.Union(
  CliNotFound,
  SpawnFailed,
  ProcessExited,
  InputClosed,
  LineTooLong,
  MalformedLine,
  ControlError,
  ControlTimeout,
  SessionNotFound,
  IdleTimeout,
  StartupFailed,
  InterruptTimeout,
  VersionIncompatible,
  InvalidOptions,
  ProtocolViolation,
  RateLimited,
  Overloaded,
  ApiError,
  McpServerFailed
)
