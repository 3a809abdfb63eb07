// perTaskStopAffordance against the real CLI: with it an interrupt spares the background tasks and stopTask stops
// them one at a time; without it an interrupt stops them (offline: the scripted model server asks for the Bash calls).
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type AgentOptions, ClaudeAgent, Permissions, type Transport } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"
import { running } from "./support/process.js"

const { reply, text, toolUse } = ScriptedModelServer

/** Waits (polling, bounded) until `check` holds. */
const eventually = (what: string, check: () => boolean) =>
  Effect.sync(check).pipe(
    Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (held) => held }),
    Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error(`${what} never held`) }),
    Effect.orDie
  )

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 180_000)

/** A background agent (the Task tool) whose Bash runs `sleep <seconds>`. */
const agent = (seconds: string) =>
  toolUse("Task", {
    description: `sleeper ${seconds}`,
    prompt: `SUBAGENT ${seconds}`,
    subagent_type: "general-purpose",
    run_in_background: true
  }, { id: `toolu_agent_${seconds.replace(".", "_")}` })

const bash = (seconds: string) =>
  reply(toolUse("Bash", { command: `sh -c 'sleep ${seconds}'; echo done`, description: `sleep ${seconds}` }))

/**
 * A session (with `extra` options) whose first turn starts two background agents, each running a `sleep` of
 * `background` in its Bash, then runs `sleep <foreground>` in the foreground; returns once all three run, with the
 * turn's fiber and the agents' task ids (by sleep).
 */
const tasks = (extra: AgentOptions.Options, background: readonly [string, string], foreground: string) =>
  Effect.gen(function*() {
    const { options } = yield* realCli({
      handler: (request) => {
        const sub = request.userPrompts.find((prompt) => prompt.startsWith("SUBAGENT "))
        if (sub !== undefined) {
          return request.toolResults.length === 0 ? bash(sub.slice("SUBAGENT ".length)) : reply(text("subagent done"))
        }
        if (request.userPrompts[0] !== "go") return reply(text("ok"))
        switch (request.toolResults.length) {
          case 0:
            return reply(agent(background[0]), agent(background[1]))
          case 2:
            return bash(foreground)
          default:
            return reply(text("after the tools"))
        }
      }
    })
    const session = yield* ClaudeAgent.session(options(extra)).pipe(Effect.provide(Permissions.allowAll))
    const taskIds = new Map<string, string>()
    const turn = yield* Effect.fork(
      Stream.runForEach(session.turn("go"), (message) =>
        Effect.sync(() => {
          if (message.type === "system" && message.subtype === "task_started" && "prompt" in message) {
            taskIds.set(String(message.prompt).slice("SUBAGENT ".length), message.task_id)
          }
        }))
    )
    yield* eventually("all sleeps run", () => [...background, foreground].every((s) => running("sleep", s).length > 0))
    return { session, turn, taskIds }
  })

/** Gives the CLI time to act on what it was told (the assertion after it is about something not happening). */
const settle = Effect.sleep("3 seconds")

describe("perTaskStopAffordance against the real CLI", () => {
  live("without it, interrupt stops the background agents too", () =>
    Effect.gen(function*() {
      const { session, turn } = yield* tasks({}, ["331.5", "332.5"], "333.5")
      yield* session.interrupt
      yield* Fiber.join(turn)
      yield* eventually("every sleep ends", () =>
        ["331.5", "332.5", "333.5"].every((s) => running("sleep", s).length === 0))
    }))

  live(
    "with it, interrupt spares the background agents; stopTask stops them one at a time",
    () =>
      Effect.gen(function*() {
        const { session, taskIds, turn } = yield* tasks({ perTaskStopAffordance: true }, ["334.5", "335.5"], "336.5")
        yield* session.interrupt
        yield* Fiber.join(turn)
        yield* eventually("the foreground sleep ends", () => running("sleep", "336.5").length === 0)
        yield* settle
        expect(running("sleep", "334.5")).toHaveLength(1)
        expect(running("sleep", "335.5")).toHaveLength(1)
        yield* session.stopTask(taskIds.get("334.5")!)
        yield* eventually("the first agent's sleep ends", () => running("sleep", "334.5").length === 0)
        yield* settle
        expect(running("sleep", "335.5")).toHaveLength(1)
        yield* session.stopTask(taskIds.get("335.5")!)
        yield* eventually("the second agent's sleep ends", () => running("sleep", "335.5").length === 0)
      })
  )
})
