/**
 * In-process MCP tools written in Effect: define tools with an Effect `Schema` for their input and an Effect handler,
 * group them in a server with {@link createSdkMcpServer}, and pass the result in `options.mcpServers`. The CLI calls
 * them over the control protocol (`mcp_message`); they run in your process, with your services.
 *
 * - The input schema is converted to JSON Schema with `JSONSchema.make` (definitions are inlined, so the root is the
 *   object schema MCP expects) and the model's arguments are decoded with it: invalid input becomes an `isError`
 *   result that names the problem, for the model to fix.
 * - A handler that fails, dies or runs past its timeout (60 seconds unless set otherwise) becomes an `isError`
 *   result too; the session goes on.
 * - The services the handlers need are captured when the server is built (`createSdkMcpServer` is an Effect).
 * - Each session gets its own connection to the server (an `@modelcontextprotocol/sdk` `Server` over an in-memory
 *   transport pair), closed with the session; any number of sessions can use one server at the same time.
 *
 * Tools of a server named `calc` are named `mcp__calc__<tool>` for the model and in `allowedTools`. Like every tool,
 * they go through permission checks: allow them with `allowedTools`, a `Permissions` service or a permission mode.
 *
 * @example
 * ```ts
 * import { Effect, Schema, Stream } from "effect"
 * import { ClaudeAgent, SdkMcp } from "effect-claude-agent"
 *
 * const add = SdkMcp.tool(
 *   "add",
 *   "Adds two numbers",
 *   Schema.Struct({ a: Schema.Number, b: Schema.Number.annotations({ description: "the second number" }) }),
 *   ({ a, b }) => Effect.succeed(`${a + b}`)
 * )
 *
 * const program = Effect.gen(function*() {
 *   const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
 *   return yield* ClaudeAgent.query("What is 1 + 2? Use the add tool.", {
 *     mcpServers: { calc },
 *     allowedTools: ["mcp__calc__add"]
 *   }).pipe(Stream.runCollect)
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as AgentError from "./AgentError.js"
import * as internal from "./internal/mcp/sdkMcp.js"

/**
 * An MCP server the CLI starts itself (stdio).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpStdioServerConfig {
  readonly type?: "stdio" | undefined
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Per-server timeout in milliseconds (≥ 1000). */
  readonly timeout?: number | undefined
  readonly alwaysLoad?: boolean | undefined
}

/**
 * An MCP server the CLI connects to over HTTP (Streamable HTTP) or SSE.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpRemoteServerConfig {
  readonly type: "http" | "sse"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly timeout?: number | undefined
  readonly alwaysLoad?: boolean | undefined
  readonly tools?: ReadonlyArray<Readonly<Record<string, unknown>>> | undefined
}

/**
 * An in-process MCP server served by this SDK over the control protocol (see `SdkMcp.createSdkMcpServer`).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpSdkServerConfig {
  readonly type: "sdk"
  readonly name: string
  /** The server; built by `createSdkMcpServer`. */
  readonly instance: SdkMcpServerInstance
  /** Per-call timeout in milliseconds. */
  readonly timeout?: number | undefined
}

/**
 * What the SDK needs from an in-process MCP server: connect it to a transport (one per session) and close it.
 *
 * `SdkMcp.createSdkMcpServer` builds one that serves any number of sessions at once. An `McpServer` (or low-level
 * `Server`) of `@modelcontextprotocol/sdk` fits as well, but it serves one session at a time: while one session is
 * open, a second one cannot connect it and reports the server as not connected.
 *
 * Declared with method syntax on purpose: the MCP SDK types the parameter with its own `Transport`, which this
 * package does not import, and method parameters are compared bivariantly.
 *
 * @since 0.1.0
 * @category models
 */
export interface SdkMcpServerInstance {
  /** Connects the server to one session's transport. */
  connect(transport: unknown): Promise<void>
  /** Closes the server and every transport it is connected to. */
  close(): Promise<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export type McpServerConfig = McpStdioServerConfig | McpRemoteServerConfig | McpSdkServerConfig

// -------------------------------------------------------------------------------------------------
// type ids
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export const ServerTypeId: unique symbol = internal.ServerTypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type ServerTypeId = typeof ServerTypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export const ToolTypeId: unique symbol = internal.ToolTypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type ToolTypeId = typeof ToolTypeId

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * A server could not be built: a tool's input schema has no JSON Schema (or does not describe an object), a tool
 * name is not valid, or two tools share a name. `reason` tells which.
 *
 * @since 0.1.0
 * @category errors
 */
export const SdkMcpError: typeof internal.SdkMcpError = internal.SdkMcpError

/**
 * @since 0.1.0
 * @category errors
 */
export type SdkMcpError = internal.SdkMcpError

/**
 * The CLI did not report an in-process server as `connected` at the start of a turn (`system/init` `mcp_servers`):
 * `status` is what it reported (`"failed"`, `"pending"`, `"needs-auth"`, …), or `"missing"` when it did not list the
 * server at all. Its tools are then not available to the model. What a session does about it is the server's
 * `onConnectFailure`.
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

// -------------------------------------------------------------------------------------------------
// results
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category results
 */
export interface TextContent {
  readonly type: "text"
  readonly text: string
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Base64 image data.
 *
 * @since 0.1.0
 * @category results
 */
export interface ImageContent {
  readonly type: "image"
  readonly data: string
  readonly mimeType: string
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Base64 audio data.
 *
 * @since 0.1.0
 * @category results
 */
export interface AudioContent {
  readonly type: "audio"
  readonly data: string
  readonly mimeType: string
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * A link to a resource the client may read.
 *
 * @since 0.1.0
 * @category results
 */
export interface ResourceLink {
  readonly type: "resource_link"
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * A resource embedded in the result: text, or base64 `blob`.
 *
 * @since 0.1.0
 * @category results
 */
export interface EmbeddedResource {
  readonly type: "resource"
  readonly resource:
    | { readonly uri: string; readonly mimeType?: string | undefined; readonly text: string }
    | { readonly uri: string; readonly mimeType?: string | undefined; readonly blob: string }
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * One content block of a tool result (MCP `ContentBlock`).
 *
 * @since 0.1.0
 * @category results
 */
export type Content = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

/**
 * A tool result as MCP defines it (`CallToolResult`).
 *
 * @since 0.1.0
 * @category results
 */
export interface CallToolResult {
  readonly content: ReadonlyArray<Content>
  /** `true` tells the model the call failed (the content says why). */
  readonly isError?: boolean | undefined
  /** Structured output, for clients that read it (the CLI shows the model `content`). */
  readonly structuredContent?: Readonly<Record<string, unknown>> | undefined
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * What a handler returns: a string (one text block) or a full {@link CallToolResult}.
 *
 * @since 0.1.0
 * @category results
 */
export type ToolResult = string | CallToolResult

/**
 * A text content block.
 *
 * @since 0.1.0
 * @category results
 */
export const text: (text: string) => TextContent = internal.text

/**
 * An image content block (base64 `data`).
 *
 * @since 0.1.0
 * @category results
 */
export const image: (data: string, mimeType: string) => ImageContent = internal.image

/**
 * An `isError` result with one text block: what a handler returns to tell the model its call failed without
 * failing the effect.
 *
 * @since 0.1.0
 * @category results
 */
export const errorResult: (text: string) => CallToolResult = internal.errorResult

// -------------------------------------------------------------------------------------------------
// tools
// -------------------------------------------------------------------------------------------------

/**
 * A JSON Schema object.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonSchema = Readonly<Record<string, unknown>>

/**
 * MCP tool annotations: hints for clients (Claude Code uses `readOnlyHint` and `destructiveHint` in its permission
 * decisions).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolAnnotations {
  readonly title?: string | undefined
  readonly readOnlyHint?: boolean | undefined
  readonly destructiveHint?: boolean | undefined
  readonly idempotentHint?: boolean | undefined
  readonly openWorldHint?: boolean | undefined
}

/**
 * Options of {@link tool}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolOptions {
  readonly title?: string | undefined
  readonly annotations?: ToolAnnotations | undefined
  /**
   * How long the handler may run; after that the call answers an `isError` result ("timed out") and the handler is
   * interrupted. `Duration.infinity` waits forever. Defaults to the server's `toolTimeout` (60 seconds).
   *
   * The CLI has its own deadline only when `MCP_TOOL_TIMEOUT` is set in its environment (or the server config has a
   * `timeout`); when it gives up first it cancels the call, which interrupts the handler too.
   */
  readonly timeout?: Duration.DurationInput | undefined
  /** A hint for Claude Code's tool search (`_meta["anthropic/searchHint"]`). */
  readonly searchHint?: string | undefined
  /** Always load the tool into the model's context, never behind tool search (`_meta["anthropic/alwaysLoad"]`). */
  readonly alwaysLoad?: boolean | undefined
  /** Extra `_meta` of the tool in `tools/list`. */
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/**
 * What a handler gets besides its input.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolExtra {
  /** The model's `tool_use` id (`_meta["claudecode/toolUseId"]`), when the CLI sends it. */
  readonly toolUseId: string | undefined
  /** The JSON-RPC id of the call. */
  readonly requestId: string | number
  /** Aborted when the call is cancelled (the handler's fiber is interrupted as well). */
  readonly signal: AbortSignal
  /** The `_meta` of the call. */
  readonly meta: Readonly<Record<string, unknown>>
  /** Reports progress to the CLI (`notifications/progress`); does nothing when the call has no progress token. */
  readonly progress: (
    progress: number,
    options?: { readonly total?: number | undefined; readonly message?: string | undefined }
  ) => Effect.Effect<void>
}

/**
 * A tool made by {@link tool}: its definition and `call`, which decodes the arguments, runs the handler and turns
 * every outcome into a {@link CallToolResult} (without the timeout; see {@link callTool}). `R` is what the handler
 * (and the schema) need.
 *
 * @since 0.1.0
 * @category models
 */
export interface SdkMcpTool<out R = never> {
  readonly [ToolTypeId]: ToolTypeId
  readonly name: string
  readonly description: string
  readonly inputSchema: Schema.Schema.Any
  /** The JSON Schema the tool is listed with, when it is not derived from `inputSchema` (see {@link toolFromJsonSchema}). */
  readonly jsonSchema?: JsonSchema | undefined
  readonly options: ToolOptions
  /** Runs the tool on arguments the CLI sent: validates them against `inputSchema`, then calls the handler. */
  readonly call: (args: unknown, extra: ToolExtra) => Effect.Effect<CallToolResult, never, R>
}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace SdkMcpTool {
  /**
   * What a tool (or a union of tools) needs.
   *
   * @since 0.1.0
   * @category models
   */
  export type Context<T> = T extends SdkMcpTool<infer R> ? R : never
}

/**
 * Defines a tool: `inputSchema` is an Effect Schema of an object (its encoded side is what the model sends), and
 * `handler` gets the decoded input.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tool: <A, I, RS, E, R>(
  name: string,
  description: string,
  inputSchema: Schema.Schema<A, I, RS>,
  handler: (input: A, extra: ToolExtra) => Effect.Effect<ToolResult, E, R>,
  options?: ToolOptions
) => SdkMcpTool<R | RS> = internal.tool

/**
 * Options of {@link callTool}.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolOptions {
  /** Overrides the tool's timeout. Defaults to the tool's, else 60 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The `tool_use` id the call answers, passed to the handler in `extra`. */
  readonly toolUseId?: string | undefined
  /** The MCP request id, passed to the handler in `extra`. */
  readonly requestId?: string | number | undefined
  /** The abort signal the handler sees in `extra` (default: one that never aborts). */
  readonly signal?: AbortSignal | undefined
  /** The request's `_meta`, passed to the handler in `extra`. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  /** Receives the handler's progress reports (default: dropped). */
  readonly progress?: ToolExtra["progress"] | undefined
}

/**
 * Calls a tool directly, as a server does (decoding, error results, timeout): for tests and for reusing a tool
 * outside MCP.
 *
 * @since 0.1.0
 * @category combinators
 */
export const callTool: <R>(
  tool: SdkMcpTool<R>,
  args: unknown,
  options?: CallToolOptions
) => Effect.Effect<CallToolResult, never, R> = internal.callTool

/**
 * The JSON Schema a tool's input schema is listed with: `JSONSchema.make` with `$ref`s inlined (recursive
 * definitions stay under `$defs`), so that the root is an object schema. Fails when the schema has no JSON Schema
 * or does not describe an object.
 *
 * @since 0.1.0
 * @category combinators
 */
export const toJsonSchema: (schema: Schema.Schema.Any) => Effect.Effect<JsonSchema, SdkMcpError> = (schema) =>
  internal.toJsonSchema(schema)

/**
 * @since 0.1.0
 * @category guards
 */
export const isSdkMcpTool: (u: unknown) => u is SdkMcpTool<unknown> = internal.isSdkMcpTool

// -------------------------------------------------------------------------------------------------
// servers
// -------------------------------------------------------------------------------------------------

/**
 * How a tool appears in `tools/list`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolListing {
  readonly name: string
  readonly title?: string
  readonly description: string
  readonly inputSchema: JsonSchema
  readonly annotations?: ToolAnnotations
  readonly _meta?: Readonly<Record<string, unknown>>
}

/**
 * The `instance` of a server made by {@link createSdkMcpServer}. Every `connect` (one per session) gets a fresh
 * MCP `Server`, so any number of sessions can use it at once; `close` closes every connection made by `connect`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SdkMcpServer extends SdkMcpServerInstance {
  readonly [ServerTypeId]: ServerTypeId
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<ToolListing>
  /**
   * Serves one connection on an MCP transport (e.g. one end of an `InMemoryTransport` pair) until the scope
   * closes; closing it interrupts the tool calls in flight and waits for them. What sessions use.
   */
  readonly serve: (transport: unknown) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isSdkMcpServer: (u: unknown) => u is SdkMcpServer = internal.isSdkMcpServer

/**
 * Options of {@link createSdkMcpServer} (the official SDK's, plus this SDK's own).
 *
 * @since 0.1.0
 * @category models
 */
export interface CreateSdkMcpServerOptions<Tools extends ReadonlyArray<SdkMcpTool<unknown>>> {
  /** The server's name (`serverInfo.name`). The key in `mcpServers` is what tool names use (`mcp__<key>__<tool>`). */
  readonly name: string
  /** Defaults to `"1.0.0"`. */
  readonly version?: string | undefined
  /** Instructions for the model, sent in the MCP `initialize` result. */
  readonly instructions?: string | undefined
  readonly tools?: Tools | undefined
  /** Always load every tool of the server (`_meta["anthropic/alwaysLoad"]`). */
  readonly alwaysLoad?: boolean | undefined
  /**
   * The CLI's own deadline for each call of this server, in milliseconds (≥ 1000; sent in
   * `initialize.sdkMcpServerConfigs`, as the official SDK does). Leave `undefined` for none (the CLI waits as long
   * as the handler runs, unless `MCP_TOOL_TIMEOUT` is set in its environment).
   */
  readonly timeout?: number | undefined
  /**
   * Default timeout of the handlers (see {@link ToolOptions.timeout}). Defaults to 60 seconds, the MCP SDK's default
   * request timeout: long enough for real work, short enough that a stuck handler does not stall the agent.
   */
  readonly toolTimeout?: Duration.DurationInput | undefined
  /**
   * What a session does when the CLI does not report this server as connected ({@link McpServerFailed}): `"fail"`
   * (the default) makes it a session failure; `"warn"` logs it as a warning (the `McpServerFailed` value is in the
   * log message) and the session goes on without the server's tools.
   */
  readonly onConnectFailure?: "fail" | "warn" | undefined
  /**
   * Send the server's handshake results with `initialize` (`sdkMcpServerManifests`, as the official SDK 0.3.x does)
   * so that the CLI skips the handshake round trips. `false` lets the CLI run the handshake over `mcp_message`.
   * Defaults to `true`.
   */
  readonly manifest?: boolean | undefined
}

/**
 * Defines a tool from a JSON Schema and a validation function (for schemas that are not Effect Schemas, e.g. zod).
 * `validate` returns the decoded input, or a failure message naming the problem (sent back as an `isError` result).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolFromJsonSchema: <A, E, R>(
  name: string,
  description: string,
  jsonSchema: JsonSchema,
  validate: (args: unknown) => Either.Either<A, string>,
  handler: (input: A, extra: ToolExtra) => Effect.Effect<ToolResult, E, R>,
  options?: ToolOptions
) => SdkMcpTool<R> = internal.toolFromJsonSchema

/**
 * Builds an in-process MCP server from tools, as the `mcpServers` entry `{ type: "sdk", name, instance }`. It
 * captures the services the tools need (so it is an Effect), and fails with {@link SdkMcpError} when a tool cannot
 * be listed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createSdkMcpServer: <const Tools extends ReadonlyArray<SdkMcpTool<unknown>> = readonly []>(
  options: CreateSdkMcpServerOptions<Tools>
) => Effect.Effect<McpSdkServerConfig, SdkMcpError, SdkMcpTool.Context<Tools[number]>> = internal.createSdkMcpServer

/**
 * The default handler timeout: 60 seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TOOL_TIMEOUT: Duration.Duration = internal.DEFAULT_TOOL_TIMEOUT
