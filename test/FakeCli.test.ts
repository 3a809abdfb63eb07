import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, ClaudeAgent, Message, NodeClaudeAgent, Permissions, Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import { noClaudeLeft, tempDir } from "./support/cli.js"

const kinds = (messages: Chunk.Chunk<Message.SdkMessage>) =>
  Chunk.toReadonlyArray(messages).map((m) =>
    m.type === "system"
      ? `system/${m.subtype}`
      : m.type === "transport_error"
      ? `transport_error/${m.error._tag}`
      : m.type
  )

/** A live test through the real process Transport; nothing the fake started may be left afterwards. */
const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 30_000)

describe("FakeCli through ClaudeAgent and the process Transport", () => {
  live("answers initialize and a prompt like the real CLI", () =>
    Effect.gen(function*() {
      const scenario = FakeCli.scenario([FakeCli.expectUser("hi"), FakeCli.turn("you said: {prompt}")])
      const messages = yield* Stream.runCollect(ClaudeAgent.query("hi there", FakeCli.options(scenario)))
      expect(kinds(messages)).toEqual(["system/init", "assistant", "result"])
      expect(Chunk.unsafeLast(messages)).toMatchObject({
        type: "result",
        subtype: "success",
        result: "you said: hi there"
      })
    }))

  live("a session: initialize data, control methods, several turns (echo)", () =>
    Effect.gen(function*() {
      const session = yield* ClaudeAgent.session(FakeCli.options(FakeCli.echoScenario))
      expect((yield* session.initializationResult).claude_code_version).toBe("2.1.332")
      expect(Option.isSome(session.pid)).toBe(true)
      yield* session.setModel("haiku")
      expect(yield* session.interrupt).toEqual({ still_queued: [] })
      const first = yield* Stream.runCollect(session.turn("one"))
      const second = yield* Stream.runCollect(session.turn("two"))
      expect(Chunk.unsafeLast(first)).toMatchObject({ result: "echo: one" })
      expect(Chunk.unsafeLast(second)).toMatchObject({ result: "echo: two" })
      // the fake uses the session id the SDK assigned
      expect(Chunk.toReadonlyArray(first).find(Message.isSystemInit)?.session_id).toBe(session.origin.sessionId)
    }))

  live("a crash with a code and stderr: ProcessExited { code, stderrTail }", () =>
    Effect.gen(function*() {
      const scenario = FakeCli.scenario([
        FakeCli.expectUser(),
        FakeCli.init(),
        FakeCli.exit(3, "fatal: out of cheese\n")
      ])
      const exit = yield* ClaudeAgent.query("x", FakeCli.options(scenario)).pipe(Stream.runCollect, Effect.exit)
      expect(exit).toStrictEqual(
        Exit.fail(new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "fatal: out of cheese\n" }))
      )
    }))

  live("killed by a signal mid-turn: ProcessExited { signal }", () =>
    Effect.gen(function*() {
      const scenario = FakeCli.scenario([FakeCli.expectUser(), FakeCli.assistant("working"), FakeCli.kill("SIGKILL")])
      const exit = yield* ClaudeAgent.query("x", FakeCli.options(scenario)).pipe(Stream.runCollect, Effect.exit)
      expect(exit).toStrictEqual(
        Exit.fail(new AgentError.ProcessExited({ code: null, signal: "SIGKILL", stderrTail: "" }))
      )
    }))

  live(
    "a CLI that exits at once: a typed start-up failure with its exit code and stderr",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([FakeCli.exit(1, "error: unknown option '--bogus'\n")])
        const error = yield* ClaudeAgent.query("x", FakeCli.options(scenario)).pipe(Stream.runCollect, Effect.flip)
        const reported = error._tag === "StartupFailed" ? error.cause : error
        expect(reported).toStrictEqual(
          new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "error: unknown option '--bogus'\n" })
        )
      })
  )

  live(
    "a CLI that never answers initialize: StartupFailed after initializeTimeout, and the process is gone",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([FakeCli.stall], { answers: { initialize: FakeCli.noAnswer } })
        // long enough for a busy machine to spawn the fake within it (the bound covers the spawn too)
        const error = yield* ClaudeAgent.query("x", FakeCli.options(scenario, { initializeTimeout: "1500 millis" }))
          .pipe(
            Stream.runCollect,
            Effect.flip
          )
        expect(error).toMatchObject({ _tag: "StartupFailed", description: "no answer to initialize within 1500 ms" })
        // the bound covers the whole start-up: initialize had what the spawn left of it
        const cause = error._tag === "StartupFailed" ? error.cause : undefined
        expect(cause).toBeInstanceOf(AgentError.ControlTimeout)
        expect(cause).toMatchObject({ _tag: "ControlTimeout", subtype: "initialize" })
        expect(cause instanceof AgentError.ControlTimeout ? cause.timeoutMillis : NaN).toBeLessThanOrEqual(1500)
      })
  )

  live("banner, malformed, unknown and giant lines arrive in-band and the turn goes on", () =>
    Effect.gen(function*() {
      const scenario = FakeCli.scenario([
        FakeCli.malformed("Welcome to Claude Code (banner)"),
        FakeCli.expectUser(),
        FakeCli.init(),
        FakeCli.unknownMessage("hologram", { payload: 1 }),
        FakeCli.giantLine(2 * 1024 * 1024),
        FakeCli.splitUtf8("5€ and \u2028 survive"),
        FakeCli.result("done", {}, { eol: "\r\n" })
      ])
      const messages = yield* Stream.runCollect(
        ClaudeAgent.query("x", FakeCli.options(scenario, { maxLineBytes: 1024 * 1024 }))
      )
      expect(kinds(messages)).toEqual([
        "transport_error/MalformedLine",
        "system/init",
        "unknown",
        "transport_error/LineTooLong",
        "assistant",
        "result"
      ])
      const all = Chunk.toReadonlyArray(messages)
      expect(all[0]).toMatchObject({ error: { _tag: "MalformedLine", line: "Welcome to Claude Code (banner)" } })
      expect(all[2]).toMatchObject({ type: "unknown", reason: "unknown_type", raw: { type: "hologram", payload: 1 } })
      expect(all[3]).toMatchObject({ error: { _tag: "LineTooLong", limit: 1024 * 1024 } })
      const assistant = all.find(Message.isAssistantMessage)
      expect(assistant === undefined ? "" : Message.text(assistant)).toBe("5€ and \u2028 survive")
    }))

  live(
    "a slow control answer past controlRequestTimeout: ControlTimeout, and the session goes on",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([FakeCli.echo], {
          answers: { set_model: FakeCli.answer({}, { delayMs: 2_000 }) }
        })
        const session = yield* ClaudeAgent.session(FakeCli.options(scenario, { controlRequestTimeout: "200 millis" }))
        const error = yield* Effect.flip(session.setModel("haiku"))
        expect(error).toBeInstanceOf(AgentError.ControlTimeout)
        expect(error).toMatchObject({ _tag: "ControlTimeout", subtype: "set_model", timeoutMillis: 200 })
        const turn = yield* Stream.runCollect(session.turn("still alive?"))
        expect(Chunk.unsafeLast(turn)).toMatchObject({ result: "echo: still alive?" })
      })
  )

  live("an error answer to a control request: ControlError with its code", () =>
    Effect.gen(function*() {
      const scenario = FakeCli.scenario([FakeCli.stall], {
        answers: { set_model: FakeCli.answerError("no such model", { errorCode: "invalid_model" }) }
      })
      const session = yield* ClaudeAgent.session(FakeCli.options(scenario))
      const error = yield* Effect.flip(session.setModel("nope"))
      expect(error).toStrictEqual(
        new AgentError.ControlError({ subtype: "set_model", description: "no such model", errorCode: "invalid_model" })
      )
    }))

  live(
    "can_use_tool reaches the Permissions policy; the log shows what the SDK read and answered",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("eca-fake-")
        const log = path.join(dir, "log.jsonl")
        const scenario = FakeCli.scenario([
          FakeCli.expectUser(),
          FakeCli.canUseTool("Bash", { command: "rm -rf /" }),
          FakeCli.turn("done")
        ], { log })
        const policy = Permissions.layer((r) =>
          Effect.succeed(
            String(r.input["command"]).startsWith("rm") ? Permissions.deny("not that") : Permissions.allow()
          )
        )
        yield* ClaudeAgent.query("clean up", FakeCli.options(scenario)).pipe(Stream.runDrain, Effect.provide(policy))
        const seen = yield* FakeCli.readLog(log)
        expect(seen.start?.argv.slice(0, 5)).toEqual(Transport.BASE_ARGS)
        expect(seen.received.map((f) => f["type"])).toEqual(["control_request", "user", "control_response"])
        expect(seen.answers).toHaveLength(1)
        expect(seen.answers[0]).toMatchObject({
          subtype: "can_use_tool",
          response: { subtype: "success", response: { behavior: "deny", message: "not that" } }
        })
        expect(fs.existsSync(log)).toBe(true)
      })
  )

  live(
    "a scenario step that is not met ends the fake with code 70 and the reason on stderr",
    () =>
      Effect.gen(function*() {
        const scenario = FakeCli.scenario([FakeCli.expectUser("password"), FakeCli.turn("never")])
        const error = yield* ClaudeAgent.query("hello", FakeCli.options(scenario)).pipe(Stream.runCollect, Effect.flip)
        expect(error).toMatchObject({ _tag: "ProcessExited", code: 70 })
        expect(error._tag === "ProcessExited" ? error.stderrTail : "").toContain(
          "expected a prompt containing \"password\", got \"hello\""
        )
      })
  )
})

describe("the fake CLI program", () => {
  it("is plain JavaScript next to the kit, run by Node as it is: no TypeScript loader, no transpiled copy", () => {
    const program = FakeCli.executable()
    expect(program.executableArgs).toEqual([])
    expect(path.dirname(program.executable)).toBe(path.resolve(import.meta.dirname, "..", "src", "internal", "testing"))
    expect(path.basename(program.executable)).toBe("fakeCliMain.js")
    // at run time only Node built-ins and plain JavaScript siblings that import only Node built-ins (the frames it
    // shares with ScriptedCli); type imports live in JSDoc comments
    const importsOf = (file: string) =>
      [...fs.readFileSync(file, "utf8").matchAll(/^import .* from "([^"]+)"/gm)].map((m) => m[1] ?? "")
    const imports = importsOf(program.executable)
    expect(imports.length).toBeGreaterThan(0)
    const siblings = imports.filter((specifier) => !specifier.startsWith("node:"))
    expect(siblings).toEqual(["./cliFrames.js"])
    for (const sibling of siblings) {
      expect(importsOf(path.join(path.dirname(program.executable), sibling)).every((s) => s.startsWith("node:")))
        .toBe(true)
    }
    // a bare `node` (no --import, no loader) runs it
    const run = spawnSync(process.execPath, [program.executable, "--version"], { encoding: "utf8", env: {} })
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+ \(Claude Code\)\n$/)
  })
})
