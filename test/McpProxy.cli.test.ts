import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message, SessionPool } from "effect-claude-agent"
import type { Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as McpProxy from "../src/McpProxy.js"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { expectLogs } from "./support/logs.js"

const { reply, text, toolUse } = ScriptedModelServer

const UPSTREAM = path.join(import.meta.dirname, "fixtures", "mcp-proxy-upstream.mjs")

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

const all = (messages: Chunk.Chunk<Message.SdkMessage>) => Chunk.toReadonlyArray(messages)

const resultOf = (messages: Chunk.Chunk<Message.SdkMessage>) => all(messages).find(Message.isResultMessage)

const initOf = (messages: Chunk.Chunk<Message.SdkMessage>) => all(messages).find(Message.isSystemInit)

/** The upstream fixture over stdio; it records its starts in `dir` (see the fixture). */
const upstream = (dir: string): McpProxy.Transport => ({
  type: "stdio",
  command: process.execPath,
  args: [UPSTREAM],
  env: { MCP_FIXTURE_DIR: dir }
})

/** The pids of the fixture's starts. */
const starts = (dir: string): ReadonlyArray<number> => {
  const file = path.join(dir, "starts.log")
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map(Number) : []
}

const statusWhere = (proxy: McpProxy.McpProxy, predicate: (status: McpProxy.Status) => boolean) =>
  proxy.changes.pipe(
    Stream.filter(predicate),
    Stream.runHead,
    Effect.flatten,
    Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error("the status never came") })
  )

/** The tool results the model saw, request by request. */
const toolResults = (server: ScriptedModelServer.ScriptedModelServer) =>
  Effect.map(
    server.requests,
    (requests) => requests.filter((r) => r.isMessages && r.toolResults.length > 0).map((r) => r.toolResults)
  )

describe("McpProxy against the real CLI", () => {
  live(
    "a proxied stdio server is listed as connected; the model calls its tool and gets the answer",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("eca-upstream-")
        const { options, server } = yield* realCli({
          replies: [reply(toolUse("mcp__loud__shout", { text: "hello" })), reply(text("shouted"))]
        })
        const loud = yield* McpProxy.make({ name: "loud", transport: upstream(dir) })
        const session = yield* ClaudeAgent.session(options({
          mcpServers: { loud },
          strictMcpConfig: true,
          allowedTools: ["mcp__loud__shout"]
        }))
        // the proxy sent the upstream server's handshake with initialize
        expect((yield* session.initializationResult).sdk_mcp_manifests_parked).toEqual({ loud: "parked" })
        const messages = yield* Stream.runCollect(session.turn("shout hello"))
        const init = initOf(messages)
        expect(init?.mcp_servers).toContainEqual({ name: "loud", status: "connected", source: "sdk" })
        expect(init?.tools).toContain("mcp__loud__shout")
        expect(resultOf(messages)).toMatchObject({ subtype: "success", result: "shouted" })
        expect(yield* toolResults(server)).toEqual([[expect.objectContaining({ content: "HELLO!", is_error: false })]])
        const status = (yield* session.mcpServerStatus).find((s) => s.name === "loud")
        expect(status).toMatchObject({
          status: "connected",
          serverInfo: { name: "upstream-fixture", version: "1.0.0" }
        })
        expect(status?.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(["shout", "work", "wait"]))
        expect(starts(dir)).toHaveLength(1)
      })
  )

  live(
    "one upstream process serves two concurrent sessions of a SessionPool (McpProxy.layer)",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("eca-upstream-")
        const { options } = yield* realCli({
          handler: (request) =>
            request.toolResults.length > 0
              ? reply(text(`got ${request.toolResults[0]?.content}`))
              : reply(toolUse("mcp__loud__shout", { text: request.lastUserText ?? "" }))
        })
        const base = options({ allowedTools: ["mcp__loud__shout"] })
        const Pool = Layer.unwrapEffect(
          Effect.map(
            McpProxy.McpProxies,
            ({ mcpServers }) => SessionPool.layer({ maxConcurrent: 2, options: { ...base, mcpServers } })
          )
        ).pipe(Layer.provide(McpProxy.layer({ name: "loud", transport: upstream(dir) })))
        const turns = yield* Effect.gen(function*() {
          const pool = yield* SessionPool.SessionPool
          const run = (prompt: string) =>
            Effect.scoped(Effect.gen(function*() {
              const session = yield* pool.session()
              return yield* Stream.runCollect(session.turn(prompt))
            }))
          return yield* Effect.all([run("one"), run("two")], { concurrency: 2 })
        }).pipe(Effect.provide(Pool))
        for (const messages of turns) {
          expect(initOf(messages)?.mcp_servers).toContainEqual({ name: "loud", status: "connected", source: "sdk" })
        }
        expect(turns.map(resultOf)).toEqual([
          expect.objectContaining({ subtype: "success", result: "got ONE!" }),
          expect.objectContaining({ subtype: "success", result: "got TWO!" })
        ])
        expect(starts(dir)).toHaveLength(1)
      })
  )

  live(
    "killing the upstream: the next call is an isError result, the session goes on, the proxy reconnects",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("eca-upstream-")
        const { options, server } = yield* realCli({
          replies: [
            reply(toolUse("mcp__loud__shout", { text: "first" })),
            reply(text("one")),
            reply(toolUse("mcp__loud__shout", { text: "second" })),
            reply(text("two")),
            reply(toolUse("mcp__loud__whisper", { text: "THIRD" })),
            reply(text("three"))
          ]
        })
        const loud = yield* McpProxy.make({
          name: "loud",
          transport: upstream(dir),
          reconnect: Schedule.spaced("100 millis")
        })
        const session = yield* ClaudeAgent.session(options({
          mcpServers: { loud },
          allowedTools: ["mcp__loud__shout", "mcp__loud__whisper"]
        }))
        const first = yield* Stream.runCollect(session.turn("first"))
        expect(resultOf(first)).toMatchObject({ subtype: "success", result: "one" })

        // the server dies, and cannot come back for now
        fs.writeFileSync(path.join(dir, "block"), "")
        const [pid] = starts(dir)
        process.kill(pid!, "SIGKILL")
        const down = yield* statusWhere(loud, (s) => s._tag === "Disconnected" && s.failedAttempts >= 1)
        expect(down).toMatchObject({
          reason: "the server process exited; stderr: upstream fixture: blocked by the test"
        })

        const second = yield* Stream.runCollect(session.turn("second"))
        expect(resultOf(second)).toMatchObject({ subtype: "success", result: "two" })
        const [, afterKill] = yield* toolResults(server)
        expect(afterKill).toEqual([expect.objectContaining({ is_error: true })])
        // (the CLI may append a hint about the tool's schema to error results)
        expect(
          afterKill?.[0]?.content.startsWith(
            "MCP server \"loud\" is not connected (the server process exited; stderr: upstream fixture: blocked by " +
              "the test); the SDK is reconnecting, try again later."
          )
        ).toBe(true)

        // it comes back, with one more tool: the proxy reconnects (restarts it) and the CLI lists the tools again
        fs.writeFileSync(path.join(dir, "extra"), "")
        fs.rmSync(path.join(dir, "block"))
        expect(yield* statusWhere(loud, (s) => s._tag === "Connected")).toMatchObject({ connection: 2 })
        yield* session.mcpServerStatus.pipe(
          Effect.map((status) => status.find((s) => s.name === "loud")?.tools?.some((t) => t.name === "whisper")),
          Effect.repeat({ until: (listed) => listed === true, schedule: Schedule.spaced("50 millis") }),
          Effect.timeout("10 seconds")
        )
        const third = yield* Stream.runCollect(session.turn("third"))
        expect(initOf(third)?.mcp_servers).toContainEqual({ name: "loud", status: "connected", source: "sdk" })
        expect(initOf(third)?.tools).toContain("mcp__loud__whisper")
        expect(resultOf(third)).toMatchObject({ subtype: "success", result: "three" })
        const [, , afterReconnect] = yield* toolResults(server)
        expect(afterReconnect).toEqual([expect.objectContaining({ content: "third...", is_error: false })])
        expect(starts(dir)).toHaveLength(2)
      }).pipe(expectLogs([/^WARN MCP server "loud" disconnected: the server process exited/]))
  )
})
