import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type AgentOptions, NodeClaudeAgent } from "effect-claude-agent"
import * as ScriptedModelServer from "../../src/ScriptedModelServer.js"
import { descendants, OWNER_ENV, ownedProcesses } from "./process.js"

export { NodeClaudeAgent }

/** A temporary directory removed when the scope closes. */
export const tempDir = (prefix = "eca-") =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** A scripted model server plus options that point the real CLI at it, in a fresh working directory. */
export const realCli = (serverOptions?: ScriptedModelServer.Options) =>
  Effect.gen(function*() {
    const server = yield* ScriptedModelServer.make(serverOptions)
    const cwd = yield* tempDir("eca-cwd-")
    const options = (extra: AgentOptions.Options = {}): AgentOptions.Options => ({
      cwd,
      ...extra,
      env: { ...server.env(), [OWNER_ENV]: String(process.pid), ...extra.env }
    })
    return { server, cwd, options }
  })

/** Fails the test if a process this test process started during `effect` is still alive after it. */
export const noClaudeLeft = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const alive = () => [...new Set([...descendants(process.pid), ...ownedProcesses()])]
    const before = new Set(alive())
    const result = yield* effect
    // the scope that owned the CLI has closed: nothing it started may be alive, orphans included
    const left = alive().filter((pid) => !before.has(pid))
    if (left.length > 0) return yield* Effect.die(new Error(`processes left behind: ${left.join(", ")}`))
    return result
  })
