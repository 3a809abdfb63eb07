/**
 * External MCP servers proxied through this SDK: the SDK connects to the server itself (stdio command, Streamable
 * HTTP or SSE URL) with the MCP TypeScript SDK's `Client`, and serves it to the CLI as an in-process (`sdk`) server
 * over the control protocol. The CLI sees it like any SDK server (`mcp__<name>__<tool>`); requests, responses,
 * notifications and progress are forwarded both ways.
 *
 * Use it when the CLI cannot reach the server (it runs on the host's network, with the host's credentials or
 * connection pool), or when many sessions should share one connection: a proxy made once serves every session that
 * lists it in `mcpServers`, e.g. all the sessions of a `SessionPool`.
 *
 * - The proxy connects when it is made (waiting for the first attempt) and lives as long as its scope.
 * - When the upstream server goes away, the calls in flight and the calls made meanwhile answer at once with an
 *   `isError` tool result that says why (other requests with a JSON-RPC error); the session goes on. The proxy
 *   reconnects following `reconnect` (exponential backoff capped at 30 seconds, forever, by default). A stdio
 *   server is restarted by reconnecting.
 * - While the upstream server is away, sessions keep its last known tools (and new sessions get the last known
 *   handshake), so that a call says why it failed instead of the tool vanishing. When the tools differ after a
 *   reconnect, every session is sent `notifications/tools/list_changed` and the CLI lists them again.
 * - A session started before the upstream server was ever reached gets a failed handshake: the CLI reports the
 *   server as `failed` in `system/init` and `mcpServerStatus`, and `onConnectFailure` applies. The CLI keeps an
 *   SDK server's status from its handshake for the whole session (it cannot reconnect SDK servers);
 *   `Session.mcpServerStatus` shows the proxy's live state instead of the CLI's `connected` while the upstream server
 *   is away (`pending` / `failed`, with the reason in `error`), and {@link McpProxy.status} /
 *   {@link McpProxy.changes} give it in full.
 * - A proxy can also be added to (or removed from) a running session with `Session.setMcpServers`.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { ClaudeAgent, McpProxy, NodeClaudeAgent, SessionPool } from "effect-claude-agent"
 *
 * // one proxy, one connection, for a single session
 * const program = Effect.gen(function*() {
 *   const github = yield* McpProxy.make({
 *     name: "github",
 *     transport: { type: "stdio", command: "github-mcp-server", args: ["stdio"] }
 *   })
 *   return yield* ClaudeAgent.query("List my open pull requests", {
 *     mcpServers: { github },
 *     allowedTools: ["mcp__github__*"]
 *   }).pipe(Stream.runCollect)
 * }).pipe(Effect.scoped)
 *
 * // one connection shared by every session of a pool
 * const Pool = Layer.unwrapEffect(
 *   Effect.map(McpProxy.McpProxies, ({ mcpServers }) =>
 *     SessionPool.layer({ maxConcurrent: 4, options: { mcpServers } }))
 * ).pipe(
 *   Layer.provide(McpProxy.layer({ name: "docs", transport: { type: "http", url: "https://mcp.example.com/mcp" } })),
 *   Layer.provide(NodeClaudeAgent.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { McpSdkServerConfig } from "./SdkMcp.js"
import * as internal from "./internal/mcp/mcpProxy.js"

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

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * The options of a proxy are not usable: an empty name or command, an invalid URL, two proxies of a layer with the
 * same name. (The upstream server being unreachable is not an error: it is a {@link Status}.)
 *
 * @since 0.1.0
 * @category errors
 */
export const McpProxyError: typeof internal.McpProxyError = internal.McpProxyError

/**
 * @since 0.1.0
 * @category errors
 */
export type McpProxyError = internal.McpProxyError

// -------------------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------------------

/**
 * A value given as is or `Redacted` (secrets such as tokens: they stay out of logs and error messages).
 *
 * @since 0.1.0
 * @category models
 */
export type Secret = string | Redacted.Redacted<string>

/**
 * A server run as a child process of this one, spoken to over its stdin/stdout (the MCP SDK's
 * `StdioClientTransport`). Its stderr is drained; the last line explains an exit. Closing the proxy ends its stdin,
 * then sends SIGTERM, then SIGKILL.
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioTransport {
  readonly type: "stdio"
  /** The executable (looked up in `PATH`; no shell is involved). */
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /**
   * The server's environment, over a minimal inherited one (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`), as
   * the MCP SDK does. Leave `undefined` for the minimal one alone.
   */
  readonly env?: Readonly<Record<string, Secret>> | undefined
  /** Defaults to this process's working directory. */
  readonly cwd?: string | undefined
}

/**
 * A server reached over Streamable HTTP (the MCP SDK's `StreamableHTTPClientTransport`). The session is ended
 * (`DELETE`) when the proxy closes.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpTransport {
  readonly type: "http"
  readonly url: string
  /** Sent with every request, e.g. `{ Authorization: Redacted.make("Bearer …") }`. */
  readonly headers?: Readonly<Record<string, Secret>> | undefined
}

/**
 * A server reached over the legacy HTTP+SSE transport (the MCP SDK's `SSEClientTransport`).
 *
 * @since 0.1.0
 * @category models
 */
export interface SseTransport {
  readonly type: "sse"
  readonly url: string
  /** Sent with every request, the event stream's included. */
  readonly headers?: Readonly<Record<string, Secret>> | undefined
}

/**
 * Any MCP client transport (e.g. the MCP SDK's `WebSocketClientTransport`, or one end of an `InMemoryTransport` pair
 * in tests): `make` is called for every connection attempt and returns a fresh, unstarted transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface CustomTransport {
  readonly type: "custom"
  /** Returns a new MCP client transport (or a Promise of one); called for every connection attempt. */
  readonly make: () => unknown
}

/**
 * How the proxy reaches the upstream server.
 *
 * @since 0.1.0
 * @category models
 */
export type Transport = StdioTransport | HttpTransport | SseTransport | CustomTransport

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The server's name for the CLI: its tools are `mcp__<name>__<tool>` (use the same key in `mcpServers`). */
  readonly name: string
  readonly transport: Transport
  /**
   * When to try again after the connection is lost or an attempt fails (its input is why). It starts over after
   * every successful connection; once it is exhausted the proxy stays disconnected (`retrying: false`). Defaults to
   * exponential backoff from 250 ms, capped at 30 seconds, forever.
   */
  readonly reconnect?: Schedule.Schedule<unknown, string> | undefined
  /** How long one connection attempt (the MCP handshake included) may take. Defaults to 30 seconds. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /**
   * How long the proxy waits for the answer to one forwarded request (restarted by each progress notification);
   * a tool call that runs out answers an `isError` result. Defaults to no limit: the CLI decides how long a call may
   * take (see {@link Options.timeout}) and cancels it, which the proxy forwards.
   */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /**
   * Ping the upstream server this often; a ping that fails or is not answered within the interval counts as a lost
   * connection. A stdio server's exit is noticed at once, an HTTP server's only when a request fails: set this to
   * notice it before the next call. Leave `undefined` for no pings.
   */
  readonly pingInterval?: Duration.DurationInput | undefined
  /**
   * The CLI's own deadline for each call of this server, in milliseconds (≥ 1000), as for in-process servers. Leave
   * `undefined` for none.
   */
  readonly timeout?: number | undefined
  /**
   * What a session does when the CLI does not report the server as connected (the upstream server was never
   * reached): `"fail"` (the default) fails the session with `SdkMcp.McpServerFailed`, `"warn"` logs a warning and
   * the session goes on without the server's tools.
   */
  readonly onConnectFailure?: "fail" | "warn" | undefined
  /** Send the handshake results with `initialize` so that the CLI skips the round trips. Defaults to `true`. */
  readonly manifest?: boolean | undefined
  /** The proxy's `clientInfo` in the upstream handshake. Defaults to `effect-claude-agent-mcp-proxy`. */
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
}

// -------------------------------------------------------------------------------------------------
// status
// -------------------------------------------------------------------------------------------------

/**
 * What the upstream server said about itself in its handshake.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerInfo {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
}

/**
 * The state of the upstream connection:
 *
 * - `Connecting`: an attempt is under way (`attempt` counts from 1 since the last connection).
 * - `Connected`: requests are forwarded; `connection` counts the successful connections (2 after a reconnect).
 * - `Disconnected`: `reason` says why; `retrying` is `false` once the reconnect schedule is exhausted or the proxy
 *   is closed. `failedAttempts` counts the attempts that failed since the last connection.
 *
 * @since 0.1.0
 * @category models
 */
export type Status = Data.TaggedEnum<{
  Connecting: { readonly attempt: number }
  Connected: { readonly serverInfo: ServerInfo; readonly connection: number }
  Disconnected: { readonly reason: string; readonly failedAttempts: number; readonly retrying: boolean }
}>

/**
 * Constructors and matchers of {@link Status} (`Status.$is("Connected")`, `Status.$match({...})`).
 *
 * @since 0.1.0
 * @category models
 */
export const Status: Data.TaggedEnum.Constructor<Status> = internal.Status

// -------------------------------------------------------------------------------------------------
// proxies
// -------------------------------------------------------------------------------------------------

/**
 * A proxy: an `mcpServers` entry (`{ type: "sdk", name, instance }`) for any number of sessions, with the live state
 * of its upstream connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpProxy extends McpSdkServerConfig {
  readonly [TypeId]: TypeId
  readonly name: string
  /** The state of the upstream connection now. */
  readonly status: Effect.Effect<Status>
  /** The state now, then every change. */
  readonly changes: Stream.Stream<Status>
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isMcpProxy: (u: unknown) => u is McpProxy = internal.isMcpProxy

/**
 * Makes a proxy: connects to the upstream server (waiting for the first attempt, successful or not) and keeps the
 * connection, reconnecting as needed, until the scope closes. Fails only when the options are unusable.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<McpProxy, McpProxyError, Scope.Scope> = internal.make

/**
 * The default reconnect schedule: exponential backoff from 250 ms, capped at 30 seconds, forever.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultReconnect: Schedule.Schedule<unknown, string> = internal.defaultReconnect

// -------------------------------------------------------------------------------------------------
// layer
// -------------------------------------------------------------------------------------------------

/**
 * The proxies of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registry {
  readonly proxies: ReadonlyArray<McpProxy>
  /** The proxies by name, ready for `options.mcpServers`. */
  readonly mcpServers: Readonly<Record<string, McpProxy>>
  /** The proxy with this name, if the layer has one. */
  readonly get: (name: string) => Option.Option<McpProxy>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class McpProxies extends Context.Tag("effect-claude-agent/McpProxy/McpProxies")<McpProxies, Registry>() {}

/**
 * Makes the proxies of a {@link layer} (fails when two have the same name).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRegistry: (options: ReadonlyArray<Options>) => Effect.Effect<Registry, McpProxyError, Scope.Scope> =
  internal.makeRegistry

/**
 * Proxies that live as long as the layer: one upstream connection each, shared by every session given
 * `mcpServers` from the {@link Registry} (e.g. the sessions of a `SessionPool`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (...options: ReadonlyArray<Options>): Layer.Layer<McpProxies, McpProxyError> =>
  Layer.scoped(McpProxies, makeRegistry(options))
