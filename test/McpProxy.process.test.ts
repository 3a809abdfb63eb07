import { expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpProxy } from "effect-claude-agent"

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const startedPid = (dir: string) =>
  Effect.gen(function*() {
    const log = path.join(dir, "starts.log")
    while (!fs.existsSync(log) || fs.readFileSync(log, "utf8").trim() === "") yield* Effect.sleep("20 millis")
    return Number(fs.readFileSync(log, "utf8").trim().split("\n")[0])
  })

it.live("a proxy whose fiber is interrupted still ends its stdio server", () =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-proxy-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const fiber = yield* McpProxy.make({
      name: "loud",
      transport: {
        type: "stdio",
        command: process.execPath,
        args: [path.join(import.meta.dirname, "fixtures", "mcp-proxy-upstream.mjs")],
        env: { MCP_FIXTURE_DIR: dir }
      }
    }).pipe(Effect.zipRight(Effect.never), Effect.scoped, Effect.fork)
    const pid = yield* startedPid(dir).pipe(Effect.timeout("10 seconds"))
    expect(alive(pid)).toBe(true)
    yield* Fiber.interrupt(fiber)
    // the finalizers ended the server; the OS reaps it a moment later
    const gone = yield* Effect.gen(function*() {
      while (alive(pid)) yield* Effect.sleep("20 millis")
    }).pipe(Effect.timeout("3 seconds"), Effect.as(true), Effect.orElseSucceed(() => false))
    expect(gone).toBe(true)
  }).pipe(Effect.scoped), 20_000)
