// The official `sessionStore` options through the Promise API, against the real CLI (offline).
import { describe, expect, it } from "vitest"
import {
  importSessionToStore,
  query,
  type SDKMessage,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry
} from "effect-claude-agent/promise"
import { OWNER_ENV } from "./support/process.js"
import { cwd, server, usePromiseCli } from "./support/promiseCli.js"

usePromiseCli("eca-store-")

/** A fresh config dir: another machine. */
const machine = () => {
  const env: Record<string, string> = { ...server.env({ freshHome: true }), [OWNER_ENV]: String(process.pid) }
  return { cwd, env }
}

/** A store in a Map, as a user would write one against the official interface. */
const mapStore = () => {
  const data = new Map<string, { entries: Array<SessionStoreEntry>; mtime: number }>()
  const appends: Array<{ key: SessionKey; count: number }> = []
  const id = (k: SessionKey) => JSON.stringify([k.projectKey, k.sessionId, k.subpath ?? ""])
  const store: SessionStore = {
    append: async (key, entries) => {
      appends.push({ key, count: entries.length })
      const t = data.get(id(key)) ?? { entries: [], mtime: 0 }
      const seen = new Set(t.entries.map((e) => e.uuid).filter((u) => u !== undefined))
      for (const e of entries) if (e.uuid === undefined || !seen.has(e.uuid)) t.entries.push(structuredClone(e))
      t.mtime = Date.now()
      data.set(id(key), t)
    },
    load: async (key) => data.get(id(key))?.entries.map((e) => structuredClone(e)) ?? null,
    listSessions: async (projectKey) =>
      [...data.entries()].map(([k, t]) => [JSON.parse(k) as [string, string, string], t] as const)
        .filter(([[p, , sub]]) => p === projectKey && sub === "")
        .map(([[, sessionId], t]) => ({ sessionId, mtime: t.mtime }))
  }
  return { store, data, appends }
}

const run = async (prompt: string, options: Parameters<typeof query>[0]["options"]) => {
  const messages: Array<SDKMessage> = []
  for await (const m of query({ prompt, options: options ?? {} })) messages.push(m)
  const result = messages.find((m) => m.type === "result")
  return {
    messages,
    sessionId: result?.session_id ?? "",
    result: result?.type === "result" && result.subtype === "success" ? result.result : undefined
  }
}

describe("promise API: sessionStore against the real CLI", () => {
  it("mirrors a session, then resumes and continues it on other config dirs from the store alone", async () => {
    const { appends, data, store } = mapStore()
    const first = await run("SAY remember-7", { ...machine(), sessionStore: store })
    expect(first.result).toBe("remember-7")
    expect(first.messages.some((m) => (m as { type: string }).type === "transcript_mirror")).toBe(false)
    expect(appends.length).toBeGreaterThan(0)
    expect(appends.every((a) => a.key.sessionId === first.sessionId && a.key.subpath === undefined)).toBe(true)
    const stored = [...data.values()][0]!.entries
    expect(stored.some((e) => e.type === "user")).toBe(true)
    expect(stored.some((e) => e.type === "assistant")).toBe(true)

    const resumed = await run("HISTORY", { ...machine(), sessionStore: store, resume: first.sessionId })
    expect(resumed.sessionId).toBe(first.sessionId)
    expect(resumed.result).toContain("user prompts: SAY remember-7 | HISTORY")

    const continued = await run("HISTORY", {
      ...machine(),
      sessionStore: store,
      sessionStoreFlush: "eager",
      continue: true
    })
    expect(continued.sessionId).toBe(first.sessionId)
    expect(continued.result).toContain("user prompts: SAY remember-7 | HISTORY | HISTORY")
  })

  it("importSessionToStore copies a local session into a store, which another config dir resumes from", async () => {
    const local = machine()
    const first = await run("SAY imported", local)
    const { data, store } = mapStore()
    const previous = process.env["CLAUDE_CONFIG_DIR"]
    process.env["CLAUDE_CONFIG_DIR"] = local.env["CLAUDE_CONFIG_DIR"]
    try {
      await importSessionToStore(first.sessionId, store, { dir: cwd, batchSize: 3 })
    } finally {
      if (previous === undefined) delete process.env["CLAUDE_CONFIG_DIR"]
      else process.env["CLAUDE_CONFIG_DIR"] = previous
    }
    expect([...data.values()][0]!.entries.length).toBeGreaterThan(3)
    const resumed = await run("HISTORY", { ...machine(), sessionStore: store, resume: first.sessionId })
    expect(resumed.result).toContain("user prompts: SAY imported | HISTORY")
  })
})
