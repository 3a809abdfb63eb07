// Mistakes a newcomer makes get a hint: a program that starts a session with no Transport (plain JavaScript, or a cast
// past the type that requires one) dies with a defect that says what to provide, instead of Effect's bare "Service not
// found: effect-claude-agent/Transport"; `query` imported from the main entry points to "effect-claude-agent/promise".
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ClaudeAgent, query, SessionPool } from "effect-claude-agent"

/** Runs `effect` as code that forgot the Transport would: its requirement erased. */
const withoutTransport = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.exit(effect as Effect.Effect<A, E, never>)

const expectHint = (exit: Exit.Exit<unknown, unknown>) => {
  expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
  const text = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
  expect(text).toContain("No Transport to start the Claude Code CLI with")
  expect(text).toContain("provide NodeClaudeAgent.layer")
}

describe("a missing Transport says to provide NodeClaudeAgent.layer", () => {
  it.effect("ClaudeAgent.query", () =>
    Effect.gen(function*() {
      expectHint(yield* withoutTransport(ClaudeAgent.query("hi").pipe(Stream.runDrain)))
    }))

  it.effect("ClaudeAgent.session", () =>
    Effect.gen(function*() {
      expectHint(yield* withoutTransport(Effect.scoped(ClaudeAgent.session())))
    }))

  it.effect("SessionPool.layer", () =>
    Effect.gen(function*() {
      expectHint(yield* withoutTransport(Effect.scoped(Layer.build(SessionPool.layer({ maxConcurrent: 1 })))))
    }))
})

describe("query from the main entry points to effect-claude-agent/promise", () => {
  it("TypeScript refuses the call (the parameter type is the hint); plain JavaScript gets a TypeError saying it", () => {
    // @ts-expect-error the official SDK's call shape is refused: the error names "effect-claude-agent/promise"
    const call = () => query({ prompt: "hi" })
    expect(call).toThrow(TypeError)
    expect(call).toThrow(/query\(\) is exported by "effect-claude-agent\/promise".*ClaudeAgent\.query/)
  })
})
