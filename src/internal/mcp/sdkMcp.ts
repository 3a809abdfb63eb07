/** @internal */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import { ControlError, McpServerFailed } from "../../AgentError.js"
import { fromEffect, type Handler } from "../protocol/handler.js"
import type { Owned as ControlProtocol } from "../protocol/controlProtocol.js"
import { handlerFailure } from "../../ControlProtocol.js"
import * as Message from "../../Message.js"
import type * as Api from "../../SdkMcp.js"
import type { McpSdkServerConfig, McpServerConfig, SdkMcpServerInstance } from "../../SdkMcp.js"
import type { Contribution } from "../protocol/contribution.js"

// -------------------------------------------------------------------------------------------------
// constants
// -------------------------------------------------------------------------------------------------

/** @internal */
export const DEFAULT_TOOL_TIMEOUT: Duration.Duration = Duration.seconds(60)

/** How long a session waits for its servers' handshake results before sending `initialize` without them. */
const MANIFEST_TIMEOUT = Duration.seconds(1)

/** The MCP protocol version the CLI 2.1.x requests; a manifest with another version is ignored by the CLI. */
const PROTOCOL_VERSION = "2025-11-25"

/** What the CLI's MCP client sends as `clientInfo` (the official SDK uses the same for its manifests). */
const CLIENT_INFO = {
  name: "claude-code",
  title: "Claude Code",
  description: "Anthropic's agentic coding tool",
  websiteUrl: "https://claude.com/claude-code"
}

/** Prefix of the JSON-RPC ids of our own handshake requests (the official SDK's prefix). */
const MANIFEST_ID_PREFIX = "sdk-manifest-capture:"

/** The answer to an `mcp_message` that carries a notification (or a response), as the official SDK sends it. */
const ACK = { jsonrpc: "2.0", result: {}, id: 0 }

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

const SERVER_MODULE = "@modelcontextprotocol/sdk/server/index.js"
const IN_MEMORY_MODULE = "@modelcontextprotocol/sdk/inMemory.js"
const TYPES_MODULE = "@modelcontextprotocol/sdk/types.js"

/** JSON-RPC error codes (the MCP SDK's `ErrorCode`). @internal */
export const INVALID_PARAMS = -32602
/** @internal */
export const INTERNAL_ERROR = -32603
/** @internal */
export const CONNECTION_CLOSED = -32000

// -------------------------------------------------------------------------------------------------
// type ids and errors
// -------------------------------------------------------------------------------------------------

/** @internal */
export const TypeId: Api.TypeId = Symbol.for("effect-claude-agent/SdkMcp") as Api.TypeId

/** @internal */
export const ServerTypeId: Api.ServerTypeId = Symbol.for("effect-claude-agent/SdkMcp/SdkMcpServer") as Api.ServerTypeId

/** @internal */
export const ToolTypeId: Api.ToolTypeId = Symbol.for("effect-claude-agent/SdkMcp/SdkMcpTool") as Api.ToolTypeId

/** @internal */
export class SdkMcpError extends Schema.TaggedError<SdkMcpError>("effect-claude-agent/SdkMcpError")("SdkMcpError", {
  reason: Schema.Literal("InvalidInputSchema", "InvalidToolName", "DuplicateToolName"),
  server: Schema.String,
  tool: Schema.optional(Schema.String),
  description: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  readonly [TypeId]: Api.TypeId = TypeId

  override get message(): string {
    const server = `SDK MCP server "${this.server}"`
    const where = this.tool === undefined ? server : `tool "${this.tool}" of ${server}`
    return `${this.reason} in ${where}: ${this.description}`
  }
}

/** The error of a server the CLI did not report as connected, defined with the other session errors. @internal */
export { McpServerFailed }

// -------------------------------------------------------------------------------------------------
// the MCP SDK, loaded at run time
// -------------------------------------------------------------------------------------------------

// The MCP SDK's type declarations (and zod's, which they import) do not compile under this package's strict
// `skipLibCheck: false` settings, so the SDK is imported by a computed specifier (no type resolution) and used
// through the small structural interfaces below.

/** @internal */
export type JsonRpcId = string | number

/** @internal */
export type JsonObject = Readonly<Record<string, unknown>>

/** @internal */
export interface McpTransport {
  onmessage?: ((message: unknown, extra?: unknown) => void) | undefined
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  start(): Promise<void>
  send(message: unknown): Promise<void>
  close(): Promise<void>
}

interface RequestExtra {
  readonly signal: AbortSignal
  readonly requestId: JsonRpcId
  readonly sendNotification: (notification: { readonly method: string; readonly params?: object }) => Promise<void>
}

interface LowLevelServer {
  connect(transport: McpTransport): Promise<void>
  close(): Promise<void>
  setRequestHandler(schema: unknown, handler: (request: JsonObject, extra: RequestExtra) => unknown): void
}

interface McpSdk {
  readonly Server: new(
    info: { readonly name: string; readonly version: string },
    options: { readonly capabilities: object; readonly instructions?: string }
  ) => LowLevelServer
  readonly createLinkedPair: () => readonly [McpTransport, McpTransport]
  readonly ListToolsRequestSchema: unknown
  readonly CallToolRequestSchema: unknown
}

/** @internal */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

const isServerClass = (u: unknown): u is McpSdk["Server"] => typeof u === "function"

const isLinkedPair = (u: unknown): u is readonly [McpTransport, McpTransport] =>
  Array.isArray(u) && u.length === 2 && u.every(isTransport)

/** @internal */
export const isTransport = (u: unknown): u is McpTransport =>
  isObject(u) && typeof u["send"] === "function" && typeof u["start"] === "function" &&
  typeof u["close"] === "function"

/** Imports a module of the MCP SDK without its typings (see above). @internal */
export const importModule = (specifier: string): Promise<unknown> => import(specifier)

// Node keeps imported modules: importing again per server is a cache lookup, not a load
const loadSdk: Effect.Effect<McpSdk> = Effect.promise(() => {
  return Promise.all([importModule(SERVER_MODULE), importModule(IN_MEMORY_MODULE), importModule(TYPES_MODULE)])
    .then(([server, memory, types]) => {
      const Server = isObject(server) ? server["Server"] : undefined
      const InMemoryTransport = isObject(memory) ? memory["InMemoryTransport"] : undefined
      if (!isServerClass(Server) || !(typeof InMemoryTransport === "function") || !isObject(types)) {
        throw new Error("@modelcontextprotocol/sdk does not have the expected exports (Server, InMemoryTransport)")
      }
      const pair: unknown = Reflect.get(InMemoryTransport, "createLinkedPair")
      return {
        Server,
        createLinkedPair: () => {
          const transports: unknown = typeof pair === "function" ? pair.call(InMemoryTransport) : undefined
          if (!isLinkedPair(transports)) throw new Error("InMemoryTransport.createLinkedPair returned no transports")
          return transports
        },
        ListToolsRequestSchema: types["ListToolsRequestSchema"],
        CallToolRequestSchema: types["CallToolRequestSchema"]
      }
    })
})

// -------------------------------------------------------------------------------------------------
// instances served in Effect
// -------------------------------------------------------------------------------------------------

/** @internal */
export const ServableTypeId: unique symbol = Symbol.for("effect-claude-agent/SdkMcp/Servable")

/**
 * How sessions serve an instance that this SDK implements in Effect (an SDK MCP server, an MCP proxy), instead of
 * through the Promise `connect` of {@link SdkMcpServerInstance}.
 *
 * @internal
 */
export interface Serving {
  /** What a session does when the CLI does not report the server as connected. */
  readonly onConnectFailure: "fail" | "warn"
  /** Whether sessions send the server's handshake results with `initialize`. */
  readonly manifest: boolean
  /** Serves one session on an MCP transport (the server end of an in-memory pair) until the scope closes. */
  readonly serve: (transport: McpTransport) => Effect.Effect<void, never, Scope.Scope>
  /**
   * What the server knows about its own state now, when the CLI's cached status may be stale (a proxy whose upstream
   * server is away): `undefined` while it is serving normally.
   */
  readonly liveStatus?: Effect.Effect<LiveStatus | undefined> | undefined
}

/** A status that overrides the CLI's `connected` in `mcpServerStatus` (see {@link Serving.liveStatus}). @internal */
export interface LiveStatus {
  readonly status: "pending" | "failed"
  /** Why the server is not usable now. */
  readonly error: string
}

/** @internal */
export interface Servable {
  readonly [ServableTypeId]: Serving
}

/** @internal */
export const isServable = (u: unknown): u is Servable => Predicate.hasProperty(u, ServableTypeId)

/**
 * The Promise API (`connect` / `close` of {@link SdkMcpServerInstance}) of an instance served in Effect, for callers
 * outside this SDK: every `connect` serves the transport in its own scope, closed when the transport closes or by
 * `close`.
 *
 * @internal
 */
export class PromiseConnections {
  private readonly scopes = new Set<Scope.CloseableScope>()

  constructor(
    private readonly runtime: Runtime.Runtime<never>,
    private readonly serve: (transport: McpTransport) => Effect.Effect<void, never, Scope.Scope>
  ) {}

  connect(transport: unknown): Promise<void> {
    if (!isTransport(transport)) return Promise.reject(new TypeError("not an MCP transport"))
    const scope = Effect.runSync(Scope.make())
    this.scopes.add(scope)
    const release = () => {
      this.scopes.delete(scope)
      return Runtime.runPromise(this.runtime)(Scope.close(scope, Exit.void))
    }
    const previous = transport.onclose
    transport.onclose = () => {
      previous?.()
      void release()
    }
    return Runtime.runPromise(this.runtime)(Scope.extend(this.serve(transport), scope)).catch((error) =>
      release().then(() => Promise.reject(error))
    )
  }

  close(): Promise<void> {
    const scopes = [...this.scopes]
    this.scopes.clear()
    return Runtime.runPromise(this.runtime)(
      Effect.forEach(scopes, (scope) => Scope.close(scope, Exit.void), { discard: true })
    )
  }
}

// -------------------------------------------------------------------------------------------------
// JSON Schema
// -------------------------------------------------------------------------------------------------

const DATA_KEYWORDS: ReadonlySet<string> = new Set(["enum", "const", "default", "examples"])

const refName = (ref: string): string | undefined =>
  ref.startsWith("#/$defs/") ? ref.slice(8).replace(/~1/g, "/").replace(/~0/g, "~") : undefined

/**
 * Inlines `$ref`s into `$defs` (except recursive ones, whose definitions stay under `$defs`) so that the root is the
 * object schema itself, as MCP and the Messages API expect.
 */
const inlineRefs = (root: JsonObject): JsonObject => {
  const defs = isObject(root["$defs"]) ? root["$defs"] : {}
  const kept = new Set<string>()
  const visit = (node: unknown, stack: ReadonlyArray<string>): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, stack))
    if (!isObject(node)) return node
    const ref = typeof node["$ref"] === "string" ? refName(node["$ref"]) : undefined
    if (ref !== undefined && isObject(defs[ref])) {
      if (stack.includes(ref)) {
        kept.add(ref)
        return node
      }
      const { $ref: _, ...siblings } = node
      const target = visit(defs[ref], [...stack, ref])
      return isObject(target) ? { ...target, ...mapValues(siblings, stack) } : target
    }
    return mapValues(node, stack)
  }
  const mapValues = (node: JsonObject, stack: ReadonlyArray<string>): JsonObject => {
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) out[key] = DATA_KEYWORDS.has(key) ? value : visit(value, stack)
    return out
  }
  const { $defs: _, ...rest } = root
  const inlined = visit(rest, [])
  if (!isObject(inlined) || kept.size === 0) return isObject(inlined) ? inlined : rest
  // the definitions still referenced (recursive ones and what they reach), each inlined in turn
  const keptDefs: Record<string, unknown> = {}
  const pending = [...kept]
  while (pending.length > 0) {
    const name = pending.pop()!
    if (name in keptDefs) continue
    keptDefs[name] = visit(defs[name], [name])
    for (const k of kept) if (!(k in keptDefs)) pending.push(k)
  }
  return { ...inlined, $defs: keptDefs }
}

const isEmptyStruct = (ast: AST.AST): boolean => {
  const encoded = AST.encodedAST(ast)
  return AST.isTypeLiteral(encoded) && encoded.propertySignatures.length === 0 && encoded.indexSignatures.length === 0
}

/** @internal */
export const toJsonSchema = (
  schema: Schema.Schema.Any,
  where: { readonly server: string; readonly tool?: string | undefined } = { server: "" }
): Effect.Effect<Api.JsonSchema, SdkMcpError> =>
  Effect.suspend(() => {
    const fail = (description: string, cause?: unknown) =>
      new SdkMcpError({
        reason: "InvalidInputSchema",
        server: where.server,
        ...(where.tool !== undefined ? { tool: where.tool } : {}),
        description,
        ...(cause !== undefined ? { cause } : {})
      })
    if (isEmptyStruct(schema.ast)) {
      return Effect.succeed({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: {} })
    }
    return Effect.try({
      try: () => {
        const json: unknown = JSONSchema.make(schema)
        return isObject(json) ? inlineRefs(json) : {}
      },
      catch: (cause) => fail(cause instanceof Error ? cause.message : String(cause), cause)
    }).pipe(
      Effect.filterOrFail(
        (json) => json["type"] === "object",
        (json) => fail(`the input schema must describe an object, got ${JSON.stringify(json).slice(0, 200)}`)
      )
    )
  })

// -------------------------------------------------------------------------------------------------
// tools
// -------------------------------------------------------------------------------------------------

/** @internal */
export const errorResult = (text: string): Api.CallToolResult => ({ content: [{ type: "text", text }], isError: true })

/** @internal */
export const text = (text: string): Api.TextContent => ({ type: "text", text })

/** @internal */
export const image = (data: string, mimeType: string): Api.ImageContent => ({ type: "image", data, mimeType })

const stripUndefined = (o: object): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v
  return out
}

const normalizeResult = (name: string, result: Api.ToolResult): Api.CallToolResult => {
  if (typeof result === "string") return { content: [text(result)] }
  if (typeof result !== "object" || result === null || !Array.isArray(result.content)) {
    return errorResult(`Tool ${name} returned an invalid result: ${String(JSON.stringify(result)).slice(0, 200)}`)
  }
  return {
    content: result.content,
    ...(result.isError !== undefined ? { isError: result.isError } : {}),
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    ...(result._meta !== undefined ? { _meta: result._meta } : {})
  }
}

/** A readable one-line description of an error (or anything thrown). @internal */
export const describe = (u: unknown): string => {
  if (typeof u === "string") return u
  const tag = Predicate.hasProperty(u, "_tag") && typeof u._tag === "string" ? u._tag : undefined
  const message = Predicate.hasProperty(u, "message") && typeof u.message === "string" && u.message !== ""
    ? u.message
    : undefined
  if (message !== undefined) return tag === undefined || message.startsWith(tag) ? message : `${tag}: ${message}`
  if (tag !== undefined) return tag
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

const causeResult = (name: string, cause: Cause.Cause<unknown>): Api.CallToolResult => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") return errorResult(describe(failure.value))
  return errorResult(`Tool ${name} failed unexpectedly: ${describe(Cause.squash(cause))}`)
}

/** @internal */
export const tool = <A, I, RS, E, R>(
  name: string,
  description: string,
  inputSchema: Schema.Schema<A, I, RS>,
  handler: (input: A, extra: Api.ToolExtra) => Effect.Effect<Api.ToolResult, E, R>,
  options: Api.ToolOptions = {}
): Api.SdkMcpTool<R | RS> => {
  const decode = Schema.decodeUnknown(inputSchema, { errors: "all", onExcessProperty: "ignore" })
  return {
    [ToolTypeId]: ToolTypeId,
    name,
    description,
    inputSchema,
    options,
    call: (args, extra) =>
      decode(args ?? {}).pipe(
        Effect.matchEffect({
          onFailure: (error) =>
            Effect.succeed(
              errorResult(`Invalid input for tool ${name}:\n${ParseResult.TreeFormatter.formatErrorSync(error)}`)
            ),
          onSuccess: (input) =>
            Effect.suspend(() => handler(input, extra)).pipe(
              Effect.map((result) => normalizeResult(name, result)),
              Effect.catchAllCause((cause) =>
                Cause.isInterruptedOnly(cause) ? Effect.interrupt : Effect.succeed(causeResult(name, cause))
              )
            )
        })
      )
  }
}

/** @internal */
export const toolFromJsonSchema = <A, E, R>(
  name: string,
  description: string,
  jsonSchema: Api.JsonSchema,
  validate: (args: unknown) => Either.Either<A, string>,
  handler: (input: A, extra: Api.ToolExtra) => Effect.Effect<Api.ToolResult, E, R>,
  options: Api.ToolOptions = {}
): Api.SdkMcpTool<R> => ({
  [ToolTypeId]: ToolTypeId,
  name,
  description,
  inputSchema: Schema.Unknown,
  jsonSchema,
  options,
  call: (args, extra) => {
    const input = validate(args ?? {})
    if (Either.isLeft(input)) return Effect.succeed(errorResult(`Invalid input for tool ${name}:\n${input.left}`))
    return Effect.suspend(() => handler(input.right, extra)).pipe(
      Effect.map((result) => normalizeResult(name, result)),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.interrupt : Effect.succeed(causeResult(name, cause))
      )
    )
  }
})

/** @internal */
export const isSdkMcpTool = (u: unknown): u is Api.SdkMcpTool<unknown> => Predicate.hasProperty(u, ToolTypeId)

const noProgress = () => Effect.void

/** @internal */
export const callTool = <R>(
  tool: Api.SdkMcpTool<R>,
  args: unknown,
  options: Api.CallToolOptions = {}
): Effect.Effect<Api.CallToolResult, never, R> => {
  const timeout = Duration.decode(options.timeout ?? tool.options.timeout ?? DEFAULT_TOOL_TIMEOUT)
  const extra: Api.ToolExtra = {
    toolUseId: options.toolUseId,
    requestId: options.requestId ?? 0,
    signal: options.signal ?? new AbortController().signal,
    meta: options.meta ?? {},
    progress: options.progress ?? noProgress
  }
  const run = tool.call(args, extra)
  const bounded = Duration.isFinite(timeout)
    ? Effect.disconnect(run).pipe(
      Effect.timeoutTo({
        duration: timeout,
        onTimeout: () => errorResult(`Tool ${tool.name} timed out after ${Duration.format(timeout)}`),
        onSuccess: (result) => result
      })
    )
    : run
  return bounded.pipe(Effect.withSpan("SdkMcp.callTool", { attributes: { tool: tool.name } }))
}

// -------------------------------------------------------------------------------------------------
// servers
// -------------------------------------------------------------------------------------------------

interface PreparedTool {
  readonly tool: Api.SdkMcpTool<never>
  readonly listing: Api.ToolListing
}

/** @internal */
export class SdkMcpServer implements Api.SdkMcpServer, Servable {
  readonly [ServerTypeId]: Api.ServerTypeId = ServerTypeId
  readonly [ServableTypeId]: Serving
  readonly tools: ReadonlyArray<Api.ToolListing>
  private readonly byName: ReadonlyMap<string, PreparedTool>
  private readonly connections: PromiseConnections

  constructor(
    readonly name: string,
    readonly version: string,
    prepared: ReadonlyArray<PreparedTool>,
    readonly options: {
      readonly instructions?: string | undefined
      readonly toolTimeout?: Duration.DurationInput | undefined
      readonly onConnectFailure: "fail" | "warn"
      readonly manifest: boolean
    },
    runtime: Runtime.Runtime<never>
  ) {
    this.tools = prepared.map((p) => p.listing)
    this.byName = new Map(prepared.map((p) => [p.tool.name, p]))
    this.connections = new PromiseConnections(runtime, (transport) => this.serve(transport))
    this[ServableTypeId] = {
      onConnectFailure: options.onConnectFailure,
      manifest: options.manifest,
      serve: (transport) => this.serve(transport)
    }
  }

  serve(transport: unknown): Effect.Effect<void, never, Scope.Scope> {
    return Effect.gen(this, function*() {
      if (!isTransport(transport)) return yield* Effect.die(new TypeError("not an MCP transport"))
      const sdk = yield* loadSdk
      const run = yield* FiberSet.makeRuntime<never, Api.CallToolResult, never>()
      const server = new sdk.Server(
        { name: this.name, version: this.version },
        {
          capabilities: { tools: {} },
          ...(this.options.instructions !== undefined ? { instructions: this.options.instructions } : {})
        }
      )
      const tools = this.tools
      server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({ tools }))
      server.setRequestHandler(sdk.CallToolRequestSchema, (request, extra) => this.handleCall(run, request, extra))
      yield* Effect.acquireRelease(
        Effect.promise(() => server.connect(transport)),
        () => Effect.promise(() => server.close().catch(() => undefined))
      )
    })
  }

  private handleCall(
    run: (effect: Effect.Effect<Api.CallToolResult>) => Fiber.RuntimeFiber<Api.CallToolResult>,
    request: JsonObject,
    extra: RequestExtra
  ): Promise<Api.CallToolResult> {
    const params = isObject(request["params"]) ? request["params"] : {}
    const name = typeof params["name"] === "string" ? params["name"] : ""
    const prepared = this.byName.get(name)
    if (prepared === undefined) {
      return Promise.reject(Object.assign(new Error(`Tool ${name} not found`), { code: INVALID_PARAMS }))
    }
    const meta = isObject(params["_meta"]) ? params["_meta"] : {}
    const toolUseId = meta["claudecode/toolUseId"]
    const progressToken = meta["progressToken"]
    const progress: Api.ToolExtra["progress"] = (value, options) =>
      typeof progressToken === "string" || typeof progressToken === "number"
        ? Effect.promise(() =>
          extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: value, ...stripUndefined(options ?? {}) }
          }).catch(() => undefined)
        )
        : Effect.void
    const fiber = run(
      callTool(prepared.tool, params["arguments"], {
        timeout: prepared.tool.options.timeout ?? this.options.toolTimeout ?? DEFAULT_TOOL_TIMEOUT,
        toolUseId: typeof toolUseId === "string" ? toolUseId : undefined,
        requestId: extra.requestId,
        signal: extra.signal,
        meta,
        progress
      }).pipe(Effect.annotateSpans({ server: this.name }))
    )
    return new Promise((resolve, reject) => {
      const abort = () => fiber.unsafeInterruptAsFork(FiberId.none)
      if (extra.signal.aborted) abort()
      else extra.signal.addEventListener("abort", abort, { once: true })
      fiber.addObserver((exit) => {
        extra.signal.removeEventListener("abort", abort)
        if (Exit.isSuccess(exit)) resolve(exit.value)
        else reject(Object.assign(new Error("Tool call cancelled"), { code: CONNECTION_CLOSED }))
      })
    })
  }

  connect(transport: unknown): Promise<void> {
    return this.connections.connect(transport)
  }

  close(): Promise<void> {
    return this.connections.close()
  }
}

/** @internal */
export const isSdkMcpServer = (u: unknown): u is SdkMcpServer => Predicate.hasProperty(u, ServerTypeId)

/** @internal */
export const createSdkMcpServer = <const Tools extends ReadonlyArray<Api.SdkMcpTool<unknown>> = readonly []>(
  options: Api.CreateSdkMcpServerOptions<Tools>
): Effect.Effect<McpSdkServerConfig, SdkMcpError, Api.SdkMcpTool.Context<Tools[number]>> =>
  Effect.gen(function*() {
    // the services to run tools with, but not this span: a tool's spans belong to the call that runs it
    const runtime = Runtime.updateContext(
      yield* Effect.runtime<Api.SdkMcpTool.Context<Tools[number]>>(),
      Context.omit(Tracer.ParentSpan)
    )
    const tools: ReadonlyArray<Api.SdkMcpTool<unknown>> = options.tools ?? []
    const seen = new Set<string>()
    const prepared: Array<PreparedTool> = []
    for (const t of tools) {
      if (!TOOL_NAME.test(t.name)) {
        return yield* new SdkMcpError({
          reason: "InvalidToolName",
          server: options.name,
          tool: t.name,
          description: "tool names must match /^[A-Za-z0-9_-]{1,64}$/"
        })
      }
      if (seen.has(t.name)) {
        return yield* new SdkMcpError({
          reason: "DuplicateToolName",
          server: options.name,
          tool: t.name,
          description: "two tools have this name"
        })
      }
      seen.add(t.name)
      const inputSchema = t.jsonSchema ?? (yield* toJsonSchema(t.inputSchema, { server: options.name, tool: t.name }))
      const meta: Record<string, unknown> = { ...t.options._meta }
      if (t.options.searchHint !== undefined) meta["anthropic/searchHint"] = t.options.searchHint
      if (t.options.alwaysLoad === true || options.alwaysLoad === true) meta["anthropic/alwaysLoad"] = true
      const listing: Api.ToolListing = {
        name: t.name,
        ...(t.options.title !== undefined ? { title: t.options.title } : {}),
        description: t.description,
        inputSchema,
        ...(t.options.annotations !== undefined ? { annotations: t.options.annotations } : {}),
        ...(Object.keys(meta).length > 0 ? { _meta: meta } : {})
      }
      prepared.push({ tool: provideTool(t, runtime.context), listing })
    }
    const instance = new SdkMcpServer(
      options.name,
      options.version ?? "1.0.0",
      prepared,
      {
        instructions: options.instructions,
        toolTimeout: options.toolTimeout,
        onConnectFailure: options.onConnectFailure ?? "fail",
        manifest: options.manifest ?? true
      },
      runtime
    )
    const config: McpSdkServerConfig = {
      type: "sdk",
      name: options.name,
      instance,
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {})
    }
    return config
  }).pipe(Effect.withSpan("SdkMcp.createSdkMcpServer", { attributes: { server: options.name } }))

/**
 * Gives a tool the services captured when its server was built. The tools of one server each need part of the
 * captured context; once they sit in one array the compiler only sees `SdkMcpTool<unknown>`, hence the widening of
 * the context (sound: it holds the union of what every tool of the server needs).
 */
const provideTool = <R>(t: Api.SdkMcpTool<unknown>, context: Context.Context<R>): Api.SdkMcpTool<never> => ({
  ...t,
  call: (args, extra) => Effect.provide(t.call(args, extra), context as Context.Context<unknown>)
})

// -------------------------------------------------------------------------------------------------
// sessions
// -------------------------------------------------------------------------------------------------

/** @internal */
export const idOf = (m: JsonObject): JsonRpcId | undefined =>
  typeof m["id"] === "string" || typeof m["id"] === "number" ? m["id"] : undefined

/** @internal */
export const keyOf = (id: JsonRpcId): string => `${typeof id}:${id}`

/** @internal */
export const errorResponse = (id: JsonRpcId, code: number, message: string): JsonObject => ({
  jsonrpc: "2.0",
  id,
  error: { code, message }
})

/** One session's connection to one SDK MCP server. */
interface Connection {
  readonly name: string
  readonly onConnectFailure: "fail" | "warn"
  /** Sends a request to the server and waits for its response (interrupting it sends `notifications/cancelled`). */
  readonly call: (message: JsonObject, id: JsonRpcId) => Effect.Effect<JsonObject>
  /** Hands a notification or a response to the server. */
  readonly deliver: (message: JsonObject) => Effect.Effect<void>
  /** Answers a pending request with an error (the CLI cancelled it; its answer would be ignored anyway). */
  readonly settle: (id: JsonRpcId, reason: string) => Effect.Effect<void>
  readonly manifest: boolean
  /** The server's own view of its state (see {@link Serving.liveStatus}), if it has one. */
  readonly liveStatus: Effect.Effect<LiveStatus | undefined> | undefined
}

interface Outbound {
  readonly server: string
  readonly message: JsonObject
}

const connect = (
  name: string,
  config: McpSdkServerConfig,
  outbox: Queue.Queue<Outbound>
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sdk = yield* loadSdk
    const pending = new Map<string, Deferred.Deferred<JsonObject>>()
    // completed when the connection closes (the session ends, or `setMcpServers` removed the server)
    const closed = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(closed, undefined))
    const [client, server] = sdk.createLinkedPair()
    client.onmessage = (message) => {
      if (!isObject(message)) return
      const id = idOf(message)
      if (typeof message["method"] !== "string" && id !== undefined) {
        const deferred = pending.get(keyOf(id))
        if (deferred !== undefined) Deferred.unsafeDone(deferred, Exit.succeed(message))
        // else: the answer to a request that was cancelled or timed out; nobody waits for it
        return
      }
      Queue.unsafeOffer(outbox, { server: name, message })
    }
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close().catch(() => undefined)))
    yield* Effect.promise(() => client.start())

    const instance: SdkMcpServerInstance = config.instance
    const serving = isServable(instance) ? instance[ServableTypeId] : undefined
    const attach: Effect.Effect<void, unknown, Scope.Scope> = serving !== undefined
      ? serving.serve(server)
      : Effect.tryPromise({ try: () => instance.connect(server), catch: (error) => error })
    // `undefined` when connected, else why not
    const notConnected = yield* attach.pipe(
      Effect.as<string | undefined>(undefined),
      Effect.catchAllCause((cause) => {
        const reason = describe(Cause.squash(cause))
        return Effect.as(Effect.logWarning(`SDK MCP server "${name}" could not be connected: ${reason}`), reason)
      })
    )

    const send = (message: JsonObject) =>
      Effect.tryPromise(() => client.send(message)).pipe(Effect.mapError((e) => describe(e.error)))

    const call = (message: JsonObject, id: JsonRpcId): Effect.Effect<JsonObject> => {
      if (notConnected !== undefined) {
        const reason = `SDK MCP server ${name} is not connected: ${notConnected}`
        return Effect.succeed(errorResponse(id, INTERNAL_ERROR, reason))
      }
      return Effect.gen(function*() {
        const key = keyOf(id)
        const deferred = yield* Deferred.make<JsonObject>()
        pending.set(key, deferred)
        const disconnected = errorResponse(id, CONNECTION_CLOSED, `SDK MCP server ${name} was disconnected`)
        return yield* send(message).pipe(
          Effect.matchEffect({
            onFailure: (error) => Effect.succeed(errorResponse(id, CONNECTION_CLOSED, error)),
            onSuccess: () => Effect.raceFirst(Deferred.await(deferred), Effect.as(Deferred.await(closed), disconnected))
          }),
          Effect.onInterrupt(() =>
            send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "cancelled" } })
              .pipe(Effect.ignore)
          ),
          Effect.ensuring(Effect.sync(() => {
            if (pending.get(key) === deferred) pending.delete(key)
          }))
        )
      })
    }

    return {
      name,
      onConnectFailure: serving?.onConnectFailure ?? "warn",
      manifest: notConnected === undefined && (serving?.manifest ?? true),
      liveStatus: serving?.liveStatus,
      call,
      deliver: (message) => notConnected !== undefined ? Effect.void : Effect.ignore(send(message)),
      settle: (id, reason) =>
        Effect.sync(() => {
          const deferred = pending.get(keyOf(id))
          const response = errorResponse(id, CONNECTION_CLOSED, `Request cancelled: ${reason}`)
          if (deferred !== undefined) Deferred.unsafeDone(deferred, Exit.succeed(response))
        })
    }
  })

/** Runs the MCP handshake ourselves so that the CLI can skip it (`initialize.sdkMcpServerManifests`). */
const captureManifest = (connection: Connection): Effect.Effect<JsonObject | undefined> =>
  Effect.gen(function*() {
    const initId = `${MANIFEST_ID_PREFIX}initialize`
    const init = yield* connection.call({
      jsonrpc: "2.0",
      id: initId,
      method: "initialize",
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { ...CLIENT_INFO, version: "unknown" }
      }
    }, initId)
    const initializeResult = init["result"]
    if (!isObject(initializeResult)) return undefined
    yield* connection.deliver({ jsonrpc: "2.0", method: "notifications/initialized" })
    const capabilities = initializeResult["capabilities"]
    if (!isObject(capabilities) || capabilities["tools"] === undefined || capabilities["tools"] === null) {
      return { initializeResult }
    }
    const listId = `${MANIFEST_ID_PREFIX}tools-list`
    const list = yield* connection.call({ jsonrpc: "2.0", id: listId, method: "tools/list" }, listId)
    const toolsListResult = list["result"]
    return isObject(toolsListResult) && toolsListResult["nextCursor"] === undefined
      ? { initializeResult, toolsListResult }
      : { initializeResult }
  })

/**
 * The servers the CLI runs itself (all but `sdk` ones), as the CLI takes them: a stdio config without `type` gets
 * `type: "stdio"`. Used for `--mcp-config` and for `mcp_set_servers`.
 *
 * @internal
 */
export const processMcpServers = (servers: Readonly<Record<string, McpServerConfig>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [name, config] of Object.entries(servers)) {
    if (config.type === "sdk") continue
    out[name] = config.type === undefined ? { type: "stdio", ...config } : config
  }
  return out
}

/**
 * A session's in-process MCP servers, as `setMcpServers` and `mcpServerStatus` see them.
 *
 * @internal
 */
export interface McpServersControl {
  /**
   * Connects the in-process servers of `servers` that are new, disconnects those left out, then calls `send` with the
   * `servers` payload of `mcp_set_servers` (calls are serialized).
   */
  readonly set: <A, E>(
    servers: Readonly<Record<string, McpServerConfig>>,
    send: (servers: Readonly<Record<string, unknown>>) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
  /** Merges what the servers know about themselves (e.g. a proxy's upstream connection) into the CLI's statuses. */
  readonly status: (
    statuses: ReadonlyArray<Message.McpServerStatus>
  ) => Effect.Effect<ReadonlyArray<Message.McpServerStatus>>
  /** Explains the CLI's refusal of `mcp_reconnect` when the server is one of this session's in-process servers. */
  readonly reconnectFailed: (serverName: string, error: ControlError) => ControlError
}

/** Sends the servers as they are, reports the CLI's statuses as they are. @internal */
export const noMcpServers: McpServersControl = {
  set: (servers, send) => send(servers),
  status: Effect.succeed,
  reconnectFailed: (_, error) => error
}

/** What the SDK MCP servers of the options contribute to a session. @internal */
export interface SdkMcpContribution extends Contribution {
  /**
   * Fails when a server given in the options whose policy is `"fail"` is not reported as connected by the CLI; absent
   * when the options give no SDK server.
   */
  readonly failure?: Effect.Effect<never, McpServerFailed> | undefined
  readonly mcpServers: McpServersControl
}

const mcpMessageHandler = (connections: ReadonlyMap<string, Connection>): Handler =>
  fromEffect(({ request }) => {
    const serverName = request["server_name"]
    const message = request["message"]
    if (typeof serverName !== "string" || !isObject(message)) {
      return Effect.fail(handlerFailure("Missing server_name or message for MCP request"))
    }
    const connection = connections.get(serverName)
    if (connection === undefined) return Effect.fail(handlerFailure(`SDK MCP server not found: ${serverName}`))
    const id = idOf(message)
    if (typeof message["method"] === "string" && id !== undefined) {
      return Effect.map(connection.call(message, id), (response) => ({ mcp_response: response }))
    }
    return connection.deliver(message).pipe(
      Effect.zipRight(
        message["method"] === "notifications/cancelled" && isObject(message["params"])
          ? cancelPending(connection, message["params"])
          : Effect.void
      ),
      Effect.as({ mcp_response: ACK })
    )
  })

const cancelPending = (connection: Connection, params: JsonObject) => {
  const requestId = params["requestId"]
  const reason = typeof params["reason"] === "string" ? params["reason"] : "cancelled by the CLI"
  return typeof requestId === "string" || typeof requestId === "number"
    ? connection.settle(requestId, reason)
    : Effect.void
}

/** One in-process server of a session. */
interface Registered {
  readonly connection: Connection
  /** Owns the connection: closed when `setMcpServers` removes the server (or with the session). */
  readonly scope: Scope.CloseableScope
  readonly instance: SdkMcpServerInstance
  /** What the CLI is told about the server besides its name (`timeout`), as the official SDK sends it. */
  readonly settings: JsonObject
  /** Given in `options.mcpServers` (then `system/init` is checked for it), not added by `setMcpServers`. */
  readonly startup: boolean
}

const settingsOf = (config: McpSdkServerConfig): JsonObject =>
  typeof config.timeout === "number" ? { timeout: config.timeout } : {}

const sameSettings = (a: JsonObject, b: JsonObject): boolean => a["timeout"] === b["timeout"]

/**
 * Sends the messages the servers originate to the CLI, once it answered `initialize`. The forwarding fiber starts with
 * the first server, on the outbox made with it (most sessions have none); `onProtocol` and `onInitialized` tell it
 * when the session is ready.
 */
const makeForwarder = (sessionScope: Scope.Scope) => {
  let protocol: ControlProtocol | undefined
  let initialized = false
  // made only when the forwarder has to wait for the session to be ready
  let whenReady: Deferred.Deferred<ControlProtocol> | undefined
  const ready = Effect.suspend(() => {
    if (initialized && protocol !== undefined) return Effect.succeed(protocol)
    whenReady ??= Deferred.unsafeMake<ControlProtocol>(FiberId.none)
    return Deferred.await(whenReady)
  })
  const markReady = () => {
    if (initialized && protocol !== undefined && whenReady !== undefined) {
      Deferred.unsafeDone(whenReady, Effect.succeed(protocol))
    }
  }
  const forwarder = (outbox: Queue.Dequeue<Outbound>) =>
    Effect.gen(function*() {
      const forwards = yield* FiberSet.make()
      const p = yield* ready
      while (true) {
        const { message, server } = yield* outbox.take
        const response = yield* Effect.either(p.begin("mcp_message", { server_name: server, message }))
        if (response._tag === "Right") {
          yield* FiberSet.run(
            forwards,
            response.right.pipe(
              Effect.catchAll((error) =>
                Effect.logDebug(`forwarding a message of SDK MCP server "${server}" failed: ${error.message}`)
              )
            )
          )
        }
      }
    }).pipe(Effect.scoped)
  return {
    start: (outbox: Queue.Dequeue<Outbound>) => Effect.asVoid(Effect.forkIn(forwarder(outbox), sessionScope)),
    onProtocol: (p: ControlProtocol) =>
      Effect.sync(() => {
        protocol = p
        markReady()
      }),
    onInitialized: () =>
      Effect.sync(() => {
        initialized = true
        markReady()
      })
  }
}

/** The in-process servers of one session, by name, each in its own scope (a child of the session's). */
interface Servers {
  readonly connections: Map<string, Connection>
  readonly registered: Map<string, Registered>
  readonly register: (name: string, config: McpSdkServerConfig, startup: boolean) => Effect.Effect<Registered>
  readonly unregister: (name: string) => Effect.Effect<void>
}

const makeServers = (
  sessionScope: Scope.Scope,
  startForwarding: (outbox: Queue.Dequeue<Outbound>) => Effect.Effect<void>
): Servers => {
  const connections = new Map<string, Connection>()
  const registered = new Map<string, Registered>()
  // what the servers send the CLI, made with the first server (registrations are serialized: the options' servers
  // one after the other at start-up, `setMcpServers` under its lock), shut down with the session
  let outbox: Queue.Queue<Outbound> | undefined
  const openOutbox = Effect.gen(function*() {
    const made = yield* Queue.unbounded<Outbound>()
    yield* Scope.addFinalizer(sessionScope, made.shutdown)
    yield* startForwarding(made)
    outbox = made
    return made
  })
  return {
    connections,
    registered,
    register: (name, config, startup) =>
      Effect.gen(function*() {
        const out = outbox ?? (yield* openOutbox)
        const scope = yield* Scope.fork(sessionScope, ExecutionStrategy.sequential)
        const connection = yield* connect(name, config, out).pipe(
          Scope.extend(scope),
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)))
        )
        const settings = settingsOf(config)
        const entry: Registered = { connection, scope, instance: config.instance, settings, startup }
        connections.set(name, connection)
        registered.set(name, entry)
        return entry
      }),
    unregister: (name) =>
      Effect.suspend(() => {
        const entry = registered.get(name)
        if (entry === undefined) return Effect.void
        registered.delete(name)
        connections.delete(name)
        return Scope.close(entry.scope, Exit.void)
      })
  }
}

/** The handshake results of the servers that offer one, sent with `initialize`; bounded by {@link MANIFEST_TIMEOUT}. */
const captureManifests = (connections: Iterable<Connection>): Effect.Effect<Record<string, JsonObject>> =>
  Effect.suspend(() => {
    const manifests: Record<string, JsonObject> = {}
    const withManifest = [...connections].filter((c) => c.manifest)
    if (withManifest.length === 0) return Effect.succeed(manifests)
    return Effect.forEach(
      withManifest,
      (c) =>
        Effect.map(captureManifest(c), (manifest) => {
          if (manifest !== undefined) manifests[c.name] = manifest
        }),
      { concurrency: "unbounded", discard: true }
    ).pipe(Effect.timeout(MANIFEST_TIMEOUT), Effect.ignore, Effect.as(manifests))
  })

/**
 * Watches `system/init` for the start-up servers the CLI does not report as connected (only servers given in the
 * options are checked): each is logged, and one whose policy is "fail" fails the session through `failure`.
 */
const watchStartupFailures = (registered: ReadonlyMap<string, Registered>) =>
  Effect.gen(function*() {
    const failures = yield* Queue.unbounded<{ readonly error: McpServerFailed; readonly policy: "fail" | "warn" }>()
    const reported = new Set<string>()
    const failed = yield* Deferred.make<never, McpServerFailed>()
    const failure: Effect.Effect<never, McpServerFailed> = Deferred.await(failed)
    yield* failures.take.pipe(
      Effect.flatMap(({ error, policy }) =>
        policy === "fail"
          ? Effect.zipRight(Effect.logError(error.message, error), Deferred.fail(failed, error))
          : Effect.logWarning(error.message, error)
      ),
      Effect.annotateLogs({ module: "SdkMcp" }),
      Effect.forever,
      Effect.forkScoped
    )
    const onMessage = (m: Message.SdkMessage): boolean => {
      if (!Message.isSystemInit(m)) return true
      for (const { connection, startup } of registered.values()) {
        if (!startup || reported.has(connection.name)) continue
        const info = m.mcp_servers.find((s) => s.name === connection.name)
        const status = info?.status ?? "missing"
        if (status === "connected" || status === "disabled") continue
        reported.add(connection.name)
        Queue.unsafeOffer(failures, {
          error: new McpServerFailed({ name: connection.name, status }),
          policy: connection.onConnectFailure
        })
      }
      return true
    }
    return { failure, onMessage }
  })

/** The CLI's view of the servers that run as processes, given to `setMcpServers` (in-process ones are added later). */
const wireOfProcessServers = (servers: Parameters<McpServersControl["set"]>[0]): Record<string, unknown> => {
  const wire: Record<string, unknown> = {}
  for (const [name, config] of Object.entries(processMcpServers(servers))) {
    // CLI 2.1.332 fails a stdio server without `args` here ("Spread syntax requires ...iterable not be null
    // or undefined"), though `--mcp-config` accepts one
    wire[name] = isObject(config) && config["type"] === "stdio" && config["args"] === undefined
      ? { ...config, args: [] }
      : config
  }
  return wire
}

/** `setMcpServers`, the live status of in-process servers and the reconnect error a session reports for them. */
const mcpServersControl = (servers: Servers, lock: Effect.Semaphore): McpServersControl => ({
  set: (wanted, send) =>
    lock.withPermits(1)(Effect.gen(function*() {
      const inProcess = Object.entries(wanted).flatMap(([name, config]) =>
        config.type === "sdk" ? [[name, config] as const] : []
      )
      const names = new Set(inProcess.map(([name]) => name))
      for (const name of [...servers.registered.keys()]) if (!names.has(name)) yield* servers.unregister(name)
      const wire = wireOfProcessServers(wanted)
      for (const [name, config] of inProcess) {
        const current = servers.registered.get(name)
        const changed = current !== undefined &&
          (current.instance !== config.instance || !sameSettings(current.settings, settingsOf(config)))
        if (changed) {
          yield* Effect.logWarning(
            `SDK MCP server "${name}" is already connected, so setMcpServers keeps it as it is; remove it, then ` +
              `add it again, to change it`
          ).pipe(Effect.annotateLogs({ module: "SdkMcp" }))
        }
        const entry = current ?? (yield* servers.register(name, config, false))
        wire[name] = { type: "sdk", name, ...entry.settings }
      }
      return yield* send(wire)
    })),
  status: (statuses) =>
    Effect.forEach(statuses, (entry) => {
      const live = servers.registered.get(entry.name)?.connection.liveStatus
      // the CLI keeps an in-process server's status from its handshake: only what it believes usable is checked
      if (live === undefined || (entry.status !== "connected" && entry.status !== "pending")) {
        return Effect.succeed(entry)
      }
      return Effect.map(live, (now) => (now === undefined ? entry : { ...entry, ...now }))
    }),
  reconnectFailed: (serverName, error) =>
    servers.registered.has(serverName)
      ? new ControlError({
        subtype: error.subtype,
        description: `"${serverName}" is an in-process (sdk) MCP server, which the CLI does not reconnect (it ` +
          `answered: ${error.description}); toggle it off and on with toggleMcpServer to run its handshake again, or ` +
          `replace it with setMcpServers`,
        ...(error.errorCode !== undefined ? { errorCode: error.errorCode } : {})
      })
      : error
})

/** @internal */
export const contribution = (
  options: { readonly mcpServers?: Readonly<Record<string, McpServerConfig>> | undefined }
): Effect.Effect<SdkMcpContribution, never, Scope.Scope> =>
  Effect.gen(function*() {
    const entries = Object.entries(options.mcpServers ?? {}).flatMap(([name, config]) =>
      config.type === "sdk" ? [[name, config] as const] : []
    )
    const sessionScope = yield* Effect.scope
    const forwarder = makeForwarder(sessionScope)
    const servers = makeServers(sessionScope, forwarder.start)
    const handlers = new Map([["mcp_message", mcpMessageHandler(servers.connections)]])
    // what every session has: `setMcpServers` (serialized; most sessions never call it) and the servers' messages
    const common = {
      handlers,
      onProtocol: forwarder.onProtocol,
      onInitialized: forwarder.onInitialized,
      mcpServers: mcpServersControl(servers, Effect.unsafeMakeSemaphore(1))
    }
    if (entries.length === 0) return common

    for (const [name, config] of entries) yield* servers.register(name, config, true)
    const manifests = yield* captureManifests(servers.connections.values())
    const configs: Record<string, JsonObject> = {}
    for (const [name, config] of entries) if (config.timeout !== undefined) configs[name] = { timeout: config.timeout }
    const startup = yield* watchStartupFailures(servers.registered)

    return {
      initialize: {
        sdkMcpServers: [...servers.connections.keys()],
        ...(Object.keys(manifests).length > 0 ? { sdkMcpServerManifests: manifests } : {}),
        ...(Object.keys(configs).length > 0 ? { sdkMcpServerConfigs: configs } : {})
      },
      ...common,
      onMessage: startup.onMessage,
      failure: startup.failure
    }
  })
