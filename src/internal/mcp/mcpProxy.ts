/** @internal */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { SdkMcpServerInstance } from "../../SdkMcp.js"
import type * as Api from "../../McpProxy.js"
import {
  CONNECTION_CLOSED,
  describe,
  errorResponse,
  errorResult,
  idOf,
  importModule,
  isObject,
  isTransport,
  type JsonObject,
  type JsonRpcId,
  keyOf,
  type McpTransport,
  PromiseConnections,
  type Servable,
  ServableTypeId,
  type Serving
} from "./sdkMcp.js"
import { liveTimeout } from "../transport/liveTimer.js"
import { makeStderrTail } from "../transport/stderrTail.js"

// -------------------------------------------------------------------------------------------------
// constants
// -------------------------------------------------------------------------------------------------

/** @internal */
export const DEFAULT_CONNECT_TIMEOUT: Duration.Duration = Duration.seconds(30)

/** @internal */
export const defaultReconnect: Schedule.Schedule<unknown, string> = Schedule.exponential("250 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds"))
)

const CLIENT_INFO = { name: "effect-claude-agent-mcp-proxy", version: "0.1.0" }

/** The longest timer Node.js accepts (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647

/** How long closing one upstream connection may take (the stdio transport escalates to SIGKILL within ~4 s). */
const CLOSE_TIMEOUT = Duration.seconds(6)

/** How long ending a Streamable HTTP session (`DELETE`) may take when the proxy closes. */
const TERMINATE_TIMEOUT = Duration.seconds(2)

const STDERR_TAIL_BYTES = 4096

/** Prefix of the JSON-RPC ids of the requests the upstream server sends a session's CLI through the proxy. */
const PROXY_ID_PREFIX = "mcp-proxy:"

const METHOD_NOT_FOUND = -32601
const REQUEST_TIMEOUT = -32001

const CLIENT_MODULE = "@modelcontextprotocol/sdk/client/index.js"
const STDIO_MODULE = "@modelcontextprotocol/sdk/client/stdio.js"
const HTTP_MODULE = "@modelcontextprotocol/sdk/client/streamableHttp.js"
const SSE_MODULE = "@modelcontextprotocol/sdk/client/sse.js"
const TYPES_MODULE = "@modelcontextprotocol/sdk/types.js"

// -------------------------------------------------------------------------------------------------
// type ids, errors, status
// -------------------------------------------------------------------------------------------------

/** @internal */
export const TypeId: Api.TypeId = Symbol.for("effect-claude-agent/McpProxy") as Api.TypeId

/** @internal */
export class McpProxyError extends Schema.TaggedError<McpProxyError>("effect-claude-agent/McpProxyError")(
  "McpProxyError",
  {
    reason: Schema.Literal("InvalidOptions"),
    server: Schema.String,
    description: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {
  readonly [TypeId]: Api.TypeId = TypeId

  override get message(): string {
    return `${this.reason} for MCP proxy "${this.server}": ${this.description}`
  }
}

/** @internal */
export const Status: Data.TaggedEnum.Constructor<Api.Status> = Data.taggedEnum<Api.Status>()

/** @internal */
export const isMcpProxy = (u: unknown): u is Api.McpProxy => Predicate.hasProperty(u, TypeId)

// -------------------------------------------------------------------------------------------------
// the MCP SDK client, loaded at run time
// -------------------------------------------------------------------------------------------------

// Like the server side (see sdkMcp.ts), the MCP SDK's client is imported by computed specifiers and used through the
// small structural interfaces below: its declarations do not compile under this package's `skipLibCheck: false`.

interface RequestOptions {
  readonly signal?: AbortSignal | undefined
  readonly timeout?: number | undefined
  readonly resetTimeoutOnProgress?: boolean | undefined
  readonly onprogress?: ((progress: JsonObject) => void) | undefined
}

interface UpstreamRequestExtra {
  readonly signal: AbortSignal
}

interface LowLevelClient {
  connect(transport: McpTransport, options?: RequestOptions): Promise<void>
  close(): Promise<void>
  request(
    request: { readonly method: string; readonly params?: JsonObject },
    resultSchema: unknown,
    options?: RequestOptions
  ): Promise<unknown>
  notification(notification: { readonly method: string; readonly params?: JsonObject }): Promise<void>
  getServerCapabilities(): unknown
  getServerVersion(): unknown
  getInstructions(): unknown
  onclose?: (() => void) | undefined
  fallbackNotificationHandler?: ((notification: JsonObject) => Promise<void>) | undefined
  fallbackRequestHandler?: ((request: JsonObject, extra: UpstreamRequestExtra) => Promise<unknown>) | undefined
}

type ClientClass = new(
  info: { readonly name: string; readonly version: string },
  options: { readonly capabilities: JsonObject }
) => LowLevelClient

type McpErrorClass = abstract new(...args: ReadonlyArray<never>) => Error & {
  readonly code: number
  readonly data?: unknown
}

interface ClientSdk {
  readonly Client: ClientClass
  readonly McpError: McpErrorClass
  readonly ResultSchema: unknown
}

interface StderrStream {
  on(event: "data", listener: (chunk: Uint8Array | string) => void): unknown
}

interface StdioClientTransport extends McpTransport {
  readonly stderr: StderrStream | null
}

type StdioClass = new(params: {
  readonly command: string
  readonly args: Array<string>
  readonly env?: Record<string, string>
  readonly cwd?: string
  readonly stderr: "pipe"
}) => StdioClientTransport

interface HttpClientTransport extends McpTransport {
  terminateSession?: (() => Promise<void>) | undefined
}

type HttpClass = new(
  url: URL,
  options: { readonly requestInit: { readonly headers: Record<string, string> } }
) => HttpClientTransport

const isClass = <C>(u: unknown): u is C => typeof u === "function"

const exportOf = <C>(module: unknown, name: string, specifier: string): C => {
  const value = isObject(module) ? module[name] : undefined
  if (!isClass<C>(value)) throw new Error(`${specifier} does not export ${name}`)
  return value
}

// Node keeps imported modules: importing again per connection is a cache lookup, not a load
const loadClientSdk: Effect.Effect<ClientSdk, string> = Effect.tryPromise({
  try: () => {
    return Promise.all([importModule(CLIENT_MODULE), importModule(TYPES_MODULE)]).then((
      [client, types]
    ) => ({
      Client: exportOf<ClientClass>(client, "Client", CLIENT_MODULE),
      McpError: exportOf<McpErrorClass>(types, "McpError", TYPES_MODULE),
      ResultSchema: isObject(types) ? types["ResultSchema"] : undefined
    }))
  },
  catch: describe
})

const loadClass = <C>(specifier: string, name: string): Effect.Effect<C, string> =>
  Effect.tryPromise({
    try: () => importModule(specifier).then((m) => exportOf<C>(m, name, specifier)),
    catch: describe
  })

// -------------------------------------------------------------------------------------------------
// upstream transports
// -------------------------------------------------------------------------------------------------

interface MadeTransport {
  readonly transport: McpTransport
  /** What a closed connection means for this transport. */
  readonly closed: string
  /** What the transport knows about why it closed (a stdio server's last stderr line), if anything. */
  readonly diagnostics: () => string | undefined
  /** Ends the upstream session politely before closing (Streamable HTTP `DELETE`). */
  readonly terminate?: (() => Promise<void>) | undefined
}

const reveal = (
  values: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(values ?? {})) {
    out[key] = Redacted.isRedacted(value) ? Redacted.value(value) : value
  }
  return out
}

const lastLine = (text: string): string | undefined => {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0)
  const last = lines[lines.length - 1]
  return last === undefined ? undefined : `stderr: ${last.slice(0, 500)}`
}

const makeTransport = (config: Api.Transport): Effect.Effect<MadeTransport, string> =>
  Effect.gen(function*() {
    switch (config.type) {
      case "stdio": {
        const Stdio = yield* loadClass<StdioClass>(STDIO_MODULE, "StdioClientTransport")
        const tail = makeStderrTail(STDERR_TAIL_BYTES)
        const transport = new Stdio({
          command: config.command,
          args: [...(config.args ?? [])],
          ...(config.env !== undefined ? { env: reveal(config.env) } : {}),
          ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
          stderr: "pipe"
        })
        // drained always (an undrained pipe blocks the server), the tail explains why it exited
        transport.stderr?.on("data", (chunk) => tail.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk))
        return { transport, closed: "the server process exited", diagnostics: () => lastLine(tail.tail()) }
      }
      case "http": {
        const Http = yield* loadClass<HttpClass>(HTTP_MODULE, "StreamableHTTPClientTransport")
        const transport = new Http(new URL(config.url), { requestInit: { headers: reveal(config.headers) } })
        return {
          transport,
          closed: "the connection closed",
          diagnostics: () => undefined,
          terminate: () => transport.terminateSession?.() ?? Promise.resolve()
        }
      }
      case "sse": {
        const Sse = yield* loadClass<HttpClass>(SSE_MODULE, "SSEClientTransport")
        const transport = new Sse(new URL(config.url), { requestInit: { headers: reveal(config.headers) } })
        return { transport, closed: "the connection closed", diagnostics: () => undefined }
      }
      case "custom": {
        const transport = yield* Effect.tryPromise({ try: async () => config.make(), catch: describe })
        if (!isTransport(transport)) return yield* Effect.fail("the custom transport is not an MCP transport")
        return { transport, closed: "the connection closed", diagnostics: () => undefined }
      }
    }
  })

const validateTransport = (name: string, config: Api.Transport): Effect.Effect<void, McpProxyError> => {
  const invalid = (description: string, cause?: unknown) =>
    new McpProxyError({
      reason: "InvalidOptions",
      server: name,
      description,
      ...(cause !== undefined ? { cause } : {})
    })
  switch (config.type) {
    case "stdio":
      return config.command.length === 0 ? Effect.fail(invalid("the stdio command is empty")) : Effect.void
    case "http":
    case "sse":
      return Effect.try({
        try: () => new URL(config.url),
        catch: (cause) => invalid(`invalid URL: ${config.url}`, cause)
      })
    case "custom":
      return Effect.void
  }
}

// -------------------------------------------------------------------------------------------------
// the proxy
// -------------------------------------------------------------------------------------------------

interface Handshake {
  readonly capabilities: JsonObject
  readonly serverInfo: JsonObject
  readonly instructions: string | undefined
}

/** One live connection to the upstream server. */
interface Upstream {
  readonly client: LowLevelClient
  readonly handshake: Handshake
  readonly lost: Deferred.Deferred<string>
  /** Why the connection was lost, once it was. */
  readonly lostReason: () => string | undefined
  /** Declares the connection lost (e.g. an HTTP request failed below MCP): the proxy reconnects. */
  readonly lose: (reason: string) => void
}

interface ProxyState {
  status: Api.Status
  current: Upstream | undefined
  /** The handshake of the last connection: what sessions are told while the upstream server is away. */
  handshake: Handshake | undefined
  /** The last complete `tools/list` result, answered while the upstream server is away. */
  tools: JsonObject | undefined
  /** Why the last connection (or attempt) ended. */
  lastReason: string | undefined
  connections: number
  readonly links: Set<Link>
  linkCounter: number
  activity: number
  closed: boolean
}

/** One session's connection to the proxy: the server end of its in-memory transport pair. */
class Link {
  active = 0
  lastActive = 0
  private readonly pending = new Map<string, (response: JsonObject) => void>()
  private counter = 0

  constructor(readonly transport: McpTransport, readonly order: number) {}

  readonly send = (message: JsonObject): Effect.Effect<void> =>
    Effect.promise(() => this.transport.send(message).catch(() => undefined))

  readonly post = (message: JsonObject): void => {
    this.transport.send(message).catch(() => undefined)
  }

  /** Sends a request of the upstream server to this session's CLI and resolves with its result. */
  request(message: JsonObject, signal: AbortSignal): Promise<unknown> {
    const id = `${PROXY_ID_PREFIX}${++this.counter}`
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(id)
        this.post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "cancelled" } })
        reject(new Error("The request was cancelled"))
      }
      this.pending.set(id, (response) => {
        signal.removeEventListener("abort", onAbort)
        const error = response["error"]
        if (isObject(error)) {
          const message = typeof error["message"] === "string" ? error["message"] : "Request failed"
          reject(Object.assign(new Error(message), { code: error["code"], data: error["data"] }))
        } else {
          resolve(response["result"] ?? {})
        }
      })
      if (signal.aborted) return onAbort()
      signal.addEventListener("abort", onAbort, { once: true })
      this.transport.send({ jsonrpc: "2.0", id, method: message["method"], params: message["params"] }).catch(
        (error) => {
          signal.removeEventListener("abort", onAbort)
          this.pending.delete(id)
          reject(error)
        }
      )
    })
  }

  /** A response of the CLI to one of {@link request}'s requests. */
  resolve(id: JsonRpcId, response: JsonObject): void {
    const key = String(id)
    const pending = this.pending.get(key)
    if (pending === undefined) return
    this.pending.delete(key)
    pending(response)
  }

  close(): void {
    for (const pending of this.pending.values()) {
      pending({ error: { code: CONNECTION_CLOSED, message: "The session closed" } })
    }
    this.pending.clear()
  }
}

const serverInfoOf = (handshake: Handshake): Api.ServerInfo => ({
  name: typeof handshake.serverInfo["name"] === "string" ? handshake.serverInfo["name"] : "unknown",
  version: typeof handshake.serverInfo["version"] === "string" ? handshake.serverInfo["version"] : "unknown",
  ...(typeof handshake.serverInfo["title"] === "string" ? { title: handshake.serverInfo["title"] } : {})
})

/**
 * The capabilities the proxy advertises to the CLI: the upstream server's, with `tools.listChanged` (the proxy
 * announces a changed tool list after a reconnect even when the upstream server cannot).
 */
const advertised = (capabilities: JsonObject): JsonObject =>
  isObject(capabilities["tools"])
    ? { ...capabilities, tools: { ...capabilities["tools"], listChanged: true } }
    : capabilities

/** The MCP SDK prefixes error messages with `MCP error <code>: `; the CLI gets the upstream server's own text. */
const upstreamMessage = (error: Error & { readonly code: number }): string => {
  const prefix = `MCP error ${error.code}: `
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message
}

/** Describes an error with its causes (`fetch failed` says little without `connect ECONNREFUSED …`). */
const describeDeep = (error: unknown): string => {
  const parts = [describe(error)]
  let cause = Predicate.hasProperty(error, "cause") ? error.cause : undefined
  for (let depth = 0; cause !== undefined && depth < 3; depth++) {
    parts.push(describe(cause))
    cause = Predicate.hasProperty(cause, "cause") ? cause.cause : undefined
  }
  return parts.join(": ")
}

/** Splits a request's `_meta.progressToken` off its params (the MCP SDK client sets its own token upstream). */
const splitProgressToken = (params: JsonObject | undefined) => {
  const meta = params !== undefined && isObject(params["_meta"]) ? params["_meta"] : undefined
  const token = meta?.["progressToken"]
  if (params === undefined || meta === undefined || !(typeof token === "string" || typeof token === "number")) {
    return { token: undefined, params }
  }
  const { progressToken: _, ...rest } = meta
  return { token, params: { ...params, _meta: rest } }
}

/** Whatever the parts of one proxy share: its settings, the loaded MCP SDK client, its state and its status. */
interface Proxy {
  readonly name: string
  readonly options: Api.Options
  readonly sdk: ClientSdk
  readonly state: ProxyState
  readonly statusRef: SubscriptionRef.SubscriptionRef<Api.Status>
  /** Runs an effect in the background, in the proxy's scope. */
  readonly fork: (effect: Effect.Effect<void>) => void
  readonly connectTimeout: Duration.Duration
  readonly connectTimeoutMs: number
  readonly requestTimeout: Duration.Duration
  readonly requestTimeoutMs: number
  readonly pingInterval: Duration.Duration | undefined
}

/** A duration as a Node.js timer's milliseconds: at least 1, at most {@link MAX_TIMER_MS} (also for infinity). */
const timerMs = (duration: Duration.Duration): number =>
  Duration.isFinite(duration) ? Math.min(Math.max(1, Duration.toMillis(duration)), MAX_TIMER_MS) : MAX_TIMER_MS

/** Builds the proxy's shared context: settings decoded once, the MCP SDK client loaded, the state in `Connecting`. */
const makeProxy = (options: Api.Options): Effect.Effect<Proxy, never, Scope.Scope> =>
  Effect.gen(function*() {
    const connectTimeout = Duration.decode(options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT)
    const requestTimeout = Duration.decode(options.requestTimeout ?? Duration.infinity)
    const sdk = yield* Effect.orDieWith(loadClientSdk, (error) => new Error(error))
    const runFork = yield* FiberSet.makeRuntime<never, unknown, unknown>()
    const statusRef = yield* SubscriptionRef.make<Api.Status>(Status.Connecting({ attempt: 1 }))
    return {
      name: options.name,
      options,
      sdk,
      state: {
        status: Status.Connecting({ attempt: 1 }),
        current: undefined,
        handshake: undefined,
        tools: undefined,
        lastReason: undefined,
        connections: 0,
        links: new Set(),
        linkCounter: 0,
        activity: 0,
        closed: false
      },
      statusRef,
      fork: (effect) => {
        runFork(effect)
      },
      connectTimeout,
      connectTimeoutMs: timerMs(connectTimeout),
      requestTimeout,
      requestTimeoutMs: timerMs(requestTimeout),
      pingInterval: options.pingInterval === undefined ? undefined : Duration.decode(options.pingInterval)
    }
  })

const annotate = (proxy: Proxy) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.annotateLogs(effect, { module: "McpProxy", server: proxy.name })

const setStatus = (proxy: Proxy, status: Api.Status): Effect.Effect<void> =>
  Effect.suspend(() => {
    proxy.state.status = status
    return SubscriptionRef.set(proxy.statusRef, status)
  })

/** Sends a message to every session connected to the proxy. */
const broadcast = (proxy: Proxy, message: JsonObject): void => {
  for (const link of proxy.state.links) link.post(message)
}

/** Why the upstream server cannot be reached now, and whether the SDK still tries: told to sessions and tools. */
const outage = (proxy: Proxy): string => {
  const { name, state } = proxy
  if (state.closed) return `MCP server "${name}" is not available: the proxy is closed.`
  const reason = state.lastReason ?? "not connected yet"
  const status = state.status
  const what = `MCP server "${name}" is not connected (${reason})`
  if (status._tag === "Disconnected" && !status.retrying) return `${what}; the SDK gave up reconnecting.`
  return `${what}; the SDK is reconnecting, try again later.`
}

const isMcpError = (proxy: Proxy, u: unknown): u is InstanceType<McpErrorClass> =>
  u instanceof proxy.sdk.McpError && typeof u.code === "number"

const describeError = (proxy: Proxy, error: unknown): string =>
  isMcpError(proxy, error) ? upstreamMessage(error) : describeDeep(error)

// --- the upstream connection ----------------------------------------------------------------------------------------

/** A request to the upstream server, bounded by the request timeout unless `options` says otherwise. */
const request = (
  proxy: Proxy,
  upstream: Upstream,
  method: string,
  params: JsonObject | undefined,
  options?: RequestOptions
): Effect.Effect<unknown, unknown> =>
  Effect.tryPromise({
    try: (signal) =>
      upstream.client.request(
        { method, ...(params !== undefined ? { params } : {}) },
        proxy.sdk.ResultSchema,
        { timeout: proxy.requestTimeoutMs, ...options, signal }
      ),
    catch: (error) => error
  })

/** Fetches the tool list; after a reconnect, tells every session when it changed. */
const refreshTools = (proxy: Proxy, upstream: Upstream, announce: boolean): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (upstream.handshake.capabilities["tools"] === undefined) return
    const result = yield* request(proxy, upstream, "tools/list", undefined, { timeout: proxy.connectTimeoutMs })
    if (!isObject(result) || result["nextCursor"] !== undefined) return
    const before = proxy.state.tools
    proxy.state.tools = result
    if (announce && before !== undefined && JSON.stringify(before["tools"]) !== JSON.stringify(result["tools"])) {
      yield* Effect.logInfo(`the tools of MCP server "${proxy.name}" changed; telling the sessions`)
      broadcast(proxy, { jsonrpc: "2.0", method: "notifications/tools/list_changed" })
    }
  }).pipe(Effect.ignore, annotate(proxy))

/** A notification of the upstream server: passed to every session (and a changed tool list is fetched again). */
const onUpstreamNotification = (proxy: Proxy) => (notification: JsonObject): Promise<void> => {
  const upstream = proxy.state.current
  if (notification["method"] === "notifications/tools/list_changed" && upstream !== undefined) {
    proxy.fork(refreshTools(proxy, upstream, false))
  }
  broadcast(proxy, notification)
  return Promise.resolve()
}

/** A request of the upstream server (sampling, elicitation, roots…): asked of the session most recently busy. */
const onUpstreamRequest = (proxy: Proxy) => (request: JsonObject, extra: UpstreamRequestExtra): Promise<unknown> => {
  const links = [...proxy.state.links]
  const busy = links.filter((l) => l.active > 0).sort((a, b) => b.lastActive - a.lastActive)[0]
  const link = busy ?? links.sort((a, b) => b.order - a.order)[0]
  if (link === undefined) {
    return Promise.reject(
      Object.assign(new Error(`No session is connected to MCP proxy "${proxy.name}"`), { code: METHOD_NOT_FOUND })
    )
  }
  return link.request(request, extra.signal)
}

/** Opens one upstream connection and completes the MCP handshake; the scope closes it. */
const connectOnce = (proxy: Proxy): Effect.Effect<Upstream, string, Scope.Scope> =>
  Effect.gen(function*() {
    const { connectTimeout, options } = proxy
    const made = yield* makeTransport(options.transport)
    const lost = yield* Deferred.make<string>()
    let lostReason: string | undefined
    let transportError: string | undefined
    const why = (what: string) => [what, made.diagnostics()].filter(Predicate.isNotUndefined).join("; ")
    const lose = (reason: string) => {
      lostReason ??= reason
      Deferred.unsafeDone(lost, Exit.succeed(lostReason))
    }
    // set before `connect`, which chains them
    made.transport.onerror = (error) => {
      transportError = describe(error)
    }
    const client = new proxy.sdk.Client(options.clientInfo ?? CLIENT_INFO, { capabilities: {} })
    client.onclose = () => lose(why(transportError ?? made.closed))
    client.fallbackNotificationHandler = onUpstreamNotification(proxy)
    client.fallbackRequestHandler = onUpstreamRequest(proxy)
    // bounded on the wall clock, so that the clean-up also runs in full when the closing fiber was interrupted
    yield* Effect.addFinalizer(() =>
      liveTimeout(
        Effect.promise(() => (made.terminate?.() ?? Promise.resolve()).catch(() => undefined)),
        TERMINATE_TIMEOUT
      ).pipe(
        Effect.zipRight(liveTimeout(Effect.promise(() => client.close().catch(() => undefined)), CLOSE_TIMEOUT)),
        Effect.asVoid
      )
    )
    yield* Effect.tryPromise({
      try: (signal) => client.connect(made.transport, { signal, timeout: proxy.connectTimeoutMs }),
      // the handshake fails when the connection closes: then why it closed says more
      catch: (error) => lostReason ?? why(describeError(proxy, error))
    }).pipe(
      Effect.timeoutFail({
        duration: connectTimeout,
        onTimeout: () => why(`no answer to initialize within ${Duration.format(connectTimeout)}`)
      })
    )
    const capabilities = client.getServerCapabilities()
    const serverInfo = client.getServerVersion()
    const instructions = client.getInstructions()
    const upstream: Upstream = {
      client,
      handshake: {
        capabilities: isObject(capabilities) ? capabilities : {},
        serverInfo: isObject(serverInfo) ? serverInfo : {},
        instructions: typeof instructions === "string" ? instructions : undefined
      },
      lost,
      lostReason: () => lostReason,
      lose
    }
    return upstream
  })

/** Pings the upstream server every `interval`; a ping without answer declares the connection lost. */
const healthCheck = (proxy: Proxy, upstream: Upstream, interval: Duration.Duration): Effect.Effect<void> =>
  request(proxy, upstream, "ping", undefined, {
    timeout: Duration.isFinite(interval) ? Math.min(Duration.toMillis(interval), MAX_TIMER_MS) : MAX_TIMER_MS
  }).pipe(
    Effect.catchAll((error) => Effect.sync(() => upstream.lose(`no answer to ping: ${describeError(proxy, error)}`))),
    Effect.repeat(Schedule.spaced(interval)),
    Effect.delay(interval),
    Effect.asVoid
  )

/** Connects once and serves until the connection is lost: `Right(reason)` when it was up, `Left(reason)` if not. */
const connection = (proxy: Proxy): Effect.Effect<Either.Either<string, string>> =>
  Effect.gen(function*() {
    const { name, state } = proxy
    const attempt = yield* Effect.either(connectOnce(proxy))
    if (Either.isLeft(attempt)) return Either.left(attempt.left)
    const upstream = attempt.right
    state.current = upstream
    state.handshake = upstream.handshake
    state.connections++
    // the tool list first: `Connected` means sessions can be told everything, even if the connection drops now
    yield* refreshTools(proxy, upstream, true)
    yield* setStatus(
      proxy,
      Status.Connected({ serverInfo: serverInfoOf(upstream.handshake), connection: state.connections })
    )
    yield* state.connections === 1
      ? Effect.logDebug(`connected to MCP server "${name}"`)
      : Effect.logInfo(`reconnected to MCP server "${name}"`)
    if (proxy.pingInterval !== undefined) yield* Effect.forkScoped(healthCheck(proxy, upstream, proxy.pingInterval))
    const reason = yield* Deferred.await(upstream.lost).pipe(
      Effect.ensuring(Effect.sync(() => {
        if (state.current === upstream) state.current = undefined
      }))
    )
    return Either.right(reason)
  }).pipe(Effect.scoped)

/** Connects, and reconnects on the `reconnect` schedule each time the connection is lost or an attempt fails. */
const reconnectLoop = (proxy: Proxy): Effect.Effect<void> =>
  Effect.gen(function*() {
    const name = proxy.name
    const driver = yield* Schedule.driver(proxy.options.reconnect ?? defaultReconnect)
    let failed = 0
    while (true) {
      yield* setStatus(proxy, Status.Connecting({ attempt: failed + 1 }))
      const outcome = yield* connection(proxy).pipe(
        Effect.catchAllDefect((defect) => Effect.succeed(Either.left(`unexpected failure: ${describe(defect)}`)))
      )
      const reason = Either.merge(outcome)
      proxy.state.lastReason = reason
      if (Either.isRight(outcome)) {
        failed = 0
        yield* driver.reset
        yield* Effect.logWarning(`MCP server "${name}" disconnected: ${reason}`)
      } else {
        failed++
        yield* Effect.logDebug(`connecting to MCP server "${name}" failed (attempt ${failed}): ${reason}`)
      }
      yield* setStatus(proxy, Status.Disconnected({ reason, failedAttempts: failed, retrying: true }))
      const next = yield* Effect.either(driver.next(reason))
      if (Either.isLeft(next)) {
        yield* setStatus(proxy, Status.Disconnected({ reason, failedAttempts: failed, retrying: false }))
        return yield* Effect.logError(`MCP server "${name}": the reconnect schedule is exhausted (${reason})`)
      }
    }
  }).pipe(annotate(proxy))

/** Marks the proxy closed: sessions are told so, and the status ends `Disconnected` without retrying. */
const markClosed = (proxy: Proxy): Effect.Effect<void> =>
  Effect.suspend(() => {
    proxy.state.closed = true
    const status = proxy.state.status
    return status._tag === "Disconnected" && !status.retrying ? Effect.void : setStatus(
      proxy,
      Status.Disconnected({ reason: "the proxy is closed", failedAttempts: 0, retrying: false })
    )
  })

/** Waits until the status is no longer `Connecting` (at once when it is not): a connection attempt ended. */
const firstAttempt = (proxy: Proxy): Effect.Effect<void> =>
  proxy.statusRef.changes.pipe(
    Stream.filter((s) => s._tag !== "Connecting"),
    Stream.take(1),
    Stream.runDrain
  )

// --- sessions -------------------------------------------------------------------------------------------------------

/** Answers a session's `initialize` with the upstream server's handshake (the last one while it is away). */
const handshake = (proxy: Proxy, message: JsonObject, id: JsonRpcId): Effect.Effect<JsonObject> =>
  Effect.gen(function*() {
    const state = proxy.state
    if (state.handshake === undefined && state.status._tag === "Connecting") {
      yield* firstAttempt(proxy).pipe(Effect.timeout(proxy.connectTimeout), Effect.ignore)
    }
    const known = state.current?.handshake ?? state.handshake
    if (known === undefined) return errorResponse(id, CONNECTION_CLOSED, outage(proxy))
    const params = isObject(message["params"]) ? message["params"] : {}
    const protocolVersion = typeof params["protocolVersion"] === "string" ? params["protocolVersion"] : undefined
    return {
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: protocolVersion ?? "2025-11-25",
        capabilities: advertised(known.capabilities),
        serverInfo: known.serverInfo,
        ...(known.instructions !== undefined ? { instructions: known.instructions } : {})
      }
    }
  })

/** What a session is told when a request could not be forwarded: a tool result for a call, else an error. */
const unavailable = (method: string, id: JsonRpcId, text: string): JsonObject =>
  method === "tools/call"
    ? { jsonrpc: "2.0", id, result: errorResult(text) }
    : errorResponse(id, CONNECTION_CLOSED, text)

/** The cached tool list, as the answer to a first-page `tools/list` while the upstream server is away. */
const cachedTools = (
  proxy: Proxy,
  method: string,
  params: JsonObject | undefined,
  id: JsonRpcId
): JsonObject | undefined =>
  method === "tools/list" && params?.["cursor"] === undefined && proxy.state.tools !== undefined
    ? { jsonrpc: "2.0", id, result: proxy.state.tools }
    : undefined

/** Forwards a session's request to the upstream server, with its progress notifications, and answers it. */
const forward = (
  proxy: Proxy,
  link: Link,
  message: JsonObject,
  method: string,
  id: JsonRpcId
): Effect.Effect<JsonObject> =>
  Effect.suspend(() => {
    const params = isObject(message["params"]) ? message["params"] : undefined
    const upstream = proxy.state.current
    if (upstream === undefined) {
      return Effect.succeed(cachedTools(proxy, method, params, id) ?? unavailable(method, id, outage(proxy)))
    }
    const split = splitProgressToken(params)
    const token = split.token
    const onprogress = token === undefined ?
      undefined :
      (progress: JsonObject) =>
        link.post({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { ...progress, progressToken: token }
        })
    link.active++
    link.lastActive = ++proxy.state.activity
    return request(proxy, upstream, method, split.params, {
      resetTimeoutOnProgress: true,
      ...(onprogress !== undefined ? { onprogress } : {})
    }).pipe(
      Effect.map((result): JsonObject => {
        if (method === "tools/list" && params?.["cursor"] === undefined && isObject(result)) {
          if (result["nextCursor"] === undefined) proxy.state.tools = result
        }
        return { jsonrpc: "2.0", id, result }
      }),
      Effect.catchAll((error) => Effect.succeed(failed(proxy, upstream, method, params, id, error))),
      Effect.ensuring(Effect.sync(() => link.active--))
    )
  })

/** The answer to a forwarded request that failed: the upstream server's error, or an outage when the link broke. */
const failed = (
  proxy: Proxy,
  upstream: Upstream,
  method: string,
  params: JsonObject | undefined,
  id: JsonRpcId,
  error: unknown
): JsonObject => {
  const name = proxy.name
  const lostDuringCall = () => {
    const reason = upstream.lostReason() ?? "the connection closed"
    const text = `MCP server "${name}" disconnected during the request (${reason}); the SDK is reconnecting, try ` +
      `again later.`
    return cachedTools(proxy, method, params, id) ?? unavailable(method, id, text)
  }
  if (isMcpError(proxy, error)) {
    if (error.code === CONNECTION_CLOSED && upstream.lostReason() !== undefined) return lostDuringCall()
    if (
      error.code === REQUEST_TIMEOUT && isObject(error.data) && error.data["timeout"] === proxy.requestTimeoutMs &&
      method === "tools/call"
    ) {
      const text = `MCP server "${name}" did not answer within ${Duration.format(proxy.requestTimeout)}`
      return { jsonrpc: "2.0", id, result: errorResult(text) }
    }
    return {
      jsonrpc: "2.0",
      id,
      error: {
        code: error.code,
        message: upstreamMessage(error),
        ...(error.data !== undefined ? { data: error.data } : {})
      }
    }
  }
  // not an answer of the server: the request did not get through (e.g. an HTTP request failed)
  upstream.lose(describeDeep(error))
  return lostDuringCall()
}

/** A session's notification: cancellations interrupt the forwarded request, the others go upstream. */
const onSessionNotification = (
  proxy: Proxy,
  cancel: (requestId: JsonRpcId) => void,
  message: JsonObject,
  method: string
): void => {
  switch (method) {
    case "notifications/initialized":
      // the upstream server was initialized by the proxy's own client
      return
    case "notifications/cancelled": {
      const params = isObject(message["params"]) ? message["params"] : {}
      const requestId = params["requestId"]
      // interrupting the forwarded request makes the MCP SDK client cancel it upstream
      if (typeof requestId === "string" || typeof requestId === "number") cancel(requestId)
      return
    }
    default: {
      const upstream = proxy.state.current
      if (upstream === undefined) return
      const params = isObject(message["params"]) ? message["params"] : undefined
      upstream.client.notification({ method, ...(params !== undefined ? { params } : {}) }).catch(() => undefined)
    }
  }
}

/** Serves one session's transport until the scope closes: its requests run one fiber each, keyed by id. */
const serve = (proxy: Proxy) => (transport: McpTransport): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const state = proxy.state
    const calls = yield* FiberMap.make<string>()
    const runCall = yield* FiberMap.runtime(calls)<never>()
    const run = yield* FiberSet.makeRuntime<never, unknown, unknown>()
    const link = new Link(transport, ++state.linkCounter)
    const cancel = (requestId: JsonRpcId) => {
      run(FiberMap.remove(calls, keyOf(requestId)))
    }

    const onRequest = (message: JsonObject, method: string, id: JsonRpcId) => {
      const answer = method === "initialize"
        ? handshake(proxy, message, id)
        : method === "ping"
        ? Effect.succeed<JsonObject>({ jsonrpc: "2.0", id, result: {} })
        : forward(proxy, link, message, method, id)
      runCall(keyOf(id), Effect.flatMap(answer, link.send))
    }

    transport.onmessage = (message) => {
      if (!isObject(message)) return
      const method = message["method"]
      const id = idOf(message)
      if (typeof method === "string") {
        if (id !== undefined) onRequest(message, method, id)
        else onSessionNotification(proxy, cancel, message, method)
      } else if (id !== undefined) {
        link.resolve(id, message)
      }
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => state.links.add(link)),
      () =>
        Effect.sync(() => {
          state.links.delete(link)
          link.close()
        })
    )
    yield* Effect.acquireRelease(
      Effect.promise(() => transport.start()),
      () => Effect.promise(() => transport.close().catch(() => undefined))
    )
  })

/** The proxy as an SDK MCP server: what sessions connect to, and its status for the CLI. */
const servableOf = (
  proxy: Proxy,
  connections: PromiseConnections
): SdkMcpServerInstance & Servable => {
  const serving: Serving = {
    onConnectFailure: proxy.options.onConnectFailure ?? "fail",
    manifest: proxy.options.manifest ?? true,
    serve: serve(proxy),
    // the CLI keeps the status of the session's handshake; while the upstream server is away, say so and why
    liveStatus: Effect.sync(() => {
      const status = proxy.state.status
      if (status._tag === "Connected") return undefined
      return { status: status._tag === "Connecting" ? "pending" : "failed", error: outage(proxy) }
    })
  }
  return {
    [ServableTypeId]: serving,
    connect: (transport) => connections.connect(transport),
    close: () => connections.close()
  }
}

/** @internal */
export const make = (options: Api.Options): Effect.Effect<Api.McpProxy, McpProxyError, Scope.Scope> =>
  Effect.gen(function*() {
    const name = options.name
    if (name.length === 0) {
      return yield* new McpProxyError({ reason: "InvalidOptions", server: name, description: "the name is empty" })
    }
    yield* validateTransport(name, options.transport)
    const runtime = yield* Effect.runtime<never>()
    const proxy = yield* makeProxy(options)

    yield* Effect.addFinalizer(() => markClosed(proxy))
    yield* Effect.forkScoped(reconnectLoop(proxy))
    // the first attempt decides what the first sessions see
    yield* firstAttempt(proxy)

    const connections = new PromiseConnections(runtime, serve(proxy))
    yield* Effect.addFinalizer(() => Effect.promise(() => connections.close()))
    const result: Api.McpProxy = {
      [TypeId]: TypeId,
      type: "sdk",
      name,
      instance: servableOf(proxy, connections),
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      status: SubscriptionRef.get(proxy.statusRef),
      changes: proxy.statusRef.changes
    }
    return result
  }).pipe(Effect.withSpan("McpProxy.make", { attributes: { server: options.name } }))

// -------------------------------------------------------------------------------------------------
// layer
// -------------------------------------------------------------------------------------------------

/** @internal */
export const makeRegistry = (
  options: ReadonlyArray<Api.Options>
): Effect.Effect<Api.Registry, McpProxyError, Scope.Scope> =>
  Effect.gen(function*() {
    const seen = new Set<string>()
    for (const o of options) {
      if (seen.has(o.name)) {
        return yield* new McpProxyError({
          reason: "InvalidOptions",
          server: o.name,
          description: "two proxies have this name"
        })
      }
      seen.add(o.name)
    }
    const proxies = yield* Effect.forEach(options, make, { concurrency: "unbounded" })
    const mcpServers: Record<string, Api.McpProxy> = {}
    for (const proxy of proxies) mcpServers[proxy.name] = proxy
    return { proxies, mcpServers, get: (name) => Option.fromNullable(mcpServers[name]) }
  })
