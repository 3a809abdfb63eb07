/**
 * Sessions as cluster entities: a single-machine cluster on an SQLite file (no server). Each session is an entity
 * that owns one CLI; the runner is stopped and started again on the same file, and the sessions carry on with their
 * history.
 *
 *   npm run example -- cluster
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer, Stream } from "effect"
import { Message, NodeClaudeAgent } from "effect-claude-agent"
import { AgentCluster } from "effect-claude-agent/cluster"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { exampleOptions } from "./_offline.js"

/** One turn of the session `id`: prints the prompt and the agent's answer. */
const say = (id: string, prompt: string) =>
  Effect.gen(function*() {
    const session = yield* AgentCluster.session(id)
    yield* Console.log(`[${id}] > ${prompt}`)
    yield* session.turn(prompt).pipe(
      Stream.filter(Message.isAssistantMessage),
      Stream.runForEach((message) => Console.log(`[${id}] ${Message.text(message)}`))
    )
  })

const program = Effect.gen(function*() {
  const options = yield* exampleOptions()
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-cluster-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  // the runner, its storage and the client, on one SQLite file; the sessions' CLIs use `options`
  const cluster = AgentCluster.layerSqlite({ filename: path.join(dir, "cluster.db"), options }).pipe(
    Layer.provide(NodeClaudeAgent.layer)
  )

  yield* Effect.all([say("ada", "SAY Nice to meet you, Ada."), say("bob", "SAY Hello, Bob.")]).pipe(
    Effect.provide(cluster)
  )
  yield* Console.log("-- runner stopped (every CLI reaped); starting it again on the same file --")
  yield* Effect.all([say("ada", "HISTORY"), say("bob", "HISTORY")]).pipe(Effect.provide(cluster))
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
