/**
 * Run Claude Code from Effect: a one-shot {@link query}, or a long-lived multi-turn {@link Session}.
 *
 * Both need a {@link Transport.Transport} in the environment: `NodeClaudeAgent.layer` for real processes, or
 * `Transport.layerMemory(...)` (and the testing kit) in tests — the code does not change. Permission, hook and MCP
 * services are picked up from the environment when present.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent, Message, NodeClaudeAgent } from "effect-claude-agent"
 *
 * const program = ClaudeAgent.query("What is 2 + 2?", { maxTurns: 1 }).pipe(
 *   Stream.filter(Message.isResultMessage),
 *   Stream.runForEach((result) => Effect.log(result.subtype === "success" ? result.result : result.errors))
 * )
 *
 * Effect.runPromise(program.pipe(Effect.provide(NodeClaudeAgent.layer)))
 * ```
 *
 * @since 0.1.0
 */
import type * as Chunk from "effect/Chunk"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type {
  ControlError,
  ControlTimeout,
  InputClosed,
  InterruptTimeout,
  InvalidOptions,
  ProcessExited,
  ProtocolViolation,
  SessionError as AgentSessionError
} from "./AgentError.js"
import { type ApiFailure, fromResult } from "./AgentError.js"
import type * as AgentOptions from "./AgentOptions.js"
import type { McpServerConfig, PermissionMode } from "./AgentOptions.js"
import * as internal from "./internal/session/session.js"
import type * as Message from "./Message.js"
import type { PermissionStore } from "./Permissions.js"
import type { Transport } from "./Transport.js"

/**
 * The options of a session or a query: `AgentOptions.Options`, under the name of the module that takes them.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = AgentOptions.Options

/**
 * Errors that can end a session or a query (defined in `AgentError`, with the errors themselves).
 *
 * @since 0.1.0
 * @category errors
 */
export type SessionError = AgentSessionError

/**
 * Which session a `Session` (or query) runs, known before the first prompt is sent:
 * - `new`: a fresh session; the SDK assigns its id (`--session-id`) so it is known at once;
 * - `resume`: `options.resume`; the CLI keeps the id;
 * - `fork`: resume or continue into a new id (assigned by the SDK);
 * - `continue`: the latest session of the cwd, resolved by the SDK from the transcripts on disk (`requested` is
 *   `undefined` when none was found; the CLI then starts a new session and `sessionId` is known with the first turn).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionOrigin {
  readonly kind: "new" | "resume" | "continue" | "fork"
  /** The session asked for (resume id, or the session `continue` resolved to). */
  readonly requested: string | undefined
  /** The session id the CLI uses, when known before the first turn. */
  readonly sessionId: string | undefined
  /** Whether the conversation continues under a new id. */
  readonly forked: boolean
}

/**
 * Errors of a control method (`interrupt`, `setModel`, …).
 *
 * @since 0.1.0
 * @category errors
 */
export type ControlMethodError = ControlError | ControlTimeout | ProcessExited | InputClosed | ProtocolViolation

/**
 * Where the session is: `starting` until the CLI reports a state, then `idle` / `running` / `requires_action`
 * (a permission prompt is waiting), and `exited` once the process is gone.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionState = "starting" | "idle" | "running" | "requires_action" | "exited"

/**
 * What a prompt can be: text, or a full user message (content blocks, images, `priority`, …). Defined in `Message`.
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = Message.Prompt

/**
 * A long-lived Claude Code session: one CLI process, many turns. It belongs to the `Scope` it was created in;
 * closing the scope ends stdin, waits for the CLI to exit (bounded), and reaps it.
 *
 * `messages` is the single ordered stream of everything the session says; consume it from one fiber. `turn` sends a
 * prompt and yields that turn's messages up to and including its `result`, leaving later messages for the next
 * reader.
 *
 * @since 0.1.0
 * @category models
 */
export interface Session {
  /** Which session this is (new, resumed, continued, forked), known before the first prompt. */
  readonly origin: SessionOrigin
  /** The CLI's process id (`None` with an in-memory transport). */
  readonly pid: Option.Option<number>
  /**
   * The session id the CLI uses: known at once when `origin.sessionId` is set (always, except `continue` with no
   * session to continue), else with the first message that carries it. Fails if the session ends before. Should the
   * CLI's `system/init` name another session than `origin.sessionId`, this follows the CLI (and a warning is
   * logged); `origin` keeps what was asked for.
   */
  readonly sessionId: Effect.Effect<string, SessionError>
  /** Where the session is right now. */
  readonly state: Effect.Effect<SessionState>
  /** Sends a prompt. Messages are written in order and never dropped; a prompt sent mid-turn queues a new turn. */
  readonly send: (prompt: Prompt) => Effect.Effect<void, ProcessExited | InputClosed>
  /** Every message of the session, in order, until the CLI exits. Single consumer. */
  readonly messages: Stream.Stream<Message.SdkMessage, SessionError>
  /** Sends a prompt and yields the messages of its turn, up to and including the `result`. */
  readonly turn: (prompt: Prompt) => Stream.Stream<Message.SdkMessage, SessionError>
  /**
   * Stops the current turn; it ends with a `result` of subtype `error_during_execution`. Fails with
   * `InterruptTimeout` if the CLI does not acknowledge it within `interruptTimeout` (the session stays usable).
   */
  readonly interrupt: Effect.Effect<Message.InterruptResponse, ControlMethodError | InterruptTimeout>
  /** Changes the permission mode; returns the mode now in effect when the CLI reports it. */
  readonly setPermissionMode: (
    mode: PermissionMode
  ) => Effect.Effect<Option.Option<string>, ControlMethodError>
  /** Changes the model for the next requests (`undefined` or `"default"`: the session default). */
  readonly setModel: (model?: string) => Effect.Effect<void, ControlMethodError>
  /** Sets the thinking budget (`null` clears it). */
  readonly setMaxThinkingTokens: (
    maxThinkingTokens: number | null,
    display?: "summarized" | "omitted" | "highlights"
  ) => Effect.Effect<void, ControlMethodError>
  /** The answer to `initialize` (waits for it). */
  readonly initializationResult: Effect.Effect<Message.InitializeResponse, SessionError>
  /** Slash commands (from `initialize`, replaced by later `system/commands_changed`). */
  readonly supportedCommands: Effect.Effect<ReadonlyArray<Message.SlashCommand>, SessionError>
  readonly supportedModels: Effect.Effect<ReadonlyArray<Message.ModelInfo>, SessionError>
  readonly supportedAgents: Effect.Effect<ReadonlyArray<Message.AgentInfo>, SessionError>
  readonly accountInfo: Effect.Effect<Message.AccountInfo, SessionError>
  /**
   * The status of every MCP server, as the CLI reports it (`mcp_status`). The CLI keeps an in-process server's status
   * from its handshake; for an `McpProxy` whose upstream server is away, the proxy's live state replaces the CLI's
   * `connected`: `pending` while it reconnects, `failed` otherwise, with `error` saying why.
   */
  readonly mcpServerStatus: Effect.Effect<ReadonlyArray<Message.McpServerStatus>, ControlMethodError>
  /** How the context window is used (`detail: "full"` adds per-category breakdowns). */
  readonly getContextUsage: (
    options?: { readonly detail?: "summary" | "full" }
  ) => Effect.Effect<Message.ContextUsage, ControlMethodError>
  /** Undoes file changes made since a user message (needs `enableFileCheckpointing`). */
  readonly rewindFiles: (
    userMessageId: string,
    options?: { readonly dryRun?: boolean }
  ) => Effect.Effect<Message.RewindFilesResult, ControlMethodError>
  /**
   * Reconnects an MCP server by name (a process server is restarted). The CLI refuses in-process (`sdk`) servers
   * with a `ControlError` that says so; toggling such a server off and on makes the CLI run its handshake again.
   */
  readonly reconnectMcpServer: (serverName: string) => Effect.Effect<void, ControlMethodError>
  /** Enables or disables an MCP server by name (disabled: `disabled` in `mcpServerStatus`, its tools gone). */
  readonly toggleMcpServer: (serverName: string, enabled: boolean) => Effect.Effect<void, ControlMethodError>
  /**
   * Replaces the dynamically managed MCP servers, as the official SDK does. Takes the same configs as
   * `Options.mcpServers`: process servers (stdio, HTTP, SSE) go to the CLI as they are (a stdio config without `type`
   * gets `type: "stdio"`); in-process servers (`SdkMcp.createSdkMcpServer`, `McpProxy` values, any
   * `{ type: "sdk", instance }`) are connected by the SDK first and routed like those given at start-up. An
   * in-process server of this session (the start-up ones included) that is not in `servers` is disconnected; one
   * already connected under the same name is kept as it is. Reports what the CLI added, removed and could not load.
   * Configs are checked as `Options.mcpServers` is: a malformed one fails with `InvalidOptions` and nothing is sent.
   */
  readonly setMcpServers: (
    servers: Readonly<Record<string, McpServerConfig>>
  ) => Effect.Effect<Message.McpSetServersResult, ControlMethodError | InvalidOptions>
  /** Stops a background task (a `task_notification` with status `stopped` follows). */
  readonly stopTask: (taskId: string) => Effect.Effect<void, ControlMethodError>
  /** Sends any other control request and returns the raw response (escape hatch for newer CLI features). */
  readonly request: (
    subtype: string,
    payload?: Readonly<Record<string, unknown>>,
    options?: { readonly timeout?: Duration.DurationInput }
  ) => Effect.Effect<unknown, ControlMethodError>
  /**
   * This session's permission state (used when a `Permissions` service is provided): a mode (`ask`, or `allow` /
   * `deny` everything) and the rules remembered from accepted "always allow" suggestions.
   */
  readonly permissions: PermissionStore
  /** Closes stdin: the CLI finishes the work in flight and exits. Later sends fail with `InputClosed`. */
  readonly endInput: Effect.Effect<void>
}

/**
 * Starts a session: spawns the CLI, sends `initialize`, and returns at once (prompts sent before `initialize` is
 * answered are queued by the CLI).
 *
 * @since 0.1.0
 * @category constructors
 */
export const session: (options?: Options) => Effect.Effect<Session, SessionError, Transport | Scope.Scope> =
  internal.session

/**
 * One-shot query: starts a CLI, sends the prompt (a string, or a stream of prompts for streaming input), and yields
 * every message until the CLI has answered every prompt. After the last `result`, stdin is closed and the stream
 * ends when the CLI exits (at most 2 seconds later); the process is reaped when the stream ends, fails or is
 * interrupted.
 *
 * A stream of prompts is read on a fiber of its own, interrupted without waiting when the query ends: its release
 * never holds the query up. It fails the query with its own error `E`; if it dies, with `InvalidOptions { option:
 * "prompt", cause }`; an item that is not a user message fails it with `InvalidOptions` naming the item's index
 * before anything of it is written.
 *
 * @since 0.1.0
 * @category constructors
 */
export const query: <E = never, R = never>(
  prompt: string | Stream.Stream<Prompt, E, R>,
  options?: Options
) => Stream.Stream<Message.SdkMessage, SessionError | E, Transport | R> = internal.query

/**
 * A query whose CLI is started (and `initialize` sent) but whose prompt is not sent yet: see {@link queryWithOrigin}.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartedQuery<E = never, R = never> {
  /** Which session the query runs (new, resumed, continued, forked), decided before anything was sent. */
  readonly origin: SessionOrigin
  /** The CLI's process id (`None` with an in-memory transport). */
  readonly pid: Option.Option<number>
  /**
   * The session id the CLI uses: `origin.sessionId` when it is set, unless the CLI's `system/init` names another
   * (then that one, and a warning is logged); otherwise known with the first message that carries it.
   */
  readonly sessionId: Effect.Effect<string, SessionError>
  /** The control methods of the query's session (`interrupt`, `setModel`, `mcpServerStatus`, …). */
  readonly control: QueryControl
  /**
   * Sends the prompt and yields every message, exactly as {@link query} does; the CLI is reaped when the stream
   * ends, or at the latest when the scope of `queryWithOrigin` closes. Run it once.
   */
  readonly messages: Stream.Stream<Message.SdkMessage, SessionError | E, R>
}

/**
 * The control methods of a query's session: the members of {@link Session} that neither send prompts nor read
 * messages (the query does both).
 *
 * @since 0.1.0
 * @category models
 */
export type QueryControl = Pick<
  Session,
  | "interrupt"
  | "setPermissionMode"
  | "setModel"
  | "setMaxThinkingTokens"
  | "initializationResult"
  | "supportedCommands"
  | "supportedModels"
  | "supportedAgents"
  | "accountInfo"
  | "mcpServerStatus"
  | "getContextUsage"
  | "rewindFiles"
  | "reconnectMcpServer"
  | "toggleMcpServer"
  | "setMcpServers"
  | "stopTask"
  | "request"
  | "permissions"
>

/**
 * A query whose CLI is started (and `initialize` sent) and whose prompt is given later: see {@link startQuery}.
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingQuery extends Omit<StartedQuery, "messages"> {
  /**
   * Sends the prompt and yields every message, exactly as {@link query} does. Run it (or {@link PendingQuery.pull})
   * once.
   */
  readonly messages: <E = never, R = never>(
    prompt: string | Stream.Stream<Prompt, E, R>
  ) => Stream.Stream<Message.SdkMessage, SessionError | E, R>
  /**
   * Sends the prompt and returns the messages as a pull, in the shape of `Stream.toPull`'s: each pull takes the
   * messages buffered so far (waiting for at least one) and fails with `None` at the end. What `messages` is made of;
   * for a consumer that hands the messages out itself (an async iterator) without a Stream's per-chunk machinery.
   * The pull belongs to the scope it was made in.
   */
  readonly pull: <E = never, R = never>(
    prompt: string | Stream.Stream<Prompt, E, R>
  ) => Effect.Effect<
    Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<SessionError | E>>,
    SessionError,
    R | Scope.Scope
  >
}

/**
 * Starts the CLI of a query (spawn, `initialize` sent) before its prompt is known: e.g. to answer the first prompt
 * without the start-up's latency, or to read the session's origin first. The CLI belongs to the Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startQuery: (options?: Options) => Effect.Effect<PendingQuery, SessionError, Transport | Scope.Scope> =
  internal.startQuery

/**
 * A stream of prompts read from an async iterable (e.g. a generator waiting for the user's next input), for
 * {@link query}: ending the query never waits for the iterable (its `return()` is called, not awaited). An iterable
 * that throws or rejects fails the stream with `InvalidOptions { option: "prompt" }` (`cause`: what was thrown).
 *
 * @since 0.1.0
 * @category constructors
 */
export const promptsFromAsyncIterable: <A extends Prompt>(
  iterable: AsyncIterable<A>
) => Stream.Stream<A, InvalidOptions> = internal.promptsFromAsyncIterable

/**
 * {@link query} in two steps, so that the caller knows which session runs before the first prompt is sent (e.g. to
 * store the id of a new or forked session first): the Effect starts the CLI and returns the session's
 * {@link SessionOrigin}; running `messages` sends the prompt. The CLI belongs to the Scope.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent } from "effect-claude-agent"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const query = yield* ClaudeAgent.queryWithOrigin("Go on", { continue: true, forkSession: true })
 *   yield* Effect.log(`running ${query.origin.sessionId}, forked from ${query.origin.requested}`)
 *   return yield* Stream.runCollect(query.messages)
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const queryWithOrigin: <E = never, R = never>(
  prompt: string | Stream.Stream<Prompt, E, R>,
  options?: Options
) => Effect.Effect<StartedQuery<E, R>, SessionError, Transport | Scope.Scope> = internal.queryWithOrigin

/**
 * Fails the stream with a typed {@link ApiFailure} (`RateLimited`, `Overloaded`, `ApiError`) right after a `result`
 * that reports an Anthropic API error — the CLI has already retried by then (each attempt is a `system/api_retry`
 * message in the stream). Without it, such a turn ends like the official SDK's: a `result` with `is_error: true`.
 *
 * Retrying is then a policy of yours, e.g. `Effect.retry({ schedule, while: (e) => e._tag === "Overloaded" })`
 * around a query whose turn had no side effects yet. A CLI without credentials ("Not logged in") or with a key the
 * API refused (401) fails with an `ApiError` whose `isAuthentication` is `true` (`errorType: "authentication_error"`)
 * and whose message says so, with the CLI's own text.
 *
 * @since 0.1.0
 * @category combinators
 */
export const failOnApiError = <E, R>(
  self: Stream.Stream<Message.SdkMessage, E, R>
): Stream.Stream<Message.SdkMessage, E | ApiFailure, R> =>
  Stream.suspend(() => {
    // the kind of the API error the turn's synthetic assistant message reported (e.g. "authentication_failed")
    let assistantError: string | undefined
    return Stream.flatMap(self, (message) => {
      if (message.type === "assistant") assistantError = message.error
      const failure = message.type === "result" ? fromResult(message, assistantError) : undefined
      if (message.type === "result") assistantError = undefined
      return failure === undefined
        ? Stream.succeed(message)
        : Stream.concat(Stream.succeed(message), Stream.fail(failure))
    })
  })
