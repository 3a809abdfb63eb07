import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/** The current tracer, wrapped to keep every span it makes (in start order). */
export const recordingTracer = Effect.map(Effect.tracer, (base) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = base.span(...args)
      spans.push(span)
      return span
    },
    context: base.context
  })
  return { spans, tracer }
})
