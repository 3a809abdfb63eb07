// `executable: "bun" | "deno"` with `executableArgs`: the JavaScript CLI entry 2.1.100 (`cli.js`) run by the bun and
// deno of the devDependencies (bun 1.4.4, deno 2.9.6, from npm) against the ScriptedModelServer; a runtime that is not
// on PATH is InvalidOptions before anything is spawned; a native binary ignores `executable`.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message } from "effect-claude-agent"
import type { Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { resolveCliWithRuntime } from "../src/internal/transport/cliPath.js"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"

const ROOT = path.join(import.meta.dirname, "..")
const CLI_2_1_100 = path.join(ROOT, "node_modules", "claude-code-2.1.100", "cli.js")
const BIN = path.join(ROOT, "node_modules", ".bin")
const PATH_WITH_RUNTIMES = [BIN, process.env["PATH"] ?? ""].join(path.delimiter)

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 120_000)

const model = () => realCli({ handler: () => ScriptedModelServer.reply(ScriptedModelServer.text("ran")) })

describe("executable: \"bun\" | \"deno\" (real CLI 2.1.100, a JavaScript entry)", () => {
  const runtimes = [
    { runtime: "bun", executableArgs: [] },
    // deno asks for permissions it cannot prompt for without a terminal: the caller grants them
    { runtime: "deno", executableArgs: ["run", "--allow-all"] }
  ] as const
  for (const { executableArgs, runtime } of runtimes) {
    live(`${runtime} runs cli.js after executableArgs; a turn completes`, () =>
      Effect.gen(function*() {
        const { options } = yield* model()
        const session = yield* ClaudeAgent.session(options({
          pathToClaudeCodeExecutable: CLI_2_1_100,
          executable: runtime,
          executableArgs,
          env: { PATH: PATH_WITH_RUNTIMES }
        }))
        const pid = Option.getOrThrow(session.pid)
        // the process is the runtime's binary itself (npm's bin entry resolves to it), running cli.js
        expect(path.basename(fs.realpathSync(`/proc/${pid}/exe`))).toMatch(new RegExp(`^${runtime}(\\.exe)?$`))
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
        // cli.js sets `process.title = "claude"`, which overwrites the argument area: a start fast enough does it
        // before this read, and then the turn completing under the runtime (deno refuses without its flags) is the proof
        if (cmdline[0] !== "claude") {
          expect(cmdline.slice(1, 2 + executableArgs.length)).toEqual([...executableArgs, CLI_2_1_100])
        }
        const result = Chunk.toReadonlyArray(yield* Stream.runCollect(session.turn("hi"))).find(
          Message.isResultMessage
        )
        expect(result?.subtype === "success" && result.result).toBe("ran")
      }))
  }

  live("a runtime not on PATH: InvalidOptions naming executable, nothing spawned", () =>
    Effect.gen(function*() {
      const { options } = yield* model()
      const empty = yield* tempDir("eca-empty-path-")
      const error = yield* Effect.flip(ClaudeAgent.session(options({
        pathToClaudeCodeExecutable: CLI_2_1_100,
        executable: "bun",
        env: { PATH: empty }
      })))
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "executable" })
      expect(error.message).toContain(`no bun executable is on PATH (searched: ${path.join(empty, "bun")})`)
    }))

  live("the bundled native CLI runs by itself: executable is not looked up", () =>
    Effect.gen(function*() {
      const { options } = yield* model()
      const empty = yield* tempDir("eca-empty-path-")
      const session = yield* ClaudeAgent.session(options({ executable: "deno", env: { PATH: empty } }))
      const cmdline = fs.readFileSync(`/proc/${Option.getOrThrow(session.pid)}/cmdline`, "utf8")
      expect(cmdline).not.toContain("deno")
      const result = Chunk.toReadonlyArray(yield* Stream.runCollect(session.turn("hi"))).find(Message.isResultMessage)
      expect(result?.subtype === "success" && result.result).toBe("ran")
    }))
})

describe("executable: the argv contract, with a fake runtime", () => {
  it.effect("the runtime on PATH runs the script after executableArgs; \"node\" is this Node", () =>
    Effect.gen(function*() {
      const host = {
        platform: "linux" as const,
        arch: "x64",
        homedir: "/home/u",
        execPath: "/opt/node/bin/node",
        isExecutableFile: (file: string) => file === "/opt/bun/bin/bun",
        isReadableFile: (file: string) => file === "/app/cli.mjs",
        fileSize: () => 10,
        fileKind: () => "file" as const
      }
      const lookup = { explicit: "/app/cli.mjs", bundled: [], commonDirs: [], host, executableArgs: ["--smol"] }
      const env = { PATH: "/usr/bin:/opt/bun/bin" }
      expect(yield* resolveCliWithRuntime({ ...lookup, env, runtime: "bun" })).toEqual({
        command: "/opt/bun/bin/bun",
        prefixArgs: ["--smol", "/app/cli.mjs"],
        path: "/app/cli.mjs"
      })
      expect((yield* resolveCliWithRuntime({ ...lookup, env, runtime: "node" })).command).toBe("/opt/node/bin/node")
      const missing = yield* Effect.flip(resolveCliWithRuntime({ ...lookup, env, runtime: "deno" }))
      expect(missing).toMatchObject({ _tag: "InvalidOptions", option: "executable" })
      expect(missing.message).toContain("searched: /usr/bin/deno, /opt/bun/bin/deno")
    }))
})
