// The harness of the Promise API's real-CLI tests: a scripted model server and a temp cwd per test, and a check that
// every test leaves no process behind. The server and cwd are live bindings, set before each test.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, expect } from "vitest"
import { descendants, ownedProcesses } from "./process.js"

/** This test's scripted model server. */
export let server: ScriptedModelServer.ScriptedModelServer
/** This test's working directory (removed after it). */
export let cwd: string

/** The processes of this test run: our descendants and anything carrying the owner marker. */
export const alive = () => [...new Set([...descendants(process.pid), ...ownedProcesses()])]

/** Registers the per-test server, temp cwd (`<prefix>*`) and the no-process-left check. */
export const usePromiseCli = (prefix: string) => {
  let scope: Scope.CloseableScope
  let before: Set<number>
  beforeEach(async () => {
    before = new Set(alive())
    scope = Effect.runSync(Scope.make())
    server = await Effect.runPromise(ScriptedModelServer.make().pipe(Scope.extend(scope)))
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  })
  afterEach(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(cwd, { recursive: true, force: true })
    // every test leaves no process behind
    expect(alive().filter((p) => !before.has(p))).toEqual([])
  })
}
