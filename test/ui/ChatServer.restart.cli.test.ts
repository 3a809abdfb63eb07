import { describe, expect, it } from "@effect/vitest"
import type { UIMessage } from "ai"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as child from "node:child_process"
import * as path from "node:path"
import { noClaudeLeft, realCli, tempDir } from "../support/cli.js"
import { chatModel } from "./model.js"
import { makeChat, newLog } from "./support.js"

const root = path.join(import.meta.dirname, "..", "..")

/** Starts the chat server in a process of its own; stops it (SIGTERM, awaited) when the scope closes. */
const serverProcess = (
  config: {
    readonly cwd: string
    readonly env: Readonly<Record<string, string | undefined>>
    readonly storeDir: string
  }
) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly process: child.ChildProcess }>((resume) => {
      const proc = child.spawn(
        path.join(root, "node_modules", ".bin", "tsx"),
        [
          "--tsconfig",
          path.join(root, "test", "ui", "tsconfig.json"),
          path.join(import.meta.dirname, "fixtures", "chatServerMain.ts")
        ],
        {
          cwd: root,
          env: { ...process.env, CHAT_SERVER_CONFIG: JSON.stringify(config) },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let out = ""
      let err = ""
      proc.stderr.on("data", (d) => (err += String(d)))
      proc.stdout.on("data", (d) => {
        out += String(d)
        const port = /listening (\d+)/.exec(out)?.[1]
        if (port !== undefined) resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, process: proc }))
      })
      proc.on("exit", (code) => resume(Effect.die(new Error(`the server exited (${code}): ${err}`))))
    }),
    ({ process: proc }) =>
      Effect.async<void>((resume) => {
        if (proc.exitCode !== null) return resume(Effect.void)
        proc.on("exit", () => resume(Effect.void))
        proc.kill("SIGTERM")
      })
  )

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())), 180_000)

describe("ChatServer: a chat resumes after the server process restarts (real CLI)", () => {
  live(
    "the chat id → session mapping is on disk: history comes back and the next turn resumes the session",
    () =>
      Effect.gen(function*() {
        const { cwd, options, server } = yield* realCli({ handler: chatModel })
        const storeDir = yield* tempDir("eca-chats-")
        const config = { cwd, env: { ...options().env }, storeDir }
        const log = newLog()

        const first = yield* Effect.scoped(Effect.gen(function*() {
          const { url } = yield* serverProcess(config)
          const chat = makeChat(url, log, { id: "durable" })
          yield* Effect.promise(() => chat.sendMessage({ text: "THINK remembered thought SAY first answer" }))
          return chat.messages
        }))
        // the first server process is gone (its scope closed: SIGTERM, awaited)
        const sessionId = (first[1]?.metadata as { sessionId: string }).sessionId

        const { url } = yield* serverProcess(config)
        const listed = yield* Effect.promise(() => fetch(`${url}/api/chats`).then((r) => r.json()))
        expect(listed).toEqual([
          expect.objectContaining({ id: "durable", title: "THINK remembered thought SAY first answer" })
        ])
        const reopened = yield* Effect.promise(() =>
          fetch(`${url}/api/chats/durable`).then((r) => r.json() as Promise<{ messages: Array<UIMessage> }>)
        )
        expect(reopened.messages.map((m) => m.role)).toEqual(["user", "assistant"])
        expect(reopened.messages[1]?.parts).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ type: "reasoning", text: "remembered thought" }),
            expect.objectContaining({ type: "text", text: "first answer" })
          ])
        )

        const chat = makeChat(url, log, { id: "durable" })
        chat.messages = reopened.messages
        yield* Effect.promise(() => chat.sendMessage({ text: "HISTORY" }))
        expect(chat.messages.at(-1)?.metadata).toMatchObject({ sessionId })
        const last = (yield* server.requests).filter((r) => r.isMessages).at(-1)
        expect(last?.userPrompts).toEqual(["THINK remembered thought SAY first answer", "HISTORY"])
        expect(log.rejected).toEqual([])
      })
  )
})
