// A multi-turn Promise query whose prompt generator waits for the user's next input (an `await` that never resolves)
// is closed mid-conversation: close() settles promptly and the real CLI is reaped.
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { query, type SDKUserMessage } from "effect-claude-agent/promise"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { descendants, isAlive, OWNER_ENV, ownedProcesses } from "./support/process.js"

let scope: Scope.CloseableScope
let server: ScriptedModelServer.ScriptedModelServer
let cwd: string
let before: Set<number>

const alive = () => [...new Set([...descendants(process.pid), ...ownedProcesses()])]

beforeEach(async () => {
  before = new Set(alive())
  scope = Effect.runSync(Scope.make())
  server = await Effect.runPromise(ScriptedModelServer.make().pipe(Scope.extend(scope)))
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), "eca-abandon-"))
})

afterEach(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(cwd, { recursive: true, force: true })
  expect(alive().filter((p) => !before.has(p))).toEqual([])
})

const user = (content: string): SDKUserMessage => ({
  type: "user",
  message: { role: "user", content },
  parent_tool_use_id: null,
  session_id: ""
})

/** Generous: the real CLI's exit under a loaded machine; without the fix, close() never settles. */
const CLOSE_BOUND_MS = 10_000

describe("promise API against the real CLI: a suspended prompt generator", () => {
  it("close() mid-conversation settles and reaps the CLI", async () => {
    let answered: () => void = () => {}
    const firstAnswered = new Promise<void>((resolve) => (answered = resolve))
    async function* conversation(): AsyncGenerator<SDKUserMessage> {
      yield user("SAY first")
      await firstAnswered
      yield user("SAY second")
      // the user never types again
      await new Promise<never>(() => {})
    }
    const q = query({
      prompt: conversation(),
      options: { cwd, env: { ...server.env(), [OWNER_ENV]: String(process.pid) } }
    })
    const results: Array<string> = []
    while (results.length < 2) {
      const next = await q.next()
      if (next.done === true) throw new Error("the conversation ended early")
      const m = next.value
      if (m.type === "result") results.push(m.subtype === "success" ? m.result : m.subtype)
      if (results.length === 1) answered()
    }
    expect(results).toEqual(["first", "second"])
    const pid = await q.pid()
    expect(pid).toBeTypeOf("number")

    let timer: ReturnType<typeof setTimeout> | undefined
    const started = performance.now()
    await Promise.race([
      q.close(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`close() pending after ${CLOSE_BOUND_MS} ms`)), CLOSE_BOUND_MS)
      })
    ]).finally(() => clearTimeout(timer))
    expect(performance.now() - started).toBeLessThan(CLOSE_BOUND_MS)
    expect(isAlive(pid!)).toBe(false)
    expect(await q.next()).toEqual({ done: true, value: undefined })
  })
})
