// The end-of-stream rules of a driven query (src/internal/session/driver.ts), as pure functions.
import { describe, expect, it } from "@effect/vitest"
import { AgentError } from "effect-claude-agent"
import { afterExit, answered } from "../src/internal/session/driver.js"
import { failed, success } from "./support/messages.js"

const exit = (code: number | null, signal: string | null = null) =>
  new AgentError.ProcessExited({ code, signal, stderrTail: "" })

describe("query driver", () => {
  it("the query is answered once every prompt is sent and has its result", () => {
    const feed = {
      expected: 2,
      inputDone: true,
      stoppedBy: undefined,
      sendFailed: undefined,
      phase: "messages"
    } as const
    expect(answered(feed, 1)).toBe(false)
    expect(answered(feed, 2)).toBe(true)
    expect(answered({ ...feed, inputDone: false }, 5)).toBe(false)
  })

  it("once every prompt is answered, exit 0 (and exit 1 after an error result) end the messages cleanly", () => {
    expect(afterExit(exit(0), exit(0), true, success())).toBeUndefined()
    expect(afterExit(exit(1), exit(1), true, failed(["boom"]))).toBeUndefined()
  })

  it("an exit before all is answered, exit 1 after a success, or a signal: the refined reason", () => {
    expect(afterExit(exit(0), exit(0), false, success())).toStrictEqual(exit(0))
    expect(afterExit(exit(1), exit(1), true, success())).toStrictEqual(exit(1))
    expect(afterExit(exit(null, "SIGKILL"), exit(null, "SIGKILL"), true, failed(["x"]))).toStrictEqual(
      exit(null, "SIGKILL")
    )
  })

  it("a resume that found nothing fails even after its (error) result", () => {
    const notFound = new AgentError.SessionNotFound({ sessionId: "x", description: "No conversation found" })
    expect(afterExit(exit(1), notFound, true, failed(["No conversation found"]))).toBe(notFound)
  })
})
