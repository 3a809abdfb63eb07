// ScriptedModelServer from Promise code: start() → close(), and env() on a closed server (Effect and Promise).
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { query, type SDKMessage } from "effect-claude-agent/promise"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { descendants, OWNER_ENV, ownedProcesses } from "./support/process.js"

/** The server's temporary directory (the parent of its shared HOME). */
const rootOf = (env: Record<string, string>) => path.dirname(env["HOME"]!)

describe("ScriptedModelServer.start (Promise code)", () => {
  it("serves until close(): the real CLI answers through it, then the directories are removed", async () => {
    const before = new Set([...descendants(process.pid), ...ownedProcesses()])
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "eca-start-"))
    const server = await ScriptedModelServer.start({ replies: [ScriptedModelServer.reply("hello offline")] })
    const env = server.env()
    expect(fs.existsSync(env["HOME"]!)).toBe(true)
    try {
      const messages: Array<SDKMessage> = []
      for await (
        const m of query({ prompt: "hi", options: { cwd, env: { ...env, [OWNER_ENV]: String(process.pid) } } })
      ) {
        messages.push(m)
      }
      expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "hello offline" })
      const request = await server.waitForRequest((r) => r.isMessages && !r.isProbe, { timeoutMs: 5_000 })
      expect(request.userPrompts.at(-1)).toBe("hi")
      expect((await server.requests()).length).toBeGreaterThan(0)
    } finally {
      await server.close()
      fs.rmSync(cwd, { recursive: true, force: true })
    }
    expect(fs.existsSync(env["HOME"]!)).toBe(false)
    // closing twice is fine
    await server.close()
    expect([...descendants(process.pid), ...ownedProcesses()].filter((pid) => !before.has(pid))).toEqual([])
  }, 120_000)

  it("await using closes it; env() afterwards throws Closed and creates no directory", async () => {
    let kept: ScriptedModelServer.StartedServer | undefined
    let root = ""
    {
      await using server = await ScriptedModelServer.start()
      kept = server
      root = rootOf(server.env())
      expect(fs.existsSync(root)).toBe(true)
      const response = await fetch(`${server.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "SAY up" }] })
      })
      expect(response.status).toBe(200)
    }
    expect(fs.existsSync(root)).toBe(false)
    for (const options of [{}, { freshHome: true }]) {
      expect(() => kept.env(options)).toThrow(
        expect.objectContaining({ _tag: "ScriptedModelServerError", reason: "Closed" })
      )
    }
    expect(fs.existsSync(root)).toBe(false)
    await expect(fetch(`${kept.url}/v1/messages`, { method: "POST", body: "{}" })).rejects.toThrow()
    await expect(kept.waitForRequest(() => false, { timeoutMs: 5_000 })).rejects.toMatchObject({ reason: "Closed" })
  })

  it("Effect: env() of a server whose scope closed throws Closed and creates no directory", async () => {
    const [server, root] = await Effect.runPromise(
      Effect.scoped(Effect.map(ScriptedModelServer.make(), (s) => [s, rootOf(s.env())] as const))
    )
    expect(fs.existsSync(root)).toBe(false)
    expect(() => server.env({ freshHome: true })).toThrow(
      expect.objectContaining({ _tag: "ScriptedModelServerError", reason: "Closed" })
    )
    expect(() => server.env()).toThrow(ScriptedModelServer.ScriptedModelServerError)
    expect(fs.existsSync(root)).toBe(false)
  })
})
