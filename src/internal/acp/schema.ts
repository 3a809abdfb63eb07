/**
 * The Agent Client Protocol (v1) as this server reads and writes it: Schemas for what the client sends (params of
 * its requests and notifications, answers to ours), decoded at the edge, and the types of what we send. Unknown
 * fields are ignored, as the protocol asks; the shapes follow the protocol's published JSON schema (`schema/v1`).
 *
 * @internal
 */
import * as Schema from "effect/Schema"

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optional(s)
const Meta = opt(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown })))

/** The only protocol version this server speaks. @internal */
export const PROTOCOL_VERSION = 1

// ---------------------------------------------------------------------------------------------------------------------
// content
// ---------------------------------------------------------------------------------------------------------------------

const Annotations = opt(Schema.NullOr(Schema.Unknown))

/** @internal */
export const TextContent = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  annotations: Annotations,
  _meta: Meta
})

/** @internal */
export const ImageContent = Schema.Struct({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  uri: opt(Schema.NullOr(Schema.String)),
  annotations: Annotations,
  _meta: Meta
})

/** @internal */
export const AudioContent = Schema.Struct({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Annotations,
  _meta: Meta
})

/** @internal */
export const ResourceLink = Schema.Struct({
  type: Schema.Literal("resource_link"),
  uri: Schema.String,
  name: Schema.String,
  title: opt(Schema.NullOr(Schema.String)),
  description: opt(Schema.NullOr(Schema.String)),
  mimeType: opt(Schema.NullOr(Schema.String)),
  size: opt(Schema.NullOr(Schema.Number)),
  annotations: Annotations,
  _meta: Meta
})

/** @internal */
export const TextResourceContents = Schema.Struct({
  uri: Schema.String,
  text: Schema.String,
  mimeType: opt(Schema.NullOr(Schema.String))
})

/** @internal */
export const BlobResourceContents = Schema.Struct({
  uri: Schema.String,
  blob: Schema.String,
  mimeType: opt(Schema.NullOr(Schema.String))
})

/** @internal */
export const EmbeddedResource = Schema.Struct({
  type: Schema.Literal("resource"),
  resource: Schema.Union(TextResourceContents, BlobResourceContents),
  annotations: Annotations,
  _meta: Meta
})

/** @internal */
export const ContentBlock = Schema.Union(TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
/** @internal */
export type ContentBlock = typeof ContentBlock.Type

// ---------------------------------------------------------------------------------------------------------------------
// requests of the client
// ---------------------------------------------------------------------------------------------------------------------

/** @internal */
export const InitializeRequest = Schema.Struct({
  protocolVersion: Schema.Number,
  clientCapabilities: opt(Schema.Unknown),
  clientInfo: opt(Schema.Unknown),
  _meta: Meta
})

const EnvVariable = Schema.Struct({ name: Schema.String, value: Schema.String })
const HttpHeader = Schema.Struct({ name: Schema.String, value: Schema.String })

/** @internal */
export const McpServerStdio = Schema.Struct({
  name: Schema.String,
  command: Schema.String,
  args: opt(Schema.NullOr(Schema.Array(Schema.String))),
  env: opt(Schema.NullOr(Schema.Array(EnvVariable)))
})

/** @internal */
export const McpServerRemote = Schema.Struct({
  type: Schema.Literal("http", "sse"),
  name: Schema.String,
  url: Schema.String,
  headers: opt(Schema.NullOr(Schema.Array(HttpHeader)))
})

/** A remote server first: a stdio server has no `type` (or `"stdio"`). @internal */
export const McpServer = Schema.Union(
  McpServerRemote,
  Schema.Struct({ ...McpServerStdio.fields, type: opt(Schema.Literal("stdio")) })
)
/** @internal */
export type McpServer = typeof McpServer.Type

const McpServers = opt(Schema.NullOr(Schema.Array(McpServer)))

/** @internal */
export const NewSessionRequest = Schema.Struct({
  cwd: Schema.String,
  mcpServers: McpServers,
  additionalDirectories: opt(Schema.NullOr(Schema.Array(Schema.String))),
  _meta: Meta
})
/** @internal */
export type NewSessionRequest = typeof NewSessionRequest.Type

/** @internal */
export const LoadSessionRequest = Schema.Struct({
  sessionId: Schema.String,
  cwd: Schema.String,
  mcpServers: McpServers,
  additionalDirectories: opt(Schema.NullOr(Schema.Array(Schema.String))),
  _meta: Meta
})
/** @internal */
export type LoadSessionRequest = typeof LoadSessionRequest.Type

/** @internal */
export const SessionRequest = Schema.Struct({ sessionId: Schema.String, _meta: Meta })

/** @internal */
export const ListSessionsRequest = Schema.Struct({
  cwd: opt(Schema.NullOr(Schema.String)),
  cursor: opt(Schema.NullOr(Schema.String)),
  _meta: Meta
})

/** @internal */
export const PromptRequest = Schema.Struct({
  sessionId: Schema.String,
  prompt: Schema.Array(ContentBlock),
  _meta: Meta
})
/** @internal */
export type PromptRequest = typeof PromptRequest.Type

/** @internal */
export const SetSessionModeRequest = Schema.Struct({
  sessionId: Schema.String,
  modeId: Schema.String,
  _meta: Meta
})

/** @internal */
export const SetSessionConfigOptionRequest = Schema.Struct({
  sessionId: Schema.String,
  configId: Schema.String,
  value: Schema.Union(Schema.String, Schema.Boolean),
  _meta: Meta
})

// ---------------------------------------------------------------------------------------------------------------------
// answers of the client to our requests
// ---------------------------------------------------------------------------------------------------------------------

/** @internal */
export const RequestPermissionResponse = Schema.Struct({
  outcome: Schema.Union(
    Schema.Struct({ outcome: Schema.Literal("cancelled") }),
    Schema.Struct({ outcome: Schema.Literal("selected"), optionId: Schema.String })
  )
})

/** @internal */
export const ReadTextFileResponse = Schema.Struct({ content: Schema.String })

/** @internal */
export const CreateTerminalResponse = Schema.Struct({ terminalId: Schema.String })

const ExitStatus = Schema.Struct({
  exitCode: opt(Schema.NullOr(Schema.Number)),
  signal: opt(Schema.NullOr(Schema.String))
})

/** @internal */
export const TerminalOutputResponse = Schema.Struct({
  output: Schema.String,
  truncated: Schema.Boolean,
  exitStatus: opt(Schema.NullOr(ExitStatus))
})

/** @internal */
export const WaitForTerminalExitResponse = ExitStatus

// ---------------------------------------------------------------------------------------------------------------------
// what we send
// ---------------------------------------------------------------------------------------------------------------------

/** @internal */
export type StopReason = "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled"

/** @internal */
export type ToolKind =
  | "read"
  | "edit"
  | "delete"
  | "move"
  | "search"
  | "execute"
  | "think"
  | "fetch"
  | "switch_mode"
  | "other"

/** @internal */
export type ToolCallStatus = "pending" | "in_progress" | "completed" | "failed"

/** @internal */
export type OutContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image"; readonly data: string; readonly mimeType: string }

/** @internal */
export type ToolCallContent =
  | { readonly type: "content"; readonly content: OutContent }
  | { readonly type: "diff"; readonly path: string; readonly oldText: string | null; readonly newText: string }
  | { readonly type: "terminal"; readonly terminalId: string }

/** @internal */
export interface ToolCallLocation {
  readonly path: string
  readonly line?: number
}

/** The fields of a tool call and of its updates. @internal */
export interface ToolCallFields {
  readonly toolCallId: string
  readonly title?: string
  readonly kind?: ToolKind
  readonly status?: ToolCallStatus
  readonly content?: ReadonlyArray<ToolCallContent>
  readonly locations?: ReadonlyArray<ToolCallLocation>
  readonly rawInput?: unknown
  readonly rawOutput?: unknown
}

/** @internal */
export interface PlanEntry {
  readonly content: string
  readonly priority: "high" | "medium" | "low"
  readonly status: "pending" | "in_progress" | "completed"
}

/** @internal */
export interface AvailableCommand {
  readonly name: string
  readonly description: string
  readonly input?: { readonly hint: string }
}

/** @internal */
export interface SessionMode {
  readonly id: string
  readonly name: string
  readonly description?: string
}

/** @internal */
export interface SessionModeState {
  readonly currentModeId: string
  readonly availableModes: ReadonlyArray<SessionMode>
}

/** @internal */
export interface SessionConfigOption {
  readonly type: "select"
  readonly id: string
  readonly name: string
  readonly description?: string
  readonly category?: string
  readonly currentValue: string
  readonly options: ReadonlyArray<{ readonly value: string; readonly name: string; readonly description?: string }>
}

/** A `session/update`. @internal */
export type SessionUpdate =
  | { readonly sessionUpdate: "user_message_chunk"; readonly content: OutContent }
  | { readonly sessionUpdate: "agent_message_chunk"; readonly content: OutContent }
  | { readonly sessionUpdate: "agent_thought_chunk"; readonly content: OutContent }
  | ({ readonly sessionUpdate: "tool_call"; readonly title: string } & ToolCallFields)
  | ({ readonly sessionUpdate: "tool_call_update" } & ToolCallFields)
  | { readonly sessionUpdate: "plan"; readonly entries: ReadonlyArray<PlanEntry> }
  | { readonly sessionUpdate: "available_commands_update"; readonly availableCommands: ReadonlyArray<AvailableCommand> }
  | { readonly sessionUpdate: "current_mode_update"; readonly currentModeId: string }
  | { readonly sessionUpdate: "config_option_update"; readonly configOptions: ReadonlyArray<SessionConfigOption> }
  | { readonly sessionUpdate: "usage_update"; readonly used: number; readonly size: number }

/** @internal */
export interface PermissionOption {
  readonly optionId: string
  readonly name: string
  readonly kind: "allow_once" | "allow_always" | "reject_once" | "reject_always"
}
