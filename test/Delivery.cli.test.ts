// mcpServersDelivery / pluginDelivery "initialize" against the real CLI (2.1.332, offline, ScriptedModelServer): the
// MCP servers and plugins travel in the initialize request of a CLI started with --await-initialize, so neither the
// command line nor a file holds them; the CLI 2.1.100 (before --await-initialize) gets a typed error before spawning.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClaudeAgent, Message } from "effect-claude-agent"
import type { AgentOptions, Transport } from "effect-claude-agent"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { descendants } from "./support/process.js"

const SECRET = "sk-delivery-secret-5c1e"
const STDIO_SERVER = path.join(import.meta.dirname, "fixtures", "mcp-stdio-server.mjs")
const CLI_2_1_100 = path.join(import.meta.dirname, "..", "node_modules", "claude-code-2.1.100", "cli.js")

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 120_000)

/** A local plugin with one command, `/<name>:hi`. */
const plugin = (name: string) =>
  Effect.map(tempDir("eca-plugin-"), (dir) => {
    fs.mkdirSync(path.join(dir, ".claude-plugin"))
    fs.mkdirSync(path.join(dir, "commands"))
    fs.writeFileSync(path.join(dir, ".claude-plugin", "plugin.json"), JSON.stringify({ name, version: "1.0.0" }))
    fs.writeFileSync(path.join(dir, "commands", "hi.md"), "---\ndescription: says hi\n---\nSay hi\n")
    return dir
  })

/** The SDK's private argument directories of this host (`eca-args-<pid>-…`). */
const argDirs = () => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith(`eca-args-${process.pid}-`))

/** The model: the scripted server's rule-based handler (`TOOL <name> <input>`; a tool result: `tool said: …`). */
const model = () => realCli()

/** The prompt that has the model call the MCP server's tool. */
const CALL_SHOUT = `TOOL mcp__shouter__shout {"text":"hi"}`

const delivered = (pluginDir: string, delivery: "argv" | "initialize"): AgentOptions.Options => ({
  mcpServers: { shouter: { command: process.execPath, args: [STDIO_SERVER], env: { SHOUT_TOKEN: SECRET } } },
  mcpServersDelivery: delivery,
  plugins: [{ type: "local", path: pluginDir }],
  pluginDelivery: delivery,
  allowedTools: ["mcp__shouter__shout"]
})

describe("mcpServersDelivery / pluginDelivery: \"initialize\" (real CLI 2.1.332)", () => {
  live(
    "the servers and plugins load from initialize: nothing on the command line, no file written, the tool answers",
    () =>
      Effect.gen(function*() {
        const { options } = yield* model()
        const dir = yield* plugin("delivery-fixture")
        const before = argDirs()
        const session = yield* ClaudeAgent.session(options(delivered(dir, "initialize")))
        const pid = Option.getOrThrow(session.pid)
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
        expect(cmdline).toContain("--await-initialize")
        expect(cmdline.some((a) => a.startsWith("--mcp-config") || a.startsWith("--plugin-dir"))).toBe(false)
        expect(cmdline.join(" ")).not.toContain(SECRET)
        // no private file holds the servers' secrets
        expect(argDirs()).toEqual(before)

        const init = yield* session.initializationResult
        expect(init.mcp_servers_applied).toBe(true)
        expect(init.plugins_applied).toBe(true)
        expect(init.commands.map((c) => c.name)).toContain("delivery-fixture:hi")

        const messages = Chunk.toReadonlyArray(yield* Stream.runCollect(session.turn(CALL_SHOUT)))
        const system = messages.find(Message.isSystemInit)
        expect(system?.mcp_servers).toContainEqual(expect.objectContaining({ name: "shouter", status: "connected" }))
        expect(JSON.stringify(system?.plugins)).toContain("\"delivery-fixture\"")
        const result = messages.find(Message.isResultMessage)
        expect(result?.subtype === "success" && result.result).toBe("tool said: HI!")
        // the MCP server the CLI started got its environment from initialize
        expect(descendants(pid).length).toBeGreaterThan(0)
      })
  )

  live(
    "\"argv\" (the default) puts the same servers in a private file named by --mcp-config",
    () =>
      Effect.gen(function*() {
        const { options } = yield* model()
        const dir = yield* plugin("delivery-fixture")
        const session = yield* ClaudeAgent.session(options(delivered(dir, "argv")))
        const cmdline = fs.readFileSync(`/proc/${Option.getOrThrow(session.pid)}/cmdline`, "utf8").split("\0")
        expect(cmdline).toContain("--mcp-config")
        expect(cmdline).toContain(`--plugin-dir=${dir}`)
        expect(cmdline).not.toContain("--await-initialize")
        expect(argDirs().length).toBeGreaterThan(0)
        const init = yield* session.initializationResult
        expect(init.mcp_servers_applied).toBeUndefined()
        const result = Chunk.toReadonlyArray(yield* Stream.runCollect(session.turn(CALL_SHOUT)))
          .find(Message.isResultMessage)
        expect(result?.subtype === "success" && result.result).toBe("tool said: HI!")
      })
  )

  for (const option of ["mcpServersDelivery", "pluginDelivery"] as const) {
    live(
      `${option}: "initialize" with the CLI 2.1.100: VersionIncompatible naming it, nothing spawned`,
      () =>
        Effect.gen(function*() {
          const { options } = yield* model()
          const dir = yield* plugin("delivery-fixture")
          const all = delivered(dir, "argv")
          const error = yield* Effect.flip(ClaudeAgent.session(options({
            ...(option === "mcpServersDelivery"
              ? { mcpServers: all.mcpServers, mcpServersDelivery: "initialize" }
              : { plugins: all.plugins, pluginDelivery: "initialize" }),
            pathToClaudeCodeExecutable: CLI_2_1_100,
            // the SDK's own range accepts 2.1.100; the option's requirement does not
            cliVersions: "*"
          })))
          expect(error).toMatchObject({ _tag: "VersionIncompatible", found: "2.1.100", supported: ">=2.1.261" })
          expect(error.message).toContain(`${option}: "initialize" needs it`)
          expect(error.message).toContain(`${option}: "argv"`)
        })
    )
  }
})
