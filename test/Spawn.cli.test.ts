// spawnClaudeCodeProcess against the real CLI: the caller's spawn function (node:child_process here, as a VM or
// container runner would) starts the pinned CLI, which answers from the scripted model server.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Message } from "effect-claude-agent"
import { query } from "effect-claude-agent/promise"
import { noClaudeLeft, realCli } from "./support/cli.js"
import { localSpawn } from "./support/spawn.js"

describe("spawnClaudeCodeProcess against the real CLI", () => {
  it.live(
    "the spawn function runs the bundled CLI: a reply, then nothing left running",
    () =>
      noClaudeLeft(Effect.scoped(Effect.gen(function*() {
        const { options } = yield* realCli()
        const base = options()
        const { calls, fn: spawnCli, started } = localSpawn()
        const messages = yield* Effect.promise(async () => {
          const out: Array<Message.SdkMessage> = []
          const q = query({
            prompt: "SAY hello from a spawn function",
            options: { cwd: base.cwd ?? ".", env: base.env ?? {}, spawnClaudeCodeProcess: spawnCli }
          })
          for await (const message of q) out.push(message)
          return out
        })
        expect(messages.filter(Message.isAssistantMessage).map(Message.text).join("")).toBe(
          "hello from a spawn function"
        )
        expect(calls).toHaveLength(1)
        expect(calls[0]!.command).toMatch(/claude(\.exe)?$/)
        expect(calls[0]!.cwd).toBe(base.cwd)
        expect(started[0]!.exitCode !== null || started[0]!.signalCode !== null).toBe(true)
      }))),
    120_000
  )
})
