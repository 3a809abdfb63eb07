import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent, Message } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

const last = (c: Chunk.Chunk<Message.SdkMessage>) => Chunk.unsafeLast(c)

describe("auto-resume", () => {
  it.scopedLive("a CLI killed between turns is replaced transparently, resuming the same session", () =>
    Effect.gen(function*() {
      const opens = yield* Ref.make<Array<ReadonlyArray<string>>>([])
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const n = (yield* Ref.updateAndGet(opens, (a) => [...a, cli.spec.args])).length
          yield* cli.turn(`process ${n}: ${ScriptedCli.textOf(yield* cli.expectUser)}`)
          if (n === 1) return yield* cli.kill("SIGKILL")
          yield* cli.turn(`process ${n}: ${ScriptedCli.textOf(yield* cli.expectUser)}`)
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 3, initialDelayMillis: 1 } }).pipe(
        Effect.provide(layer)
      )
      expect(last(yield* Stream.runCollect(session.turn("one")))).toMatchObject({ result: "process 1: one" })
      // the restart shows in the stream, then the next prompt is answered by the new process
      const second = yield* Stream.runCollect(session.turn("two"))
      const types = Chunk.toReadonlyArray(second).map((m) => m.type)
      expect(types[0]).toBe("session_restarted")
      expect(Chunk.unsafeHead(second)).toMatchObject({
        type: "session_restarted",
        attempt: 1,
        exit: { code: null, signal: "SIGKILL" },
        session_id: session.origin.sessionId,
        interruptedTurn: false
      })
      expect(last(second)).toMatchObject({ result: "process 2: two" })
      const argv = yield* Ref.get(opens)
      expect(argv).toHaveLength(2)
      expect(argv[1]).toContain(`--resume=${session.origin.sessionId}`)
      expect(argv[1]?.some((a) => a.startsWith("--session-id"))).toBe(false)
    }))

  it.scopedLive("a prompt sent while the process is being replaced is delivered once to the new process", () =>
    Effect.gen(function*() {
      const received = yield* Ref.make<Array<string>>([])
      let opens = 0
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          opens++
          if (opens === 1) {
            yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
            return yield* cli.exit(137, "killed by the OOM killer\n")
          }
          while (true) {
            const next = yield* cli.nextUser
            if (next._tag === "None") return
            const text = ScriptedCli.textOf(next.value)
            yield* Ref.update(received, (r) => [...r, text])
            yield* cli.turn(`answered ${text}`)
          }
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 2, initialDelayMillis: 20 } }).pipe(
        Effect.provide(layer)
      )
      yield* Stream.runDrain(session.turn("first"))
      // sent right away, while the first process is dying and the second not yet started
      yield* session.send("during restart")
      const messages = yield* session.messages.pipe(
        Stream.takeUntil((m) => m.type === "result"),
        Stream.runCollect
      )
      expect(Chunk.toReadonlyArray(messages).filter((m) => m.type === "session_restarted")).toHaveLength(1)
      expect(last(messages)).toMatchObject({ result: "answered during restart" })
      expect(yield* Ref.get(received)).toEqual(["during restart"])
    }))

  it.scopedLive("a CLI that keeps dying at start-up stops at the cap with the last ProcessExited", () =>
    Effect.gen(function*() {
      let opens = 0
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          opens++
          if (opens === 1) {
            yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
            return yield* cli.kill("SIGKILL")
          }
          yield* cli.exit(1, `startup crash ${opens}\n`)
        }), { stepTimeout: "1 hour", responders: {} })
      const session = yield* ClaudeAgent.session({ autoResume: { maxRestarts: 3, initialDelayMillis: 1 } }).pipe(
        Effect.provide(layer)
      )
      yield* Stream.runDrain(session.turn("one"))
      const error = yield* Stream.runDrain(session.messages).pipe(Effect.flip)
      expect(error).toBeInstanceOf(AgentError.ProcessExited)
      expect(error).toMatchObject({ code: 1, stderrTail: expect.stringContaining("startup crash") })
      expect(opens).toBe(4)
      expect(yield* Effect.flip(session.send("too late"))).toBeInstanceOf(AgentError.ProcessExited)
      expect(yield* session.state).toBe("exited")
    }))

  it.scopedLive("without autoResume a dead CLI ends the session (no restart)", () =>
    Effect.gen(function*() {
      let opens = 0
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          opens++
          yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
          yield* cli.kill("SIGKILL")
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      yield* Stream.runDrain(session.turn("one"))
      expect((yield* Stream.runDrain(session.messages).pipe(Effect.flip))._tag).toBe("ProcessExited")
      expect(opens).toBe(1)
    }))
})
