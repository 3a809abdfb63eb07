import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, ClaudeAgent, Message, type Transport } from "effect-claude-agent"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { isAlive } from "./support/process.js"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

const resultText = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const r = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
  return r?.subtype === "success" ? r.result : r?.subtype
}

const REAL_CLAUDE = path.join(import.meta.dirname, "..", "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")

describe("auto-resume against the real CLI", () => {
  live("SIGKILL between two turns: the next prompt is answered with the history, one restart event", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli()
      const session = yield* ClaudeAgent.session(options({ autoResume: { maxRestarts: 3, initialDelayMillis: 50 } }))
      expect(resultText(yield* Stream.runCollect(session.turn("SAY before the crash")))).toBe("before the crash")
      const pid = Option.getOrThrow(session.pid)
      process.kill(pid, "SIGKILL")
      const after = yield* Stream.runCollect(session.turn("HISTORY"))
      const restarts = Chunk.toReadonlyArray(after).filter((m) => m.type === "session_restarted")
      expect(restarts).toHaveLength(1)
      expect(restarts[0]).toMatchObject({ attempt: 1, exit: { signal: "SIGKILL" }, session_id: session.origin.sessionId })
      expect(resultText(after)).toContain("user prompts: SAY before the crash | HISTORY")
      expect(isAlive(pid)).toBe(false)
      expect(Option.getOrThrow(session.pid)).not.toBe(pid)
      expect(yield* session.sessionId).toBe(session.origin.sessionId)
      const requests = (yield* server.requests).filter((r) => r.isMessages && !r.isProbe)
      expect(requests).toHaveLength(2)
    }))

  live("a prompt sent while the CLI is being replaced is answered exactly once", () =>
    Effect.gen(function*() {
      const { options, server } = yield* realCli()
      const session = yield* ClaudeAgent.session(options({ autoResume: { maxRestarts: 3, initialDelayMillis: 50 } }))
      yield* Stream.runDrain(session.turn("SAY one"))
      process.kill(Option.getOrThrow(session.pid), "SIGKILL")
      yield* session.send("SAY sent during the restart")
      const messages = yield* session.messages.pipe(Stream.takeUntil(Message.isResultMessage), Stream.runCollect)
      expect(resultText(messages)).toBe("sent during the restart")
      const asked = (yield* server.requests).filter((r) => r.lastUserText === "SAY sent during the restart")
      expect(asked).toHaveLength(1)
    }))

  live("a CLI that dies at every start-up ends after the configured attempts with the typed error", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const dir = yield* tempDir("eca-wrapper-")
      const counter = path.join(dir, "starts")
      const wrapper = path.join(dir, "claude")
      // the first start runs the real CLI; every later one crashes at once
      fs.writeFileSync(wrapper, [
        "#!/usr/bin/env bash",
        `if [ "$1" = "--version" ]; then exec "${REAL_CLAUDE}" "$@"; fi`,
        `echo x >> "${counter}"`,
        `if [ "$(wc -l < "${counter}")" -gt 1 ]; then echo "crashing at start-up" >&2; exit 3; fi`,
        `exec "${REAL_CLAUDE}" "$@"`
      ].join("\n"), { mode: 0o755 })
      const session = yield* ClaudeAgent.session(
        options({ pathToClaudeCodeExecutable: wrapper, autoResume: { maxRestarts: 2, initialDelayMillis: 10 } })
      )
      yield* Stream.runDrain(session.turn("SAY one"))
      process.kill(Option.getOrThrow(session.pid), "SIGKILL")
      const error = yield* Stream.runDrain(session.messages).pipe(Effect.flip)
      expect(error).toBeInstanceOf(AgentError.ProcessExited)
      expect(error).toMatchObject({ code: 3, stderrTail: expect.stringContaining("crashing at start-up") })
      expect(fs.readFileSync(counter, "utf8").trim().split("\n")).toHaveLength(3)
    }))
})
