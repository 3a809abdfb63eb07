// The ledger of an auto-resumed session (src/internal/session/resilient.ts): which prompts a new process gets, and
// why `send` fails; pure, without processes or fibers.
import { describe, expect, it } from "@effect/vitest"
import { AgentError, type Message } from "effect-claude-agent"
import { ledger } from "../src/internal/session/resilient.js"
import { init, success } from "./support/messages.js"

const prompt = (text: string): Message.UserMessage => ({
  type: "user",
  message: { role: "user", content: text },
  parent_tool_use_id: null,
  session_id: ""
})

const a = prompt("a")
const b = prompt("b")
const c = prompt("c")

describe("auto-resume ledger", () => {
  it("prompts wait, are handed over in order, and start with the CLI's system/init", () => {
    let l = ledger.initial("s1")
    l = ledger.queued(ledger.queued(l, a), b)
    expect(l.waiting).toEqual([a, b])
    l = ledger.handedOver(ledger.handedOver(l))
    expect(l).toMatchObject({ waiting: [], handed: [a, b], turnRunning: false })
    l = ledger.observed(l, init("s2"))
    expect(l).toMatchObject({ handed: [b], turnRunning: true, resumeId: "s2" })
    expect(ledger.unanswered(l)).toBe(true)
  })

  it("a death gives what was handed but not started to the next process, ahead of what waits", () => {
    let l = ledger.queued(ledger.queued(ledger.queued(ledger.initial("s"), a), b), c)
    l = ledger.observed(ledger.handedOver(ledger.handedOver(l)), init("s"))
    expect(l).toMatchObject({ waiting: [c], handed: [b], turnRunning: true })
    const after = ledger.died(l)
    expect(after).toMatchObject({ waiting: [b, c], handed: [], turnRunning: false })
  })

  it("nothing unanswered once every turn has its result", () => {
    let l = ledger.observed(ledger.handedOver(ledger.queued(ledger.initial("s"), a)), init("s"))
    expect(ledger.unanswered(l)).toBe(true)
    l = ledger.observed(l, success())
    expect(ledger.unanswered(l)).toBe(false)
  })

  it("send fails after endInput, then after a failure (an exit as it is), then while closing", () => {
    const exited = new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "" })
    const open = ledger.initial("s")
    expect(ledger.sendError(open)).toBeUndefined()
    expect(ledger.sendError({ ...open, closing: true })).toStrictEqual(
      new AgentError.InputClosed({ reason: "SessionClosed" })
    )
    expect(ledger.sendError(ledger.failed(open, exited))).toBe(exited)
    expect(ledger.sendError(ledger.failed(open, new AgentError.InputClosed({ reason: "SessionClosed" }))))
      .toStrictEqual(
        new AgentError.InputClosed({ reason: "SessionClosed" })
      )
    expect(ledger.sendError({ ...ledger.failed(open, exited), inputEnded: true })).toStrictEqual(
      new AgentError.InputClosed({ reason: "InputEnded" })
    )
  })
})
