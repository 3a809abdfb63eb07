// The real CLI behind a SessionPool whose Node layer was built in a scope that closed before any session started
// (`Layer.build(...)` then `Effect.provide(NodeClaudeAgent.layer)`): found through CLAUDE_CLI_PATH, so its version
// comes from its own `--version` run, it answers a warm session and a borrowed one.
import { expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { CliResolver, Message, NodeClaudeAgent, SessionPool } from "effect-claude-agent"
import { noClaudeLeft, realCli } from "./support/cli.js"

it.live(
  "Effect.provide(NodeClaudeAgent.layer) around Layer.build: the pool's sessions run the real CLI after the build",
  () =>
    noClaudeLeft(Effect.scoped(Effect.gen(function*() {
      const bundled = yield* Effect.flatMap(CliResolver.make(), (resolver) => resolver.resolve({ env: {} }))
      const { options } = yield* realCli()
      const poolOptions = options({ env: { CLAUDE_CLI_PATH: bundled.path } })
      const pool = yield* Layer.build(SessionPool.layer({ maxConcurrent: 2, warm: 1, options: poolOptions })).pipe(
        Effect.provide(NodeClaudeAgent.layer),
        Effect.map(Context.get(SessionPool.SessionPool))
      )
      const ask = (text: string) =>
        pool.query(text).pipe(
          Stream.runCollect,
          Effect.map((messages) => Chunk.toReadonlyArray(messages).find(Message.isResultMessage))
        )
      // twice: the first on the warm session (or beside it), the second on the refill or a fresh one
      expect(yield* ask("SAY one")).toMatchObject({ subtype: "success", result: "one" })
      expect(yield* ask("SAY two")).toMatchObject({ subtype: "success", result: "two" })
    }))),
  120_000
)
