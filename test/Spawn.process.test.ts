// spawnClaudeCodeProcess / Transport.layerSpawn: the caller's spawn function starts the CLI (here the fake CLI through
// node:child_process); the SDK frames its output, closes and kills it, and turns a failed spawn into a typed error.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AgentError, Transport } from "effect-claude-agent"
import { query, type SpawnedProcess, type SpawnOptions } from "effect-claude-agent/promise"
import { FakeCli } from "effect-claude-agent/testing"
import { noClaudeLeft } from "./support/cli.js"
import { localSpawn } from "./support/spawn.js"

/** Promise options that run the fake CLI with `scenario`. */
const fake = (scenario: FakeCli.Scenario) => {
  const { executable, executableArgs } = FakeCli.executable()
  return { pathToClaudeCodeExecutable: executable, executableArgs, env: FakeCli.env(scenario) }
}

const drain = async (q: AsyncIterable<unknown>) => {
  const out: Array<unknown> = []
  for await (const m of q) out.push(m)
  return out
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

const live = (name: string, body: () => Promise<void>) =>
  it.live(name, () => noClaudeLeft(Effect.promise(body)), 60_000)

describe("spawnClaudeCodeProcess (fake CLI)", () => {
  live("the spawn function runs the CLI: the query answers, the command line and env are the SDK's", async () => {
    const local = localSpawn()
    const messages = await drain(query({
      prompt: "hello",
      options: {
        ...fake(FakeCli.echoScenario),
        env: { ...FakeCli.env(FakeCli.echoScenario), SPAWN_MARK: "yes" },
        spawnClaudeCodeProcess: local.fn
      }
    }))
    expect(messages.some((m) => typeof m === "object" && m !== null && "type" in m && m.type === "result")).toBe(true)
    expect(local.calls).toHaveLength(1)
    const call = local.calls[0]!
    expect(call.command).toBe(process.execPath)
    expect(call.args).toContain("--input-format")
    expect(call.env["SPAWN_MARK"]).toBe("yes")
    expect(call.env["PATH"]).toBe(process.env["PATH"])
    expect(call.signal.aborted).toBe(true)
  })

  live("closing the query ends what the spawn function returned (stdin EOF)", async () => {
    const local = localSpawn()
    const stall = FakeCli.scenario([FakeCli.ignoreSigterm, FakeCli.echo])
    const q = query({
      prompt: "hello",
      options: { ...fake(stall), killGraceMillis: 100, spawnClaudeCodeProcess: local.fn }
    })
    const iterator = q[Symbol.asyncIterator]()
    await iterator.next()
    await q.close()
    const child = local.started[0]!
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve()
      else child.once("exit", () => resolve())
    })
    expect(child.exitCode !== null || child.signalCode !== null).toBe(true)
  })

  live("a spawn function that throws fails the query with SpawnFailed", async () => {
    const error = await failure(drain(query({
      prompt: "hello",
      options: {
        ...fake(FakeCli.echoScenario),
        spawnClaudeCodeProcess: () => {
          throw new Error("no VM today")
        }
      }
    })))
    expect(error).toBeInstanceOf(AgentError.SpawnFailed)
    expect(String(error)).toContain("no VM today")
  })

  live(
    "a process that dies at once fails the query with StartupFailed (its exit code and stderr in the error)",
    async () => {
      const error = await failure(drain(query({
        prompt: "hello",
        options: {
          ...fake(FakeCli.scenario([FakeCli.exit(3, "cannot start here\n")])),
          spawnClaudeCodeProcess: localSpawn().fn
        }
      })))
      expect(error).toBeInstanceOf(AgentError.StartupFailed)
      expect(error).toMatchObject({ exitCode: 3 })
      expect((error as AgentError.StartupFailed).stderrTail).toContain("cannot start here")
    }
  )

  live("a command that does not exist fails the query with StartupFailed naming why", async () => {
    const local = localSpawn()
    const error = await failure(drain(query({
      prompt: "hello",
      options: {
        spawnClaudeCodeProcess: (options) => local.fn({ ...options, command: "/nonexistent/claude-in-a-vm" })
      }
    })))
    expect(error).toBeInstanceOf(AgentError.StartupFailed)
    expect((error as AgentError.StartupFailed).stderrTail).toContain("ENOENT")
  })

  live("with transport too, the query fails with InvalidOptions before anything spawns", async () => {
    const local = localSpawn()
    const error = await failure(drain(query({
      prompt: "hello",
      options: { transport: Transport.layerMemory(() => Effect.void), spawnClaudeCodeProcess: local.fn }
    })))
    expect(error).toMatchObject({ _tag: "InvalidOptions", option: "spawnClaudeCodeProcess" })
    expect(local.calls).toHaveLength(0)
  })

  live(
    "an async spawn function is refused with SpawnFailed: its rejection is handled, a late process killed",
    async () => {
      const unhandled: Array<unknown> = []
      const onUnhandled = (reason: unknown) => unhandled.push(reason)
      process.on("unhandledRejection", onUnhandled)
      try {
        const rejects = (async () => {
          throw new Error("container API down")
        }) as unknown as (options: SpawnOptions) => SpawnedProcess
        const rejected = await failure(drain(query({
          prompt: "hello",
          options: { ...fake(FakeCli.echoScenario), spawnClaudeCodeProcess: rejects }
        })))
        expect(rejected).toBeInstanceOf(AgentError.SpawnFailed)
        expect(String(rejected)).toContain("Promise")

        const local = localSpawn()
        const resolves = (async (options: SpawnOptions) => local.fn(options)) as unknown as (
          options: SpawnOptions
        ) => SpawnedProcess
        const late = await failure(drain(query({
          prompt: "hello",
          options: {
            ...fake(FakeCli.scenario([FakeCli.ignoreSigterm, FakeCli.echo])),
            spawnClaudeCodeProcess: resolves
          }
        })))
        expect(late).toBeInstanceOf(AgentError.SpawnFailed)
        const child = local.started[0]!
        await new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) resolve()
          else child.once("exit", () => resolve())
        })
        expect(child.signalCode).toBe("SIGKILL")
        await new Promise((resolve) => setImmediate(resolve))
        expect(unhandled).toEqual([])
      } finally {
        process.off("unhandledRejection", onUnhandled)
      }
    }
  )

  live(
    "a process whose stdout was given a text encoding (a tee to a log) is read as the bytes it decodes",
    async () => {
      const local = localSpawn()
      const messages = await drain(query({
        prompt: "héllo ✓",
        options: {
          ...fake(FakeCli.echoScenario),
          spawnClaudeCodeProcess: (options) => {
            const child = local.fn(options)
            child.stdout.setEncoding("hex")
            return child
          }
        }
      }))
      const result = messages.find((m) => typeof m === "object" && m !== null && "type" in m && m.type === "result")
      expect(result).toMatchObject({ result: expect.stringContaining("héllo ✓") })
    }
  )
})
