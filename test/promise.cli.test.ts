// The official SDK's documented usage, with only the import changed, against the real CLI (offline).
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import * as z from "zod"
import {
  AbortError,
  ApiError,
  createSdkMcpServer,
  query,
  type SDKMessage,
  type SDKUserMessage,
  startup,
  tool
} from "effect-claude-agent/promise"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { isAlive, OWNER_ENV } from "./support/process.js"
import { alive, cwd, server, usePromiseCli } from "./support/promiseCli.js"

usePromiseCli("eca-promise-")

const base = () => ({ cwd, env: { ...server.env(), [OWNER_ENV]: String(process.pid) } })
const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`
const resultOf = (messages: ReadonlyArray<SDKMessage>) => {
  const r = messages.find((m) => m.type === "result")
  return r?.type === "result" && r.subtype === "success" ? r.result : r?.type === "result" ? r.subtype : undefined
}

describe("promise API against the real CLI", () => {
  it("for await over a one-shot query", async () => {
    const messages: Array<SDKMessage> = []
    for await (
      const message of query({ prompt: "SAY Hello from the promise API", options: { ...base(), maxTurns: 1 } })
    ) {
      messages.push(message)
    }
    expect(resultOf(messages)).toBe("Hello from the promise API")
    expect(messages.find((m) => m.type === "system" && m.subtype === "init")).toBeDefined()
  })

  it("startup(): the CLI starts and initializes before the prompt, the query runs on it; an unused one is reaped", async () => {
    const warm = await startup({ options: { ...base(), maxTurns: 1 } })
    // initialized, and the model was not asked anything yet
    expect(await Effect.runPromise(server.requests)).toEqual([])
    const q = warm.query("SAY Hello from a warm CLI")
    const pid = await q.pid()
    const messages: Array<SDKMessage> = []
    for await (const message of q) messages.push(message)
    expect(resultOf(messages)).toBe("Hello from a warm CLI")
    expect(pid).toBeTypeOf("number")

    const unused = await startup({ options: base() })
    await unused.close()
    // afterEach: no process left
  })

  it("streaming input with an async generator", async () => {
    async function* generateMessages(): AsyncGenerator<SDKUserMessage> {
      yield { type: "user", message: { role: "user", content: "SAY first" }, parent_tool_use_id: null, session_id: "" }
      await new Promise((r) => setTimeout(r, 50))
      yield { type: "user", message: { role: "user", content: "HISTORY" }, parent_tool_use_id: null, session_id: "" }
    }
    const results: Array<string> = []
    for await (const message of query({ prompt: generateMessages(), options: base() })) {
      if (message.type === "result" && message.subtype === "success") results.push(message.result)
    }
    expect(results[0]).toBe("first")
    expect(results[1]).toContain("user prompts: SAY first | HISTORY")
  })

  it("canUseTool: allow with updatedInput changes what runs; deny keeps it from running", async () => {
    const asked: Array<string> = []
    const messages: Array<SDKMessage> = []
    for await (
      const m of query({
        prompt: bash("touch original.txt && echo original"),
        options: {
          ...base(),
          canUseTool: async (toolName, input) => {
            asked.push(toolName)
            return { behavior: "allow", updatedInput: { ...input, command: "touch rewritten.txt && echo rewritten" } }
          }
        }
      })
    ) messages.push(m)
    expect(asked).toEqual(["Bash"])
    expect(resultOf(messages)).toBe("tool said: rewritten")
    expect(fs.existsSync(path.join(cwd, "rewritten.txt"))).toBe(true)
    expect(fs.existsSync(path.join(cwd, "original.txt"))).toBe(false)

    const denied: Array<SDKMessage> = []
    for await (
      const m of query({
        prompt: bash("touch denied.txt && echo x"),
        options: { ...base(), canUseTool: async () => ({ behavior: "deny", message: "not on my watch" }) }
      })
    ) denied.push(m)
    expect(resultOf(denied)).toBe("tool said: not on my watch")
    expect(fs.existsSync(path.join(cwd, "denied.txt"))).toBe(false)
  })

  it("hooks: PreToolUse blocks, PostToolUse sees the output", async () => {
    const post: Array<unknown> = []
    const run = async (command: string) => {
      const out: Array<SDKMessage> = []
      for await (
        const m of query({
          prompt: bash(command),
          options: {
            ...base(),
            canUseTool: async () => ({ behavior: "allow" }),
            hooks: {
              PreToolUse: [{
                matcher: "Bash",
                hooks: [async (input) =>
                  JSON.stringify(input).includes("forbidden")
                    ? {
                      hookSpecificOutput: {
                        hookEventName: "PreToolUse",
                        permissionDecision: "deny",
                        permissionDecisionReason: "hook says no"
                      }
                    }
                    : {}]
              }],
              PostToolUse: [{
                hooks: [
                  async (input) => (post.push(input.hook_event_name === "PostToolUse" ? input.tool_response : null), {})
                ]
              }]
            }
          }
        })
      ) out.push(m)
      return resultOf(out)
    }
    expect(await run("touch fine.txt && echo fine")).toBe("tool said: fine")
    expect(post).toMatchObject([{ stdout: "fine" }])
    expect(await run("touch forbidden.txt && echo forbidden")).toContain("hook says no")
    expect(fs.existsSync(path.join(cwd, "forbidden.txt"))).toBe(false)
  })

  it("interrupt and setModel on a streaming query", async () => {
    await Effect.runPromise(server.addReplies(ScriptedModelServer.stall(30_000)))
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => (release = r))
    async function* prompts(): AsyncGenerator<SDKUserMessage> {
      yield {
        type: "user",
        message: { role: "user", content: "this one hangs" },
        parent_tool_use_id: null,
        session_id: ""
      }
      await gate
      yield { type: "user", message: { role: "user", content: "SAY after" }, parent_tool_use_id: null, session_id: "" }
    }
    const q = query({ prompt: prompts(), options: base() })
    const subtypes: Array<string> = []
    for await (const m of q) {
      if (m.type === "system" && m.subtype === "init" && subtypes.length === 0) {
        await Effect.runPromise(server.waitForRequest((r) => r.isMessages && r.stream === true))
        await q.interrupt()
      }
      if (m.type === "result") {
        subtypes.push(m.subtype)
        if (subtypes.length === 1) {
          await q.setModel("claude-haiku-4-5")
          release()
        }
      }
    }
    expect(subtypes).toEqual(["error_during_execution", "success"])
    const requests = (await Effect.runPromise(server.requests)).filter((r) => r.isMessages && !r.isProbe)
    expect(requests.at(-1)?.model).toBe("claude-haiku-4-5")
  })

  it("an in-process MCP tool with a zod schema", async () => {
    const seen: Array<unknown> = []
    const calc = createSdkMcpServer({
      name: "calc",
      version: "1.0.0",
      tools: [
        tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async (args) => {
          seen.push(args)
          return { content: [{ type: "text", text: String(args.a + args.b) }] }
        })
      ]
    })
    const messages: Array<SDKMessage> = []
    for await (
      const m of query({
        prompt: `TOOL mcp__calc__add ${JSON.stringify({ a: 2, b: 3 })}`,
        options: { ...base(), mcpServers: { calc }, allowedTools: ["mcp__calc__add"] }
      })
    ) messages.push(m)
    expect(seen).toEqual([{ a: 2, b: 3 }])
    expect(resultOf(messages)).toBe("tool said: 5")
    const init = messages.find((m) => m.type === "system" && m.subtype === "init")
    expect(init?.type === "system" && init.subtype === "init" && init.mcp_servers).toContainEqual(
      expect.objectContaining({ name: "calc", status: "connected" })
    )
    // invalid arguments come back to the model as an error naming the problem
    const bad: Array<SDKMessage> = []
    for await (
      const m of query({
        prompt: `TOOL mcp__calc__add ${JSON.stringify({ a: "two", b: 3 })}`,
        options: { ...base(), mcpServers: { calc }, allowedTools: ["mcp__calc__add"] }
      })
    ) bad.push(m)
    expect(resultOf(bad)).toContain("Invalid input for tool add")
    expect(seen).toHaveLength(1)
  })

  it("an in-process MCP tool with an Effect Schema", async () => {
    const seen: Array<unknown> = []
    const calc = createSdkMcpServer({
      name: "calc",
      version: "1.0.0",
      tools: [
        tool(
          "add",
          "Add two numbers",
          Schema.Struct({ a: Schema.Number, b: Schema.NumberFromString }),
          async (args) => {
            seen.push(args)
            return { content: [{ type: "text", text: String(args.a + args.b) }] }
          }
        )
      ]
    })
    const run = async (args: object) => {
      const messages: Array<SDKMessage> = []
      for await (
        const m of query({
          prompt: `TOOL mcp__calc__add ${JSON.stringify(args)}`,
          options: { ...base(), mcpServers: { calc }, allowedTools: ["mcp__calc__add"] }
        })
      ) messages.push(m)
      return messages
    }
    const messages = await run({ a: 2, b: "3" })
    // decoded: b arrives as a number
    expect(seen).toEqual([{ a: 2, b: 3 }])
    expect(resultOf(messages)).toBe("tool said: 5")
    const init = messages.find((m) => m.type === "system" && m.subtype === "init")
    expect(init?.type === "system" && init.subtype === "init" && init.mcp_servers).toContainEqual(
      expect.objectContaining({ name: "calc", status: "connected" })
    )
    expect(resultOf(await run({ a: 2, b: 3 }))).toContain("Invalid input for tool add")
    expect(seen).toHaveLength(1)
  })

  it("pid is the running CLI's process id; sessionId matches the messages", async () => {
    await Effect.runPromise(server.addReplies(ScriptedModelServer.stall(30_000)))
    const q = query({ prompt: "hangs", options: base() })
    const pid = await q.pid()
    expect(pid).toEqual(expect.any(Number))
    expect(alive()).toContain(pid)
    const first = await q.next()
    expect(first.value).toMatchObject({ type: "system", subtype: "init", session_id: await q.sessionId() })
    await q.close()
    expect(alive()).not.toContain(pid)
  })

  it("abort: the iterator throws AbortError and the CLI is gone", async () => {
    await Effect.runPromise(server.addReplies(ScriptedModelServer.stall(30_000)))
    const abortController = new AbortController()
    const q = query({ prompt: "hangs", options: { ...base(), abortController } })
    const error = await (async () => {
      for await (const m of q) {
        if (m.type === "system") abortController.abort()
      }
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AbortError)
  })

  it("breaking out of for await after the first message leaves no claude process", async () => {
    let first: SDKMessage | undefined
    for await (const m of query({ prompt: "SAY one", options: base() })) {
      first = m
      break
    }
    expect(first?.type).toBe("system")
    // afterEach asserts nothing is left
  })
})

describe("promise API against the real CLI: API errors (failOnApiError)", () => {
  it("a key the API refuses (401): the iterator yields the error result, then rejects with an authentication ApiError", async () => {
    const refusing = await ScriptedModelServer.start({
      replies: [ScriptedModelServer.httpError(401), ScriptedModelServer.httpError(401)]
    })
    try {
      const options = { cwd, env: { ...refusing.env(), [OWNER_ENV]: String(process.pid) } }
      const seen: Array<SDKMessage> = []
      const error = await (async () => {
        for await (const message of query({ prompt: "SAY hi", options: { ...options, failOnApiError: true } })) {
          seen.push(message)
        }
      })().then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toMatchObject({ _tag: "ApiError", status: 401, isAuthentication: true })
      expect(seen.at(-1)).toMatchObject({ type: "result", is_error: true })
      // without the option, the same turn ends as the official SDK's does: a result with is_error, no rejection
      const plain: Array<SDKMessage> = []
      for await (const message of query({ prompt: "SAY hi", options })) plain.push(message)
      expect(plain.at(-1)).toMatchObject({ type: "result", is_error: true })
    } finally {
      await refusing.close()
    }
  })
})

describe("promise API against the real CLI: a prompt generator waiting for the user's next input", () => {
  const user = (content: string): SDKUserMessage => ({
    type: "user",
    message: { role: "user", content },
    parent_tool_use_id: null,
    session_id: ""
  })
  // generous for a loaded machine (measured: well under a second); before the fix, close() never settled
  const CLOSE_BOUND_MS = 10_000

  it("close() mid-conversation settles and reaps the CLI", async () => {
    let answered: () => void = () => {}
    const firstAnswered = new Promise<void>((resolve) => (answered = resolve))
    async function* conversation(): AsyncGenerator<SDKUserMessage> {
      yield user("SAY first")
      await firstAnswered
      yield user("SAY second")
      // the user never types again
      await new Promise<never>(() => {})
    }
    const q = query({ prompt: conversation(), options: base() })
    const results: Array<string> = []
    while (results.length < 2) {
      const next = await q.next()
      if (next.done === true) throw new Error("the conversation ended early")
      const m = next.value
      if (m.type === "result") results.push(m.subtype === "success" ? m.result : m.subtype)
      if (results.length === 1) answered()
    }
    expect(results).toEqual(["first", "second"])
    const pid = await q.pid()
    expect(pid).toBeTypeOf("number")

    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      q.close(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`close() pending after ${CLOSE_BOUND_MS} ms`)), CLOSE_BOUND_MS)
      })
    ]).finally(() => clearTimeout(timer))
    expect(isAlive(pid!)).toBe(false)
    expect(await q.next()).toEqual({ done: true, value: undefined })
    // afterEach asserts nothing is left
  })
})
