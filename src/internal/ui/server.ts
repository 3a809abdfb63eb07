/** @internal */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Headers from "@effect/platform/Headers"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import type * as AgentOptions from "../../AgentOptions.js"
import type * as Api from "../../ChatServer.js"
import type * as ChatStore from "../../ChatStore.js"
import * as Permissions from "../../Permissions.js"
import * as SessionStore from "../../SessionStore.js"
import * as TranscriptStore from "../../TranscriptStore.js"
import type * as Transport from "../../Transport.js"
import type * as UIMessageStream from "../../UIMessageStream.js"
import { approvalIdOf } from "./chunks.js"
import { ChatId, ChatStore as ChatStoreTag } from "./chatStore.js"
import * as history from "./history.js"
import { encode, headers } from "./sse.js"
import * as turns from "./turn.js"

// ---------------------------------------------------------------------------------------------------------------------
// refusals
// ---------------------------------------------------------------------------------------------------------------------

/** A request the server answers with an error status and a JSON body `{ error, message }`. */
class Refused extends Data.TaggedError("Refused")<{
  readonly status: number
  readonly error: string
  readonly message: string
}> {}

const refuse = (status: number, error: string, message: string) => Effect.fail(new Refused({ status, error, message }))

const refusal = (r: Refused) =>
  HttpServerResponse.unsafeJson({ error: r.error, message: r.message }, { status: r.status })

// ---------------------------------------------------------------------------------------------------------------------
// request bodies
// ---------------------------------------------------------------------------------------------------------------------

const Part = Schema.Struct({ type: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

const RequestMessage = Schema.Struct({
  id: Schema.String,
  role: Schema.Literal("system", "user", "assistant"),
  parts: Schema.Array(Part)
})

/** The body `DefaultChatTransport` sends (extra fields are ignored). */
const ChatRequest = Schema.Struct({
  id: ChatId,
  messages: Schema.Array(RequestMessage).pipe(Schema.minItems(1)),
  trigger: Schema.Literal("submit-message", "regenerate-message"),
  messageId: Schema.optional(Schema.NullOr(Schema.String))
})
type ChatRequest = typeof ChatRequest.Type
const decodeRequest = Schema.decodeUnknown(ChatRequest, { errors: "first" })

const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const decodeTextPart = Schema.decodeUnknownOption(TextPart)

const ToolPart = Schema.Struct({
  toolCallId: Schema.String,
  state: Schema.String,
  approval: Schema.optional(Schema.Struct({
    id: Schema.String,
    approved: Schema.optional(Schema.Boolean),
    reason: Schema.optional(Schema.String)
  })),
  output: Schema.optional(Schema.Unknown)
})
const decodeToolPart = Schema.decodeUnknownOption(ToolPart)

/** What a client tool answer (AskUserQuestion) must carry: the answer to each question, by question text. */
const Answers = Schema.Struct({ answers: Schema.Record({ key: Schema.String, value: Schema.String }) })
const decodeAnswers = Schema.decodeUnknownOption(Answers)

/** How long the rest of a body that is too large is read (and dropped) so that the client sees the 413. */
const DRAIN_MILLIS = 10_000

/**
 * The body, read up to `max` bytes. A larger one is refused; its rest is read and dropped (for at most
 * `DRAIN_MILLIS`), never held: a client still sending would otherwise see a reset instead of the 413. One pass over
 * the request stream: ending it early destroys the connection.
 */
const readBody = (request: HttpServerRequest.HttpServerRequest, max: number) =>
  Effect.gen(function*() {
    const declared = Number(request.headers["content-length"] ?? "0")
    const parts: Array<Uint8Array> = []
    let size = declared > max ? declared : 0
    let overSince = declared > max ? Date.now() : undefined
    yield* request.stream.pipe(
      Stream.mapError(() =>
        new Refused({ status: 400, error: "unreadable_body", message: "The body could not be read." })
      ),
      Stream.runForEachWhile((bytes) =>
        Effect.sync(() => {
          if (overSince !== undefined) return Date.now() - overSince < DRAIN_MILLIS
          size += bytes.length
          if (size <= max) {
            parts.push(bytes)
            return true
          }
          parts.length = 0
          overSince = Date.now()
          return true
        })
      )
    )
    if (overSince !== undefined) return yield* refuse(413, "body_too_large", `The body is larger than ${max} bytes.`)
    return Buffer.concat(parts).toString("utf8")
  })

const parseJson = (text: string) =>
  Effect.try({
    try: (): unknown => JSON.parse(text),
    catch: () => new Refused({ status: 400, error: "invalid_json", message: "The body is not JSON." })
  })

// ---------------------------------------------------------------------------------------------------------------------
// history
// ---------------------------------------------------------------------------------------------------------------------

interface History {
  readonly load: (sessionId: string) => Effect.Effect<Array<UIMessageStream.UIMessage>, unknown>
  readonly exists: (sessionId: string) => Effect.Effect<boolean, unknown>
}

/** The config dir the CLI of these options writes its session files to (`undefined`: the process's). */
const configDirOf = (options: AgentOptions.Options): string | undefined => {
  const env = options.env
  const configDir = env?.["CLAUDE_CONFIG_DIR"]
  if (configDir !== undefined && configDir !== "") return configDir
  const home = env?.["HOME"]
  return home !== undefined && home !== "" ? nodePath.join(home, ".claude") : undefined
}

const realCwd = (cwd: string): string => {
  try {
    return fs.realpathSync(cwd)
  } catch {
    return nodePath.resolve(cwd)
  }
}

const makeHistory = (options: AgentOptions.Options) =>
  Effect.gen(function*() {
    const cwd = realCwd(options.cwd ?? process.cwd())
    const transcripts = yield* Effect.serviceOption(TranscriptStore.TranscriptStore)
    if (Option.isSome(transcripts)) {
      const store = transcripts.value
      const projectKey = SessionStore.encodeCwd(cwd)
      return {
        load: (sessionId) =>
          history.fromTranscriptStore({ projectKey, sessionId }).pipe(
            Effect.map(Option.getOrElse(() => [])),
            Effect.provideService(TranscriptStore.TranscriptStore, store)
          ),
        exists: (sessionId) => Effect.map(store.list(projectKey), (all) => all.some((s) => s.sessionId === sessionId))
      } satisfies History
    }
    const configDir = configDirOf(options)
    const sessions = yield* SessionStore.make(configDir === undefined ? {} : { configDir })
    const fileSystem = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    return {
      load: (sessionId) =>
        history.fromSessionFiles(sessionId, cwd).pipe(
          Effect.catchIf((e) => e.reason === "SessionNotFound", () => Effect.succeed([])),
          Effect.provideService(SessionStore.SessionStore, sessions),
          Effect.provideService(FileSystem.FileSystem, fileSystem),
          Effect.provideService(Path.Path, path)
        ),
      exists: (sessionId) =>
        sessions.info(sessionId, cwd, { fast: true }).pipe(
          Effect.as(true),
          Effect.catchIf((e) => e.reason === "SessionNotFound", () => Effect.succeed(false))
        )
    } satisfies History
  })

// ---------------------------------------------------------------------------------------------------------------------
// the server
// ---------------------------------------------------------------------------------------------------------------------

/** @internal */
export const DEFAULTS = {
  approvalTimeout: Duration.minutes(5),
  maxBodyBytes: 8 * 1024 * 1024,
  maxPromptChars: 100_000,
  keepAliveMs: 15_000,
  prefix: "/api",
  clientTools: ["AskUserQuestion"]
} as const

const titleOf = (prompt: string): string => {
  const line = prompt.replace(/\s+/g, " ").trim()
  return line.length > 80 ? `${line.slice(0, 80)}…` : line
}

/** @internal */
export const make = (options: Api.Options = {}) =>
  Effect.gen(function*() {
    const store = yield* ChatStoreTag
    const scope = yield* Effect.scope
    // what a turn's query reads from context: the Transport, and the TranscriptStore when there is one
    const transport = yield* Effect.context<Transport.Transport>()
    const transcripts = yield* Effect.serviceOption(TranscriptStore.TranscriptStore)
    const turnContext = Option.match(transcripts, {
      onNone: (): Context.Context<Transport.Transport> => transport,
      onSome: (store) => Context.add(transport, TranscriptStore.TranscriptStore, store)
    })
    const agentOptions = options.options ?? {}
    const chatHistory = yield* makeHistory(agentOptions)
    const lock = yield* Effect.makeSemaphore(1)
    const running = new Map<string, turns.Turn>()
    const settings = {
      approvalTimeout: Duration.decode(options.approvalTimeout ?? DEFAULTS.approvalTimeout),
      maxBodyBytes: options.maxBodyBytes ?? DEFAULTS.maxBodyBytes,
      maxPromptChars: options.maxPromptChars ?? DEFAULTS.maxPromptChars,
      keepAliveMs: options.keepAliveMs ?? DEFAULTS.keepAliveMs,
      clientTools: options.clientTools ?? DEFAULTS.clientTools
    }
    const serverState: ServerState = {
      store,
      scope,
      transport: turnContext,
      agentOptions,
      chatHistory,
      lock,
      running,
      settings,
      options
    }
    return HttpRouter.empty.pipe(
      HttpRouter.post("/chat", postChat(serverState)),
      HttpRouter.get("/chat/:id/stream", Effect.succeed(HttpServerResponse.empty({ status: 204 }))),
      HttpRouter.get("/chats", listChats(serverState)),
      HttpRouter.get("/chats/:id", getChat(serverState)),
      HttpRouter.del("/chats/:id", deleteChat(serverState)),
      HttpRouter.prefixAll(options.prefix ?? DEFAULTS.prefix)
    )
  })

interface ServerState {
  readonly store: ChatStore.Service
  readonly scope: Scope.Scope
  readonly transport: Context.Context<Transport.Transport>
  readonly agentOptions: AgentOptions.Options
  readonly chatHistory: History
  readonly lock: Effect.Semaphore
  readonly running: Map<string, turns.Turn>
  readonly settings: {
    readonly approvalTimeout: Duration.Duration
    readonly maxBodyBytes: number
    readonly maxPromptChars: number
    readonly keepAliveMs: number
    readonly clientTools: ReadonlyArray<string>
  }
  readonly options: Api.Options
}

const unavailable = (cause: unknown) =>
  Effect.zipRight(
    Effect.logError("ChatServer: the chat store or history failed", cause),
    refuse(503, "unavailable", "The chat store is not available.")
  )

const respondRefusals = <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, Refused, R>) =>
  Effect.catchTag(effect, "Refused", (r) => Effect.succeed(refusal(r)))

const chatIdParam = Effect.flatMap(HttpRouter.params, (params) => {
  const id = params["id"] ?? ""
  return Schema.is(ChatId)(id) ? Effect.succeed(id) : refuse(400, "invalid_chat_id", "The chat id is not valid.")
})

const listChats = (s: ServerState) =>
  respondRefusals(Effect.gen(function*() {
    const chats = yield* s.store.list.pipe(Effect.catchAll(unavailable))
    return HttpServerResponse.unsafeJson(chats.map(({ id, title, createdAt, updatedAt }) => ({
      id,
      title: title ?? null,
      createdAt,
      updatedAt
    })))
  }))

const getChat = (s: ServerState) =>
  respondRefusals(Effect.gen(function*() {
    const chatId = yield* chatIdParam
    const chat = yield* s.store.get(chatId).pipe(Effect.catchAll(unavailable))
    if (Option.isNone(chat)) return yield* refuse(404, "chat_not_found", "There is no such chat.")
    const messages = yield* s.chatHistory.load(chat.value.sessionId).pipe(Effect.catchAll(unavailable))
    return HttpServerResponse.unsafeJson({ id: chatId, title: chat.value.title ?? null, messages })
  }))

const deleteChat = (s: ServerState) =>
  respondRefusals(Effect.gen(function*() {
    const chatId = yield* chatIdParam
    yield* s.lock.withPermits(1)(Effect.gen(function*() {
      const chat = yield* s.store.get(chatId).pipe(Effect.catchAll(unavailable))
      if (Option.isNone(chat)) return yield* refuse(404, "chat_not_found", "There is no such chat.")
      const turn = s.running.get(chatId)
      if (turn !== undefined) yield* stopTurn(s, turn, "The chat was deleted.")
      yield* s.store.delete(chatId).pipe(Effect.catchAll(unavailable))
    }))
    return HttpServerResponse.empty({ status: 204 })
  }))

/** Denies what the turn waits for and interrupts it (its CLI is reaped before this returns). */
const stopTurn = (s: ServerState, turn: turns.Turn, reason: string) =>
  Effect.gen(function*() {
    for (const pending of turn.pending.values()) {
      yield* Deferred.succeed(pending.decision, Permissions.deny(reason))
    }
    if (turn.fiber !== undefined) yield* Fiber.interrupt(turn.fiber)
    if (s.running.get(turn.chatId) === turn) s.running.delete(turn.chatId)
  })

const postChat = (s: ServerState) =>
  respondRefusals(Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* readBody(request, s.settings.maxBodyBytes)
    const json = yield* parseJson(text)
    const body = yield* decodeRequest(json).pipe(
      Effect.mapError((e) =>
        new Refused({ status: 400, error: "invalid_request", message: ParseResult.TreeFormatter.formatErrorSync(e) })
      )
    )
    if (body.trigger === "regenerate-message") {
      return yield* refuse(400, "unsupported_trigger", "Regenerating a message is not supported; send it again.")
    }
    const last = body.messages[body.messages.length - 1]!
    if (last.role === "user") return yield* submit(s, body, promptOf(s, last))
    if (last.role === "assistant") return yield* resume(s, body.id, last)
    return yield* refuse(400, "invalid_request", "The last message must be a user or an assistant message.")
  }))

const promptOf = (s: ServerState, message: ChatRequest["messages"][number]) =>
  Effect.gen(function*() {
    const texts: Array<string> = []
    for (const part of message.parts) {
      const text = decodeTextPart(part)
      if (Option.isNone(text)) {
        return yield* refuse(400, "unsupported_part", `A user message part of type "${part.type}" is not supported.`)
      }
      texts.push(text.value.text)
    }
    const prompt = texts.join("\n\n")
    if (prompt.trim().length === 0) return yield* refuse(400, "empty_prompt", "The message has no text.")
    if (prompt.length > s.settings.maxPromptChars) {
      return yield* refuse(
        413,
        "prompt_too_long",
        `The message is longer than ${s.settings.maxPromptChars} characters.`
      )
    }
    return prompt
  })

/** A new user message: starts a turn (after ending one that waits for the browser), and streams it. */
const submit = (
  s: ServerState,
  body: ChatRequest,
  readPrompt: Effect.Effect<string, Refused>
) =>
  Effect.gen(function*() {
    const prompt = yield* readPrompt
    const chatId = body.id
    const turn = yield* s.lock.withPermits(1)(Effect.gen(function*() {
      const previous = s.running.get(chatId)
      if (previous?.attached === true) {
        return yield* refuse(409, "chat_busy", "The chat is answering another request.")
      }
      if (previous !== undefined) yield* stopTurn(s, previous, "The user sent a new message instead.")
      const now = Date.now()
      const existing = yield* s.store.get(chatId).pipe(Effect.catchAll(unavailable))
      const chat: ChatStore.Chat = Option.getOrElse(existing, () => ({
        id: chatId,
        sessionId: crypto.randomUUID(),
        title: titleOf(prompt),
        createdAt: now,
        updatedAt: now
      }))
      const resumed = yield* s.chatHistory.exists(chat.sessionId).pipe(Effect.catchAll(unavailable))
      yield* s.store.put({ ...chat, updatedAt: now }).pipe(Effect.catchAll(unavailable))
      const turn = yield* turns.makeTurn(chatId, crypto.randomUUID())
      s.running.set(chatId, turn)
      yield* turns.start(turn, {
        prompt,
        options: { ...s.agentOptions, ...(resumed ? { resume: chat.sessionId } : { sessionId: chat.sessionId }) },
        allow: s.options.allow ?? [],
        deny: s.options.deny ?? [],
        approvalTimeout: s.settings.approvalTimeout,
        clientTools: s.settings.clientTools,
        onError: s.options.onError
      }, s.scope).pipe(
        Effect.provide(s.transport),
        Effect.tap((fiber) =>
          // a turn that ends while no response reads it is over: nothing waits for its chunks
          Effect.forkIn(
            Fiber.await(fiber).pipe(
              Effect.zipRight(Effect.sync(() => {
                if (!turn.attached && s.running.get(chatId) === turn) s.running.delete(chatId)
              }))
            ),
            s.scope
          )
        )
      )
      return turn
    }))
    return respond(s, turn)
  })

/** A continuation: the browser's decisions on what the turn waits for; streams the rest of the turn. */
const resume = (s: ServerState, chatId: string, message: ChatRequest["messages"][number]) =>
  Effect.gen(function*() {
    const turn = yield* s.lock.withPermits(1)(Effect.gen(function*() {
      const turn = s.running.get(chatId)
      if (turn === undefined) {
        return yield* refuse(409, "nothing_pending", "The chat is not waiting for an answer.")
      }
      if (turn.attached) return yield* refuse(409, "chat_busy", "The chat is answering another request.")
      const decisions = yield* decisionsOf(turn, message)
      if (decisions.length === 0) {
        return yield* refuse(400, "no_decision", "The message answers nothing the chat waits for.")
      }
      for (const [pending, result] of decisions) {
        turn.decided.add(pending.toolCallId)
        yield* Deferred.succeed(pending.decision, result)
      }
      turn.attached = true
      return turn
    }))
    return respond(s, turn)
  })

const decisionsOf = (turn: turns.Turn, message: ChatRequest["messages"][number]) =>
  Effect.gen(function*() {
    const decisions: Array<readonly [turns.Pending, Permissions.PermissionResult]> = []
    for (const raw of message.parts) {
      if (raw.type !== "dynamic-tool" && !raw.type.startsWith("tool-")) continue
      const part = decodeToolPart(raw)
      if (Option.isNone(part)) return yield* refuse(400, "invalid_request", "A tool part is not valid.")
      const { approval, output, state, toolCallId } = part.value
      const pending = turn.pending.get(toolCallId)
      if (state === "approval-responded") {
        // the id must be the one the server issued for this call, in this chat
        if (approval?.id !== approvalIdOf(toolCallId) || approval.approved === undefined) {
          return yield* refuse(409, "approval_not_pending", "The approval does not match a request of this chat.")
        }
        if (pending?.kind === "approval") {
          const result = approval.approved
            ? Permissions.allow()
            : Permissions.deny(approval.reason ?? "The user denied this tool call.")
          decisions.push([pending, result])
        } else if (!turn.decided.has(toolCallId)) {
          return yield* refuse(409, "approval_not_pending", "The approval does not match a request of this chat.")
        }
        continue
      }
      if (state === "output-available" && pending?.kind === "input") {
        const answers = decodeAnswers(output)
        if (Option.isNone(answers)) {
          return yield* refuse(400, "invalid_answer", "The tool output must be { answers: { [question]: answer } }.")
        }
        decisions.push([
          pending,
          Permissions.allow({ updatedInput: { ...pending.input, answers: answers.value.answers } })
        ])
      }
    }
    return decisions
  })

/** The response of a request: `start`, the turn's chunks up to its next pause (then `finish`) or its end. */
const respond = (s: ServerState, turn: turns.Turn): HttpServerResponse.HttpServerResponse => {
  const start: UIMessageStream.UIMessageChunk = { type: "start", messageId: turn.messageId }
  const body = Stream.concat(
    Stream.succeed(start),
    Stream.map(
      turns.readUntilPause(turn),
      (out): UIMessageStream.UIMessageChunk => out === "pause" ? { type: "finish", finishReason: "tool-calls" } : out
    )
  ).pipe(Stream.ensuringWith((exit) => detach(s, turn, exit)))
  return HttpServerResponse.stream(encode(body, { keepAliveMs: s.settings.keepAliveMs }), {
    contentType: "text/event-stream",
    headers: Headers.fromInput(headers)
  })
}

/**
 * The response ended. At a pause the turn waits, detached, for the next request; at the end it is over; when the
 * client went away mid-answer the turn is interrupted (its CLI reaped before the response's fiber ends).
 */
const detach = (s: ServerState, turn: turns.Turn, exit: Exit.Exit<unknown, unknown>) =>
  Effect.gen(function*() {
    turn.attached = false
    if (Exit.isInterrupted(exit)) {
      yield* stopTurn(s, turn, "The user left.")
      return
    }
    const fiber = turn.fiber
    const over = fiber === undefined || Option.isSome(yield* Fiber.poll(fiber))
    if (over && turn.leftover.length === 0 && s.running.get(turn.chatId) === turn) s.running.delete(turn.chatId)
  })
