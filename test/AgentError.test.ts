// `instanceof` for the SDK's errors: by the package's brand and the `_tag`, so that an error from another copy of the
// package (the bundled Promise entry: test/promise.bundle.test.ts) is an instance too; a caller's subclass keeps the
// prototype check.
import { describe, expect, it } from "vitest"
import { AgentError } from "effect-claude-agent"

describe("AgentError instanceof", () => {
  it("an error of another copy of the package (the same brand and tag) is an instance; another tag or no brand is not", () => {
    // what another copy's ProcessExited looks like from here: the brand is a registered symbol, shared by every copy
    const otherCopy = Object.assign(new Error("exited"), { [AgentError.TypeId]: AgentError.TypeId, _tag: "ProcessExited" })
    expect(otherCopy).toBeInstanceOf(AgentError.ProcessExited)
    expect(otherCopy).not.toBeInstanceOf(AgentError.SpawnFailed)
    expect(Object.assign(new Error("x"), { _tag: "ProcessExited" })).not.toBeInstanceOf(AgentError.ProcessExited)
    expect(null).not.toBeInstanceOf(AgentError.ProcessExited)
    for (const error of AgentError.AgentError.members) {
      expect(Object.assign(new Error(), { [AgentError.TypeId]: AgentError.TypeId, _tag: error._tag })).toBeInstanceOf(error)
    }
  })

  it("a caller's subclass keeps the prototype check", () => {
    class Crash extends AgentError.ProcessExited {}
    const crash = new Crash({ code: 1, signal: null, stderrTail: "" })
    const plain = new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "" })
    expect(crash).toBeInstanceOf(Crash)
    expect(crash).toBeInstanceOf(AgentError.ProcessExited)
    expect(plain).not.toBeInstanceOf(Crash)
  })
})
