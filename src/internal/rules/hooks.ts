/** @internal */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { constVoid, identity } from "effect/Function"
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
  Service
} from "../../Hooks.js"
import * as Deadlines from "../protocol/deadlines.js"
import type { Contribution } from "../session/extensions.js"
import { lazySignal, settleOnce } from "../protocol/settle.js"
import { callbackHandler } from "../../ControlProtocol.js"
import { hookOutputCheck } from "./outputs.js"

/** The hooks service's tag, defined here so that this module needs nothing but types from Hooks.ts. @internal */
export class Hooks extends Context.Tag("effect-claude-agent/Hooks")<Hooks, Service>() {}

/** @internal */
export const DEFAULT_TIMEOUT_SECONDS = 60 as const

/** @internal */
export const layer = (...registrations: ReadonlyArray<HookRegistrations>): Layer.Layer<Hooks> =>
  layerEffect(Effect.succeed(mergeAll(registrations)))

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

/**
 * A hook written as a Promise callback (the Promise API's hooks), as the official SDK calls it.
 *
 * @internal
 */
export type PromiseHook = (
  input: HookInput,
  toolUseId: string | undefined,
  options: { readonly signal: AbortSignal }
) => PromiseLike<HookOutput>

/**
 * A hook callback that also states its Promise form: as an Effect it runs `promiseHook` like `Effect.tryPromise`;
 * the `hook_callback` handler calls `promiseHook` directly (see `contribution`).
 *
 * @internal
 */
export interface PromiseHookCallback extends HookCallback {
  readonly promiseHook: PromiseHook
}

const isPromiseHook = (callback: HookCallback): callback is PromiseHookCallback =>
  "promiseHook" in callback && typeof callback.promiseHook === "function"

/** @internal */
export const fromPromise = (hook: PromiseHook): PromiseHookCallback =>
  Object.assign(
    (input: HookInput, toolUseId: string | undefined) =>
      Effect.tryPromise({ try: (signal) => hook(input, toolUseId, { signal }), catch: (error) => error }),
    { promiseHook: hook }
  )

interface Registered {
  readonly event: HookEvent
  readonly callback: HookCallback
  readonly timeoutSeconds: number
  /** Bounds a Promise callback by `timeoutSeconds` (shared by every callback with that timeout). */
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

  // Every request goes through the callback form: a Promise hook is called at once, without a fiber of its own (as
  // a Promise canUseTool is, see permissions.ts); an Effect hook runs on the fiber `reply.run` gives it.
  const handler = callbackHandler(({ request }, reply) => {
    const id = typeof request["callback_id"] === "string" ? request["callback_id"] : ""
    const registered = callbacks.get(id)
    if (registered === undefined) {
      reply.fail(`No hook callback found for ID: ${id}`)
      return constVoid
    }
    const input = request["input"]
    const toolUseId = typeof request["tool_use_id"] === "string" ? request["tool_use_id"] : undefined
    const onFailure = (reason: string) =>
      Effect.as(
        Effect.logWarning(`Hook ${registered.event} (${id}) failed: ${reason}; answering ${registered.onFailure}`),
        registered.onFailure === "block"
          ? blockingOutput(registered.event, `Hook ${registered.event} failed (blocked, fail closed): ${reason}`)
          : {}
      )
    const timedOut = () => `no answer within ${registered.timeoutSeconds} s`
    // an output that does not match the event's schema is a failure (the CLI would ignore what it cannot read):
    // the output to send, or the answer by onFailure
    const verdict = (output: unknown) =>
      Either.mapLeft(registered.checkOutput(output), (why) => onFailure(`its output is invalid: ${why}`))
    if (!registered.validate(input)) {
      reply.run(onFailure("its input did not match the event's schema"))
      return constVoid
    }
    // validated above against the event's input schema
    const typedInput = input as HookInput
    if (!isPromiseHook(registered.callback)) {
      // built on the hook's fiber: a callback that throws instead of returning an Effect fails like one that dies
      const hook = Effect.suspend(() => registered.callback(typedInput, toolUseId))
      // at the deadline the answer goes out at once; a hook that ignores interruption is not waited for
      const bounded = Effect.timeoutFail(Effect.disconnect(hook), {
        duration: Duration.seconds(registered.timeoutSeconds),
        onTimeout: () => new Error(timedOut())
      })
      reply.run(Effect.matchCauseEffect(bounded, {
        onFailure: (cause) => onFailure(describe(cause)),
        onSuccess: (output) => Either.match(verdict(output), { onLeft: identity, onRight: Effect.succeed })
      }))
      return constVoid
    }

    const promiseHook = registered.callback.promiseHook
    // aborted when the answer is abandoned: timeout, control_cancel_request, session close
    const signal = lazySignal()
    return settleOnce({
      call: () =>
        promiseHook(typedInput, toolUseId, {
          get signal(): AbortSignal {
            return signal.signal()
          }
        }),
      deadlines: registered.deadlines,
      abandon: signal.abort,
      onValue: (output) => Either.match(verdict(output), { onLeft: reply.run, onRight: reply.succeed }),
      onFailure: (error) => reply.run(onFailure(describeError(error))),
      onTimeout: () => reply.run(onFailure(timedOut()))
    })
  })

  return {
    initialize: { hooks: wire },
    handlers: new Map([["hook_callback", handler]]),
    onProtocol: () =>
      Effect.forEach(bySeconds.values(), (deadlines) => Effect.forkScoped(deadlines.run), { discard: true })
  }
}
