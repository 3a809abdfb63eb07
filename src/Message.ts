/**
 * The stream-json wire protocol of Claude Code as Effect Schemas: every frame the CLI writes on stdout and every
 * frame we write on its stdin, with guards and helpers.
 *
 * Field names are the wire names (snake_case where the CLI uses it), so the values are exactly what the official
 * `@anthropic-ai/claude-agent-sdk` yields. Decoding never fails and never drops a frame:
 *
 * - extra fields are kept on the value;
 * - a frame whose `type` (or `system` / `result` subtype, or stream event type) this version does not know becomes
 *   an {@link UnknownMessage} with `type: "unknown"` and the raw object; so does a known frame whose fields do not
 *   match (then `reason` is `"invalid"` and `issue` says why);
 * - a content block of an unknown type inside a known message becomes an {@link UnknownBlock}
 *   (`type: "unknown"`, `raw`), so narrowing on `block.type` keeps working.
 *
 * The schemas have no transformations (their `Type` equals their `Encoded` form), so a decoded value is the parsed
 * JSON object itself, validated.
 *
 * @example
 * ```ts
 * import { Message } from "effect-claude-agent"
 *
 * const onMessage = (m: Message.SdkMessage) => {
 *   if (m.type === "assistant") console.log(Message.text(m))
 *   if (m.type === "result") console.log(Message.formatCost(m.total_cost_usd))
 * }
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { LineError } from "./AgentError.js"
import { makeDecoder } from "./internal/message/decode.js"

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

/**
 * A JSON object with unknown values.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * @since 0.1.0
 * @category models
 */
export type JsonObject = typeof JsonObject.Type

// ---------------------------------------------------------------------------------------------------------------------
// content blocks
// ---------------------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category content blocks
 */
export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  citations: opt(Schema.NullOr(Schema.Array(Schema.Unknown)))
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type TextBlock = typeof TextBlock.Type

/**
 * @since 0.1.0
 * @category content blocks
 */
export const ThinkingBlock = Schema.Struct({
  type: Schema.Literal("thinking"),
  thinking: Schema.String,
  signature: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ThinkingBlock = typeof ThinkingBlock.Type

/**
 * @since 0.1.0
 * @category content blocks
 */
export const RedactedThinkingBlock = Schema.Struct({
  type: Schema.Literal("redacted_thinking"),
  data: Schema.String
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type RedactedThinkingBlock = typeof RedactedThinkingBlock.Type

/**
 * A tool call made by the model. `input` is the tool's arguments.
 *
 * @since 0.1.0
 * @category content blocks
 */
export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ToolUseBlock = typeof ToolUseBlock.Type

/**
 * A server-side tool call (web search, web fetch, code execution…).
 *
 * @since 0.1.0
 * @category content blocks
 */
export const ServerToolUseBlock = Schema.Struct({
  type: Schema.Literal("server_tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ServerToolUseBlock = typeof ServerToolUseBlock.Type

/**
 * The result of a server-side tool (`web_search_tool_result`, `web_fetch_tool_result`,
 * `code_execution_tool_result`, …).
 *
 * @since 0.1.0
 * @category content blocks
 */
export const ServerToolResultBlock = Schema.Struct({
  type: Schema.Literal(
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "advisor_tool_result"
  ),
  tool_use_id: Schema.String,
  content: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ServerToolResultBlock = typeof ServerToolResultBlock.Type

/**
 * An MCP tool call executed by the API's MCP connector.
 *
 * @since 0.1.0
 * @category content blocks
 */
export const McpToolUseBlock = Schema.Struct({
  type: Schema.Literal("mcp_tool_use"),
  id: Schema.String,
  name: Schema.String,
  server_name: Schema.String,
  input: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type McpToolUseBlock = typeof McpToolUseBlock.Type

/**
 * @since 0.1.0
 * @category content blocks
 */
export const McpToolResultBlock = Schema.Struct({
  type: Schema.Literal("mcp_tool_result"),
  tool_use_id: Schema.String,
  content: Schema.Unknown,
  is_error: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type McpToolResultBlock = typeof McpToolResultBlock.Type

/**
 * The result of a tool call, sent back to the model in a `user` message. `content` is a string or an array of
 * text / image blocks.
 *
 * @since 0.1.0
 * @category content blocks
 */
export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: opt(Schema.Union(Schema.String, Schema.Array(Schema.Unknown))),
  is_error: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ToolResultBlock = typeof ToolResultBlock.Type

/**
 * @since 0.1.0
 * @category content blocks
 */
export const ImageBlock = Schema.Struct({
  type: Schema.Literal("image"),
  source: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ImageBlock = typeof ImageBlock.Type

/**
 * @since 0.1.0
 * @category content blocks
 */
export const DocumentBlock = Schema.Struct({
  type: Schema.Literal("document"),
  source: Schema.Unknown,
  title: opt(Schema.NullOr(Schema.String))
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type DocumentBlock = typeof DocumentBlock.Type

/**
 * @since 0.1.0
 * @category content blocks
 */
export const SearchResultBlock = Schema.Struct({
  type: Schema.Literal("search_result"),
  source: Schema.String,
  title: Schema.String,
  content: Schema.Array(Schema.Unknown)
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type SearchResultBlock = typeof SearchResultBlock.Type

/**
 * @since 0.1.0
 * @category content blocks
 */
export const ContainerUploadBlock = Schema.Struct({
  type: Schema.Literal("container_upload"),
  file_id: Schema.String
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ContainerUploadBlock = typeof ContainerUploadBlock.Type

/**
 * A content block of a type this SDK does not know (a newer API), or a known block whose fields did not match.
 * The original block is in `raw`.
 *
 * @since 0.1.0
 * @category content blocks
 */
export const UnknownBlock = Schema.Struct({
  type: Schema.Literal("unknown"),
  raw: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category content blocks
 */
export type UnknownBlock = typeof UnknownBlock.Type

/**
 * Any content block of an assistant or user message.
 *
 * @since 0.1.0
 * @category content blocks
 */
export const ContentBlock = Schema.Union(
  TextBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  ToolUseBlock,
  ServerToolUseBlock,
  ServerToolResultBlock,
  McpToolUseBlock,
  McpToolResultBlock,
  ToolResultBlock,
  ImageBlock,
  DocumentBlock,
  SearchResultBlock,
  ContainerUploadBlock,
  UnknownBlock
)
/**
 * @since 0.1.0
 * @category content blocks
 */
export type ContentBlock = typeof ContentBlock.Type

// ---------------------------------------------------------------------------------------------------------------------
// conversation messages
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Token usage as the Anthropic API reports it (extra fields such as `server_tool_use` are kept).
 *
 * @since 0.1.0
 * @category models
 */
export const Usage = Schema.Struct({
  input_tokens: opt(Schema.NullOr(Schema.Number)),
  output_tokens: opt(Schema.NullOr(Schema.Number)),
  cache_creation_input_tokens: opt(Schema.NullOr(Schema.Number)),
  cache_read_input_tokens: opt(Schema.NullOr(Schema.Number)),
  service_tier: opt(Schema.NullOr(Schema.String))
})
/**
 * @since 0.1.0
 * @category models
 */
export type Usage = typeof Usage.Type

/**
 * The API message inside an {@link AssistantMessage}. The CLI writes one `assistant` frame per content block, all
 * with the same `id`; `stop_reason` is `null` in them (it arrives in the `result`).
 *
 * @since 0.1.0
 * @category models
 */
export const ApiMessage = Schema.Struct({
  id: Schema.String,
  type: opt(Schema.Literal("message")),
  role: Schema.Literal("assistant"),
  model: Schema.String,
  content: Schema.Array(ContentBlock),
  stop_reason: opt(Schema.NullOr(Schema.String)),
  stop_sequence: opt(Schema.NullOr(Schema.String)),
  usage: opt(Usage)
})
/**
 * @since 0.1.0
 * @category models
 */
export type ApiMessage = typeof ApiMessage.Type

/**
 * The error kind on a synthetic assistant message written for an API error (`"authentication_failed"`,
 * `"rate_limit"`, `"overloaded"`, `"server_error"`, `"unknown"`, …; the set grows, so it is a string).
 *
 * @since 0.1.0
 * @category models
 */
export const AssistantMessageError = Schema.String

/**
 * A model reply (one content block per frame).
 *
 * @since 0.1.0
 * @category conversation
 */
export const AssistantMessage = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: ApiMessage,
  parent_tool_use_id: Schema.NullOr(Schema.String),
  session_id: Schema.String,
  uuid: Schema.String,
  error: opt(AssistantMessageError),
  timestamp: opt(Schema.String),
  request_id: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category conversation
 */
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * The content of a user message: a plain string or content blocks.
 *
 * @since 0.1.0
 * @category models
 */
export const UserContent = Schema.Union(Schema.String, Schema.Array(ContentBlock))
/**
 * @since 0.1.0
 * @category models
 */
export type UserContent = typeof UserContent.Type

/**
 * A user message. We write these to send prompts; the CLI writes them for tool results (`tool_result` blocks,
 * with the tool's structured output in `tool_use_result`), interrupts and replays (`isReplay`).
 *
 * @since 0.1.0
 * @category conversation
 */
export const UserMessage = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({
    role: Schema.Literal("user"),
    content: UserContent
  }),
  parent_tool_use_id: Schema.NullOr(Schema.String),
  session_id: Schema.String,
  uuid: opt(Schema.String),
  timestamp: opt(Schema.String),
  isReplay: opt(Schema.Boolean),
  isSynthetic: opt(Schema.Boolean),
  tool_use_result: opt(Schema.Unknown),
  priority: opt(Schema.Literal("now", "next", "later")),
  shouldQuery: opt(Schema.Boolean),
  client_composed: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category conversation
 */
export type UserMessage = typeof UserMessage.Type

/**
 * Per-model usage in a result (camelCase on the wire).
 *
 * @since 0.1.0
 * @category models
 */
export const ModelUsage = Schema.Struct({
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  cacheReadInputTokens: opt(Schema.Number),
  cacheCreationInputTokens: opt(Schema.Number),
  webSearchRequests: opt(Schema.Number),
  costUSD: Schema.Number,
  contextWindow: opt(Schema.Number),
  maxOutputTokens: opt(Schema.Number),
  thinkingTokens: opt(Schema.Number)
})
/**
 * @since 0.1.0
 * @category models
 */
export type ModelUsage = typeof ModelUsage.Type

/**
 * A tool call that was denied during the turn.
 *
 * @since 0.1.0
 * @category models
 */
export const PermissionDenial = Schema.Struct({
  tool_name: Schema.String,
  tool_use_id: Schema.String,
  tool_input: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category models
 */
export type PermissionDenial = typeof PermissionDenial.Type

const resultFields = {
  type: Schema.Literal("result"),
  duration_ms: Schema.Number,
  duration_api_ms: Schema.Number,
  is_error: Schema.Boolean,
  num_turns: Schema.Number,
  session_id: Schema.String,
  uuid: Schema.String,
  stop_reason: opt(Schema.NullOr(Schema.String)),
  total_cost_usd: Schema.Number,
  usage: Usage,
  modelUsage: Schema.Record({ key: Schema.String, value: ModelUsage }),
  permission_denials: Schema.Array(PermissionDenial),
  terminal_reason: opt(Schema.String),
  api_error_status: opt(Schema.NullOr(Schema.Number)),
  structured_output: opt(Schema.Unknown),
  ttft_ms: opt(Schema.Number),
  result_index: opt(Schema.Number),
  queued_turn_count: opt(Schema.Number)
}

/**
 * The end of a turn that completed. Note that an API error also ends with `subtype: "success"` but
 * `is_error: true`; `result` then holds the error text and `terminal_reason` is `"api_error"`.
 *
 * @since 0.1.0
 * @category results
 */
export const ResultSuccess = Schema.Struct({
  ...resultFields,
  subtype: Schema.Literal("success"),
  result: Schema.String
})
/**
 * @since 0.1.0
 * @category results
 */
export type ResultSuccess = typeof ResultSuccess.Type

/**
 * The end of a turn that failed: interrupted, out of turns, out of budget, or structured output retries used up.
 *
 * @since 0.1.0
 * @category results
 */
export const ResultError = Schema.Struct({
  ...resultFields,
  subtype: Schema.Literal(
    "error_during_execution",
    "error_max_turns",
    "error_max_budget_usd",
    "error_max_structured_output_retries"
  ),
  errors: Schema.Array(Schema.String),
  startup_failure_reason: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category results
 */
export type ResultError = typeof ResultError.Type

/**
 * One per turn: the last frame of a turn.
 *
 * @since 0.1.0
 * @category results
 */
export const ResultMessage = Schema.Union(ResultSuccess, ResultError)
/**
 * @since 0.1.0
 * @category results
 */
export type ResultMessage = typeof ResultMessage.Type

// ---------------------------------------------------------------------------------------------------------------------
// system messages
// ---------------------------------------------------------------------------------------------------------------------

const system = <Sub extends string, F extends Schema.Struct.Fields>(subtype: Sub, fields: F) =>
  Schema.Struct({
    type: Schema.Literal("system"),
    subtype: Schema.Literal(subtype),
    session_id: Schema.String,
    uuid: Schema.String,
    ...fields
  })

/**
 * An MCP server's state as listed in `system/init`.
 *
 * @since 0.1.0
 * @category models
 */
export const McpServerInfo = Schema.Struct({
  name: Schema.String,
  status: Schema.String,
  source: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category models
 */
export type McpServerInfo = typeof McpServerInfo.Type

/**
 * Sent at the start of **every turn** (not once per process): the session id, model, tools, MCP servers, permission
 * mode and CLI version in effect for the turn.
 *
 * @since 0.1.0
 * @category system
 */
export const SystemInit = system("init", {
  cwd: Schema.String,
  tools: Schema.Array(Schema.String),
  mcp_servers: Schema.Array(McpServerInfo),
  model: Schema.String,
  permissionMode: Schema.String,
  slash_commands: opt(Schema.Array(Schema.String)),
  apiKeySource: opt(Schema.String),
  claude_code_version: opt(Schema.String),
  output_style: opt(Schema.String),
  agents: opt(Schema.Array(Schema.String)),
  skills: opt(Schema.Array(Schema.String)),
  plugins: opt(Schema.Array(Schema.Unknown)),
  capabilities: opt(Schema.Array(Schema.String)),
  betas: opt(Schema.Array(Schema.String))
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemInit = typeof SystemInit.Type

/**
 * `{status:"requesting"}` before an API call, `{status:null, permissionMode}` after a mode change, `compacting`.
 *
 * @since 0.1.0
 * @category system
 */
export const SystemStatus = system("status", {
  status: Schema.NullOr(Schema.String),
  permissionMode: opt(Schema.String),
  compact_result: opt(Schema.String),
  compact_error: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemStatus = typeof SystemStatus.Type

/**
 * The CLI is retrying an API call (overloaded, rate limited, 5xx).
 *
 * @since 0.1.0
 * @category system
 */
export const SystemApiRetry = system("api_retry", {
  attempt: Schema.Number,
  max_retries: Schema.Number,
  retry_delay_ms: Schema.Number,
  error_status: Schema.NullOr(Schema.Number),
  error: Schema.String
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemApiRetry = typeof SystemApiRetry.Type

/**
 * `running`, `requires_action` (a permission prompt is pending) or `idle` (the turn is over). Only written when
 * `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`, which the SDK sets.
 *
 * @since 0.1.0
 * @category system
 */
export const SystemSessionStateChanged = system("session_state_changed", {
  state: Schema.Literal("idle", "running", "requires_action"),
  sdk_host_only: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemSessionStateChanged = typeof SystemSessionStateChanged.Type

/**
 * A tool call was denied without asking (no permission handler, a deny rule, `dontAsk` mode…).
 *
 * @since 0.1.0
 * @category system
 */
export const SystemPermissionDenied = system("permission_denied", {
  tool_name: Schema.String,
  tool_use_id: Schema.String,
  message: Schema.String,
  agent_id: opt(Schema.String),
  decision_reason_type: opt(Schema.String),
  decision_reason: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemPermissionDenied = typeof SystemPermissionDenied.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemSessionTitleChanged = system("session_title_changed", { title: Schema.String })
/**
 * @since 0.1.0
 * @category system
 */
export type SystemSessionTitleChanged = typeof SystemSessionTitleChanged.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemCompactBoundary = system("compact_boundary", {
  compact_metadata: Schema.Struct({
    trigger: Schema.String,
    pre_tokens: Schema.Number,
    post_tokens: opt(Schema.Number),
    duration_ms: opt(Schema.Number)
  })
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemCompactBoundary = typeof SystemCompactBoundary.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemControlRequestProgress = system("control_request_progress", {
  request_id: Schema.String,
  status: Schema.String,
  attempt: opt(Schema.Number),
  max_retries: opt(Schema.Number),
  retry_delay_ms: opt(Schema.Number),
  error_status: opt(Schema.NullOr(Schema.Number))
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemControlRequestProgress = typeof SystemControlRequestProgress.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemModelRefusalFallback = system("model_refusal_fallback", {
  trigger: Schema.String,
  direction: Schema.String,
  original_model: Schema.String,
  fallback_model: Schema.String,
  request_id: Schema.NullOr(Schema.String),
  content: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemModelRefusalFallback = typeof SystemModelRefusalFallback.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemModelRefusalNoFallback = system("model_refusal_no_fallback", {
  original_model: Schema.String,
  request_id: Schema.NullOr(Schema.String),
  content: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemModelRefusalNoFallback = typeof SystemModelRefusalNoFallback.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemLocalCommandOutput = system("local_command_output", { content: Schema.String })
/**
 * @since 0.1.0
 * @category system
 */
export type SystemLocalCommandOutput = typeof SystemLocalCommandOutput.Type

const hookEventFields = { hook_id: Schema.String, hook_name: Schema.String, hook_event: Schema.String }

/**
 * A hook started (with `includeHookEvents`).
 *
 * @since 0.1.0
 * @category system
 */
export const SystemHookStarted = system("hook_started", hookEventFields)
/**
 * @since 0.1.0
 * @category system
 */
export type SystemHookStarted = typeof SystemHookStarted.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemHookProgress = system("hook_progress", {
  ...hookEventFields,
  stdout: opt(Schema.String),
  stderr: opt(Schema.String),
  output: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemHookProgress = typeof SystemHookProgress.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemHookResponse = system("hook_response", {
  ...hookEventFields,
  output: opt(Schema.String),
  stdout: opt(Schema.String),
  stderr: opt(Schema.String),
  exit_code: opt(Schema.Number),
  outcome: Schema.String
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemHookResponse = typeof SystemHookResponse.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemPluginInstall = system("plugin_install", {
  status: Schema.String,
  name: opt(Schema.String),
  error: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemPluginInstall = typeof SystemPluginInstall.Type

/**
 * A background task (subagent, background Bash, workflow…) started.
 *
 * @since 0.1.0
 * @category system
 */
export const SystemTaskStarted = system("task_started", {
  task_id: Schema.String,
  description: Schema.String,
  tool_use_id: opt(Schema.String),
  task_type: opt(Schema.String),
  subagent_type: opt(Schema.String),
  prompt: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemTaskStarted = typeof SystemTaskStarted.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemTaskProgress = system("task_progress", {
  task_id: Schema.String,
  description: Schema.String,
  tool_use_id: opt(Schema.String),
  usage: Schema.Struct({ total_tokens: Schema.Number, tool_uses: Schema.Number, duration_ms: Schema.Number }),
  last_tool_name: opt(Schema.String),
  summary: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemTaskProgress = typeof SystemTaskProgress.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemTaskUpdated = system("task_updated", {
  task_id: Schema.String,
  patch: Schema.Struct({
    status: opt(Schema.String),
    description: opt(Schema.String),
    error: opt(Schema.String)
  })
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemTaskUpdated = typeof SystemTaskUpdated.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemTaskNotification = system("task_notification", {
  task_id: Schema.String,
  status: Schema.String,
  output_file: Schema.String,
  summary: Schema.String,
  tool_use_id: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemTaskNotification = typeof SystemTaskNotification.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemBackgroundTasksChanged = system("background_tasks_changed", {
  tasks: Schema.Array(Schema.Struct({ task_id: Schema.String, task_type: Schema.String, description: Schema.String }))
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemBackgroundTasksChanged = typeof SystemBackgroundTasksChanged.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemThinkingTokens = system("thinking_tokens", {
  estimated_tokens: Schema.Number,
  estimated_tokens_delta: Schema.Number
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemThinkingTokens = typeof SystemThinkingTokens.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemWorkerShuttingDown = system("worker_shutting_down", { reason: Schema.String })
/**
 * @since 0.1.0
 * @category system
 */
export type SystemWorkerShuttingDown = typeof SystemWorkerShuttingDown.Type

/**
 * A slash command as listed by `initialize` and `commands_changed`.
 *
 * @since 0.1.0
 * @category models
 */
export const SlashCommand = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  argumentHint: opt(Schema.String),
  builtin: opt(Schema.Boolean),
  aliases: opt(Schema.Array(Schema.String))
})
/**
 * @since 0.1.0
 * @category models
 */
export type SlashCommand = typeof SlashCommand.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemCommandsChanged = system("commands_changed", { commands: Schema.Array(SlashCommand) })
/**
 * @since 0.1.0
 * @category system
 */
export type SystemCommandsChanged = typeof SystemCommandsChanged.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemNotification = system("notification", {
  key: Schema.String,
  text: Schema.String,
  priority: Schema.String
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemNotification = typeof SystemNotification.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemFilesPersisted = system("files_persisted", {
  files: Schema.Array(Schema.Struct({ filename: Schema.String, file_id: Schema.String })),
  failed: Schema.Array(Schema.Struct({ filename: Schema.String, error: Schema.String })),
  processed_at: Schema.String
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemFilesPersisted = typeof SystemFilesPersisted.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemMemoryRecall = system("memory_recall", {
  mode: Schema.String,
  memories: Schema.Array(Schema.Struct({ path: Schema.String, scope: Schema.String }))
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemMemoryRecall = typeof SystemMemoryRecall.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemElicitationComplete = system("elicitation_complete", {
  mcp_server_name: Schema.String,
  elicitation_id: Schema.String
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemElicitationComplete = typeof SystemElicitationComplete.Type

/**
 * @since 0.1.0
 * @category system
 */
export const SystemInformational = system("informational", {
  content: Schema.String,
  level: Schema.String,
  tool_use_id: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemInformational = typeof SystemInformational.Type

/**
 * The CLI could not write its transcript or config (disk full).
 *
 * @since 0.1.0
 * @category system
 */
export const SystemSessionWritesLost = system("session_writes_lost", {
  error_code: Schema.String,
  lost: Schema.Array(Schema.String)
})
/**
 * @since 0.1.0
 * @category system
 */
export type SystemSessionWritesLost = typeof SystemSessionWritesLost.Type

/**
 * Every `type: "system"` frame this SDK knows.
 *
 * @since 0.1.0
 * @category system
 */
export const SystemMessage = Schema.Union(
  SystemInit,
  SystemStatus,
  SystemApiRetry,
  SystemSessionStateChanged,
  SystemPermissionDenied,
  SystemSessionTitleChanged,
  SystemCompactBoundary,
  SystemControlRequestProgress,
  SystemModelRefusalFallback,
  SystemModelRefusalNoFallback,
  SystemLocalCommandOutput,
  SystemHookStarted,
  SystemHookProgress,
  SystemHookResponse,
  SystemPluginInstall,
  SystemTaskStarted,
  SystemTaskProgress,
  SystemTaskUpdated,
  SystemTaskNotification,
  SystemBackgroundTasksChanged,
  SystemThinkingTokens,
  SystemWorkerShuttingDown,
  SystemCommandsChanged,
  SystemNotification,
  SystemFilesPersisted,
  SystemMemoryRecall,
  SystemElicitationComplete,
  SystemInformational,
  SystemSessionWritesLost
)
/**
 * @since 0.1.0
 * @category system
 */
export type SystemMessage = typeof SystemMessage.Type

// ---------------------------------------------------------------------------------------------------------------------
// partial messages (stream_event)
// ---------------------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category stream events
 */
export const TextDelta = Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String })
/**
 * A fragment of a tool call's JSON input; concatenate the fragments of one block to get the input.
 *
 * @since 0.1.0
 * @category stream events
 */
export const InputJsonDelta = Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String })
/**
 * @since 0.1.0
 * @category stream events
 */
export const ThinkingDelta = Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String })
/**
 * @since 0.1.0
 * @category stream events
 */
export const SignatureDelta = Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String })
/**
 * @since 0.1.0
 * @category stream events
 */
export const CitationsDelta = Schema.Struct({ type: Schema.Literal("citations_delta"), citation: Schema.Unknown })

/**
 * @since 0.1.0
 * @category stream events
 */
export const ContentBlockDelta = Schema.Union(TextDelta, InputJsonDelta, ThinkingDelta, SignatureDelta, CitationsDelta)
/**
 * @since 0.1.0
 * @category stream events
 */
export type ContentBlockDelta = typeof ContentBlockDelta.Type

/**
 * @since 0.1.0
 * @category stream events
 */
export const MessageStartEvent = Schema.Struct({
  type: Schema.Literal("message_start"),
  message: Schema.Struct({
    id: Schema.String,
    model: opt(Schema.String),
    usage: opt(Usage)
  })
})
/**
 * @since 0.1.0
 * @category stream events
 */
export const ContentBlockStartEvent = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Schema.Number,
  content_block: ContentBlock
})
/**
 * @since 0.1.0
 * @category stream events
 */
export const ContentBlockDeltaEvent = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Schema.Number,
  delta: ContentBlockDelta
})
/**
 * @since 0.1.0
 * @category stream events
 */
export const ContentBlockStopEvent = Schema.Struct({
  type: Schema.Literal("content_block_stop"),
  index: Schema.Number
})
/**
 * @since 0.1.0
 * @category stream events
 */
export const MessageDeltaEvent = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({
    stop_reason: opt(Schema.NullOr(Schema.String)),
    stop_sequence: opt(Schema.NullOr(Schema.String))
  }),
  usage: opt(Usage)
})
/**
 * @since 0.1.0
 * @category stream events
 */
export const MessageStopEvent = Schema.Struct({ type: Schema.Literal("message_stop") })

/**
 * A raw Anthropic streaming event.
 *
 * @since 0.1.0
 * @category stream events
 */
export const RawStreamEvent = Schema.Union(
  MessageStartEvent,
  ContentBlockStartEvent,
  ContentBlockDeltaEvent,
  ContentBlockStopEvent,
  MessageDeltaEvent,
  MessageStopEvent
)
/**
 * @since 0.1.0
 * @category stream events
 */
export type RawStreamEvent = typeof RawStreamEvent.Type

/**
 * A partial assistant message (only with `includePartialMessages`): one raw API streaming event.
 *
 * @since 0.1.0
 * @category conversation
 */
export const StreamEventMessage = Schema.Struct({
  type: Schema.Literal("stream_event"),
  event: RawStreamEvent,
  parent_tool_use_id: Schema.NullOr(Schema.String),
  session_id: Schema.String,
  uuid: Schema.String,
  ttft_ms: opt(Schema.Number),
  api_message_id: opt(Schema.String),
  /** On the `message_stop` the CLI synthesizes after an interrupt: the blocks that were never finished. */
  abandoned_blocks: opt(Schema.Struct({ api_message_id: Schema.String, from_block_index: Schema.Number }))
})
/**
 * @since 0.1.0
 * @category conversation
 */
export type StreamEventMessage = typeof StreamEventMessage.Type

// ---------------------------------------------------------------------------------------------------------------------
// other SDK messages
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Rate-limit state of the account (status `allowed`, `allowed_warning` or `rejected`).
 *
 * @since 0.1.0
 * @category other messages
 */
export const RateLimitEvent = Schema.Struct({
  type: Schema.Literal("rate_limit_event"),
  rate_limit_info: Schema.Struct({
    status: Schema.String,
    resetsAt: opt(Schema.Number),
    rateLimitType: opt(Schema.String),
    utilization: opt(Schema.Number)
  }),
  session_id: opt(Schema.String),
  uuid: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category other messages
 */
export type RateLimitEvent = typeof RateLimitEvent.Type

/**
 * Progress of a long-running tool, hook or SDK MCP call; `heartbeat: true` every 30 s while the CLI waits.
 *
 * @since 0.1.0
 * @category other messages
 */
export const ToolProgressMessage = Schema.Struct({
  type: Schema.Literal("tool_progress"),
  tool_use_id: Schema.String,
  tool_name: Schema.String,
  parent_tool_use_id: Schema.NullOr(Schema.String),
  elapsed_time_seconds: Schema.Number,
  heartbeat: opt(Schema.Boolean),
  task_id: opt(Schema.String),
  session_id: Schema.String,
  uuid: Schema.String
})
/**
 * @since 0.1.0
 * @category other messages
 */
export type ToolProgressMessage = typeof ToolProgressMessage.Type

/**
 * @since 0.1.0
 * @category other messages
 */
export const AuthStatusMessage = Schema.Struct({
  type: Schema.Literal("auth_status"),
  isAuthenticating: Schema.Boolean,
  output: Schema.Array(Schema.String),
  error: opt(Schema.String),
  session_id: opt(Schema.String),
  uuid: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category other messages
 */
export type AuthStatusMessage = typeof AuthStatusMessage.Type

/**
 * @since 0.1.0
 * @category other messages
 */
export const ToolUseSummaryMessage = Schema.Struct({
  type: Schema.Literal("tool_use_summary"),
  summary: Schema.String,
  preceding_tool_use_ids: Schema.Array(Schema.String),
  session_id: opt(Schema.String),
  uuid: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category other messages
 */
export type ToolUseSummaryMessage = typeof ToolUseSummaryMessage.Type

/**
 * A suggested next prompt (with the `promptSuggestions` option), sent after the `result`.
 *
 * @since 0.1.0
 * @category other messages
 */
export const PromptSuggestionMessage = Schema.Struct({
  type: Schema.Literal("prompt_suggestion"),
  suggestion: Schema.String,
  session_id: opt(Schema.String),
  uuid: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category other messages
 */
export type PromptSuggestionMessage = typeof PromptSuggestionMessage.Type

/**
 * The conversation was reset (`/clear`, leaving plan mode…) and continues under a new id.
 *
 * @since 0.1.0
 * @category other messages
 */
export const ConversationResetMessage = Schema.Struct({
  type: Schema.Literal("conversation_reset"),
  new_conversation_id: Schema.String,
  trigger: opt(Schema.String),
  session_id: opt(Schema.String),
  uuid: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category other messages
 */
export type ConversationResetMessage = typeof ConversationResetMessage.Type

/**
 * A frame this SDK does not know: an unknown `type`, an unknown subtype of a known type, or a known frame whose
 * fields did not match (`reason: "invalid"`, with `issue` describing the mismatch). Nothing is dropped: the parsed
 * object is in `raw`.
 *
 * @since 0.1.0
 * @category other messages
 */
export const UnknownMessage = Schema.Struct({
  type: Schema.Literal("unknown"),
  reason: Schema.Literal("unknown_type", "unknown_subtype", "invalid"),
  raw: JsonObject,
  issue: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category other messages
 */
export type UnknownMessage = typeof UnknownMessage.Type

/**
 * A stdout line that could not be turned into a frame (not JSON, or longer than the line limit). It is delivered
 * in-band so that nothing is lost silently; the stream continues after it.
 *
 * @since 0.1.0
 * @category other messages
 */
export interface TransportErrorMessage {
  readonly type: "transport_error"
  readonly error: LineError
}

/**
 * Written by the SDK (not the CLI) when a session with `autoResume` replaced a CLI that died: which attempt this
 * was, how the old process ended, and the session id the new process resumed.
 *
 * @since 0.1.0
 * @category other messages
 */
export interface SessionRestartedMessage {
  readonly type: "session_restarted"
  /** 1 for the first restart of this session. */
  readonly attempt: number
  readonly exit: { readonly code: number | null; readonly signal: string | null }
  readonly stderrTail: string
  /** The session id the new process resumed. */
  readonly session_id: string
  /** `true` when a turn was running when the CLI died: that turn's result will not come. */
  readonly interruptedTurn: boolean
}

// ---------------------------------------------------------------------------------------------------------------------
// control protocol
// ---------------------------------------------------------------------------------------------------------------------

/**
 * The body of a control request: a `subtype` and subtype-specific fields.
 *
 * @since 0.1.0
 * @category control
 */
export const ControlRequestBody = Schema.Struct(
  { subtype: Schema.String },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
/**
 * @since 0.1.0
 * @category control
 */
export type ControlRequestBody = typeof ControlRequestBody.Type

/**
 * A control request, in either direction. The CLI sends `can_use_tool`, `hook_callback`, `mcp_message`,
 * `elicitation`, …; we send `initialize`, `interrupt`, `set_model`, ….
 *
 * @since 0.1.0
 * @category control
 */
export const ControlRequest = Schema.Struct({
  type: Schema.Literal("control_request"),
  request_id: Schema.String,
  request: ControlRequestBody
})
/**
 * @since 0.1.0
 * @category control
 */
export type ControlRequest = typeof ControlRequest.Type

/**
 * @since 0.1.0
 * @category control
 */
export const ControlSuccessBody = Schema.Struct({
  subtype: Schema.Literal("success"),
  request_id: Schema.String,
  response: opt(Schema.Unknown)
})
/**
 * @since 0.1.0
 * @category control
 */
export const ControlErrorBody = Schema.Struct({
  subtype: Schema.Literal("error"),
  request_id: Schema.String,
  error: Schema.String,
  error_code: opt(Schema.String)
})

/**
 * The answer to a control request, in either direction.
 *
 * @since 0.1.0
 * @category control
 */
export const ControlResponse = Schema.Struct({
  type: Schema.Literal("control_response"),
  response: Schema.Union(ControlSuccessBody, ControlErrorBody)
})
/**
 * @since 0.1.0
 * @category control
 */
export type ControlResponse = typeof ControlResponse.Type

/**
 * Withdraws a pending control request of the sender (no reply).
 *
 * @since 0.1.0
 * @category control
 */
export const ControlCancelRequest = Schema.Struct({
  type: Schema.Literal("control_cancel_request"),
  request_id: Schema.String
})
/**
 * @since 0.1.0
 * @category control
 */
export type ControlCancelRequest = typeof ControlCancelRequest.Type

/**
 * @since 0.1.0
 * @category control
 */
export const KeepAlive = Schema.Struct({ type: Schema.Literal("keep_alive") })
/**
 * @since 0.1.0
 * @category control
 */
export type KeepAlive = typeof KeepAlive.Type

// ---------------------------------------------------------------------------------------------------------------------
// unions
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Every message a session yields to its consumer: conversation, results, system and other SDK messages, unknown
 * frames, and in-band transport errors. Control frames and keep-alives are handled by the SDK and not included.
 *
 * @since 0.1.0
 * @category unions
 */
export type SdkMessage =
  | AssistantMessage
  | UserMessage
  | ResultMessage
  | SystemMessage
  | StreamEventMessage
  | RateLimitEvent
  | ToolProgressMessage
  | AuthStatusMessage
  | ToolUseSummaryMessage
  | PromptSuggestionMessage
  | ConversationResetMessage
  | UnknownMessage
  | TransportErrorMessage
  | SessionRestartedMessage

/**
 * Schema of every frame the CLI writes on stdout (including {@link UnknownMessage}). Prefer `decode`, which
 * also turns unknown frames and blocks into their `unknown` members; this schema validates already-normalized
 * values.
 *
 * @since 0.1.0
 * @category unions
 */
export const StdoutMessage = Schema.Union(
  AssistantMessage,
  UserMessage,
  ResultSuccess,
  ResultError,
  SystemMessage,
  StreamEventMessage,
  RateLimitEvent,
  ToolProgressMessage,
  AuthStatusMessage,
  ToolUseSummaryMessage,
  PromptSuggestionMessage,
  ConversationResetMessage,
  ControlRequest,
  ControlResponse,
  ControlCancelRequest,
  KeepAlive,
  UnknownMessage
)
/**
 * @since 0.1.0
 * @category unions
 */
export type StdoutMessage = typeof StdoutMessage.Type

/**
 * Every frame a Transport yields: a decoded stdout frame or an in-band transport error.
 *
 * @since 0.1.0
 * @category unions
 */
export type Frame = StdoutMessage | TransportErrorMessage

/**
 * What a prompt can be: text, or a full user message (content blocks, images, `priority`, …).
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = string | UserMessage

/**
 * Every frame we write to the CLI's stdin.
 *
 * @since 0.1.0
 * @category unions
 */
export const StdinMessage = Schema.Union(UserMessage, ControlRequest, ControlResponse, ControlCancelRequest)
/**
 * @since 0.1.0
 * @category unions
 */
export type StdinMessage = typeof StdinMessage.Type

// ---------------------------------------------------------------------------------------------------------------------
// decoding, guards and helpers
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Turns one parsed stdout JSON value into a {@link StdoutMessage}. Never fails: unknown or invalid frames become
 * {@link UnknownMessage}s, unknown content blocks become {@link UnknownBlock}s, extra fields are kept.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode: (input: unknown) => StdoutMessage = makeDecoder({
  byType: [
    ["assistant", AssistantMessage],
    ["user", UserMessage],
    ["stream_event", StreamEventMessage],
    ["rate_limit_event", RateLimitEvent],
    ["tool_progress", ToolProgressMessage],
    ["auth_status", AuthStatusMessage],
    ["tool_use_summary", ToolUseSummaryMessage],
    ["prompt_suggestion", PromptSuggestionMessage],
    ["conversation_reset", ConversationResetMessage],
    ["control_request", ControlRequest],
    ["control_response", ControlResponse],
    ["control_cancel_request", ControlCancelRequest],
    ["keep_alive", KeepAlive]
  ],
  system: SystemMessage.members,
  resultSuccess: ResultSuccess,
  resultError: ResultError,
  resultErrorSubtypes: ResultError.fields.subtype.literals,
  streamEvent: StreamEventMessage,
  contentBlock: ContentBlock
})

/**
 * @since 0.1.0
 * @category guards
 */
export const isAssistantMessage = (m: { readonly type: string }): m is AssistantMessage => m.type === "assistant"

/**
 * @since 0.1.0
 * @category guards
 */
export const isUserMessage = (m: { readonly type: string }): m is UserMessage => m.type === "user"

/**
 * @since 0.1.0
 * @category guards
 */
export const isResultMessage = (m: { readonly type: string }): m is ResultMessage => m.type === "result"

/**
 * @since 0.1.0
 * @category guards
 */
export const isSystemMessage = (m: { readonly type: string }): m is SystemMessage => m.type === "system"

/**
 * @since 0.1.0
 * @category guards
 */
export const isSystemInit = (m: { readonly type: string }): m is SystemInit =>
  m.type === "system" && "subtype" in m && m.subtype === "init"

/**
 * @since 0.1.0
 * @category guards
 */
export const isStreamEvent = (m: { readonly type: string }): m is StreamEventMessage => m.type === "stream_event"

/**
 * @since 0.1.0
 * @category guards
 */
export const isUnknownMessage = (m: { readonly type: string }): m is UnknownMessage => m.type === "unknown"

/**
 * `true` for a result that ended the turn without error (`subtype: "success"` and `is_error: false`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isSuccess = (r: ResultMessage): r is ResultSuccess => r.subtype === "success" && !r.is_error

/**
 * The text of an assistant message (its text blocks joined), or of a user message.
 *
 * @since 0.1.0
 * @category helpers
 */
export const text = (m: AssistantMessage | UserMessage): string => {
  const content = m.message.content
  if (typeof content === "string") return content
  let out = ""
  for (const block of content) if (block.type === "text") out += block.text
  return out
}

/**
 * The tool calls of an assistant message.
 *
 * @since 0.1.0
 * @category helpers
 */
export const toolUses = (m: AssistantMessage): ReadonlyArray<ToolUseBlock> =>
  m.message.content.filter((b): b is ToolUseBlock => b.type === "tool_use")

/**
 * The tool results of a user message.
 *
 * @since 0.1.0
 * @category helpers
 */
export const toolResults = (m: UserMessage): ReadonlyArray<ToolResultBlock> =>
  typeof m.message.content === "string"
    ? []
    : m.message.content.filter((b): b is ToolResultBlock => b.type === "tool_result")

/**
 * The text of a tool result's content (text parts joined).
 *
 * @since 0.1.0
 * @category helpers
 */
export const toolResultText = (b: ToolResultBlock): string => {
  if (b.content === undefined) return ""
  if (typeof b.content === "string") return b.content
  let out = ""
  for (const part of b.content) {
    if (typeof part === "object" && part !== null && "text" in part && typeof part.text === "string") out += part.text
  }
  return out
}

/**
 * Decodes a result's `structured_output` (see the `outputFormat` option) with the Effect Schema the answer was asked
 * for. A result without one (the turn failed, or no `outputFormat` was set) fails to decode as `undefined`.
 *
 * @since 0.1.0
 * @category helpers
 */
export const structuredOutput =
  <A, I, R>(schema: Schema.Schema<A, I, R>) => (result: ResultMessage): Effect.Effect<A, ParseResult.ParseError, R> =>
    Schema.decodeUnknown(schema)(result.structured_output)

/**
 * Formats a USD amount the way a cost line reads: `$0.0209`, `$1.23`.
 *
 * @since 0.1.0
 * @category helpers
 */
export const formatCost = (usd: number): string => usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`

/**
 * Input plus output tokens of a usage record (cache tokens included in input).
 *
 * @since 0.1.0
 * @category helpers
 */
export const totalTokens = (usage: Usage): number =>
  (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) +
  (usage.output_tokens ?? 0)

/**
 * Builds the user message frame for a prompt (a string, or content blocks such as images).
 *
 * @since 0.1.0
 * @category constructors
 */
export const userMessage = (
  content: string | ReadonlyArray<ContentBlock>,
  options?: {
    readonly sessionId?: string
    readonly parentToolUseId?: string | null
    readonly uuid?: string
    readonly priority?: "now" | "next" | "later"
    readonly shouldQuery?: boolean
  }
): UserMessage => ({
  type: "user",
  message: { role: "user", content: typeof content === "string" ? [{ type: "text", text: content }] : content },
  parent_tool_use_id: options?.parentToolUseId ?? null,
  session_id: options?.sessionId ?? "",
  ...(options?.uuid !== undefined ? { uuid: options.uuid } : {}),
  ...(options?.priority !== undefined ? { priority: options.priority } : {}),
  ...(options?.shouldQuery !== undefined ? { shouldQuery: options.shouldQuery } : {})
})

// ---------------------------------------------------------------------------------------------------------------------
// control payloads (responses to our requests)
// ---------------------------------------------------------------------------------------------------------------------

/**
 * A model the CLI offers (`supportedModels`).
 *
 * @since 0.1.0
 * @category control payloads
 */
export const ModelInfo = Schema.Struct({
  value: Schema.String,
  displayName: Schema.String,
  description: Schema.String,
  resolvedModel: opt(Schema.String),
  supportsEffort: opt(Schema.Boolean),
  supportedEffortLevels: opt(Schema.Array(Schema.String)),
  supportsAdaptiveThinking: opt(Schema.Boolean),
  supportsFastMode: opt(Schema.Boolean),
  supportsAutoMode: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type ModelInfo = typeof ModelInfo.Type

/**
 * An agent the CLI offers (`supportedAgents`).
 *
 * @since 0.1.0
 * @category control payloads
 */
export const AgentInfo = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  model: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type AgentInfo = typeof AgentInfo.Type

/**
 * The account the CLI runs as (`accountInfo`).
 *
 * @since 0.1.0
 * @category control payloads
 */
export const AccountInfo = Schema.Struct({
  email: opt(Schema.String),
  organization: opt(Schema.String),
  subscriptionType: opt(Schema.String),
  tokenSource: opt(Schema.String),
  apiKeySource: opt(Schema.String),
  apiProvider: opt(Schema.String)
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type AccountInfo = typeof AccountInfo.Type

/**
 * The answer to `initialize`: commands, agents, models, account, output styles and capabilities of the CLI.
 *
 * @since 0.1.0
 * @category control payloads
 */
export const InitializeResponse = Schema.Struct({
  commands: Schema.Array(SlashCommand),
  agents: Schema.Array(AgentInfo),
  models: Schema.Array(ModelInfo),
  account: AccountInfo,
  output_style: opt(Schema.String),
  available_output_styles: opt(Schema.Array(Schema.String)),
  pid: opt(Schema.Number),
  claude_code_version: opt(Schema.String),
  current_permission_mode: opt(Schema.String),
  hooks_applied: opt(Schema.Boolean),
  hook_on_failure_supported: opt(Schema.Boolean),
  sdk_mcp_manifests_parked: opt(Schema.Record({ key: Schema.String, value: Schema.String })),
  capabilities: opt(Schema.Array(Schema.String)),
  /** Whether the `mcpServers` of `initialize` are the set the CLI read at launch (absent when none were sent). */
  mcp_servers_applied: opt(Schema.Boolean),
  /** Whether every plugin `initialize` listed is loaded (absent when none were listed). */
  plugins_applied: opt(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type InitializeResponse = typeof InitializeResponse.Type

/**
 * The answer to `interrupt`: queued prompts that survived it and those it cancelled.
 *
 * @since 0.1.0
 * @category control payloads
 */
export const InterruptResponse = Schema.Struct({
  still_queued: opt(Schema.Array(Schema.String)),
  cancelled: opt(Schema.Array(Schema.String))
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type InterruptResponse = typeof InterruptResponse.Type

/**
 * An MCP server's state (`mcpServerStatus`).
 *
 * @since 0.1.0
 * @category control payloads
 */
export const McpServerStatus = Schema.Struct({
  name: Schema.String,
  status: Schema.String,
  serverInfo: opt(Schema.Struct({ name: Schema.String, version: Schema.String })),
  error: opt(Schema.String),
  config: opt(Schema.Unknown),
  scope: opt(Schema.String),
  source: opt(Schema.String),
  tools: opt(Schema.Array(Schema.Struct({ name: Schema.String, description: opt(Schema.String) })))
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type McpServerStatus = typeof McpServerStatus.Type

/**
 * Context window usage (`getContextUsage`); the CLI sends many more fields, all kept.
 *
 * @since 0.1.0
 * @category control payloads
 */
export const ContextUsage = Schema.Struct({
  totalTokens: Schema.Number,
  maxTokens: Schema.Number,
  percentage: Schema.Number,
  model: opt(Schema.String),
  categories: opt(Schema.Array(Schema.Struct({ name: Schema.String, tokens: Schema.Number })))
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type ContextUsage = typeof ContextUsage.Type

/**
 * @since 0.1.0
 * @category control payloads
 */
export const RewindFilesResult = Schema.Struct({
  canRewind: Schema.Boolean,
  error: opt(Schema.String),
  filesChanged: opt(Schema.Array(Schema.String)),
  insertions: opt(Schema.Number),
  deletions: opt(Schema.Number)
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type RewindFilesResult = typeof RewindFilesResult.Type

/**
 * @since 0.1.0
 * @category control payloads
 */
export const McpSetServersResult = Schema.Struct({
  added: Schema.Array(Schema.String),
  removed: Schema.Array(Schema.String),
  errors: Schema.Record({ key: Schema.String, value: Schema.String })
})
/**
 * @since 0.1.0
 * @category control payloads
 */
export type McpSetServersResult = typeof McpSetServersResult.Type
