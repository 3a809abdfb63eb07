/**
 * A Promise API with the official `@anthropic-ai/claude-agent-sdk` names and shapes, for code that does not use
 * Effect. Switching is one import:
 *
 * ```ts
 * import { query } from "effect-claude-agent/promise"   // was "@anthropic-ai/claude-agent-sdk"
 *
 * for await (const message of query({ prompt: "Hello", options: { maxTurns: 1 } })) {
 *   if (message.type === "result") console.log(message)
 * }
 * ```
 *
 * What is better than the official SDK: errors are the SDK's tagged error classes (`instanceof` works, `_tag` is
 * set; e.g. `ProcessExited` carries the exit code and stderr tail), permission callbacks fail closed (a callback
 * that throws, hangs past `permissionTimeoutMs` or returns nothing is a deny; an `onElicitation` that throws or
 * returns nothing cancels), breaking out of `for await`,
 * `return()`, `close()` or aborting always reaps the CLI, and nothing produces an unhandled rejection.
 *
 * This entry is published as one self-contained ESM file, with the parts of `effect` it uses inside: it loads fast
 * and needs no Effect code in the app. Its error classes and the Effect API's `AgentError` classes are separate
 * copies: `instanceof` checks one copy, `isAgentError(error, tag)` accepts an error from either.
 *
 * @since 0.1.0
 */
import * as AgentError from "./AgentError.js"
import type * as AgentOptions from "./AgentOptions.js"
import type * as Elicitation from "./Elicitation.js"
import type * as Hooks from "./Hooks.js"
import * as internal from "./internal/promise/promise.js"
import * as NodeClaudeAgent from "./NodeClaudeAgent.js"
import * as mcp from "./internal/promise/promiseMcp.js"
import * as transcriptImport from "./internal/promise/sessionStore.js"
import type * as PromiseLogger from "./internal/promise/promiseLogger.js"
import type * as Message from "./Message.js"
import type * as Permissions from "./Permissions.js"
import type * as SdkMcp from "./SdkMcp.js"
import type * as Transport from "./Transport.js"
import type * as UserDialog from "./UserDialog.js"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as Schema from "effect/Schema"

// every error of the SDK, so that `instanceof` needs no import of the Effect entry (test/promise.errors.test.ts), and
// the guard that recognises them across copies of the package
export {
  /**
   * `true` for an error of this SDK, from this entry or from the Effect entry (another copy of the classes, e.g. the
   * errors of a `transport` built with the Effect API); with a tag, only for that error:
   * `isAgentError(error, "ProcessExited")`. `instanceof` checks this entry's own classes only.
   *
   * @since 0.1.0
   * @category guards
   */
  isAgentError,
  /**
   * @since 0.1.0
   * @category errors
   */
  ApiError,
  /**
   * @since 0.1.0
   * @category errors
   */
  CliNotFound,
  /**
   * @since 0.1.0
   * @category errors
   */
  ControlError,
  /**
   * @since 0.1.0
   * @category errors
   */
  ControlTimeout,
  /**
   * @since 0.1.0
   * @category errors
   */
  IdleTimeout,
  /**
   * @since 0.1.0
   * @category errors
   */
  InputClosed,
  /**
   * @since 0.1.0
   * @category errors
   */
  InterruptTimeout,
  /**
   * @since 0.1.0
   * @category errors
   */
  InvalidOptions,
  /**
   * @since 0.1.0
   * @category errors
   */
  LineTooLong,
  /**
   * @since 0.1.0
   * @category errors
   */
  MalformedLine,
  /**
   * @since 0.1.0
   * @category errors
   */
  Overloaded,
  /**
   * @since 0.1.0
   * @category errors
   */
  ProcessExited,
  /**
   * @since 0.1.0
   * @category errors
   */
  ProtocolViolation,
  /**
   * @since 0.1.0
   * @category errors
   */
  RateLimited,
  /**
   * @since 0.1.0
   * @category errors
   */
  SessionNotFound,
  /**
   * @since 0.1.0
   * @category errors
   */
  SpawnFailed,
  /**
   * @since 0.1.0
   * @category errors
   */
  StartupFailed,
  /**
   * @since 0.1.0
   * @category errors
   */
  VersionIncompatible
} from "./AgentError.js"

/**
 * An in-process MCP server (from {@link createSdkMcpServer}) the CLI did not report as connected at the start of a
 * turn; `status` is what it reported, or `"missing"`. Thrown by the iterator when the server's `onConnectFailure` is
 * `"fail"` (the default).
 *
 * @since 0.1.0
 * @category errors
 */
export const McpServerFailed: typeof AgentError.McpServerFailed = AgentError.McpServerFailed

/**
 * @since 0.1.0
 * @category errors
 */
export type McpServerFailed = AgentError.McpServerFailed

/**
 * Thrown by the iterator and the methods after the query was aborted with its `abortController`.
 *
 * @since 0.1.0
 * @category errors
 */
export const AbortError: typeof internal.AbortError = internal.AbortError

/**
 * @since 0.1.0
 * @category errors
 */
export type AbortError = internal.AbortError

/**
 * Every message a query yields (a discriminated union on `type`).
 *
 * @since 0.1.0
 * @category messages
 */
export type SDKMessage = Message.SdkMessage

/**
 * @since 0.1.0
 * @category messages
 */
export type SDKUserMessage = Message.UserMessage

/**
 * @since 0.1.0
 * @category messages
 */
export type SDKAssistantMessage = Message.AssistantMessage

/**
 * @since 0.1.0
 * @category messages
 */
export type SDKResultMessage = Message.ResultMessage

/**
 * @since 0.1.0
 * @category messages
 */
export type SDKSystemMessage = Message.SystemInit

/**
 * @since 0.1.0
 * @category messages
 */
export type SDKPartialAssistantMessage = Message.StreamEventMessage

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionResult = Permissions.PermissionResult

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionUpdate = Permissions.PermissionUpdate

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionMode = AgentOptions.PermissionMode

/**
 * @since 0.1.0
 * @category models
 */
export type HookEvent = Hooks.HookEvent

/**
 * @since 0.1.0
 * @category models
 */
export type HookInput = Hooks.HookInput

/**
 * @since 0.1.0
 * @category models
 */
export type HookJSONOutput = Hooks.HookOutput

/**
 * The permission callback (official signature). Return `{ behavior: "allow", updatedInput? , updatedPermissions? }`
 * or `{ behavior: "deny", message, interrupt? }`. Throwing, returning nothing or an invalid decision, or running past
 * `permissionTimeoutMs` denies (fail closed), with a message saying why. `signal` aborts when the CLI withdraws the request or the query closes.
 *
 * @since 0.1.0
 * @category callbacks
 */
export type CanUseTool = (
  toolName: string,
  input: Record<string, unknown>,
  options: {
    readonly signal: AbortSignal
    readonly suggestions: ReadonlyArray<PermissionUpdate>
    readonly toolUseID: string
    readonly requestId: string
    readonly blockedPath?: string
    readonly decisionReason?: string
    readonly title?: string
    readonly displayName?: string
    readonly description?: string
    readonly agentID?: string
    readonly mcpServer?: { readonly name: string; readonly source: string }
  }
) => Promise<PermissionResult | null>

/**
 * A blocking dialog the CLI asks the host to render (official `UserDialogRequest`).
 *
 * @since 0.1.0
 * @category models
 */
export type UserDialogRequest = Omit<UserDialog.UserDialogRequest, "requestId">

/**
 * The answer to a dialog (official `UserDialogResult`): `{ behavior: "completed", result }` or
 * `{ behavior: "cancelled" }` (the CLI applies the dialog's default).
 *
 * @since 0.1.0
 * @category models
 */
export type UserDialogResult = UserDialog.UserDialogResult

/**
 * The dialog callback (official signature): answers `request_user_dialog` for the kinds in `supportedDialogKinds`.
 * Without it no dialog is answered. Answer `{ behavior: "cancelled" }` for a kind you do not recognize. Throwing,
 * rejecting or returning an invalid answer answers `cancelled`; `null` means you answered out of band (echoing
 * `requestId`): nothing is sent. `signal` aborts when the CLI withdraws the dialog or the query closes.
 *
 * @since 0.1.0
 * @category callbacks
 */
export type OnUserDialog = (
  request: UserDialogRequest,
  options: { readonly signal: AbortSignal; readonly requestId: string }
) => Promise<UserDialogResult | null>

/**
 * An MCP server's request for user input (official `ElicitationRequest`).
 *
 * @since 0.1.0
 * @category models
 */
export type ElicitationRequest = Omit<Elicitation.ElicitationRequest, "requestId">

/**
 * The answer to an elicitation (official `ElicitationResult`, MCP's `ElicitResult`).
 *
 * @since 0.1.0
 * @category models
 */
export type ElicitationResult = Elicitation.ElicitResult

/**
 * The elicitation callback (official signature): answers MCP elicitations no `Elicitation` hook answered. Without
 * it they are declined. Throwing, rejecting, or returning `null` or an invalid answer cancels the elicitation (fail
 * closed; the official SDK's `null`, "answered out of band", has no channel here). `signal` aborts when the CLI
 * withdraws the request or the query closes.
 *
 * @since 0.1.0
 * @category callbacks
 */
export type OnElicitation = (
  request: ElicitationRequest,
  options: { readonly signal: AbortSignal; readonly requestId: string }
) => Promise<ElicitationResult | null>

/**
 * A hook callback (official signature): `input` is the event's input (`hook_event_name`, and for tool events
 * `tool_name` / `tool_input`), `toolUseID` the id of the tool call for tool events (`PreToolUse`, `PostToolUse`, …)
 * and `undefined` for the others, `signal` aborts when the CLI cancels the callback (e.g. at the matcher's
 * `timeout`) or the query closes. A callback that throws, rejects, runs past the matcher's
 * timeout or returns an output that does not match the event's schema answers by the matcher's `onFailure` (`"block"`
 * by default for PreToolUse and PermissionRequest).
 *
 * @since 0.1.0
 * @category callbacks
 */
export type HookCallback = (
  input: HookInput,
  toolUseID: string | undefined,
  options: { readonly signal: AbortSignal }
) => Promise<HookJSONOutput>

/**
 * @since 0.1.0
 * @category callbacks
 */
export interface HookCallbackMatcher {
  readonly matcher?: string
  readonly hooks: ReadonlyArray<HookCallback>
  /** Seconds, for all hooks of the matcher. */
  readonly timeout?: number
  /**
   * What a hook that throws, times out or returns an invalid output answers. Defaults to `"block"` for PreToolUse and
   * PermissionRequest, `"continue"` elsewhere.
   */
  readonly onFailure?: "continue" | "block"
}

/**
 * The level of a log line of the SDK (`Options.logger`, `Options.logLevel`).
 *
 * @since 0.1.0
 * @category logging
 */
export type LogLevel = PromiseLogger.Level

/**
 * Receives the SDK's own log lines (`Options.logger`): `message` is the text (with the cause rendered, when there is
 * one), `annotations` the structured fields (e.g. `pid`). A logger that throws loses that line, never the query.
 *
 * @since 0.1.0
 * @category logging
 */
export type LogFunction = PromiseLogger.LogFunction

/**
 * The official `Options`, plus this SDK's knobs (see `AgentOptions.Options`).
 *
 * Every official option of 0.3.332 is taken. An official option this SDK did not implement would be left out of this
 * type and, passed anyway (plain JavaScript, a cast), fail the query with `InvalidOptions` naming it (the iterator and
 * every method reject with it; no CLI is started) rather than being silently ignored; none is, today.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Omit<AgentOptions.Options, "onElicitation" | "onUserDialog"> {
  /** Aborting closes the query and reaps the CLI; the iterator then throws `AbortError`. */
  readonly abortController?: AbortController | undefined
  readonly canUseTool?: CanUseTool | undefined
  readonly onElicitation?: OnElicitation | undefined
  /** Answers the CLI's dialogs of the kinds in `supportedDialogKinds` (see {@link OnUserDialog}). */
  readonly onUserDialog?: OnUserDialog | undefined
  /** How long `canUseTool` may take before the call is denied. Defaults to 5 minutes; `Infinity`: no timeout. */
  readonly permissionTimeoutMs?: number | undefined
  /**
   * Where the SDK's own log lines go: warnings such as a permission denied because `canUseTool` threw, a CLI that
   * ignored SIGTERM, or a CLI that runs another session than requested. Defaults to one line per entry on
   * **stderr** (`effect-claude-agent WARN Permission for Bash denied: … pid=…`); the SDK never writes to stdout, so
   * a program that speaks a protocol on stdout stays clean. Pass a function to route the lines to your own logger.
   * (`stderr` is another stream: the CLI's own stderr output.)
   */
  readonly logger?: LogFunction | undefined
  /**
   * The lowest level that reaches `logger`. Defaults to `"info"`; `"none"` silences the SDK, `"debug"` adds
   * diagnostics (e.g. a CLI still running after its input closed).
   */
  readonly logLevel?: LogLevel | "none" | undefined
  readonly hooks?: Partial<Record<HookEvent, ReadonlyArray<HookCallbackMatcher>>> | undefined
  /**
   * The Transport to run on. Defaults to real processes (`NodeClaudeAgent.layer`); pass e.g.
   * `ScriptedCli.layer(...)` from `effect-claude-agent/testing` to test code offline without a CLI.
   */
  readonly transport?: Layer.Layer<Transport.Transport> | undefined
  /**
   * Mirror the session's transcript to this store (the CLI still writes it to its config dir), and load a
   * `resume`d / `continue`d / forked session from it before the CLI starts, so a session resumes on another machine
   * (another `CLAUDE_CONFIG_DIR`). Cannot be combined with `persistSession: false`. See `TranscriptStore` for the
   * Effect form.
   */
  readonly sessionStore?: SessionStore | undefined
  /**
   * `"batched"` (default): entries reach `sessionStore.append` at the end of each turn (and every 500 entries);
   * `"eager"`: one `append` per transcript write. Closing the query waits (up to 10 s) for what is pending.
   */
  readonly sessionStoreFlush?: SessionStoreFlush | undefined
  /** The bound of each store call made to load a session before the CLI starts. Defaults to 60 000. */
  readonly loadTimeoutMs?: number | undefined
  /**
   * Starts the CLI instead of the local spawn (in a VM, a container, over SSH): called with the command, its
   * arguments, the working directory, the whole environment and a signal that aborts once the graceful close has
   * run; returns a `SpawnedProcess` (a `ChildProcess` is one). See `Transport.layerSpawn` for what the SDK still does
   * (framing, stderr tail, exit status, close and kill) and what it cannot (reaping the tool processes the CLI
   * started). Not with `transport`.
   */
  readonly spawnClaudeCodeProcess?: ((options: SpawnOptions) => SpawnedProcess) | undefined
  /**
   * Reject the iterator with a typed error right after a `result` that reports an Anthropic API error, instead of
   * ending it as the official SDK does (a `result` with `is_error: true`): `RateLimited` (429), `Overloaded` (529), or
   * `ApiError` (`isAuthentication` for a missing or refused key, e.g. "Not logged in"). The CLI has retried by then
   * (each attempt is a `system/api_retry` message). The `result` itself is yielded first. Defaults to `false`; the
   * Effect API's `ClaudeAgent.failOnApiError` does the same to a Stream.
   */
  readonly failOnApiError?: boolean | undefined
}

/**
 * What `spawnClaudeCodeProcess` is called with (see `Transport.SpawnOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export type SpawnOptions = Transport.SpawnOptions

/**
 * What `spawnClaudeCodeProcess` returns (see `Transport.SpawnedProcess`).
 *
 * @since 0.1.0
 * @category models
 */
export type SpawnedProcess = Transport.SpawnedProcess

/**
 * Where a transcript lives in a {@link SessionStore} (the official `SessionKey`).
 *
 * @since 0.1.0
 * @category models
 */
export type SessionKey = { projectKey: string; sessionId: string; subpath?: string }

/**
 * One transcript line (the official `SessionStoreEntry`): a JSON object with a string `type`, passed through.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionStoreEntry = { type: string; uuid?: string; timestamp?: string; [k: string]: unknown }

/**
 * An external transcript store (the official `SessionStore`): `append` and `load` are required; a store without
 * `listSessions` cannot `continue`, one without `listSubkeys` resumes the main transcript only, one without `delete`
 * keeps everything.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionStore = {
  /** Appends entries to a transcript (called again with the same entries after a failure: keep it idempotent). */
  append(key: SessionKey, entries: Array<SessionStoreEntry>): Promise<void>
  /** The whole transcript, or `null` when the store has none. */
  load(key: SessionKey): Promise<Array<SessionStoreEntry> | null>
  /** The sessions of a project, with their modification times (without it, `continue` finds nothing). */
  listSessions?(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>>
  /** Removes a transcript. */
  delete?(key: SessionKey): Promise<void>
  /** The subpaths (subagent transcripts) stored under a session. */
  listSubkeys?(key: { projectKey: string; sessionId: string }): Promise<Array<string>>
}

/**
 * How transcript entries are flushed to {@link Options.sessionStore} (the official `SessionStoreFlush`).
 *
 * @since 0.1.0
 * @category models
 */
export type SessionStoreFlush = "batched" | "eager"

/**
 * Options of {@link importSessionToStore} (the official `ImportSessionToStoreOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export type ImportSessionToStoreOptions = {
  /** The session's project directory (its cwd). Leave it out to search every project for the session. */
  dir?: string
  /** Import the subagent transcripts too. Defaults to `true`. */
  includeSubagents?: boolean
  /** Entries per `store.append()` call. Defaults to 500. */
  batchSize?: number
}

/**
 * Copies a session the CLI wrote under its config dir (`CLAUDE_CONFIG_DIR`, else `~/.claude`) into a
 * {@link SessionStore}, in batches (the official `importSessionToStore`). Rejects with a `TranscriptStoreError` when
 * the session is not found or the store fails.
 *
 * @since 0.1.0
 * @category functions
 */
export const importSessionToStore: (
  sessionId: string,
  store: SessionStore,
  options?: ImportSessionToStoreOptions
) => Promise<void> = transcriptImport.importSessionToStore

/**
 * A running query: an async generator of messages with the control methods of the official `Query`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Query extends AsyncGenerator<SDKMessage, void> {
  /** Interrupts the current turn; the CLI answers with a `result` (subtype `error_during_execution`). */
  readonly interrupt: () => Promise<Message.InterruptResponse>
  /** Changes the permission mode for the rest of the session. */
  readonly setPermissionMode: (mode: PermissionMode) => Promise<{ readonly mode: string | undefined }>
  /** Switches the model for the next turns (no argument: the default model). */
  readonly setModel: (model?: string) => Promise<void>
  /** Sets the thinking budget (`null`: no limit) and how thinking is displayed. */
  readonly setMaxThinkingTokens: (
    maxThinkingTokens: number | null,
    display?: "summarized" | "omitted" | "highlights"
  ) => Promise<void>
  /** The slash commands the CLI offers in this session. */
  readonly supportedCommands: () => Promise<Array<Message.SlashCommand>>
  /** The models the CLI can use, with their capabilities. */
  readonly supportedModels: () => Promise<Array<Message.ModelInfo>>
  /** The subagents available in this session. */
  readonly supportedAgents: () => Promise<Array<Message.AgentInfo>>
  /** Who the CLI is authenticated as. */
  readonly accountInfo: () => Promise<Message.AccountInfo>
  /** The full `initialize` response (commands, models, agents, account, output style). */
  readonly initializationResult: () => Promise<Message.InitializeResponse>
  /** The status of every MCP server (connected, failed, pending, …). */
  readonly mcpServerStatus: () => Promise<Array<Message.McpServerStatus>>
  /** How the context window is used (`detail: "full"` adds per-category breakdowns). */
  readonly getContextUsage: (options?: { readonly detail?: "summary" | "full" }) => Promise<Message.ContextUsage>
  /** Restores files to their state at a user message (needs `enableFileCheckpointing`); `dryRun` only reports. */
  readonly rewindFiles: (
    userMessageId: string,
    options?: { readonly dryRun?: boolean }
  ) => Promise<Message.RewindFilesResult>
  /** Reconnects an MCP server by name. */
  readonly reconnectMcpServer: (serverName: string) => Promise<void>
  /** Enables or disables an MCP server by name. */
  readonly toggleMcpServer: (serverName: string, enabled: boolean) => Promise<void>
  /**
   * Replaces the dynamically managed MCP servers (in-process ones, e.g. from `createSdkMcpServer`, are connected and
   * disconnected by the SDK); reports what was added, removed and failed.
   */
  readonly setMcpServers: (
    servers: Readonly<Record<string, AgentOptions.McpServerConfig>>
  ) => Promise<Message.McpSetServersResult>
  /** Stops a background task (a subagent or background shell) by id. */
  readonly stopTask: (taskId: string) => Promise<void>
  /** The session id (known before the first message; see `ClaudeAgent.SessionOrigin`). */
  readonly sessionId: () => Promise<string>
  /** The CLI's process id (`undefined` with an in-memory `transport` such as `ScriptedCli`). */
  readonly pid: () => Promise<number | undefined>
  /**
   * Closes the query, at any time (also while starting, or while the prompt waits): the CLI is reaped; later calls
   * reject.
   */
  readonly close: () => Promise<void>
  /** `await using q = query(...)`: closes the query when the scope ends. */
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * The runtime every query without a transport of its own runs on: one per process, so that the CLI resolver's
 * knowledge (where the CLI is, its version) makes the second query cheap; it builds nothing until the first query and
 * holds no process (each query's CLI lives in that query's scope).
 */
const defaultRuntime: internal.Runtime = ManagedRuntime.make(NodeClaudeAgent.layer)

const api = internal.make(defaultRuntime)

/**
 * Starts a query (official signature). `prompt` is a string (one turn) or an async iterable of user messages
 * (streaming input: one turn per message; the query ends after the CLI answered the last one).
 *
 * The iterable never holds the query up: `close()`, `break`, `return()` and an abort settle while it waits (e.g. a
 * generator suspended at an `await` for the user's next input; its `return()` is called, not awaited). An iterable
 * that throws or rejects, or an item that is not a user message (never written), rejects `next()` with
 * `InvalidOptions { option: "prompt" }` (`cause`: what was thrown; `description`: the item's index) and reaps the CLI.
 *
 * A query that is dropped (never iterated, never closed) runs its turn to the end, as the official SDK's does: its CLI
 * closes once the last result is in, and then nothing of the query keeps the process alive.
 *
 * @since 0.1.0
 * @category constructors
 */
export const query: (params: {
  readonly prompt: string | AsyncIterable<SDKUserMessage>
  readonly options?: Options | undefined
}) => Query = api.query

/**
 * A CLI started ahead of its prompt (official `WarmQuery`), from {@link startup}. `query(prompt)` sends the prompt and
 * returns the `Query`, which then owns the process (closing it reaps the CLI); it can be called once. `close()`
 * discards a warm query that was not used, and does nothing once `query()` was called; the end of an `await using`
 * block closes the query it handed out too, as the official one does. A warm query dropped without either keeps its
 * CLI (and Node) running.
 *
 * @since 0.1.0
 * @category models
 */
export interface WarmQuery extends AsyncDisposable {
  /**
   * Sends the prompt to the initialized CLI and returns the query. Throws `InvalidOptions` when called a second
   * time or with something else than a string or an async iterable, `InputClosed` after `close()`.
   */
  readonly query: (prompt: string | AsyncIterable<SDKUserMessage>) => Query
  /** Reaps the CLI if no prompt was sent; resolves once it is gone. */
  readonly close: () => Promise<void>
  /** `await using warm = await startup()`: reaps the CLI when the block ends, also the query `query()` returned. */
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * Starts the CLI and waits for its answer to `initialize` before there is a prompt (official signature), so that
 * the query sent later does not wait for the process to start. Rejects with the start-up error (e.g. `CliNotFound`,
 * `StartupFailed` when `initializeTimeoutMs`, default 60 s, is used up; `AbortError` when `options.abortController`
 * aborts first), and the CLI is reaped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startup: (params?: {
  readonly options?: Options | undefined
  /** Bound on the start-up, up to the answer to `initialize` (Infinity: none); sets `options.initializeTimeout`. */
  readonly initializeTimeoutMs?: number | undefined
}) => Promise<WarmQuery> = api.startup

/**
 * A zod 4 raw shape (`{ a: z.string(), b: z.number().optional() }`), as the official `tool()` takes. zod (`^4`) is an
 * optional peer dependency, needed only for zod shapes; `zod/mini` schemas work too. zod 3 schemas (zod@3, or
 * `zod/v3`) are not supported, as in the official SDK: they do not fit this type, and `tool()` throws
 * `InvalidOptions` for them at run time.
 *
 * @since 0.1.0
 * @category mcp
 */
export type ZodRawShape = Readonly<Record<string, { readonly _zod: { readonly output: unknown } }>>

/**
 * The arguments a zod raw shape describes.
 *
 * @since 0.1.0
 * @category mcp
 */
export type InferShape<S extends ZodRawShape> = {
  readonly [K in keyof S]: S[K] extends { readonly _zod: { readonly output: infer O } } ? O : never
}

/**
 * An in-process MCP tool (official signature): `inputSchema` is a zod 4 raw shape (see {@link ZodRawShape}; zod is an
 * optional peer dependency) or an Effect Schema (e.g. `Schema.Struct({ a: Schema.Number })`, decoded before the
 * handler runs, its JSON Schema sent to the model); the handler gets the validated arguments. Invalid arguments, a
 * handler that throws, or one that runs past the tool's timeout give an `isError` result, never a hang.
 *
 * Throws `InvalidOptions` (`option: "inputSchema"`) for anything else: zod 3 schemas, Effect Schema fields not wrapped
 * in `Schema.Struct`, or a zod shape when zod 4 cannot be loaded.
 *
 * @since 0.1.0
 * @category mcp
 */
export const tool: {
  <S extends ZodRawShape>(
    name: string,
    description: string,
    inputSchema: S,
    handler: (args: InferShape<S>, extra: SdkMcp.ToolExtra) => Promise<SdkMcp.ToolResult>,
    extras?: SdkMcp.ToolOptions
  ): SdkMcp.SdkMcpTool
  <A, I>(
    name: string,
    description: string,
    inputSchema: Schema.Schema<A, I>,
    handler: (args: A, extra: SdkMcp.ToolExtra) => Promise<SdkMcp.ToolResult>,
    extras?: SdkMcp.ToolOptions
  ): SdkMcp.SdkMcpTool
} = mcp.tool

/**
 * An in-process MCP server (official signature), for `options.mcpServers`. Tools are called as
 * `mcp__<name>__<tool>`; allow them with `allowedTools` or a `canUseTool` callback.
 *
 * @since 0.1.0
 * @category mcp
 */
export const createSdkMcpServer: (options: {
  readonly name: string
  readonly version?: string | undefined
  readonly tools?: ReadonlyArray<SdkMcp.SdkMcpTool> | undefined
  readonly instructions?: string | undefined
  readonly alwaysLoad?: boolean | undefined
  /** The CLI's deadline for one tool call, in milliseconds. */
  readonly timeout?: number | undefined
}) => AgentOptions.McpSdkServerConfig = mcp.createSdkMcpServer
