import { describe, expect, expectTypeOf, it } from "vitest"
import * as Effect from "effect/Effect"
import { type Options, ProcessExited, query, type SDKMessage, AbortError, CliNotFound } from "effect-claude-agent/promise"
import { ScriptedCli } from "effect-claude-agent/testing"

const echo: Options = { transport: ScriptedCli.echo }

const collect = async (q: AsyncIterable<SDKMessage>) => {
  const out: Array<SDKMessage> = []
  for await (const m of q) out.push(m)
  return out
}

describe("promise API (scripted CLI)", () => {
  it("a string prompt yields the turn and ends", async () => {
    const messages = await collect(query({ prompt: "hi", options: echo }))
    expect(messages.map((m) => m.type)).toEqual(["system", "assistant", "result"])
    expect(messages.at(-1)).toMatchObject({ type: "result", result: "echo: hi" })
  })

  it("G9 the message type is a discriminated union, not any", () => {
    expectTypeOf<SDKMessage>().not.toBeAny()
    expectTypeOf<Extract<SDKMessage, { type: "result" }>["total_cost_usd"]>().toEqualTypeOf<number>()
    const narrow = (m: SDKMessage) => (m.type === "assistant" ? m.message.content : undefined)
    expectTypeOf(narrow).returns.not.toBeAny()
  })

  it("streaming input with an async generator: one turn per message", async () => {
    async function* prompts() {
      yield { type: "user" as const, message: { role: "user" as const, content: "first" }, parent_tool_use_id: null, session_id: "" }
      yield { type: "user" as const, message: { role: "user" as const, content: "second" }, parent_tool_use_id: null, session_id: "" }
    }
    const messages = await collect(query({ prompt: prompts(), options: echo }))
    expect(messages.filter((m) => m.type === "result").map((m) => (m.type === "result" && m.subtype === "success" ? m.result : ""))).toEqual([
      "echo: first",
      "echo: second"
    ])
  })

  it("errors are the SDK's own classes (instanceof, _tag), not FiberFailure wrappers", async () => {
    const q = query({
      prompt: "hi",
      options: { transport: ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.exit(3, "boom\n"))) }
    })
    const error = await collect(q).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProcessExited)
    expect(error).toMatchObject({ _tag: "ProcessExited", code: 3, stderrTail: "boom\n" })
    const missing = await collect(query({ prompt: "hi", options: { pathToClaudeCodeExecutable: "/nope/claude" } }))
      .catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(CliNotFound)
  })

  it("control methods return promises; breaking out of for await closes the query", async () => {
    const transport = ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, Effect.zipRight(cli.init(), cli.stall)))
    const q = query({ prompt: "hi", options: { transport } })
    expect((await q.supportedModels()).map((m) => m.value)).toContain("default")
    await q.setModel("haiku")
    expect(await q.setPermissionMode("acceptEdits")).toEqual({ mode: "acceptEdits" })
    for await (const m of q) {
      expect(m.type).toBe("system")
      break
    }
    // closed: the CLI is gone, methods reject with a typed error
    await expect(q.interrupt()).rejects.toMatchObject({ _tag: "InputClosed", reason: "closed" })
  })

  it("aborting rejects the iterator with AbortError", async () => {
    const controller = new AbortController()
    const q = query({
      prompt: "hi",
      options: { abortController: controller, transport: ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.stall)) }
    })
    const pending = q.next()
    setTimeout(() => controller.abort(), 20)
    await expect(pending).rejects.toBeInstanceOf(AbortError)
    await expect(q.next()).rejects.toBeInstanceOf(AbortError)
  })

  it("canUseTool and hooks run as async callbacks", async () => {
    const seen: Array<string> = []
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        const permission = yield* cli.canUseTool("Bash", { command: "touch x" })
        const hook = yield* cli.request("hook_callback", {
          callback_id: "hook_0",
          input: { session_id: "s", transcript_path: "/t", cwd: "/", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {}, tool_use_id: "t" },
          tool_use_id: "t"
        })
        yield* cli.turn(JSON.stringify({ permission, hook }))
      })
    )
    const messages = await collect(query({
      prompt: "go",
      options: {
        transport,
        canUseTool: async (toolName, input, { toolUseID, signal }) => {
          seen.push(`${toolName}:${toolUseID}:${signal.aborted}`)
          return { behavior: "allow", updatedInput: { ...input, command: "touch y" } }
        },
        hooks: {
          PreToolUse: [{ hooks: [async (input, toolUseID) => {
            seen.push(`hook:${input.hook_event_name}:${toolUseID}`)
            return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "nope" } }
          }] }]
        }
      }
    }))
    const last = messages.at(-1)
    const answer = JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "{}")
    expect(answer.permission).toMatchObject({ behavior: "allow", updatedInput: { command: "touch y" } })
    expect(answer.hook).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } })
    expect(seen).toEqual(["Bash:toolu_scripted_1:false", "hook:PreToolUse:t"])
  })

  it("a canUseTool that throws is a deny", async () => {
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.turn(JSON.stringify(yield* cli.canUseTool("Bash", { command: "x" })))
      })
    )
    const messages = await collect(query({
      prompt: "go",
      options: { transport, canUseTool: async () => { throw new Error("db down") } }
    }))
    const last = messages.at(-1)
    expect(JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "{}")).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining("db down")
    })
  })
})
