/**
 * Examples run offline by default: without ANTHROPIC_API_KEY they start the bundled scripted model server (the same
 * one the tests use) and point the real CLI at it. With a key, they talk to the real API.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { AgentOptions } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"

export const online = process.env["ANTHROPIC_API_KEY"] !== undefined && process.env["ANTHROPIC_API_KEY"] !== ""

/** Options that point the CLI at the real API (with a key) or at a scripted model (offline), in a scratch dir. */
export const exampleOptions = (replies: ReadonlyArray<ScriptedModelServer.Reply> = []) =>
  Effect.gen(function*() {
    const cwd = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-example-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    if (online) {
      yield* Effect.log("mode: online (ANTHROPIC_API_KEY is set)")
      return { cwd } satisfies AgentOptions.Options
    }
    const server = yield* ScriptedModelServer.make({ replies })
    yield* Effect.log(`mode: offline (scripted model server on ${server.url}; set ANTHROPIC_API_KEY to use the API)`)
    return { cwd, env: server.env() } satisfies AgentOptions.Options
  })
