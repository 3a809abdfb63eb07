/**
 * What a session knows about its CLI, as one value, and the pure transitions that change it. Every decision the
 * session makes from what the CLI said (its id, whether a turn is running, whether a resume found nothing, whether
 * closing stdin now would cost the CLI its quick exit, when silence becomes a hang) is a function of this value.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import { type IdleTimeout, isAgentError, SessionNotFound, StartupFailed } from "../../AgentError.js"
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
  /** Why the SDK ended the process itself (the `ProcessExited` that follows is only a consequence). */
  readonly endedBySdk: IdleTimeout | StartupFailed | undefined
  readonly initializeAnswered: boolean
  /** Why the session could not go on (its readers fail with this once the buffer is read). */
  readonly stoppedBy: SessionError | undefined
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
  /** The SDK is about to kill the process for this reason. */
  | { readonly _tag: "EndedBySdk"; readonly reason: IdleTimeout | StartupFailed }
  /** The session cannot go on (the first reason is kept). */
  | { readonly _tag: "Stopped"; readonly reason: SessionError }

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
  endedBySdk: undefined,
  initializeAnswered: false,
  stoppedBy: undefined,
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
  endedBySdk: state.endedBySdk,
  initializeAnswered: state.initializeAnswered,
  stoppedBy: state.stoppedBy,
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
    case "EndedBySdk": {
      const next = copy(state)
      next.endedBySdk = event.reason
      return next
    }
    case "Stopped": {
      if (state.stoppedBy !== undefined) return state
      const next = copy(state)
      next.stoppedBy = event.reason
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
 * Turns a `ProcessExited` that the SDK caused or can explain into the real reason: the resume found nothing, the SDK
 * killed the CLI (idle, start-up), or the CLI died before it answered `initialize` (a start-up failure, in phase
 * `firstLine` when it wrote nothing at all). Other errors are returned as they are.
 *
 * @internal
 */
export const refine = <E>(state: SessionState, error: E): E | SessionNotFound | IdleTimeout | StartupFailed => {
  if (!isAgentError(error, "ProcessExited")) return error
  const reason = state.notFound ?? state.endedBySdk
  if (reason !== undefined) return reason
  return state.initializeAnswered ? error : new StartupFailed({
    reason: state.wroteAnything ? "InitializeAck" : "FirstLine",
    // the tail is a field of its own: the message adds it once
    description: error.summary,
    exitCode: error.code,
    stderrTail: error.stderrTail,
    cause: error
  })
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
