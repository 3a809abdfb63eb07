/**
 * Options of `query` and `Session`, with the official `@anthropic-ai/claude-agent-sdk` field names, and their mapping
 * to the CLI's argv, the `initialize` request and the environment.
 *
 * Large values (system prompt, agents, hooks, SDK MCP servers) travel in the `initialize` request over stdin, never
 * in argv. Validation happens before anything is spawned and fails with a typed `InvalidOptions`.
 *
 * Differences from the official SDK, on purpose:
 * - `env` **overlays** the parent environment (the official SDK replaces it, which loses `PATH`); set
 *   `envMode: "replace"` to replace it.
 * - SDK-level knobs that the official SDK hard-codes are options here: `controlRequestTimeout`,
 *   `initializeTimeout`, `closeGraceMillis`, `killGraceMillis`, `reapToolProcesses`, `maxLineBytes`,
 *   `messageBufferSize`.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as JSONSchema from "effect/JSONSchema"
import type * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import type { InvalidOptions, ProcessExited } from "./AgentError.js"
import type * as CliResolver from "./CliResolver.js"
import type * as Elicitation from "./Elicitation.js"
import * as internal from "./internal/session/options.js"
import type { McpServerConfig } from "./SdkMcp.js"
import type * as Message from "./Message.js"
import type * as UserDialog from "./UserDialog.js"

/**
 * @since 0.1.0
 * @category models
 */
export type PermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk" | "auto"

/**
 * @since 0.1.0
 * @category models
 */
export type EffortLevel = "low" | "medium" | "high" | "xhigh" | "max"

/**
 * Which settings files the CLI loads. Leave `settingSources` undefined to load all; `[]` loads none (then
 * `CLAUDE.md` files are not read either).
 *
 * @since 0.1.0
 * @category models
 */
export type SettingSource = "user" | "project" | "local"

/**
 * @since 0.1.0
 * @category models
 */
export type ThinkingConfig =
  | { readonly type: "adaptive"; readonly display?: "summarized" | "omitted" | undefined }
  | {
    readonly type: "enabled"
    readonly budgetTokens?: number | undefined
    readonly display?: "summarized" | "omitted" | undefined
  }
  | { readonly type: "disabled" }

/**
 * The system prompt:
 * - left undefined: an empty system prompt (`[""]`), exactly what the official SDK sends by default — the CLI then
 *   adds only its minimal SDK framing, so the agent does what *you* prompt;
 * - a string (or several strings, joined by the CLI): your own system prompt;
 * - `{ type: "preset", preset: "claude_code", append? }`: Claude Code's own full system prompt (tools guidance,
 *   coding conventions…), optionally with your text appended;
 * - `{ type: "custom", prompt }`: the official SDK's spelling of your own system prompt (as a string or strings).
 *
 * @since 0.1.0
 * @category models
 */
export type SystemPrompt =
  | string
  | ReadonlyArray<string>
  | {
    readonly type: "preset"
    readonly preset: "claude_code"
    readonly append?: string | undefined
    readonly excludeDynamicSections?: boolean | undefined
    readonly snapshot?: boolean | undefined
  }
  | {
    readonly type: "custom"
    readonly prompt: string | ReadonlyArray<string>
    readonly snapshot?: boolean | undefined
  }

/**
 * A subagent the main agent can delegate to.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentDefinition {
  readonly description: string
  readonly prompt: string
  readonly tools?: ReadonlyArray<string> | undefined
  readonly disallowedTools?: ReadonlyArray<string> | undefined
  /** `"inherit"`, an alias (`"sonnet"`) or a model id. */
  readonly model?: string | undefined
  readonly skills?: ReadonlyArray<string> | undefined
  readonly initialPrompt?: string | undefined
  readonly maxTurns?: number | undefined
  readonly background?: boolean | undefined
  readonly memory?: "user" | "project" | "local" | undefined
  readonly effort?: EffortLevel | number | undefined
  readonly permissionMode?: PermissionMode | undefined
  readonly mcpServers?: ReadonlyArray<string | Readonly<Record<string, unknown>>> | undefined
}

export type {
  /**
   * @since 0.1.0
   * @category models
   */
  McpRemoteServerConfig,
  /**
   * @since 0.1.0
   * @category models
   */
  McpSdkServerConfig,
  /**
   * @since 0.1.0
   * @category models
   */
  McpServerConfig,
  /**
   * @since 0.1.0
   * @category models
   */
  McpStdioServerConfig,
  /**
   * @since 0.1.0
   * @category models
   */
  SdkMcpServerInstance
} from "./SdkMcp.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface SdkPluginConfig {
  readonly type: "local"
  readonly path: string
  readonly skipMcpDiscovery?: boolean | undefined
}

/**
 * Options of a query or session. Every field is optional.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  // --- model -------------------------------------------------------------------------------------------------------
  /** Model id or alias (`"sonnet"`, `"claude-sonnet-4-5"`). Leave `undefined` for the CLI's default. */
  readonly model?: string | undefined
  /** Fallback model(s), comma-separated; must differ from `model`. */
  readonly fallbackModel?: string | undefined
  /** Extended thinking. Takes precedence over `maxThinkingTokens`. */
  readonly thinking?: ThinkingConfig | undefined
  /** Deprecated by `thinking`: `0` disables thinking, `N` sets a budget. */
  readonly maxThinkingTokens?: number | undefined
  readonly effort?: EffortLevel | undefined
  /** Beta headers, e.g. `["context-1m-2025-08-07"]`. */
  readonly betas?: ReadonlyArray<string> | undefined
  /**
   * Structured output: the final `result` carries `structured_output` matching this schema — a JSON Schema, or an
   * Effect Schema (sent as `JSONSchema.make(schema)`; decode the answer with `Message.structuredOutput(schema)`).
   */
  readonly outputFormat?: {
    readonly type: "json_schema"
    readonly schema: Readonly<Record<string, unknown>> | JSONSchema.JsonSchema7Root | Schema.Schema.Any
  } | undefined

  // --- limits ------------------------------------------------------------------------------------------------------
  /** Maximum agentic turns; the turn then ends with `subtype: "error_max_turns"`. */
  readonly maxTurns?: number | undefined
  /** Spending limit in USD; the turn then ends with `subtype: "error_max_budget_usd"`. */
  readonly maxBudgetUsd?: number | undefined
  /** API task budget (alpha). */
  readonly taskBudget?: { readonly total: number } | undefined

  // --- environment -------------------------------------------------------------------------------------------------
  /** Working directory of the agent. Defaults to the current directory. */
  readonly cwd?: string | undefined
  /** Extra directories the agent may access. */
  readonly additionalDirectories?: ReadonlyArray<string> | undefined
  /**
   * Environment variables for the CLI. They **overlay** the parent environment (`undefined` removes one) unless
   * `envMode` is `"replace"`. `CLAUDECODE` and `NODE_OPTIONS` are removed even when given here (a spread of
   * `process.env` gives them too): name them in `keepEnv` to pass them on.
   */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** `"overlay"` (default) or `"replace"`. */
  readonly envMode?: "overlay" | "replace" | undefined
  /**
   * Variables the SDK removes from the CLI's environment in every `envMode`, whether inherited or given in `env`,
   * that the CLI gets anyway: `"CLAUDECODE"` (Claude Code's nesting marker: with it the CLI behaves as a session
   * nested in another one) and `"NODE_OPTIONS"` (the parent's Node flags; a JavaScript CLI would run with them). A
   * kept variable has the value `env` gives it, else the parent's (in `"overlay"` mode). Any other name is
   * `InvalidOptions`. Defaults to none, as the official SDK, which always removes `NODE_OPTIONS`.
   */
  readonly keepEnv?: ReadonlyArray<"CLAUDECODE" | "NODE_OPTIONS"> | undefined
  /**
   * Path of the `claude` executable (a `.js`/`.mjs`/`.cjs` file is run by `executable`). Defaults to a search, see
   * Transport.
   */
  readonly pathToClaudeCodeExecutable?: string | undefined
  /**
   * The JavaScript runtime that runs a JavaScript CLI entry (`cli.js`, e.g. `@anthropic-ai/claude-code` before its
   * native builds): `"node"` (the default) is the current Node executable; `"bun"` and `"deno"` are the programs of
   * that name on `PATH` (the `PATH` of `env` when it sets one), looked up before anything is spawned: none there is
   * `InvalidOptions` for `executable`. A native binary (the bundled CLI) runs by itself whatever this says. Deno needs
   * its permission flags in `executableArgs` (e.g. `["run", "--allow-all"]`).
   */
  readonly executable?: "node" | "bun" | "deno" | undefined
  /** Arguments of the runtime (`executable`) before the CLI's file, when the CLI is a JavaScript file. */
  readonly executableArgs?: ReadonlyArray<string> | undefined
  /**
   * Extra CLI flags: `{ flag: null }` → `--flag`, `{ flag: "v" }` → `--flag v` (`--flag=v` if `v` starts with `-`).
   * An inline JSON value of `settings` or `mcp-config` goes into a private file like the options' (a path stays a
   * path); flags that would put settings or prompts on the command line (`managed-settings`, `agents`,
   * `system-prompt`, `append-system-prompt`, `append-subagent-system-prompt`) are `InvalidOptions`: use the option.
   */
  readonly extraArgs?: Readonly<Record<string, string | null>> | undefined
  /** Called with every chunk the CLI writes to stderr. */
  readonly stderr?: ((data: string) => void) | undefined
  readonly debug?: boolean | undefined
  readonly debugFile?: string | undefined

  // --- tools and permissions ---------------------------------------------------------------------------------------
  /** Tools allowed without asking (`"Read"`, `"Bash(npm test:*)"`, `"mcp__server__tool"`). */
  readonly allowedTools?: ReadonlyArray<string> | undefined
  /** Tools denied (a bare name removes the tool from the model's context). */
  readonly disallowedTools?: ReadonlyArray<string> | undefined
  /** The base set of built-in tools (`[]` disables all), or the Claude Code preset. */
  readonly tools?: ReadonlyArray<string> | { readonly type: "preset"; readonly preset: "claude_code" } | undefined
  readonly permissionMode?: PermissionMode | undefined
  /** Required for `permissionMode: "bypassPermissions"`. */
  readonly allowDangerouslySkipPermissions?: boolean | undefined
  /** An MCP tool that answers permission prompts (mutually exclusive with a `Permissions` service). */
  readonly permissionPromptToolName?: string | undefined
  /** `"none"`: anything that would prompt is denied; the permission callback is never called. */
  readonly permissionPrompts?: "host" | "none" | undefined
  /** Enables skills (`"all"` or names); adds `Skill` / `Skill(name)` to `allowedTools`. */
  readonly skills?: ReadonlyArray<string> | "all" | undefined
  /** Single-hop tool-name redirects for model-emitted tool calls. */
  readonly toolAliases?: Readonly<Record<string, string>> | undefined
  readonly toolConfig?: { readonly askUserQuestion?: { readonly previewFormat?: "markdown" | "html" } } | undefined

  // --- prompt, agents, settings ------------------------------------------------------------------------------------
  /** See {@link SystemPrompt}. Defaults to the official SDK's empty system prompt. */
  readonly systemPrompt?: SystemPrompt | undefined
  /** Subagents, by name. */
  readonly agents?: Readonly<Record<string, AgentDefinition>> | undefined
  /** Run the main thread as this agent. */
  readonly agent?: string | undefined
  readonly settingSources?: ReadonlyArray<SettingSource> | undefined
  /**
   * Settings: an object, a JSON string (whatever whitespace or byte order mark it starts with; it must hold an
   * object), or the path of a settings file. An object or JSON string is written to a private file (mode 0600) whose
   * path the CLI gets, never to the command line.
   */
  readonly settings?: string | Readonly<Record<string, unknown>> | undefined
  /**
   * Policy-tier settings (filtered restrictive-only by the CLI; see the official SDK's documentation). They travel in
   * the `initialize` request (`--await-initialize --managed-settings-in-initialize`), never on the command line; the
   * CLI exits at start-up (`StartupFailed`) when it cannot apply them. Needs a CLI that has these flags (2.1.332
   * has; 2.1.100 refuses to start with them: it has no managed settings from the SDK at all).
   */
  readonly managedSettings?: Readonly<Record<string, unknown>> | undefined
  /** Bash sandbox settings (merged into `settings`). */
  readonly sandbox?: Readonly<Record<string, unknown>> | undefined
  readonly plugins?: ReadonlyArray<SdkPluginConfig> | undefined
  /**
   * How `plugins` reach the CLI: `"argv"` (the default) is one `--plugin-dir` flag per plugin, with any CLI;
   * `"initialize"` sends the list in the `initialize` request (the CLI started with `--await-initialize`), so the
   * command line does not grow with the plugin count. `"initialize"` needs Claude Code 2.1.261 or newer: an older
   * CLI found by the process transport fails the session with `VersionIncompatible` before it is spawned; one that
   * takes the flag but not the field fails it with `StartupFailed` naming this option. A plugin the CLI could not
   * load (`plugins_applied: false`) is logged as a warning, as with `"argv"`, where the CLI skips it.
   */
  readonly pluginDelivery?: "argv" | "initialize" | undefined
  readonly planModeInstructions?: string | undefined
  /** Title of a new session. */
  readonly title?: string | undefined
  readonly projectConfigRoot?: string | undefined

  // --- MCP ---------------------------------------------------------------------------------------------------------
  /** MCP servers: external ones (stdio / http / sse) and in-process ones (`type: "sdk"`). */
  readonly mcpServers?: Readonly<Record<string, McpServerConfig>> | undefined
  /**
   * How the `mcpServers` the CLI runs or connects to (stdio, SSE, HTTP) reach it; in-process (`sdk`) servers always
   * travel in `initialize`. `"argv"` (the default) is one `--mcp-config` flag whose JSON goes into a private file
   * (mode 0600, removed when the session closes), never onto the command line; `"initialize"` sends them in the
   * `initialize` request (the CLI started with `--await-initialize`): no file, nothing on disk. Needs Claude Code
   * 2.1.261 or newer: an older CLI found by the process transport fails the session with `VersionIncompatible`
   * before it is spawned; one that does not confirm it took them (`mcp_servers_applied`) fails it with
   * `StartupFailed` naming this option. With `--sdk-url` in `extraArgs` they stay on `--mcp-config`, as the
   * official SDK does (such a session cannot read the request at launch).
   */
  readonly mcpServersDelivery?: "argv" | "initialize" | undefined
  /** Use only the MCP servers given here. */
  readonly strictMcpConfig?: boolean | undefined
  /**
   * Answers MCP elicitations (a server asking the user for input — a form or a URL to open — during a tool call)
   * that no `Elicitation` hook answered. Leave `undefined` to decline them all, as the official SDK does. A handler
   * that fails, dies or returns an invalid answer answers `cancel` (fail closed, with a warning in the log); when the
   * CLI withdraws the request or the session closes, the handler is interrupted. See `Elicitation`.
   */
  readonly onElicitation?: Elicitation.OnElicitation | undefined

  // --- dialogs and background tasks ----------------------------------------------------------------------------------
  /**
   * Answers the CLI's blocking dialogs (`request_user_dialog`) of the kinds in `supportedDialogKinds`. Leave
   * `undefined` to answer none (the CLI's deadline settles them). A handler that fails, dies or returns an invalid
   * answer answers `cancelled` (the dialog's default); `null` sends nothing (answered out of band). See `UserDialog`.
   */
  readonly onUserDialog?: UserDialog.OnUserDialog | undefined
  /**
   * The dialog kinds `onUserDialog` renders, declared in `initialize` (e.g. `"refusal_fallback_prompt"`). The CLI
   * sends only these; a flow whose kind is not declared takes its no-dialog path. A non-empty list requires
   * `onUserDialog` (`InvalidOptions` otherwise).
   */
  readonly supportedDialogKinds?: ReadonlyArray<string> | undefined
  /**
   * Declares, in `initialize`, that this host stops background tasks one at a time (`stopTask`): `interrupt` then ends
   * only the turn and spares running background tasks. Without it an interrupt also stops them (the CLI fails closed).
   * A one-shot run whose input is closed still stops them when its held result is released.
   */
  readonly perTaskStopAffordance?: boolean | undefined

  // --- sessions ----------------------------------------------------------------------------------------------------
  /** Resume this session id. */
  readonly resume?: string | undefined
  /** Continue the most recent session of `cwd`. */
  readonly continue?: boolean | undefined
  /** With `resume`/`continue`: continue under a new session id. */
  readonly forkSession?: boolean | undefined
  /** Use this session id (a UUID); with `resume`/`continue` only together with `forkSession`. */
  readonly sessionId?: string | undefined
  /** Resume only up to this message uuid. */
  readonly resumeSessionAt?: string | undefined
  readonly resumeDropsTurn?: string | undefined
  /** `false`: do not write the transcript to disk. */
  readonly persistSession?: boolean | undefined
  /** Track file changes so that `rewindFiles` can undo them. */
  readonly enableFileCheckpointing?: boolean | undefined

  // --- output ------------------------------------------------------------------------------------------------------
  /** Emit `stream_event` partial messages. */
  readonly includePartialMessages?: boolean | undefined
  /** Emit `system/hook_*` messages for every hook. */
  readonly includeHookEvents?: boolean | undefined
  readonly forwardSubagentText?: boolean | undefined
  /** Emit `prompt_suggestion` after each turn. */
  readonly promptSuggestions?: boolean | undefined
  readonly agentProgressSummaries?: boolean | undefined
  /** Send prompts verbatim (no `@file` / slash-command expansion). */
  readonly verbatimPrompts?: boolean | undefined

  // --- this SDK ----------------------------------------------------------------------------------------------------
  /** Timeout of control requests (`interrupt`, `set_model`, …). `"infinity"` disables it. Defaults to 60 seconds. */
  readonly controlRequestTimeout?: Duration.DurationInput | "infinity" | undefined
  /**
   * Bound on start-up, from finding the executable (its `--version` check and the spawn included) to the answer to
   * `initialize`; beyond it, `StartupFailed` whose `reason` names the phase it stalled in. `"infinity"` disables it.
   * Defaults to 60 seconds.
   */
  readonly initializeTimeout?: Duration.DurationInput | "infinity" | undefined
  /**
   * While a turn runs, how long the CLI may write nothing (when the SDK owes it no answer) before the session fails
   * with `IdleTimeout` and the CLI is killed. Tool progress heartbeats count as output; time spent in your
   * permission, hook or MCP handlers does not. `"infinity"` disables it. Defaults to 10 minutes.
   */
  readonly idleTimeout?: Duration.DurationInput | "infinity" | undefined
  /**
   * Like `idleTimeout`, for the first message after a prompt. `"infinity"` disables it. Defaults to 60 seconds.
   */
  readonly firstMessageTimeout?: Duration.DurationInput | "infinity" | undefined
  /** How long `interrupt` waits for the CLI's acknowledgement (`InterruptTimeout`). Defaults to 5 seconds. */
  readonly interruptTimeout?: Duration.DurationInput | undefined
  /** After stdin closes, how long the CLI may take to exit before SIGTERM. Defaults to 250 ms. */
  readonly closeGraceMillis?: number | undefined
  /** After SIGTERM, how long before SIGKILL. Defaults to 2000 ms. */
  readonly killGraceMillis?: number | undefined
  /**
   * Whether closing the session also ends the tool processes the CLI started outside its process group (a command
   * the Bash tool backgrounded, a tool still running when the CLI had to be SIGKILLed): SIGTERM, then SIGKILL after
   * `killGraceMillis`. Works on Linux (a random marker in the CLI's environment, found in `/proc`); elsewhere only
   * the CLI's process group is signalled. Set `false` to leave them running (e.g. a server the agent started on
   * purpose). Defaults to `true`.
   */
  readonly reapToolProcesses?: boolean | undefined
  /** Longest stdout line accepted, in bytes. Defaults to 64 MiB. */
  readonly maxLineBytes?: number | undefined
  /**
   * CLI versions to accept (`">=2.1.100 <2.2.0"`-style; `"*"` accepts any). Outside the range the session fails with
   * `VersionIncompatible` before it starts. Defaults to `Transport.SUPPORTED_CLI_VERSIONS`.
   */
  readonly cliVersions?: string | undefined
  /**
   * Sessions only: when the CLI dies unexpectedly (a crash, an OOM kill, a `kill` by an operator — not your own
   * close), start a new one that resumes the same session, re-registering hooks, permissions and MCP servers and
   * applying again what `setModel`, `setPermissionMode`, `setMaxThinkingTokens` and `setMcpServers` changed; the
   * session's `messages` and `send` keep working and a `session_restarted` message marks each restart. Prompts sent
   * while the process is replaced are queued and delivered once. Give the retry policy as an Effect `Schedule` over
   * the `ProcessExited` that caused it, or as `{ maxRestarts, initialDelayMillis?, maxDelayMillis? }` (exponential
   * backoff). When the policy is exhausted the session fails with the last `ProcessExited`.
   */
  readonly autoResume?:
    | Schedule.Schedule<unknown, ProcessExited>
    | { readonly maxRestarts: number; readonly initialDelayMillis?: number; readonly maxDelayMillis?: number }
    | undefined
  /** SDK messages buffered for a slow consumer before reading pauses. Defaults to 4096. */
  readonly messageBufferSize?: number | undefined
}

/**
 * What a session needs beyond the options: contributions of the Permissions, Hooks and MCP services.
 *
 * @since 0.1.0
 * @category models
 */
export interface Extensions {
  /** Pass `--permission-prompt-tool=stdio` (a permission handler is present). */
  readonly permissionPromptStdio?: boolean | undefined
  /** Fields merged into the `initialize` request (hooks, SDK MCP servers, …). */
  readonly initialize?: Readonly<Record<string, unknown>> | undefined
  /** Extra `allowedTools` entries. */
  readonly allowedTools?: ReadonlyArray<string> | undefined
  /**
   * Rules merged into the settings the CLI gets (`permissions.deny`, `permissions.ask`): a `Permissions` rule set's
   * deny and ask rules, so that they hold where the CLI decides without asking.
   */
  readonly cliPermissions?: {
    readonly deny: ReadonlyArray<string>
    readonly ask: ReadonlyArray<string>
  } | undefined
  /** Pass `--session-mirror` (a `TranscriptStore` is present: the CLI writes `transcript_mirror` frames). */
  readonly sessionMirror?: boolean | undefined
}

/**
 * The result of mapping options: what to spawn and what to send first.
 *
 * @since 0.1.0
 * @category models
 */
export interface Launch {
  /** Option flags (after the base flags). */
  readonly args: ReadonlyArray<string>
  /** Environment overlay for the CLI. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** The `initialize` request body (without `subtype`). */
  readonly initialize: Readonly<Record<string, unknown>>
  /** What these options need of the CLI, checked against its version before it is spawned. */
  readonly requirements: ReadonlyArray<CliRequirement>
}

/**
 * An option that needs a newer CLI than the SDK's supported range (see `CliResolver.CliRequirement`).
 *
 * @since 0.1.0
 * @category models
 */
export type CliRequirement = CliResolver.CliRequirement

/**
 * Checks every option, as both APIs do before anything is spawned: the shape of each field as the official SDK
 * takes it (`env` values are strings — `undefined` unsets one — without NUL, names without `=`; lists are arrays;
 * enums, positive integers, MCP server configs, a `settings` JSON string that parses to an object, a `sessionId`
 * that is a UUID, …) and the rules between fields. A bad option fails with `InvalidOptions { option, description }`:
 * `option` names the field, `reason` the path inside it and why. Unknown fields are ignored. (Whether `cwd`
 * exists is checked by the process transport, also before anything is spawned.)
 *
 * @since 0.1.0
 * @category validation
 */
export const validate: (options: Options) => Effect.Effect<void, InvalidOptions> = internal.validate

/**
 * A checker of options against a schema of your own (e.g. the extra options of an adapter over this API), as
 * {@link validate} checks its own: `undefined` when they are valid, else an `InvalidOptions` naming the option (the
 * top-level field) and why, with the path inside it. Excess fields are ignored (the schema checks only its own).
 *
 * @since 0.1.0
 * @category validation
 */
export const checker: <A, I>(schema: Schema.Schema<A, I>) => (options: unknown) => InvalidOptions | undefined =
  internal.checker

/**
 * Validates options and maps them to argv, environment and the `initialize` request, exactly as the official SDK
 * does (see the README's options table).
 *
 * @since 0.1.0
 * @category mapping
 */
export const toLaunch: (options: Options, extensions?: Extensions) => Effect.Effect<Launch, InvalidOptions> =
  internal.toLaunch

/**
 * Prepares a user message frame for these options (adds `client_composed` with `verbatimPrompts`).
 *
 * @since 0.1.0
 * @category mapping
 */
export const userMessage: (
  options: Options,
  prompt: string | Message.UserMessage
) => Message.UserMessage = internal.userMessage
