/**
 * Where a chat server keeps its chats (`effect-claude-agent/ui`): for each chat id the CLI session that holds its
 * conversation, so a chat resumes after the server restarts, and what the chat list shows. The conversation itself
 * stays where the CLI keeps it (its session files, or a `TranscriptStore`).
 *
 * {@link layerMemory} forgets everything with the process (tests); {@link layerFileSystem} keeps one JSON file per
 * chat in a directory, each replaced atomically (written to a temporary file, then renamed). Another backend (a
 * database) implements {@link Service}.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as internal from "./internal/ui/chatStore.js"

/**
 * A chat.
 *
 * @since 0.1.0
 * @category models
 */
export interface Chat {
  /** The chat id the client chose (the AI SDK's `Chat.id`): 1 to 128 of `A-Z a-z 0-9 _ -`. */
  readonly id: string
  /** The CLI session of the chat (a UUID, chosen by the server before the first turn). */
  readonly sessionId: string
  /** The start of the first prompt. */
  readonly title?: string
  /** Epoch milliseconds. */
  readonly createdAt: number
  /** Epoch milliseconds of the last turn's start. */
  readonly updatedAt: number
}

/**
 * The store.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The chat with this id, `None` when there is none. */
  readonly get: (chatId: string) => Effect.Effect<Option.Option<Chat>, ChatStoreError>
  /** Creates or replaces a chat. */
  readonly put: (chat: Chat) => Effect.Effect<void, ChatStoreError>
  /** Every chat, the most recently updated first. */
  readonly list: Effect.Effect<ReadonlyArray<Chat>, ChatStoreError>
  /** Forgets a chat (its CLI session stays); forgetting one that does not exist succeeds. */
  readonly delete: (chatId: string) => Effect.Effect<void, ChatStoreError>
}

export {
  /**
   * A chat store failed: `InvalidChatId` (not `A-Z a-z 0-9 _ -`, 1 to 128 characters), `Unavailable` (the
   * backend failed; the cause is attached) or `Corrupt` (a stored record does not decode).
   *
   * @since 0.1.0
   * @category errors
   */
  ChatStoreError,
  /**
   * @since 0.1.0
   * @category type ids
   */
  ChatStoreErrorTypeId,
  /**
   * @since 0.1.0
   * @category guards
   */
  isChatStoreError,
  /**
   * @since 0.1.0
   * @category tags
   */
  ChatStore
} from "./internal/ui/chatStore.js"

import type { ChatStoreError } from "./internal/ui/chatStore.js"

/**
 * A store in memory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<Service> = internal.makeMemory

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<internal.ChatStore> = Layer.effect(internal.ChatStore, internal.makeMemory)

/**
 * Options of {@link layerFileSystem}.
 *
 * @since 0.1.0
 * @category options
 */
export interface FileSystemOptions {
  /** The directory of the chat files (`<chat id>.json`); created on the first write. */
  readonly directory: string
}

/**
 * A store of one JSON file per chat.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFileSystem: (
  options: FileSystemOptions
) => Effect.Effect<Service, never, FileSystem.FileSystem | Path.Path> = internal.makeFileSystem

/**
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (
  options: FileSystemOptions
): Layer.Layer<internal.ChatStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(internal.ChatStore, internal.makeFileSystem(options))
