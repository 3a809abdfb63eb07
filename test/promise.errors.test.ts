// Every error class of the SDK is exported from the Promise entry, so that Promise code can `instanceof` any error
// the README promises without importing the Effect entry. Enumerates AgentError's members: a class added there and
// forgotten in src/promise.ts fails here. Runs in the "src" and the "bundle" project (vitest.config.ts).
import { describe, expect, it } from "vitest"
import { AgentError, SdkMcp } from "effect-claude-agent"
import * as promise from "effect-claude-agent/promise"

const exported: Readonly<Record<string, unknown>> = promise

describe("promise API: error classes", () => {
  it("exports every AgentError class under its tag, and McpServerFailed", () => {
    const tags = [...AgentError.AgentError.members.map((member) => member._tag), SdkMcp.McpServerFailed._tag]
    expect(tags.length).toBeGreaterThanOrEqual(19)
    const missing = tags.filter((tag) => {
      const value = exported[tag]
      return typeof value !== "function" || !("_tag" in value) || value._tag !== tag
    })
    expect(missing).toEqual([])
  })

  it("each is the class errors of that tag are instances of", () => {
    for (const member of AgentError.AgentError.members) {
      // branded as the Effect API's errors are (their fields do not matter to instanceof)
      const error = Object.assign(Object.create(member.prototype), { [AgentError.TypeId]: AgentError.TypeId, _tag: member._tag })
      const promiseClass = exported[member._tag]
      if (typeof promiseClass !== "function") throw new Error(`${member._tag} is not exported`)
      // an error made by the Effect API's copy of the class (e.g. a transport of the caller's) is an instance of the
      // Promise entry's class too, in the bundle as well
      expect(error instanceof promiseClass, member._tag).toBe(true)
    }
  })
})
