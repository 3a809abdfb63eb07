import * as AiError from "@effect/ai/AiError"
import type * as Prompt from "@effect/ai/Prompt"
import * as Either from "effect/Either"
import { createHash } from "node:crypto"
import type * as Message from "../../Message.js"

const MODULE = "ClaudeCodeLanguageModel"

/** What the CLI gets from one `Prompt`: the system prompt and the content of the one user message it is sent. */
export interface MappedPrompt {
  /** The system messages joined, `undefined` when there are none. */
  readonly system: string | undefined
  /** The content of the user message sent to the CLI. */
  readonly content: ReadonlyArray<Message.ContentBlock>
  /** The last user turn alone (what a resumed session is sent). */
  readonly lastTurn: ReadonlyArray<Message.ContentBlock>
  /** Identifies the conversation the last turn continues: the system and user messages before it. */
  readonly conversationKey: string
  /** Identifies the conversation once the last turn is answered (the key the next turn will look up). */
  readonly nextConversationKey: string
}

const malformed = (description: string) => new AiError.MalformedInput({ module: MODULE, method: "prompt", description })

const base64 = (data: string | Uint8Array): string =>
  typeof data === "string" ? data : Buffer.from(data).toString("base64")

/** A file part as the CLI accepts it: images, PDFs and plain text; anything else cannot be sent. */
const fileBlock = (part: Prompt.FilePart): Either.Either<Message.ContentBlock, AiError.MalformedInput> => {
  const { data, mediaType } = part
  const isImage = mediaType.startsWith("image/")
  if (data instanceof URL) {
    if (isImage) return Either.right({ type: "image", source: { type: "url", url: data.href } })
    if (mediaType === "application/pdf") {
      return Either.right({ type: "document", source: { type: "url", url: data.href } })
    }
  } else if (isImage) {
    return Either.right({ type: "image", source: { type: "base64", media_type: mediaType, data: base64(data) } })
  } else if (mediaType === "application/pdf") {
    return Either.right({ type: "document", source: { type: "base64", media_type: mediaType, data: base64(data) } })
  } else if (mediaType.startsWith("text/")) {
    const text = typeof data === "string" ? data : Buffer.from(data).toString("utf8")
    return Either.right({ type: "document", source: { type: "text", media_type: "text/plain", data: text } })
  }
  return Either.left(
    malformed(
      `a file of type ${mediaType}${part.fileName === undefined ? "" : ` (${part.fileName})`} cannot be sent to ` +
        "Claude Code: it accepts images, PDFs and text files"
    )
  )
}

const userBlocks = (
  parts: ReadonlyArray<Prompt.UserMessagePart>
): Either.Either<Array<Message.ContentBlock>, AiError.MalformedInput> =>
  Either.all(parts.map((part) => part.type === "text" ? Either.right(textBlock(part.text)) : fileBlock(part)))

const textBlock = (text: string): Message.ContentBlock => ({ type: "text", text })

const json = (u: unknown): string => {
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

/** An earlier message as transcript blocks: text with a speaker label, files as blocks of their own. */
const historyBlocks = (
  message: Prompt.Message
): Either.Either<Array<Message.ContentBlock>, AiError.MalformedInput> => {
  switch (message.role) {
    case "system":
      return Either.right([])
    case "user":
      return Either.map(userBlocks(message.content), (blocks) => [{ type: "text", text: "User:" }, ...blocks])
    case "assistant": {
      const lines: Array<string> = []
      for (const part of message.content) {
        if (part.type === "text") lines.push(part.text)
        else if (part.type === "tool-call") lines.push(`[called tool ${part.name} with ${json(part.params)}]`)
        else if (part.type === "tool-result") lines.push(`[tool ${part.name} returned ${json(part.result)}]`)
      }
      return Either.right([{ type: "text", text: `Assistant: ${lines.join("\n")}` }])
    }
    case "tool":
      return Either.right(
        message.content.map((part) => ({ type: "text", text: `[tool ${part.name} returned ${json(part.result)}]` }))
      )
  }
}

const fingerprint = (messages: ReadonlyArray<Prompt.Message>): string => {
  const hash = createHash("sha256")
  for (const message of messages) {
    if (message.role === "system") hash.update(`system:${message.content}\n`)
    else if (message.role === "user") hash.update(`user:${json(message.content)}\n`)
  }
  return hash.digest("hex")
}

/**
 * Maps a prompt: system messages become the system prompt, the last message (which must be a user message) the
 * turn, and the messages between them a transcript sent before it (a new session has not seen them).
 */
export const mapPrompt = (prompt: Prompt.Prompt): Either.Either<MappedPrompt, AiError.MalformedInput> => {
  const messages = prompt.content
  const last = messages[messages.length - 1]
  if (last === undefined || last.role !== "user") {
    return Either.left(
      malformed(
        "the prompt must end with a user message: Claude Code answers a user turn and cannot continue an assistant " +
          "message"
      )
    )
  }
  const system = messages.filter((m): m is Prompt.SystemMessage => m.role === "system").map((m) => m.content)
  const earlier = messages.slice(0, -1)
  return Either.gen(function*() {
    const lastTurn = yield* userBlocks(last.content)
    const history = (yield* Either.all(earlier.map(historyBlocks))).flat()
    const content: Array<Message.ContentBlock> = history.length === 0 ? lastTurn : [
      { type: "text", text: "The conversation so far:" },
      ...history,
      { type: "text", text: "The user's new turn:" },
      ...lastTurn
    ]
    return {
      system: system.length === 0 ? undefined : system.join("\n\n"),
      content,
      lastTurn,
      conversationKey: fingerprint(earlier),
      nextConversationKey: fingerprint(messages)
    }
  })
}
