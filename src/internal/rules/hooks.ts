/** @internal */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type {
  HookCallback,
  HookEvent,
  HookInput,
  HookInputs,
  HookMatcher,
  HookOutput,
  HookRegistrations,
  HookHandler,
  Service
} from "../../Hooks.js"
import * as Deadlines from "../protocol/deadlines.js"
import type { Contribution } from "../protocol/contribution.js"
import { decide, type Handler, lazySignal, noop, untilCliExits, withLazySignal } from "../protocol/handler.js"
import { hookOutputCheck } from "./outputs.js"

/** The hooks service's tag, defined here so that this module needs nothing but types from Hooks.ts. @internal */
export class Hooks extends Context.Tag("effect-claude-agent/Hooks")<Hooks, Service>() {}

/** @internal */
export const DEFAULT_TIMEOUT_SECONDS = 60 as const

/** @internal */
export const layer = (...registrations: ReadonlyArray<HookRegistrations>): Layer.Layer<Hooks> =>
  layerEffect(Effect.succeed(mergeAll(registrations)))

/** @internal */
export const make = (...registrations: ReadonlyArray<HookRegistrations>): Service =>
  Hooks.of({ registrations: [mergeAll(registrations)] })

const mergeAll = (registrations: ReadonlyArray<HookRegistrations>): HookRegistrations => {
  const out: { [E in HookEvent]?: Array<HookMatcher<E>> } = {}
  for (const r of registrations) {
    for (const event of Object.keys(r) as Array<HookEvent>) {
      const matchers = r[event] as ReadonlyArray<HookMatcher> | undefined
      if (matchers === undefined) continue
      const list = (out[event] ??= []) as Array<HookMatcher>
      list.push(...matchers)
    }
  }
  return out
}

/** @internal */
export const layerEffect = <E, R>(registrations: Effect.Effect<HookRegistrations, E, R>): Layer.Layer<Hooks, E, R> =>
  Layer.effect(
    Hooks,
    Effect.gen(function*() {
      const existing = yield* Effect.serviceOption(Hooks)
      const added = yield* registrations
      return Hooks.of({
        registrations: Option.isSome(existing) ? [...existing.value.registrations, added] : [added]
      })
    })
  )

// ---------------------------------------------------------------------------------------------------------------------
// callbacks
// ---------------------------------------------------------------------------------------------------------------------

const denyOutput = (reason: string): HookOutput<"PreToolUse"> => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason }
})

/** @internal */
export const validate = (
  predicate: (input: HookInput<"PreToolUse">) => boolean,
  reason: string
): HookCallback<"PreToolUse"> =>
(input) => Effect.sync(() => (predicate(input) ? {} : denyOutput(reason)))

/** @internal */
export const log = <E extends HookEvent>(format?: (input: HookInput<E>) => string): HookCallback<E> => (input) =>
  Effect.as(
    Effect.log(format ? format(input) : `hook ${input.hook_event_name}`).pipe(
      Effect.annotateLogs({ hook: input.hook_event_name, session: input.session_id })
    ),
    {}
  )

/** @internal */
export const denyTools = (tools: ReadonlyArray<string>, reason?: string): HookCallback<"PreToolUse"> => (input) =>
  Effect.succeed(
    tools.includes(input.tool_name) ? denyOutput(reason ?? `The tool ${input.tool_name} is not allowed`) : {}
  )

/** @internal */
export const allowOnlyTools = (tools: ReadonlyArray<string>, reason?: string): HookCallback<"PreToolUse"> => (input) =>
  Effect.succeed(
    tools.includes(input.tool_name)
      ? {}
      : denyOutput(reason ?? `Only these tools are allowed: ${tools.join(", ")}`)
  )

// ---------------------------------------------------------------------------------------------------------------------
// dispatch
// ---------------------------------------------------------------------------------------------------------------------

interface Registered {
  readonly event: HookEvent
  readonly callback: HookHandler
  readonly timeoutSeconds: number
  /** Bounds the callback by `timeoutSeconds` (shared by every callback with that timeout). */
  readonly deadlines: Deadlines.Deadlines
  readonly onFailure: "continue" | "block"
  readonly validate: (u: unknown) => boolean
  /** The output as the CLI will read it, or why it does not match the event's output schema. */
  readonly checkOutput: (output: unknown) => Either.Either<HookOutput, string>
}

const GATING: ReadonlySet<HookEvent> = new Set<HookEvent>(["PreToolUse", "PermissionRequest"])

/** The answer of a failed hook when it must block the guarded action. */
const blockingOutput = (event: HookEvent, reason: string): HookOutput => {
  switch (event) {
    case "PreToolUse":
      return denyOutput(reason)
    case "PermissionRequest":
      return {
        hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: reason } }
      }
    default:
      return { decision: "block", reason }
  }
}

/** What a failure says; never throws (a null-prototype object has no `toString`). */
const describeError = (error: unknown): string => {
  try {
    if (error instanceof Error) return error.message
    if (typeof error === "object" && error !== null && "message" in error) return String(error.message)
    return String(error)
  } catch {
    return "an error that cannot be printed"
  }
}

const describe = (cause: Cause.Cause<unknown>): string =>
  Cause.isInterruptedOnly(cause) ? "it was interrupted" : describeError(Cause.squash(cause))

/** The first matcher timeout that is not a finite number of seconds ≥ 0, if any. @internal */
export const invalidTimeout = (registrations: ReadonlyArray<HookRegistrations>): unknown => {
  for (const registration of registrations) {
    for (const event of Object.keys(registration) as Array<HookEvent>) {
      for (const matcher of (registration[event] ?? []) as ReadonlyArray<HookMatcher>) {
        const timeout: unknown = matcher.timeout
        if (timeout !== undefined && !(typeof timeout === "number" && Number.isFinite(timeout) && timeout >= 0)) {
          return timeout
        }
      }
    }
  }
  return undefined
}

/** Builds the `initialize.hooks` field and the `hook_callback` handler for a session. @internal */
export const contribution = (
  registrations: ReadonlyArray<HookRegistrations>,
  inputs: typeof HookInputs
): Contribution | undefined => {
  const callbacks = new Map<string, Registered>()
  const wire: Record<string, Array<Record<string, unknown>>> = {}
  const bySeconds = new Map<number, Deadlines.Deadlines>()
  const deadlinesFor = (seconds: number): Deadlines.Deadlines => {
    let deadlines = bySeconds.get(seconds)
    if (deadlines === undefined) bySeconds.set(seconds, deadlines = Deadlines.make(seconds * 1000))
    return deadlines
  }
  const checks = new Map<HookEvent, (output: unknown) => Either.Either<HookOutput, string>>()
  const checkFor = (event: HookEvent) => {
    let check = checks.get(event)
    if (check === undefined) checks.set(event, check = hookOutputCheck(event))
    return check
  }
  let counter = 0
  for (const registration of registrations) {
    for (const event of Object.keys(registration) as Array<HookEvent>) {
      const matchers = (registration[event] ?? []) as ReadonlyArray<HookMatcher>
      for (const matcher of matchers) {
        const ids: Array<string> = []
        for (const callback of matcher.hooks) {
          const id = `hook_${counter++}`
          ids.push(id)
          const timeoutSeconds = matcher.timeout ?? DEFAULT_TIMEOUT_SECONDS
          callbacks.set(id, {
            event,
            callback,
            timeoutSeconds,
            deadlines: deadlinesFor(timeoutSeconds),
            onFailure: matcher.onFailure ?? (GATING.has(event) ? "block" : "continue"),
            validate: Schema.is(inputs[event] as Schema.Schema<unknown>),
            checkOutput: checkFor(event)
          })
        }
        if (ids.length === 0) continue
        ;(wire[event] ??= []).push({
          ...(matcher.matcher !== undefined ? { matcher: matcher.matcher } : {}),
          hookCallbackIds: ids,
          ...(matcher.timeout !== undefined ? { timeout: matcher.timeout } : {}),
          ...(matcher.onFailure !== undefined ? { onFailure: matcher.onFailure } : {})
        })
      }
    }
  }
  if (callbacks.size === 0) return undefined

  // The one dispatch of hook_callback: an Effect hook runs on a fiber, a Promise hook is answered as it settles, both
  // bounded by the same deadlines.
  const handler: Handler = ({ request }, reply) => {
    const id = typeof request["callback_id"] === "string" ? request["callback_id"] : ""
    const registered = callbacks.get(id)
    if (registered === undefined) {
      reply.fail(`No hook callback found for ID: ${id}`)
      return noop
    }
    const input = request["input"]
    const toolUseId = typeof request["tool_use_id"] === "string" ? request["tool_use_id"] : undefined
    const answerFailure = (reason: string) =>
      reply.fork(
        Effect.flatMap(
          Effect.as(
            Effect.logWarning(`Hook ${registered.event} (${id}) failed: ${reason}; answering ${registered.onFailure}`),
            registered.onFailure === "block"
              ? blockingOutput(registered.event, `Hook ${registered.event} failed (blocked, fail closed): ${reason}`)
              : {}
          ),
          (output) => Effect.sync(() => reply.succeed(output))
        )
      )
    if (!registered.validate(input)) {
      answerFailure("its input did not match the event's schema")
      return noop
    }
    // validated above against the event's input schema
    const typedInput = input as HookInput
    // aborted when the answer is abandoned: timeout, control_cancel_request, session close
    const signal = lazySignal()
    return decide<unknown>({
      make: () => registered.callback(typedInput, toolUseId, withLazySignal({}, signal.signal)),
      reply,
      deadlines: registered.deadlines,
      abandon: signal.abort,
      // an output that does not match the event's schema is a failure (the CLI would ignore what it cannot read)
      onValue: (output) =>
        Either.match(registered.checkOutput(output), {
          onLeft: (why) => answerFailure(`its output is invalid: ${why}`),
          onRight: reply.succeed
        }),
      onFailure: (cause) => answerFailure(describe(cause)),
      onTimeout: () => answerFailure(`no answer within ${registered.timeoutSeconds} s`)
    })
  }

  return {
    initialize: { hooks: wire },
    handlers: new Map([["hook_callback", handler]]),
    onProtocol: (protocol) =>
      Effect.forEach(bySeconds.values(), (deadlines) => untilCliExits(deadlines.run, protocol), {
        discard: true
      })
  }
}
