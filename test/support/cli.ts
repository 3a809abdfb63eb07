import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AgentOptions, NodeClaudeAgent } from "effect-claude-agent"
import * as ScriptedModelServer from "../../src/ScriptedModelServer.js"
import { pidsNamed } from "./process.js"

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
      env: { ...server.env(), ...extra.env }
    })
    return { server, cwd, options }
  })

/** Fails the test if a `claude` process started during `effect` is still alive after it. */
export const noClaudeLeft = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = new Set(pidsNamed("claude"))
    const result = yield* effect
    // the scope that owned the CLI has closed: nothing it started may be alive
    const left = pidsNamed("claude").filter((pid) => !before.has(pid))
    if (left.length > 0) return yield* Effect.die(new Error(`claude processes left behind: ${left.join(", ")}`))
    return result
  })

