import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { ClaudeAgent, Message } from "effect-claude-agent"
import type { AgentOptions, Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as SdkMcp from "../src/SdkMcp.js"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const { reply, text, toolUse } = ScriptedModelServer

const STDIO_SERVER = path.join(import.meta.dirname, "fixtures", "mcp-stdio-server.mjs")

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

const all = (messages: Chunk.Chunk<Message.SdkMessage>) => Chunk.toReadonlyArray(messages)

const resultOf = (messages: Chunk.Chunk<Message.SdkMessage>) => all(messages).find(Message.isResultMessage)

/** The tool results the model saw in its second request. */
const toolResultsSeen = (server: ScriptedModelServer.ScriptedModelServer) =>
  Effect.map(server.waitForRequest((r) => r.isMessages && r.toolResults.length > 0), (r) => r.toolResults)

/**
 * Imports a module without its typings: the MCP SDK's (and zod's) declarations do not compile under this repository's
 * `skipLibCheck: false`, and a computed specifier keeps TypeScript from loading them.
 */
const importUntyped = (specifier: string): Promise<unknown> => import(specifier)

/** An `McpServer` of the MCP SDK with one `echo` tool (zod input schema), as a user of the official SDK writes it. */
const rawEchoServer = Effect.promise(async () => {
  const mcp = await importUntyped("@modelcontextprotocol/sdk/server/mcp.js")
  const zod = await importUntyped("zod")
  const McpServer = Predicate.hasProperty(mcp, "McpServer") ? mcp.McpServer : undefined
  const string = Predicate.hasProperty(zod, "string") ? zod.string : undefined
  if (!isRawServerClass(McpServer) || typeof string !== "function") throw new Error("unexpected MCP SDK exports")
  const server = new McpServer({ name: "raw", version: "0.0.1" })
  server.registerTool(
    "echo",
    { description: "Echoes", inputSchema: { text: string() } },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] })
  )
  return server
})

interface RawMcpServer extends AgentOptions.SdkMcpServerInstance {
  registerTool(
    name: string,
    config: object,
    handler: (args: { readonly text: string }) => Promise<SdkMcp.CallToolResult>
  ): void
}

const isRawServerClass = (u: unknown): u is new(info: { name: string; version: string }) => RawMcpServer =>
  typeof u === "function"

const Add = Schema.Struct({
  a: Schema.Number.annotations({ description: "the first number" }),
  b: Schema.Number
})

/** A calculator whose `add` records the inputs it was called with. */
const calculator = Effect.gen(function*() {
  const calls: Array<typeof Add.Type> = []
  const add = SdkMcp.tool("add", "Adds two numbers", Add, (input) =>
    Effect.sync(() => {
      calls.push(input)
      return `${input.a + input.b}`
    }))
  const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add] })
  return { calc, calls }
})

describe("SdkMcp against the real CLI", () => {
  live(
    "query: the model calls mcp__calc__add, the Effect handler runs, its result is the tool_result",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({
          replies: [reply(toolUse("mcp__calc__add", { a: 1, b: 2 })), reply(text("the sum is 3"))]
        })
        const { calc, calls } = yield* calculator
        const messages = yield* ClaudeAgent.query(
          "add 1 and 2",
          options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] })
        ).pipe(Stream.runCollect)
        expect(calls).toEqual([{ a: 1, b: 2 }])
        expect(yield* toolResultsSeen(server)).toEqual([
          expect.objectContaining({ content: "3", is_error: false })
        ])
        const init = all(messages).find(Message.isSystemInit)
        expect(init?.mcp_servers).toContainEqual({ name: "calc", status: "connected", source: "sdk" })
        expect(init?.tools).toContain("mcp__calc__add")
        expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "the sum is 3" })
      })
  )

  live(
    "session: turns share one connection; mcpServerStatus and the initialize response report the server",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({
          replies: [
            reply(toolUse("mcp__calc__add", { a: 2, b: 3 })),
            reply(text("five")),
            reply(toolUse("mcp__calc__add", { a: 10, b: -4 })),
            reply(text("six"))
          ]
        })
        const { calc, calls } = yield* calculator
        const session = yield* ClaudeAgent.session(options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] }))
        const init = yield* session.initializationResult
        // the handshake results went with initialize: the CLI parked them instead of asking over mcp_message
        expect(init.sdk_mcp_manifests_parked).toEqual({ calc: "parked" })
        const first = yield* Stream.runCollect(session.turn("first"))
        expect(resultOf(first)).toMatchObject({ subtype: "success", result: "five" })
        const second = yield* Stream.runCollect(session.turn("second"))
        expect(resultOf(second)).toMatchObject({ subtype: "success", result: "six" })
        expect(calls).toEqual([{ a: 2, b: 3 }, { a: 10, b: -4 }])
        const seen = (yield* server.requests).filter((r) => r.isMessages && r.toolResults.length > 0)
        expect(seen.map((r) => r.toolResults[0]?.content)).toEqual(["5", "6"])
        const status = yield* session.mcpServerStatus
        const entry = status.find((s) => s.name === "calc")
        expect(entry).toMatchObject({
          name: "calc",
          status: "connected",
          serverInfo: { name: "calc", version: "1.0.0" }
        })
        expect(entry?.tools?.map((t) => t.name)).toEqual(["add"])
      })
  )

  live(
    "two sessions at once share one createSdkMcpServer result, each with its own connection",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli({
          handler: (request) =>
            request.toolResults.length > 0
              ? reply(text(`got ${request.toolResults[0]?.content}`))
              : reply(toolUse("mcp__calc__add", request.lastUserText === "one" ? { a: 1, b: 0 } : { a: 2, b: 0 }))
        })
        const { calc, calls } = yield* calculator
        const run = (prompt: string) =>
          Effect.gen(function*() {
            const session = yield* ClaudeAgent.session(
              options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] })
            )
            return resultOf(yield* Stream.runCollect(session.turn(prompt)))
          }).pipe(Effect.scoped)
        const [one, two] = yield* Effect.all([run("one"), run("two")], { concurrency: 2 })
        expect(one).toMatchObject({ subtype: "success", result: "got 1" })
        expect(two).toMatchObject({ subtype: "success", result: "got 2" })
        expect([...calls].sort((x, y) => x.a - y.a)).toEqual([{ a: 1, b: 0 }, { a: 2, b: 0 }])
      })
  )

  live("handlers use the services captured by createSdkMcpServer", () =>
    Effect.gen(function*() {
      class Greeter extends Context.Tag("test/Greeter")<Greeter, { readonly greet: (name: string) => string }>() {}
      const greet = SdkMcp.tool(
        "greet",
        "Greets someone",
        Schema.Struct({ name: Schema.String }),
        ({ name }) => Effect.map(Greeter, (g) => g.greet(name))
      )
      const { options, server } = yield* realCli({
        replies: [reply(toolUse("mcp__people__greet", { name: "Ada" })), reply(text("done"))]
      })
      const people = yield* SdkMcp.createSdkMcpServer({ name: "people", tools: [greet] }).pipe(
        Effect.provideService(Greeter, { greet: (name) => `Hello, ${name}!` })
      )
      yield* ClaudeAgent.query("greet Ada", options({ mcpServers: { people }, allowedTools: ["mcp__people__greet"] }))
        .pipe(Stream.runDrain)
      expect(yield* toolResultsSeen(server)).toEqual([
        expect.objectContaining({ content: "Hello, Ada!", is_error: false })
      ])
    }))

  live(
    "invalid input, a failure, a defect and a timeout each become an isError tool_result; the turn goes on",
    () =>
      Effect.gen(function*() {
        class Boom extends Schema.TaggedError<Boom>()("Boom", { reason: Schema.String }) {
          override get message() {
            return `boom: ${this.reason}`
          }
        }
        const tools = [
          SdkMcp.tool("fails", "Fails", Schema.Struct({}), () => Effect.fail(new Boom({ reason: "no luck" }))),
          SdkMcp.tool("dies", "Dies", Schema.Struct({}), () => Effect.die(new Error("kaput"))),
          SdkMcp.tool("sleeps", "Sleeps", Schema.Struct({}), () => Effect.as(Effect.never, "never"), {
            timeout: "300 millis"
          })
        ] as const
        const { options, server } = yield* realCli({
          replies: [
            reply(
              toolUse("mcp__calc__add", { a: "one", b: 2 }),
              toolUse("mcp__misc__fails", {}),
              toolUse("mcp__misc__dies", {}),
              toolUse("mcp__misc__sleeps", {})
            ),
            reply(text("all answered"))
          ]
        })
        const { calc, calls } = yield* calculator
        const misc = yield* SdkMcp.createSdkMcpServer({ name: "misc", tools })
        const messages = yield* ClaudeAgent.query(
          "try everything",
          options({
            mcpServers: { calc, misc },
            allowedTools: ["mcp__calc__add", "mcp__misc__fails", "mcp__misc__dies", "mcp__misc__sleeps"]
          })
        ).pipe(Stream.runCollect)
        expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "all answered" })
        expect(calls).toEqual([])
        const results = yield* toolResultsSeen(server)
        expect(results.map((r) => r.is_error)).toEqual([true, true, true, true])
        // the CLI appends a hint about the tool's schema to error results of deferred (ToolSearch) tools
        const [invalid, failed, died, slept] = results.map((r) => r.content)
        expect(invalid).toMatch(/^Invalid input for tool add:\n/)
        expect(invalid).toContain("[\"a\"]")
        expect(invalid).toContain("Expected number, actual \"one\"")
        expect(failed).toMatch(/^Boom: boom: no luck/)
        expect(died).toMatch(/^Tool dies failed unexpectedly: kaput/)
        expect(slept).toMatch(/^Tool sleeps timed out after 300ms/)
      })
  )

  /** A tool that never finishes (and has no timeout of its own), run with a deadline on the CLI's side. */
  const cliGivesUp = (deadline: {
    readonly env?: Record<string, string>
    readonly serverTimeout?: number
  }) =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const slow = SdkMcp.tool(
        "slow",
        "Takes forever",
        Schema.Struct({}),
        () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          ),
        { timeout: Duration.infinity }
      )
      const { options, server } = yield* realCli({
        replies: [reply(toolUse("mcp__wait__slow", {})), reply(text("gave up"))]
      })
      const wait = yield* SdkMcp.createSdkMcpServer({ name: "wait", tools: [slow], timeout: deadline.serverTimeout })
      const messages = yield* ClaudeAgent.query(
        "wait",
        options({ mcpServers: { wait }, allowedTools: ["mcp__wait__slow"], env: deadline.env })
      ).pipe(Stream.runCollect)
      expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "gave up" })
      yield* Deferred.await(started)
      // the CLI cancels the call with notifications/cancelled, which interrupts the handler
      yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
      const [seen] = yield* toolResultsSeen(server)
      expect(seen).toMatchObject({ is_error: true })
      expect(seen?.content).toMatch(/^MCP server "wait" tool "slow" timed out after \d+(\.\d+)?s/)
    })

  live(
    "MCP_TOOL_TIMEOUT: the CLI gives up, cancels the call, and the handler is interrupted",
    () => cliGivesUp({ env: { MCP_TOOL_TIMEOUT: "1500" } })
  )

  live(
    "the server's timeout (sdkMcpServerConfigs) is the CLI's deadline too",
    () => cliGivesUp({ serverTimeout: 1500 })
  )

  live("manifest: false lets the CLI run the handshake over mcp_message", () =>
    Effect.gen(function*() {
      const add = SdkMcp.tool("add", "Adds", Add, ({ a, b }) => Effect.succeed(`${a + b}`))
      const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add], manifest: false })
      const { options, server } = yield* realCli({
        replies: [reply(toolUse("mcp__calc__add", { a: 4, b: 4 })), reply(text("8"))]
      })
      const session = yield* ClaudeAgent.session(options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] }))
      const init = yield* session.initializationResult
      expect(init.sdk_mcp_manifests_parked).toBeUndefined()
      const messages = yield* Stream.runCollect(session.turn("add"))
      expect(all(messages).find(Message.isSystemInit)?.mcp_servers).toContainEqual({
        name: "calc",
        status: "connected",
        source: "sdk"
      })
      expect(yield* toolResultsSeen(server)).toEqual([expect.objectContaining({ content: "8", is_error: false })])
    }))

  live(
    "an external stdio MCP server (MCP SDK fixture) is listed and its tool is called end to end",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({
          replies: [reply(toolUse("mcp__loud__shout", { text: "hello" })), reply(text("shouted"))]
        })
        const { calc } = yield* calculator
        const session = yield* ClaudeAgent.session(options({
          mcpServers: { loud: { command: process.execPath, args: [STDIO_SERVER] }, calc },
          strictMcpConfig: true,
          allowedTools: ["mcp__loud__shout"]
        }))
        const messages = yield* Stream.runCollect(session.turn("shout hello"))
        const init = all(messages).find(Message.isSystemInit)
        expect(init?.mcp_servers).toContainEqual({ name: "loud", status: "connected", source: "dynamic" })
        expect(init?.mcp_servers).toContainEqual({ name: "calc", status: "connected", source: "sdk" })
        expect(init?.tools).toEqual(expect.arrayContaining(["mcp__loud__shout", "mcp__calc__add"]))
        expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "shouted" })
        expect(yield* toolResultsSeen(server)).toEqual([
          expect.objectContaining({ content: "HELLO!", is_error: false })
        ])
        const status = yield* session.mcpServerStatus
        expect(status.find((s) => s.name === "loud")).toMatchObject({
          status: "connected",
          serverInfo: { name: "stdio-fixture" }
        })
      })
  )

  live("a raw MCP SDK McpServer works as an instance too", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli({
        replies: [reply(toolUse("mcp__raw__echo", { text: "hi" })), reply(text("ok"))]
      })
      const instance = yield* rawEchoServer
      const session = yield* ClaudeAgent.session(options({
        mcpServers: { raw: { type: "sdk", name: "raw", instance } },
        allowedTools: ["mcp__raw__echo"]
      }))
      expect((yield* session.initializationResult).sdk_mcp_manifests_parked).toEqual({ raw: "parked" })
      const messages = yield* Stream.runCollect(session.turn("echo"))
      expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "ok" })
      expect(yield* toolResultsSeen(server)).toEqual([
        expect.objectContaining({ content: "echo: hi", is_error: false })
      ])
    }))

  live(
    "a server the CLI reports as failed is reported as McpServerFailed (warning for a raw instance)",
    () =>
      Effect.gen(function*() {
        const logged: Array<unknown> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") logged.push(...(Array.isArray(message) ? message : [message]))
        })
        const broken: AgentOptions.SdkMcpServerInstance = {
          connect: () => Promise.reject(new Error("cannot connect")),
          close: () => Promise.resolve()
        }
        const { options } = yield* realCli({ replies: [reply(text("fine without it"))] })
        const messages = yield* ClaudeAgent.query(
          "hello",
          options({ mcpServers: { broken: { type: "sdk", name: "broken", instance: broken } } })
        ).pipe(Stream.runCollect, Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(all(messages).find(Message.isSystemInit)?.mcp_servers).toContainEqual({
          name: "broken",
          status: "failed",
          source: "sdk"
        })
        expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "fine without it" })
        expect(logged).toContainEqual(new SdkMcp.McpServerFailed({ name: "broken", status: "failed" }))
      })
  )
})
