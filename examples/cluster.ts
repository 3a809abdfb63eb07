/**
 * Sessions as cluster entities: a single-machine cluster on an SQLite file (no server). Each session is an entity
 * that owns one CLI; the runner is stopped and started again on the same file (its CLIs now on a config dir that has
 * never seen the sessions, as on another machine), and the sessions carry on with their history: the file holds the
 * session records and the transcripts.
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
  // the runner, its storage and the client, on one SQLite file; the sessions' CLIs use `options`, with their CLI
  // config dir under `configDir`
  const cluster = (configDir: string) =>
    AgentCluster.layerSqlite({
      filename: path.join(dir, "cluster.db"),
      options: { ...options, env: { ...options.env, CLAUDE_CONFIG_DIR: path.join(dir, configDir) } }
    }).pipe(Layer.provide(NodeClaudeAgent.layer))

  yield* Effect.all([say("ada", "SAY Nice to meet you, Ada."), say("bob", "SAY Hello, Bob.")]).pipe(
    Effect.provide(cluster("machine-a"))
  )
  yield* Console.log(
    "-- runner stopped (every CLI reaped); starting it again on the same file, on another config dir --"
  )
  yield* Effect.gen(function*() {
    yield* Effect.all([say("ada", "HISTORY"), say("bob", "HISTORY")])
    const ada = yield* AgentCluster.session("ada")
    const origin = yield* ada.origin
    yield* Console.log(`[ada] session ${yield* ada.sessionId}: ${origin.kind}, state ${yield* ada.state}`)
  }).pipe(Effect.provide(cluster("machine-b")))
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
