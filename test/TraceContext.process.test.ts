// Trace context to the CLI: the child's environment gets TRACEPARENT (and TRACESTATE) from the caller's current Effect
// span, or in the Promise API from the OpenTelemetry context active when the query was called, unless the caller's
// `env` names them. Through the fake CLI and the real process layer.
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { expect, it } from "@effect/vitest"
import * as Otel from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { W3CTraceContextPropagator } from "@opentelemetry/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { ClaudeAgent, Transport } from "effect-claude-agent"
import { query } from "effect-claude-agent/promise"
import { FakeCli } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import * as os from "node:os"
import * as path from "node:path"
import { buildEnv, commandEnv } from "../src/internal/transport/env.js"
import { NodeExecutor } from "./support/process.js"
import { recordingTracer } from "./support/spans.js"

const TransportLive = Transport.layerProcess.pipe(Layer.provide(NodeExecutor))

const logged = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-trace-"))
  const log = path.join(dir, "log.json")
  return { dir, log, scenario: FakeCli.scenario([], { log, logEnv: ["TRACEPARENT", "TRACESTATE"] }) }
}

/** The trace variables the fake CLI was started with, `env` being the caller's. */
const childTrace = (env?: Transport.LaunchSpec["env"]) =>
  Effect.gen(function*() {
    const { dir, log, scenario } = logged()
    const transport = yield* Transport.Transport
    yield* Effect.scoped(Effect.gen(function*() {
      const connection = yield* transport.open(FakeCli.launch(scenario, env === undefined ? {} : { env }))
      yield* connection.endInput
      yield* connection.awaitExit
    }))
    const seen = (yield* FakeCli.readLog(log)).start!.env
    fs.rmSync(dir, { recursive: true, force: true })
    return { TRACEPARENT: seen["TRACEPARENT"], TRACESTATE: seen["TRACESTATE"] }
  })

/** A Promise API query through the fake CLI: the trace variables the CLI was started with. */
const promiseQueryTrace = async () => {
  const fake = FakeCli.executable()
  const { dir, log } = logged()
  const scenario = { ...FakeCli.echoScenario, log, logEnv: ["TRACEPARENT", "TRACESTATE"] }
  const q = query({
    prompt: "hi",
    options: {
      pathToClaudeCodeExecutable: fake.executable,
      executableArgs: [...fake.executableArgs],
      env: FakeCli.env(scenario)
    }
  })
  for await (const _ of q) { /* drain */ }
  const env = (await Effect.runPromise(FakeCli.readLog(log))).start!.env
  fs.rmSync(dir, { recursive: true, force: true })
  return { TRACEPARENT: env["TRACEPARENT"], TRACESTATE: env["TRACESTATE"] }
}

const parentOf = (span: Tracer.AnySpan) => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

it.live("the CLI gets TRACEPARENT from the caller's current span; none without a span", () =>
  Effect.gen(function*() {
    const { seen, span } = yield* Effect.gen(function*() {
      const span = yield* Effect.currentSpan
      return { span, seen: yield* childTrace() }
    }).pipe(Effect.withSpan("app.caller"))
    expect(seen).toEqual({ TRACEPARENT: parentOf(span), TRACESTATE: null })
    expect(seen.TRACEPARENT).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)

    expect(yield* childTrace()).toEqual({ TRACEPARENT: null, TRACESTATE: null })
  }).pipe(Effect.provide(TransportLive)))

it.live("the caller's own TRACEPARENT / TRACESTATE win (`undefined`: none at all); an inherited pair is replaced", () =>
  Effect.gen(function*() {
    const traced = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withSpan(effect, "app.caller")
    expect(yield* traced(childTrace({ TRACEPARENT: "00-caller", TRACESTATE: "mine=1" }))).toEqual({
      TRACEPARENT: "00-caller",
      TRACESTATE: "mine=1"
    })
    expect(yield* traced(childTrace({ TRACEPARENT: undefined }))).toEqual({ TRACEPARENT: null, TRACESTATE: null })

    // a pair inherited from this process's environment belongs to another trace: both replaced or removed
    process.env["TRACEPARENT"] = "00-11111111111111111111111111111111-2222222222222222-01"
    process.env["TRACESTATE"] = "stale=1"
    try {
      const { seen, span } = yield* traced(Effect.all({ span: Effect.currentSpan, seen: childTrace() }))
      expect(seen).toEqual({ TRACEPARENT: parentOf(span), TRACESTATE: null })
      // without a span, the inherited pair passes through like every other variable
      expect(yield* childTrace()).toEqual({ TRACEPARENT: process.env["TRACEPARENT"], TRACESTATE: "stale=1" })
    } finally {
      delete process.env["TRACEPARENT"]
      delete process.env["TRACESTATE"]
    }
  }).pipe(Effect.provide(TransportLive)))

it.live("an OpenTelemetry parent span (@effect/opentelemetry): its sampling flag and its trace state", () =>
  Effect.gen(function*() {
    const external = OtelTracer.makeExternalSpan({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: 0,
      traceState: "vendor=abc,other=1"
    })
    expect(yield* childTrace().pipe(Effect.withParentSpan(external))).toEqual({
      TRACEPARENT: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
      TRACESTATE: "vendor=abc,other=1"
    })
    // a child span of it: its own id, the trace state inherited
    const { seen, span } = yield* Effect.all({ span: Effect.currentSpan, seen: childTrace() }).pipe(
      Effect.withSpan("app.child"),
      Effect.withParentSpan(external)
    )
    expect(span.traceId).toBe(external.traceId)
    expect(seen).toEqual({ TRACEPARENT: parentOf(span), TRACESTATE: "vendor=abc,other=1" })
  }).pipe(Effect.provide(TransportLive)))

it.live("a custom tracer whose ids are not W3C ones: nothing is passed", () =>
  Effect.gen(function*() {
    const tracer = Tracer.make({
      span: (name, parent, context, links, startTime, kind) => {
        const span = Tracer.externalSpan({ traceId: "not-hex", spanId: "x", sampled: true })
        return {
          ...span,
          _tag: "Span",
          name,
          parent,
          context,
          links,
          status: { _tag: "Started", startTime },
          kind,
          attributes: new Map(),
          end: () => undefined,
          attribute: () => undefined,
          event: () => undefined,
          addLinks: () => undefined
        }
      },
      context: (f) => f()
    })
    expect(yield* childTrace().pipe(Effect.withSpan("app.caller"), Effect.withTracer(tracer))).toEqual({
      TRACEPARENT: null,
      TRACESTATE: null
    })
  }).pipe(Effect.provide(TransportLive)))

it.live("through a query: the CLI's parent span is the SDK's, in the caller's trace, under the caller's span", () =>
  Effect.gen(function*() {
    const { spans, tracer } = yield* recordingTracer
    const { dir, log } = logged()
    const scenario = { ...FakeCli.echoScenario, log, logEnv: ["TRACEPARENT"] }
    const program = FakeCli.executable()
    const caller = yield* Effect.gen(function*() {
      yield* ClaudeAgent.query("hi", {
        pathToClaudeCodeExecutable: program.executable,
        executableArgs: [...program.executableArgs],
        env: FakeCli.env(scenario)
      }).pipe(Stream.runDrain)
      return yield* Effect.currentSpan
    }).pipe(Effect.withSpan("app.caller"), Effect.withTracer(tracer))
    const traceparent = (yield* FakeCli.readLog(log)).start!.env["TRACEPARENT"]
    fs.rmSync(dir, { recursive: true, force: true })
    const [, traceId, spanId] = String(traceparent).split("-")
    expect(traceId).toBe(caller.traceId)
    const parent = spans.find((s) => s.spanId === spanId)
    expect(parent?.name).toBe("ClaudeAgent.query")
    expect(parent?.parent._tag === "Some" && parent.parent.value.spanId).toBe(caller.spanId)
  }).pipe(Effect.provide(TransportLive)))

it("Promise API: the OpenTelemetry context active at the call; none without", async () => {
  // no OpenTelemetry globals registered: nothing passed
  expect(await promiseQueryTrace()).toEqual({ TRACEPARENT: null, TRACESTATE: null })

  Otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  Otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  try {
    // registered, no active span: nothing passed
    expect(await promiseQueryTrace()).toEqual({ TRACEPARENT: null, TRACESTATE: null })
    const spanContext: Otel.SpanContext = {
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: Otel.TraceFlags.SAMPLED,
      traceState: Otel.createTraceState("congo=t61rcWkgMzE")
    }
    const active = Otel.trace.setSpanContext(Otel.context.active(), spanContext)
    // the context active when query() is called, not when its fibers run
    const running = Otel.context.with(active, promiseQueryTrace)
    expect(await running).toEqual({
      TRACEPARENT: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      TRACESTATE: "congo=t61rcWkgMzE"
    })
  } finally {
    Otel.context.disable()
    Otel.propagation.disable()
  }
})

it("neither entry loads @opentelemetry/api, nor does looking for an active span while no OpenTelemetry globals exist", async () => {
  const root = path.join(import.meta.dirname, "..")
  const script = `
    import { createRequire } from "node:module"
    await import("./src/index.ts")
    await import("./src/promise.ts")
    const { fromActiveOpenTelemetry } = await import("./src/internal/transport/traceContext.ts")
    const found = fromActiveOpenTelemetry()
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes("@opentelemetry"))
    console.log(JSON.stringify({ found: found ?? null, loaded }))
  `
  const tsx = path.join(root, "node_modules", "tsx", "dist", "loader.mjs")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", tsx, "--input-type=module", "-e", script],
    { cwd: root }
  )
  expect(JSON.parse(stdout)).toEqual({ found: null, loaded: [] })
})

it("the environment with a trace context: inherited plus additions unless an inherited TRACESTATE must go", () => {
  const parent = { PATH: "/bin" }
  const trace = { traceparent: "00-t" }
  const cases: ReadonlyArray<Parameters<typeof commandEnv>[0]> = [
    { parent, trace },
    { parent: { ...parent, TRACESTATE: "stale" }, trace },
    { parent: { ...parent, TRACESTATE: "stale" }, trace: { ...trace, tracestate: "s" } },
    { parent, env: { TRACEPARENT: undefined }, trace },
    { parent: { ...parent, TRACESTATE: "stale" }, env: { TRACESTATE: "mine" }, trace },
    { parent, env: { TRACEPARENT: "00-caller" }, trace },
    { parent, env: { FAKE: "1" }, mode: "replace", trace }
  ]
  const seen = cases.map((c) => {
    const { env, extend } = commandEnv(c)
    const full = extend ? { ...c.parent, ...env } : env
    expect(full).toEqual(buildEnv(c))
    return { extend, TRACEPARENT: full["TRACEPARENT"], TRACESTATE: full["TRACESTATE"] }
  })
  expect(seen).toEqual([
    { extend: true, TRACEPARENT: "00-t", TRACESTATE: undefined },
    { extend: false, TRACEPARENT: "00-t", TRACESTATE: undefined },
    { extend: true, TRACEPARENT: "00-t", TRACESTATE: "s" },
    { extend: true, TRACEPARENT: undefined, TRACESTATE: undefined },
    { extend: true, TRACEPARENT: "00-t", TRACESTATE: "mine" },
    { extend: true, TRACEPARENT: "00-caller", TRACESTATE: undefined },
    { extend: false, TRACEPARENT: "00-t", TRACESTATE: undefined }
  ])
})

it("Promise API: a propagator that throws or writes malformed headers: query() neither throws nor passes them", async () => {
  const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
  const writing = (fields: Record<string, unknown>): Otel.TextMapPropagator => ({
    inject: (_context, carrier: Record<string, unknown>) => Object.assign(carrier, fields),
    extract: (context) => context,
    fields: () => Object.keys(fields)
  })
  Otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  try {
    Otel.propagation.setGlobalPropagator({
      ...writing({}),
      inject: () => {
        throw new Error("propagator bug")
      }
    })
    expect(await promiseQueryTrace()).toEqual({ TRACEPARENT: null, TRACESTATE: null })
    Otel.propagation.disable()

    const cases: ReadonlyArray<
      readonly [Record<string, unknown>, { TRACEPARENT: string | null; TRACESTATE: string | null }]
    > = [
      [{ traceparent: parent, tracestate: "a=1\u0000b" }, { TRACEPARENT: parent, TRACESTATE: null }],
      [{ traceparent: parent, tracestate: "a=1\nINJECTED=1" }, { TRACEPARENT: parent, TRACESTATE: null }],
      [{ traceparent: parent, tracestate: `a=${"x".repeat(600)}` }, { TRACEPARENT: parent, TRACESTATE: null }],
      [{ traceparent: parent, tracestate: "a=1,b=2" }, { TRACEPARENT: parent, TRACESTATE: "a=1,b=2" }],
      [{ traceparent: `${parent}\nX=1`, tracestate: "a=1" }, { TRACEPARENT: null, TRACESTATE: null }],
      [{ traceparent: 42 }, { TRACEPARENT: null, TRACESTATE: null }]
    ]
    for (const [fields, expected] of cases) {
      Otel.propagation.setGlobalPropagator(writing(fields))
      expect(await promiseQueryTrace()).toEqual(expected)
      Otel.propagation.disable()
    }
  } finally {
    Otel.context.disable()
    Otel.propagation.disable()
  }
})

it.live("an OpenTelemetry trace state whose serialize throws or gives a malformed value: none passed", () =>
  Effect.gen(function*() {
    const span = (serialize: () => string) => {
      const traceState: Otel.TraceState = {
        set: () => traceState,
        unset: () => traceState,
        get: () => undefined,
        serialize
      }
      return OtelTracer.makeExternalSpan({
        traceId: "0af7651916cd43dd8448eb211c80319c",
        spanId: "b7ad6b7169203331",
        traceState
      })
    }
    const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    expect(
      yield* childTrace().pipe(Effect.withParentSpan(span(() => {
        throw new Error("serialize boom")
      })))
    ).toEqual({ TRACEPARENT: parent, TRACESTATE: null })
    expect(yield* childTrace().pipe(Effect.withParentSpan(span(() => "a=1\u0000")))).toEqual({
      TRACEPARENT: parent,
      TRACESTATE: null
    })
  }).pipe(Effect.provide(TransportLive)))
