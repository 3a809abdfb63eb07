/**
 * Sessions outlive their process: run a session, close it, resume it later by id (the agent remembers), then read
 * the working directory's session history from disk with `SessionHistory`.
 *
 *   npm run example -- resume-and-history
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Stream } from "effect"
import { type AgentOptions, ClaudeAgent, Message, NodeClaudeAgent, SessionHistory } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

// Offline, a tiny scripted "model" that really reads the conversation the CLI sends it: a question is answered
// from the earlier prompts, so the answer after the resume shows that the history came back.
const model: ScriptedModelServer.Handler = ({ lastUserText = "", userPrompts }) => {
  if (!lastUserText.trim().endsWith("?")) return ScriptedModelServer.reply("Noted.")
  const name = userPrompts.map((p) => /my name is (\w+)/i.exec(p)?.[1]).find((n) => n !== undefined)
  return ScriptedModelServer.reply(name === undefined ? "I don't know your name." : `Your name is ${name}.`)
}

/** Opens a session, runs the prompts, prints the answers, and closes it (the CLI exits); returns its id. */
const chat = (options: AgentOptions.Options, prompts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const session = yield* ClaudeAgent.session(options)
    yield* Console.log(`-- session ${session.origin.sessionId} (${session.origin.kind})`)
    for (const prompt of prompts) {
      yield* session.turn(prompt).pipe(
        Stream.filter(Message.isAssistantMessage),
        Stream.runForEach((m) => Console.log(`> ${prompt}\n${Message.text(m)}`))
      )
    }
    return yield* session.sessionId
  }).pipe(Effect.scoped) // closing the scope ends the CLI; its transcript is complete on disk

const program = Effect.gen(function*() {
  const options = yield* exampleOptions({ handler: model })

  const id = yield* chat(options, ["My name is Ada.", "I like tea."])
  // later (another process, another day): resume by id
  yield* chat({ ...options, resume: id }, ["What is my name?"])
  // or continue it under a new id, leaving the original as it was
  yield* chat({ ...options, resume: id, forkSession: true }, ["Do you remember my name?"])

  // Session history, read from the CLI's transcripts (offline they live in the scripted server's temporary HOME)
  const store = yield* SessionHistory.SessionHistory.pipe(
    Effect.provide(NodeClaudeAgent.layerSessionHistory({ configDir: options.env?.["CLAUDE_CONFIG_DIR"] }))
  )
  const sessions = yield* store.list(options.cwd)
  yield* Console.log(`\n${sessions.length} sessions in ${options.cwd}, newest first:`)
  for (const info of sessions) {
    yield* Console.log(`\n${info.sessionId}  "${info.firstPrompt}"  ${info.messageCount} messages`)
    yield* store.messages(info.sessionId, options.cwd).pipe(
      Stream.runForEach((m) => Console.log(`  ${m.role.padEnd(9)} ${m.text}`))
    )
  }
})

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
