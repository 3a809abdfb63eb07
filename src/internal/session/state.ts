/**
 * What a session knows about its CLI, as one value, and the pure transitions that change it. Every decision the
 * session makes from what the CLI said (its id, whether a turn is running, whether a resume found nothing, whether
 * closing stdin now would cost the CLI its quick exit, when silence becomes a hang) is a function of this value.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import { type IdleTimeout, type ProcessExited, SessionNotFound, StartupFailed } from "../../AgentError.js"
import type { SessionError, SessionState as PublicStatus } from "../../ClaudeAgent.js"
import type * as Message from "../../Message.js"

/** Where the CLI says it is (`starting` until it reports a state); `exited` is read from the process, not kept. */
export type Status = Exclude<PublicStatus, "exited">

/**
 * A session's state.
 *
 * @internal
 */
export interface SessionState {
  /** The session asked for (`resume` / `continue`), named by `SessionNotFound`. */
  readonly requested: string | undefined
  readonly status: Status
  /** Whether the CLI reports `session_state_changed` at all (older CLIs never report idle: do not wait for it). */
  readonly reportsState: boolean
  /** The session id: assigned by the SDK, else the first one the CLI names; `system/init` has the last word. */
  readonly sessionId: string | undefined
  /** The slash commands, once the CLI announced a change (`initialize` has the first list). */
  readonly commands: ReadonlyArray<Message.SlashCommand> | undefined
  /** `result` messages seen. */
  readonly results: number
  readonly lastResult: Message.ResultMessage | undefined
  /** The last SDK message was a `result`: the CLI needs a moment before it is idle. */
  readonly lastWasResult: boolean
  /** The first result said the resumed session does not exist. */
  readonly notFound: SessionNotFound | undefined
  readonly initializeAnswered: boolean
  /** Why start-up failed (the exit the SDK's kill causes is only a consequence). */
  readonly initializeFailure: SessionError | undefined
  /** Every prompt of the query is sent (its prompt stream ended, or its one prompt went out). */
  readonly inputDone: boolean
  /** A prompt of the query could not be sent: the CLI was gone already. */
  readonly promptLost: ProcessExited | undefined
  readonly promptsSent: number
  /** Prompts sent that ask for a turn (`shouldQuery` not `false`). */
  readonly turnsRequested: number
  /** SDK messages seen, and how many had been seen when the last prompt was sent (first-message detection). */
  readonly sdkMessages: number
  readonly messagesAtSend: number
  /**
   * When the CLI last wrote anything (any frame, keep-alives and control frames included) or the SDK last sent a
   * prompt or answered one of the CLI's requests (per the Effect `Clock`): where the idle clock starts.
   */
  readonly lastEventAt: number
  /** Whether the CLI wrote any frame at all (a start-up failure after that is in phase `initializeAck`). */
  readonly wroteAnything: boolean
}

/**
 * What changes a session's state.
 *
 * @internal
 */
export type Event =
  /** The CLI wrote an SDK message at `at`. */
  | { readonly _tag: "Message"; readonly message: Message.SdkMessage; readonly at: number }
  /** The CLI wrote frames (of any kind) at `at`. */
  | { readonly _tag: "Frames"; readonly at: number }
  /** The SDK answered one of the CLI's requests at `at`. */
  | { readonly _tag: "Answered"; readonly at: number }
  /** The SDK wrote a prompt at `at`; `startsTurn` unless it was sent with `shouldQuery: false`. */
  | { readonly _tag: "PromptSent"; readonly startsTurn: boolean; readonly at: number }
  | { readonly _tag: "InitializeAnswered" }
  /** Start-up failed for this reason (the first one is kept). */
  | { readonly _tag: "InitializeFailed"; readonly error: SessionError }
  /** Every prompt of the query is sent. */
  | { readonly _tag: "InputDone" }
  /** A prompt of the query could not be sent (the first loss is kept). */
  | { readonly _tag: "PromptLost"; readonly error: ProcessExited }

/**
 * The state of a session that has not heard from its CLI yet.
 *
 * @internal
 */
export const initial = (origin: {
  readonly requested: string | undefined
  readonly sessionId: string | undefined
}, startedAt: number): SessionState => ({
  requested: origin.requested,
  status: "starting",
  reportsState: false,
  sessionId: origin.sessionId,
  commands: undefined,
  results: 0,
  lastResult: undefined,
  lastWasResult: false,
  notFound: undefined,
  initializeAnswered: false,
  initializeFailure: undefined,
  inputDone: false,
  promptLost: undefined,
  promptsSent: 0,
  turnsRequested: 0,
  sdkMessages: 0,
  messagesAtSend: 0,
  lastEventAt: startedAt,
  wroteAnything: false
})

/** The reason a resume found nothing: the first result fails "during execution" with "No conversation found…". */
const notFoundIn = (state: SessionState, m: Message.ResultMessage): SessionNotFound | undefined => {
  if (m.subtype !== "error_during_execution" || state.results > 0) return undefined
  const reason = m.errors.find((e) => e.startsWith("No conversation found"))
  return reason === undefined
    ? undefined
    : new SessionNotFound({ sessionId: state.requested ?? m.session_id, description: reason })
}

/** A state being built by one step: a fresh copy, changed before the step returns it. */
type Draft = { -readonly [K in keyof SessionState]: SessionState[K] }

/** A fresh copy of `state`, every field written out, for a step to change (docs/PERFORMANCE.md, "Session state"). */
const copy = (state: SessionState): Draft => ({
  requested: state.requested,
  status: state.status,
  reportsState: state.reportsState,
  sessionId: state.sessionId,
  commands: state.commands,
  results: state.results,
  lastResult: state.lastResult,
  lastWasResult: state.lastWasResult,
  notFound: state.notFound,
  initializeAnswered: state.initializeAnswered,
  initializeFailure: state.initializeFailure,
  inputDone: state.inputDone,
  promptLost: state.promptLost,
  promptsSent: state.promptsSent,
  turnsRequested: state.turnsRequested,
  sdkMessages: state.sdkMessages,
  messagesAtSend: state.messagesAtSend,
  lastEventAt: state.lastEventAt,
  wroteAnything: state.wroteAnything
})

const onMessage = (state: SessionState, m: Message.SdkMessage, at: number): SessionState => {
  // every message counts and stamps the clock, and ends "the last message was a result" unless it says otherwise
  const next = copy(state)
  next.sdkMessages = state.sdkMessages + 1
  next.lastEventAt = at
  next.lastWasResult = false
  if (state.sessionId === undefined && "session_id" in m && typeof m.session_id === "string" && m.session_id !== "") {
    next.sessionId = m.session_id
  }
  switch (m.type) {
    case "system":
      if (m.subtype === "session_state_changed") {
        next.status = m.state
        next.reportsState = true
        next.lastWasResult = m.state === "idle" ? false : state.lastWasResult
      } else if (m.subtype === "init") {
        // the CLI has the last word on the id (e.g. a resume it chose to fork)
        next.sessionId = m.session_id
      } else if (m.subtype === "commands_changed") {
        next.commands = m.commands
      }
      return next
    case "result":
      next.notFound = state.notFound ?? notFoundIn(state, m)
      next.results = state.results + 1
      next.lastResult = m
      next.lastWasResult = true
      return next
    default:
      return next
  }
}

/**
 * The state after `event`. Pure: no clock, no effects; the caller acts on the difference.
 *
 * @internal
 */
export const step = (state: SessionState, event: Event): SessionState => {
  switch (event._tag) {
    case "Message":
      return onMessage(state, event.message, event.at)
    case "Frames": {
      const next = copy(state)
      next.lastEventAt = event.at
      next.wroteAnything = true
      return next
    }
    case "Answered": {
      const next = copy(state)
      next.lastEventAt = event.at
      return next
    }
    case "PromptSent": {
      const next = copy(state)
      next.promptsSent = state.promptsSent + 1
      next.turnsRequested = state.turnsRequested + (event.startsTurn ? 1 : 0)
      next.messagesAtSend = state.sdkMessages
      next.lastEventAt = event.at
      return next
    }
    case "InitializeAnswered": {
      if (state.initializeAnswered) return state
      const next = copy(state)
      next.initializeAnswered = true
      return next
    }
    case "InitializeFailed": {
      if (state.initializeFailure !== undefined) return state
      const next = copy(state)
      next.initializeFailure = event.error
      return next
    }
    case "InputDone": {
      if (state.inputDone) return state
      const next = copy(state)
      next.inputDone = true
      return next
    }
    case "PromptLost": {
      if (state.promptLost !== undefined) return state
      const next = copy(state)
      next.promptLost = event.error
      return next
    }
  }
}

/**
 * Whether a message reaches the session's readers: the CLI's state reports meant for the SDK host are kept back.
 *
 * @internal
 */
export const delivered = (m: Message.SdkMessage): boolean =>
  !(m.type === "system" && m.subtype === "session_state_changed" && m.sdk_host_only === true)

/**
 * The id the CLI runs when it is not the one the session expected (`system/init` naming another session): the
 * transition from `before` to `after` replaced a known id.
 *
 * @internal
 */
export const otherSessionId = (
  before: SessionState,
  after: SessionState
): { readonly expected: string; readonly actual: string } | undefined =>
  before.sessionId !== undefined && after.sessionId !== undefined && before.sessionId !== after.sessionId
    ? { expected: before.sessionId, actual: after.sessionId }
    : undefined

/**
 * A turn has just ended and the CLI, which reports its state, has not said it is idle yet: closing stdin now costs it
 * its quick exit, so wait (bounded) for idle.
 *
 * @internal
 */
export const awaitsIdle = (state: SessionState): boolean =>
  state.lastWasResult && state.status !== "idle" && state.reportsState

/**
 * A turn is running (or a prompt was sent and no state reported yet): closing now should interrupt it first.
 *
 * @internal
 */
export const busy = (state: SessionState): boolean =>
  !state.lastWasResult &&
  (state.status === "running" || state.status === "requires_action" ||
    (state.status === "starting" && state.promptsSent > 0))

/**
 * Whether the CLI still owes an answer to a prompt that asked for a turn.
 *
 * @internal
 */
export const turnOwed = (state: SessionState): boolean => state.turnsRequested > state.results

/**
 * Whether the CLI has answered every prompt of the query: every prompt is sent, none was lost, and each that asked for
 * a turn has its result.
 *
 * @internal
 */
export const answered = (state: SessionState): boolean =>
  state.inputDone && state.promptLost === undefined && state.results >= state.turnsRequested

/**
 * Why the CLI exited, as the session explains it: the resume found nothing, start-up failed (the exit the SDK's kill
 * causes is only a consequence), or the CLI died before it answered `initialize` (a start-up failure, in phase
 * `firstLine` when it wrote nothing at all); else the exit itself.
 *
 * @internal
 */
export const explainExit = (state: SessionState, exit: ProcessExited): SessionError => {
  const reason = state.notFound ?? state.initializeFailure
  if (reason !== undefined) return reason
  return state.initializeAnswered ? exit : new StartupFailed({
    reason: state.wroteAnything ? "InitializeAck" : "FirstLine",
    // the tail is a field of its own: the message adds it once
    description: exit.summary,
    exitCode: exit.code,
    stderrTail: exit.stderrTail,
    cause: exit
  })
}

/**
 * Why a session ends, as it was first reported to its termination (the first report wins).
 *
 * @internal
 */
export type Ending =
  /** The reader reached the end of the CLI's stdout once the process exited (`exit`: why, unless it exited 0). */
  | { readonly _tag: "Exited"; readonly exit: ProcessExited | undefined }
  /** The session cannot go on: start-up failed, a feature found it unusable, the idle watchdog. */
  | { readonly _tag: "Failed"; readonly error: SessionError }
  /** The query's prompt stream failed (its driver holds the error, of the stream's own type). */
  | { readonly _tag: "InputFailed" }
  /** Every prompt was answered and the drain bound passed: what the CLI writes later is dropped. */
  | { readonly _tag: "Drained" }
  /** The session's scope closed. */
  | { readonly _tag: "Closed" }

/**
 * How a session's messages end for their readers.
 *
 * @internal
 */
export type Outcome =
  | { readonly _tag: "Clean" }
  | { readonly _tag: "Failed"; readonly error: SessionError }
  | { readonly _tag: "InputFailed" }

const clean: Outcome = { _tag: "Clean" }

/**
 * How the messages end, from the session's state and the first reason it ended. An exit fails the messages with its
 * explanation ({@link explainExit}), unless every prompt was answered and the CLI exited 0 (or 1 after an error
 * result, how it reports that result once stdin is closed); a resume that found nothing always fails. A clean end
 * still fails when a prompt could not be sent, or when the CLI exited without answering the prompts it was sent
 * because start-up failed.
 *
 * @internal
 */
export const outcome = (state: SessionState, ending: Ending): Outcome => {
  switch (ending._tag) {
    case "Failed":
      return { _tag: "Failed", error: ending.error }
    case "InputFailed":
      return ending
    case "Exited": {
      const exit = ending.exit
      if (exit !== undefined) {
        const explained = explainExit(state, exit)
        const exitClean = exit.code === 0 || (exit.code === 1 && state.lastResult?.is_error === true)
        if (explained._tag === "SessionNotFound" || !(answered(state) && exit.code !== null && exitClean)) {
          return { _tag: "Failed", error: explained }
        }
      }
      // a prompt that went unanswered because start-up failed
      const prompted = state.promptsSent > 0 || state.promptLost !== undefined
      if (prompted && state.results === 0 && state.initializeFailure !== undefined) {
        return { _tag: "Failed", error: state.initializeFailure }
      }
      break
    }
  }
  return state.promptLost !== undefined ? { _tag: "Failed", error: explainExit(state, state.promptLost) } : clean
}

/**
 * The limits of the idle watchdog.
 *
 * @internal
 */
export interface IdleLimits {
  /** Silence after a prompt before the CLI's first message. */
  readonly firstMessage: Duration.Duration
  /** Silence in the middle of a turn. */
  readonly idle: Duration.Duration
}

/**
 * The running idle clock: when it expires and what it reports.
 *
 * @internal
 */
export interface Deadline {
  /** The `IdleTimeout` it ends with: no message since the prompt, or silence mid-turn. */
  readonly reason: IdleTimeout["reason"]
  readonly limit: Duration.Duration
  /** When the CLI last wrote anything or the SDK last sent or answered (see {@link SessionState.lastEventAt}). */
  readonly lastEventAt: number
  readonly at: number
}

/**
 * The idle clock, if one runs: only while a turn is owed and the SDK owes the CLI nothing (`inFlight`: permission
 * decisions, hook or MCP answers pending), and only when the limit of its kind is finite.
 *
 * @internal
 */
export const deadline = (state: SessionState, inFlight: number, limits: IdleLimits): Deadline | undefined => {
  if (!turnOwed(state) || inFlight > 0) return undefined
  const reason = state.sdkMessages === state.messagesAtSend ? "FirstMessage" : "Idle"
  const limit = reason === "FirstMessage" ? limits.firstMessage : limits.idle
  if (!Duration.isFinite(limit)) return undefined
  return { reason, limit, lastEventAt: state.lastEventAt, at: state.lastEventAt + Duration.toMillis(limit) }
}

/**
 * How long the watchdog may sleep from `now`: to the running deadline, and never past the shortest finite limit (any
 * event that starts or moves a clock happens at or after `now`, so no deadline can fall earlier than that). `undefined`
 * when no limit is finite (no watchdog at all).
 *
 * @internal
 */
export const sleepUntil = (now: number, running: Deadline | undefined, limits: IdleLimits): number | undefined => {
  const shortest = Duration.min(limits.firstMessage, limits.idle)
  if (!Duration.isFinite(shortest)) return undefined
  const horizon = now + Duration.toMillis(shortest)
  return running === undefined ? horizon : Math.min(running.at, horizon)
}
