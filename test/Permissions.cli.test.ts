import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { type AgentOptions, ClaudeAgent, Hooks, Message, Permissions, type Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"
import { expectLogs } from "./support/logs.js"

const { reply, text, toolUse } = ScriptedModelServer

type Env = Transport.Transport | Scope.Scope

/** Runs one prompt either as a one-shot query or as a turn of a session. */
const prompt = (mode: "query" | "session", text: string, options: AgentOptions.Options) =>
  mode === "query"
    ? Stream.runCollect(ClaudeAgent.query(text, options))
    : Effect.flatMap(ClaudeAgent.session(options), (s) => Stream.runCollect(s.turn(text)))

const resultText = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Env>, extra: Layer.Layer<never> = Layer.empty) =>
  it.live(
    name,
    () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer), Effect.provide(extra)),
    60_000
  )

for (const mode of ["query", "session"] as const) {
  describe(`Permissions and hooks against the real CLI (${mode})`, () => {
    live("an allowed Bash call runs and its output reaches the model", () =>
      Effect.gen(function*() {
        const { options, cwd, server } = yield* realCli()
        const messages = yield* prompt(mode, bash("touch allowed.txt && echo ran-ok"), options()).pipe(
          Effect.provide(Permissions.allowAll)
        )
        expect(fs.existsSync(path.join(cwd, "allowed.txt"))).toBe(true)
        expect(resultText(messages)).toBe("tool said: ran-ok")
        const last = (yield* server.requests).filter((r) => r.isMessages).at(-1)
        expect(last?.toolResults).toMatchObject([{ content: "ran-ok", is_error: false }])
      }))

    live("a denied Bash call does not run and the deny message reaches the model", () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        const policy = Permissions.layer((r) => Effect.succeed(Permissions.deny(`no ${r.toolName} today`)))
        const messages = yield* prompt(mode, bash("touch denied.txt && echo ran"), options()).pipe(
          Effect.provide(policy)
        )
        expect(fs.existsSync(path.join(cwd, "denied.txt"))).toBe(false)
        expect(resultText(messages)).toBe("tool said: no Bash today")
        const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
        expect(result?.permission_denials.map((d) => d.tool_name)).toEqual(["Bash"])
      }))

    live("updatedInput changes the command that actually runs", () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        const policy = Permissions.layer((r) =>
          Effect.succeed(
            Permissions.allow({ updatedInput: { ...r.input, command: "touch rewritten.txt && echo rewritten" } })
          )
        )
        const messages = yield* prompt(mode, bash("touch original.txt && echo original"), options()).pipe(
          Effect.provide(policy)
        )
        expect(fs.existsSync(path.join(cwd, "original.txt"))).toBe(false)
        expect(fs.existsSync(path.join(cwd, "rewritten.txt"))).toBe(true)
        expect(resultText(messages)).toBe("tool said: rewritten")
      }))

    live(
      "a Write allowed by a rule writes the file; a Write no rule allows leaves no file",
      () =>
        Effect.gen(function*() {
          const { options, cwd, server } = yield* realCli()
          const allowed = path.join(cwd, "allowed-1.txt")
          const denied = path.join(cwd, "secret.txt")
          yield* server.addReplies(
            reply(toolUse("Write", { file_path: allowed, content: "written by an allowed Write\n" })),
            reply(toolUse("Write", { file_path: denied, content: "must not exist\n" })),
            reply(text("both answered"))
          )
          const asked: Array<Permissions.PermissionRequest> = []
          const policy = Permissions.fromCallback((request) =>
            Effect.suspend(() => {
              asked.push(request)
              return Permissions.rules({ allow: ["Write(./allowed-*.txt)"] })(request)
            })
          )
          const messages = yield* prompt(mode, "write two files", options()).pipe(Effect.provide(policy))
          expect(resultText(messages)).toBe("both answered")
          expect(fs.readFileSync(allowed, "utf8")).toBe("written by an allowed Write\n")
          expect(fs.existsSync(denied)).toBe(false)
          expect(asked.map((r) => [r.toolName, r.input["file_path"]])).toEqual([["Write", allowed], ["Write", denied]])
          const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
          expect(results.map((r) => r.is_error)).toEqual([false, true])
          expect(results[1]?.content).toContain("No permission rule allows Write")
          const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
          expect(result?.permission_denials).toMatchObject([{ tool_name: "Write", tool_input: { file_path: denied } }])
        })
    )

    live(
      "a PreToolUse hook that denies blocks the tool; PostToolUse sees the response; UserPromptSubmit and Stop fire",
      () =>
        Effect.gen(function*() {
          const { options, cwd } = yield* realCli()
          const fired: Array<string> = []
          const post = yield* Deferred.make<unknown>()
          const hooks = Hooks.layer({
            UserPromptSubmit: [{
              hooks: [(i) => Effect.sync(() => (fired.push(`prompt:${i.prompt.slice(0, 4)}`), {}))]
            }],
            PreToolUse: [{
              matcher: "Bash",
              hooks: [(i) =>
                Effect.sync(() => {
                  fired.push("pre")
                  return JSON.stringify(i.tool_input).includes("blocked") ? Hooks.deny("blocked by hook") : {}
                })]
            }],
            PostToolUse: [{ hooks: [(i) => Effect.as(Deferred.succeed(post, i.tool_response), {})] }],
            Stop: [{ hooks: [(i) => Effect.sync(() => (fired.push(`stop:${i.stop_hook_active}`), {}))] }]
          })
          // first: a call the hook lets through (runs, PostToolUse sees its output)
          const first = yield* prompt(mode, bash("touch passed.txt && echo passed"), options()).pipe(
            Effect.provide(hooks),
            Effect.provide(Permissions.allowAll)
          )
          expect(resultText(first)).toBe("tool said: passed")
          expect(yield* Deferred.await(post)).toMatchObject({ stdout: "passed" })
          // then: a call the hook blocks (never runs, even though the permission policy allows everything)
          const second = yield* prompt(mode, bash("touch blocked.txt && echo blocked"), options()).pipe(
            Effect.provide(hooks),
            Effect.provide(Permissions.allowAll)
          )
          expect(fs.existsSync(path.join(cwd, "passed.txt"))).toBe(true)
          expect(fs.existsSync(path.join(cwd, "blocked.txt"))).toBe(false)
          expect(resultText(second)).toContain("blocked by hook")
          expect(fired.filter((f) => f.startsWith("prompt:"))).toEqual(["prompt:TOOL", "prompt:TOOL"])
          expect(fired.filter((f) => f === "pre")).toHaveLength(2)
          expect(fired.filter((f) => f.startsWith("stop:"))).toHaveLength(2)
        })
    )
  })
}

describe("Permissions against the real CLI: fail closed", () => {
  live(
    "G6 (query) a callback that hangs past its timeout is a deny, and the next call in the same query is decided by it",
    () =>
      Effect.gen(function*() {
        const { options, cwd, server } = yield* realCli({
          replies: [
            reply(toolUse("Bash", { command: "touch slow.txt && echo slow", description: "scripted" })),
            reply(toolUse("Bash", { command: "touch fast.txt && echo fast", description: "scripted" })),
            reply(text("done"))
          ]
        })
        const seen: Array<string> = []
        const signals: Array<AbortSignal> = []
        const policy = Permissions.fromCallback(
          (request) => {
            seen.push(String(request.input["command"]))
            signals.push(request.signal)
            return seen.length === 1 ? Effect.never : Effect.succeed(Permissions.allow())
          },
          { timeout: "1 second" }
        )
        const messages = yield* Stream.runCollect(ClaudeAgent.query("go", options())).pipe(Effect.provide(policy))
        expect(resultText(messages)).toBe("done")
        expect(seen).toEqual(["touch slow.txt && echo slow", "touch fast.txt && echo fast"])
        // the abandoned decision's signal was aborted, the answered one's was not
        expect(signals.map((signal) => signal.aborted)).toEqual([true, false])
        expect(fs.existsSync(path.join(cwd, "slow.txt"))).toBe(false)
        expect(fs.existsSync(path.join(cwd, "fast.txt"))).toBe(true)
        const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
        expect(results).toMatchObject([
          { is_error: true, content: expect.stringContaining("no decision within 1s") },
          { is_error: false, content: "fast" }
        ])
        const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
        expect(result?.permission_denials.map((d) => d.tool_name)).toEqual(["Bash"])
      }).pipe(expectLogs([/^WARN Permission for Bash denied: no decision within 1s/]))
  )

  live(
    "G6 a callback that hangs past its timeout is a deny, and the next call in the session is still decided by it",
    () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        let calls = 0
        const policy = Permissions.layer(
          () => (++calls === 1 ? Effect.never : Effect.succeed(Permissions.allow())),
          { timeout: "1 second" }
        )
        const session = yield* ClaudeAgent.session(options()).pipe(Effect.provide(policy))
        const first = yield* Stream.runCollect(session.turn(bash("touch slow.txt && echo slow")))
        expect(fs.existsSync(path.join(cwd, "slow.txt"))).toBe(false)
        expect(resultText(first)).toContain("no decision within 1s")
        const second = yield* Stream.runCollect(session.turn(bash("touch fast.txt && echo fast")))
        expect(resultText(second)).toBe("tool said: fast")
        expect(fs.existsSync(path.join(cwd, "fast.txt"))).toBe(true)
        expect(calls).toBe(2)
      }).pipe(expectLogs([/^WARN Permission for Bash denied: no decision within 1s/]))
  )

  live(
    "interrupting the turn withdraws a pending permission request: the callback's signal aborts, the tool never runs",
    () =>
      Effect.gen(function*() {
        const { options, cwd } = yield* realCli()
        const asked = yield* Deferred.make<Permissions.PermissionRequest>()
        const aborted = yield* Deferred.make<void>()
        const policy = Permissions.fromCallback((request) => {
          request.signal.addEventListener("abort", () => Deferred.unsafeDone(aborted, Exit.void))
          return Effect.zipRight(Deferred.succeed(asked, request), Effect.never)
        }, { timeout: "1 minute" })
        const session = yield* ClaudeAgent.session(options()).pipe(Effect.provide(policy))
        const turn = yield* Effect.fork(Stream.runCollect(session.turn(bash("touch pending.txt && echo pending"))))
        const request = yield* Deferred.await(asked)
        expect(request.signal.aborted).toBe(false)
        yield* session.interrupt
        const messages = yield* Fiber.join(turn)
        // the CLI sends control_cancel_request for the pending can_use_tool; the session stays open
        yield* Deferred.await(aborted).pipe(Effect.timeout("10 seconds"))
        expect(request.signal.aborted).toBe(true)
        expect(Chunk.toReadonlyArray(messages).find(Message.isResultMessage)?.subtype).toBe("error_during_execution")
        expect(fs.existsSync(path.join(cwd, "pending.txt"))).toBe(false)
      })
  )
})
