// How a session's messages end (src/internal/session/state.ts `outcome`), as a pure function of the session's state
// and the first reason it ended (its termination).
import { describe, expect, it } from "@effect/vitest"
import { AgentError, type Message } from "effect-claude-agent"
import * as State from "../src/internal/session/state.js"
import { failed, success } from "./support/messages.js"

const exit = (code: number | null, signal: string | null = null) =>
  new AgentError.ProcessExited({ code, signal, stderrTail: "" })

const run = (state: State.SessionState, ...events: ReadonlyArray<State.Event>) => events.reduce(State.step, state)
const fresh = run(State.initial({ requested: undefined, sessionId: "s" }, 0), { _tag: "InitializeAnswered" })
const sent: State.Event = { _tag: "PromptSent", startsTurn: true, at: 0 }
const result = (m: Message.ResultMessage): State.Event => ({ _tag: "Message", message: m, at: 0 })
const inputDone: State.Event = { _tag: "InputDone" }
const exited = (code: number | null, signal: string | null = null): State.Ending => ({
  _tag: "Exited",
  exit: code === 0 ? undefined : exit(code, signal)
})

describe("query outcome", () => {
  it("the query is answered once every prompt is sent and has its result", () => {
    const two = run(fresh, sent, sent, inputDone)
    expect(State.answered(run(two, result(success())))).toBe(false)
    expect(State.answered(run(two, result(success()), result(success())))).toBe(true)
    expect(State.answered(run(fresh, sent, sent, result(success()), result(success())))).toBe(false)
  })

  it("once every prompt is answered, exit 0 (and exit 1 after an error result) end the messages cleanly", () => {
    expect(State.outcome(run(fresh, sent, inputDone, result(success())), exited(0))).toEqual({ _tag: "Clean" })
    expect(State.outcome(run(fresh, sent, inputDone, result(failed(["boom"]))), exited(1))).toEqual({
      _tag: "Clean"
    })
  })

  it("an exit before all is answered, exit 1 after a success, or a signal: the exit", () => {
    expect(State.outcome(run(fresh, sent, inputDone), exited(1))).toEqual({ _tag: "Failed", error: exit(1) })
    expect(State.outcome(run(fresh, sent, inputDone, result(success())), exited(1))).toEqual({
      _tag: "Failed",
      error: exit(1)
    })
    expect(State.outcome(run(fresh, sent, inputDone, result(failed(["x"]))), exited(null, "SIGKILL"))).toEqual({
      _tag: "Failed",
      error: exit(null, "SIGKILL")
    })
  })

  it("a resume that found nothing fails even after its (error) result", () => {
    const state = run(fresh, sent, inputDone, result(failed(["No conversation found with session ID: x"])))
    const outcome = State.outcome(state, exited(1))
    expect(outcome).toEqual({ _tag: "Failed", error: state.notFound })
    expect(state.notFound).toBeInstanceOf(AgentError.SessionNotFound)
  })

  it("the first reason reported decides: a failure, the prompt stream's failure, or a clean drain", () => {
    const idle = new AgentError.IdleTimeout({ lastEventAt: 0, timeoutMillis: 1, reason: "Idle", stderrTail: "" })
    const state = run(fresh, sent, inputDone)
    expect(State.outcome(state, { _tag: "Failed", error: idle })).toEqual({ _tag: "Failed", error: idle })
    expect(State.outcome(state, { _tag: "InputFailed" })).toEqual({ _tag: "InputFailed" })
    expect(State.outcome(run(state, result(success())), { _tag: "Drained" })).toEqual({ _tag: "Clean" })
  })

  it("a prompt that could not be sent fails a clean end with the explained exit", () => {
    const lost = run(fresh, { _tag: "PromptLost", error: exit(0) }, inputDone)
    expect(State.outcome(lost, exited(0))).toEqual({ _tag: "Failed", error: exit(0) })
  })
})
