import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { Message, Transport } from "effect-claude-agent"
import { ClaudeCodeLanguageModel } from "effect-claude-agent/ai"
import { ScriptedCli } from "effect-claude-agent/testing"

/** A scripted CLI answering every turn with `answer`, recording each launch's argv and user message. */
const recordingCli = (answer: string) => {
  const launches: Array<{ readonly args: ReadonlyArray<string>; readonly user: Message.UserMessage }> = []
  const layer = ScriptedCli.layer((cli) =>
    Effect.gen(function*() {
      const user = yield* cli.expectUser
      launches.push({ args: cli.spec.args, user })
      yield* cli.init()
      yield* cli.assistant(answer)
      yield* cli.result(answer)
    })
  )
  return { launches, layer }
}

const modelWith = (
  layer: Layer.Layer<Transport.Transport>,
  options?: ClaudeCodeLanguageModel.Options
) => Layer.provide(ClaudeCodeLanguageModel.layer(options), layer)

const argAfter = (args: ReadonlyArray<string>, flag: string) =>
  args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1)

const Noop = Tool.make("Noop", { success: Schema.String })
const Tools = Toolkit.make(Noop)
const handlers = Tools.toLayer({ Noop: () => Effect.succeed("done") })

const conversation = Prompt.make([
  { role: "system", content: "You are terse." },
  { role: "user", content: "first question" },
  { role: "assistant", content: "first answer" },
  { role: "user", content: "second question" }
])

describe("ClaudeCodeLanguageModel with ScriptedCli", () => {
  it.effect("stateless: the earlier turns go as a transcript before the new turn, in a new session", () => {
    const { launches, layer } = recordingCli("ok")
    return Effect.gen(function*() {
      const response = yield* LanguageModel.generateText({ prompt: conversation })
      expect(response.text).toBe("ok")
      const content = launches[0]?.user.message.content
      expect(content).toEqual([
        { type: "text", text: "The conversation so far:" },
        { type: "text", text: "User:" },
        { type: "text", text: "first question" },
        { type: "text", text: "Assistant: first answer" },
        { type: "text", text: "The user's new turn:" },
        { type: "text", text: "second question" }
      ])
      expect(argAfter(launches[0]?.args ?? [], "--resume")).toBeUndefined()
    }).pipe(Effect.provide(modelWith(layer)))
  })

  it.effect("resume: a conversation this model answered resumes (a fork of) its session with the new turn only", () => {
    const { launches, layer } = recordingCli("first answer")
    return Effect.gen(function*() {
      const first = yield* LanguageModel.generateText({
        prompt: [{ role: "system", content: "You are terse." }, { role: "user", content: "first question" }]
      })
      const sessionId = first.content.find((part) => part.type === "finish")?.metadata["claudeCode"]?.["sessionId"]
      expect(typeof sessionId).toBe("string")
      yield* LanguageModel.generateText({ prompt: conversation })
      expect(argAfter(launches[1]?.args ?? [], "--resume")).toBe(sessionId)
      expect(launches[1]?.args).toContain("--fork-session")
      expect(launches[1]?.user.message.content).toEqual([{ type: "text", text: "second question" }])
    }).pipe(Effect.provide(modelWith(layer, { conversation: "resume" })))
  })

  it.effect("what cannot be mapped fails with AiError.MalformedInput before anything is spawned", () => {
    const { launches, layer } = recordingCli("never")
    return Effect.gen(function*() {
      const required = yield* Effect.flip(
        LanguageModel.generateText({ prompt: "x", toolkit: Tools, toolChoice: "required" })
      )
      expect(required).toMatchObject({ _tag: "MalformedInput", method: "toolChoice" })
      expect(required.message).toContain("cannot be honoured")
      const prefill = yield* Effect.flip(LanguageModel.generateText({
        prompt: [{ role: "user", content: "x" }, { role: "assistant", content: "prefill" }]
      }))
      expect(prefill).toMatchObject({ _tag: "MalformedInput", method: "prompt" })
      const audio = yield* Effect.flip(LanguageModel.generateText({
        prompt: [{ role: "user", content: [{ type: "file", mediaType: "audio/wav", data: new Uint8Array([1]) }] }]
      }))
      expect(audio).toMatchObject({ _tag: "MalformedInput", method: "prompt" })
      expect(audio.message).toContain("audio/wav")
      expect(launches).toEqual([])
    }).pipe(Effect.provide(Layer.merge(modelWith(layer), handlers)))
  })

  it.effect("toolChoice \"none\": the toolkit is not served and no built-in tool is enabled", () => {
    const { launches, layer } = recordingCli("no tools")
    return Effect.gen(function*() {
      const response = yield* LanguageModel.generateText({ prompt: "x", toolkit: Tools, toolChoice: "none" })
      expect(response.text).toBe("no tools")
      const args = launches[0]?.args ?? []
      expect(args).toContain("--tools=")
      expect(args.filter((arg) => arg.includes("mcp__toolkit__"))).toEqual([])
    }).pipe(Effect.provide(Layer.merge(modelWith(layer, { builtInTools: ["Read"] }), handlers)))
  })

  it.effect("an image goes as an image block", () => {
    const { launches, layer } = recordingCli("a cat")
    return Effect.gen(function*() {
      yield* LanguageModel.generateText({
        prompt: [{
          role: "user",
          content: [{ type: "text", text: "what is this?" }, {
            type: "file",
            mediaType: "image/png",
            data: new Uint8Array([1, 2, 3])
          }]
        }]
      })
      expect(launches[0]?.user.message.content).toEqual([
        { type: "text", text: "what is this?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "AQID" } }
      ])
    }).pipe(Effect.provide(modelWith(layer)))
  })

  it.effect("the toolkit is served to the CLI by generateText and by streamText alike", () => {
    const { launches, layer } = recordingCli("ok")
    return Effect.gen(function*() {
      // the scripted CLI's init lists no MCP server, so each call fails after its launch: the launch is what counts
      yield* Effect.either(LanguageModel.generateText({ prompt: "x", toolkit: Tools }))
      yield* Effect.either(Stream.runDrain(LanguageModel.streamText({ prompt: "x", toolkit: Tools })))
      expect(launches.map((launch) => argAfter(launch.args, "--allowedTools"))).toEqual([
        "mcp__toolkit__Noop",
        "mcp__toolkit__Noop"
      ])
    }).pipe(Effect.provide(Layer.merge(modelWith(layer), handlers)))
  })
})
