// The protocol conformance suite, run against every pinned CLI version (the current one and an older 2.1.x).
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  AgentError,
  type AgentOptions,
  ClaudeAgent,
  Hooks,
  Message,
  Permissions,
  type Transport
} from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const CLIS = [
  { version: "2.1.332", path: undefined },
  { version: "2.1.100", path: path.join(import.meta.dirname, "..", "node_modules", "claude-code-2.1.100", "cli.js") }
] as const

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

const result = (messages: Chunk.Chunk<Message.SdkMessage>) =>
  Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
const text = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const r = result(messages)
  return r?.subtype === "success" ? r.result : r?.subtype
}
const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`

for (const cli of CLIS) {
  describe(`conformance: claude ${cli.version}`, () => {
    const withCli = (options: AgentOptions.Options = {}): AgentOptions.Options => ({
      ...options,
      ...(cli.path !== undefined ? { pathToClaudeCodeExecutable: cli.path } : {})
    })

    live("query: text reply and result; the CLI reports this version", () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const messages = yield* ClaudeAgent.query("SAY conformance", options(withCli())).pipe(Stream.runCollect)
        expect(text(messages)).toBe("conformance")
        expect(Chunk.toReadonlyArray(messages).find(Message.isSystemInit)?.claude_code_version).toBe(cli.version)
        expect(Chunk.toReadonlyArray(messages).some((m) => m.type === "unknown" || m.type === "transport_error")).toBe(
          false
        )
      }))

    live("session: two turns share a session id and history", () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const session = yield* ClaudeAgent.session(options(withCli()))
        const first = yield* Stream.runCollect(session.turn("SAY one"))
        const second = yield* Stream.runCollect(session.turn("HISTORY"))
        expect(text(first)).toBe("one")
        expect(text(second)).toContain("user prompts: SAY one | HISTORY")
        expect(result(first)?.session_id).toBe(yield* session.sessionId)
        expect(result(second)?.session_id).toBe(yield* session.sessionId)
      }))

    live("interrupt mid-turn, then the next prompt", () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({ replies: [ScriptedModelServer.stall(30_000)] })
        const session = yield* ClaudeAgent.session(options(withCli()))
        const turn = yield* Stream.runCollect(session.turn("hang")).pipe(Effect.fork)
        yield* server.waitForRequest((r) => r.isMessages && r.stream === true)
        yield* session.interrupt
        expect(result(yield* Fiber.join(turn))?.subtype).toBe("error_during_execution")
        expect(text(yield* Stream.runCollect(session.turn("SAY next")))).toBe("next")
      }))

    live("setModel applies to the next model request", () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli()
        const session = yield* ClaudeAgent.session(options(withCli()))
        yield* Stream.runDrain(session.turn("SAY a"))
        yield* session.setModel("claude-haiku-4-5")
        yield* Stream.runDrain(session.turn("SAY b"))
        const requests = (yield* server.requests).filter((r) => r.isMessages && !r.isProbe)
        expect(requests.at(-1)?.model).toBe("claude-haiku-4-5")
      }))

    live("permissions: allow runs the tool, deny does not", () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        const allowed = yield* ClaudeAgent.query(bash("touch yes.txt && echo yes"), options(withCli())).pipe(
          Stream.runCollect,
          Effect.provide(Permissions.allowAll)
        )
        expect(text(allowed)).toBe("tool said: yes")
        const denied = yield* ClaudeAgent.query(bash("touch no.txt && echo no"), options(withCli())).pipe(
          Stream.runCollect,
          Effect.provide(Permissions.layer(() => Effect.succeed(Permissions.deny("refused"))))
        )
        expect(text(denied)).toBe("tool said: refused")
        expect(fs.existsSync(path.join(cwd, "yes.txt"))).toBe(true)
        expect(fs.existsSync(path.join(cwd, "no.txt"))).toBe(false)
      }))

    live("a PreToolUse hook that denies blocks the tool", () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        const messages = yield* ClaudeAgent.query(bash("touch hooked.txt && echo x"), options(withCli())).pipe(
          Stream.runCollect,
          Effect.provide(Permissions.allowAll),
          Effect.provide(Hooks.layer({ PreToolUse: [{ hooks: [Hooks.denyTools(["Bash"], "no Bash here")] }] }))
        )
        expect(text(messages)).toContain("no Bash here")
        expect(fs.existsSync(path.join(cwd, "hooked.txt"))).toBe(false)
      }))

    live("resume by id keeps history; a bogus id is SessionNotFound", () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const id = yield* Effect.scoped(Effect.gen(function*() {
          const session = yield* ClaudeAgent.session(options(withCli()))
          yield* Stream.runDrain(session.turn("SAY remember me"))
          return yield* session.sessionId
        }))
        const resumed = yield* ClaudeAgent.query("HISTORY", options(withCli({ resume: id }))).pipe(Stream.runCollect)
        expect(text(resumed)).toContain("SAY remember me | HISTORY")
        const bogus = yield* ClaudeAgent.query(
          "x",
          options(withCli({ resume: "00000000-0000-4000-8000-000000000000" }))
        )
          .pipe(Stream.runDrain, Effect.flip)
        expect(bogus).toBeInstanceOf(AgentError.SessionNotFound)
      }))

    live("G20 the version gate accepts it, and rejects it when it is outside the range", () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const error = yield* ClaudeAgent.query("x", options(withCli({ cliVersions: ">=9.0.0" }))).pipe(
          Stream.runDrain,
          Effect.flip
        )
        expect(error).toMatchObject({ _tag: "VersionIncompatible", found: cli.version, supported: ">=9.0.0" })
        expect((error as AgentError.VersionIncompatible).description).toMatch(/^set cliVersions to a range/)
      }))
  })
}
