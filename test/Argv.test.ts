import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message, Permissions, type Transport } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const SECRET = "sk-very-secret-token"

describe("argv hygiene (G12)", () => {
  it.scoped("argv stays under 8 KiB whatever the option sizes, and carries no secret", () =>
    Effect.gen(function*() {
      const seen = yield* Deferred.make<{ args: ReadonlyArray<string>; files: Record<string, string> }>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const files: Record<string, string> = {}
          for (const flag of ["--mcp-config", "--settings"]) {
            const at = cli.spec.args.indexOf(flag)
            const file = cli.spec.args[at + 1]!
            expect(fs.statSync(file).mode & 0o777).toBe(0o600)
            expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
            files[flag] = fs.readFileSync(file, "utf8")
          }
          yield* Deferred.succeed(seen, { args: cli.spec.args, files })
          const init = yield* cli.initialize
          expect(init["systemPrompt"]).toEqual(["p".repeat(1024 * 1024)])
          expect(Object.keys(init["agents"] as object)).toHaveLength(100)
        })
      )
      const allowedTools = Array.from({ length: 500 }, (_, i) => `mcp__server__tool_number_${i}`)
      const session = yield* ClaudeAgent.session({
        systemPrompt: "p".repeat(1024 * 1024),
        agents: Object.fromEntries(
          Array.from(
            { length: 100 },
            (_, i) => [`agent${i}`, { description: "d".repeat(500), prompt: "q".repeat(5000) }]
          )
        ),
        allowedTools,
        disallowedTools: ["WebSearch"],
        mcpServers: {
          db: { command: "db-mcp", env: { DB_TOKEN: SECRET } },
          api: { type: "http", url: "https://x", headers: { Authorization: `Bearer ${SECRET}` } }
        },
        settings: { env: { API_TOKEN: SECRET } }
      }).pipe(Effect.provide(layer))
      const { args, files } = yield* Deferred.await(seen)
      expect(Buffer.byteLength(args.join(" "))).toBeLessThan(8 * 1024)
      expect(args.join(" ")).not.toContain(SECRET)
      expect(JSON.parse(files["--mcp-config"]!).mcpServers.db.env.DB_TOKEN).toBe(SECRET)
      const settings = JSON.parse(files["--settings"]!)
      expect(settings.env.API_TOKEN).toBe(SECRET)
      expect(settings.permissions).toEqual({ allow: allowedTools, deny: ["WebSearch"] })
      expect(session.pid._tag).toBe("None")
    }))

  it.scoped("with settings given as a file path, long tool lists stay in argv (one --settings: the caller's)", () =>
    Effect.gen(function*() {
      const args = yield* Deferred.make<ReadonlyArray<string>>()
      const layer = ScriptedCli.layer((cli) => Deferred.succeed(args, cli.spec.args))
      const allowedTools = Array.from({ length: 300 }, (_, i) => `mcp__server__tool_number_${i}`)
      yield* ClaudeAgent.session({ allowedTools, settings: "/etc/claude/settings.json" }).pipe(Effect.provide(layer))
      const seen = yield* Deferred.await(args)
      expect(seen.filter((a) => a === "--settings")).toHaveLength(1)
      expect(seen[seen.indexOf("--settings") + 1]).toBe("/etc/claude/settings.json")
      expect(seen).toContain(`--allowedTools=${allowedTools.join(",")}`)
    }))

  it.scoped("the files are removed when the session closes", () =>
    Effect.gen(function*() {
      const file = yield* Deferred.make<string>()
      const layer = ScriptedCli.layer((cli) =>
        Deferred.succeed(file, cli.spec.args[cli.spec.args.indexOf("--settings") + 1]!)
      )
      yield* Effect.scoped(ClaudeAgent.session({ settings: { a: 1 } }).pipe(Effect.provide(layer)))
      const written = yield* Deferred.await(file)
      expect(fs.existsSync(written)).toBe(false)
    }))
})

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

describe("argv hygiene against the real CLI", () => {
  live("settings from a file apply, and allowedTools moved into it still allow", () =>
    Effect.gen(function*() {
      const { options, cwd } = yield* realCli()
      const allowedTools = [
        ...Array.from({ length: 300 }, (_, i) => `mcp__padding__tool_${i}`),
        "Bash(touch moved.txt:*)"
      ]
      const messages = yield* ClaudeAgent.query(
        `TOOL Bash ${JSON.stringify({ command: "touch moved.txt", description: "x" })}`,
        options({ allowedTools, settings: { env: { FROM_SETTINGS_FILE: "yes" } } })
      ).pipe(Stream.runCollect)
      const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
      expect(result?.permission_denials).toEqual([])
      expect(fs.existsSync(path.join(cwd, "moved.txt"))).toBe(true)
      const echoed = yield* ClaudeAgent.query(
        `TOOL Bash ${JSON.stringify({ command: "echo value=$FROM_SETTINGS_FILE", description: "x" })}`,
        options({ settings: { env: { FROM_SETTINGS_FILE: "yes" } } })
      ).pipe(Stream.runCollect, Effect.provide(Permissions.allowAll))
      const echoedResult = Chunk.toReadonlyArray(echoed).find(Message.isResultMessage)
      expect(echoedResult?.subtype === "success" && echoedResult.result).toBe("tool said: value=yes")
    }))
})
