/** @internal */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as crypto from "node:crypto"
import type * as Api from "../../ChatStore.js"

/** @internal */
export const ChatStoreErrorTypeId: unique symbol = Symbol.for("effect-claude-agent/ChatStoreError")

/** @internal */
export class ChatStoreError extends Schema.TaggedError<ChatStoreError>("effect-claude-agent/ChatStoreError")(
  "ChatStoreError",
  {
    reason: Schema.Literal("InvalidChatId", "Unavailable", "Corrupt"),
    chatId: Schema.optional(Schema.String),
    description: Schema.optional(Schema.String),
    cause: Schema.optional(Schema.Defect)
  }
) {
  readonly [ChatStoreErrorTypeId]: typeof ChatStoreErrorTypeId = ChatStoreErrorTypeId
  override get message(): string {
    const what = this.chatId === undefined ? "" : ` (chat ${JSON.stringify(this.chatId)})`
    return `${this.reason}${what}${this.description === undefined ? "" : `: ${this.description}`}`
  }
}

/** @internal */
export const isChatStoreError = (u: unknown): u is ChatStoreError => Predicate.hasProperty(u, ChatStoreErrorTypeId)

/** @internal */
export class ChatStore extends Context.Tag("effect-claude-agent/ChatStore")<ChatStore, Api.Service>() {}

/** A chat id: what the AI SDK's `generateId` makes and more, never a path. */
export const CHAT_ID = /^[A-Za-z0-9_-]{1,128}$/

/** @internal */
export const ChatId = Schema.String.pipe(Schema.pattern(CHAT_ID))

/** @internal */
export const Chat = Schema.Struct({
  id: ChatId,
  sessionId: Schema.UUID,
  title: Schema.optionalWith(Schema.String, { exact: true }),
  createdAt: Schema.Number,
  updatedAt: Schema.Number
})

const checkId = (chatId: string): Effect.Effect<void, ChatStoreError> =>
  CHAT_ID.test(chatId) ? Effect.void : Effect.fail(new ChatStoreError({ reason: "InvalidChatId", chatId }))

const newest = (chats: ReadonlyArray<Api.Chat>): ReadonlyArray<Api.Chat> =>
  [...chats].sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id))

/** @internal */
export const makeMemory: Effect.Effect<Api.Service> = Effect.sync(() => {
  const chats = new Map<string, Api.Chat>()
  return {
    get: (chatId) => Effect.as(checkId(chatId), Option.fromNullable(chats.get(chatId))),
    put: (chat) => Effect.zipRight(checkId(chat.id), Effect.sync(() => void chats.set(chat.id, chat))),
    list: Effect.sync(() => newest([...chats.values()])),
    delete: (chatId) => Effect.zipRight(checkId(chatId), Effect.sync(() => void chats.delete(chatId)))
  }
})

const decodeChat = Schema.decodeUnknown(Schema.parseJson(Chat))
const encodeChat = Schema.encode(Schema.parseJson(Chat))

/** @internal */
export const makeFileSystem = (
  options: Api.FileSystemOptions
): Effect.Effect<Api.Service, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const directory = path.resolve(options.directory)
    const unavailable = (chatId: string | undefined) => (cause: unknown) =>
      new ChatStoreError({ reason: "Unavailable", ...(chatId !== undefined ? { chatId } : {}), cause })
    const fileOf = (chatId: string) => path.join(directory, `${chatId}.json`)

    const read = (chatId: string): Effect.Effect<Option.Option<Api.Chat>, ChatStoreError> =>
      fs.readFileString(fileOf(chatId)).pipe(
        Effect.map(Option.some),
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "NotFound",
          () => Effect.succeed(Option.none<string>())
        ),
        Effect.mapError(unavailable(chatId)),
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed(Option.none<Api.Chat>()),
          onSome: (text) =>
            decodeChat(text).pipe(
              Effect.map((chat) => Option.some<Api.Chat>(chat)),
              Effect.mapError((cause) => new ChatStoreError({ reason: "Corrupt", chatId, cause }))
            )
        }))
      )

    // a reader never sees half a record: written to a temporary name, then renamed over the old one
    const write = (chat: Api.Chat): Effect.Effect<void, ChatStoreError> =>
      Effect.gen(function*() {
        const text = yield* encodeChat(chat).pipe(
          Effect.mapError((cause) => new ChatStoreError({ reason: "Corrupt", chatId: chat.id, cause }))
        )
        const temporary = path.join(directory, `.${chat.id}.${crypto.randomUUID()}.tmp`)
        yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(unavailable(chat.id)))
        yield* fs.writeFileString(temporary, text, { flag: "wx" }).pipe(
          Effect.zipRight(fs.rename(temporary, fileOf(chat.id))),
          Effect.tapError(() => Effect.ignore(fs.remove(temporary))),
          Effect.mapError(unavailable(chat.id))
        )
      })

    const list = Effect.gen(function*() {
      const names = yield* fs.readDirectory(directory).pipe(
        Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeed([])),
        Effect.mapError(unavailable(undefined))
      )
      const ids = names.flatMap((name) => {
        const id = name.endsWith(".json") ? name.slice(0, -".json".length) : ""
        return CHAT_ID.test(id) ? [id] : []
      })
      const chats = yield* Effect.forEach(ids, (id) => read(id).pipe(Effect.orElseSucceed(() => Option.none())), {
        concurrency: 8
      })
      return newest(chats.flatMap(Option.toArray))
    })

    return {
      get: (chatId) => Effect.zipRight(checkId(chatId), read(chatId)),
      put: (chat) => Effect.zipRight(checkId(chat.id), write(chat)),
      list,
      delete: (chatId) =>
        Effect.zipRight(
          checkId(chatId),
          fs.remove(fileOf(chatId)).pipe(
            Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.void),
            Effect.mapError(unavailable(chatId))
          )
        )
    }
  })
