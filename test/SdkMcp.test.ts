import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { ClaudeAgent } from "effect-claude-agent"
import type { AgentOptions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import * as internal from "../src/internal/mcp/sdkMcp.js"
import * as SdkMcp from "../src/SdkMcp.js"
import { expectLogs } from "./support/logs.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const jsonSchema = (schema: Schema.Schema.Any) => SdkMcp.toJsonSchema(schema)

/**
 * Imports a module without its typings: the MCP SDK's (and zod's) declarations do not compile under this repository's
 * `skipLibCheck: false`, and a computed specifier keeps TypeScript from loading them.
 */
const importUntyped = (specifier: string): Promise<unknown> => import(specifier)

const Add = Schema.Struct({ a: Schema.Number, b: Schema.Number })

const add = SdkMcp.tool("add", "Adds two numbers", Add, ({ a, b }) => Effect.succeed(`${a + b}`))

/** A tool "slow" that never answers: `started` once it runs, `interrupted` once it is interrupted. */
const slowTool = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<void>()
  const slow = SdkMcp.tool("slow", "", Schema.Struct({}), () =>
    Deferred.succeed(started, undefined).pipe(
      Effect.zipRight(Effect.never),
      Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
    ))
  return { slow, started, interrupted }
})

/** Runs `script` as the CLI of one session with these options; returns what the script returned. */
const withSession = <A>(
  options: AgentOptions.Options,
  script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<A, ScriptedCli.ScriptError>
) =>
  Effect.gen(function*() {
    const result = yield* Deferred.make<A, ScriptedCli.ScriptError>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.exit(script(cli)).pipe(Effect.flatMap((exit) => Deferred.done(result, exit)), Effect.asVoid)
    )
    return yield* Effect.gen(function*() {
      yield* ClaudeAgent.session(options)
      return yield* Deferred.await(result)
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

const toolsCall = (name: string, args: unknown, id: number | string = 2, meta: object = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, _meta: { "claudecode/toolUseId": `toolu_${id}`, progressToken: id, ...meta } }
})

const mcp = (cli: ScriptedCli.ScriptedCli, server: string, message: object) =>
  cli.request("mcp_message", { server_name: server, message })

/** A server "jobs" whose tool "work" reports progress, then waits until `release` runs. */
const progressServer = Effect.gen(function*() {
  const gate = yield* Deferred.make<void>()
  const work = SdkMcp.tool("work", "", Schema.Struct({}), (_, extra) =>
    Effect.gen(function*() {
      yield* extra.progress(1, { total: 2, message: "halfway" })
      yield* Deferred.await(gate)
      return "done"
    }))
  const jobs = yield* SdkMcp.createSdkMcpServer({ name: "jobs", tools: [work] })
  return { jobs, release: Deferred.succeed(gate, undefined) }
})

/** Calls "work" as the CLI would; the mcp_message the SDK sent meanwhile, and the call's answer. */
const callWithProgress = (cli: ScriptedCli.ScriptedCli, release: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    const call = yield* Effect.fork(mcp(cli, "jobs", toolsCall("work", {}, 7)))
    const forwarded = yield* cli.expectControl("mcp_message")
    yield* release
    return [forwarded, yield* Fiber.join(call)] as const
  })

/** What the CLI gets for "work"'s progress. */
const forwardedProgress = {
  subtype: "mcp_message",
  server_name: "jobs",
  message: {
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 7, progress: 1, total: 2, message: "halfway" }
  }
}

// -------------------------------------------------------------------------------------------------
// JSON Schema
// -------------------------------------------------------------------------------------------------

describe("SdkMcp.toJsonSchema", () => {
  it.effect("an object with nested objects, optional fields, arrays, literals, enums and descriptions", () =>
    Effect.gen(function*() {
      enum Color {
        Red = "red",
        Blue = "blue"
      }
      const schema = Schema.Struct({
        query: Schema.String.annotations({ description: "what to look for" }),
        limit: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 50))),
        tags: Schema.Array(Schema.String),
        mode: Schema.Literal("fast", "thorough"),
        color: Schema.Enums(Color),
        filter: Schema.Struct({
          path: Schema.String,
          depth: Schema.optional(Schema.Number)
        }).annotations({ description: "where to look" })
      }).annotations({ title: "Search", description: "search the code" })
      const json = yield* jsonSchema(schema)
      expect(json).toMatchObject({
        type: "object",
        title: "Search",
        description: "search the code",
        required: ["query", "tags", "mode", "color", "filter"],
        properties: {
          query: { type: "string", description: "what to look for" },
          limit: { type: "integer", minimum: 1, maximum: 50 },
          tags: { type: "array", items: { type: "string" } },
          mode: { type: "string", enum: ["fast", "thorough"] },
          color: { anyOf: [{ enum: ["red"] }, { enum: ["blue"] }] },
          filter: {
            type: "object",
            description: "where to look",
            required: ["path"],
            properties: { path: { type: "string" }, depth: { type: "number" } }
          }
        }
      })
      expect(JSON.stringify(json)).not.toContain("$ref")
    }))

  it.effect("a Class (a $ref-only root) and shared definitions are inlined", () =>
    Effect.gen(function*() {
      class Point extends Schema.Class<Point>("Point")({ x: Schema.Number, y: Schema.Number }) {}
      const root = yield* jsonSchema(Point)
      expect(root).toEqual({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        required: ["x", "y"],
        properties: { x: { type: "number" }, y: { type: "number" } },
        additionalProperties: false
      })
      const nested = yield* jsonSchema(Schema.Struct({ from: Point, to: Point, n: Schema.NumberFromString }))
      expect(nested).not.toHaveProperty("$defs")
      expect(nested).toMatchObject({
        properties: {
          from: { type: "object", required: ["x", "y"] },
          to: { type: "object", required: ["x", "y"] },
          n: { type: "string" }
        }
      })
    }))

  it.effect("recursive definitions stay under $defs", () =>
    Effect.gen(function*() {
      interface Tree {
        readonly value: number
        readonly children: ReadonlyArray<Tree>
      }
      const Tree: Schema.Schema<Tree> = Schema.Struct({
        value: Schema.Number,
        children: Schema.Array(Schema.suspend(() => Tree))
      }).annotations({ identifier: "Tree" })
      const json = yield* jsonSchema(Schema.Struct({ root: Tree }))
      expect(json).toMatchObject({
        type: "object",
        properties: {
          root: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/Tree" } } } }
        },
        $defs: { Tree: { type: "object", required: ["value", "children"] } }
      })
    }))

  it.effect("an empty struct is an object without properties", () =>
    Effect.gen(function*() {
      expect(yield* jsonSchema(Schema.Struct({}))).toMatchObject({ type: "object", properties: {} })
    }))

  it.effect("a schema that is not an object, or has no JSON Schema, fails with SdkMcpError", () =>
    Effect.gen(function*() {
      const union = yield* Effect.flip(jsonSchema(Schema.Union(Schema.Struct({ a: Schema.String }), Add)))
      expect(union).toBeInstanceOf(SdkMcp.SdkMcpError)
      expect(union).toMatchObject({ reason: "InvalidInputSchema" })
      expect(union.description).toContain("must describe an object")
      const declared = yield* Effect.flip(jsonSchema(Schema.Struct({ m: Schema.instanceOf(Map) })))
      expect(declared).toMatchObject({ reason: "InvalidInputSchema" })
      expect(declared.description).toContain("Missing annotation")
    }))
})

// -------------------------------------------------------------------------------------------------
// tools
// -------------------------------------------------------------------------------------------------

describe("SdkMcp.tool / callTool", () => {
  it.effect("decodes the input (encoded side) and turns a string into a text block", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const t = SdkMcp.tool(
        "when",
        "Parses a date",
        Schema.Struct({ at: Schema.Date, n: Schema.NumberFromString }),
        (input, extra) =>
          Effect.sync(() => {
            seen.push(input, extra.toolUseId)
            return `year ${input.at.getUTCFullYear()}, n ${input.n + 1}`
          })
      )
      const result = yield* SdkMcp.callTool(t, { at: "2024-02-03T00:00:00Z", n: "41" }, { toolUseId: "toolu_1" })
      expect(result).toEqual({ content: [{ type: "text", text: "year 2024, n 42" }] })
      expect(seen).toEqual([{ at: new Date("2024-02-03T00:00:00Z"), n: 41 }, "toolu_1"])
    }))

  it.effect("a full CallToolResult is passed through", () =>
    Effect.gen(function*() {
      const t = SdkMcp.tool("pic", "A picture", Schema.Struct({}), () =>
        Effect.succeed({
          content: [SdkMcp.text("here"), SdkMcp.image("aGk=", "image/png")],
          structuredContent: { ok: true }
        }))
      expect(yield* SdkMcp.callTool(t, {})).toEqual({
        content: [{ type: "text", text: "here" }, { type: "image", data: "aGk=", mimeType: "image/png" }],
        structuredContent: { ok: true }
      })
    }))

  it.effect("invalid input is an isError result that names every problem", () =>
    Effect.gen(function*() {
      let called = false
      const t = SdkMcp.tool("add", "Adds", Add, () => Effect.sync(() => (called = true, "")))
      const result = yield* SdkMcp.callTool(t, { a: "one" })
      expect(result.isError).toBe(true)
      const message = result.content[0]?.type === "text" ? result.content[0].text : ""
      expect(message).toBe([
        "Invalid input for tool add:",
        "{ readonly a: number; readonly b: number }",
        "├─ [\"a\"]",
        "│  └─ Expected number, actual \"one\"",
        "└─ [\"b\"]",
        "   └─ is missing"
      ].join("\n"))
      expect(called).toBe(false)
      // no arguments at all are decoded as {}
      expect((yield* SdkMcp.callTool(t, undefined)).isError).toBe(true)
    }))

  it.effect("a failure, a defect and a throw are isError results", () =>
    Effect.gen(function*() {
      class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { id: Schema.Number }) {}
      const fails = SdkMcp.tool("fails", "", Schema.Struct({}), () => Effect.fail(new Error("no luck")))
      const tagged = SdkMcp.tool("tagged", "", Schema.Struct({}), () => Effect.fail(new NotFound({ id: 3 })))
      const dies = SdkMcp.tool("dies", "", Schema.Struct({}), () => Effect.die("kaput"))
      const throws = SdkMcp.tool("throws", "", Schema.Struct({}), (): Effect.Effect<string> => {
        throw new Error("thrown")
      })
      expect(yield* SdkMcp.callTool(fails, {})).toEqual(SdkMcp.errorResult("no luck"))
      expect(yield* SdkMcp.callTool(tagged, {})).toEqual(SdkMcp.errorResult("NotFound: { \"id\": 3 }"))
      expect(yield* SdkMcp.callTool(dies, {})).toEqual(SdkMcp.errorResult("Tool dies failed unexpectedly: kaput"))
      expect(yield* SdkMcp.callTool(throws, {})).toEqual(SdkMcp.errorResult("Tool throws failed unexpectedly: thrown"))
    }))

  it.effect("a handler past its timeout is an isError result and is interrupted", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const slow = SdkMcp.tool(
        "slow",
        "",
        Schema.Struct({}),
        () => Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))),
        { timeout: "2 seconds" }
      )
      const fiber = yield* Effect.fork(SdkMcp.callTool(slow, {}))
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(fiber)).toEqual(SdkMcp.errorResult("Tool slow timed out after 2s"))
      yield* Deferred.await(interrupted)
      // the default is 60 seconds
      const fiber2 = yield* Effect.fork(SdkMcp.callTool({ ...slow, options: {} }, {}))
      yield* TestClock.adjust("59 seconds")
      expect(fiber2.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber2)).toEqual(SdkMcp.errorResult("Tool slow timed out after 1m"))
    }))

  it.effect("createSdkMcpServer lists the tools and rejects bad names", () =>
    Effect.gen(function*() {
      const config = yield* SdkMcp.createSdkMcpServer({
        name: "calc",
        version: "2.0.0",
        tools: [
          add,
          SdkMcp.tool("ping", "Pings", Schema.Struct({}), () => Effect.succeed("pong"), {
            annotations: { readOnlyHint: true },
            searchHint: "network",
            alwaysLoad: true
          })
        ]
      })
      expect(config).toMatchObject({ type: "sdk", name: "calc" })
      const instance = config.instance
      expect(SdkMcp.isSdkMcpServer(instance)).toBe(true)
      if (!SdkMcp.isSdkMcpServer(instance)) return
      expect(instance.version).toBe("2.0.0")
      expect(instance.tools).toEqual([
        {
          name: "add",
          description: "Adds two numbers",
          inputSchema: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            required: ["a", "b"],
            properties: { a: { type: "number" }, b: { type: "number" } },
            additionalProperties: false
          }
        },
        {
          name: "ping",
          description: "Pings",
          inputSchema: expect.objectContaining({ type: "object" }),
          annotations: { readOnlyHint: true },
          _meta: { "anthropic/searchHint": "network", "anthropic/alwaysLoad": true }
        }
      ])
      const duplicate = yield* Effect.flip(SdkMcp.createSdkMcpServer({ name: "calc", tools: [add, add] }))
      expect(duplicate).toMatchObject({ _tag: "SdkMcpError", reason: "DuplicateToolName", server: "calc", tool: "add" })
      const badName = SdkMcp.tool("not a name", "", Schema.Struct({}), () => Effect.succeed(""))
      expect(yield* Effect.flip(SdkMcp.createSdkMcpServer({ name: "calc", tools: [badName] }))).toMatchObject({
        reason: "InvalidToolName"
      })
      const badSchema = SdkMcp.tool("bad", "", Schema.String, () => Effect.succeed(""))
      expect(yield* Effect.flip(SdkMcp.createSdkMcpServer({ name: "calc", tools: [badSchema] }))).toMatchObject({
        reason: "InvalidInputSchema",
        tool: "bad"
      })
    }))
})

// -------------------------------------------------------------------------------------------------
// sessions (scripted CLI)
// -------------------------------------------------------------------------------------------------

describe("SdkMcp in a session", () => {
  it.live("initialize lists the servers, with their handshake results (manifests) and configs", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({
        name: "calc",
        tools: [add],
        instructions: "Use add.",
        timeout: 5000
      })
      const other = yield* SdkMcp.createSdkMcpServer({ name: "other", manifest: false })
      const init = yield* withSession(
        { mcpServers: { calc, other, external: { command: "true" } } },
        (cli) => cli.initialize
      )
      expect(init["sdkMcpServers"]).toEqual(["calc", "other"])
      expect(init["sdkMcpServerConfigs"]).toEqual({ calc: { timeout: 5000 } })
      expect(init["sdkMcpServerManifests"]).toEqual({
        calc: {
          initializeResult: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "calc", version: "1.0.0" },
            instructions: "Use add."
          },
          toolsListResult: {
            tools: [{
              name: "add",
              description: "Adds two numbers",
              inputSchema: expect.objectContaining({ type: "object", required: ["a", "b"] })
            }]
          }
        }
      })
    }))

  it.live("no SDK servers: nothing in initialize, and mcp_message for any server is an error", () =>
    Effect.gen(function*() {
      const [init, answer] = yield* withSession({}, (cli) =>
        Effect.all([
          cli.initialize,
          cli.requestRaw("mcp_message", { server_name: "calc", message: toolsCall("add", {}) })
        ]))
      expect(init).not.toHaveProperty("sdkMcpServers")
      expect(answer).toMatchObject({ subtype: "error", error: "SDK MCP server not found: calc" })
    }))

  it.live("mcp_message is routed by server_name and answered with { mcp_response }", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      const upper = SdkMcp.tool("upper", "Upper-cases", Schema.Struct({ s: Schema.String }), ({ s }) =>
        Effect.succeed(s.toUpperCase()))
      const text = yield* SdkMcp.createSdkMcpServer({ name: "text", tools: [upper] })
      const answers = yield* withSession({ mcpServers: { calc, text } }, (cli) =>
        Effect.all([
          mcp(cli, "calc", toolsCall("add", { a: 1, b: 2 }, 2)),
          mcp(cli, "text", toolsCall("upper", { s: "hi" }, 2)),
          mcp(cli, "text", { jsonrpc: "2.0", id: 3, method: "tools/list" }),
          mcp(cli, "calc", toolsCall("upper", { s: "hi" }, 4))
        ]))
      expect(answers[0]).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "3" }] } }
      })
      expect(answers[1]).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "HI" }] } }
      })
      expect(answers[2]).toMatchObject({ mcp_response: { id: 3, result: { tools: [{ name: "upper" }] } } })
      expect(answers[3]).toMatchObject({
        mcp_response: { jsonrpc: "2.0", id: 4, error: { code: -32602, message: "Tool upper not found" } }
      })
    }))

  it.live("the CLI's own handshake works too; notifications are acknowledged with id 0", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add], manifest: false })
      const [initialized, ack, listed] = yield* withSession({ mcpServers: { calc } }, (cli) =>
        Effect.all([
          mcp(cli, "calc", {
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "claude-code", version: "2" }
            }
          }),
          mcp(cli, "calc", { jsonrpc: "2.0", method: "notifications/initialized" }),
          mcp(cli, "calc", { jsonrpc: "2.0", id: 1, method: "tools/list" })
        ]))
      expect(initialized).toMatchObject({
        mcp_response: { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-11-25", serverInfo: { name: "calc" } } }
      })
      expect(ack).toEqual({ mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } })
      expect(listed).toMatchObject({ mcp_response: { id: 1, result: { tools: [{ name: "add" }] } } })
    }))

  it.live("an unknown server gets the official error; a malformed request too", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      const [unknown, malformed] = yield* withSession({ mcpServers: { calc } }, (cli) =>
        Effect.all([
          cli.requestRaw("mcp_message", { server_name: "nope", message: toolsCall("add", {}) }),
          cli.requestRaw("mcp_message", { server_name: "calc" })
        ]))
      expect(unknown).toMatchObject({ subtype: "error", error: "SDK MCP server not found: nope" })
      expect(malformed).toMatchObject({ subtype: "error", error: "Missing server_name or message for MCP request" })
    }))

  it.live("handler errors and timeouts come back as isError results over the wire", () =>
    Effect.gen(function*() {
      const fails = SdkMcp.tool("fails", "", Schema.Struct({}), () => Effect.fail("nope"))
      const slow = SdkMcp.tool("slow", "", Schema.Struct({}), () => Effect.as(Effect.never, ""))
      const misc = yield* SdkMcp.createSdkMcpServer({ name: "misc", tools: [fails, slow], toolTimeout: "100 millis" })
      const [failed, timedOut, invalid] = yield* withSession({ mcpServers: { misc } }, (cli) =>
        Effect.all([
          mcp(cli, "misc", toolsCall("fails", {}, 2)),
          mcp(cli, "misc", toolsCall("slow", {}, 3)),
          mcp(cli, "misc", toolsCall("fails", "not an object", 4))
        ], { concurrency: "unbounded" }))
      expect(failed).toEqual({ mcp_response: { jsonrpc: "2.0", id: 2, result: SdkMcp.errorResult("nope") } })
      expect(timedOut).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 3, result: SdkMcp.errorResult("Tool slow timed out after 100ms") }
      })
      // the MCP SDK's own request validation (arguments must be an object)
      expect(invalid).toMatchObject({ mcp_response: { id: 4, error: { code: -32603 } } })
    }))

  it.live("server-originated messages (progress) are forwarded to the CLI as mcp_message requests", () =>
    Effect.gen(function*() {
      const { jobs, release } = yield* progressServer
      const [forwarded, answer] = yield* withSession({ mcpServers: { jobs } }, (cli) => callWithProgress(cli, release))
      expect(forwarded).toEqual(forwardedProgress)
      expect(answer).toMatchObject({ mcp_response: { id: 7, result: { content: [{ type: "text", text: "done" }] } } })
    }))

  it.live("notifications/cancelled from the CLI interrupts the call and settles its request", () =>
    Effect.gen(function*() {
      const { slow, started, interrupted } = yield* slowTool
      const wait = yield* SdkMcp.createSdkMcpServer({ name: "wait", tools: [slow] })
      const [answer, ack] = yield* withSession({ mcpServers: { wait } }, (cli) =>
        Effect.gen(function*() {
          const call = yield* Effect.fork(mcp(cli, "wait", toolsCall("slow", {}, 2)))
          yield* Deferred.await(started)
          const ack = yield* mcp(cli, "wait", {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: 2, reason: "SdkError: Request timed out" }
          })
          return [yield* Fiber.join(call), ack] as const
        }))
      yield* Deferred.await(interrupted)
      expect(ack).toEqual({ mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } })
      expect(answer).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 2,
          error: { code: -32000, message: "Request cancelled: SdkError: Request timed out" }
        }
      })
    }))

  it.live("a control_cancel_request for the mcp_message interrupts the call", () =>
    Effect.gen(function*() {
      const { slow, started, interrupted } = yield* slowTool
      const wait = yield* SdkMcp.createSdkMcpServer({ name: "wait", tools: [slow] })
      yield* withSession({ mcpServers: { wait } }, (cli) =>
        Effect.gen(function*() {
          yield* Effect.fork(mcp(cli, "wait", toolsCall("slow", {}, 2)))
          yield* Deferred.await(started)
          yield* cli.cancel("cli_1")
          yield* Deferred.await(interrupted)
        }))
    }))

  it.live("closing the session interrupts the calls in flight and closes the connection", () =>
    Effect.gen(function*() {
      const { slow, started, interrupted } = yield* slowTool
      const wait = yield* SdkMcp.createSdkMcpServer({ name: "wait", tools: [slow] })
      const layer = ScriptedCli.layer((cli) => Effect.asVoid(Effect.fork(mcp(cli, "wait", toolsCall("slow", {}, 2)))))
      yield* Effect.gen(function*() {
        yield* ClaudeAgent.session({ mcpServers: { wait } })
        yield* Deferred.await(started)
      }).pipe(Effect.scoped, Effect.provide(layer))
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))

  it.live("closing the session closes the connection of a raw instance, which can then connect again", () =>
    Effect.gen(function*() {
      let connects = 0
      let closes = 0
      const raw: AgentOptions.SdkMcpServerInstance = {
        connect: (transport) => {
          if (!internal.isTransport(transport)) return Promise.reject(new Error("not a transport"))
          connects++
          transport.onclose = () => closes++
          transport.onmessage = (message) => {
            if (Predicate.hasProperty(message, "id")) {
              void transport.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "nope" } })
            }
          }
          return transport.start()
        },
        close: () => Promise.resolve()
      }
      const options = { mcpServers: { raw: { type: "sdk", name: "raw", instance: raw } } } as const
      yield* withSession(options, () => Effect.void)
      expect([connects, closes]).toEqual([1, 1])
      yield* withSession(options, () => Effect.void)
      expect([connects, closes]).toEqual([2, 2])
    }))

  it.live("services captured by createSdkMcpServer reach the handler", () =>
    Effect.gen(function*() {
      class Prefix extends Context.Tag("test/Prefix")<Prefix, string>() {}
      const say = SdkMcp.tool("say", "", Schema.Struct({ s: Schema.String }), ({ s }) =>
        Effect.map(Prefix, (prefix) =>
          `${prefix}${s}`))
      const talk = yield* SdkMcp.createSdkMcpServer({ name: "talk", tools: [say] }).pipe(
        Effect.provideService(Prefix, "> ")
      )
      const answer = yield* withSession(
        { mcpServers: { talk } },
        (cli) =>
          mcp(cli, "talk", toolsCall("say", { s: "hi" }))
      )
      expect(answer).toMatchObject({ mcp_response: { result: { content: [{ type: "text", text: "> hi" }] } } })
    }))

  it.live("a raw instance that cannot connect: requests get a JSON-RPC error", () =>
    Effect.gen(function*() {
      const broken: AgentOptions.SdkMcpServerInstance = {
        connect: () => Promise.reject(new Error("cannot connect")),
        close: () => Promise.resolve()
      }
      const [init, answer] = yield* withSession(
        { mcpServers: { broken: { type: "sdk", name: "broken", instance: broken } } },
        (cli) => Effect.all([cli.initialize, mcp(cli, "broken", { jsonrpc: "2.0", id: 0, method: "initialize" })])
      )
      expect(init["sdkMcpServers"]).toEqual(["broken"])
      expect(init).not.toHaveProperty("sdkMcpServerManifests")
      expect(answer).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 0,
          error: { code: -32603, message: "SDK MCP server broken is not connected: cannot connect" }
        }
      })
    }).pipe(expectLogs([/^WARN SDK MCP server "broken" could not be connected/])))

  it.live("a server not connected in system/init is a McpServerFailed warning with onConnectFailure: warn", () =>
    Effect.gen(function*() {
      const warnings: Array<unknown> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(...(Array.isArray(message) ? message : [message]))
      })
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add], onConnectFailure: "warn" })
      const other = yield* SdkMcp.createSdkMcpServer({ name: "other", onConnectFailure: "warn" })
      yield* withSession({ mcpServers: { calc, other } }, (cli) =>
        Effect.gen(function*() {
          yield* cli.init({ mcp_servers: [{ name: "calc", status: "failed", source: "sdk" }] })
          yield* cli.init({ mcp_servers: [{ name: "calc", status: "failed", source: "sdk" }] })
          yield* Effect.sleep("50 millis")
        })).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      // once per server
      expect(warnings.filter(Predicate.isTagged("McpServerFailed"))).toEqual([
        new SdkMcp.McpServerFailed({ name: "calc", status: "failed" }),
        new SdkMcp.McpServerFailed({ name: "other", status: "missing" })
      ])
    }))

  // the CLI goes on after reporting the failure (no exit, no result): the readers must not wait for it
  const failedThenSilent = (cli: ScriptedCli.ScriptedCli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.init({ mcp_servers: [{ name: "calc", status: "failed", source: "sdk" }] })
      yield* cli.assistant("still here")
      yield* Effect.never
    })

  it.live("a start-up failure while the CLI runs on: Session.turn hands out what arrived, then fails with it", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      const exit = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session({ mcpServers: { calc } })
        const seen: Array<string> = []
        const failure = yield* session.turn("hi").pipe(
          Stream.runForEach((m) => Effect.sync(() => void seen.push(m.type))),
          Effect.flip
        )
        return { seen, failure }
      }).pipe(Effect.scoped, Effect.provide(ScriptedCli.layer(failedThenSilent)), Effect.timeout("5 seconds"))
      expect(exit.failure).toStrictEqual(new SdkMcp.McpServerFailed({ name: "calc", status: "failed" }))
      expect(exit.seen).toContain("system")
    }).pipe(expectLogs([/^ERROR SDK MCP server "calc" is not connected \(status: failed\)/])))

  it.live("a start-up failure while the CLI runs on: query fails with it", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      const failure = yield* ClaudeAgent.query("hi", { mcpServers: { calc } }).pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.provide(ScriptedCli.layer(failedThenSilent)),
        Effect.timeout("5 seconds")
      )
      expect(failure).toStrictEqual(new SdkMcp.McpServerFailed({ name: "calc", status: "failed" }))
    }).pipe(expectLogs([/^ERROR SDK MCP server "calc" is not connected \(status: failed\)/])))

  it.scoped("the first reason to stop wins: the prompt stream failed before the start-up failure arrived", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      const script = (cli: ScriptedCli.ScriptedCli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          for (let i = 0; i < 3; i++) yield* cli.assistant(`part ${i}`)
          yield* Effect.sleep("50 millis")
          yield* cli.init({ mcp_servers: [{ name: "calc", status: "failed", source: "sdk" }] })
          yield* Effect.never
        })
      // fails while the answer is buffered, before the start-up failure arrives
      const prompts = Stream.concat(
        Stream.make("hi"),
        Stream.fromEffect(Effect.zipRight(Effect.sleep("30 millis"), Effect.fail("boom" as const)))
      )
      // a slow consumer: the start-up failure arrives while it still works through what was buffered
      const fiber = yield* ClaudeAgent.query(prompts, { mcpServers: { calc } }).pipe(
        Stream.runForEach(() => Effect.sleep("100 millis")),
        Effect.flip,
        Effect.provide(ScriptedCli.layer(script)),
        Effect.fork
      )
      // the TestClock moves a millisecond at a time, every fiber settling in between: the prompt stream fails at
      // 30 ms, the start-up failure arrives at 50 ms, the consumer takes 100 ms per message
      for (let ms = 0; ms < 1000 && Option.isNone(yield* Fiber.poll(fiber)); ms++) yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(fiber)).toBe("boom")
    }).pipe(expectLogs([/^ERROR SDK MCP server "calc" is not connected \(status: failed\)/])))

  it.scoped("with onConnectFailure: fail (the default) the contribution's failure fails with McpServerFailed", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      const contribution = yield* internal.contribution({ mcpServers: { calc } })
      const failure = yield* Effect.fork(contribution.failure ?? Effect.never)
      const init = {
        type: "system",
        subtype: "init",
        session_id: "s",
        uuid: "u",
        cwd: "/",
        tools: [],
        model: "m",
        permissionMode: "default"
      } as const
      expect(contribution.onMessage?.({ ...init, mcp_servers: [{ name: "calc", status: "connected" }] })).toBe(true)
      expect(contribution.onMessage?.({ ...init, mcp_servers: [{ name: "calc", status: "pending" }] })).toBe(true)
      expect(yield* Fiber.await(failure)).toStrictEqual(
        Exit.fail(new SdkMcp.McpServerFailed({ name: "calc", status: "pending" }))
      )
    }))
})

// -------------------------------------------------------------------------------------------------
// setMcpServers (scripted CLI)
// -------------------------------------------------------------------------------------------------

/** A session on a scripted CLI whose script only hands the CLI over: the test drives both sides. */
const scriptedSession = (options: AgentOptions.Options, cliOptions?: ScriptedCli.Options) =>
  Effect.gen(function*() {
    const handle = yield* Deferred.make<ScriptedCli.ScriptedCli>()
    const layer = ScriptedCli.layer((cli) => Deferred.succeed(handle, cli), cliOptions)
    const session = yield* ClaudeAgent.session(options).pipe(Effect.provide(layer))
    return { session, cli: yield* Deferred.await(handle) }
  })

/** The `servers` of every `mcp_set_servers` request the CLI received. */
const setServersSent = (cli: ScriptedCli.ScriptedCli) =>
  Effect.map(
    cli.received,
    (frames) =>
      frames.flatMap((f) =>
        f.type === "control_request" && f.request.subtype === "mcp_set_servers" ? [f.request["servers"]] : []
      )
  )

/** A raw instance that answers every request with an error, and counts its connections and closes. */
const countingInstance = () => {
  const counts = { connects: 0, closes: 0 }
  const instance: AgentOptions.SdkMcpServerInstance = {
    connect: (transport) => {
      if (!internal.isTransport(transport)) return Promise.reject(new Error("not a transport"))
      counts.connects++
      transport.onclose = () => counts.closes++
      transport.onmessage = (message) => {
        if (Predicate.hasProperty(message, "id")) {
          void transport.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "nope" } })
        }
      }
      return transport.start()
    },
    close: () => Promise.resolve()
  }
  return { counts, instance }
}

describe("Session.setMcpServers", () => {
  it.scopedLive("connects new in-process servers and routes them; the CLI gets { type: sdk, name, timeout }", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add], timeout: 5000 })
      const { cli, session } = yield* scriptedSession({})
      // nothing routes to calc yet
      const before = yield* cli.requestRaw("mcp_message", { server_name: "calc", message: toolsCall("add", {}) })
      expect(before).toMatchObject({ subtype: "error", error: "SDK MCP server not found: calc" })
      const result = yield* session.setMcpServers({
        calc,
        web: { type: "sse", url: "https://mcp.example.com/sse", headers: { Authorization: "Bearer t" } },
        local: { command: "node", args: ["server.js"], env: { TOKEN: "t" } },
        bare: { type: "stdio", command: "srv" }
      })
      expect(result).toEqual({ added: [], removed: [], errors: {} })
      expect(yield* setServersSent(cli)).toEqual([{
        web: { type: "sse", url: "https://mcp.example.com/sse", headers: { Authorization: "Bearer t" } },
        local: { type: "stdio", command: "node", args: ["server.js"], env: { TOKEN: "t" } },
        // CLI 2.1.332 fails a stdio server without args in mcp_set_servers
        bare: { type: "stdio", command: "srv", args: [] },
        calc: { type: "sdk", name: "calc", timeout: 5000 }
      }])
      // the CLI runs the handshake over mcp_message (no manifest for a server added later), then calls
      const initialized = yield* mcp(cli, "calc", {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "claude-code", version: "2" } }
      })
      expect(initialized).toMatchObject({ mcp_response: { id: 0, result: { serverInfo: { name: "calc" } } } })
      expect(yield* mcp(cli, "calc", toolsCall("add", { a: 1, b: 2 }, 3))).toEqual({
        mcp_response: { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "3" }] } }
      })
    }))

  it.scopedLive("a server added to a session that had none forwards its server-originated messages too", () =>
    Effect.gen(function*() {
      const { jobs, release } = yield* progressServer
      const { cli, session } = yield* scriptedSession({})
      yield* session.setMcpServers({ jobs })
      const [forwarded, answer] = yield* callWithProgress(cli, release)
      expect(forwarded).toEqual(forwardedProgress)
      expect(answer).toMatchObject({ mcp_response: { id: 7, result: { content: [{ type: "text", text: "done" }] } } })
    }))

  it.scopedLive("servers left out are disconnected (start-up ones too); a server already connected is kept", () =>
    Effect.gen(function*() {
      const { slow, started, interrupted } = yield* slowTool
      const boot = yield* SdkMcp.createSdkMcpServer({ name: "boot", tools: [add] })
      const wait = yield* SdkMcp.createSdkMcpServer({ name: "wait", tools: [slow] })
      const raw = countingInstance()
      const rawConfig = { type: "sdk", name: "raw", instance: raw.instance } as const
      const { cli, session } = yield* scriptedSession({ mcpServers: { boot } })
      yield* session.setMcpServers({ wait, raw: rawConfig })
      yield* session.setMcpServers({ wait, raw: rawConfig })
      expect(raw.counts).toEqual({ connects: 1, closes: 0 })
      const gone = yield* cli.requestRaw("mcp_message", { server_name: "boot", message: toolsCall("add", {}) })
      expect(gone).toMatchObject({ subtype: "error", error: "SDK MCP server not found: boot" })

      const call = yield* Effect.fork(mcp(cli, "wait", toolsCall("slow", {}, 9)))
      yield* Deferred.await(started)
      yield* session.setMcpServers({})
      // the call in flight is answered, its handler interrupted, the raw instance's transport closed
      expect(yield* Fiber.join(call)).toEqual({
        mcp_response: {
          jsonrpc: "2.0",
          id: 9,
          error: { code: -32000, message: "SDK MCP server wait was disconnected" }
        }
      })
      yield* Deferred.await(interrupted)
      expect(raw.counts).toEqual({ connects: 1, closes: 1 })
      const after = yield* cli.requestRaw("mcp_message", { server_name: "wait", message: toolsCall("slow", {}) })
      expect(after).toMatchObject({ subtype: "error", error: "SDK MCP server not found: wait" })
      expect(yield* setServersSent(cli)).toEqual([
        { wait: { type: "sdk", name: "wait" }, raw: { type: "sdk", name: "raw" } },
        { wait: { type: "sdk", name: "wait" }, raw: { type: "sdk", name: "raw" } },
        {}
      ])
      // added again: a fresh connection
      yield* session.setMcpServers({ raw: rawConfig })
      expect(raw.counts).toEqual({ connects: 2, closes: 1 })
    }))

  it.scopedLive("a server added later is not checked against system/init; closing the session closes it", () =>
    Effect.gen(function*() {
      const raw = countingInstance()
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      yield* Effect.gen(function*() {
        const contribution = yield* internal.contribution({})
        // nothing can fail this session: no server was given in the options
        expect(contribution.failure).toBeUndefined()
        const failure = yield* Effect.fork(contribution.failure ?? Effect.never)
        const sent = yield* contribution.mcpServers.set(
          { calc, raw: { type: "sdk", name: "raw", instance: raw.instance } },
          (servers) => Effect.succeed(servers)
        )
        expect(sent).toEqual({ calc: { type: "sdk", name: "calc" }, raw: { type: "sdk", name: "raw" } })
        expect(raw.counts).toEqual({ connects: 1, closes: 0 })
        // at start-up, calc (onConnectFailure: "fail") not connected in system/init would fail the session
        const init = {
          type: "system",
          subtype: "init",
          session_id: "s",
          uuid: "u",
          cwd: "/",
          tools: [],
          model: "m",
          permissionMode: "default",
          mcp_servers: [{ name: "calc", status: "pending" }]
        } as const
        // no start-up server: nothing watches the messages (or a watcher keeps them)
        expect(contribution.onMessage?.(init) ?? true).toBe(true)
        yield* Effect.sleep("50 millis")
        expect(failure.unsafePoll()).toBeNull()
      }).pipe(Effect.scoped)
      expect(raw.counts).toEqual({ connects: 1, closes: 1 })
    }))

  it.scopedLive("reconnecting an in-process server: the CLI's refusal is explained (ControlError)", () =>
    Effect.gen(function*() {
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      // what CLI 2.1.332 answers for an sdk server; a process server it does not know is "Server not found: <name>"
      const refuse = (body: { readonly [key: string]: unknown }) =>
        Effect.fail(body["serverName"] === "calc" ? "SDK servers should be handled in print.ts" : "Server not found: x")
      const { session } = yield* scriptedSession({ mcpServers: { calc } }, { responders: { mcp_reconnect: refuse } })
      const error = yield* Effect.flip(session.reconnectMcpServer("calc"))
      expect(error).toMatchObject({ _tag: "ControlError", subtype: "mcp_reconnect" })
      expect(error.message).toBe(
        "Control request mcp_reconnect failed: \"calc\" is an in-process (sdk) MCP server, which the CLI does not " +
          "reconnect (it answered: SDK servers should be handled in print.ts); toggle it off and on with " +
          "toggleMcpServer to run its handshake again, or replace it with setMcpServers"
      )
      expect(yield* Effect.flip(session.reconnectMcpServer("x"))).toMatchObject({
        _tag: "ControlError",
        description: "Server not found: x"
      })
    }))
})

// -------------------------------------------------------------------------------------------------
// the Promise-side instance (connect / close)
// -------------------------------------------------------------------------------------------------

describe("SdkMcpServer.connect", () => {
  it.live("serves any MCP transport; each connect is a fresh server; close closes them all", () =>
    Effect.gen(function*() {
      const config = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
      const instance = config.instance
      const memory = yield* Effect.promise(() => importUntyped("@modelcontextprotocol/sdk/inMemory.js"))
      const InMemoryTransport = Predicate.hasProperty(memory, "InMemoryTransport")
        ? memory.InMemoryTransport
        : undefined
      const pair = () => {
        const created: unknown = Predicate.hasProperty(InMemoryTransport, "createLinkedPair") &&
            typeof InMemoryTransport.createLinkedPair === "function"
          ? InMemoryTransport.createLinkedPair()
          : undefined
        if (!Array.isArray(created) || !internal.isTransport(created[0])) throw new Error("no InMemoryTransport")
        return [created[0], created[1]] as const
      }
      const exchange = (client: internal.McpTransport, message: object) =>
        Effect.async<unknown>((resume) => {
          client.onmessage = (m) => resume(Effect.succeed(m))
          void client.send(message)
        })
      const [client1, server1] = pair()
      const [client2, server2] = pair()
      yield* Effect.promise(() => instance.connect(server1))
      yield* Effect.promise(() => instance.connect(server2))
      yield* Effect.promise(() => client1.start())
      yield* Effect.promise(() => client2.start())
      expect(yield* exchange(client1, toolsCall("add", { a: 20, b: 22 }, 1))).toMatchObject({
        id: 1,
        result: { content: [{ type: "text", text: "42" }] }
      })
      expect(yield* exchange(client2, toolsCall("add", { a: 1, b: 1 }, 1))).toMatchObject({
        id: 1,
        result: { content: [{ type: "text", text: "2" }] }
      })
      let closed = 0
      client1.onclose = () => closed++
      client2.onclose = () => closed++
      yield* Effect.promise(() => instance.close())
      expect(closed).toBe(2)
    }))
})
