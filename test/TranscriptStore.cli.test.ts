import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, Message, SessionHistory, TranscriptStore, type Transport } from "effect-claude-agent"
import { TranscriptStoreSql } from "effect-claude-agent/sql"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { layerPgStore, pgUrl } from "./transcriptStorePg.js"

/** The stores the sessions run with: in memory, and SQLite on a temporary file (removed after). */
const stores: ReadonlyArray<readonly [string, Layer.Layer<TranscriptStore.TranscriptStore, unknown>]> = [
  ["memory", TranscriptStore.layerMemory],
  [
    "SQLite",
    Layer.unwrapScoped(
      Effect.map(tempDir("eca-sqlite-"), (dir) => TranscriptStoreSql.layerSqlite({ filename: path.join(dir, "t.db") }))
    )
  ],
  ...(pgUrl === undefined ? [] : [["PostgreSQL", layerPgStore(pgUrl)] as const])
]

const lastResult = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).filter(Message.isResultMessage).at(-1)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

/** One session (own process, own scope) that runs `prompts` as turns and closes. */
const runSession = (options: Parameters<typeof ClaudeAgent.session>[0], prompts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const session = yield* ClaudeAgent.session(options)
    const replies: Array<string> = []
    const seen: Array<Message.SdkMessage> = []
    for (const prompt of prompts) {
      const messages = yield* Stream.runCollect(session.turn(prompt))
      seen.push(...messages)
      replies.push(lastResult(messages))
    }
    return { sessionId: yield* session.sessionId, replies, seen }
  }).pipe(Effect.scoped)

const BASH = `TOOL Bash {"command":"echo from-the-tool"}`

describe.each(stores)("TranscriptStore against the real CLI (%s)", (_name, storeLayer) => {
  const live = <A, E>(
    name: string,
    body: () => Effect.Effect<A, E, Transport.Transport | TranscriptStore.TranscriptStore | Scope.Scope>
  ) =>
    it.live(
      name,
      () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(Layer.merge(NodeClaudeAgent.layer, storeLayer))),
      120_000
    )

  live(
    "mirrors every entry, tool calls included; resumes and forks on other config dirs from the store",
    () =>
      Effect.gen(function*() {
        const { options, server, cwd } = yield* realCli()
        const store = yield* TranscriptStore.TranscriptStore
        const machineA = server.env({ freshHome: true })
        const first = yield* runSession(options({ env: machineA }), ["SAY one", BASH])
        expect(first.replies[1]).toContain("from-the-tool")
        // the mirror frames never reach the consumer
        expect(first.seen.some((m) => m.type === "unknown")).toBe(false)

        const projectKey = SessionHistory.encodeCwd(fs.realpathSync(cwd))
        const stored = Option.getOrThrow(yield* store.load({ projectKey, sessionId: first.sessionId }))
        const local = fs.readFileSync(
          path.join(machineA["CLAUDE_CONFIG_DIR"]!, "projects", projectKey, `${first.sessionId}.jsonl`),
          "utf8"
        ).trim().split("\n").map((line) => JSON.parse(line) as TranscriptStore.Entry)
        // every entry the CLI wrote, but its API request records (which it does not mirror), in order, written at close
        // included (the last prompt and the cost state come after the result and on exit)
        const mirrorable = local.filter((e) => !e.type.startsWith("api-request"))
        expect(stored).toEqual(mirrorable)
        expect(stored.map((e) => e.type)).toContain("cost-state")
        expect(JSON.stringify(stored)).toContain("tool_use")
        expect(JSON.stringify(stored)).toContain("tool_result")
        expect(yield* store.list(projectKey)).toEqual([{ sessionId: first.sessionId, mtime: expect.any(Number) }])

        // machine B: a config dir that has never seen the session
        const machineB = server.env({ freshHome: true })
        const resumed = yield* runSession(options({ env: machineB, resume: first.sessionId }), ["HISTORY"])
        expect(resumed.sessionId).toBe(first.sessionId)
        expect(resumed.replies[0]).toContain(`user prompts: SAY one | ${BASH} | HISTORY`)
        // the model saw the tool call and its result again
        const lastRequest = (yield* server.requests).filter((r) => !r.isProbe).at(-1)
        expect(JSON.stringify(lastRequest?.messages)).toContain("from-the-tool")
        // and the store has the new turn
        const after = Option.getOrThrow(yield* store.load({ projectKey, sessionId: first.sessionId }))
        expect(after.length).toBeGreaterThan(stored.length)
        expect(JSON.stringify(after)).toContain("HISTORY")

        // machine C forks it: a new id, the whole history (the turn machine B added included)
        const fork = yield* runSession(
          options({ env: server.env({ freshHome: true }), resume: first.sessionId, forkSession: true }),
          ["HISTORY"]
        )
        expect(fork.sessionId).not.toBe(first.sessionId)
        expect(fork.replies[0]).toContain(`user prompts: SAY one | ${BASH} | HISTORY | HISTORY`)
        expect(Option.isSome(yield* store.load({ projectKey, sessionId: fork.sessionId }))).toBe(true)
      })
  )
})
