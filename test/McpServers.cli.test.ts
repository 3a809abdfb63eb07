// Managing MCP servers of a running session against the real CLI (2.1.332, offline, ScriptedModelServer):
// setMcpServers with in-process and process servers, mcpServerStatus, toggleMcpServer, reconnectMcpServer, and the
// live status of proxies. What the CLI does is recorded in the test names and comments.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message } from "effect-claude-agent"
import type { Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as McpProxy from "../src/McpProxy.js"
import * as SdkMcp from "../src/SdkMcp.js"
import { memoryUpstream } from "./fixtures/mcp-upstream.mjs"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { expectLogs } from "./support/logs.js"

const { reply, text, toolUse } = ScriptedModelServer

const STDIO_SERVER = path.join(import.meta.dirname, "fixtures", "mcp-stdio-server.mjs")

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

const all = (messages: Chunk.Chunk<Message.SdkMessage>) => Chunk.toReadonlyArray(messages)

const resultOf = (messages: Chunk.Chunk<Message.SdkMessage>) => all(messages).find(Message.isResultMessage)

const initOf = (messages: Chunk.Chunk<Message.SdkMessage>) => all(messages).find(Message.isSystemInit)

/**
 * The model: `CALL <tool>` calls the tool (`{ a: 1, b: 2 }` for `add`, `{ text: "hi" }` otherwise); a tool result is
 * answered `got <content>`; anything else `ok`.
 */
const model = () =>
  realCli({
    handler: (request) => {
      const result = request.toolResults[0]
      if (result !== undefined) return reply(text(`got ${result.content}`))
      const prompt = request.lastUserText ?? ""
      if (!prompt.startsWith("CALL ")) return reply(text("ok"))
      const tool = prompt.slice(5)
      return reply(toolUse(tool, tool.endsWith("__add") ? { a: 1, b: 2 } : { text: "hi" }))
    }
  })

/** The result text of a turn that asks the model to call `tool`. */
const call = (session: ClaudeAgent.Session, tool: string) =>
  Effect.map(Stream.runCollect(session.turn(`CALL ${tool}`)), (messages) => {
    const result = resultOf(messages)
    return result?.subtype === "success" ? result.result : `not a success: ${JSON.stringify(result)}`
  })

const statusOf = (session: ClaudeAgent.Session, name: string) =>
  Effect.map(session.mcpServerStatus, (status) => status.find((s) => s.name === name))

/** Waits until the CLI reports the server with this status (the handshake of an added server runs after the answer). */
const awaitStatus = (session: ClaudeAgent.Session, name: string, status: string) =>
  statusOf(session, name).pipe(
    Effect.filterOrFail((s) => s?.status === status, () => new Error(`${name} is not ${status}`)),
    Effect.retry(Schedule.spaced("50 millis")),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`${name} never became ${status}`) })
  )

const Add = Schema.Struct({ a: Schema.Number, b: Schema.Number })

/** A calculator whose `add` counts its calls. */
const calculator = (options: { readonly timeout?: number } = {}) =>
  Effect.gen(function*() {
    const calls: Array<typeof Add.Type> = []
    const add = SdkMcp.tool("add", "Adds two numbers", Add, (input) =>
      Effect.sync(() => {
        calls.push(input)
        return `${input.a + input.b}`
      }))
    const calc = yield* SdkMcp.createSdkMcpServer({ name: "calc", tools: [add], timeout: options.timeout })
    return { calc, calls }
  })

/** The stdio fixture behind an executable script, so that its config has no `args`. */
const stdioScript = Effect.gen(function*() {
  const dir = yield* tempDir("eca-mcp-")
  const script = path.join(dir, "loud.sh")
  fs.writeFileSync(script, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(STDIO_SERVER)}\n`)
  fs.chmodSync(script, 0o755)
  return script
})

const allowed = ["mcp__calc__add", "mcp__loud__shout", "mcp__wait__slow"]

describe("managing MCP servers against the real CLI", () => {
  live(
    "setMcpServers adds an in-process and a stdio server mid-session, the model calls both; {} removes them",
    () =>
      Effect.gen(function*() {
        const { options } = yield* model()
        const { calc, calls } = yield* calculator()
        const script = yield* stdioScript
        const session = yield* ClaudeAgent.session(options({ strictMcpConfig: true, allowedTools: allowed }))
        expect(yield* call(session, "mcp__calc__add")).toBe(
          "got <tool_use_error>Error: No such tool available: " +
            "mcp__calc__add</tool_use_error>"
        )

        // a stdio config without args: the SDK sends `args: []` (the CLI fails it otherwise)
        const added = yield* session.setMcpServers({ calc, loud: { command: script } })
        expect(added).toEqual({ added: ["calc", "loud"], removed: [], errors: {} })
        // the CLI answers first, then runs the in-process server's handshake over mcp_message
        yield* awaitStatus(session, "calc", "connected")
        expect(yield* statusOf(session, "calc")).toMatchObject({
          status: "connected",
          serverInfo: { name: "calc", version: "1.0.0" },
          tools: [{ name: "add" }]
        })
        expect(yield* awaitStatus(session, "loud", "connected")).toMatchObject({
          serverInfo: { name: "stdio-fixture" },
          tools: [{ name: "shout" }]
        })
        const messages = yield* Stream.runCollect(session.turn("CALL mcp__calc__add"))
        expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "got 3" })
        expect(initOf(messages)?.mcp_servers).toEqual(expect.arrayContaining([
          { name: "calc", status: "connected", source: "sdk" },
          { name: "loud", status: "connected", source: "dynamic" }
        ]))
        expect(calls).toEqual([{ a: 1, b: 2 }])
        expect(yield* call(session, "mcp__loud__shout")).toBe("got HI!")

        // the same set again changes nothing
        expect(yield* session.setMcpServers({ calc, loud: { command: script } })).toEqual({
          added: [],
          removed: [],
          errors: {}
        })
        expect(yield* session.setMcpServers({})).toEqual({ added: [], removed: ["calc", "loud"], errors: {} })
        expect(yield* session.mcpServerStatus).toEqual([])
        expect(yield* call(session, "mcp__calc__add")).toBe(
          "got <tool_use_error>Error: No such tool available: " +
            "mcp__calc__add</tool_use_error>"
        )
        expect(calls).toHaveLength(1)
      })
  )

  live(
    "setMcpServers removes in-process servers given at start-up; --mcp-config ones only when it names them",
    () =>
      Effect.gen(function*() {
        const { options } = yield* model()
        const { calc, calls } = yield* calculator()
        const loud = { command: process.execPath, args: [STDIO_SERVER] }
        const session = yield* ClaudeAgent.session(options({
          mcpServers: { calc, loud, other: loud },
          strictMcpConfig: true,
          allowedTools: allowed
        }))
        expect(yield* call(session, "mcp__calc__add")).toBe("got 3")
        // in-process start-up servers (`initialize.sdkMcpServers`) belong to the set the CLI replaces: calc goes (and
        // the SDK disconnects it); a `--mcp-config` server does not: named, it is taken over ("added"), else it stays
        expect(yield* session.setMcpServers({ loud })).toEqual({ added: ["loud"], removed: ["calc"], errors: {} })
        expect((yield* session.mcpServerStatus).map((s) => s.name).sort()).toEqual(["loud", "other"])
        expect(yield* call(session, "mcp__calc__add")).toMatch(/No such tool available: mcp__calc__add/)
        expect(yield* session.setMcpServers({ calc, loud })).toEqual({ added: ["calc"], removed: [], errors: {} })
        yield* awaitStatus(session, "calc", "connected")
        expect(yield* call(session, "mcp__calc__add")).toBe("got 3")
        expect(calls).toHaveLength(2)
        const removed = yield* session.setMcpServers({})
        expect({ ...removed, removed: [...removed.removed].sort() }).toEqual({
          added: [],
          removed: ["calc", "loud"],
          errors: {}
        })
        expect((yield* session.mcpServerStatus).map((s) => s.name)).toEqual(["other"])
      })
  )

  live(
    "the timeout of a server added by setMcpServers is the CLI's deadline for its calls",
    () =>
      Effect.gen(function*() {
        const interrupted = yield* Deferred.make<void>()
        const slow = SdkMcp.tool("slow", "Takes forever", Schema.Struct({}), () =>
          Effect.never.pipe(Effect.onInterrupt(() =>
            Deferred.succeed(interrupted, undefined)
          )), {
          timeout: Duration.infinity
        })
        const wait = yield* SdkMcp.createSdkMcpServer({ name: "wait", tools: [slow], timeout: 1500 })
        const { options } = yield* model()
        const session = yield* ClaudeAgent.session(options({ strictMcpConfig: true, allowedTools: allowed }))
        yield* session.setMcpServers({ wait })
        yield* awaitStatus(session, "wait", "connected")
        const answer = yield* call(session, "mcp__wait__slow")
        expect(answer).toMatch(/^got MCP server "wait" tool "slow" timed out after \d+(\.\d+)?s/)
        // the CLI cancels the call (notifications/cancelled), which interrupts the handler
        yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
      })
  )

  live(
    "mcpServerStatus, toggleMcpServer and reconnectMcpServer with a stdio and an in-process server",
    () =>
      Effect.gen(function*() {
        const { options } = yield* model()
        const { calc, calls } = yield* calculator()
        const session = yield* ClaudeAgent.session(options({
          mcpServers: { calc, loud: { command: process.execPath, args: [STDIO_SERVER] } },
          strictMcpConfig: true,
          allowedTools: allowed
        }))
        yield* awaitStatus(session, "loud", "connected")
        expect(yield* statusOf(session, "calc")).toMatchObject({ status: "connected", tools: [{ name: "add" }] })

        // a process server is reconnected (restarted); an in-process one is refused at once, with an explanation
        yield* session.reconnectMcpServer("loud")
        expect(yield* statusOf(session, "loud")).toMatchObject({ status: "connected" })
        expect(yield* call(session, "mcp__loud__shout")).toBe("got HI!")
        const refused = yield* Effect.flip(session.reconnectMcpServer("calc").pipe(Effect.timeout("10 seconds")))
        expect(refused).toMatchObject({ _tag: "ControlError", subtype: "mcp_reconnect" })
        expect(refused.message).toContain(
          "\"calc\" is an in-process (sdk) MCP server, which the CLI does not reconnect"
        )
        expect(refused.message).toContain("(it answered: SDK servers should be handled in print.ts)")
        expect(yield* Effect.flip(session.reconnectMcpServer("nope"))).toMatchObject({
          _tag: "ControlError",
          description: "Server not found: nope"
        })

        // toggled off: `disabled`, the tools are gone; toggled on: the CLI runs the handshake again and they are back
        yield* session.toggleMcpServer("calc", false)
        yield* session.toggleMcpServer("loud", false)
        expect((yield* session.mcpServerStatus).map((s) => [s.name, s.status])).toEqual(
          expect.arrayContaining([["calc", "disabled"], ["loud", "disabled"]])
        )
        const off = yield* Stream.runCollect(session.turn("CALL mcp__calc__add"))
        expect(initOf(off)?.mcp_servers).toEqual(expect.arrayContaining([
          { name: "calc", status: "disabled", source: "sdk" },
          { name: "loud", status: "disabled", source: "dynamic" }
        ]))
        expect(resultOf(off)).toMatchObject({ result: expect.stringMatching(/No such tool available: mcp__calc__add/) })
        yield* session.toggleMcpServer("calc", true)
        yield* session.toggleMcpServer("loud", true)
        yield* awaitStatus(session, "calc", "connected")
        yield* awaitStatus(session, "loud", "connected")
        expect(yield* call(session, "mcp__calc__add")).toBe("got 3")
        expect(yield* call(session, "mcp__loud__shout")).toBe("got HI!")
        expect(calls).toHaveLength(1)
      })
  )

  live(
    "mcpServerStatus shows a proxy's upstream outage where the CLI still says connected",
    () =>
      Effect.gen(function*() {
        const upstream = memoryUpstream()
        const loud = yield* McpProxy.make({
          name: "loud",
          transport: upstream.transport,
          reconnect: Schedule.spaced("1 hour")
        })
        const { options } = yield* model()
        const session = yield* ClaudeAgent.session(options({ strictMcpConfig: true, allowedTools: allowed }))
        // added mid-session; the CLI runs the handshake through the proxy
        expect(yield* session.setMcpServers({ loud })).toEqual({ added: ["loud"], removed: [], errors: {} })
        yield* awaitStatus(session, "loud", "connected")
        expect(yield* call(session, "mcp__loud__shout")).toBe("got HI!")

        upstream.setBlocked(true)
        yield* Effect.promise(() => upstream.kill())
        yield* loud.changes.pipe(Stream.filter((s) => s._tag === "Disconnected"), Stream.runHead)
        // the CLI keeps the status of the handshake
        const raw = yield* session.request("mcp_status")
        expect(raw).toMatchObject({ mcpServers: [{ name: "loud", status: "connected" }] })
        expect(yield* statusOf(session, "loud")).toMatchObject({
          status: "failed",
          serverInfo: { name: "upstream-fixture" },
          error:
            "MCP server \"loud\" is not connected (the connection closed); the SDK is reconnecting, try again later."
        })
        expect(yield* call(session, "mcp__loud__shout")).toMatch(/^got MCP server "loud" is not connected/)
      }).pipe(expectLogs([/^WARN MCP server "loud" disconnected/]))
  )

  live("a one-shot query uses an external stdio MCP server", () =>
    Effect.gen(function*() {
      const { options, server } = yield* model()
      const messages = yield* ClaudeAgent.query(
        "CALL mcp__loud__shout",
        options({
          mcpServers: { loud: { type: "stdio", command: process.execPath, args: [STDIO_SERVER] } },
          strictMcpConfig: true,
          allowedTools: ["mcp__loud__shout"]
        })
      ).pipe(Stream.runCollect)
      expect(initOf(messages)?.mcp_servers).toContainEqual({ name: "loud", status: "connected", source: "dynamic" })
      expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "got HI!" })
      const seen = yield* server.waitForRequest((r) => r.toolResults.length > 0)
      expect(seen.toolResults).toEqual([expect.objectContaining({ content: "HI!", is_error: false })])
    }))
})
