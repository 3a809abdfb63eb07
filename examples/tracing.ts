/**
 * Tracing: the SDK's public operations are Effect spans (`ClaudeAgent.session`, `Session.initialize`,
 * `Session.turn`, `Session.interrupt`, `SdkMcp.callTool`, …), nested under your own spans. Any Effect `Tracer` sees
 * them — `@effect/opentelemetry` exports them to OpenTelemetry; here a small console tracer (no dependencies)
 * collects them and prints the tree.
 *
 *   npm run example -- tracing
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Exit, Fiber, Layer, Option, Schema, Stream, Tracer } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent, SdkMcp } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { randomBytes } from "node:crypto"
import { exampleOptions } from "./_offline.js"

// ---------------------------------------------------------------------------------------------------------------------
// A console tracer: records every span; `printTree` prints them as a tree with durations.
// ---------------------------------------------------------------------------------------------------------------------

const finished: Array<Tracer.Span> = []

class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = randomBytes(8).toString("hex")
  readonly traceId: string
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    readonly links: Array<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.traceId = Option.match(parent, { onNone: () => randomBytes(16).toString("hex"), onSome: (p) => p.traceId })
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    finished.push(this)
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event() {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
}

const ConsoleTracer = Layer.setTracer(Tracer.make({
  span: (name, parent, context, links, startTime, kind) =>
    new RecordedSpan(name, parent, context, [...links], startTime, kind),
  context: (f) => f()
}))

const printTree = Effect.suspend(() => {
  const childrenOf = (id: string | undefined) =>
    finished
      .filter((s) => Option.getOrUndefined(s.parent)?.spanId === id)
      .sort((a, b) => Number(a.status.startTime - b.status.startTime))
  const lines: Array<string> = []
  const walk = (span: Tracer.Span, depth: number) => {
    const { status } = span
    const ms = status._tag === "Ended" ? `${(Number(status.endTime - status.startTime) / 1e6).toFixed(1)} ms` : "…"
    const outcome = status._tag === "Ended" && Exit.isFailure(status.exit)
      ? Exit.isInterrupted(status.exit) ? " (interrupted)" : " (failed)"
      : ""
    const attributes = [...span.attributes].map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ")
    lines.push(`${"  ".repeat(depth)}${span.name.padEnd(36 - 2 * depth)} ${ms.padStart(10)}${outcome} ${attributes}`)
    childrenOf(span.spanId).forEach((child) => walk(child, depth + 1))
  }
  const ids = new Set(finished.map((s) => s.spanId))
  finished.filter((s) => !ids.has(Option.getOrUndefined(s.parent)?.spanId ?? "")).forEach((root) => walk(root, 0))
  return Console.log(`\nspans:\n${lines.join("\n")}`)
})

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

program.pipe(
  Effect.provide(NodeClaudeAgent.layer),
  Effect.ensuring(printTree),
  Effect.provide(ConsoleTracer),
  NodeRuntime.runMain
)
