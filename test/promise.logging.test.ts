// The Promise API never writes to stdout: its log lines go to stderr by default, or to `options.logger`, from
// `options.logLevel` on. Runs in the "unit" and the "bundle" project (vitest.config.ts).
import { afterEach, describe, expect, it, vi } from "vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { InvalidOptions, type LogLevel, type Options, query, type SDKMessage } from "effect-claude-agent/promise"
import { FakeCli, ScriptedCli } from "effect-claude-agent/testing"
import { bundleFile } from "../vitest.config.js"
import { descendants, OWNER_ENV, ownedProcesses } from "./support/process.js"

const root = path.join(import.meta.dirname, "..")

/** A scripted CLI that asks for Bash once and ends the turn with the answer. */
const asksForBash = () =>
  ScriptedCli.layer((cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.turn(JSON.stringify(yield* cli.canUseTool("Bash", { command: "x" })))
    })
  )

const throwing: Options["canUseTool"] = async () => {
  throw new Error("policy store unreachable")
}

const run = async (options: Options) => {
  const out: Array<SDKMessage> = []
  for await (
    const m of query({ prompt: "go", options: { transport: asksForBash(), canUseTool: throwing, ...options } })
  ) {
    out.push(m)
  }
  return out
}

interface Line {
  readonly level: LogLevel
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
}

const capture = () => {
  const lines: Array<Line> = []
  const logger = (level: LogLevel, message: string, annotations: Readonly<Record<string, unknown>>) => {
    lines.push({ level, message, annotations })
  }
  return { lines, logger }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe("promise API: logging", () => {
  it("routes the SDK's log lines to options.logger, and writes nothing to stdout or stderr itself", async () => {
    const stdout = vi.spyOn(process.stdout, "write")
    const stderr = vi.spyOn(process.stderr, "write")
    const { lines, logger } = capture()
    const messages = await run({ logger })
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success" })
    expect(lines).toContainEqual({
      level: "warning",
      message: "Permission for Bash denied: the permission handler failed: policy store unreachable",
      annotations: expect.any(Object)
    })
    const written = [...stdout.mock.calls, ...stderr.mock.calls].map(([chunk]) => String(chunk))
    expect(written.filter((chunk) => chunk.includes("Permission for Bash"))).toEqual([])
  })

  it("writes one line per entry to stderr by default, none to stdout", async () => {
    const stdout = vi.spyOn(process.stdout, "write")
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
    await run({})
    const toStderr = stderr.mock.calls.map(([chunk]) => String(chunk)).filter((c) => c.includes("Permission for Bash"))
    expect(toStderr).toEqual([
      "effect-claude-agent WARNING Permission for Bash denied: the permission handler failed: policy store unreachable\n"
    ])
    expect(stdout.mock.calls.map(([chunk]) => String(chunk)).filter((c) => c.includes("Permission"))).toEqual([])
  })

  it("logLevel filters: \"none\" silences, \"error\" drops warnings, \"warning\" keeps them", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
    for (const [logLevel, expected] of [["none", 0], ["error", 0], ["warning", 1]] as const) {
      const { lines, logger } = capture()
      await run({ logger, logLevel })
      expect(lines.filter((l) => l.message.startsWith("Permission for Bash")), logLevel).toHaveLength(expected)
    }
    await run({ logLevel: "none" })
    expect(stderr.mock.calls.filter(([chunk]) => String(chunk).includes("Permission"))).toEqual([])
  })

  it("close() logs through options.logger too (a CLI that ignores SIGTERM, killed by the scope's finalizer)", async () => {
    const stdout = vi.spyOn(process.stdout, "write")
    const { lines, logger } = capture()
    const program = FakeCli.executable()
    const q = query({
      prompt: "hi",
      options: {
        pathToClaudeCodeExecutable: program.executable,
        executableArgs: [...program.executableArgs],
        env: FakeCli.env(FakeCli.scenario([FakeCli.assistant("up"), FakeCli.ignoreSigterm, FakeCli.stall])),
        closeGraceMillis: 50,
        killGraceMillis: 200,
        logger
      }
    })
    expect((await q.next()).value).toMatchObject({ type: "assistant" })
    const pid = await q.pid()
    await q.close()
    expect(lines).toContainEqual({ level: "warning", message: "CLI ignored SIGTERM: SIGKILL", annotations: { pid } })
    expect(stdout.mock.calls.filter(([chunk]) => String(chunk).includes("SIGTERM"))).toEqual([])
  })

  it("a logger that throws loses its line, not the query", async () => {
    const messages = await run({
      logger: () => {
        throw new Error("logger broken")
      }
    })
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success" })
  })

  it("an invalid logger or logLevel is InvalidOptions, before anything runs", async () => {
    for (const [option, value] of [["logger", "stderr"], ["logLevel", "verbose"], ["logLevel", 3]] as const) {
      const options: Options = Object.assign({ transport: ScriptedCli.echo }, { [option as string]: value })
      const error = await query({ prompt: "hi", options }).next().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(InvalidOptions)
      expect(error).toMatchObject({ option })
    }
  })
})

describe("promise API: stdout of a program (real CLI, child process)", () => {
  it("carries only what the program printed while the SDK denies a tool and logs it", async ({ task }) => {
    // the entry under test: the bundle in the "bundle" project, the sources in "unit" (both run through tsx)
    expect(["unit", "bundle"]).toContain(task.file.projectName)
    const entry = task.file.projectName === "bundle" ? bundleFile : path.join(root, "src", "promise.ts")
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "eca-stdout-"))
    const before = new Set([...descendants(process.pid), ...ownedProcesses()])
    try {
      const child = spawn(process.execPath, [
        "--import",
        "tsx",
        path.join(root, "test", "fixtures", "promise-stdout.mjs")
      ], {
        cwd: root,
        env: {
          ...process.env,
          ECA_PROMISE_ENTRY: entry,
          ECA_TESTING_ENTRY: path.join(root, "src", "testing.ts"),
          ECA_CWD: cwd,
          [OWNER_ENV]: String(process.pid)
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
      expect({ code, stdout }, stderr).toEqual({ code: 0, stdout: "result: success\n" })
      expect(stderr).toContain("effect-claude-agent WARNING Permission for Bash denied: the permission handler failed")
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true })
    }
    const left = [...descendants(process.pid), ...ownedProcesses()].filter((pid) => !before.has(pid))
    expect(left).toEqual([])
  }, 120_000)
})
