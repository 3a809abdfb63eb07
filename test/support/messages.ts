// Decoded SDK messages for the pure tests of the session's state (no CLI involved).
import * as Schema from "effect/Schema"
import { Message } from "effect-claude-agent"

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
const resultFields = {
  type: "result",
  duration_ms: 12,
  duration_api_ms: 8,
  num_turns: 1,
  session_id: "cli-id",
  uuid: "u",
  total_cost_usd: 0,
  usage,
  modelUsage: {},
  permission_denials: []
}

export const success = (text = "done"): Message.ResultMessage =>
  Schema.decodeUnknownSync(Message.ResultMessage)({
    ...resultFields,
    subtype: "success",
    is_error: false,
    result: text
  })

export const failed = (errors: ReadonlyArray<string>): Message.ResultMessage =>
  Schema.decodeUnknownSync(Message.ResultMessage)({
    ...resultFields,
    subtype: "error_during_execution",
    is_error: true,
    errors
  })

export const init = (sessionId: string): Message.SdkMessage =>
  Schema.decodeUnknownSync(Message.SystemInit)({
    type: "system",
    subtype: "init",
    cwd: "/",
    session_id: sessionId,
    tools: [],
    mcp_servers: [],
    model: "m",
    permissionMode: "default",
    slash_commands: [],
    apiKeySource: "none",
    claude_code_version: "2.1.332",
    output_style: "default",
    uuid: "u"
  })

export const stateChanged = (state: "idle" | "running" | "requires_action", hostOnly = true): Message.SdkMessage =>
  Schema.decodeUnknownSync(Message.SystemSessionStateChanged)({
    type: "system",
    subtype: "session_state_changed",
    state,
    ...(hostOnly ? { sdk_host_only: true } : {}),
    session_id: "cli-id",
    uuid: "u"
  })

export const commandsChanged = (names: ReadonlyArray<string>): Message.SdkMessage =>
  Schema.decodeUnknownSync(Message.SystemCommandsChanged)({
    type: "system",
    subtype: "commands_changed",
    commands: names.map((name) => ({ name, description: "", argumentHint: "" })),
    session_id: "cli-id",
    uuid: "u"
  })

export const assistant: Message.SdkMessage = Schema.decodeUnknownSync(Message.AssistantMessage)({
  type: "assistant",
  message: {
    id: "msg",
    type: "message",
    role: "assistant",
    model: "m",
    content: [{ type: "text", text: "hi" }],
    stop_reason: null,
    stop_sequence: null,
    usage
  },
  parent_tool_use_id: null,
  session_id: "cli-id",
  uuid: "u"
})
