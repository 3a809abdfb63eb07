/**
 * A chat server for the AI SDK's `useChat` / `Chat` clients on `@effect/platform`'s `HttpServer`
 * (`effect-claude-agent/ui`). Each chat is a Claude Code session; each request streams a turn as the UI message
 * stream ({@link UIMessageStream}).
 *
 * Routes (under {@link Options.prefix}, `/api` by default):
 * - `POST /api/chat`: the body `DefaultChatTransport` sends (`{ id, messages, trigger, messageId }`). Only the last
 *   message is read: a user message (text parts) starts a turn in the chat's CLI session (a new session the first
 *   time, resumed after that: the chat id → session mapping is in the {@link ChatStore}, so a chat resumes after
 *   the server restarts); an assistant message carries the browser's answers to what the turn waits for (below).
 * - `GET /api/chats` (the chats, newest first), `GET /api/chats/:id` (`{ id, title, messages }`: the history as
 *   `UIMessage[]`, see {@link ChatHistory}), `DELETE /api/chats/:id` (forgets the chat; the CLI session stays).
 * - `GET /api/chat/:id/stream` answers `204` (no stream to resume), so `useChat({ resume: true })` works.
 *
 * Permissions in the browser: a tool call that the {@link Options.allow} / {@link Options.deny} rules do not decide
 * is asked in the browser with the AI SDK's tool approval flow. The response ends with a `tool-approval-request`
 * (and `finish` with `finishReason: "tool-calls"`) while the CLI waits; the client's `addToolApprovalResponse` is
 * sent with the next request (`sendAutomaticallyWhen`), which decides the permission and streams the rest of the
 * turn into the same assistant message. `AskUserQuestion` (see {@link Options.clientTools}) is a client tool: the
 * browser answers it with `addToolOutput({ tool, toolCallId, output: { answers } })`. No answer within
 * {@link Options.approvalTimeout} (the browser went away) is a deny. A decision is accepted only for a request the
 * server made in this chat (approval id `approval:<toolCallId>`); anything else is refused with `409`.
 *
 * Concurrency: one turn per chat. A request for a chat that is streaming gets `409 chat_busy` (not queued: two tabs
 * on one chat must not run two CLIs on one session); a new user message while the turn waits for an approval
 * denies it and ends that turn first. A client that goes away mid-answer interrupts the turn and its CLI is reaped
 * (the SDK's close guarantees) before the request's fiber ends.
 *
 * Bad input never reaches the CLI: a body larger than {@link Options.maxBodyBytes} gets `413`, a body that is not
 * the AI SDK's shape `400` with a reason (`{ error, message }`; `trigger: "regenerate-message"` too: send the message
 * again instead), an unknown chat `404`, a chat id outside
 * `A-Z a-z 0-9 _ -` (1 to 128) `400`. The server has no authentication: put it behind yours (anyone who can
 * reach it can use every chat).
 *
 * @example
 * ```ts
 * import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
 * import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
 * import * as NodePath from "@effect/platform-node/NodePath"
 * import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
 * import * as Layer from "effect/Layer"
 * import { NodeClaudeAgent } from "effect-claude-agent"
 * import { ChatServer, ChatStore } from "effect-claude-agent/ui"
 * import { createServer } from "node:http"
 *
 * const Server = ChatServer.layer({ options: { model: "sonnet" }, allow: ["Read", "Bash(ls:*)"] }).pipe(
 *   Layer.provide(ChatStore.layerFileSystem({ directory: ".chats" })),
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 3000 })),
 *   Layer.provide(NodeClaudeAgent.layer),
 *   Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
 * )
 *
 * NodeRuntime.runMain(Layer.launch(Server))
 * ```
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as Path from "@effect/platform/Path"
import type * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as AgentOptions from "./AgentOptions.js"
import type * as ChatStore from "./ChatStore.js"
import * as internal from "./internal/ui/server.js"
import type * as Transport from "./Transport.js"

/**
 * Options of {@link make} and {@link layer}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /**
   * The options of every turn (cwd, model, env, …). The server sets `includePartialMessages`, and `sessionId` /
   * `resume` for the chat's session. History is read from this cwd's sessions: from the `TranscriptStore` when one
   * is in context, else from the session files under `env.CLAUDE_CONFIG_DIR` (else `env.HOME/.claude`, else the
   * process's).
   */
  readonly options?: AgentOptions.Options | undefined
  /** Permission rules allowed without asking the browser (`Permissions.rules` syntax: `"Read"`, `"Bash(ls:*)"`). */
  readonly allow?: ReadonlyArray<string> | undefined
  /** Permission rules denied without asking the browser. */
  readonly deny?: ReadonlyArray<string> | undefined
  /** How long a permission waits for the browser's answer before it is denied. Defaults to 5 minutes. */
  readonly approvalTimeout?: Duration.DurationInput | undefined
  /**
   * Tools the browser answers with `addToolOutput` instead of an approval (`output: { answers }`, the answer to
   * each question by question text). Defaults to `["AskUserQuestion"]`.
   */
  readonly clientTools?: ReadonlyArray<string> | undefined
  /** The largest request body read, in bytes (a client sends the whole chat each time). Defaults to 8 MiB. */
  readonly maxBodyBytes?: number | undefined
  /** The longest prompt accepted, in UTF-16 code units. Defaults to 100 000. */
  readonly maxPromptChars?: number | undefined
  /** An SSE comment after this many quiet milliseconds, so proxies keep the stream open. Defaults to 15 000. */
  readonly keepAliveMs?: number | undefined
  /** Where the routes live. Defaults to `"/api"`. */
  readonly prefix?: `/${string}` | undefined
  /** The `errorText` sent for a failed turn. Defaults to `"The agent failed."` (the error is logged, not sent). */
  readonly onError?: ((error: unknown) => string) | undefined
}

/**
 * The chat routes, to mount in your own router (`HttpRouter.concat`). Turns run in the scope of `make` (closing
 * it interrupts them and reaps their CLIs).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<
  HttpRouter.HttpRouter,
  ConfigError.ConfigError,
  ChatStore.ChatStore | Transport.Transport | FileSystem.FileSystem | Path.Path | Scope.Scope
> = internal.make

/**
 * Serves the chat routes on the `HttpServer` in context (e.g. `NodeHttpServer.layer`), with more routes of yours
 * if you pass them (a page, say).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never, R = never>(
  options?: Options,
  routes?: HttpRouter.HttpRouter<E, R>
): Layer.Layer<
  never,
  ConfigError.ConfigError,
  | HttpServer.HttpServer
  | ChatStore.ChatStore
  | Transport.Transport
  | FileSystem.FileSystem
  | Path.Path
  | Exclude<Exclude<Exclude<R, HttpRouter.RouteContext>, HttpServerRequest.HttpServerRequest>, Scope.Scope>
> =>
  Layer.scopedDiscard(
    Effect.flatMap(internal.make(options), (chat) =>
      HttpServer.serveEffect(routes === undefined ? chat : HttpRouter.concat(chat, routes)))
  )
