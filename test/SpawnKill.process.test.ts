// A spawned CLI that ignores SIGTERM and stalls mid-turn: closing the query SIGKILLs what the spawn function returned
// once the kill grace has passed (the close is bounded; nothing is left running).
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { query } from "effect-claude-agent/promise"
import { FakeCli } from "effect-claude-agent/testing"
import { noClaudeLeft } from "./support/cli.js"
import { localSpawn } from "./support/spawn.js"

describe("spawnClaudeCodeProcess: a CLI that ignores SIGTERM", () => {
  it.live("closing mid-turn SIGKILLs it after the kill grace", () =>
    noClaudeLeft(Effect.promise(async () => {
      const local = localSpawn()
      const { executable, executableArgs } = FakeCli.executable()
      const scenario = FakeCli.scenario([
        FakeCli.ignoreSigterm,
        FakeCli.expectUser(),
        FakeCli.init(),
        FakeCli.assistant("up"),
        FakeCli.stall
      ])
      const q = query({
        prompt: "hello",
        options: {
          pathToClaudeCodeExecutable: executable,
          executableArgs,
          env: FakeCli.env(scenario),
          closeGraceMillis: 100,
          killGraceMillis: 200,
          interruptTimeout: 200,
          spawnClaudeCodeProcess: local.fn
        }
      })
      const iterator = q[Symbol.asyncIterator]()
      let first = await iterator.next()
      while (!first.done && (first.value as { type: string }).type !== "assistant") first = await iterator.next()
      expect(first.done).toBe(false)
      const child = local.started[0]!
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve()
        else child.once("exit", () => resolve())
      })
      const started = Date.now()
      await q.close()
      // a close that leaves it running fails here, not at the test's timeout
      const stillRunning = new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 15_000).unref())
      expect(await Promise.race([exited.then(() => "exited" as const), stillRunning])).toBe("exited")
      // bounded: the settle before close (interrupt, idle) and both graces, with room for a loaded machine
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(child.signalCode).toBe("SIGKILL")
    })), 60_000)
})
