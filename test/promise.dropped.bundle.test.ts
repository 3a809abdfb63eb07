// A dropped query never keeps its host alive (issue 33): `query({ prompt })` never iterated, never closed. The query
// runs its turn to the end as the official SDK's does (its CLI exits once the last result is in and stdin is closed),
// and once the CLI is gone nothing of the session keeps the host process alive: the host exits on its own, with no
// CLI left behind. Runs in the "bundle" project: the host imports the bundled entry, as an app does.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { bundleFile } from "../vitest.config.js"
import { descendants, OWNER_ENV, ownedProcesses } from "./support/process.js"

const root = path.join(import.meta.dirname, "..")

/** Generous: the host is expected to exit within a few seconds; past this it is killed and the test fails. */
const HOST_BOUND_MILLIS = 90_000

describe("promise API: a dropped query", () => {
  it.each([
    ["", {}],
    [" (with a permission callback and a hook)", { ECA_WITH_CALLBACKS: "1" }]
  ])("its host exits on its own once the turn is done, and no CLI is left%s", async (_, extraEnv) => {
    const server = await ScriptedModelServer.start()
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "eca-dropped-"))
    const before = new Set([...descendants(process.pid), ...ownedProcesses()])
    try {
      const child = spawn(process.execPath, [path.join(root, "test", "fixtures", "promise-dropped.mjs")], {
        cwd: root,
        env: {
          ...process.env,
          ECA_PROMISE_ENTRY: bundleFile,
          ECA_CWD: cwd,
          ECA_CLI_ENV: JSON.stringify({ ...server.env(), [OWNER_ENV]: String(process.pid) }),
          ...extraEnv
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      const killer = setTimeout(() => child.kill("SIGKILL"), HOST_BOUND_MILLIS)
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.on("close", (c, s) => resolve([c, s]))
      )
      clearTimeout(killer)
      // exited by itself (not killed at the bound), after the CLI ran the turn
      expect({ code, signal }, stderr).toEqual({ code: 0, signal: null })
      expect((await server.requests()).filter((r) => r.isMessages)).toHaveLength(1)
    } finally {
      await server.close()
      fs.rmSync(cwd, { recursive: true, force: true })
    }
    const left = [...descendants(process.pid), ...ownedProcesses()].filter((pid) => !before.has(pid))
    expect(left).toEqual([])
  }, 120_000)
})
