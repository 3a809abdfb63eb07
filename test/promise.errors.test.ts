// Every error class of the SDK is exported from the Promise entry, so that Promise code can `instanceof` any error
// the README promises without importing the Effect entry, and `isAgentError` recognises an error of either copy.
// Enumerates AgentError's members: a class added there and forgotten in src/promise.ts fails here. Runs in the "unit"
// and the "bundle" project (vitest.config.ts).
import { describe, expect, it } from "vitest"
import { AgentError, SdkMcp } from "effect-claude-agent"
import * as promise from "effect-claude-agent/promise"

const exported: Readonly<Record<string, unknown>> = promise

describe("promise API: error classes", () => {
  it("exports every AgentError class under its tag, and McpServerFailed", () => {
    const tags = AgentError.AgentError.members.map((member) => member._tag)
    expect(tags).toContain(SdkMcp.McpServerFailed._tag)
    expect(tags.length).toBeGreaterThanOrEqual(19)
    const missing = tags.filter((tag) => {
      const value = exported[tag]
      return typeof value !== "function" || !("_tag" in value) || value._tag !== tag
    })
    expect(missing).toEqual([])
  })

  it("isAgentError of the Promise entry recognises the Effect API's errors, by tag", () => {
    for (const member of AgentError.AgentError.members) {
      // an error made by the Effect API's copy of the class (e.g. a transport of the caller's): in the bundle, another
      // copy than the Promise entry's
      const error = Object.assign(Object.create(member.prototype), {
        [AgentError.TypeId]: AgentError.TypeId,
        _tag: member._tag
      })
      expect(promise.isAgentError(error, member._tag), member._tag).toBe(true)
      expect(promise.isAgentError(error, member._tag === "ApiError" ? "CliNotFound" : "ApiError"), member._tag).toBe(
        false
      )
    }
  })
})
