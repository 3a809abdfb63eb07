import { expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { CliResolver } from "effect-claude-agent"
import { resolveCli } from "../src/internal/transport/cliPath.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-clipath-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const executable = (file: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, "#!/bin/sh\n")
  fs.chmodSync(file, 0o755)
  return file
}

it.scoped("G11 lookup order: bundled › PATH › common dirs, and CliNotFound lists every place, in order", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const bundled = [{ file: path.join(dir, "bundled", "claude") }]
    const empty = path.join(dir, "empty")
    const onPath = path.join(dir, "onpath")
    fs.mkdirSync(empty)
    fs.mkdirSync(onPath)
    const common = [path.join(dir, "common", "claude")]
    const env = { PATH: [empty, onPath].join(path.delimiter) }

    const missing = yield* Effect.flip(resolveCli({ env, bundled, commonDirs: common }))
    expect(missing.searched).toEqual([
      `bundled: ${bundled[0]!.file}`,
      `PATH: ${path.join(empty, "claude")}`,
      `PATH: ${path.join(onPath, "claude")}`,
      common[0]
    ])
    expect(missing.message).toContain("pathToClaudeCodeExecutable")

    // a common install dir is found when nothing else is there
    executable(common[0]!)
    expect((yield* resolveCli({ env, bundled, commonDirs: common })).path).toBe(common[0])
    // PATH wins over the common dirs
    const fromPath = executable(path.join(onPath, "claude"))
    expect((yield* resolveCli({ env, bundled, commonDirs: common })).path).toBe(fromPath)
    // the bundled binary wins over PATH
    executable(bundled[0]!.file)
    expect((yield* resolveCli({ env, bundled, commonDirs: common })).path).toBe(bundled[0]!.file)
    // CLAUDE_CLI_PATH wins over the bundled binary, an explicit path over everything
    const fromEnv = executable(path.join(dir, "env", "claude"))
    expect((yield* resolveCli({ env: { ...env, CLAUDE_CLI_PATH: fromEnv }, bundled, commonDirs: common })).path).toBe(
      fromEnv
    )
    const explicit = executable(path.join(dir, "explicit", "claude"))
    expect(
      (yield* resolveCli({ explicit, env: { ...env, CLAUDE_CLI_PATH: fromEnv }, bundled, commonDirs: common })).path
    ).toBe(explicit)
    // a non-executable file on PATH is skipped
    fs.rmSync(bundled[0]!.file)
    fs.chmodSync(fromPath, 0o644)
    expect((yield* resolveCli({ env, bundled, commonDirs: common })).path).toBe(common[0])
    // a .js CLI runs with this Node
    const script = path.join(dir, "cli.js")
    fs.writeFileSync(script, "")
    expect(yield* resolveCli({ explicit: script, env, executableArgs: ["--no-warnings"], bundled, commonDirs: common }))
      .toEqual({
        command: process.execPath,
        prefixArgs: ["--no-warnings", script],
        path: script
      })
  }))

it.scoped("a resolver builds the process report (libc) and looks up the bundled packages once, for its lifetime", () =>
  Effect.gen(function*() {
    const getReport = vi.spyOn(process.report, "getReport")
    try {
      const resolver = yield* CliResolver.make()
      const first = yield* resolver.resolve({ env: {} })
      const again = yield* resolver.resolve({ env: {} })
      expect(again).toEqual(first)
      // on Linux the report is built once per resolver (not per lookup)
      expect(getReport.mock.calls.length).toBe(process.platform === "linux" ? 1 : 0)
      // the pinned CLI package is installed here: the default lookup finds its binary and its package.json
      expect(fs.statSync(first.path).isFile()).toBe(true)
      expect(first.packageJson).toBeDefined()
      // another resolver knows nothing of the first (no state outside the layer)
      yield* Effect.scoped(Effect.flatMap(CliResolver.make(), (other) => other.resolve({ env: {} })))
      expect(getReport.mock.calls.length).toBe(process.platform === "linux" ? 2 : 0)
    } finally {
      getReport.mockRestore()
    }
  }))

it.scoped("a named path that cannot be run: CliNotFound says which path and why, not where to install the CLI", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const plain = path.join(dir, "claude-plain")
    fs.writeFileSync(plain, "#!/bin/sh\n")
    fs.chmodSync(plain, 0o644)
    const named = (explicit: string | undefined, env: Record<string, string> = {}) =>
      Effect.flip(resolveCli({ explicit, env, bundled: [], commonDirs: [] }))
    const cases = [
      [path.join(dir, "nope"), "Missing", "does not exist"],
      [dir, "Directory", "is a directory (name the executable in it)"],
      [plain, "NotExecutable", "is not executable by this process"],
      ["/dev/null", "NotAFile", "is not a regular file"]
    ] as const
    for (const [file, reason, why] of cases) {
      const error = yield* named(file)
      expect(error).toMatchObject({ reason, named: { source: "pathToClaudeCodeExecutable", path: file } })
      expect(error.message).toContain(`pathToClaudeCodeExecutable is ${file}, which ${why}`)
      expect(error.message).toContain("or leave pathToClaudeCodeExecutable unset to use the CLI installed with the SDK")
      expect(error.message).not.toContain("Install @anthropic-ai/claude-code, put `claude` on PATH")
    }
    const fromEnv = yield* named(undefined, { CLAUDE_CLI_PATH: dir })
    expect(fromEnv).toMatchObject({ reason: "Directory", named: { source: "CLAUDE_CLI_PATH", path: dir } })
    expect(fromEnv.message).toContain("or unset CLAUDE_CLI_PATH")
  }))
