/**
 * One-shot query: send a prompt, print the answer and what it cost.
 *
 *   npm run example -- query
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent } from "effect-claude-agent"
import { exampleOptions } from "./_offline.js"

const program = Effect.gen(function*() {
  const options = yield* exampleOptions()
  yield* ClaudeAgent.query("SAY The answer is 4.", { ...options, maxTurns: 1 }).pipe(
    Stream.runForEach((message) => {
      if (message.type === "assistant") return Console.log(`assistant: ${Message.text(message)}`)
      if (message.type === "result") {
        return Console.log(
          `${message.subtype} after ${message.num_turns} turn(s), ${Message.formatCost(message.total_cost_usd)}`
        )
      }
      return Effect.void
    })
  )
})

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
