/**
 * Steer a session mid-flight: interrupt a turn that takes too long, switch the model, and go on.
 *
 *   npm run example -- interrupt
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Fiber, Stream } from "effect"
import { ClaudeAgent, Message, NodeClaudeAgent } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

const program = Effect.gen(function*() {
  // offline, the first model call hangs (the scripted model stalls) so there is something to interrupt
  const options = yield* exampleOptions([ScriptedModelServer.stall(60_000)])
  const session = yield* ClaudeAgent.session(options)

  const slow = yield* session.turn("Write a very long essay about everything.").pipe(
    Stream.filter(Message.isResultMessage),
    Stream.runCollect,
    Effect.fork
  )
  yield* Effect.sleep("1 second")
  const receipt = yield* session.interrupt
  yield* Console.log(`interrupted (still queued: ${receipt.still_queued?.length ?? 0})`)
  const [result] = yield* Fiber.join(slow)
  yield* Console.log(`the long turn ended with: ${result?.subtype}`)

  yield* session.setModel("claude-haiku-4-5")
  yield* session.turn("SAY Short answer from a faster model.").pipe(
    Stream.filter(Message.isAssistantMessage),
    Stream.runForEach((message) => Console.log(`${message.message.model}: ${Message.text(message)}`))
  )
})

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
