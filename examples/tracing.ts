/**
 * Tracing: the SDK's public operations are Effect spans (`ClaudeAgent.session`, `Session.initialize`,
 * `Session.turn`, `Session.interrupt`, `SdkMcp.callTool`, …), nested under your own spans, and the CLI it starts
 * inherits the trace (`TRACEPARENT` in its environment), so Claude Code's own spans can join it. Here
 * `@effect/opentelemetry`'s OTLP exporter (over @effect/platform's HttpClient: no OpenTelemetry SDK needed) sends them
 * to an OTLP/HTTP endpoint — a local receiver standing in for your collector — and the example prints the tree the
 * receiver got.
 *
 *   npm run example -- tracing
 *
 * Against a real collector: `OtlpTracer.layer({ url: "http://localhost:4318/v1/traces", … })`.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Fiber, Layer, Schema, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent, SdkMcp } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"
import * as OtlpReceiver from "./_otlpReceiver.js"

/** Exports every span to `url` as OTLP/JSON; what is still buffered is sent when the layer's scope closes. */
const OtlpTracing = (url: string) =>
  OtlpTracer.layer({ url, resource: { serviceName: "tracing-example" }, exportInterval: "1 second" }).pipe(
    Layer.provide(OtlpSerialization.layerJson),
    Layer.provide(FetchHttpClient.layer)
  )

// ---------------------------------------------------------------------------------------------------------------------
// The traced program: a session with a tool call, then an interrupted turn.
// ---------------------------------------------------------------------------------------------------------------------

const { reply, stall, toolUse } = ScriptedModelServer
const script = [
  reply(toolUse("mcp__clock__now", { timeZone: "UTC" })), // turn 1: the model calls our tool…
  reply("It is morning in UTC."), //                          …and answers
  stall(60_000) //                                             turn 2: the model takes forever; we interrupt it
]

const now = SdkMcp.tool(
  "now",
  "The current time",
  Schema.Struct({ timeZone: Schema.String }),
  ({ timeZone }) => Effect.sync(() => new Date().toLocaleTimeString("en-GB", { timeZone }))
)

const program = Effect.gen(function*() {
  const options = yield* exampleOptions(script)
  const clock = yield* SdkMcp.createSdkMcpServer({ name: "clock", tools: [now], alwaysLoad: true })
  const session = yield* ClaudeAgent.session({ ...options, mcpServers: { clock }, allowedTools: ["mcp__clock__now"] })

  yield* session.turn("What time is it in UTC?").pipe(
    Stream.filter(Message.isResultMessage),
    Stream.runForEach((result) =>
      Effect.zipRight(
        Effect.annotateCurrentSpan("cost", Message.formatCost(result.total_cost_usd)),
        Console.log(result.subtype === "success" ? result.result : result.subtype)
      )
    ),
    Effect.withSpan("app.askTime") // your own spans: the SDK's spans nest under them
  )

  const slow = yield* session.turn("Write a very long essay.").pipe(Stream.runDrain, Effect.fork)
  yield* Effect.sleep("500 millis")
  yield* session.interrupt
  yield* Fiber.join(slow)
  yield* Console.log("the essay was interrupted")
}).pipe(Effect.scoped, Effect.withSpan("example"))

const main = Effect.gen(function*() {
  const receiver = yield* OtlpReceiver.start
  // the tracer's scope closes when the program is done: the exporter sends what it still holds
  yield* program.pipe(Effect.provide(OtlpTracing(`${receiver.url}/v1/traces`)))
  const spans = receiver.spans()
  yield* Console.log(`\nthe OTLP receiver got ${spans.length} spans:\n${OtlpReceiver.tree(spans)}`)
  if (!spans.some((s) => s.name === "Session.turn")) return yield* Effect.dieMessage("no Session.turn span exported")
}).pipe(Effect.scoped)

main.pipe(Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
