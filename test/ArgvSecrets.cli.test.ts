import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { ClaudeAgent, Message, Permissions, type Transport } from "effect-claude-agent"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const SECRET = "sk-argv-secret-7f3a"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 120_000)

const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "x" })}`

describe("no secret on the real CLI's command line (G12)", () => {
  live(
    "/proc/<pid>/cmdline holds none of the secrets, and the settings, MCP config and managed settings apply",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const session = yield* ClaudeAgent.session(options({
          // a JSON string with leading whitespace and a byte order mark: the CLI reads it as JSON
          settings: `\uFEFF \n ${JSON.stringify({ env: { FROM_SETTINGS: SECRET } })}`,
          managedSettings: { permissions: { deny: [`Bash(echo denied-by-policy:*)`] }, env: { M: SECRET } },
          mcpServers: {
            db: { command: "/nonexistent/db-mcp", env: { DB_TOKEN: SECRET } },
            api: { type: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: `Bearer ${SECRET}` } }
          },
          extraArgs: {
            "mcp-config": ` ${JSON.stringify({ mcpServers: { x: { command: "/nonexistent/x", env: { X: SECRET } } } })}`
          }
        })).pipe(Effect.provide(Permissions.allowAll))
        const pid = Option.getOrThrow(session.pid)
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
        expect(cmdline).toContain("--settings")
        expect(cmdline).not.toContain(SECRET)

        yield* session.send(bash("echo value=$FROM_SETTINGS"))
        const first = yield* session.messages.pipe(Stream.takeUntil(Message.isResultMessage), Stream.runCollect)
        const result = Chunk.toReadonlyArray(first).find(Message.isResultMessage)
        expect(result?.subtype === "success" && result.result).toBe(`tool said: value=${SECRET}`)

        // the managed deny rule wins over the allow-all permission handler
        yield* session.send(bash("echo denied-by-policy"))
        const second = yield* session.messages.pipe(Stream.takeUntil(Message.isResultMessage), Stream.runCollect)
        const denied = Chunk.toReadonlyArray(second).find(Message.isResultMessage)
        expect(denied?.permission_denials.map((d) => d.tool_name)).toEqual(["Bash"])
      })
  )
})
