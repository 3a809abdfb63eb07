/**
 * Structured output: ask for JSON that matches a schema, and get it back typed. The schema is an Effect Schema; the
 * SDK sends its JSON Schema to the CLI (`outputFormat`), which makes the model answer through a `StructuredOutput`
 * tool and puts the validated JSON in the result's `structured_output`, decoded with `Message.structuredOutput`.
 *
 *   npm run example -- structured-output
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

const Triage = Schema.Struct({
  category: Schema.Literal("bug", "billing", "question"),
  urgency: Schema.Int.pipe(Schema.between(1, 5)).annotations({ description: "1 = whenever, 5 = now" }),
  summary: Schema.String.annotations({ description: "one sentence" })
})

const ticket = "Since this morning every invoice PDF I download is blank, and our accountant needs them today."

// Offline: the scripted model answers the way the real one does, by calling the CLI's StructuredOutput tool with the
// JSON (the CLI checks it against the schema and ends the turn).
const script = [
  ScriptedModelServer.reply(ScriptedModelServer.toolUse("StructuredOutput", {
    category: "bug",
    urgency: 4,
    summary: "Invoice PDFs download blank; needed today."
  }))
]

const program = Effect.gen(function*() {
  const options = yield* exampleOptions(script)
  const result = yield* ClaudeAgent.query(`Triage this support ticket:\n\n${ticket}`, {
    ...options,
    // an Effect Schema: the SDK sends its JSON Schema
    outputFormat: { type: "json_schema", schema: Triage }
  }).pipe(
    Stream.filter(Message.isResultMessage),
    Stream.runLast,
    Effect.flatten // the query always ends with a result; no result would be a NoSuchElementException
  )
  if (result.subtype !== "success") return yield* Effect.fail(`the model gave no valid answer: ${result.subtype}`)

  // `structured_output` is `unknown` on the wire: decode it with the same schema into a typed value
  const triage = yield* Message.structuredOutput(Triage)(result)
  yield* Console.log(`category: ${triage.category}\nurgency:  ${"!".repeat(triage.urgency)} (${triage.urgency}/5)`)
  yield* Console.log(`summary:  ${triage.summary}`)
  yield* Console.log(`(cost ${Message.formatCost(result.total_cost_usd)}, ${result.num_turns} turn(s))`)
})

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
