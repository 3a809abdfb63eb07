import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { ClaudeAgent, Message } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const results = (messages: Chunk.Chunk<Message.SdkMessage>) =>
  Chunk.toReadonlyArray(messages).filter(Message.isResultMessage)

const live = <A, E>(
  name: string,
  body: () => Effect.Effect<A, E, import("effect/Scope").Scope | import("effect-claude-agent").Transport.Transport>
) => it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

describe("ClaudeAgent against the real CLI", () => {
  live("query: a one-shot text reply and its result", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const messages = yield* ClaudeAgent.query("SAY hello from query", options()).pipe(Stream.runCollect)
      const all = Chunk.toReadonlyArray(messages)
      expect(all.filter(Message.isAssistantMessage).map(Message.text).join("")).toBe("hello from query")
      const [result] = results(messages)
      expect(result).toMatchObject({ type: "result", subtype: "success", is_error: false, result: "hello from query" })
      expect(all.some((m) => m.type === "unknown" || m.type === "transport_error")).toBe(false)
    }))

  live("session: two turns in one process, same session id, system/init every turn", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli()
      const session = yield* ClaudeAgent.session(options())
      const first = yield* Stream.runCollect(session.turn("SAY first"))
      const second = yield* Stream.runCollect(session.turn("HISTORY"))
      const [r1] = results(first)
      const [r2] = results(second)
      expect(r1).toMatchObject({ subtype: "success", result: "first" })
      expect(r2?.subtype === "success" && r2.result).toContain("user prompts: SAY first | HISTORY")
      expect(r1?.session_id).toBe(r2?.session_id)
      expect(yield* session.sessionId).toBe(r1?.session_id)
      const inits = [...Chunk.toReadonlyArray(first), ...Chunk.toReadonlyArray(second)].filter(Message.isSystemInit)
      expect(inits).toHaveLength(2)
      expect(inits.every((i) => i.session_id === r1?.session_id)).toBe(true)
      expect(Option.isSome(session.pid)).toBe(true)
      expect((yield* server.requests).filter((r) => r.isMessages && !r.isProbe)).toHaveLength(2)
    }))

  live("session: interrupt mid-turn ends the turn, and the next prompt is answered", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli({ replies: [ScriptedModelServer.stall(30_000)] })
      const session = yield* ClaudeAgent.session(options())
      const turn = yield* session.turn("this one hangs").pipe(Stream.runCollect, Effect.fork)
      yield* server.waitForRequest((r) => r.isMessages && r.stream === true)
      const started = Date.now()
      const receipt = yield* session.interrupt
      expect(receipt).toMatchObject({ still_queued: [] })
      const interrupted = yield* Fiber.join(turn)
      expect(Date.now() - started).toBeLessThan(5000)
      const [result] = results(interrupted)
      expect(result).toMatchObject({ subtype: "error_during_execution", is_error: true })
      const next = yield* Stream.runCollect(session.turn("SAY after the interrupt"))
      expect(results(next)[0]).toMatchObject({ subtype: "success", result: "after the interrupt" })
    }))

  live(
    "query: interrupting its fiber mid-turn lets the CLI exit on its own (no SIGTERM, no SIGKILL)",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({ replies: [ScriptedModelServer.stall(30_000)] })
        const logs: Array<string> = []
        const logger = Logger.make(({ message }) => {
          logs.push(Array.isArray(message) ? message.join(" ") : String(message))
        })
        const running = yield* ClaudeAgent.query("this one hangs", options()).pipe(
          Stream.runDrain,
          Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
          Logger.withMinimumLogLevel(LogLevel.Debug),
          Effect.fork
        )
        yield* server.waitForRequest((r) => r.isMessages && r.stream === true)
        yield* Fiber.interrupt(running)
        // the turn was interrupted and stdin closed; the CLI needed no signal to exit
        expect(logs.filter((l) => l.includes("SIGTERM") || l.includes("SIGKILL"))).toEqual([])
      })
  )

  live(
    "G18 query + failOnApiError: the CLI's retries are visible, then 529s fail the query with Overloaded",
    () =>
      Effect.gen(function*() {
        const overloaded = ScriptedModelServer.httpError(529)
        const { options } = yield* realCli({ replies: [overloaded, overloaded, overloaded] })
        const retries: Array<number> = []
        const exit = yield* ClaudeAgent.query("SAY hi", options({ env: { CLAUDE_CODE_MAX_RETRIES: "1" } })).pipe(
          ClaudeAgent.failOnApiError,
          Stream.runForEach((m) =>
            Effect.sync(() => {
              if (m.type === "system" && m.subtype === "api_retry") retries.push(m.error_status ?? 0)
            })
          ),
          Effect.exit
        )
        expect(retries).toEqual([529])
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        expect(error?._tag).toBe("Overloaded")
        if (error?._tag === "Overloaded") {
          expect(error.status).toBe(529)
          expect(error.errorType).toBe("overloaded_error")
        }
      })
  )

  live("session: setModel and setPermissionMode apply to the next model request", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli()
      const session = yield* ClaudeAgent.session(options())
      yield* Stream.runDrain(session.turn("SAY one"))
      yield* session.setModel("claude-haiku-4-5")
      expect(yield* session.setPermissionMode("acceptEdits")).toEqual(Option.some("acceptEdits"))
      const second = yield* Stream.runCollect(session.turn("SAY two"))
      expect(results(second)[0]).toMatchObject({ subtype: "success", result: "two" })
      const requests = (yield* server.requests).filter((r) => r.isMessages && !r.isProbe)
      expect(requests.map((r) => r.model)).toEqual([expect.not.stringContaining("haiku"), "claude-haiku-4-5"])
      const init = Chunk.toReadonlyArray(second).find(Message.isSystemInit)
      expect(init?.permissionMode).toBe("acceptEdits")
      expect(init?.model).toBe("claude-haiku-4-5")
    }))

  live("session: supportedCommands / supportedModels / accountInfo come from initialize", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const session = yield* ClaudeAgent.session(options())
      const init = yield* session.initializationResult
      expect(init.claude_code_version).toBe("2.1.332")
      const commands = yield* session.supportedCommands
      expect(commands.length).toBeGreaterThan(5)
      expect(commands).toEqual(init.commands)
      const models = yield* session.supportedModels
      expect(models.map((m) => m.value)).toContain("default")
      expect(yield* session.supportedAgents).toEqual(init.agents)
      expect(yield* session.accountInfo).toMatchObject({ apiKeySource: "ANTHROPIC_API_KEY" })
      expect(yield* session.mcpServerStatus).toEqual([])
    }))

  live("query: includePartialMessages yields stream_events that add up to the text", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const messages = yield* ClaudeAgent.query("SAY streamed words arrive", options({ includePartialMessages: true }))
        .pipe(Stream.runCollect)
      const events = Chunk.toReadonlyArray(messages).filter(Message.isStreamEvent)
      expect(events.map((e) => e.event.type)).toContain("message_start")
      const text = events.flatMap((e) =>
        e.event.type === "content_block_delta" && e.event.delta.type === "text_delta" ? [e.event.delta.text] : []
      ).join("")
      expect(text).toBe("streamed words arrive")
    }))

  live("query: maxTurns ends with error_max_turns", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli({
        replies: [
          ScriptedModelServer.reply(ScriptedModelServer.toolUse("Bash", { command: "echo looping" })),
          ScriptedModelServer.reply(ScriptedModelServer.toolUse("Bash", { command: "echo looping again" }))
        ]
      })
      const messages = yield* ClaudeAgent.query("loop", options({ maxTurns: 1 })).pipe(Stream.runCollect)
      const [result] = results(messages)
      expect(result).toMatchObject({ subtype: "error_max_turns", is_error: true })
    }))
})
