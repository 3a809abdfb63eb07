// Permission rules against the real CLI: commands that got past `Bash(echo:*)` before rules were judged on a parse
// do not run; an allowed compound command does; a Write through a symlink out of the allowed tree writes nothing.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message, Permissions } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const { reply, text, toolUse } = ScriptedModelServer

const FALLBACK = "no rule allows this"

describe("Bash and path rules against the real CLI", () => {
  it.live(
    "Bash(echo:*) runs `echo a && echo b` but none of the bypasses; the model gets the denials",
    () =>
      noClaudeLeft(
        Effect.scoped(Effect.gen(function*() {
          const { options, cwd, server } = yield* realCli()
          const bypasses = [
            "echo $(touch X1)",
            "echo hi & touch X2",
            "echo hi > X3",
            "echo \"${x:-$(touch X4)}\"",
            "echo hi # it's\ntouch X5",
            // read differently by the parser and bash: a `#` after a line continuation, a heredoc delimiter bash unquotes
            "echo a\\\n#; touch X6",
            "echo <<E'O'F\nhi\nEOF\ntouch X7\nE'O'F\n"
          ]
          // with CR the CLI (2.1.332) refuses the input itself ("control characters"); the policy would fall back too
          const refused = ["echo hi \\\r\ntouch X8", "echo a\r#; touch X9"]
          yield* server.addReplies(
            ...[...bypasses, ...refused].map((command) => reply(toolUse("Bash", { command, description: "scripted" }))),
            reply(toolUse("Bash", { command: "echo allowed-a && echo allowed-b", description: "scripted" })),
            reply(text("done"))
          )
          const asked: Array<unknown> = []
          const policy = Permissions.layer((request) =>
            Effect.suspend(() => {
              asked.push(request.input["command"])
              return Permissions.rules({ allow: ["Bash(echo:*)"] }, () => Effect.succeed(Permissions.deny(FALLBACK)))(
                request
              )
            })
          )
          const messages = yield* Stream.runCollect(ClaudeAgent.query("run them", options())).pipe(
            Effect.provide(policy)
          )
          for (const file of ["X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9"]) {
            expect([file, fs.existsSync(path.join(cwd, file))]).toEqual([file, false])
          }
          const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
          expect(results).toHaveLength(bypasses.length + refused.length + 1)
          for (const result of results.slice(0, bypasses.length)) {
            expect(result.is_error).toBe(true)
            expect(result.content).toContain(FALLBACK)
          }
          for (const result of results.slice(bypasses.length, -1)) expect(result.is_error).toBe(true)
          expect(results.at(-1)).toMatchObject({ is_error: false, content: "allowed-a\nallowed-b" })
          // every bypass reached the policy (the CLI did not decide them itself)
          expect(asked.slice(0, bypasses.length)).toEqual(bypasses)
          const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
          expect(result?.permission_denials).toHaveLength(bypasses.length)
        })).pipe(Effect.provide(NodeClaudeAgent.layer))
      ),
    120_000
  )

  it.live(
    "Write(./src/**) does not allow a write through src/link -> ../outside",
    () =>
      noClaudeLeft(
        Effect.scoped(Effect.gen(function*() {
          const { options, cwd, server } = yield* realCli()
          fs.mkdirSync(path.join(cwd, "src"))
          fs.mkdirSync(path.join(cwd, "outside"))
          fs.symlinkSync("../outside", path.join(cwd, "src", "link"))
          yield* server.addReplies(
            reply(toolUse("Write", { file_path: path.join(cwd, "src", "link", "pwned.txt"), content: "escaped\n" })),
            reply(toolUse("Write", { file_path: path.join(cwd, "src", "ok.txt"), content: "inside\n" })),
            reply(text("done"))
          )
          const policy = Permissions.layer(
            Permissions.rules({ allow: ["Write(./src/**)"] }, () => Effect.succeed(Permissions.deny(FALLBACK)))
          )
          yield* Stream.runCollect(ClaudeAgent.query("write", options())).pipe(Effect.provide(policy))
          expect(fs.existsSync(path.join(cwd, "outside", "pwned.txt"))).toBe(false)
          expect(fs.readFileSync(path.join(cwd, "src", "ok.txt"), "utf8")).toBe("inside\n")
          const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
          expect(results.map((r) => r.is_error)).toEqual([true, false])
          expect(results[0]?.content).toContain(FALLBACK)
        })).pipe(Effect.provide(NodeClaudeAgent.layer))
      ),
    120_000
  )
})

describe("the Bash tool's directory and links against the real CLI", () => {
  /** Runs each command as one Bash call under `rules`, in order; returns the tool results. */
  const calls = (
    commands: ReadonlyArray<string>,
    rules: { readonly allow?: ReadonlyArray<string>; readonly deny?: ReadonlyArray<string> },
    setup: (cwd: string) => void
  ) =>
    Effect.gen(function*() {
      const { options, cwd, server } = yield* realCli()
      setup(cwd)
      yield* server.addReplies(
        ...commands.map((command) => reply(toolUse("Bash", { command, description: "scripted" }))),
        reply(text("done"))
      )
      const policy = Permissions.layer(Permissions.rules(rules, () => Effect.succeed(Permissions.deny(FALLBACK))))
      yield* Stream.runCollect(ClaudeAgent.query("run them", options())).pipe(Effect.provide(policy))
      const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
      return { cwd, results }
    })

  it.live(
    "`cd sub` then `echo x > out/f` in the next call writes ./out/f, where the policy judged it",
    () =>
      noClaudeLeft(
        Effect.scoped(Effect.gen(function*() {
          const { cwd, results } = yield* calls(
            ["cd sub", "echo x > out/f", "pwd"],
            { allow: ["Bash(cd:*)", "Bash(echo:*)", "Bash(pwd)", "Write(./out/**)"] },
            (cwd) => {
              fs.mkdirSync(path.join(cwd, "sub", "out"), { recursive: true })
              fs.mkdirSync(path.join(cwd, "out"))
            }
          )
          expect(results.map((r) => r.is_error)).toEqual([false, false, false])
          expect(fs.existsSync(path.join(cwd, "sub", "out", "f"))).toBe(false)
          expect(fs.readFileSync(path.join(cwd, "out", "f"), "utf8")).toBe("x\n")
          expect(String(results[2]?.content)).toBe(fs.realpathSync(cwd))
        })).pipe(Effect.provide(NodeClaudeAgent.layer))
      ),
    120_000
  )

  it.live(
    "links made earlier in the command (`;`, newline) and hard links are refused; what they lead to is untouched",
    () =>
      noClaudeLeft(
        Effect.scoped(Effect.gen(function*() {
          const { cwd, results } = yield* calls(
            [
              "ln -s ../outside out/l; echo x > out/l/t",
              "ln -s ../outside out/m\necho x > out/m/t",
              "echo x > out/h",
              "ln outside/u out/h2; echo x > out/h2",
              "cat secrets/k > out/copy",
              "echo ok > out/fine"
            ],
            {
              allow: ["Bash(ln:*)", "Bash(echo:*)", "Bash(cat:*)", "Write(./out/**)"],
              deny: ["Read(./secrets/**)"]
            },
            (cwd) => {
              for (const dir of ["out", "outside", "secrets"]) fs.mkdirSync(path.join(cwd, dir))
              for (const file of ["t", "h", "u"]) fs.writeFileSync(path.join(cwd, "outside", file), "outside\n")
              fs.writeFileSync(path.join(cwd, "secrets", "k"), "SECRET\n")
              fs.linkSync(path.join(cwd, "outside", "h"), path.join(cwd, "out", "h"))
            }
          )
          expect(results.map((r) => r.is_error)).toEqual([true, true, true, true, true, false])
          for (const file of ["t", "h", "u"]) {
            expect([file, fs.readFileSync(path.join(cwd, "outside", file), "utf8")]).toEqual([file, "outside\n"])
          }
          for (const name of ["l", "m", "h2", "copy"]) {
            expect([name, fs.existsSync(path.join(cwd, "out", name))]).toEqual([name, false])
          }
          expect(fs.readFileSync(path.join(cwd, "out", "fine"), "utf8")).toBe("ok\n")
        })).pipe(Effect.provide(NodeClaudeAgent.layer))
      ),
    120_000
  )
})
