/**
 * Decide which tool calls run: rules first, a callback for what the rules do not cover, and answers to the
 * model's questions (`AskUserQuestion`) from your own code.
 *
 *   npm run example -- permissions
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent, Permissions } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

const { reply, toolUse } = ScriptedModelServer

// Offline, the scripted model makes these calls, one per model request (online, the real model decides).
const script = [
  reply("Creating the notes file.", toolUse("Bash", { command: "touch notes.txt", description: "create notes" })),
  reply(toolUse("Bash", { command: "rm -rf build", description: "clean the build" })),
  reply(toolUse("Bash", { command: "mkdir -p docs", description: "make a docs folder" })),
  reply(toolUse("AskUserQuestion", {
    questions: [{
      question: "Which license should the project use?",
      header: "License",
      options: [
        { label: "MIT", description: "permissive" },
        { label: "Apache-2.0", description: "permissive, with a patent grant" }
      ],
      multiSelect: false
    }]
  })),
  reply("Done: notes.txt and docs/ created, build/ kept, license MIT.")
]

/** A request, for printing. */
const describe = ({ input, toolName }: Permissions.PermissionRequest) =>
  toolName === "Bash" ? `Bash(${String(input["command"])})` : toolName

// Whatever no rule covers: here a stand-in for a human (a Slack message, a web UI, …) — any Effect, as slow as it
// needs to be (up to the layer's timeout, then it is a deny: permissions fail closed).
const askOnCall = (request: Permissions.PermissionRequest) =>
  Effect.gen(function*() {
    yield* Console.log(`[on-call]    asked about ${describe(request)}`)
    yield* Effect.sleep("100 millis")
    const command = String(request.input["command"] ?? "")
    return command.startsWith("mkdir ")
      ? Permissions.allow()
      : Permissions.deny(`on-call did not approve ${request.toolName}: ${command}`)
  })

// AskUserQuestion: pick an answer for each question (the label of one option; a UI would show them).
const answerQuestions = (questions: ReadonlyArray<Permissions.Question>) =>
  Effect.gen(function*() {
    const answers = Object.fromEntries(questions.map((q) => [q.question, q.options[0]?.label ?? ""]))
    yield* Console.log(`[user]       answered ${JSON.stringify(answers)}`)
    return answers
  })

const policy = Permissions.askUserQuestion(
  answerQuestions,
  Permissions.rules({
    allow: ["Read", "Grep", "Bash(touch:*)"],
    deny: ["Bash(rm:*)", "WebFetch"],
    fallback: askOnCall
  })
)

// Print every decision as it is made.
const logged: Permissions.Policy = (request) =>
  policy(request).pipe(
    Effect.tap((decision) =>
      Console.log(
        `[permission] ${describe(request)} → ${decision.behavior}` +
          (decision.behavior === "deny" ? ` (${decision.message})` : "")
      )
    )
  )

const program = Effect.gen(function*() {
  const options = yield* exampleOptions(script)
  yield* ClaudeAgent.query(
    "Create notes.txt, remove the build folder, create a docs folder, then ask me which license to use.",
    { ...options, tools: ["Bash", "Read", "Grep", "AskUserQuestion"] }
  ).pipe(
    Stream.runForEach((message) => {
      switch (message.type) {
        case "user":
          // what the model is told about each call: the tool's output, or why it was denied
          return Effect.forEach(
            Message.toolResults(message),
            (r) => Console.log(`[tool result] ${r.is_error === true ? "error: " : ""}${Message.toolResultText(r)}`)
          )
        case "result":
          return Console.log(
            `\n${message.subtype === "success" ? message.result : message.subtype}\n` +
              `denied: ${message.permission_denials.map((d) => JSON.stringify(d.tool_input)).join(", ")}`
          )
        default:
          return Effect.void
      }
    }),
    Effect.provide(Permissions.layer(logged, { timeout: "2 minutes" }))
  )
})

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
