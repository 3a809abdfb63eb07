// Trace context reaches the real CLI: its environment has the caller's TRACEPARENT / TRACESTATE, as the commands it
// runs see it (offline: the scripted model server asks for a Bash call that prints them).
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Otel from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { W3CTraceContextPropagator } from "@opentelemetry/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ClaudeAgent, Message, type Transport } from "effect-claude-agent"
import { query } from "effect-claude-agent/promise"
import * as OtlpReceiver from "../examples/_otlpReceiver.js"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"
import { recordingTracer } from "./support/spans.js"

const printTrace = `TOOL Bash ${
  JSON.stringify({ command: "echo \"[$TRACEPARENT|$TRACESTATE]\"", description: "print the trace context" })
}`

const allow = { permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true } as const

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 120_000)

const resultOf = (messages: ReadonlyArray<Message.SdkMessage>) => {
  const result = messages.find(Message.isResultMessage)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

describe("trace context against the real CLI", () => {
  live(
    "the CLI's environment has TRACEPARENT from the caller's span (through the SDK's query span)",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const { spans, tracer } = yield* recordingTracer
        const { caller, messages } = yield* Effect.all({
          caller: Effect.currentSpan,
          messages: Stream.runCollect(ClaudeAgent.query(printTrace, options(allow)))
        }).pipe(Effect.withSpan("app.caller"), Effect.withTracer(tracer))
        const match = /^tool said: \[00-([0-9a-f]{32})-([0-9a-f]{16})-01\|\]$/.exec(resultOf(Chunk.toArray(messages)))
        expect(match?.[1]).toBe(caller.traceId)
        const parent = spans.find((s) => s.spanId === match?.[2])
        expect(parent?.name).toBe("ClaudeAgent.query")
        expect(parent?.parent._tag === "Some" && parent.parent.value.spanId).toBe(caller.spanId)
      })
  )

  live("the Promise API: the OpenTelemetry span active at query(), with its trace state", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      Otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
      Otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator())
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          Otel.context.disable()
          Otel.propagation.disable()
        })
      )
      const active = Otel.trace.setSpanContext(Otel.ROOT_CONTEXT, {
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: "00f067aa0ba902b7",
        traceFlags: Otel.TraceFlags.SAMPLED,
        traceState: Otel.createTraceState("congo=t61rcWkgMzE")
      })
      const base = options()
      const messages = yield* Effect.promise(async () => {
        const q = Otel.context.with(active, () =>
          query({ prompt: printTrace, options: { cwd: base.cwd, env: base.env, ...allow } }))
        const out: Array<Message.SdkMessage> = []
        for await (const message of q) {
          out.push(message)
        }
        return out
      })
      expect(resultOf(messages)).toBe(
        "tool said: [00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01|congo=t61rcWkgMzE]"
      )
    }))

  live(
    "exported with @effect/opentelemetry to an OTLP receiver: the SDK's spans under the caller's, the CLI's parent among them",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const receiver = yield* OtlpReceiver.start
        const tracing = OtlpTracer.layer({ url: `${receiver.url}/v1/traces`, resource: { serviceName: "test" } }).pipe(
          Layer.provide(OtlpSerialization.layerJson),
          Layer.provide(FetchHttpClient.layer)
        )
        // the tracer's scope closes after the query: the exporter sends what it holds
        const messages = yield* Stream.runCollect(ClaudeAgent.query(printTrace, options(allow))).pipe(
          Effect.withSpan("app.caller"),
          Effect.provide(tracing)
        )
        const match = /^tool said: \[00-([0-9a-f]{32})-([0-9a-f]{16})-01\|\]$/.exec(resultOf(Chunk.toArray(messages)))
        const spans = receiver.spans()
        const named = (name: string) => spans.filter((s) => s.name === name)
        expect(named("app.caller")).toHaveLength(1)
        expect(named("ClaudeAgent.query")).toHaveLength(1)
        const [caller] = named("app.caller")
        const [sdk] = named("ClaudeAgent.query")
        expect(caller!.parentSpanId).toBe(undefined)
        expect(sdk!.parentSpanId).toBe(caller!.spanId)
        expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([caller!.traceId]))
        // every exported span's parent was exported too, up to the caller's
        const ids = new Set(spans.map((s) => s.spanId))
        expect(spans.filter((s) => s.parentSpanId !== undefined && !ids.has(s.parentSpanId))).toEqual([])
        // the CLI was started under the SDK's query span, in the caller's trace
        expect(match?.slice(1)).toEqual([caller!.traceId, sdk!.spanId])
      })
  )
})
