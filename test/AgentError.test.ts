// The SDK's errors across copies of the package: `isAgentError` recognises an error by the package's brand (a
// registered symbol every copy shares) and, with a tag, by its `_tag`; `instanceof` is the plain prototype check.
// The error model: a variant is a `reason` literal, free text is `description`.
import { describe, expect, it } from "vitest"
import * as Schema from "effect/Schema"
import { AgentError } from "effect-claude-agent"

describe("AgentError.isAgentError", () => {
  it("accepts an error of another copy of the package (same brand), by tag too; not another library's error", () => {
    // what another copy's ProcessExited looks like from here
    const otherCopy = Object.assign(new Error("exited"), {
      [AgentError.TypeId]: AgentError.TypeId,
      _tag: "ProcessExited"
    })
    expect(AgentError.isAgentError(otherCopy)).toBe(true)
    expect(AgentError.isAgentError(otherCopy, "ProcessExited")).toBe(true)
    expect(AgentError.isAgentError(otherCopy, "SpawnFailed")).toBe(false)
    expect(AgentError.isAgentError(Object.assign(new Error("x"), { _tag: "ProcessExited" }))).toBe(false)
    expect(AgentError.isAgentError(null)).toBe(false)
    expect(AgentError.isAgentError("ProcessExited", "ProcessExited")).toBe(false)
    for (const error of AgentError.AgentError.members) {
      const branded = Object.assign(new Error(), { [AgentError.TypeId]: AgentError.TypeId, _tag: error._tag })
      expect(AgentError.isAgentError(branded, error._tag), error._tag).toBe(true)
    }
  })

  it("instanceof is the prototype check: a caller's subclass keeps it, another copy's error is not an instance", () => {
    class Crash extends AgentError.ProcessExited {}
    const crash = new Crash({ code: 1, signal: null, stderrTail: "" })
    const plain = new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "" })
    expect(crash).toBeInstanceOf(Crash)
    expect(crash).toBeInstanceOf(AgentError.ProcessExited)
    expect(plain).not.toBeInstanceOf(Crash)
    expect(Object.assign(new Error(), { [AgentError.TypeId]: AgentError.TypeId, _tag: "ProcessExited" }))
      .not.toBeInstanceOf(AgentError.ProcessExited)
  })

  it("a tag narrows the type", () => {
    const u: unknown = new AgentError.StartupFailed({ reason: "FirstLine", description: "exited", stderrTail: "" })
    if (!AgentError.isAgentError(u, "StartupFailed")) throw new Error("not a StartupFailed")
    const reason: "Spawn" | "FirstLine" | "InitializeAck" = u.reason
    expect(reason).toBe("FirstLine")
  })
})

describe("the error model", () => {
  // every field named `reason` is a literal union (a variant), never free text
  it("every reason is a literal; free text is a description", () => {
    for (const member of AgentError.AgentError.members) {
      const reason = Object.entries(member.fields).find(([name]) => name === "reason")?.[1]
      if (reason === undefined) continue
      if (!Schema.isSchema(reason)) throw new Error(`${member._tag}.reason is not a plain schema`)
      const ast = reason.ast
      const literal = ast._tag === "Literal" ||
        (ast._tag === "Union" && ast.types.every((t) => t._tag === "Literal"))
      expect(literal, `${member._tag}.reason`).toBe(true)
    }
  })

  it("messages carry the variant and the description", () => {
    expect(
      new AgentError.StartupFailed({ reason: "InitializeAck", description: "no answer within 5 ms", stderrTail: "" })
        .message
    )
      .toBe("Claude Code failed to start (InitializeAck: initialize not answered): no answer within 5 ms")
    expect(
      new AgentError.VersionIncompatible({
        found: "unknown",
        supported: ">=2",
        reason: "Unknown",
        description: "`--version` exited with code 2"
      }).message
    )
      .toBe("Claude Code unknown is outside the supported range >=2 (`--version` exited with code 2)")
    expect(
      new AgentError.MalformedLine({ line: "[1]", reason: "NotAnObject", description: "not a JSON object" }).message
    )
      .toBe("Non-protocol output on stdout (not a JSON object): [1]")
    expect(new AgentError.InputClosed({ reason: "InputEnded" }).message).toBe(
      "Cannot write to the CLI: its input was already ended"
    )
  })
})
