import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ClaudeAgent } from "effect-claude-agent"
import type { AgentOptions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import * as internalSdkMcp from "../src/internal/mcp/sdkMcp.js"
import * as McpProxy from "../src/McpProxy.js"
import * as SdkMcp from "../src/SdkMcp.js"
import { memoryUpstream, serveHttp, serveSse } from "./fixtures/mcp-upstream.mjs"
import { expectLogs } from "./support/logs.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/** Runs `script` as the CLI of one session with these options; returns what the script returned. */
const withSession = <A, E>(
  options: AgentOptions.Options,
  script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const result = yield* Deferred.make<A, E>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.exit(script(cli)).pipe(Effect.flatMap((exit) => Deferred.done(result, exit)), Effect.asVoid)
    )
    return yield* Effect.gen(function*() {
      yield* ClaudeAgent.session(options)
      return yield* Deferred.await(result)
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

const toolsCall = (name: string, args: unknown, id: number | string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, _meta: { "claudecode/toolUseId": `toolu_${id}`, progressToken: id } }
})

const mcp = (cli: ScriptedCli.ScriptedCli, server: string, message: object) =>
  cli.request("mcp_message", { server_name: server, message })

/** Waits (polling) until `condition` holds. */
const eventually = (condition: () => boolean, what: string) =>
  Effect.gen(function*() {
    while (!condition()) yield* Effect.sleep("10 millis")
  }).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error(`timed out waiting for ${what}`) }))

/** Waits until the proxy's status satisfies `predicate`; returns that status. */
const statusWhere = (proxy: McpProxy.McpProxy, predicate: (status: McpProxy.Status) => boolean) =>
  proxy.changes.pipe(
    Stream.filter(predicate),
    Stream.runHead,
    Effect.flatten,
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the status never came") })
  )

const clientInfo = { name: "claude-code", version: "2" }

const warnings: Array<unknown> = []

const warningLogger = Logger.make(({ logLevel, message }) => {
  if (logLevel._tag === "Warning") warnings.push(...(Array.isArray(message) ? message : [message]))
})

const textOf = (answer: unknown): string => {
  const text = JSON.stringify(answer)
  return text ?? ""
}

// -------------------------------------------------------------------------------------------------
// forwarding
// -------------------------------------------------------------------------------------------------

describe("McpProxy forwarding", () => {
  it.scopedLive("one upstream connection serves two sessions: handshake (manifest), tools/list, tools/call", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport })
      expect(yield* proxy.status).toEqual(
        McpProxy.Status.Connected({ serverInfo: { name: "upstream-fixture", version: "1.0.0" }, connection: 1 })
      )
      expect(proxy).toMatchObject({ type: "sdk", name: "up" })
      expect(McpProxy.isMcpProxy(proxy)).toBe(true)
      const session = (text: string) =>
        withSession({ mcpServers: { up: proxy } }, (cli) =>
          Effect.gen(function*() {
            const init = yield* cli.initialize
            // both sessions use the same JSON-RPC id: the proxy keeps them apart
            const answer = yield* mcp(cli, "up", toolsCall("shout", { text }, 2))
            const listed = yield* mcp(cli, "up", { jsonrpc: "2.0", id: 3, method: "tools/list" })
            const pong = yield* mcp(cli, "up", { jsonrpc: "2.0", id: 4, method: "ping" })
            return { init, answer, listed, pong }
          }))
      const [one, two] = yield* Effect.all([session("one"), session("two")], { concurrency: 2 })
      expect(one.init["sdkMcpServers"]).toEqual(["up"])
      expect(one.init["sdkMcpServerManifests"]).toMatchObject({
        up: {
          initializeResult: {
            protocolVersion: "2025-11-25",
            serverInfo: { name: "upstream-fixture", version: "1.0.0" },
            // the proxy can announce a changed tool list (after a reconnect) even when the upstream cannot
            capabilities: { tools: { listChanged: true }, logging: {} },
            instructions: "Use shout to shout."
          },
          toolsListResult: { tools: expect.arrayContaining([expect.objectContaining({ name: "shout" })]) }
        }
      })
      expect(one.answer).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "ONE!" }] } }
      })
      expect(two.answer).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "TWO!" }] } }
      })
      expect(two.listed).toMatchObject({ mcp_response: { id: 3, result: { tools: expect.any(Array) } } })
      expect(one.pong).toEqual({ mcp_response: { jsonrpc: "2.0", id: 4, result: {} } })
      expect(upstream.starts()).toBe(1)
      expect([...upstream.calls].sort()).toEqual(["shout:one", "shout:two"])
    }))

  it.scopedLive("the CLI's own handshake over mcp_message; upstream errors come back as JSON-RPC errors", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport, manifest: false })
      const [init, initialized, ack, unknownTool, failed, unknownMethod] = yield* withSession(
        { mcpServers: { up: proxy } },
        (cli) =>
          Effect.gen(function*() {
            const init = yield* cli.initialize
            return [
              init,
              yield* mcp(cli, "up", {
                jsonrpc: "2.0",
                id: 0,
                method: "initialize",
                params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo }
              }),
              yield* mcp(cli, "up", { jsonrpc: "2.0", method: "notifications/initialized" }),
              yield* mcp(cli, "up", toolsCall("nope", {}, 1)),
              yield* mcp(cli, "up", toolsCall("fail", {}, 2)),
              yield* mcp(cli, "up", { jsonrpc: "2.0", id: 3, method: "prompts/list" })
            ] as const
          })
      )
      expect(init["sdkMcpServerManifests"]).toBeUndefined()
      // the version the CLI asked for (the proxy speaks MCP to the upstream server itself)
      expect(initialized).toMatchObject({
        mcp_response: { id: 0, result: { protocolVersion: "2025-06-18", serverInfo: { name: "upstream-fixture" } } }
      })
      expect(ack).toEqual({ mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } })
      expect(unknownTool).toMatchObject({ mcp_response: { id: 1 } })
      expect(textOf(unknownTool)).toContain("Tool nope not found")
      expect(failed).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 2,
          result: { content: [{ type: "text", text: "it failed upstream" }], isError: true }
        }
      })
      // the upstream server's own error, without the MCP SDK's "MCP error <code>: " prefix
      expect(unknownMethod).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found" } }
      })
    }))

  it.scopedLive("progress: upstream notifications/progress reach the CLI with the CLI's own token", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport })
      const [forwarded, answer] = yield* withSession({ mcpServers: { up: proxy } }, (cli) =>
        Effect.gen(function*() {
          const call = yield* Effect.fork(mcp(cli, "up", toolsCall("work", { steps: 2 }, 7)))
          const first = yield* cli.expectControl("mcp_message")
          const second = yield* cli.expectControl("mcp_message")
          return [[first, second], yield* Fiber.join(call)] as const
        }))
      expect(forwarded).toEqual([1, 2].map((progress) => ({
        subtype: "mcp_message",
        server_name: "up",
        message: {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: 7, progress, total: 2, message: `step ${progress}` }
        }
      })))
      expect(answer).toMatchObject({ mcp_response: { id: 7, result: { content: [{ text: "worked 2 steps" }] } } })
    }))

  it.scopedLive("notifications/cancelled from the CLI cancels the request upstream", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport })
      const [answer, ack] = yield* withSession({ mcpServers: { up: proxy } }, (cli) =>
        Effect.gen(function*() {
          const call = yield* Effect.fork(mcp(cli, "up", toolsCall("wait", {}, 3)))
          yield* eventually(() => upstream.waiting.length === 1, "the call to start upstream")
          const ack = yield* mcp(cli, "up", {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: 3, reason: "the user interrupted" }
          })
          return [yield* Fiber.join(call), ack] as const
        }))
      yield* eventually(() => upstream.aborted.length === 1, "the upstream handler to be aborted")
      expect(ack).toEqual({ mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } })
      expect(answer).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 3,
          error: { code: -32000, message: "Request cancelled: the user interrupted" }
        }
      })
    }))

  it.scopedLive("closing the session cancels its calls upstream", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport })
      yield* withSession({ mcpServers: { up: proxy } }, (cli) =>
        Effect.gen(function*() {
          yield* Effect.fork(mcp(cli, "up", toolsCall("wait", {}, 3)))
          yield* eventually(() => upstream.waiting.length === 1, "the call to start upstream")
        }))
      yield* eventually(() => upstream.aborted.length === 1, "the upstream handler to be aborted")
      // the upstream connection is the proxy's, not the session's
      expect(yield* proxy.status).toMatchObject({ _tag: "Connected", connection: 1 })
    }))

  it.scopedLive("server-originated messages: notifications reach every session, requests go to the busy session", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport })
      const result = yield* withSession({ mcpServers: { up: proxy } }, (cli) =>
        Effect.gen(function*() {
          yield* cli.initialize
          yield* Effect.promise(() => upstream.log("hello from upstream"))
          const logged = yield* cli.expectControl("mcp_message")
          upstream.addTool("late")
          const changed = yield* cli.expectControl("mcp_message")
          const call = yield* Effect.fork(mcp(cli, "up", toolsCall("roots", {}, 4)))
          const asked = yield* cli.expectControl("mcp_message")
          const message = asked["message"]
          const id = typeof message === "object" && message !== null && "id" in message ? message.id : undefined
          yield* mcp(cli, "up", { jsonrpc: "2.0", id, result: { roots: [{ uri: "file:///work", name: "work" }] } })
          return { logged, changed, asked, answer: yield* Fiber.join(call) }
        }))
      expect(result.logged).toMatchObject({
        server_name: "up",
        message: { method: "notifications/message", params: { level: "info", data: "hello from upstream" } }
      })
      expect(result.changed).toMatchObject({ message: { method: "notifications/tools/list_changed" } })
      expect(result.asked).toMatchObject({
        server_name: "up",
        message: { jsonrpc: "2.0", id: "mcp-proxy:1", method: "roots/list" }
      })
      expect(result.answer).toMatchObject({
        mcp_response: {
          id: 4,
          result: { content: [{ text: JSON.stringify([{ uri: "file:///work", name: "work" }]) }] }
        }
      })
    }))
})

// -------------------------------------------------------------------------------------------------
// disconnects and reconnects
// -------------------------------------------------------------------------------------------------

describe("McpProxy reconnect", () => {
  it.scopedLive("a lost connection: calls answer isError results, tools/list the last list; the proxy reconnects", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({
        name: "up",
        transport: upstream.transport,
        reconnect: Schedule.spaced("20 millis")
      })
      const result = yield* withSession({ mcpServers: { up: proxy } }, (cli) =>
        Effect.gen(function*() {
          yield* cli.initialize
          const call = yield* Effect.fork(mcp(cli, "up", toolsCall("wait", {}, 2)))
          yield* eventually(() => upstream.waiting.length === 1, "the call to start upstream")
          upstream.setBlocked(true)
          yield* Effect.promise(() => upstream.kill())
          const inFlight = yield* Fiber.join(call)
          const down = yield* statusWhere(proxy, (s) => s._tag === "Disconnected" && s.failedAttempts >= 1)
          const next = yield* mcp(cli, "up", toolsCall("shout", { text: "x" }, 3))
          const listed = yield* mcp(cli, "up", { jsonrpc: "2.0", id: 4, method: "tools/list" })
          const prompts = yield* mcp(cli, "up", { jsonrpc: "2.0", id: 5, method: "prompts/list" })
          // the server comes back with one more tool
          upstream.setExtraTool(true)
          upstream.setBlocked(false)
          const up = yield* statusWhere(proxy, (s) => s._tag === "Connected")
          const changed = yield* cli.expectControl("mcp_message")
          const whisper = yield* mcp(cli, "up", toolsCall("whisper", { text: "QUIET" }, 6))
          return { inFlight, down, next, listed, prompts, up, changed, whisper }
        }))
      expect(result.inFlight).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 2,
          result: {
            content: [{
              type: "text",
              text: "MCP server \"up\" disconnected during the request (the connection closed); the SDK is " +
                "reconnecting, try again later."
            }],
            isError: true
          }
        }
      })
      expect(result.down).toMatchObject({
        _tag: "Disconnected",
        reason: "upstream blocked by the test",
        retrying: true
      })
      expect(result.next).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 3,
          result: {
            content: [{
              type: "text",
              text: "MCP server \"up\" is not connected (upstream blocked by the test); the SDK is reconnecting, try " +
                "again later."
            }],
            isError: true
          }
        }
      })
      expect(result.listed).toMatchObject({
        mcp_response: { id: 4, result: { tools: expect.arrayContaining([expect.objectContaining({ name: "shout" })]) } }
      })
      expect(result.prompts).toMatchObject({ mcp_response: { id: 5, error: { code: -32000 } } })
      expect(result.up).toMatchObject({ _tag: "Connected", connection: 2 })
      expect(result.changed).toMatchObject({ message: { method: "notifications/tools/list_changed" } })
      expect(result.whisper).toMatchObject({ mcp_response: { id: 6, result: { content: [{ text: "quiet..." }] } } })
      expect(upstream.starts()).toBe(2)
    }).pipe(expectLogs([/^WARN MCP server "up" disconnected: the connection closed/])))

  it.scopedLive("a session started while the upstream is away gets the last handshake and tools", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({
        name: "up",
        transport: upstream.transport,
        reconnect: Schedule.spaced("1 hour")
      })
      upstream.setBlocked(true)
      yield* Effect.promise(() => upstream.kill())
      yield* statusWhere(proxy, (s) => s._tag === "Disconnected")
      const [init, call] = yield* withSession(
        { mcpServers: { up: proxy } },
        (cli) => Effect.all([cli.initialize, mcp(cli, "up", toolsCall("shout", { text: "x" }, 1))])
      )
      expect(init["sdkMcpServerManifests"]).toMatchObject({
        up: {
          initializeResult: { serverInfo: { name: "upstream-fixture" } },
          toolsListResult: { tools: expect.any(Array) }
        }
      })
      expect(call).toMatchObject({ mcp_response: { id: 1, result: { isError: true } } })
      expect(textOf(call)).toContain("is not connected (the connection closed)")
    }).pipe(expectLogs([/^WARN MCP server "up" disconnected/])))

  it.scopedLive("never reached: the handshake fails and says why (the CLI reports the server failed)", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      upstream.setBlocked(true)
      const proxy = yield* McpProxy.make({
        name: "up",
        transport: upstream.transport,
        reconnect: Schedule.spaced("1 hour")
      })
      expect(yield* proxy.status).toEqual(
        McpProxy.Status.Disconnected({ reason: "upstream blocked by the test", failedAttempts: 1, retrying: true })
      )
      const [init, handshake, call] = yield* withSession({ mcpServers: { up: proxy } }, (cli) =>
        Effect.all([
          cli.initialize,
          mcp(cli, "up", {
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
          }),
          mcp(cli, "up", toolsCall("shout", { text: "x" }, 1))
        ]))
      expect(init["sdkMcpServers"]).toEqual(["up"])
      expect(init["sdkMcpServerManifests"]).toBeUndefined()
      expect(handshake).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 0,
          error: {
            code: -32000,
            message: "MCP server \"up\" is not connected (upstream blocked by the test); the SDK is " +
              "reconnecting, try again later."
          }
        }
      })
      expect(call).toMatchObject({ mcp_response: { id: 1, result: { isError: true } } })
    }))

  it.scopedLive("never reached: the CLI's 'failed' is McpServerFailed, per onConnectFailure (fail by default)", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      upstream.setBlocked(true)
      const strict = yield* McpProxy.make({ name: "strict", transport: upstream.transport, reconnect: Schedule.stop })
      const lenient = yield* McpProxy.make({
        name: "lenient",
        transport: upstream.transport,
        reconnect: Schedule.stop,
        onConnectFailure: "warn"
      })
      const contribution = yield* internalSdkMcp.contribution({ mcpServers: { strict, lenient } })
      const failure = yield* Effect.fork(contribution.failure ?? Effect.never)
      contribution.onMessage?.({
        type: "system",
        subtype: "init",
        session_id: "s",
        uuid: "u",
        cwd: "/",
        tools: [],
        model: "m",
        permissionMode: "default",
        mcp_servers: [{ name: "strict", status: "failed" }, { name: "lenient", status: "failed" }]
      })
      expect(yield* Fiber.await(failure)).toStrictEqual(
        Exit.fail(new SdkMcp.McpServerFailed({ name: "strict", status: "failed" }))
      )
      yield* eventually(
        () => warnings.some((w) => w instanceof SdkMcp.McpServerFailed && w.name === "lenient"),
        "the warning"
      )
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, warningLogger))))

  it.scopedLive("the reconnect schedule exhausted: the proxy stays disconnected and calls say it gave up", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      upstream.setBlocked(true)
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport, reconnect: Schedule.recurs(1) })
      const final = yield* statusWhere(proxy, (s) => s._tag === "Disconnected" && !s.retrying)
      expect(final).toEqual(
        McpProxy.Status.Disconnected({ reason: "upstream blocked by the test", failedAttempts: 2, retrying: false })
      )
      const call = yield* withSession({ mcpServers: { up: proxy } }, (cli) => mcp(cli, "up", toolsCall("shout", {}, 1)))
      expect(textOf(call)).toContain("the SDK gave up reconnecting")
      // nothing more is attempted
      yield* Effect.sleep("50 millis")
      expect(yield* proxy.status).toEqual(final)
    }).pipe(expectLogs([/^ERROR MCP server "up": the reconnect schedule is exhausted/])))

  it.scopedLive("a stdio server that cannot start: the reason names the spawn error", () =>
    Effect.gen(function*() {
      const proxy = yield* McpProxy.make({
        name: "gone",
        transport: { type: "stdio", command: "/nonexistent/mcp-server" },
        reconnect: Schedule.stop
      })
      expect(yield* proxy.status).toMatchObject({ _tag: "Disconnected", retrying: false })
      expect(yield* Effect.map(proxy.status, (s) => (s._tag === "Disconnected" ? s.reason : ""))).toContain("ENOENT")
    }).pipe(expectLogs([/^ERROR MCP server "gone": the reconnect schedule is exhausted \(spawn/])))

  it.scopedLive("Streamable HTTP: a server that goes away fails the call (isError), and is reconnected to", () =>
    Effect.gen(function*() {
      const first = yield* Effect.promise(() => serveHttp())
      const server = yield* Effect.acquireRelease(
        Effect.sync(() => ({ current: first })),
        (s) => Effect.promise(() => s.current.close())
      )
      const proxy = yield* McpProxy.make({
        name: "web",
        transport: { type: "http", url: first.url, headers: { "x-api-key": Redacted.make("secret") } },
        reconnect: Schedule.spaced("50 millis")
      })
      expect(yield* proxy.status).toMatchObject({ _tag: "Connected", serverInfo: { name: "upstream-fixture" } })
      const result = yield* withSession({ mcpServers: { web: proxy } }, (cli) =>
        Effect.gen(function*() {
          const before = yield* mcp(cli, "web", toolsCall("shout", { text: "http" }, 1))
          yield* Effect.promise(() => server.current.close())
          const during = yield* mcp(cli, "web", toolsCall("shout", { text: "down" }, 2))
          const down = yield* statusWhere(proxy, (s) => s._tag !== "Connected")
          server.current = yield* Effect.promise(() => serveHttp({ port: first.port }))
          const up = yield* statusWhere(proxy, (s) => s._tag === "Connected" && s.connection === 2)
          const after = yield* mcp(cli, "web", toolsCall("shout", { text: "back" }, 3))
          return { before, during, down, up, after }
        }))
      expect(result.before).toMatchObject({ mcp_response: { id: 1, result: { content: [{ text: "HTTP!" }] } } })
      expect(result.during).toMatchObject({ mcp_response: { id: 2, result: { isError: true } } })
      expect(textOf(result.during)).toContain("MCP server \\\"web\\\" disconnected during the request (fetch failed")
      expect(result.down._tag).not.toBe("Connected")
      expect(result.after).toMatchObject({ mcp_response: { id: 3, result: { content: [{ text: "BACK!" }] } } })
      expect(server.current.starts()).toBe(1)
      expect(first.apiKeys.every((key) => key === "secret")).toBe(true)
    }).pipe(expectLogs([/^WARN MCP server "web" disconnected: fetch failed/])))
})

describe("McpProxy remote transports", () => {
  it.scopedLive("Streamable HTTP: pingInterval notices a server gone before any call", () =>
    Effect.gen(function*() {
      const http = yield* Effect.acquireRelease(
        Effect.promise(() => serveHttp()),
        (h) => Effect.promise(() => h.close())
      )
      const proxy = yield* McpProxy.make({
        name: "web",
        transport: { type: "http", url: http.url },
        pingInterval: "100 millis",
        reconnect: Schedule.spaced("1 hour")
      })
      expect(yield* proxy.status).toMatchObject({ _tag: "Connected" })
      yield* Effect.promise(() => http.close())
      const down = yield* statusWhere(proxy, (s) => s._tag === "Disconnected")
      expect(down).toMatchObject({ reason: expect.stringMatching(/^no answer to ping: fetch failed/), retrying: true })
    }).pipe(expectLogs([/^WARN MCP server "web" disconnected: no answer to ping/])))

  it.scopedLive("SSE: the handshake and calls are forwarded; headers (Redacted ones too) go with every request", () =>
    Effect.gen(function*() {
      const sse = yield* Effect.acquireRelease(Effect.promise(() => serveSse()), (s) => Effect.promise(() => s.close()))
      const proxy = yield* McpProxy.make({
        name: "events",
        transport: { type: "sse", url: sse.url, headers: { "x-api-key": Redacted.make("secret") } }
      })
      expect(yield* proxy.status).toMatchObject({ _tag: "Connected", serverInfo: { name: "upstream-fixture" } })
      const answer = yield* withSession(
        { mcpServers: { events: proxy } },
        (cli) => mcp(cli, "events", toolsCall("shout", { text: "sse" }, 1))
      )
      expect(answer).toMatchObject({ mcp_response: { id: 1, result: { content: [{ text: "SSE!" }] } } })
      expect(sse.apiKeys.length).toBeGreaterThan(2)
      expect(sse.apiKeys.every((key) => key === "secret")).toBe(true)
    }))
})

// -------------------------------------------------------------------------------------------------
// options, layer, scope
// -------------------------------------------------------------------------------------------------

describe("McpProxy options and layer", () => {
  it.scopedLive("unusable options fail with McpProxyError", () =>
    Effect.gen(function*() {
      const badUrl = yield* Effect.flip(McpProxy.make({ name: "x", transport: { type: "http", url: "not a url" } }))
      expect(badUrl).toBeInstanceOf(McpProxy.McpProxyError)
      expect(badUrl.message).toBe("InvalidOptions for MCP proxy \"x\": invalid URL: not a url")
      const noName = yield* Effect.flip(McpProxy.make({ name: "", transport: { type: "stdio", command: "x" } }))
      expect(noName.reason).toBe("InvalidOptions")
      const upstream = memoryUpstream()
      const twice = yield* Effect.flip(
        Layer.build(McpProxy.layer(
          { name: "a", transport: upstream.transport },
          { name: "a", transport: upstream.transport }
        ))
      )
      expect(twice.message).toBe("InvalidOptions for MCP proxy \"a\": two proxies have this name")
    }))

  it.live("layer: the proxies by name; closing the layer closes the upstream connections", () =>
    Effect.gen(function*() {
      const one = memoryUpstream()
      const two = memoryUpstream({ name: "second" })
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        McpProxy.layer({ name: "one", transport: one.transport }, { name: "two", transport: two.transport }),
        scope
      )
      const registry = yield* Effect.provide(McpProxy.McpProxies, context)
      expect(Object.keys(registry.mcpServers)).toEqual(["one", "two"])
      const second = registry.get("two")
      expect(second._tag).toBe("Some")
      const proxy = registry.mcpServers["two"]!
      expect(yield* proxy.status).toMatchObject({ _tag: "Connected", serverInfo: { name: "second" } })
      yield* Scope.close(scope, Exit.void)
      expect(yield* proxy.status).toEqual(
        McpProxy.Status.Disconnected({ reason: "the proxy is closed", failedAttempts: 0, retrying: false })
      )
      const call = yield* withSession(
        { mcpServers: registry.mcpServers },
        (cli) => mcp(cli, "two", toolsCall("shout", { text: "x" }, 1))
      )
      expect(call).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 1,
          result: {
            content: [{ type: "text", text: "MCP server \"two\" is not available: the proxy is closed." }],
            isError: true
          }
        }
      })
      expect(one.starts() + two.starts()).toBe(2)
    }))

  it.live("requestTimeout: a call that runs out answers an isError result", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport, requestTimeout: "100 millis" })
      const call = yield* withSession({ mcpServers: { up: proxy } }, (cli) => mcp(cli, "up", toolsCall("wait", {}, 1)))
      expect(call).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 1,
          result: { content: [{ type: "text", text: "MCP server \"up\" did not answer within 100ms" }], isError: true }
        }
      })
      yield* eventually(() => upstream.aborted.length === 1, "the upstream call to be cancelled")
    }).pipe(Effect.scoped))
})

// -------------------------------------------------------------------------------------------------
// sessions: setMcpServers and mcpServerStatus
// -------------------------------------------------------------------------------------------------

describe("McpProxy in Session.setMcpServers / mcpServerStatus", () => {
  /** A session on a scripted CLI that reports `cliStatus()` for `mcp_status`; the test drives both sides. */
  const sessionWith = (options: AgentOptions.Options, cliStatus: () => ReadonlyArray<object>) =>
    Effect.gen(function*() {
      const handle = yield* Deferred.make<ScriptedCli.ScriptedCli>()
      const layer = ScriptedCli.layer((cli) => Deferred.succeed(handle, cli), {
        responders: { mcp_status: () => Effect.sync(() => ({ mcpServers: cliStatus() })) }
      })
      const session = yield* ClaudeAgent.session(options).pipe(Effect.provide(layer))
      return { session, cli: yield* Deferred.await(handle) }
    })

  it.scopedLive("a proxy added by setMcpServers is served like one given at start-up", () =>
    Effect.gen(function*() {
      const upstream = memoryUpstream()
      const proxy = yield* McpProxy.make({ name: "up", transport: upstream.transport, timeout: 4000 })
      const { cli, session } = yield* sessionWith({}, () => [])
      yield* session.setMcpServers({ up: proxy })
      const sent = (yield* cli.received).flatMap((f) =>
        f.type === "control_request" && f.request.subtype === "mcp_set_servers" ? [f.request["servers"]] : []
      )
      expect(sent).toEqual([{ up: { type: "sdk", name: "up", timeout: 4000 } }])
      expect(yield* mcp(cli, "up", toolsCall("shout", { text: "late" }, 1))).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "LATE!" }] } }
      })
    }))

  it.scopedLive("mcpServerStatus: a proxy's live state (pending / failed, and why) replaces the CLI's connected", () =>
    Effect.gen(function*() {
      // `up`: its next connection attempt hangs once `hang` is set
      const upstream = memoryUpstream()
      let hang = false
      const up = yield* McpProxy.make({
        name: "up",
        transport: { type: "custom", make: () => (hang ? new Promise<never>(() => {}) : upstream.transport.make()) },
        reconnect: Schedule.recurs(1),
        connectTimeout: "1 hour"
      })
      // `later`: added by setMcpServers, never reconnected
      const second = memoryUpstream({ name: "second" })
      const later = yield* McpProxy.make({ name: "later", transport: second.transport, reconnect: Schedule.recurs(0) })
      const serverInfo = { name: "upstream-fixture", version: "1.0.0" }
      let cliStatus: ReadonlyArray<object> = [
        { name: "up", status: "connected", serverInfo, tools: [{ name: "shout" }] },
        { name: "later", status: "connected" },
        { name: "plain", status: "connected" }
      ]
      const { session } = yield* sessionWith({ mcpServers: { up } }, () => cliStatus)
      yield* session.setMcpServers({ up, later })
      // all up: the CLI's statuses as they are
      expect(yield* session.mcpServerStatus).toEqual(cliStatus)

      hang = true
      yield* Effect.promise(() => upstream.kill())
      yield* statusWhere(up, (s) => s._tag === "Connecting")
      second.setBlocked(true)
      yield* Effect.promise(() => second.kill())
      yield* statusWhere(later, (s) => s._tag === "Disconnected" && !s.retrying)
      expect(yield* session.mcpServerStatus).toEqual([
        {
          name: "up",
          status: "pending",
          serverInfo,
          tools: [{ name: "shout" }],
          error: "MCP server \"up\" is not connected (the connection closed); the SDK is reconnecting, try again later."
        },
        {
          name: "later",
          status: "failed",
          error: "MCP server \"later\" is not connected (the connection closed); the SDK gave up reconnecting."
        },
        { name: "plain", status: "connected" }
      ])

      // what the CLI says of a server it disabled or saw fail is kept
      cliStatus = [{ name: "up", status: "disabled" }, { name: "later", status: "failed", error: "Connection closed" }]
      expect(yield* session.mcpServerStatus).toEqual(cliStatus)
    }).pipe(
      expectLogs([
        /^WARN MCP server "up" disconnected/,
        /^WARN MCP server "later" disconnected/,
        /^ERROR MCP server "later": the reconnect schedule is exhausted/
      ])
    ))
})
