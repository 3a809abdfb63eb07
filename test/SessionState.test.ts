// The session's state as a value (src/internal/session/state.ts): every transition, without processes or fibers.
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import { AgentError, type Message } from "effect-claude-agent"
import * as State from "../src/internal/session/state.js"
import { assistant, commandsChanged, failed, init, stateChanged, success } from "./support/messages.js"

const message = (m: Message.SdkMessage, at = 0): State.Event => ({ _tag: "Message", message: m, at })
const sent = (at = 0, startsTurn = true): State.Event => ({ _tag: "PromptSent", startsTurn, at })
const run = (state: State.SessionState, ...events: ReadonlyArray<State.Event>) => events.reduce(State.step, state)

const fresh = State.initial({ requested: undefined, sessionId: undefined }, 0)
const exited = new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "boom\n" })
const limits: State.IdleLimits = { firstMessage: Duration.seconds(10), idle: Duration.seconds(30) }

describe("SessionState.step: what the CLI says", () => {
  it("starts as `starting`, with the id the SDK assigned (if any) and nothing seen", () => {
    const assigned = State.initial({ requested: undefined, sessionId: "sdk-id" }, 1234)
    expect(assigned).toMatchObject({
      status: "starting",
      reportsState: false,
      sessionId: "sdk-id",
      results: 0,
      promptsSent: 0,
      lastEventAt: 1234
    })
  })

  it("the first session id the CLI names is the session's; later messages do not change it, system/init does", () => {
    const named = run(fresh, message(assistant))
    expect(named.sessionId).toBe("cli-id")
    const assigned = State.initial({ requested: undefined, sessionId: "sdk-id" }, 0)
    expect(run(assigned, message(assistant)).sessionId).toBe("sdk-id")
    const forked = run(assigned, message(init("forked-id")))
    expect(forked.sessionId).toBe("forked-id")
    expect(State.otherSessionId(assigned, forked)).toEqual({ expected: "sdk-id", actual: "forked-id" })
    expect(State.otherSessionId(fresh, named)).toBeUndefined()
    expect(State.otherSessionId(named, run(named, message(init("cli-id"))))).toBeUndefined()
  })

  it("counts SDK messages and stamps the last event", () => {
    const s = run(fresh, message(assistant, 5), message(assistant, 9))
    expect(s.sdkMessages).toBe(2)
    expect(s.lastEventAt).toBe(9)
  })

  it("session_state_changed sets the status; idle ends the wait after a result; host-only ones are kept back", () => {
    const running = run(fresh, message(stateChanged("running")))
    expect(running).toMatchObject({ status: "running", reportsState: true })
    const afterResult = run(running, message(success()))
    expect(afterResult).toMatchObject({ lastWasResult: true, status: "running" })
    expect(State.awaitsIdle(afterResult)).toBe(true)
    const idle = run(afterResult, message(stateChanged("idle")))
    expect(idle).toMatchObject({ lastWasResult: false, status: "idle" })
    expect(State.awaitsIdle(idle)).toBe(false)
    // a state report other than idle leaves the last result in place
    expect(run(afterResult, message(stateChanged("requires_action"))).lastWasResult).toBe(true)
    expect(State.delivered(stateChanged("idle"))).toBe(false)
    expect(State.delivered(stateChanged("idle", false))).toBe(true)
    expect(State.delivered(assistant)).toBe(true)
  })

  it("a CLI that never reports its state is not waited for after a result", () => {
    const s = run(fresh, message(success()))
    expect(s.lastWasResult).toBe(true)
    expect(State.awaitsIdle(s)).toBe(false)
  })

  it("results are counted and the last one kept; any other message ends `lastWasResult`", () => {
    const first = success("one")
    const second = success("two")
    const s = run(fresh, message(first), message(assistant), message(second))
    expect(s).toMatchObject({ results: 2, lastResult: second, lastWasResult: true })
    expect(run(s, message(assistant)).lastWasResult).toBe(false)
    expect(run(s, message(init("cli-id"))).lastWasResult).toBe(false)
  })

  it("commands_changed replaces the slash commands", () => {
    expect(run(fresh, message(commandsChanged(["a", "b"]))).commands?.map((c) => c.name)).toEqual(["a", "b"])
  })

  it("a first result saying the conversation does not exist is SessionNotFound (named as requested)", () => {
    const resumed = State.initial({ requested: "wanted-id", sessionId: "wanted-id" }, 0)
    const s = run(resumed, message(failed(["No conversation found with session ID: wanted-id"])))
    expect(s.notFound).toStrictEqual(
      new AgentError.SessionNotFound({
        sessionId: "wanted-id",
        description: "No conversation found with session ID: wanted-id"
      })
    )
    // without a requested id (continue): the id the CLI named
    expect(run(fresh, message(failed(["No conversation found with session ID: x"]))).notFound?.sessionId).toBe(
      "cli-id"
    )
  })

  it("not found only on the first result, and only for that error", () => {
    expect(run(fresh, message(success()), message(failed(["No conversation found with session ID: x"]))).notFound)
      .toBeUndefined()
    expect(run(fresh, message(failed(["something else"]))).notFound).toBeUndefined()
  })
})

describe("SessionState.step: what the SDK does", () => {
  it("a prompt counts, asks for a turn unless shouldQuery is false, and restarts first-message detection", () => {
    const s = run(fresh, message(assistant), sent(7), sent(8, false))
    expect(s).toMatchObject({ promptsSent: 2, turnsRequested: 1, messagesAtSend: 1, lastEventAt: 8 })
    expect(State.turnOwed(s)).toBe(true)
    expect(State.turnOwed(run(s, message(success())))).toBe(false)
  })

  it("the first start-up failure and the first lost prompt are kept", () => {
    const idle = new AgentError.IdleTimeout({ lastEventAt: 0, timeoutMillis: 1, reason: "Idle", stderrTail: "" })
    const s = run(
      fresh,
      { _tag: "InitializeFailed", error: idle },
      { _tag: "InitializeFailed", error: exited },
      { _tag: "PromptLost", error: exited },
      { _tag: "PromptLost", error: new AgentError.ProcessExited({ code: 2, signal: null, stderrTail: "" }) }
    )
    expect(s.initializeFailure).toBe(idle)
    expect(s.promptLost).toBe(exited)
  })

  it("busy: a turn runs (or a prompt went out before any state report) and no result closed it", () => {
    expect(State.busy(fresh)).toBe(false)
    expect(State.busy(run(fresh, sent()))).toBe(true)
    expect(State.busy(run(fresh, message(stateChanged("running"))))).toBe(true)
    expect(State.busy(run(fresh, message(stateChanged("requires_action"))))).toBe(true)
    expect(State.busy(run(fresh, message(stateChanged("running")), message(success())))).toBe(false)
    expect(State.busy(run(fresh, message(stateChanged("idle"))))).toBe(false)
  })
})

describe("SessionState.explainExit: why the CLI exited", () => {
  it("before initialize was answered: StartupFailed, phase by whether the CLI wrote anything", () => {
    const early = State.explainExit(fresh, exited)
    expect(early).toBeInstanceOf(AgentError.StartupFailed)
    expect(early).toMatchObject({ reason: "FirstLine", exitCode: 1, stderrTail: "boom\n", cause: exited })
    expect(State.explainExit(run(fresh, { _tag: "Frames", at: 3 }), exited)).toMatchObject({
      reason: "InitializeAck"
    })
  })

  it("after initialize: the exit itself", () => {
    const answered = run(fresh, { _tag: "InitializeAnswered" })
    expect(State.explainExit(answered, exited)).toBe(exited)
  })

  it("a session that was not found, then a start-up the SDK gave up on, explain the exit", () => {
    const startup = new AgentError.StartupFailed({ reason: "InitializeAck", description: "no answer", stderrTail: "" })
    const failedStart = run(fresh, { _tag: "InitializeFailed", error: startup })
    expect(State.explainExit(failedStart, exited)).toBe(startup)
    const notFound = run(failedStart, message(failed(["No conversation found with session ID: x"])))
    expect(State.explainExit(notFound, exited)).toBe(notFound.notFound)
  })
})

describe("SessionState.deadline: when silence becomes a hang", () => {
  it("no clock without a turn owed, or while the SDK owes the CLI an answer", () => {
    expect(State.deadline(fresh, 0, limits)).toBeUndefined()
    const owed = run(fresh, sent(100))
    expect(State.deadline(owed, 1, limits)).toBeUndefined()
    expect(State.deadline(run(owed, message(success())), 0, limits)).toBeUndefined()
  })

  it("after a prompt and before any message: firstMessage, from the prompt", () => {
    expect(State.deadline(run(fresh, sent(100)), 0, limits)).toEqual({
      reason: "FirstMessage",
      limit: limits.firstMessage,
      lastEventAt: 100,
      at: 10_100
    })
  })

  it("mid-turn: idle, from the last thing the CLI wrote (any frame) or the SDK sent or answered", () => {
    const midTurn = run(fresh, sent(100), message(assistant, 3000))
    expect(State.deadline(midTurn, 0, limits)).toMatchObject({ reason: "Idle", lastEventAt: 3000, at: 33_000 })
    const keptAlive = run(midTurn, { _tag: "Frames", at: 4000 })
    expect(State.deadline(keptAlive, 0, limits)).toMatchObject({ reason: "Idle", lastEventAt: 4000, at: 34_000 })
    const answered = run(midTurn, { _tag: "Answered", at: 5000 })
    expect(State.deadline(answered, 0, limits)).toMatchObject({ reason: "Idle", lastEventAt: 5000, at: 35_000 })
    // control frames and answers do not end first-message detection: only an SDK message does
    expect(State.deadline(run(fresh, sent(100), { _tag: "Frames", at: 200 }), 0, limits)).toMatchObject({
      reason: "FirstMessage",
      at: 10_200
    })
  })

  it("an infinite limit runs no clock of its kind", () => {
    const noIdle = { ...limits, idle: Duration.infinity }
    expect(State.deadline(run(fresh, sent(), message(assistant)), 0, noIdle)).toBeUndefined()
    expect(State.deadline(run(fresh, sent()), 0, noIdle)).toMatchObject({ reason: "FirstMessage" })
  })

  it("the watchdog sleeps to the deadline, never past the shortest limit, and not at all without a finite one", () => {
    const running = State.deadline(run(fresh, sent(0), message(assistant, 3000)), 0, limits)
    expect(State.sleepUntil(5000, running, limits)).toBe(15_000)
    expect(State.sleepUntil(30_000, running, limits)).toBe(33_000)
    expect(State.sleepUntil(5000, undefined, limits)).toBe(15_000)
    expect(State.sleepUntil(5000, undefined, { firstMessage: Duration.infinity, idle: Duration.infinity }))
      .toBeUndefined()
  })
})
