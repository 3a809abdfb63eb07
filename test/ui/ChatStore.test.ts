import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ChatStore } from "effect-claude-agent/ui"
import * as fs from "node:fs"
import * as path from "node:path"
import { tempDir } from "../support/cli.js"

const chat = (id: string, updatedAt: number): ChatStore.Chat => ({
  id,
  sessionId: "0b8e4c7e-4c4f-4a2e-9d55-3c1f7a3e9b10",
  title: `title of ${id}`,
  createdAt: 1,
  updatedAt
})

const Node = Layer.merge(NodeFileSystem.layer, NodePath.layer)

const stores = {
  memory: () => Effect.succeed({ store: ChatStore.makeMemory, directory: undefined }),
  fileSystem: () =>
    Effect.map(tempDir("eca-chat-store-"), (directory) => ({
      store: ChatStore.makeFileSystem({ directory: path.join(directory, "chats") }),
      directory: path.join(directory, "chats")
    }))
}

describe("ChatStore", () => {
  for (const [name, make] of Object.entries(stores)) {
    it.scoped(`${name}: put, get, list (most recent first), delete; ids that could be paths are refused`, () =>
      Effect.gen(function*() {
        const { store: makeStore } = yield* make()
        const store = yield* makeStore
        expect(yield* store.get("a")).toEqual(Option.none())
        expect(yield* store.list).toEqual([])
        yield* store.put(chat("a", 10))
        yield* store.put(chat("b", 30))
        yield* store.put(chat("c", 20))
        yield* store.put({ ...chat("a", 40), title: "renamed" })
        expect(yield* store.get("a")).toEqual(Option.some({ ...chat("a", 40), title: "renamed" }))
        expect((yield* store.list).map((c) => c.id)).toEqual(["a", "b", "c"])
        yield* store.delete("b")
        yield* store.delete("b")
        expect((yield* store.list).map((c) => c.id)).toEqual(["a", "c"])
        for (const id of ["../a", "a/b", "", ".hidden", "x".repeat(129), "a b", "a\u0000"]) {
          const error = yield* Effect.flip(store.get(id))
          expect(error).toMatchObject({ _tag: "ChatStoreError", reason: "InvalidChatId" })
          expect(ChatStore.isChatStoreError(error)).toBe(true)
          expect((yield* Effect.flip(store.put(chat(id, 1)))).reason).toBe("InvalidChatId")
        }
      }).pipe(Effect.provide(Node)))
  }

  it.scoped("fileSystem: a record that does not decode is Corrupt; list skips it; no temporary file is left", () =>
    Effect.gen(function*() {
      const { directory, store: makeStore } = yield* stores.fileSystem()
      const store = yield* makeStore
      yield* store.put(chat("good", 1))
      fs.writeFileSync(path.join(directory, "bad.json"), "{\"id\":\"bad\"")
      expect(yield* Effect.flip(store.get("bad"))).toMatchObject({ reason: "Corrupt", chatId: "bad" })
      expect((yield* store.list).map((c) => c.id)).toEqual(["good"])
      expect(fs.readdirSync(directory).sort()).toEqual(["bad.json", "good.json"])
    }).pipe(Effect.provide(Node)))
})
