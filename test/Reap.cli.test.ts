// Closing a session ends every tool process the real CLI started, also outside its process group (offline: the
// scripted model server asks for the Bash calls).
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type AgentOptions, ClaudeAgent, Message, Permissions, type Transport } from "effect-claude-agent"
import { AbortError, query } from "effect-claude-agent/promise"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"
import { running } from "./support/process.js"
import { expectLogs } from "./support/logs.js"

const { reply, text, toolUse } = ScriptedModelServer

// the CLI refuses a command that starts with a long `sleep`: the foreground ones go through `sh -c`
const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`

/** Waits (polling, bounded) until `argv` runs. */
const started = (...argv: ReadonlyArray<string>) =>
  Effect.sync(() => running(...argv)).pipe(
    Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (pids) => pids.length > 0 }),
    Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error(`${argv.join(" ")} never started`) }),
    Effect.orDie
  )

const resultText = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

const allow = { permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true } as const

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 120_000)

/** A session in a scope of its own, with a turn running `command` until `sleep <seconds>` runs. */
const sleepingTool = (options: AgentOptions.Options, command: string, seconds: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const session = yield* ClaudeAgent.session(options).pipe(Effect.provide(Permissions.allowAll), Scope.extend(scope))
    const turn = yield* Effect.fork(Stream.runDrain(session.turn(bash(command))))
    yield* started("sleep", seconds)
    return { scope, session, turn }
  })

describe("Reaping tool processes against the real CLI", () => {
  live("a command the Bash tool backgrounded is gone when the query ends normally", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const messages = yield* Stream.runCollect(
        ClaudeAgent.query(bash("sh -c 'sleep 301.5' & echo started"), options())
      ).pipe(Effect.provide(Permissions.allowAll))
      expect(resultText(messages)).toBe("tool said: started")
      expect(running("sleep", "301.5")).toEqual([])
    }))

  live(
    "a foreground tool is gone after the CLI was SIGKILLed (by the SDK, at once, after SIGTERM)",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        // a kill grace of 1 ms, and a tool that ignores SIGTERM: the SDK SIGKILLs the CLI before it can end its tool
        const { scope, turn } = yield* sleepingTool(
          options({ killGraceMillis: 1 }),
          "trap '' TERM; sh -c 'sleep 302.5'; echo done",
          "302.5"
        )
        yield* Fiber.interrupt(turn)
        yield* Scope.close(scope, Exit.void)
        expect(running("sleep", "302.5")).toEqual([])
      }).pipe(expectLogs([/^WARN CLI ignored SIGTERM: SIGKILL/]))
  )

  live(
    "a foreground tool is gone after the CLI died of SIGKILL mid-tool, once the scope closes",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const { scope, session, turn } = yield* sleepingTool(options(), "sh -c 'sleep 303.5'; echo done", "303.5")
        process.kill(Option.getOrThrow(session.pid), "SIGKILL")
        expect(Exit.isFailure(yield* Fiber.await(turn))).toBe(true)
        yield* Scope.close(scope, Exit.void)
        expect(running("sleep", "303.5")).toEqual([])
      })
  )

  live(
    "Promise API: aborting during a tool leaves no tool process, also none an earlier tool backgrounded",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli()
        const call = (command: string) => reply(toolUse("Bash", { command, description: "scripted" }))
        yield* server.addReplies(
          call("sh -c 'sleep 304.5' & echo started"),
          call("sh -c 'sleep 314.5'; echo done"),
          reply(text("never reached"))
        )
        const base = { cwd: options().cwd, env: options().env }
        const abortController = new AbortController()
        const aborted = query({ prompt: "go", options: { ...base, ...allow, abortController } })
        const drained = yield* Effect.fork(Effect.promise(async () => {
          try {
            for await (const _ of aborted) {
              // the abort ends it
            }
            return undefined
          } catch (error) {
            return error
          }
        }))
        yield* started("sleep", "314.5")
        expect(running("sleep", "304.5")).toHaveLength(1)
        abortController.abort()
        expect(yield* Fiber.join(drained)).toBeInstanceOf(AbortError)
        expect(running("sleep", "304.5")).toEqual([])
        expect(running("sleep", "314.5")).toEqual([])
      })
  )

  live(
    "Promise API: breaking out of for await after a backgrounded command leaves no tool process",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const base = { cwd: options().cwd, env: options().env }
        const broken = query({ prompt: bash("sh -c 'sleep 305.5' & echo started"), options: { ...base, ...allow } })
        const seen = yield* Effect.promise(async () => {
          for await (const message of broken) {
            if (message.type === "user") return "tool result"
          }
          return "the end"
        })
        expect(seen).toBe("tool result")
        expect(running("sleep", "305.5")).toEqual([])
      })
  )
})
