import { describe, expect, it } from "@effect/vitest"
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage, validateUIMessages } from "ai"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { TranscriptStore } from "effect-claude-agent"
import * as fs from "node:fs"
import * as path from "node:path"
import { noClaudeLeft, realCli } from "../support/cli.js"
import { bash, chatModel } from "./model.js"
import { answerApprovals, chatServer, makeChat, newLog, plain, type TestChat } from "./support.js"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope>, timeout = 180_000) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())), timeout)

/**
 * What history and the live stream must agree on: roles and parts. Not compared: message ids (the client makes
 * the user message's, history uses the transcript's), metadata (per-turn cost is not in the transcript), and the
 * `approval` the client records on a call it allowed (history does not know which allowed calls were asked).
 */
const comparable = (messages: ReadonlyArray<UIMessage>) =>
  plain(messages).map((m) => ({
    role: m.role,
    parts: m.parts.map((p) =>
      p.type === "dynamic-tool" && (p.state === "output-available" || p.state === "output-error")
        ? { ...p, approval: undefined }
        : p
    )
  })).map((m) => plain(m))

/** A conversation of every kind of part: reasoning, text, allowed / approved / denied / failed calls, a subagent. */
const converse = (chat: TestChat) =>
  Effect.promise(async () => {
    const approveUnlessRefused = (input: unknown) => !JSON.stringify(input).includes("refused")
    for (
      const text of [
        "THINK first thoughts SAY hello there",
        bash("touch approved.txt && echo approved"),
        bash("touch refused.txt"),
        bash("echo failing >&2; exit 3"),
        "DELEGATE echo delegated"
      ]
    ) {
      await chat.sendMessage({ text })
      await answerApprovals(chat, approveUnlessRefused)
    }
  })

describe("ChatHistory: a chat reopened later gets the parts the live stream produced (real CLI)", () => {
  live(
    "from the CLI's session files: the same parts as the AI SDK's Chat assembled live; the chat continues",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli({ handler: chatModel })
        const url = yield* chatServer({ options: options() })
        const log = newLog()
        const chat = makeChat(url, log, {
          id: "history-chat",
          sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses
        })
        yield* converse(chat)
        expect(log.rejected).toEqual([])
        expect(chat.messages.map((m) => m.role)).toEqual(Array(5).fill(["user", "assistant"]).flat())

        const reopened = yield* Effect.promise(() =>
          fetch(`${url}/api/chats/history-chat`).then((r) => r.json() as Promise<{ messages: Array<UIMessage> }>)
        )
        expect(comparable(reopened.messages)).toEqual(comparable(chat.messages))
        // the AI SDK accepts them as they are
        yield* Effect.promise(() => validateUIMessages({ messages: reopened.messages }))
        const states = reopened.messages.flatMap((m) => m.parts).flatMap((p) =>
          p.type === "dynamic-tool" ? [p.state] : []
        )
        expect(states).toEqual(expect.arrayContaining(["output-available", "output-denied", "output-error"]))

        // a new Chat (a reloaded page) starts from the history and continues the same CLI session
        const reloaded = makeChat(url, log, { id: "history-chat" })
        reloaded.messages = reopened.messages
        yield* Effect.promise(() => reloaded.sendMessage({ text: "HISTORY" }))
        const last = reloaded.messages.at(-1)!
        expect(last.parts.at(-1)).toMatchObject({ type: "text", text: expect.stringContaining("THINK first thoughts") })
        expect(last.metadata).toMatchObject({
          sessionId: (chat.messages[1]!.metadata as { sessionId: string }).sessionId
        })
        const prompts = (yield* server.requests).filter((r) => r.isMessages).at(-1)?.userPrompts ?? []
        expect(prompts.at(-1)).toBe("HISTORY")
        expect(log.rejected).toEqual([])
      })
  )

  live("from a TranscriptStore when the session files are gone (another machine)", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli({ handler: chatModel })
      const env = options().env ?? {}
      const url = yield* chatServer({ options: options() }, undefined, TranscriptStore.layerMemory)
      const log = newLog()
      const chat = makeChat(url, log, {
        id: "stored-chat",
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses
      })
      yield* Effect.promise(async () => {
        await chat.sendMessage({ text: "THINK stored thoughts SAY stored" })
        await chat.sendMessage({ text: "DELEGATE echo stored" })
      })
      fs.rmSync(path.join(env["CLAUDE_CONFIG_DIR"]!, "projects"), { recursive: true, force: true })
      const reopened = yield* Effect.promise(() =>
        fetch(`${url}/api/chats/stored-chat`).then((r) => r.json() as Promise<{ messages: Array<UIMessage> }>)
      )
      expect(comparable(reopened.messages)).toEqual(comparable(chat.messages))
      expect(log.rejected).toEqual([])
    }))
})
