import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentError, ClaudeAgent, Message, Transport } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { unknownSession } from "./support/scripts.js"

const types = (messages: Chunk.Chunk<Message.SdkMessage>) =>
  Chunk.toReadonlyArray(messages).map((m) => (m.type === "system" ? `system/${m.subtype}` : m.type))

/** Runs `script`, and hands the test the ScriptedCli of the (single) open for assertions. */
const scripted = (
  script: (cli: ScriptedCli.ScriptedCli) => Effect.Effect<void, ScriptedCli.ScriptError>,
  options?: ScriptedCli.Options
) =>
  Effect.gen(function*() {
    const handle = yield* Deferred.make<ScriptedCli.ScriptedCli>()
    const layer = ScriptedCli.layer((cli) => Effect.zipRight(Deferred.succeed(handle, cli), script(cli)), options)
    return { layer, cli: Deferred.await(handle) }
  })

describe("ClaudeAgent.query", () => {
  it.scoped("sends initialize then the prompt, yields the turn and ends after the result", () =>
    Effect.gen(function*() {
      const { layer, cli } = yield* scripted((cli) =>
        Effect.gen(function*() {
          const prompt = yield* cli.expectUser
          yield* cli.turn(`you said: ${ScriptedCli.textOf(prompt)}`)
          yield* cli.expectEndInput
        })
      )
      const messages = yield* ClaudeAgent.query("hello").pipe(Stream.runCollect, Effect.provide(layer))
      expect(types(messages)).toEqual(["system/init", "assistant", "result"])
      const last = Chunk.unsafeLast(messages)
      expect(last).toMatchObject({ type: "result", subtype: "success", result: "you said: hello" })
      const received = yield* (yield* cli).received
      expect(received.map((f) => (f.type === "control_request" ? f.request.subtype : f.type))).toEqual([
        "initialize",
        "user"
      ])
      expect(received[0]).toMatchObject({ request: { subtype: "initialize", systemPrompt: [""] } })
      expect(received[1]).toEqual(Message.userMessage("hello"))
    }))

  it.scoped("with a stream of prompts: one turn per prompt, stdin closed after the last result", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          for (let i = 0; i < 3; i++) {
            const prompt = yield* cli.expectUser
            yield* cli.turn(`answer to ${ScriptedCli.textOf(prompt)}`)
          }
          yield* cli.expectEndInput
          yield* cli.emit({ type: "prompt_suggestion", suggestion: "ask more" })
        })
      )
      const prompts = Stream.make("one", Message.userMessage("two"), "three")
      const messages = yield* ClaudeAgent.query(prompts).pipe(Stream.runCollect, Effect.provide(layer))
      const results = Chunk.toReadonlyArray(messages).filter(Message.isResultMessage)
      expect(results.map((r) => (r.subtype === "success" ? r.result : ""))).toEqual([
        "answer to one",
        "answer to two",
        "answer to three"
      ])
      // what the CLI writes after stdin closed is still delivered
      expect(Chunk.unsafeLast(messages)).toEqual({ type: "prompt_suggestion", suggestion: "ask more" })
    }))

  it.scoped("stdin stays open while prompts are still coming, even after earlier results", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          // a permission request after the first result still reaches the SDK's handler path
          const answer = yield* cli.requestRaw("can_use_tool", { tool_name: "Bash", input: {}, tool_use_id: "t" })
          expect(answer.subtype).toBe("error")
          yield* Deferred.succeed(gate, undefined)
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.expectEndInput
        })
      )
      const prompts = Stream.concat(Stream.make("a"), Stream.fromEffect(Effect.as(Deferred.await(gate), "b")))
      const messages = yield* ClaudeAgent.query(prompts).pipe(Stream.runCollect, Effect.provide(layer))
      expect(Chunk.toReadonlyArray(messages).filter(Message.isResultMessage)).toHaveLength(2)
    }))

  it.scoped("an error result followed by exit code 1 ends the stream normally", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.result("API Error: 400", { is_error: true, terminal_reason: "api_error" })
          yield* cli.expectEndInput
          yield* cli.exit(1)
        })
      )
      const messages = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.provide(layer))
      expect(Chunk.unsafeLast(messages)).toMatchObject({ type: "result", is_error: true })
    }))

  it.scoped("failOnApiError: an API error result, then RateLimited / Overloaded / ApiError; other results pass", () =>
    Effect.gen(function*() {
      const run = (fields: Readonly<Record<string, unknown>>) =>
        Effect.gen(function*() {
          const { layer } = yield* scripted((cli) =>
            Effect.gen(function*() {
              yield* cli.expectUser
              yield* cli.result("API Error: scripted", fields)
              yield* cli.expectEndInput
              yield* cli.exit(fields["is_error"] === true ? 1 : 0)
            })
          )
          const seen: Array<string> = []
          const exit = yield* ClaudeAgent.query("x").pipe(
            ClaudeAgent.failOnApiError,
            Stream.runForEach((m) => Effect.sync(() => seen.push(m.type))),
            Effect.provide(layer),
            Effect.exit
          )
          const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
          // plain fields: an error instance is also an Effect, which the matcher cannot walk
          return {
            seen,
            error: error?._tag === "RateLimited" || error?._tag === "Overloaded" || error?._tag === "ApiError"
              ? { _tag: error._tag, status: error.status, errorType: error.errorType, description: error.description }
              : error?._tag
          }
        })
      const apiError = (status: number, type: string) => ({
        is_error: true,
        terminal_reason: "api_error",
        api_error_status: status,
        api_error_type: type
      })
      const limited = yield* run(apiError(429, "rate_limit_error"))
      expect(limited.seen).toContain("result") // the result is delivered before the failure
      expect(limited.error).toMatchObject({ _tag: "RateLimited", status: 429, description: "API Error: scripted" })
      expect((yield* run(apiError(529, "overloaded_error"))).error).toMatchObject({ _tag: "Overloaded", status: 529 })
      expect((yield* run(apiError(401, "authentication_error"))).error).toMatchObject({
        _tag: "ApiError",
        status: 401,
        errorType: "authentication_error"
      })
      expect((yield* run({ is_error: true, terminal_reason: "max_turns" })).error).toBeUndefined()
      expect((yield* run({})).error).toBeUndefined()
    }))

  it.scoped("a CLI that dies mid-turn fails the stream with ProcessExited and its stderr", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* cli.exit(3, "fatal: out of cheese\n")
        })
      )
      const exit = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.exit, Effect.provide(layer))
      expect(exit).toStrictEqual(
        Exit.fail(new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "fatal: out of cheese\n" }))
      )
    }))

  it.scoped("an initialize error fails the query with StartupFailed (reason InitializeAck)", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) => cli.stall, {
        responders: { initialize: () => Effect.fail("bad initialize") }
      })
      const exit = yield* ClaudeAgent.query("x").pipe(Stream.runCollect, Effect.exit, Effect.provide(layer))
      const error = exit._tag === "Failure" && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toBeInstanceOf(AgentError.StartupFailed)
      expect(error).toMatchObject({
        reason: "InitializeAck",
        description: "Control request initialize failed: bad initialize"
      })
    }))

  it.scoped("a CLI that never answers initialize fails with StartupFailed after initializeTimeout", () =>
    Effect.gen(function*() {
      const { layer, cli } = yield* scripted((cli) => cli.stall, { responders: { initialize: () => Effect.never } })
      const fiber = yield* ClaudeAgent.query("x", { initializeTimeout: "5 seconds" }).pipe(
        Stream.runCollect,
        Effect.provide(layer),
        Effect.fork
      )
      yield* (yield* cli).initialize
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber).pipe(Effect.flip)
      expect(error).toMatchObject({
        _tag: "StartupFailed",
        reason: "FirstLine",
        description: "no answer to initialize within 5000 ms"
      })
    }))

  it.scoped("invalid options fail before anything is spawned", () =>
    Effect.gen(function*() {
      let opened = 0
      const layer = Layer.succeed(Transport.Transport, {
        open: () => Effect.sync(() => opened++).pipe(Effect.zipRight(Effect.die("must not open")))
      })
      const error = yield* ClaudeAgent.query("x", { model: "a", fallbackModel: "a" }).pipe(
        Stream.runCollect,
        Effect.flip,
        Effect.provide(layer)
      )
      expect(error).toStrictEqual(
        new AgentError.InvalidOptions({ option: "fallbackModel", description: "must differ from model" })
      )
      expect(opened).toBe(0)
    }))

  it.scoped("interrupting the consumer closes the session: the CLI sees stdin close", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const { layer, cli } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.init()
          yield* Deferred.succeed(started, undefined)
          yield* cli.stall
        })
      )
      const fiber = yield* ClaudeAgent.query("x").pipe(Stream.runDrain, Effect.provide(layer), Effect.fork)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      const peer = (yield* cli).peer
      yield* peer.inputEnded
      expect(yield* Effect.exit(peer.take)).toSatisfy(Exit.isFailure)
    }))
})

describe("ClaudeAgent.startQuery", () => {
  it.scoped("starts the CLI before the prompt; messages(prompt) and pull(prompt) run the query; control works", () =>
    Effect.gen(function*() {
      const { cli, layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          const prompt = yield* cli.expectUser
          yield* cli.turn(`you said: ${ScriptedCli.textOf(prompt)}`)
          yield* cli.expectEndInput
        })
      )
      const pending = yield* ClaudeAgent.startQuery().pipe(Effect.provide(layer))
      const init = yield* pending.control.initializationResult
      expect(init.commands).toBeDefined()
      // initialize only: the prompt is not sent until the messages are run
      const before = yield* (yield* cli).received
      expect(before.map((f) => (f.type === "control_request" ? f.request.subtype : f.type))).toEqual(["initialize"])
      const pull = yield* pending.pull("later")
      const taken: Array<Message.SdkMessage> = []
      while (true) {
        const chunk = yield* Effect.either(pull)
        if (chunk._tag === "Left") {
          expect(chunk.left).toEqual(Option.none())
          break
        }
        taken.push(...Chunk.toReadonlyArray(chunk.right))
      }
      expect(taken.at(-1)).toMatchObject({ type: "result", result: "you said: later" })
      // the name the module's functions take their options by
      const options: ClaudeAgent.Options = { maxTurns: 1 }
      expect(options).toEqual({ maxTurns: 1 })
    }))
})

describe("ClaudeAgent.query: how a stream ends", () => {
  it.scoped("a CLI that exits 0 without a result before answering initialize fails the query with StartupFailed", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) => Effect.zipRight(cli.expectUser, cli.exit(0)), {
        responders: { initialize: () => Effect.never }
      })
      const error = yield* ClaudeAgent.query("hi").pipe(Stream.runDrain, Effect.flip, Effect.provide(layer))
      expect(error).toMatchObject({ _tag: "StartupFailed" })
    }))
})

describe("ClaudeAgent.session", () => {
  it.scoped("two turns in one process; turn() leaves later messages for the next reader", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.emit({ type: "prompt_suggestion", suggestion: "next?" })
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
        })
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      const first = yield* Stream.runCollect(session.turn("first"))
      expect(types(first)).toEqual(["system/init", "assistant", "result"])
      // assigned by the SDK before the first prompt, and used by the CLI
      expect(session.origin).toMatchObject({ kind: "new", forked: false })
      expect(yield* session.sessionId).toBe(session.origin.sessionId)
      expect(Chunk.toReadonlyArray(first).find(Message.isSystemInit)?.session_id).toBe(session.origin.sessionId)
      const second = yield* Stream.runCollect(session.turn("second"))
      expect(types(second)).toEqual(["prompt_suggestion", "system/init", "assistant", "result"])
      expect(Chunk.unsafeLast(second)).toMatchObject({ result: "second" })
    }))

  it.scoped("control methods send the official payloads and decode the answers", () =>
    Effect.gen(function*() {
      const { layer, cli } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.respond(
            "get_context_usage",
            () => Effect.succeed({ totalTokens: 5, maxTokens: 100, percentage: 5, extra: "kept" })
          )
          yield* cli.respond(
            "mcp_status",
            () => Effect.succeed({ mcpServers: [{ name: "calc", status: "connected", source: "sdk" }] })
          )
          yield* cli.stall
        })
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      expect(yield* session.interrupt).toEqual({ still_queued: [] })
      yield* session.setModel("haiku")
      yield* session.setModel()
      expect(yield* session.setPermissionMode("acceptEdits")).toEqual(Option.some("acceptEdits"))
      yield* session.setMaxThinkingTokens(1024)
      expect(yield* session.mcpServerStatus).toEqual([{ name: "calc", status: "connected", source: "sdk" }])
      expect(yield* session.getContextUsage({ detail: "full" })).toMatchObject({ totalTokens: 5, extra: "kept" })
      expect(yield* session.rewindFiles("msg-1", { dryRun: true })).toMatchObject({ canRewind: true })
      yield* session.reconnectMcpServer("calc")
      yield* session.toggleMcpServer("calc", false)
      expect(yield* session.setMcpServers({ x: { type: "stdio", command: "true" } })).toEqual({
        added: [],
        removed: [],
        errors: {}
      })
      yield* session.stopTask("task-1")
      const unsupported = yield* Effect.flip(session.request("definitely_unknown"))
      expect(unsupported).toMatchObject({ _tag: "ControlError", errorCode: "unsupported_request" })

      const sent = (yield* (yield* cli).received).flatMap((f) => (f.type === "control_request" ? [f.request] : []))
      expect(sent[0]?.subtype).toBe("initialize")
      expect(sent.slice(1)).toEqual([
        { subtype: "interrupt" },
        { subtype: "set_model", model: "haiku" },
        { subtype: "set_model", model: "default" },
        { subtype: "set_permission_mode", mode: "acceptEdits" },
        { subtype: "set_max_thinking_tokens", max_thinking_tokens: 1024 },
        { subtype: "mcp_status" },
        { subtype: "get_context_usage", detail: "full" },
        { subtype: "rewind_files", user_message_id: "msg-1", dry_run: true },
        { subtype: "mcp_reconnect", serverName: "calc" },
        { subtype: "mcp_toggle", serverName: "calc", enabled: false },
        // `args: []` added: CLI 2.1.332 fails a stdio server without args in mcp_set_servers
        { subtype: "mcp_set_servers", servers: { x: { type: "stdio", command: "true", args: [] } } },
        { subtype: "stop_task", task_id: "task-1" },
        { subtype: "definitely_unknown" }
      ])
    }))

  it.scoped("initialize data: commands (updated by commands_changed), models, agents, account", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.emit({
            type: "system",
            subtype: "commands_changed",
            commands: [{ name: "fresh", description: "new" }],
            session_id: cli.sessionId,
            uuid: "u"
          })
          yield* cli.turn("ok")
        })
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      expect((yield* session.supportedCommands).map((c) => c.name)).toEqual(["compact"])
      expect((yield* session.supportedModels).map((m) => m.value)).toEqual(["default", "haiku"])
      expect((yield* session.supportedAgents).map((a) => a.name)).toEqual(["general-purpose"])
      expect(yield* session.accountInfo).toMatchObject({ apiProvider: "firstParty" })
      expect((yield* session.initializationResult).claude_code_version).toBe("2.1.332")
      yield* Stream.runDrain(session.turn("go"))
      expect((yield* session.supportedCommands).map((c) => c.name)).toEqual(["fresh"])
    }))

  it.scoped("session_state_changed frames are tracked, not delivered", () =>
    Effect.gen(function*() {
      const state = (s: string) => ({
        type: "system",
        subtype: "session_state_changed",
        state: s,
        sdk_host_only: true,
        session_id: "s",
        uuid: "u"
      })
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          yield* cli.emit(state("running"))
          yield* cli.turn("ok")
          yield* cli.emit(state("idle"))
          yield* cli.emit({ type: "keep_alive" })
          yield* cli.emit({ type: "prompt_suggestion", suggestion: "marker" })
        })
      )
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      expect(yield* session.state).toBe("starting")
      const turn = yield* Stream.runCollect(session.turn("go"))
      expect(types(turn)).toEqual(["system/init", "assistant", "result"])
      const marker = yield* session.messages.pipe(Stream.take(1), Stream.runCollect)
      expect(types(marker)).toEqual(["prompt_suggestion"])
      expect(yield* session.state).toBe("idle")
    }))

  it.scoped("verbatimPrompts marks user messages client_composed", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) =>
        Effect.gen(function*() {
          const user = yield* cli.expectUser
          yield* cli.turn(String(user.client_composed))
        })
      )
      const session = yield* ClaudeAgent.session({ verbatimPrompts: true }).pipe(Effect.provide(layer))
      const turn = yield* Stream.runCollect(session.turn("@file /x"))
      expect(Chunk.unsafeLast(turn)).toMatchObject({ result: "true" })
    }))

  it.scoped("after the CLI exits, send and control methods fail with ProcessExited", () =>
    Effect.gen(function*() {
      const { layer } = yield* scripted((cli) => cli.exit(1, "gone\n"))
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      const exit = yield* Effect.exit(Stream.runDrain(session.messages))
      expect(exit._tag).toBe("Failure")
      const expected = new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "gone\n" })
      expect(yield* Effect.flip(session.send("x"))).toStrictEqual(expected)
      expect(yield* Effect.flip(session.interrupt)).toStrictEqual(expected)
      expect(yield* session.state).toBe("exited")
    }))

  it.scoped("the echo CLI answers every prompt", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(ScriptedCli.echo))
      for (const word of ["a", "b"]) {
        const turn = yield* Stream.runCollect(session.turn(word))
        expect(Chunk.unsafeLast(turn)).toMatchObject({ result: `echo: ${word}` })
      }
    }))
})

describe("ClaudeAgent: resume, continue, fork", () => {
  it.scoped("resume keeps the requested id; fork gets a new id assigned before the first prompt", () =>
    Effect.gen(function*() {
      const argv = yield* Queue.unbounded<ReadonlyArray<string>>()
      const layer = ScriptedCli.layer((cli) => argv.offer(cli.spec.args))
      const resumed = yield* ClaudeAgent.session({ resume: "11111111-1111-4111-8111-111111111111" }).pipe(
        Effect.provide(layer)
      )
      expect(resumed.origin).toEqual({
        kind: "resume",
        requested: "11111111-1111-4111-8111-111111111111",
        sessionId: "11111111-1111-4111-8111-111111111111",
        forked: false
      })
      const forked = yield* ClaudeAgent.session({ resume: "11111111-1111-4111-8111-111111111111", forkSession: true })
        .pipe(Effect.provide(layer))
      expect(forked.origin.kind).toBe("fork")
      expect(forked.origin.forked).toBe(true)
      expect(forked.origin.sessionId).not.toBe("11111111-1111-4111-8111-111111111111")
      expect(yield* forked.sessionId).toBe(forked.origin.sessionId)
      yield* argv.take
      expect(yield* argv.take).toEqual([
        "--resume=11111111-1111-4111-8111-111111111111",
        "--fork-session",
        `--session-id=${forked.origin.sessionId}`
      ])
    }))

  it.scoped("a resume the CLI does not know fails with SessionNotFound (after the CLI's error result)", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer(unknownSession, { responders: { initialize: () => Effect.never } })
      const error = yield* ClaudeAgent.query("hi", { resume: "00000000-0000-4000-8000-000000000000" }).pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.provide(layer)
      )
      expect(error).toStrictEqual(
        new AgentError.SessionNotFound({
          sessionId: "00000000-0000-4000-8000-000000000000",
          description: "No conversation found with session ID: 00000000-0000-4000-8000-000000000000"
        })
      )
    }))
})
