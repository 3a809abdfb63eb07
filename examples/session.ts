/**
 * A multi-turn session: one CLI process, several prompts; the agent remembers the earlier turns.
 *
 *   npm run example -- session
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent } from "effect-claude-agent"
import { exampleOptions } from "./_offline.js"

const program = Effect.gen(function*() {
  const options = yield* exampleOptions()
  const session = yield* ClaudeAgent.session(options)

  for (const prompt of ["SAY Nice to meet you, Ada.", "HISTORY"]) {
    yield* Console.log(`> ${prompt}`)
    yield* session.turn(prompt).pipe(
      Stream.filter(Message.isAssistantMessage),
      Stream.runForEach((message) => Console.log(Message.text(message)))
    )
  }
  yield* Console.log(`session id: ${yield* session.sessionId}`)
})

// closing the scope ends the session: stdin is closed and the CLI is reaped
program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
