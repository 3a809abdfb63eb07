// The bundled Promise entry (`dist/promise.js`): self-contained, and its errors are recognised by the Effect API's
// `isAgentError` and vice versa (`instanceof` checks one copy). Runs in the "bundle" project only, where "effect-claude-agent/promise" is the bundle
// (vitest.config.ts); test/promise.test.ts and test/promise.cli.test.ts run against it there as well.
import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import { builtinModules } from "node:module"
import * as bundle from "effect-claude-agent/promise"
import { AgentError } from "effect-claude-agent"
import { bundleFile } from "../vitest.config.js"
import { external } from "../scripts/bundle-promise.mjs"

interface Meta {
  readonly outputs: Readonly<Record<string, { readonly imports: ReadonlyArray<{ readonly path: string }> }>>
}

describe("the bundled Promise entry", () => {
  it("imports only Node built-ins and the modules it loads lazily from the app (MCP SDK, zod)", () => {
    const meta: Meta = JSON.parse(fs.readFileSync(`${bundleFile}.meta.json`, "utf8"))
    const imports = Object.values(meta.outputs).flatMap((o) => o.imports.map((i) => i.path))
    const allowed = (spec: string) =>
      spec.startsWith("node:") || builtinModules.includes(spec) ||
      external.some((e) => (e.endsWith("/*") ? spec.startsWith(e.slice(0, -1)) : spec === e))
    expect(imports.filter((spec) => !allowed(spec))).toEqual([])
    // effect itself is inside: no import of it is left
    expect(imports.filter((spec) => spec === "effect" || spec.startsWith("effect/") || spec.startsWith("@effect/")))
      .toEqual([])
  })

  it("isAgentError recognises errors across the two copies of the classes, both ways, and only of their own tag", () => {
    // really two copies: the bundle's classes are not the Effect API's
    expect(bundle.ProcessExited).not.toBe(AgentError.ProcessExited)
    const fromBundle = new bundle.ProcessExited({ code: 3, signal: null, stderrTail: "boom\n" })
    const fromEffectApi = new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "boom\n" })
    expect(AgentError.isAgentError(fromBundle, "ProcessExited")).toBe(true)
    expect(bundle.isAgentError(fromEffectApi, "ProcessExited")).toBe(true)
    expect(fromBundle).toBeInstanceOf(Error)
    expect(fromBundle).toBeInstanceOf(bundle.ProcessExited)
    expect(fromBundle).not.toBeInstanceOf(AgentError.ProcessExited)
    expect(AgentError.isAgentError(fromBundle, "SpawnFailed")).toBe(false)
    expect(bundle.isAgentError(fromBundle, "CliNotFound")).toBe(false)
    // another library's error with the same tag is not ours
    expect(bundle.isAgentError(Object.assign(new Error("x"), { _tag: "ProcessExited" }))).toBe(false)
    expect(fromBundle.message).toBe(fromEffectApi.message)
  })

  it("a missing CLI rejects with the bundle's CliNotFound, which the Effect API recognises", async () => {
    const error = await bundle.query({ prompt: "hi", options: { pathToClaudeCodeExecutable: "/nope/claude" } }).next()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(bundle.CliNotFound)
    expect(AgentError.isAgentError(error, "CliNotFound")).toBe(true)
    expect(error).toMatchObject({ _tag: "CliNotFound", searched: ["pathToClaudeCodeExecutable: /nope/claude"] })
  })
})
