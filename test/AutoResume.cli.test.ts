import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Schema from "effect/Schema"
import { AgentError, ClaudeAgent, Hooks, Message, Permissions, type Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as SdkMcp from "../src/SdkMcp.js"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { isAlive } from "./support/process.js"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

const resultText = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const r = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
  return r?.subtype === "success" ? r.result : r?.subtype
}

const { defaultHandler, reply, stall, text, toolUse } = ScriptedModelServer

/** The CLI's transcript of a session (under the scripted model server's HOME), or "" while it has none. */
const transcript = (home: string, sessionId: string): string => {
  const projects = path.join(home, ".claude", "projects")
  if (!fs.existsSync(projects)) return ""
  const file = fs.readdirSync(projects, { recursive: true, encoding: "utf8" }).find((f) =>
    f.endsWith(`${sessionId}.jsonl`)
  )
  return file === undefined ? "" : fs.readFileSync(path.join(projects, file), "utf8")
}

/** Polls (every 50 ms, for at most 10 s) until `check` holds. */
const eventually = (check: () => boolean) =>
  Effect.suspend(() => (check() ? Effect.void : Effect.fail("not yet"))).pipe(
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds"))),
    Effect.orDie
  )

const REAL_CLAUDE = path.join(
  import.meta.dirname,
  "..",
  "node_modules",
  "@anthropic-ai",
  "claude-code-linux-x64",
  "claude"
)

describe("auto-resume against the real CLI", () => {
  live(
    "SIGKILL between two turns: the next prompt is answered with the history, one restart event",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli()
        const session = yield* ClaudeAgent.session(options({ autoResume: { maxRestarts: 3, initialDelayMillis: 50 } }))
        expect(resultText(yield* Stream.runCollect(session.turn("SAY before the crash")))).toBe("before the crash")
        const pid = Option.getOrThrow(session.pid)
        process.kill(pid, "SIGKILL")
        const after = yield* Stream.runCollect(session.turn("HISTORY"))
        const restarts = Chunk.toReadonlyArray(after).filter((m) => m.type === "session_restarted")
        expect(restarts).toHaveLength(1)
        expect(restarts[0]).toMatchObject({
          attempt: 1,
          exit: { signal: "SIGKILL" },
          session_id: session.origin.sessionId
        })
        expect(resultText(after)).toContain("user prompts: SAY before the crash | HISTORY")
        expect(isAlive(pid)).toBe(false)
        expect(Option.getOrThrow(session.pid)).not.toBe(pid)
        expect(yield* session.sessionId).toBe(session.origin.sessionId)
        const requests = (yield* server.requests).filter((r) => r.isMessages && !r.isProbe)
        expect(requests).toHaveLength(2)
      })
  )

  live("a prompt sent while the CLI is being replaced is answered exactly once", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli()
      const session = yield* ClaudeAgent.session(options({ autoResume: { maxRestarts: 3, initialDelayMillis: 50 } }))
      yield* Stream.runDrain(session.turn("SAY one"))
      process.kill(Option.getOrThrow(session.pid), "SIGKILL")
      yield* session.send("SAY sent during the restart")
      const messages = yield* session.messages.pipe(Stream.takeUntil(Message.isResultMessage), Stream.runCollect)
      expect(resultText(messages)).toBe("sent during the restart")
      const asked = (yield* server.requests).filter((r) => r.lastUserText === "SAY sent during the restart")
      expect(asked).toHaveLength(1)
    }))

  live(
    "a CLI that dies at every start-up ends after the configured attempts with the typed error",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const dir = yield* tempDir("eca-wrapper-")
        const counter = path.join(dir, "starts")
        const wrapper = path.join(dir, "claude")
        // the first start runs the real CLI; every later one crashes at once
        fs.writeFileSync(
          wrapper,
          [
            "#!/usr/bin/env bash",
            `if [ "$1" = "--version" ]; then exec "${REAL_CLAUDE}" "$@"; fi`,
            `echo x >> "${counter}"`,
            `if [ "$(wc -l < "${counter}")" -gt 1 ]; then echo "crashing at start-up" >&2; exit 3; fi`,
            `exec "${REAL_CLAUDE}" "$@"`
          ].join("\n"),
          { mode: 0o755 }
        )
        const session = yield* ClaudeAgent.session(
          options({ pathToClaudeCodeExecutable: wrapper, autoResume: { maxRestarts: 2, initialDelayMillis: 10 } })
        )
        yield* Stream.runDrain(session.turn("SAY one"))
        process.kill(Option.getOrThrow(session.pid), "SIGKILL")
        const error = yield* Stream.runDrain(session.messages).pipe(Effect.flip)
        expect(error).toBeInstanceOf(AgentError.ProcessExited)
        expect(error).toMatchObject({ code: 3, stderrTail: expect.stringContaining("crashing at start-up") })
        expect(fs.readFileSync(counter, "utf8").trim().split("\n")).toHaveLength(3)
      })
  )

  live(
    "after a SIGKILL the new process asks the same Permissions, fires the same hooks and calls the same SDK MCP tool",
    () =>
      Effect.gen(function*() {
        const { cwd, options, server } = yield* realCli({
          handler: (request) =>
            request.toolResults.length > 0
              ? reply(
                text(
                  `results: ${
                    request.toolResults.map((r) => `${r.content}${r.is_error ? " (error)" : ""}`).join(" | ")
                  }`
                )
              )
              : request.lastUserText === "USE TOOLS"
              ? reply(
                toolUse("Bash", { command: "touch original.txt && echo original", description: "scripted" }),
                toolUse("mcp__calc__add", { a: 2, b: 3 })
              )
              : defaultHandler(request)
        })
        const asked: Array<string> = []
        const hooked: Array<string> = []
        const added: Array<{ readonly a: number; readonly b: number }> = []
        const calc = yield* SdkMcp.createSdkMcpServer({
          name: "calc",
          tools: [
            SdkMcp.tool("add", "Adds two numbers", Schema.Struct({ a: Schema.Number, b: Schema.Number }), (input) =>
              Effect.sync(() => {
                added.push(input)
                return `${input.a + input.b}`
              }))
          ]
        })
        // the decision is applied: the command the CLI runs is the one the callback wrote
        const permissions = Permissions.layer((r) =>
          Effect.sync(() => {
            asked.push(r.toolName)
            return r.toolName === "Bash"
              ? Permissions.allow({ updatedInput: { ...r.input, command: "touch rewritten.txt && echo rewritten" } })
              : Permissions.allow()
          })
        )
        const hooks = Hooks.layer({
          PreToolUse: [{
            hooks: [(i) =>
              Effect.sync(() => (hooked.push(i.tool_name), Hooks.proceed))]
          }]
        })
        const session = yield* ClaudeAgent.session(
          options({ mcpServers: { calc }, autoResume: { maxRestarts: 3, initialDelayMillis: 50 } })
        ).pipe(Effect.provide(permissions), Effect.provide(hooks))
        expect(resultText(yield* Stream.runCollect(session.turn("SAY before the crash")))).toBe("before the crash")
        expect([asked, hooked, added]).toEqual([[], [], []])
        const pid = Option.getOrThrow(session.pid)
        process.kill(pid, "SIGKILL")

        const after = Chunk.toReadonlyArray(yield* Stream.runCollect(session.turn("USE TOOLS")))
        expect(after.filter((m) =>
          m.type === "session_restarted"
        )).toEqual([
          expect.objectContaining({ attempt: 1, exit: { code: null, signal: "SIGKILL" }, interruptedTurn: false })
        ])
        expect(Option.getOrThrow(session.pid)).not.toBe(pid)
        // everything registered at start-up answers in the restarted process
        const init = after.find(Message.isSystemInit)
        expect(init?.mcp_servers).toContainEqual({ name: "calc", status: "connected", source: "sdk" })
        expect([...asked].sort()).toEqual(["Bash", "mcp__calc__add"])
        expect([...hooked].sort()).toEqual(["Bash", "mcp__calc__add"])
        expect(added).toEqual([{ a: 2, b: 3 }])
        expect(fs.existsSync(path.join(cwd, "original.txt"))).toBe(false)
        expect(fs.existsSync(path.join(cwd, "rewritten.txt"))).toBe(true)
        expect(resultText(Chunk.fromIterable(after))).toBe("results: rewritten | 5")
        // the conversation survived: the new process sent the model the turn before the crash
        const requests = (yield* server.requests).filter((r) => r.isMessages && !r.isProbe)
        expect(requests.map((r) => r.userPrompts)).toEqual([
          ["SAY before the crash"],
          ["SAY before the crash", "USE TOOLS"],
          ["SAY before the crash", "USE TOOLS"]
        ])
      })
  )

  live(
    "SIGKILL mid-turn: the turn ends with interruptedTurn, nothing is sent twice, a prompt not started yet is answered once",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({
          handler: (request) => (request.lastUserText === "STALL" ? stall() : defaultHandler(request))
        })
        const home = options().env?.["HOME"] ?? ""
        const session = yield* ClaudeAgent.session(options({ autoResume: { maxRestarts: 3, initialDelayMillis: 50 } }))
        const sessionId = session.origin.sessionId ?? ""
        yield* Stream.runDrain(session.turn("SAY one"))
        const stalled = yield* Effect.fork(Stream.runCollect(session.turn("STALL")))
        yield* server.waitForRequest((r) => r.lastUserText === "STALL")
        // read by the CLI while the STALL turn runs: queued there, not started
        yield* session.send("SAY queued")
        // once the CLI has written the running prompt and the queued one's arrival to its transcript (a few hundred ms)
        yield* eventually(() => {
          const written = transcript(home, sessionId)
          return written.includes(`"text":"STALL"`) && written.split(`"operation":"enqueue"`).length - 1 >= 3
        })
        process.kill(Option.getOrThrow(session.pid), "SIGKILL")

        const interrupted = Chunk.toReadonlyArray(yield* Fiber.join(stalled))
        expect(interrupted.some(Message.isResultMessage)).toBe(false)
        expect(interrupted.at(-1)).toMatchObject({
          type: "session_restarted",
          attempt: 1,
          exit: { code: null, signal: "SIGKILL" },
          interruptedTurn: true
        })
        // the prompt the dead CLI had not started is answered by the new one
        const queued = yield* session.messages.pipe(Stream.takeUntil(Message.isResultMessage), Stream.runCollect)
        expect(resultText(queued)).toBe("queued")
        const history = yield* Stream.runCollect(session.turn("HISTORY"))
        expect(resultText(history)).toContain("user prompts: SAY one | STALL | SAY queued | HISTORY")
        const requests = (yield* server.requests).filter((r) => r.isMessages && !r.isProbe)
        expect(requests.map((r) => r.lastUserText)).toEqual(["SAY one", "STALL", "SAY queued", "HISTORY"])
        // the resumed CLI closes the interrupted turn with a reply of its own
        const last = requests.at(-1)?.messages ?? []
        const stallAt = last.findIndex((m) => m.role === "user" && JSON.stringify(m.content).includes("STALL"))
        expect(JSON.stringify(last[stallAt + 1])).toContain("No response requested.")
      })
  )
})
