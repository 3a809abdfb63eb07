/**
 * A session that outlives its machine: every transcript entry is mirrored to a SQLite file (a `TranscriptStore`),
 * then the session is resumed — and forked — with a config dir that has never seen it (another "machine"), its
 * whole history, tool call included, loaded from the store before the CLI starts.
 *
 *   npm run example -- transcript-store
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer, Option, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  type AgentOptions,
  ClaudeAgent,
  Message,
  NodeClaudeAgent,
  SessionHistory,
  TranscriptStore
} from "effect-claude-agent"
import { TranscriptStoreSql } from "effect-claude-agent/sql"
import { exampleOptions } from "./_offline.js"

/** A scratch directory removed at the end: a machine's config dir, or the database's home. */
const scratch = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** One session on one "machine" (its own config dir): runs the prompts, prints the replies, closes. */
const chat = (options: AgentOptions.Options, machine: string, prompts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const configDir = yield* scratch(`eca-${machine}-`)
    const session = yield* ClaudeAgent.session({ ...options, env: { ...options.env, CLAUDE_CONFIG_DIR: configDir } })
    yield* Console.log(`-- machine ${machine}: session ${session.origin.sessionId} (${session.origin.kind})`)
    for (const prompt of prompts) {
      yield* session.turn(prompt).pipe(
        Stream.filter(Message.isResultMessage),
        Stream.runForEach((m) => Console.log(`> ${prompt}\n${m.subtype === "success" ? m.result : m.subtype}`))
      )
    }
    return yield* session.sessionId
  }).pipe(Effect.scoped) // the close waits for the last entries to reach the store

const program = Effect.gen(function*() {
  const options = yield* exampleOptions()
  const store = yield* TranscriptStore.TranscriptStore

  const id = yield* chat(options, "A", ["SAY The secret is 42.", `TOOL Bash {"command":"echo tool output kept"}`])

  const projectKey = SessionHistory.encodeCwd(options.cwd)
  const entries = Option.getOrElse(yield* store.load({ projectKey, sessionId: id }), () => [])
  const kinds = new Map<string, number>()
  for (const e of entries) kinds.set(e.type, (kinds.get(e.type) ?? 0) + 1)
  yield* Console.log(
    `\nthe store holds ${entries.length} entries: ${[...kinds].map(([k, n]) => `${k}×${n}`).join(", ")}\n`
  )

  // machine B has no transcript of its own: the session comes from the store
  yield* chat({ ...options, resume: id }, "B", ["HISTORY"])
  // machine C forks it: a new session id, the same history
  yield* chat({ ...options, resume: id, forkSession: true }, "C", ["HISTORY"])
  yield* Console.log(`\nsessions in the store: ${(yield* store.list(projectKey)).length}`)
})

const database = Layer.unwrapScoped(
  Effect.map(
    scratch("eca-db-"),
    (dir) => TranscriptStoreSql.layerSqlite({ filename: path.join(dir, "transcripts.db") })
  )
)

program.pipe(
  Effect.scoped,
  Effect.provide(Layer.merge(NodeClaudeAgent.layer, database)),
  NodeRuntime.runMain
)
