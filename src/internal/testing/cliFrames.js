// @ts-check
/**
 * The frames the testing kit's two fake CLIs write alike: `ScriptedCli` (in memory) and the `FakeCli` program
 * (`fakeCliMain.js`, its own Node process). Plain JavaScript typed by JSDoc that imports only Node built-ins, so
 * that the program runs it as it is, from this repository's sources and from the published package alike.
 *
 * @internal
 */
import { randomUUID } from "node:crypto"

/**
 * @typedef {{ readonly [key: string]: unknown }} JsonObject
 * @typedef {{ readonly cwd: string; readonly sessionId: string; readonly model: string }} Identity
 */

/** The version of the real CLI the fakes pose as. */
export const CLI_VERSION = "2.1.332"

/** The token usage of every fake turn. */
const usage = Object.freeze({
  input_tokens: 10,
  output_tokens: 5,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0
})

/**
 * The answer to `initialize`, the default model resolving to `model`.
 *
 * @param {string} model
 * @param {ReadonlyArray<{ value: string; displayName: string; description: string; resolvedModel: string }>} [more]
 *   models listed after the default one
 */
export const initializeResponse = (model, more = []) => ({
  commands: [{ name: "compact", description: "Clear conversation history but keep a summary", argumentHint: "" }],
  agents: [{ name: "general-purpose", description: "General-purpose agent" }],
  models: [
    { value: "default", displayName: "Default", description: "The default model", resolvedModel: model },
    ...more
  ],
  account: { tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY", apiProvider: "firstParty" },
  output_style: "default",
  available_output_styles: ["default"],
  claude_code_version: CLI_VERSION,
  current_permission_mode: "default"
})

/**
 * The answers to the other control requests a fake CLI supports out of the box (the `response` of a success), by
 * subtype.
 *
 * @type {{ readonly [subtype: string]: (request: JsonObject) => JsonObject }}
 */
export const defaultAnswers = {
  interrupt: () => ({ still_queued: [] }),
  set_model: (request) => ({ model: request["model"] }),
  set_permission_mode: (request) => ({ mode: request["mode"] }),
  set_max_thinking_tokens: () => ({}),
  mcp_status: () => ({ mcpServers: [] }),
  get_context_usage: () => ({ totalTokens: 0, maxTokens: 200_000, percentage: 0, categories: [] }),
  rewind_files: () => ({ canRewind: true, filesChanged: [], insertions: 0, deletions: 0 }),
  mcp_set_servers: () => ({ added: [], removed: [], errors: {} }),
  mcp_reconnect: () => ({}),
  mcp_toggle: () => ({}),
  stop_task: () => ({})
}

/**
 * The error response to a control request of a subtype the fake does not know, as the real CLI words it.
 *
 * @param {string} requestId
 * @param {string} subtype
 */
export const unsupported = (requestId, subtype) => ({
  subtype: /** @type {const} */ ("error"),
  request_id: requestId,
  error: `Unsupported control request subtype: ${subtype}`,
  error_code: "unsupported_request"
})

/**
 * The `system/init` frame that starts every turn.
 *
 * @param {Identity} identity
 * @param {JsonObject} [fields] overrides
 * @returns {JsonObject}
 */
export const initFrame = (identity, fields) => ({
  type: "system",
  subtype: "init",
  cwd: identity.cwd,
  session_id: identity.sessionId,
  tools: ["Bash", "Read", "Write", "Edit"],
  mcp_servers: [],
  model: identity.model,
  permissionMode: "default",
  slash_commands: ["compact"],
  apiKeySource: "ANTHROPIC_API_KEY",
  claude_code_version: CLI_VERSION,
  output_style: "default",
  agents: ["general-purpose"],
  skills: [],
  plugins: [],
  uuid: randomUUID(),
  ...fields
})

/**
 * An assistant message of one content block.
 *
 * @param {Identity} identity
 * @param {string} id the message id
 * @param {JsonObject} block
 * @returns {JsonObject}
 */
export const assistantFrame = (identity, id, block) => ({
  type: "assistant",
  message: {
    id,
    type: "message",
    role: "assistant",
    model: identity.model,
    content: [block],
    stop_reason: null,
    stop_sequence: null,
    usage
  },
  parent_tool_use_id: null,
  session_id: identity.sessionId,
  uuid: randomUUID()
})

/**
 * The `result` frame that ends a successful turn.
 *
 * @param {Identity} identity
 * @param {string} text
 * @param {JsonObject} [fields] overrides
 * @returns {JsonObject}
 */
export const resultFrame = (identity, text, fields) => ({
  type: "result",
  subtype: "success",
  is_error: false,
  result: text,
  duration_ms: 1,
  duration_api_ms: 1,
  num_turns: 1,
  session_id: identity.sessionId,
  uuid: randomUUID(),
  stop_reason: "end_turn",
  total_cost_usd: 0,
  usage,
  modelUsage: {},
  permission_denials: [],
  ...fields
})

/**
 * What the real CLI writes right after every result (with `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`).
 *
 * @param {Identity} identity
 * @returns {JsonObject}
 */
export const idleFrame = (identity) => ({
  type: "system",
  subtype: "session_state_changed",
  state: "idle",
  sdk_host_only: true,
  session_id: identity.sessionId,
  uuid: randomUUID()
})
