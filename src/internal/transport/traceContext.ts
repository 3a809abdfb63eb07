/** @internal */
import type * as OtelApi from "@opentelemetry/api"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import { createRequire } from "node:module"

/**
 * The W3C trace context the CLI child inherits, as `TRACEPARENT` / `TRACESTATE` in its environment (the CLI's own
 * spans then nest under the caller's trace). @internal
 */
export interface Carrier {
  readonly traceparent: string
  readonly tracestate?: string | undefined
}

/**
 * Where a session's trace context comes from: the fiber's current Effect span (the Effect API), or a context captured
 * elsewhere, or none (the Promise API: the active OpenTelemetry span when its query was called, if any; its own
 * Effect spans belong to no trace of the caller's). @internal
 */
export type Source =
  | { readonly _tag: "CurrentSpan" }
  | { readonly _tag: "Captured"; readonly carrier: Carrier | undefined }

/** @internal */
export class TraceSource extends Context.Reference<TraceSource>()("effect-claude-agent/TraceSource", {
  defaultValue: (): Source => ({ _tag: "CurrentSpan" })
}) {}

const TRACE_ID = /^[0-9a-f]{32}$/
const SPAN_ID = /^[0-9a-f]{16}$/
const ZEROS = /^0+$/

/** `traceparent` (version 00) for ids that W3C Trace Context accepts; none for others (a custom tracer's ids). */
const traceparent = (traceId: string, spanId: string, sampled: boolean): string | undefined =>
  TRACE_ID.test(traceId) && SPAN_ID.test(spanId) && !ZEROS.test(traceId) && !ZEROS.test(spanId)
    ? `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`
    : undefined

/**
 * The key under which `@effect/opentelemetry` keeps an OpenTelemetry span's trace state in an Effect span's context
 * (an external span made from an incoming request, or a span of its OpenTelemetry tracer); read by key, so that this
 * module needs no import of that optional peer.
 */
const OTEL_TRACE_STATE = Context.GenericTag<unknown>("@effect/opentelemetry/Tracer/OtelTraceState")

/** A `traceparent` header as W3C Trace Context writes it (any version but the invalid `ff`, lowercase hex). */
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(?:-[\x21-\x7e]*)?$/
/** A `tracestate` header: at most 512 printable ASCII characters, its members `key=value`. */
const TRACESTATE_MAX = 512
const TRACESTATE_MEMBER = /^[\x21-\x2b\x2d-\x7e]+=[\x20-\x2b\x2d-\x3c\x3e-\x7e]*[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/

const isTraceState = (state: string): boolean =>
  state.length <= TRACESTATE_MAX &&
  state.split(",").every((member) => {
    const trimmed = member.trim()
    return trimmed.length === 0 || TRACESTATE_MEMBER.test(trimmed)
  })

/**
 * The carrier for what a tracer or propagator gave, checked: values from an app's propagator or trace state go into
 * the child's environment, so anything that is not a well-formed header (a NUL, a newline, an oversized state) is
 * dropped rather than passed on; an invalid `traceparent` drops the whole context.
 */
const carrierOf = (parent: unknown, state: unknown): Carrier | undefined => {
  if (typeof parent !== "string" || !TRACEPARENT.test(parent)) return undefined
  return typeof state === "string" && state.length > 0 && isTraceState(state)
    ? { traceparent: parent, tracestate: state }
    : { traceparent: parent }
}

/** `state.serialize()` of an OpenTelemetry `TraceState`, or none if it has no such method or it throws. */
const serialized = (state: object): unknown => {
  if (!("serialize" in state) || typeof state.serialize !== "function") return undefined
  try {
    return state.serialize()
  } catch {
    return undefined
  }
}

/** The serialized trace state of `span` or of its nearest ancestor that has one. */
const traceState = (span: Tracer.AnySpan): string | undefined => {
  let current: Tracer.AnySpan | undefined = span
  while (current !== undefined) {
    const state = Option.getOrUndefined(Context.getOption(current.context, OTEL_TRACE_STATE))
    if (typeof state === "string") return state.length > 0 ? state : undefined
    if (typeof state === "object" && state !== null) {
      const text = serialized(state)
      return typeof text === "string" && text.length > 0 ? text : undefined
    }
    current = current._tag === "Span" ? Option.getOrUndefined(current.parent) : undefined
  }
  return undefined
}

/** The trace context of an Effect span (native, external, or one of another tracer with W3C-shaped ids). @internal */
export const fromSpan = (span: Tracer.AnySpan): Carrier | undefined => {
  const parent = traceparent(span.traceId, span.spanId, span.sampled)
  return parent === undefined ? undefined : carrierOf(parent, traceState(span))
}

/** The trace context a CLI started now inherits, as {@link TraceSource} says. @internal */
export const current: Effect.Effect<Carrier | undefined> = Effect.flatMap(
  TraceSource,
  (source) =>
    source._tag === "Captured"
      ? Effect.succeed(source.carrier)
      : Effect.map(Effect.option(Effect.currentParentSpan), (span) =>
        Option.isSome(span) ? fromSpan(span.value) : undefined)
)

/**
 * Where `@opentelemetry/api` 1.x registers its globals (context manager, propagator, tracer provider), shared by every
 * copy of the API in the process. Until something is registered there no span can be active.
 */
const OTEL_GLOBAL = Symbol.for("opentelemetry.js.api.1")

/** Loads a package as the app's `require` would from here (Node caches both the resolution and the module). */
const requireHere = createRequire(import.meta.url)

/**
 * The active OpenTelemetry span's context, as the app's registered propagator writes it (`traceparent`, and
 * `tracestate` when it has one), or none: also when the propagator throws or writes malformed values. Costs a property lookup when the app registered no OpenTelemetry globals;
 * `@opentelemetry/api` is loaded only when it did (the app loaded it already), and its absence is no error.
 *
 * @internal
 */
export const fromActiveOpenTelemetry = (): Carrier | undefined => {
  if (!(OTEL_GLOBAL in globalThis)) return undefined
  let api: typeof OtelApi
  try {
    api = requireHere("@opentelemetry/api")
  } catch {
    return undefined
  }
  const fields: Record<string, unknown> = {}
  try {
    api.propagation.inject(api.context.active(), fields)
  } catch {
    // the app's propagator failed: the child gets no trace context rather than the caller an exception
    return undefined
  }
  return carrierOf(fields["traceparent"], fields["tracestate"])
}

/**
 * Runs `effect` (a Promise API call) with the trace context active in OpenTelemetry now, when it is called: the
 * fibers run later, outside the caller's async context.
 *
 * @internal
 */
export const withActiveOpenTelemetry = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, TraceSource, { _tag: "Captured", carrier: fromActiveOpenTelemetry() })
