/**
 * Hooks: an audit log of what the agent does (prompts, tool calls, the end of each turn), and a guardrail that
 * blocks dangerous shell commands before they run — whatever the permission policy says.
 *
 *   npm run example -- hooks
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer, Stream } from "effect"
import { ClaudeAgent, Hooks, Message, NodeClaudeAgent, Permissions } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

const { reply, toolUse } = ScriptedModelServer
const bash = (command: string) => toolUse("Bash", { command, description: "scripted" })

// Offline, the scripted model tries these commands, one per model request.
const script = [
  reply("Let me look around first.", bash("ls")),
  reply(bash("rm -rf /")),
  reply(bash("sudo apt-get install cowsay")),
  reply("I listed the folder; the other two commands were blocked.")
]

/** The `command` of a Bash call (`tool_input` is the tool's raw input). */
const commandOf = (input: { readonly tool_input: unknown }) =>
  typeof input.tool_input === "object" && input.tool_input !== null && "command" in input.tool_input
    ? String(input.tool_input.command)
    : ""

// Guardrails: PreToolUse hooks run before the permission check; a deny here is final.
const Guardrails = Hooks.layer({
  PreToolUse: [{
    matcher: "Bash",
    hooks: [
      // `validate`: deny when the predicate is false
      Hooks.validate((input) => !/\brm\s+-rf\s+\//.test(commandOf(input)), "no rm -rf on absolute paths"),
      // any Effect can decide: `Hooks.deny(reason)` blocks the call and tells the model why
      (input) =>
        Effect.gen(function*() {
          if (!/(^|\s|;|&&)sudo\s/.test(commandOf(input))) return {} // carry on
          yield* Console.log(`[guard] blocked: ${commandOf(input)}`)
          return Hooks.deny("sudo is not available to the agent")
        })
    ]
  }]
})

// The audit log: one line per event. (A real one would append to a file or a database.)
const audit = (event: string, detail: string) =>
  Console.log(`[audit ${new Date().toISOString().slice(11, 23)}] ${event.padEnd(16)} ${detail}`)

const AuditLog = Hooks.layer({
  UserPromptSubmit: [{ hooks: [(input) => Effect.as(audit("UserPromptSubmit", input.prompt), {})] }],
  PostToolUse: [{
    hooks: [(input) =>
      Effect.as(
        audit("PostToolUse", `${input.tool_name} ${JSON.stringify(input.tool_input)} (${input.duration_ms ?? "?"} ms)`),
        {} // {}: carry on
      )]
  }],
  Stop: [{ hooks: [(input) => Effect.as(audit("Stop", input.last_assistant_message ?? ""), {})] }]
})

// Hook layers compose: each adds its hooks to those provided to it.
const HooksLive = AuditLog.pipe(Layer.provide(Guardrails))

const program = Effect.gen(function*() {
  const options = yield* exampleOptions(script)
  yield* ClaudeAgent.query("Look around this folder, then clean up the whole disk and install cowsay.", {
    ...options,
    tools: ["Bash"]
  }).pipe(
    Stream.runForEach((message) => {
      if (message.type === "user") {
        return Effect.forEach(
          Message.toolResults(message),
          (r) => Console.log(`[tool result] ${r.is_error === true ? "error: " : ""}${Message.toolResultText(r).trim()}`)
        )
      }
      if (message.type === "result") {
        return Console.log(`\n${message.subtype === "success" ? message.result : message.subtype}`)
      }
      return Effect.void
    }),
    Effect.provide(HooksLive),
    // defence in depth: the permission policy only allows harmless commands anyway
    Effect.provide(Permissions.layer(Permissions.rules({ allow: ["Bash(ls:*)"] })))
  )
})

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
