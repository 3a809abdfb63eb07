import { addEqualityTesters } from "@effect/vitest"
import { afterAll, beforeAll, expect } from "vitest"

addEqualityTesters()

// G4: nothing the SDK does may produce an unhandled rejection or a listener-leak warning, in any test file.
// The listeners are installed once per process (a process may run several files, e.g. under `--no-isolate`), and each
// file checks what happened while it ran.
interface Seen {
  readonly unhandled: Array<unknown>
  readonly warnings: Array<string>
}
const SEEN = Symbol.for("effect-claude-agent/test/seen")
const registry = globalThis as { [SEEN]?: Seen }
const seen: Seen = registry[SEEN] ?? (() => {
  const fresh: Seen = { unhandled: [], warnings: [] }
  process.on("unhandledRejection", (reason) => {
    fresh.unhandled.push(reason)
  })
  process.on("warning", (warning) => {
    if (warning.name === "MaxListenersExceededWarning") fresh.warnings.push(warning.message)
  })
  return registry[SEEN] = fresh
})()

beforeAll(() => {
  seen.unhandled.length = 0
  seen.warnings.length = 0
})

afterAll(() => {
  expect(seen.unhandled, "unhandled rejections during this file").toEqual([])
  expect(seen.warnings, "MaxListenersExceededWarning during this file").toEqual([])
})
