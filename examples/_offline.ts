/**
 * Examples run offline by default: without ANTHROPIC_API_KEY they start the bundled scripted model server (the same
 * one the tests use) and point the real CLI at it. With a key, they talk to the real API.
 *
 * Offline, the model's answers come from a script: the replies an example passes (one per model request, in order),
 * then the server's rule-based handler (`SAY <words>`, `HISTORY`, `TOOL <Tool> <json>`, and `tool said: <output>`
 * after a tool result). Online, the script is ignored and the real model answers the same prompts.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { AgentOptions } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"

export const online = process.env["ANTHROPIC_API_KEY"] !== undefined && process.env["ANTHROPIC_API_KEY"] !== ""

/** What the scripted model answers offline: queued replies, then `handler` (default: the rule-based handler). */
export interface Script {
  readonly replies?: ReadonlyArray<ScriptedModelServer.Reply> | undefined
  readonly handler?: ScriptedModelServer.Handler | undefined
}

/** Options that point the CLI at the real API (with a key) or at a scripted model (offline), in a scratch dir. */
export const exampleOptions = (script: ReadonlyArray<ScriptedModelServer.Reply> | Script = []) =>
  Effect.gen(function*() {
    const cwd = yield* Effect.acquireRelease(
      Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "eca-example-")))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    if (online) {
      yield* Effect.log("mode: online (ANTHROPIC_API_KEY is set)")
      return { cwd } satisfies AgentOptions.Options
    }
    const { handler, replies } = isReplies(script) ? { replies: script, handler: undefined } : script
    const server = yield* ScriptedModelServer.make({
      ...(replies !== undefined ? { replies } : {}),
      ...(handler !== undefined ? { handler } : {})
    })
    yield* Effect.log(`mode: offline (scripted model server on ${server.url}; set ANTHROPIC_API_KEY to use the API)`)
    return { cwd, env: server.env() } satisfies AgentOptions.Options
  })

const isReplies = (
  script: ReadonlyArray<ScriptedModelServer.Reply> | Script
): script is ReadonlyArray<ScriptedModelServer.Reply> => Array.isArray(script)

/**
 * The same for code without Effect (the Promise API example): `close()` stops the scripted server and removes the
 * scratch directory.
 */
export const exampleOptionsAsync = async (script: ReadonlyArray<ScriptedModelServer.Reply> | Script = []) => {
  const scope = Effect.runSync(Scope.make())
  const options = await Effect.runPromise(exampleOptions(script).pipe(Scope.extend(scope)))
  return { options, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
