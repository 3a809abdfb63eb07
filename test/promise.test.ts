import { describe, expect, expectTypeOf, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { getEventListeners } from "node:events"
import * as z from "zod"
import * as zm from "zod/mini"
import * as z3 from "zod/v3"
import {
  AbortError,
  type CanUseTool,
  CliNotFound,
  ControlError,
  createSdkMcpServer,
  InputClosed,
  InvalidOptions,
  isAgentError,
  type Options,
  type Query,
  query,
  type SDKMessage,
  type SDKUserMessage,
  StartupFailed,
  startup,
  tool
} from "effect-claude-agent/promise"
import { FakeCli, ScriptedCli } from "effect-claude-agent/testing"
import { capturePromiseLogs } from "./support/logs.js"
import { descendants, isAlive } from "./support/process.js"

const echo: Options = { transport: ScriptedCli.echo }

const collect = async (q: AsyncIterable<SDKMessage>) => {
  const out: Array<SDKMessage> = []
  for await (const m of q) out.push(m)
  return out
}

/** The JSON a scripted CLI put in the query's final result. */
const answerOf = (messages: ReadonlyArray<SDKMessage>) => {
  const last = messages.at(-1)
  return JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "null")
}

/** A scripted CLI that reads the prompt, runs `script`, and ends with a result holding what `script` returned. */
const reporting = (script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<unknown, ScriptedCli.ScriptError>) =>
  ScriptedCli.layer((cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.result(JSON.stringify(yield* script(cli)))
    })
  )

/** A promise and the function that resolves it. */
const resolvable = () => {
  let resolve: () => void = () => {}
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * A scripted CLI that sends `request` as control request "withdrawn" and withdraws it once the callback has `started`,
 * then runs `then` (by default it gives a late answer 20 ms to arrive); its result holds what `then` returned and how
 * many answers "withdrawn" got.
 */
const withdrawing = (
  request: Readonly<Record<string, unknown>>,
  started: Promise<void>,
  then: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<unknown, ScriptedCli.ScriptError> = () => Effect.sleep(20)
) =>
  ScriptedCli.layer((cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.emit({ type: "control_request", request_id: "withdrawn", request })
      yield* Effect.promise(() => started)
      yield* cli.cancel("withdrawn")
      const after = yield* then(cli)
      const answers = (yield* cli.received).filter((m) =>
        m.type === "control_response" && m.response.request_id === "withdrawn"
      )
      yield* cli.result(JSON.stringify({ after, withdrawnAnswers: answers.length }))
    })
  )

/**
 * A scripted CLI that hands itself to the test (to read what the SDK wrote) and records when its script ended; by
 * default it reads the prompt, writes `system/init` and then stays silent (a running turn) until the SDK closes its
 * stdin, and exits then, as the real CLI does.
 */
const captured = (
  script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<void, ScriptedCli.ScriptError> = (cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.init()
      yield* cli.peer.inputEnded
    }),
  options?: ScriptedCli.Options
) => {
  let resolve: (cli: ScriptedCli.ScriptedCli) => void = () => {}
  const cli = new Promise<ScriptedCli.ScriptedCli>((r) => (resolve = r))
  let resolveEnded: () => void = () => {}
  /** Settles when the scripted CLI's connection has ended (`state.ended`). */
  const ended = new Promise<void>((r) => (resolveEnded = r))
  const state = { opened: false, ended: false }
  const transport = ScriptedCli.layer(
    (c) =>
      Effect.sync(() => {
        state.opened = true
        resolve(c)
      }).pipe(
        Effect.zipRight(script(c)),
        Effect.ensuring(Effect.sync(() => {
          state.ended = true
          resolveEnded()
        }))
      ),
    options
  )
  return { transport, cli, state, ended }
}

/** The bodies of the control requests the SDK wrote to the CLI, `initialize` left out. */
const controlRequests = async (cli: Promise<ScriptedCli.ScriptedCli>) => {
  const received = await Effect.runPromise((await cli).received)
  return received.flatMap((
    f
  ) => (f.type === "control_request" && f.request.subtype !== "initialize" ? [f.request] : []))
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
      yield {
        type: "user" as const,
        message: { role: "user" as const, content: "first" },
        parent_tool_use_id: null,
        session_id: ""
      }
      yield {
        type: "user" as const,
        message: { role: "user" as const, content: "second" },
        parent_tool_use_id: null,
        session_id: ""
      }
    }
    const messages = await collect(query({ prompt: prompts(), options: echo }))
    expect(
      messages.filter((m) => m.type === "result").map((
        m
      ) => (m.type === "result" && m.subtype === "success" ? m.result : ""))
    ).toEqual([
      "echo: first",
      "echo: second"
    ])
  })

  it("errors are the SDK's own errors (isAgentError, _tag), not FiberFailure wrappers", async () => {
    const q = query({
      prompt: "hi",
      options: { transport: ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.exit(3, "boom\n"))) }
    })
    const error = await collect(q).catch((e: unknown) => e)
    // made by ScriptedCli, i.e. the Effect entry's copy of the class: recognised across copies by the brand
    expect(isAgentError(error, "ProcessExited")).toBe(true)
    expect(error).toMatchObject({ _tag: "ProcessExited", code: 3, stderrTail: "boom\n" })
    const missing = await collect(query({ prompt: "hi", options: { pathToClaudeCodeExecutable: "/nope/claude" } }))
      .catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(CliNotFound)
  })

  it("control methods return promises; breaking out of for await closes the query", async () => {
    const transport = ScriptedCli.layer((cli) =>
      Effect.zipRight(cli.expectUser, Effect.zipRight(cli.init(), cli.stall))
    )
    const q = query({ prompt: "hi", options: { transport } })
    expect((await q.supportedModels()).map((m) => m.value)).toContain("default")
    await q.setModel("haiku")
    expect(await q.setPermissionMode("acceptEdits")).toEqual({ mode: "acceptEdits" })
    for await (const m of q) {
      expect(m.type).toBe("system")
      break
    }
    // closed: the CLI is gone, methods reject with a typed error
    await expect(q.interrupt()).rejects.toMatchObject({ _tag: "InputClosed", reason: "SessionClosed" })
  })

  it("next() called again before the last call settled: every message, in order, as an async generator would", async () => {
    const q = query({ prompt: "hi", options: echo })
    const results = await Promise.all(Array.from({ length: 8 }, () => q.next()))
    const types = results.flatMap((r) => (r.done === true ? [] : [r.value.type]))
    const sequential = await collect(query({ prompt: "hi", options: echo }))
    expect(types).toEqual(sequential.map((m) => m.type))
    expect(results.slice(types.length).every((r) => r.done === true)).toBe(true)
  })

  it("a next() called from the settlement of an earlier one waits for the calls made before it", async () => {
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.init()
        for (const text of ["u1", "u2"]) {
          yield* Effect.sleep(10)
          yield* cli.assistant(text)
        }
        yield* Effect.sleep(10)
        yield* cli.result("done")
      })
    )
    const q = query({ prompt: "hi", options: { transport } })
    const text = (r: IteratorResult<SDKMessage, void>) =>
      r.done !== true && r.value.type === "assistant"
        ? JSON.stringify(r.value.message.content)
        : r.done === true
        ? "done"
        : r.value.type
    const first = q.next()
    const third = first.then(() => q.next())
    const second = q.next()
    expect([text(await first), text(await second), text(await third)]).toEqual([
      "system",
      expect.stringContaining("u1"),
      expect.stringContaining("u2")
    ])
    await q.return()
  })

  it("after return(), next() is done even with messages pulled but not handed out", async () => {
    const q = query({ prompt: "hi", options: echo })
    expect((await q.next()).done).toBe(false)
    await q.return()
    expect(await q.next()).toEqual({ done: true, value: undefined })
  })

  it("aborting rejects the iterator with AbortError", async () => {
    const controller = new AbortController()
    // the CLI aborts once it has the prompt: the next() below is pending by then (the CLI sends nothing)
    const transport = ScriptedCli.layer((cli) =>
      cli.expectUser.pipe(Effect.zipRight(Effect.sync(() => controller.abort())), Effect.zipRight(cli.stall))
    )
    const q = query({ prompt: "hi", options: { abortController: controller, transport } })
    const pending = q.next()
    await expect(pending).rejects.toBeInstanceOf(AbortError)
    await expect(q.next()).rejects.toBeInstanceOf(AbortError)
  })

  it("canUseTool's options carry signal as an own enumerable property, built on read through one shared getter", async () => {
    const seen: Array<Parameters<CanUseTool>[2]> = []
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.canUseTool("Bash", { command: "ls" })
        yield* cli.canUseTool("Read", { file_path: "/tmp/x" })
        yield* cli.turn("done")
      })
    )
    await collect(query({
      prompt: "go",
      options: {
        transport,
        canUseTool: async (_toolName, input, options) => {
          seen.push(options)
          return { behavior: "allow", updatedInput: input }
        }
      }
    }))
    expect(seen).toHaveLength(2)
    const [first, second] = seen.map((o) => Object.getOwnPropertyDescriptor(o, "signal"))
    expect(first?.enumerable).toBe(true)
    expect(typeof first?.get).toBe("function")
    // one getter for every call's options: a getter per object leaves each in V8's slow dictionary mode
    expect(second?.get).toBe(first?.get)
    expect(Object.keys(seen[0]!).slice(0, 4)).toEqual(["signal", "suggestions", "toolUseID", "requestId"])
    const copy = { ...seen[0]! }
    expect(copy.signal).toBeInstanceOf(AbortSignal)
    expect(copy.signal).toBe(seen[0]!.signal)
    // a plain object, whose signal also reads through a Proxy or an object inheriting from it (as a data property does)
    expect(Object.getPrototypeOf(seen[0])).toBe(Object.prototype)
    expect(new Proxy(seen[0]!, {}).signal).toBe(seen[0]!.signal)
    expect((Object.create(seen[0]!) as Parameters<CanUseTool>[2]).signal).toBe(seen[0]!.signal)
  })

  it("canUseTool and hooks run as async callbacks", async () => {
    const seen: Array<string> = []
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        const permission = yield* cli.canUseTool("Bash", { command: "touch x" })
        const hook = yield* cli.request("hook_callback", {
          callback_id: "hook_0",
          input: {
            session_id: "s",
            transcript_path: "/t",
            cwd: "/",
            hook_event_name: "PreToolUse",
            tool_name: "Bash",
            tool_input: {},
            tool_use_id: "t"
          },
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
          PreToolUse: [{
            hooks: [async (input, toolUseID) => {
              seen.push(`hook:${input.hook_event_name}:${toolUseID}`)
              return {
                hookSpecificOutput: {
                  hookEventName: "PreToolUse",
                  permissionDecision: "deny",
                  permissionDecisionReason: "nope"
                }
              }
            }]
          }]
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
    const logs = capturePromiseLogs([/^warning Permission for Bash denied: the permission handler failed: db down$/])
    const messages = await collect(query({
      prompt: "go",
      options: {
        transport,
        logger: logs.logger,
        canUseTool: async () => {
          throw new Error("db down")
        }
      }
    }))
    logs.check()
    const last = messages.at(-1)
    expect(JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "{}")).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining("db down")
    })
  })
})

describe("promise API: startup() (scripted CLI)", () => {
  it("resolves once initialize is answered, before any prompt; query() then runs the turn on that CLI", async () => {
    const { transport, cli, state } = captured(
      (c) =>
        Effect.gen(function*() {
          const user = yield* c.expectUser
          yield* c.init()
          yield* c.result(`answered: ${JSON.stringify(user.message.content)}`)
          yield* c.peer.inputEnded
        }),
      { delays: { initialize: "30 millis" } }
    )
    const began = performance.now()
    const warm = await startup({ options: { transport } })
    // not before the (delayed) answer to initialize
    expect(performance.now() - began).toBeGreaterThanOrEqual(25)
    const received = await Effect.runPromise((await cli).received)
    // initialize went out and was answered; the prompt was not sent yet
    expect(received.map((m) => m.type)).toEqual(["control_request"])
    expect(state.ended).toBe(false)
    const messages = await collect(warm.query("hi"))
    expect(messages.at(-1)).toMatchObject({ type: "result", result: `answered: [{"type":"text","text":"hi"}]` })
    expect(state.ended).toBe(true)
  })

  it("query() can be called once; close() after it leaves the query running; query() after close() throws", async () => {
    const warm = await startup({ options: echo })
    const q = warm.query("one")
    expect(() => warm.query("two")).toThrow(InvalidOptions)
    await warm.close()
    expect((await collect(q)).at(-1)).toMatchObject({ type: "result", result: "echo: one" })

    const unused = await startup({ options: echo })
    await unused.close()
    const error = (() => {
      try {
        unused.query("late")
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(InputClosed)
  })

  it("close() and await using reap a CLI that never got a prompt; the prompt is never sent", async () => {
    const first = captured()
    const warm = await startup({ options: { transport: first.transport } })
    expect(first.state.ended).toBe(false)
    await warm.close()
    expect(first.state.ended).toBe(true)
    const received = await Effect.runPromise((await first.cli).received)
    expect(received.some((m) => m.type === "user")).toBe(false)

    const second = captured()
    {
      await using _warm = await startup({ options: { transport: second.transport } })
      expect(second.state.ended).toBe(false)
    }
    expect(second.state.ended).toBe(true)
  })

  it("the end of an await using block closes the query it handed out too (as the official SDK does)", async () => {
    const { transport, state } = captured()
    let q: Query | undefined
    {
      await using warm = await startup({ options: { transport } })
      q = warm.query("hi")
      expect((await q.next()).value).toMatchObject({ type: "system", subtype: "init" })
      expect(state.ended).toBe(false)
    }
    expect(state.ended).toBe(true)
    expect(await q.next()).toEqual({ done: true, value: undefined })
  })

  it("an abort while warm reaps the CLI; the query handed out later rejects with AbortError", async () => {
    const controller = new AbortController()
    const { transport, ended } = captured()
    const warm = await startup({ options: { transport, abortController: controller } })
    controller.abort()
    // the CLI's end, not a pause: if the abort did not reap it, this waits until the test times out
    await ended
    await expect(warm.query("hi").next()).rejects.toBeInstanceOf(AbortError)
  })

  it("a prompt that is not a string or an async iterable: InvalidOptions, and no CLI is started", async () => {
    const { transport, state } = captured()
    const q = query({ prompt: undefined as unknown as string, options: { transport } })
    await expect(q.next()).rejects.toMatchObject({ _tag: "InvalidOptions", option: "prompt" })
    expect(state.opened).toBe(false)

    const warm = await startup({ options: echo })
    expect(() => warm.query(42 as unknown as string)).toThrow(InvalidOptions)
    // the warm query is still there to use
    expect((await collect(warm.query("hi"))).at(-1)).toMatchObject({ result: "echo: hi" })
  })

  it("a streaming prompt: one turn per message", async () => {
    const warm = await startup({ options: echo })
    async function* prompts(): AsyncGenerator<SDKUserMessage> {
      yield { type: "user", message: { role: "user", content: "a" }, parent_tool_use_id: null, session_id: "" }
      yield { type: "user", message: { role: "user", content: "b" }, parent_tool_use_id: null, session_id: "" }
    }
    const results = (await collect(warm.query(prompts()))).flatMap((m) =>
      m.type === "result" && m.subtype === "success" ? [m.result] : []
    )
    expect(results).toEqual(["echo: a", "echo: b"])
  })

  it("rejects with the start-up error and reaps the CLI: initializeTimeoutMs, a CLI that exits, a missing CLI", async () => {
    const silent = captured(undefined, { silent: ["initialize"] })
    let released = false
    // the caller's transport layer is released too
    const transport = Layer.merge(
      silent.transport,
      Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => (released = true))))
    )
    const timedOut = await startup({ options: { transport }, initializeTimeoutMs: 50 }).catch((e) => e)
    expect(timedOut).toBeInstanceOf(StartupFailed)
    // the scripted CLI wrote nothing at all
    expect(timedOut).toMatchObject({ _tag: "StartupFailed", reason: "FirstLine" })
    expect(silent.state.ended).toBe(true)
    expect(released).toBe(true)

    const dying = ScriptedCli.layer((cli) => cli.exit(3, "boom\n"), { silent: ["initialize"] })
    const exited = await startup({ options: { transport: dying } }).catch((e) => e)
    expect(exited).toBeInstanceOf(StartupFailed)
    expect(exited).toMatchObject({ _tag: "StartupFailed", exitCode: 3 })

    const missing = await startup({ options: { pathToClaudeCodeExecutable: "/nope/claude" } }).catch((e) => e)
    expect(missing).toBeInstanceOf(CliNotFound)
  })

  it("an abort while starting rejects with AbortError and reaps the CLI", async () => {
    const controller = new AbortController()
    // a CLI that never answers initialize and never exits: only the abort ends the start-up
    const starting = captured((c) => c.stall, { silent: ["initialize"] })
    const pending = startup({ options: { transport: starting.transport, abortController: controller } })
    // started and waiting for initialize
    await starting.cli
    controller.abort()
    await expect(pending).rejects.toBeInstanceOf(AbortError)
    expect(starting.state.ended).toBe(true)
  })

  it("initializeTimeoutMs must be a number of milliseconds ≥ 0; Infinity is no bound", async () => {
    for (const bad of [-1, Number.NaN, "5" as unknown as number]) {
      await expect(startup({ options: echo, initializeTimeoutMs: bad })).rejects.toMatchObject({
        _tag: "InvalidOptions",
        option: "initializeTimeoutMs"
      })
    }
    const warm = await startup({ options: echo, initializeTimeoutMs: Number.POSITIVE_INFINITY })
    expect((await collect(warm.query("hi"))).at(-1)).toMatchObject({ result: "echo: hi" })
  })
})

describe("promise API: startup() with a fake CLI process", () => {
  const fake = (): Options => {
    const program = FakeCli.executable()
    return {
      pathToClaudeCodeExecutable: program.executable,
      executableArgs: [...program.executableArgs],
      env: FakeCli.env(FakeCli.echoScenario)
    }
  }
  it("the warm process answers the prompt; a warm query closed unused leaves no process", async () => {
    const before = new Set(descendants(process.pid))
    const warm = await startup({ options: fake() })
    const started = descendants(process.pid).filter((p) => !before.has(p))
    expect(started.length).toBeGreaterThan(0)
    const q = warm.query("hello")
    const pid = await q.pid()
    expect(pid !== undefined && started.includes(pid)).toBe(true)
    expect((await collect(q)).at(-1)).toMatchObject({ type: "result", result: "echo: hello" })

    const unused = await startup({ options: fake() })
    const spawned = descendants(process.pid).filter((p) => !before.has(p))
    expect(spawned.length).toBeGreaterThan(0)
    await unused.close()
    expect(spawned.filter(isAlive)).toEqual([])
    expect(descendants(process.pid).filter((p) => !before.has(p))).toEqual([])
  })
})

describe("promise API: Query methods (scripted CLI)", () => {
  it("initialization data comes from the initialize answer: no request is sent for it", async () => {
    const initializeResponse = {
      commands: [{ name: "deploy", description: "Ship it", argumentHint: "<env>" }],
      agents: [{ name: "reviewer", description: "Reviews diffs", model: "haiku" }],
      models: [{ value: "opus", displayName: "Opus", description: "Most capable" }],
      account: { email: "dev@example.com", organization: "Acme", apiProvider: "firstParty" as const }
    }
    const { transport, cli } = captured(undefined, { initializeResponse })
    const q = query({ prompt: "hi", options: { transport } })
    expect(await q.supportedCommands()).toEqual(initializeResponse.commands)
    expect(await q.supportedAgents()).toEqual(initializeResponse.agents)
    expect(await q.supportedModels()).toEqual(initializeResponse.models)
    expect(await q.accountInfo()).toEqual(initializeResponse.account)
    const init = await q.initializationResult()
    expect(init).toMatchObject({ ...initializeResponse, output_style: "default", claude_code_version: "2.1.332" })
    expect(await controlRequests(cli)).toEqual([])
    await q.close()
  })

  it("supportedCommands follows system/commands_changed", async () => {
    const commands = [{ name: "fresh", description: "Added later", argumentHint: "" }]
    const { transport } = captured((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.init()
        // only once the test has read the first list (the SDK reads ahead of the consumer)
        yield* cli.expectControl("set_model")
        yield* cli.emit({
          type: "system",
          subtype: "commands_changed",
          commands,
          session_id: cli.sessionId,
          uuid: "u-1"
        })
        yield* cli.peer.inputEnded
      })
    )
    const q = query({ prompt: "hi", options: { transport } })
    expect((await q.supportedCommands()).map((c) => c.name)).toEqual(["compact"])
    await q.setModel("haiku")
    expect((await q.next()).value).toMatchObject({ type: "system", subtype: "init" })
    expect((await q.next()).value).toMatchObject({ type: "system", subtype: "commands_changed" })
    expect(await q.supportedCommands()).toEqual(commands)
    await q.close()
  })

  it("sessionId and pid: known before the first message; the scripted CLI has no pid", async () => {
    const { transport, cli } = captured()
    const q = query({ prompt: "hi", options: { transport } })
    const id = await q.sessionId()
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(id).toBe((await cli).sessionId)
    expect((await cli).spec.args).toContain(`--session-id=${id}`)
    expect(await q.pid()).toBeUndefined()
    const first = await q.next()
    expect(first.value).toMatchObject({ type: "system", subtype: "init", session_id: id })
    await q.close()
  })

  it("each control method writes its control_request and resolves to the CLI's answer", async () => {
    const responders: Record<string, ScriptedCli.Responder> = {
      mcp_status: () =>
        Effect.succeed({
          mcpServers: [
            { name: "docs", status: "connected", serverInfo: { name: "docs", version: "1.0.0" } },
            { name: "broken", status: "failed", error: "spawn ENOENT" }
          ]
        }),
      get_context_usage: (body) =>
        Effect.succeed({
          totalTokens: 1234,
          maxTokens: 200_000,
          percentage: 0.6,
          model: "claude-scripted",
          categories: body["detail"] === "full" ? [{ name: "System prompt", tokens: 1000 }] : []
        }),
      rewind_files: (body) =>
        Effect.succeed({
          canRewind: true,
          filesChanged: ["a.txt"],
          insertions: body["dry_run"] === true ? 0 : 3,
          deletions: 1
        }),
      mcp_set_servers: () => Effect.succeed({ added: ["docs"], removed: ["old"], errors: { bad: "no such command" } }),
      interrupt: () => Effect.succeed({ still_queued: ["q-1"] })
    }
    const { transport, cli } = captured(undefined, { responders })
    const q = query({ prompt: "hi", options: { transport } })

    expect(await q.setPermissionMode("plan")).toEqual({ mode: "plan" })
    expect(await q.setModel("haiku")).toBeUndefined()
    expect(await q.setModel()).toBeUndefined()
    expect(await q.setMaxThinkingTokens(1024, "omitted")).toBeUndefined()
    expect(await q.setMaxThinkingTokens(null)).toBeUndefined()
    expect(await q.mcpServerStatus()).toEqual([
      { name: "docs", status: "connected", serverInfo: { name: "docs", version: "1.0.0" } },
      { name: "broken", status: "failed", error: "spawn ENOENT" }
    ])
    expect(await q.getContextUsage()).toEqual({
      totalTokens: 1234,
      maxTokens: 200_000,
      percentage: 0.6,
      model: "claude-scripted",
      categories: []
    })
    expect((await q.getContextUsage({ detail: "full" })).categories).toEqual([{ name: "System prompt", tokens: 1000 }])
    expect(await q.rewindFiles("user-msg-1", { dryRun: true })).toEqual({
      canRewind: true,
      filesChanged: ["a.txt"],
      insertions: 0,
      deletions: 1
    })
    expect((await q.rewindFiles("user-msg-2")).insertions).toBe(3)
    expect(await q.reconnectMcpServer("docs")).toBeUndefined()
    expect(await q.toggleMcpServer("docs", false)).toBeUndefined()
    expect(
      await q.setMcpServers({
        docs: { command: "docs-mcp", args: ["--stdio"] },
        web: { type: "http", url: "http://x" }
      })
    )
      .toEqual({ added: ["docs"], removed: ["old"], errors: { bad: "no such command" } })
    expect(await q.stopTask("task-7")).toBeUndefined()
    expect(await q.interrupt()).toEqual({ still_queued: ["q-1"] })

    expect(await controlRequests(cli)).toEqual([
      { subtype: "set_permission_mode", mode: "plan" },
      { subtype: "set_model", model: "haiku" },
      { subtype: "set_model", model: "default" },
      { subtype: "set_max_thinking_tokens", max_thinking_tokens: 1024, thinking_display: "omitted" },
      { subtype: "set_max_thinking_tokens", max_thinking_tokens: null },
      { subtype: "mcp_status" },
      { subtype: "get_context_usage" },
      { subtype: "get_context_usage", detail: "full" },
      { subtype: "rewind_files", user_message_id: "user-msg-1", dry_run: true },
      { subtype: "rewind_files", user_message_id: "user-msg-2", dry_run: false },
      { subtype: "mcp_reconnect", serverName: "docs" },
      { subtype: "mcp_toggle", serverName: "docs", enabled: false },
      {
        subtype: "mcp_set_servers",
        servers: {
          docs: { type: "stdio", command: "docs-mcp", args: ["--stdio"] },
          web: { type: "http", url: "http://x" }
        }
      },
      { subtype: "stop_task", task_id: "task-7" },
      { subtype: "interrupt" }
    ])
    await q.close()
  })

  it("an error answer rejects with ControlError; an answer without a mode gives { mode: undefined }", async () => {
    const { transport } = captured(undefined, {
      responders: {
        mcp_reconnect: (body) => Effect.fail(`Server not found: ${String(body["serverName"])}`),
        set_permission_mode: () => Effect.succeed({})
      }
    })
    const q = query({ prompt: "hi", options: { transport } })
    const error = await q.reconnectMcpServer("nope").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ControlError)
    expect(error).toMatchObject({
      _tag: "ControlError",
      subtype: "mcp_reconnect",
      description: "Server not found: nope"
    })
    expect(await q.setPermissionMode("default")).toEqual({ mode: undefined })
    await q.close()
  })

  it("close() resolves once the session ended; then next() is done and methods reject with InputClosed", async () => {
    const { transport, state } = captured()
    const q = query({ prompt: "hi", options: { transport } })
    expect((await q.next()).value).toMatchObject({ type: "system", subtype: "init" })
    expect(state.ended).toBe(false)
    await q.close()
    expect(state.ended).toBe(true)
    expect(await q.next()).toEqual({ done: true, value: undefined })
    expect(await q.next()).toEqual({ done: true, value: undefined })
    const error = await q.setModel("haiku").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InputClosed)
    expect(error).toMatchObject({ _tag: "InputClosed", reason: "SessionClosed" })
    await expect(q.supportedModels()).rejects.toBeInstanceOf(InputClosed)
    await expect(q.sessionId()).rejects.toBeInstanceOf(InputClosed)
    // idempotent
    await q.close()
  })

  it("await using closes the query when the block ends, also when it throws", async () => {
    const first = captured()
    {
      await using q = query({ prompt: "hi", options: { transport: first.transport } })
      expect((await q.next()).value).toMatchObject({ type: "system", subtype: "init" })
      expect(first.state.ended).toBe(false)
    }
    expect(first.state.ended).toBe(true)

    const second = captured()
    const thrown = await (async () => {
      await using q = query({ prompt: "hi", options: { transport: second.transport } })
      await q.next()
      throw new Error("app failure")
    })().catch((e: unknown) => e)
    expect(thrown).toMatchObject({ message: "app failure" })
    expect(second.state.ended).toBe(true)
  })

  it("options.stderr receives what the CLI writes to stderr", async () => {
    const chunks: Array<string> = []
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.stderr("warming up\n")
        yield* cli.stderr("€ still fine\n")
        yield* cli.turn("ok")
      })
    )
    const messages = await collect(query({ prompt: "hi", options: { transport, stderr: (data) => chunks.push(data) } }))
    expect(messages.at(-1)).toMatchObject({ type: "result", result: "ok" })
    expect(chunks.join("")).toBe("warming up\n€ still fine\n")
  })

  it("many sequential queries sharing one AbortController leave no abort listener behind", async () => {
    const controller = new AbortController()
    const warnings: Array<Error> = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on("warning", onWarning)
    try {
      for (let i = 0; i < 12; i++) {
        const q = query({ prompt: `n${i}`, options: { transport: ScriptedCli.echo, abortController: controller } })
        // while a query runs, it listens
        expect(getEventListeners(controller.signal, "abort")).toHaveLength(1)
        const messages = await collect(q)
        expect(messages.at(-1)).toMatchObject({ type: "result", result: `echo: n${i}` })
        expect(getEventListeners(controller.signal, "abort")).toHaveLength(0)
      }
      // also when a query is left early
      for (let i = 0; i < 3; i++) {
        for await (
          const _ of query({ prompt: "x", options: { transport: ScriptedCli.echo, abortController: controller } })
        ) break
      }
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0)
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off("warning", onWarning)
    }
    expect(warnings.map((w) => w.name)).not.toContain("MaxListenersExceededWarning")
    // and the shared controller still aborts the next query
    const last = query({
      prompt: "hangs",
      options: {
        abortController: controller,
        transport: ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.stall))
      }
    })
    const pending = last.next()
    controller.abort()
    await expect(pending).rejects.toBeInstanceOf(AbortError)
  })
})

describe("promise API: executable, mcpServersDelivery, pluginDelivery", () => {
  // every official option of 0.3.332 is implemented: none is rejected by name any more
  it.each(
    [
      ["executable", "python"],
      ["mcpServersDelivery", "stdin"],
      ["pluginDelivery", "file"]
    ] as const
  )(
    "%s: %s (not an official value) fails the query with InvalidOptions naming it, before anything is spawned",
    async (option, value) => {
      const { transport, state } = captured()
      // a plain-JavaScript caller: the value is not in the Options type
      const options: Options = Object.assign({ transport }, { [option]: value })
      const q = query({ prompt: "hi", options })
      const error = await q.next().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(InvalidOptions)
      expect(error).toMatchObject({ _tag: "InvalidOptions", option })
      await expect(q.sessionId()).rejects.toBeInstanceOf(InvalidOptions)
      expect(state.opened).toBe(false)
    }
  )

  it("the official values are accepted; undefined counts as not passed", async () => {
    for (
      const extra of [
        { executable: "node", mcpServersDelivery: "argv", pluginDelivery: "argv" },
        { executable: "bun", mcpServersDelivery: "initialize", pluginDelivery: "initialize" },
        { executable: "deno", sessionStore: undefined, onUserDialog: undefined }
      ] as const
    ) {
      const options: Options = { transport: ScriptedCli.echo, ...extra }
      const messages = await collect(query({ prompt: "hi", options }))
      expect(messages.at(-1)).toMatchObject({ type: "result", result: "echo: hi" })
    }
  })
})

describe("promise API: permissionTimeoutMs", () => {
  it.each([[Number.NaN], [-1], ["5000"]])(
    "%s fails the query with InvalidOptions, before anything is spawned",
    async (value) => {
      const { transport, state } = captured()
      const allow: Options["canUseTool"] = async (_tool, input) => ({ behavior: "allow", updatedInput: input })
      const options: Options = Object.assign({ transport, canUseTool: allow }, {
        ["permissionTimeoutMs" as string]: value
      })
      const error = await query({ prompt: "hi", options }).next().catch((e: unknown) => e)
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "permissionTimeoutMs" })
      expect(state.opened).toBe(false)
    }
  )

  it("Infinity: no timeout (the decision is still asked for and answered)", async () => {
    const seen: Array<string> = []
    const messages = await collect(query({
      prompt: "hi",
      options: {
        transport: reporting((cli) => cli.canUseTool("Bash", { command: "ls" })),
        permissionTimeoutMs: Infinity,
        canUseTool: async (toolName, input) => {
          seen.push(toolName)
          return { behavior: "allow", updatedInput: input }
        }
      }
    }))
    expect(seen).toEqual(["Bash"])
    expect(messages.at(-1)).toMatchObject({ type: "result", result: expect.stringContaining("allow") })
  })
})

describe("promise API: canUseTool is called directly (no fiber per request)", () => {
  /** Sends a raw can_use_tool request (so the test knows its id) and returns the SDK's answer. */
  const ask = (cli: ScriptedCli.ScriptedCli, command = "ls") => cli.canUseTool("Bash", { command })

  it("a decision not made within permissionTimeoutMs is a deny, and the callback's signal is aborted", async () => {
    let signal: AbortSignal | undefined
    const logs = capturePromiseLogs([/^warning Permission for Bash denied: no decision within 50ms$/])
    const messages = await collect(query({
      prompt: "go",
      options: {
        transport: reporting((cli) => ask(cli)),
        logger: logs.logger,
        permissionTimeoutMs: 50,
        canUseTool: (_tool, _input, options) => {
          signal = options.signal
          return new Promise(() => {})
        }
      }
    }))
    logs.check()
    expect(answerOf(messages)).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining("no decision within")
    })
    expect(signal?.aborted).toBe(true)
  })

  it("a request the CLI withdraws aborts the callback's signal and gets no answer", async () => {
    const aborted: Array<boolean> = []
    const started = resolvable()
    const messages = await collect(query({
      prompt: "go",
      options: {
        transport: withdrawing(
          { subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" }, tool_use_id: "t1" },
          started.promise,
          // answered after this, so the withdrawn request was left unanswered in between
          (cli) => ask(cli, "pwd")
        ),
        canUseTool: (_tool, input, { signal }) =>
          input["command"] === "ls"
            ? new Promise((resolve) => {
              started.resolve()
              signal.addEventListener("abort", () => {
                aborted.push(signal.aborted)
                resolve({ behavior: "allow" })
              })
            })
            : Promise.resolve({ behavior: "allow", updatedInput: input })
      }
    }))
    expect(aborted).toEqual([true])
    expect(answerOf(messages)).toMatchObject({ after: { behavior: "allow" }, withdrawnAnswers: 0 })
  })

  it("null, a plain (non-Promise) value and a synchronous throw are handled like the official SDK's await", async () => {
    const decisions: Array<unknown> = [
      null,
      { behavior: "allow", updatedInput: { command: "sync" } },
      new Error("thrown synchronously")
    ]
    const transport = reporting((cli) =>
      Effect.gen(function*() {
        return [yield* ask(cli), yield* ask(cli), yield* ask(cli)]
      })
    )
    let i = 0
    // what plain JavaScript may pass: a callback that is not typed as returning a Promise
    const canUseTool = () => {
      const decision = decisions[i++]
      if (decision instanceof Error) throw decision
      return decision
    }
    const logs = capturePromiseLogs([
      /^warning Permission for Bash denied: the permission handler failed: thrown synchronously$/
    ])
    const options: Options = Object.assign({ transport, logger: logs.logger }, {
      ["canUseTool" as string]: canUseTool
    })
    const messages = await collect(query({ prompt: "go", options }))
    logs.check()
    expect(answerOf(messages)).toMatchObject([
      { behavior: "deny", message: expect.stringContaining("canUseTool returned no decision") },
      { behavior: "allow", updatedInput: { command: "sync" } },
      { behavior: "deny", message: expect.stringContaining("thrown synchronously") }
    ])
  })

  it("an answer that cannot be written or an unprintable rejection still answers the CLI, with no unhandled rejection", async () => {
    let calls = 0
    const logs = capturePromiseLogs([
      /^warning Permission for Bash denied: the permission handler failed: an error that cannot be printed$/
    ])
    const messages = await collect(query({
      prompt: "go",
      options: {
        logger: logs.logger,
        transport: reporting((cli) =>
          Effect.gen(function*() {
            const body = { tool_name: "Bash", input: { command: "ls" }, tool_use_id: "t", permission_suggestions: [] }
            return {
              unwritable: yield* cli.requestRaw("can_use_tool", body),
              unprintable: yield* cli.requestRaw("can_use_tool", body)
            }
          })
        ),
        canUseTool: async () => {
          calls++
          // a BigInt cannot be serialized; a null-prototype object cannot be turned into a string
          if (calls === 1) return { behavior: "allow", updatedInput: { n: 1n } }
          throw Object.create(null)
        }
      }
    }))
    logs.check()
    expect(answerOf(messages)).toMatchObject({
      unwritable: { subtype: "error", error: expect.stringContaining("could not be written") },
      unprintable: {
        subtype: "success",
        response: { behavior: "deny", message: expect.stringContaining("an error that cannot be printed") }
      }
    })
  })

  it("updatedPermissions an allow returns are remembered: the same call is not asked about again", async () => {
    const asked: Array<string> = []
    const messages = await collect(query({
      prompt: "go",
      options: {
        transport: reporting((cli) =>
          Effect.gen(function*() {
            return [yield* ask(cli), yield* ask(cli)]
          })
        ),
        canUseTool: async (toolName, input) => {
          asked.push(toolName)
          return {
            behavior: "allow",
            updatedInput: input,
            updatedPermissions: [{
              type: "addRules",
              rules: [{ toolName: "Bash" }],
              behavior: "allow",
              destination: "session"
            }]
          }
        }
      }
    }))
    expect(asked).toEqual(["Bash"])
    expect(answerOf(messages)).toMatchObject([{ behavior: "allow" }, { behavior: "allow" }])
  })
})

describe("promise API: hooks are called directly (no fiber per request)", () => {
  const preToolUse = {
    session_id: "s",
    transcript_path: "/t",
    cwd: "/",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    tool_use_id: "t"
  }

  it("a hook past its matcher timeout, one that rejects unprintably, and one returning a plain value", async () => {
    const signals: Array<AbortSignal> = []
    let call = 0
    const logs = capturePromiseLogs([
      /^warning Hook PreToolUse \(hook_0\) failed: no answer within 0\.05 s; answering block$/,
      /^warning Hook PreToolUse \(hook_0\) failed: an error that cannot be printed; answering block$/
    ])
    const messages = await collect(query({
      prompt: "go",
      options: {
        logger: logs.logger,
        transport: reporting((cli) =>
          Effect.gen(function*() {
            const ask = cli.request("hook_callback", { callback_id: "hook_0", input: preToolUse, tool_use_id: "t" })
            return [yield* ask, yield* ask, yield* ask]
          })
        ),
        hooks: {
          PreToolUse: [{
            timeout: 0.05,
            hooks: [(_input, _id, { signal }) => {
              call++
              if (call === 1) {
                signals.push(signal)
                return new Promise(() => {})
              }
              // a null-prototype object cannot be turned into a string; a plain value is awaited like a Promise
              if (call === 2) return Promise.reject(Object.create(null))
              return { continue: true } as unknown as Promise<{ continue: boolean }>
            }]
          }]
        }
      }
    }))
    logs.check()
    const [late, unprintable, plain] = answerOf(messages)
    expect(late).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } })
    expect(late.hookSpecificOutput.permissionDecisionReason).toContain("no answer within 0.05 s")
    expect(signals.map((s) => s.aborted)).toEqual([true])
    expect(unprintable.hookSpecificOutput.permissionDecisionReason).toContain("an error that cannot be printed")
    expect(plain).toEqual({ continue: true })
  })

  it("a hook's options carry signal as an own enumerable property, through one getter for every call", async () => {
    const seen: Array<{ readonly signal: AbortSignal }> = []
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        for (const id of ["t1", "t2"]) {
          yield* cli.request("hook_callback", { callback_id: "hook_0", input: preToolUse, tool_use_id: id })
        }
        yield* cli.turn("done")
      })
    )
    await collect(query({
      prompt: "go",
      options: {
        transport,
        hooks: {
          PreToolUse: [{
            hooks: [async (_input, _id, options) => {
              seen.push(options)
              return {}
            }]
          }]
        }
      }
    }))
    expect(seen).toHaveLength(2)
    const [first, second] = seen.map((o) => Object.getOwnPropertyDescriptor(o, "signal"))
    expect(first?.enumerable).toBe(true)
    // one getter for every call: a getter per object leaves each in V8's slow dictionary mode
    expect(second?.get).toBe(first?.get)
    expect({ ...seen[0]! }.signal).toBe(seen[0]!.signal)
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal)
  })

  it("a hook_callback the CLI withdraws aborts the hook's signal and gets no answer", async () => {
    const aborted: Array<boolean> = []
    const started = resolvable()
    const messages = await collect(query({
      prompt: "go",
      options: {
        transport: withdrawing(
          { subtype: "hook_callback", callback_id: "hook_0", input: preToolUse, tool_use_id: "t" },
          started.promise
        ),
        hooks: {
          PreToolUse: [{
            hooks: [(_input, _id, { signal }) =>
              new Promise((resolve) => {
                started.resolve()
                signal.addEventListener("abort", () => {
                  aborted.push(signal.aborted)
                  resolve({})
                })
              })]
          }]
        }
      }
    }))
    expect(aborted).toEqual([true])
    expect(answerOf(messages)).toEqual({ withdrawnAnswers: 0 })
  })
})

describe("promise API: tool() schemas", () => {
  const text = (s: string) => ({ content: [{ type: "text" as const, text: s }] })
  const toolsCall = (name: string, args: unknown, id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args, _meta: { "claudecode/toolUseId": `toolu_${id}` } }
  })
  /** A turn whose `system/init` lists the in-process server `calc` as connected, as the real CLI's does. */
  const turnWithCalc = (cli: ScriptedCli.ScriptedCli, answer: string) =>
    Effect.gen(function*() {
      yield* cli.init({ mcp_servers: [{ name: "calc", status: "connected" }] })
      yield* cli.assistant(answer)
      yield* cli.result(answer)
    })

  it("an Effect Schema: JSON Schema in tools/list, decoded arguments in the handler, invalid ones an isError result", async () => {
    const seen: Array<unknown> = []
    const calc = createSdkMcpServer({
      name: "calc",
      version: "1.0.0",
      tools: [
        tool(
          "scale",
          "Multiply n by factor",
          Schema.Struct({
            n: Schema.NumberFromString.annotations({ description: "a number, as a string" }),
            factor: Schema.optional(Schema.Number)
          }),
          async (args) => {
            expectTypeOf(args).toEqualTypeOf<{ readonly n: number; readonly factor?: number }>()
            seen.push(args)
            return text(String(args.n * (args.factor ?? 2)))
          }
        )
      ]
    })
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        const init = yield* cli.initialize
        yield* cli.expectUser
        const mcp = (message: object) => cli.request("mcp_message", { server_name: "calc", message })
        const listed = yield* mcp({ jsonrpc: "2.0", id: 1, method: "tools/list" })
        const ok = yield* mcp(toolsCall("scale", { n: "21" }, 2))
        const bad = yield* mcp(toolsCall("scale", { n: 21 }, 3))
        yield* turnWithCalc(cli, JSON.stringify({ init, listed, ok, bad }))
      })
    )
    const messages = await collect(query({ prompt: "go", options: { transport, mcpServers: { calc } } }))
    const last = messages.at(-1)
    const answer = JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "{}")
    expect(answer.init.sdkMcpServers).toEqual(["calc"])
    expect(answer.listed.mcp_response.result.tools).toEqual([
      expect.objectContaining({
        name: "scale",
        description: "Multiply n by factor",
        inputSchema: expect.objectContaining({
          type: "object",
          required: ["n"],
          properties: {
            n: expect.objectContaining({ type: "string", description: "a number, as a string" }),
            factor: { type: "number" }
          }
        })
      })
    ])
    expect(answer.ok.mcp_response.result).toEqual(text("42"))
    expect(answer.bad.mcp_response.result).toMatchObject({
      isError: true,
      content: [{ type: "text", text: expect.stringContaining("Invalid input for tool scale") }]
    })
    expect(seen).toEqual([{ n: 21 }])
  })

  it("zod 4 shapes, classic and mini, are accepted and validated", async () => {
    const seen: Array<unknown> = []
    const calc = createSdkMcpServer({
      name: "calc",
      tools: [
        tool("add", "Add", { a: z.number(), b: z.number().optional() }, async (args) => {
          expectTypeOf(args).toEqualTypeOf<{ readonly a: number; readonly b: number | undefined }>()
          seen.push(args)
          return text(String(args.a + (args.b ?? 0)))
        }),
        tool("shout", "Upper-case", { s: zm.string() }, async ({ s }) => text(s.toUpperCase()))
      ]
    })
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        const mcp = (message: object) => cli.request("mcp_message", { server_name: "calc", message })
        const listed = yield* mcp({ jsonrpc: "2.0", id: 1, method: "tools/list" })
        const add = yield* mcp(toolsCall("add", { a: 2, b: 3 }, 2))
        const shout = yield* mcp(toolsCall("shout", { s: "hi" }, 3))
        const bad = yield* mcp(toolsCall("shout", { s: 1 }, 4))
        yield* turnWithCalc(cli, JSON.stringify({ listed, add, shout, bad }))
      })
    )
    const messages = await collect(query({ prompt: "go", options: { transport, mcpServers: { calc } } }))
    const last = messages.at(-1)
    const answer = JSON.parse(last?.type === "result" && last.subtype === "success" ? last.result : "{}")
    expect(answer.listed.mcp_response.result.tools.map((t: { inputSchema: unknown }) => t.inputSchema)).toEqual([
      expect.objectContaining({
        type: "object",
        required: ["a"],
        properties: { a: { type: "number" }, b: { type: "number" } }
      }),
      expect.objectContaining({ type: "object", required: ["s"], properties: { s: { type: "string" } } })
    ])
    expect(answer.add.mcp_response.result).toEqual(text("5"))
    expect(answer.shout.mcp_response.result).toEqual(text("HI"))
    expect(answer.bad.mcp_response.result).toMatchObject({ isError: true })
    expect(seen).toEqual([{ a: 2, b: 3 }])
  })

  it("zod 3 schemas are rejected: by the types, and at run time with InvalidOptions", () => {
    const handler = async () => text("never")
    const zod3 = (): unknown =>
      // @ts-expect-error zod 3 schemas are not zod 4 raw shapes
      tool("old", "zod 3", { a: z3.string() }, handler)
    const error = (() => {
      try {
        return zod3()
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(InvalidOptions)
    expect(error).toMatchObject({
      _tag: "InvalidOptions",
      option: "inputSchema",
      description: expect.stringContaining("field \"a\" is a zod 3 schema; only zod 4 schemas are supported")
    })
  })

  it("anything else is an InvalidOptions too: Effect Schema fields, mixed shapes, non-objects", () => {
    const handler = async () => text("never")
    const attempt = (inputSchema: unknown) => {
      try {
        // @ts-expect-error not a valid inputSchema
        tool("bad", "bad", inputSchema, handler)
        return undefined
      } catch (e) {
        return e
      }
    }
    expect(attempt({ a: Schema.Number })).toMatchObject({
      _tag: "InvalidOptions",
      option: "inputSchema",
      description: expect.stringContaining("Schema.Struct")
    })
    expect(attempt({ a: z.string(), b: "string" })).toMatchObject({
      _tag: "InvalidOptions",
      description: expect.stringContaining("\"b\" is not a zod 4 schema")
    })
    expect(attempt("a string")).toBeInstanceOf(InvalidOptions)
    expect(attempt(null)).toBeInstanceOf(InvalidOptions)
  })
})
