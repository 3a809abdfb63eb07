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

/** The serialized trace state of `span` or of its nearest ancestor that has one. */
const traceState = (span: Tracer.AnySpan): string | undefined => {
  let current: Tracer.AnySpan | undefined = span
  while (current !== undefined) {
    const state = Option.getOrUndefined(Context.getOption(current.context, OTEL_TRACE_STATE))
    if (typeof state === "string") return state.length > 0 ? state : undefined
    if (typeof state === "object" && state !== null && "serialize" in state && typeof state.serialize === "function") {
      const serialized: unknown = state.serialize()
      return typeof serialized === "string" && serialized.length > 0 ? serialized : undefined
    }
    current = current._tag === "Span" ? Option.getOrUndefined(current.parent) : undefined
  }
  return undefined
}

/** The trace context of an Effect span (native, external, or one of another tracer with W3C-shaped ids). @internal */
export const fromSpan = (span: Tracer.AnySpan): Carrier | undefined => {
  const parent = traceparent(span.traceId, span.spanId, span.sampled)
  if (parent === undefined) return undefined
  const state = traceState(span)
  return state === undefined ? { traceparent: parent } : { traceparent: parent, tracestate: state }
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
 * `tracestate` when it has one), or none. Costs a property lookup when the app registered no OpenTelemetry globals;
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
  const fields: Record<string, string> = {}
  api.propagation.inject(api.context.active(), fields)
  const parent = fields["traceparent"]
  if (parent === undefined) return undefined
  const state = fields["tracestate"]
  return state === undefined || state.length === 0
    ? { traceparent: parent }
    : { traceparent: parent, tracestate: state }
}

/**
 * Runs `effect` (a Promise API call) with the trace context active in OpenTelemetry now, when it is called: the
 * fibers run later, outside the caller's async context.
 *
 * @internal
 */
export const withActiveOpenTelemetry = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, TraceSource, { _tag: "Captured", carrier: fromActiveOpenTelemetry() })
