import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { type AgentOptions, ClaudeAgent, Message, Permissions } from "effect-claude-agent"
import { Recording } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { descendants } from "./support/process.js"

/**
 * A committed recording of the real CLI (2.1.332) against the scripted model server: the model calls Bash (which
 * needs a permission), the policy allows it. `RECORD_FIXTURES=1` records it again.
 */
const FIXTURE = path.join(import.meta.dirname, "fixtures", "recordings", "bash-allowed.jsonl")

const PROMPT = `TOOL Bash ${
  JSON.stringify({ command: "touch replayed.txt && echo replayed-ok", description: "scripted" })
}`

/** The workflow under test: one prompt that makes the model call Bash; what did the agent end with? */
const workflow = (options: AgentOptions.Options = {}) =>
  Effect.gen(function*() {
    const session = yield* ClaudeAgent.session(options)
    const messages = yield* Stream.runCollect(session.turn(PROMPT))
    const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
    return {
      pid: session.pid,
      result: result?.subtype === "success" ? result.result : `(${result?.subtype})`,
      denials: result?.permission_denials.map((d) => d.tool_name) ?? []
    }
  }).pipe(Effect.scoped)

/** Records `workflow` against the real CLI and the scripted model server. */
const record = (file: string) =>
  Effect.gen(function*() {
    const { options } = yield* realCli()
    return yield* workflow(options()).pipe(
      Effect.provide(Permissions.allowAll),
      Effect.provide(Recording.layerRecord(file).pipe(Layer.provide(NodeClaudeAgent.layer)))
    )
  }).pipe(Effect.scoped, noClaudeLeft)

/** No process may be started by a replay. */
const noProcess = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = descendants(process.pid).length
    const result = yield* effect
    expect(descendants(process.pid).length).toBeLessThanOrEqual(before)
    return result
  })

describe("Recording a real CLI session, replaying it without one", () => {
  it.scopedLive(
    "records against the real CLI, then replays green with no CLI and no model server",
    () =>
      Effect.gen(function*() {
        const file = path.join(yield* tempDir(), "bash.jsonl")
        const live = yield* record(file)
        expect(live.result).toBe("tool said: replayed-ok")
        expect(Option.isSome(live.pid)).toBe(true)

        const replayed = yield* workflow().pipe(Effect.provide(Permissions.allowAll), Recording.replay(file), noProcess)
        expect(replayed.result).toBe("tool said: replayed-ok")
        expect(replayed.pid).toEqual(Option.none())
      }),
    60_000
  )

  it.live("the committed recording replays green", () =>
    Effect.gen(function*() {
      if (process.env["RECORD_FIXTURES"] === "1") yield* record(FIXTURE)
      const replayed = yield* workflow().pipe(
        Effect.provide(Permissions.allowAll),
        Recording.replay(FIXTURE),
        noProcess
      )
      expect(replayed).toEqual({ pid: Option.none(), result: "tool said: replayed-ok", denials: [] })
    }), 60_000)

  it.live(
    "a changed decision (deny instead of allow) fails with a diff that names the frame",
    () =>
      Effect.gen(function*() {
        const error = yield* workflow().pipe(
          Effect.provide(Permissions.denyAll),
          Recording.replay(FIXTURE),
          Effect.flip
        )
        expect(error._tag).toBe("ReplayMismatch")
        if (error._tag !== "ReplayMismatch") return
        expect(error.reason).toBe("FrameDiffers")
        expect(error.frame).toMatch(/^stdin control_response \(success\) to can_use_tool /)
        expect(error.source).toBe(FIXTURE)
        const lines = fs.readFileSync(FIXTURE, "utf8").split("\n")
        const recorded = JSON.parse(lines[(error.line ?? 0) - 1] ?? "{}")
        expect(recorded).toMatchObject({ event: "stdin", frame: { type: "control_response" } })
        expect(error.differences).toContainEqual({
          path: "response.response.behavior",
          recorded: "\"allow\"",
          sent: "\"deny\""
        })
        expect(error.message).toContain("Replay mismatch (FrameDiffers) at frame #")
        expect(error.message).toContain("to can_use_tool")
      }),
    60_000
  )
})
