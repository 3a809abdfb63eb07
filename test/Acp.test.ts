// The ACP agent without processes: the JSON-RPC edge under malformed and hostile input (in-memory streams, the
// scripted in-memory CLI), and the pure mappings (tool calls, prompts, stop reasons, "always" rules).
import type * as acp from "@agentclientprotocol/sdk"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Queue from "effect/Queue"
import * as Sink from "effect/Sink"
import * as os from "node:os"
import * as path from "node:path"
import { type Message, type Permissions, SessionStore, type Transport } from "effect-claude-agent"
import { Acp } from "effect-claude-agent/acp"
import { ScriptedCli } from "effect-claude-agent/testing"
import { alwaysRules } from "../src/internal/acp/permission.js"
import { toContent } from "../src/internal/acp/prompt.js"
import type * as Schema from "../src/internal/acp/schema.js"
import { stopReasonOf } from "../src/internal/acp/session.js"
import { toolInfo, toolResult } from "../src/internal/acp/tools.js"

const encoder = new TextEncoder()

const History = SessionStore.layer({ configDir: path.join(os.tmpdir(), "eca-acp-unit-none") }).pipe(
  Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
)

/** The agent over in-memory streams: `send` writes raw bytes, `next` reads the next message it wrote. */
const inMemory = (
  options: Acp.Options = {},
  transport: Layer.Layer<Transport.Transport> = ScriptedCli.echo,
  output?: Sink.Sink<unknown, Uint8Array, unknown, unknown>
) =>
  Effect.gen(function*() {
    const input = yield* Mailbox.make<Uint8Array>()
    const lines = yield* Queue.unbounded<string>()
    let buffer = ""
    const sink = output ?? Sink.forEach((chunk: Uint8Array) =>
      Effect.suspend(() => {
        buffer += new TextDecoder().decode(chunk)
        const parts = buffer.split("\n")
        buffer = parts.pop() ?? ""
        return Queue.offerAll(lines, parts)
      })
    )
    const fiber = yield* Acp.serve(Mailbox.toStream(input), sink, options).pipe(
      Effect.provide(Layer.merge(transport, History)),
      Effect.fork
    )
    const send = (text: string | Uint8Array) => input.offer(typeof text === "string" ? encoder.encode(text) : text)
    const next = Effect.map(Queue.take(lines), (line): Record<string, unknown> => JSON.parse(line))
    const request = (id: number | string, method: string, params?: unknown) =>
      send(`${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })}\n`)
    const initialize = Effect.zipRight(request(0, "initialize", { protocolVersion: 1 }), next)
    return { send, next, request, initialize, fiber, end: input.end }
  })

/** Reads up to the answer to request `id`, skipping notifications. */
const answerTo = (agent: { readonly next: Effect.Effect<Record<string, unknown>> }, id: number | string) =>
  Effect.gen(function*() {
    for (;;) {
      const message = yield* agent.next
      if (message["id"] === id) return message
    }
  })

const errorOf = (message: Record<string, unknown>) => message["error"] as { code: number; message: string }

describe("ACP agent: JSON-RPC faults (in memory)", () => {
  it.live("malformed lines get JSON-RPC errors and the connection goes on", () =>
    Effect.gen(function*() {
      const agent = yield* inMemory()
      yield* agent.send("not json\n")
      expect(yield* agent.next).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
      yield* agent.send("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}]\n")
      expect(errorOf(yield* agent.next).code).toBe(-32600)
      yield* agent.send("42\n")
      expect(errorOf(yield* agent.next).code).toBe(-32600)
      yield* agent.send("{\"id\":7,\"method\":\"initialize\"}\n")
      expect(yield* agent.next).toMatchObject({ id: 7, error: { code: -32600 } })
      yield* agent.send("{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"initialize\"}\n")
      expect(yield* agent.next).toMatchObject({ id: null, error: { code: -32600 } })
      yield* agent.send("{\"jsonrpc\":\"2.0\",\"id\":8}\n")
      expect(yield* agent.next).toMatchObject({ id: 8, error: { code: -32600 } })
      // blank lines are nothing; a CRLF line is a line
      yield* agent.send(
        "\n  \n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\r\n"
      )
      expect(yield* agent.next).toMatchObject({ id: 9, result: { protocolVersion: 1 } })
      yield* agent.end
      yield* Fiber.join(agent.fiber)
    }))

  it.live("requests before initialize are refused; unknown methods, bad params and unknown sessions are errors", () =>
    Effect.gen(function*() {
      const agent = yield* inMemory()
      yield* agent.request(1, "session/new", { cwd: "/tmp", mcpServers: [] })
      expect(yield* agent.next).toMatchObject({ id: 1, error: { code: -32600 } })
      yield* agent.request(2, "initialize", { protocolVersion: "one" })
      expect(yield* agent.next).toMatchObject({ id: 2, error: { code: -32602 } })
      expect(yield* agent.initialize).toMatchObject({ id: 0, result: { protocolVersion: 1 } })
      yield* agent.request(3, "session/nope", {})
      expect(yield* agent.next).toMatchObject({ id: 3, error: { code: -32601 } })
      yield* agent.request(4, "session/prompt", { sessionId: "no-such-session", prompt: [] })
      expect(yield* agent.next).toMatchObject({
        id: 4,
        error: { code: -32002, data: { sessionId: "no-such-session" } }
      })
      yield* agent.request(5, "session/new", { cwd: "relative/dir", mcpServers: [] })
      expect(yield* agent.next).toMatchObject({ id: 5, error: { code: -32602 } })
      // a session id that is not the CLI's (a UUID) never reaches the CLI's argv
      yield* agent.request(6, "session/load", {
        sessionId: "--dangerously-skip-permissions",
        cwd: "/tmp",
        mcpServers: []
      })
      expect(yield* agent.next).toMatchObject({ id: 6, error: { code: -32002 } })
      yield* agent.request(7, "__proto__", {})
      expect(yield* agent.next).toMatchObject({ id: 7, error: { code: -32601 } })
      // a notification gets no answer, known or not, well-formed or not
      yield* agent.send("{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"x\"}}\n")
      yield* agent.send("{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":42}\n")
      yield* agent.send("{\"jsonrpc\":\"2.0\",\"method\":\"toString\"}\n")
      yield* agent.request(8, "initialize", { protocolVersion: 1 })
      expect(yield* agent.next).toMatchObject({ id: 8 })
      yield* agent.end
      yield* Fiber.join(agent.fiber)
    }))

  it.live("a message over the size limit is refused without being held, and the next one is read", () =>
    Effect.gen(function*() {
      const agent = yield* inMemory({ maxMessageBytes: 100 })
      const big = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"${"x".repeat(500)}"}}`
      // the long line arrives in pieces, the next line in the same chunk as its end
      yield* agent.send(big.slice(0, 60))
      yield* agent.send(big.slice(60, 300))
      yield* agent.send(
        `${big.slice(300)}\n{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}\n`
      )
      expect(yield* agent.next).toMatchObject({ id: null, error: { code: -32600 } })
      expect(yield* agent.next).toMatchObject({ id: 2, result: { protocolVersion: 1 } })
      yield* agent.end
      yield* Fiber.join(agent.fiber)
    }))

  it.live("a character split across chunks survives", () =>
    Effect.gen(function*() {
      const agent = yield* inMemory()
      const bytes = encoder.encode(
        `{"jsonrpc":"2.0","id":"é€😀","method":"initialize","params":{"protocolVersion":1}}\n`
      )
      const split = bytes.indexOf(0xe2) + 1
      yield* agent.send(bytes.slice(0, split))
      yield* agent.send(bytes.slice(split))
      expect(yield* agent.next).toMatchObject({ id: "é€😀", result: { protocolVersion: 1 } })
      yield* agent.end
      yield* Fiber.join(agent.fiber)
    }))

  it.live("a text turn over the scripted CLI; a prompt the agent cannot send is invalid params", () =>
    Effect.gen(function*() {
      const agent = yield* inMemory()
      yield* agent.initialize
      yield* agent.request(1, "session/new", { cwd: os.tmpdir(), mcpServers: [] })
      const created = yield* agent.next
      const sessionId = (created["result"] as { sessionId: string }).sessionId
      yield* agent.request(2, "session/prompt", {
        sessionId,
        prompt: [{ type: "audio", data: "", mimeType: "audio/wav" }]
      })
      expect(yield* answerTo(agent, 2)).toMatchObject({ error: { code: -32602 } })
      yield* agent.request(3, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] })
      const seen: Array<Record<string, unknown>> = []
      for (;;) {
        const message = yield* agent.next
        if (message["id"] === 3) {
          expect(message).toMatchObject({ result: { stopReason: "end_turn" } })
          break
        }
        seen.push(message)
      }
      expect(seen).toContainEqual({
        jsonrpc: "2.0",
        method: "session/update",
        params: {
          sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "echo: hi" } }
        }
      })
      yield* agent.end
      yield* Fiber.join(agent.fiber)
    }))

  it.live("$/cancel_request of a request in flight answers it request cancelled", () =>
    Effect.gen(function*() {
      const agent = yield* inMemory({}, ScriptedCli.neverAnswersInitialize)
      yield* agent.initialize
      yield* agent.request("new", "session/new", { cwd: os.tmpdir(), mcpServers: [] })
      yield* agent.send("{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":\"new\"}}\n")
      expect(yield* agent.next).toMatchObject({ id: "new", error: { code: -32800 } })
      yield* agent.end
      yield* Fiber.join(agent.fiber)
    }))

  it.live("an output that fails is the client going: serve returns", () =>
    Effect.gen(function*() {
      const agent = yield* inMemory({}, ScriptedCli.echo, Sink.fail("EPIPE"))
      yield* agent.request(1, "initialize", { protocolVersion: 1 })
      yield* Fiber.join(agent.fiber)
    }))
})

describe("ACP agent: mappings", () => {
  const cwd = "/work/project"

  it("tool calls have the kind, title, locations and diff an editor shows", () => {
    expect(toolInfo("Read", { file_path: "/work/project/src/a.ts", offset: 10, limit: 5 }, cwd)).toEqual({
      title: "Read src/a.ts (10 - 15)",
      kind: "read",
      locations: [{ path: "/work/project/src/a.ts", line: 10 }],
      content: []
    })
    expect(toolInfo("Edit", { file_path: "src/a.ts", old_string: "a", new_string: "b" }, cwd)).toMatchObject({
      title: "Edit src/a.ts",
      kind: "edit",
      content: [{ type: "diff", path: "/work/project/src/a.ts", oldText: "a", newText: "b" }]
    })
    expect(toolInfo("Write", { file_path: "/elsewhere/x", content: "new" }, cwd)).toMatchObject({
      title: "Write /elsewhere/x",
      content: [{ type: "diff", path: "/elsewhere/x", oldText: null, newText: "new" }]
    })
    expect(toolInfo("Bash", { command: "npm test", description: "Run the tests" }, cwd)).toMatchObject({
      title: "`npm test`",
      kind: "execute"
    })
    expect(toolInfo("Grep", { pattern: "TODO", path: "src" }, cwd)).toMatchObject({
      title: "grep \"TODO\" src",
      kind: "search"
    })
    expect(toolInfo("WebFetch", { url: "https://x.dev" }, cwd)).toMatchObject({ kind: "fetch" })
    expect(toolInfo("mcp__acp__Edit", { file_path: "a", old_string: "x", new_string: "y" }, cwd).kind).toBe("edit")
    expect(toolInfo("mcp__other__thing", {}, cwd)).toEqual({
      title: "mcp__other__thing",
      kind: "other",
      locations: [],
      content: []
    })
  })

  it("the model's input is untrusted: wrong types are left out, never guessed", () => {
    expect(toolInfo("Edit", { file_path: 42, old_string: ["x"] }, cwd)).toEqual({
      title: "Edit",
      kind: "edit",
      locations: [],
      content: []
    })
    expect(toolInfo("Read", "not an object", cwd)).toMatchObject({ title: "Read", locations: [] })
    expect(toolInfo("Bash", { command: `echo ${"x".repeat(500)}` }, cwd).title.length).toBeLessThanOrEqual(200)
  })

  it("a command's output is fenced so that no backticks in it close the block", () => {
    const update = toolResult("Bash", { type: "tool_result", tool_use_id: "t", content: "a ``` b" })
    expect(update.content).toEqual([{ type: "content", content: { type: "text", text: "````\na ``` b\n````" } }])
    expect(toolResult("Bash", { type: "tool_result", tool_use_id: "t", content: "boom", is_error: true }).status)
      .toBe("failed")
  })

  it("prompts: text, images, embedded context and links; audio is refused", () => {
    const content = toContent([
      { type: "text", text: "look" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "resource", resource: { uri: "file:///w/a.ts", text: "const a = 1" } },
      { type: "resource_link", uri: "file:///w/b%20c.ts", name: "b c.ts" }
    ])
    expect(content).toEqual(Either.right([
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      { type: "text", text: "<context ref=\"file:///w/a.ts\">\nconst a = 1\n</context>" },
      { type: "text", text: "@/w/b c.ts" }
    ]))
    expect(Either.isLeft(toContent([{ type: "audio", data: "", mimeType: "audio/wav" }]))).toBe(true)
    expect(Either.isLeft(toContent([]))).toBe(true)
  })

  it("stop reasons are mapped exactly", () => {
    const base = {
      type: "result",
      duration_ms: 1,
      duration_api_ms: 1,
      num_turns: 1,
      session_id: "s",
      uuid: "u",
      total_cost_usd: 0,
      usage: {},
      modelUsage: {},
      permission_denials: []
    } as const
    const success = (fields: Partial<Message.ResultSuccess>): Message.ResultMessage => ({
      ...base,
      subtype: "success",
      is_error: false,
      result: "",
      ...fields
    })
    expect(stopReasonOf(success({ stop_reason: "end_turn" }), false)).toEqual(Either.right("end_turn"))
    expect(stopReasonOf(success({ stop_reason: "end_turn" }), true)).toEqual(Either.right("cancelled"))
    expect(stopReasonOf(success({ stop_reason: "max_tokens" }), false)).toEqual(Either.right("max_tokens"))
    expect(stopReasonOf(success({ is_error: true, stop_reason: "stop_sequence" }), false, "max_output_tokens"))
      .toEqual(Either.right("max_tokens"))
    expect(stopReasonOf(success({ is_error: true, stop_reason: "refusal" }), false)).toEqual(Either.right("refusal"))
    expect(Either.isLeft(stopReasonOf(success({ is_error: true, result: "API Error: 500" }), false))).toBe(true)
    expect(stopReasonOf({ ...base, subtype: "error_max_turns", is_error: true, errors: [] }, false))
      .toEqual(Either.right("max_turn_requests"))
    expect(Either.isLeft(stopReasonOf({ ...base, subtype: "error_max_budget_usd", is_error: true, errors: [] }, false)))
      .toBe(true)
  })

  it("\"always\" remembers a rule no broader than the request", () => {
    const request = (
      toolName: string,
      input: Record<string, unknown>,
      suggestions: Permissions.PermissionRequest["suggestions"] = []
    ) => ({ toolName, input, suggestions }) as unknown as Permissions.PermissionRequest
    expect(alwaysRules(request("Bash", { command: "npm test" }))).toEqual(["Bash(npm test)"])
    // a `*` would be a wildcard, a `)` would end the rule: no "always" is offered
    expect(alwaysRules(request("Bash", { command: "rm -rf *" }))).toEqual([])
    expect(alwaysRules(request("Bash", { command: "echo a) b" }))).toEqual([])
    expect(alwaysRules(request("Read", { file_path: "/x" }))).toEqual(["Read"])
    expect(alwaysRules(request("Bash", { command: "npm test" }, [{
      type: "addRules",
      rules: [{ toolName: "Bash", ruleContent: "npm test:*" }],
      behavior: "allow",
      destination: "localSettings"
    }]))).toEqual(["Bash(npm test:*)"])
  })

  it("what the agent sends is what the ACP SDK's types accept (checked by the typecheck)", () => {
    // the SDK's types use mutable arrays; ours are read-only
    type Mutable<T> = T extends ReadonlyArray<infer A> ? Array<Mutable<A>>
      : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> }
      : T
    const accepts = {
      update: (u: Mutable<Schema.SessionUpdate>): acp.SessionUpdate => u,
      content: (c: Mutable<Schema.ToolCallContent>): acp.ToolCallContent => c,
      option: (o: Mutable<Schema.PermissionOption>): acp.PermissionOption => o,
      modes: (m: Mutable<Schema.SessionModeState>): acp.SessionModeState => m,
      config: (c: Mutable<Schema.SessionConfigOption>): acp.SessionConfigOption => c,
      stop: (s: Schema.StopReason): acp.StopReason => s
    }
    expect(Object.keys(accepts)).toHaveLength(6)
  })
})
