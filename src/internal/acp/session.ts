/**
 * One ACP session: a Claude Code session (one CLI process) in a scope of its own, its prompts, cancel, modes, and
 * the permission policy that asks the editor.
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as AgentOptions from "../../AgentOptions.js"
import * as ClaudeAgent from "../../ClaudeAgent.js"
import * as Message from "../../Message.js"
import * as Permissions from "../../Permissions.js"
import type * as SessionStore from "../../SessionStore.js"
import type * as Transport from "../../Transport.js"
import { type Connection, ErrorCode, internalError, invalidParams, invalidRequest, RpcError } from "./jsonRpc.js"
import { availableModes, configOptions, MODE_CONFIG, MODEL_CONFIG, modeState, toPermissionMode } from "./modes.js"
import { CLEAN_UP_BOUND, type ClientOffers, type ClientTools, makeClientTools, SERVER_NAME } from "./clientTools.js"
import { editorPolicy } from "./permission.js"
import { toContent } from "./prompt.js"
import type {
  McpServer,
  McpServerRemote,
  PromptRequest,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
  StopReason
} from "./schema.js"
import { makeTranslator } from "./updates.js"

/** What every session of a connection shares. @internal */
export interface Context {
  readonly connection: Connection
  /** The options every session starts from. */
  readonly options: AgentOptions.Options
  readonly rules: {
    readonly allow: ReadonlyArray<string>
    readonly deny: ReadonlyArray<string>
    readonly ask: ReadonlyArray<string>
  }
  readonly permissionTimeout: Duration.Duration
  /** How long a cancel waits for the CLI to stop the turn before the CLI is ended. */
  readonly interruptTimeout: Duration.Duration
  readonly history: SessionStore.Service
  /** What the client offers (its file system, its terminals), known once it initialized. */
  readonly offers: () => ClientOffers
}

/** @internal */
export interface AcpSession {
  readonly id: string
  readonly cwd: string
  readonly state: () => { readonly modes: SessionModeState; readonly configOptions: ReadonlyArray<SessionConfigOption> }
  readonly prompt: (params: PromptRequest) => Effect.Effect<{ readonly stopReason: StopReason }, RpcError>
  readonly cancel: Effect.Effect<void>
  readonly setMode: (modeId: string) => Effect.Effect<void, RpcError>
  readonly setConfigOption: (
    configId: string,
    value: string | boolean
  ) => Effect.Effect<ReadonlyArray<SessionConfigOption>, RpcError>
  /** Sends the history as `session/update`s (`session/load`). */
  readonly replay: Effect.Effect<void, RpcError>
  /** Sends `available_commands_update` with the CLI's slash commands. */
  readonly announceCommands: Effect.Effect<void>
  /** Ends the session: the CLI and everything it started are reaped. */
  readonly close: Effect.Effect<void>
}

/** The session id of a `session/load` or `session/resume`: the CLI names sessions by UUID. @internal */
export const isSessionId = (id: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

/** @internal */
export const sessionNotFound = (sessionId: string) =>
  new RpcError({ code: ErrorCode.ResourceNotFound, description: "Resource not found", data: { sessionId } })

const isRemote = (server: McpServer): server is typeof McpServerRemote.Type =>
  server.type === "http" || server.type === "sse"

/** The client's MCP servers as the CLI takes them. */
const mcpServers = (servers: ReadonlyArray<McpServer>): Record<string, AgentOptions.McpServerConfig> =>
  Object.fromEntries(servers.map((server): [string, AgentOptions.McpServerConfig] => {
    if (isRemote(server)) {
      return [server.name, {
        type: server.type,
        url: server.url,
        headers: Object.fromEntries((server.headers ?? []).map((h) => [h.name, h.value]))
      }]
    }
    return [server.name, {
      type: "stdio",
      command: server.command,
      args: server.args ?? [],
      env: Object.fromEntries((server.env ?? []).map((e) => [e.name, e.value]))
    }]
  }))

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/**
 * The stop reason of a turn, or the error it ended with. Claude Code ends a turn it recovers from no more (an output
 * cut at the token limit three times, a second refusal) with `is_error: true`: the cut is told by the error of its
 * synthetic assistant message (`max_output_tokens`), the refusal by the result's `stop_reason`.
 *
 * @internal
 */
export const stopReasonOf = (
  result: Message.ResultMessage | undefined,
  cancelled: boolean,
  assistantError?: string | undefined
): Either.Either<StopReason, RpcError> => {
  if (cancelled) return Either.right("cancelled")
  if (result === undefined) return Either.left(internalError("The turn ended without a result"))
  switch (result.subtype) {
    case "success": {
      if (result.stop_reason === "refusal") return Either.right("refusal")
      if (
        result.stop_reason === "max_tokens" || result.stop_reason === "model_context_window_exceeded" ||
        assistantError === "max_output_tokens"
      ) return Either.right("max_tokens")
      if (result.is_error) return Either.left(internalError(result.result.length > 0 ? result.result : "API error"))
      return Either.right("end_turn")
    }
    case "error_max_turns":
      return Either.right("max_turn_requests")
    default:
      return Either.left(
        internalError(
          `The turn failed (${result.subtype})${result.errors.length > 0 ? `: ${result.errors.join("; ")}` : ""}`
        )
      )
  }
}

/** Sends the history of a session, entry by entry; a session without a transcript is not found. */
const replayHistory = (
  history: SessionStore.Service,
  sessionId: string,
  cwd: string,
  send: (entry: SessionStore.TranscriptItem) => Effect.Effect<void>
): Effect.Effect<void, RpcError> =>
  history.info(sessionId, cwd).pipe(
    Effect.mapError(() => sessionNotFound(sessionId)),
    Effect.zipRight(
      history.entries(sessionId, cwd).pipe(
        Stream.runForEach(send),
        Effect.mapError((error) => internalError(`The history could not be read: ${error.message}`))
      )
    )
  )

/** `available_commands_update` with the CLI's slash commands (none when the CLI lists none). */
const commandsUpdate = (
  session: ClaudeAgent.Session,
  notify: (update: SessionUpdate) => Effect.Effect<void>
): Effect.Effect<void> =>
  session.supportedCommands.pipe(
    Effect.flatMap((commands) =>
      notify({
        sessionUpdate: "available_commands_update",
        availableCommands: commands.map((c) => ({
          name: c.name,
          description: c.description,
          ...(c.argumentHint === undefined || c.argumentHint.length === 0 ? {} : { input: { hint: c.argumentHint } })
        }))
      })
    ),
    Effect.catchAll((error) => Effect.logDebug(`ACP: no slash commands: ${error.message}`))
  )

/**
 * A cancelled prompt is answered once the editor's tools it interrupted have cleaned up (a terminal killed and
 * released), as ACP asks; bounded as that clean-up is.
 */
const afterCleanUp = (tools: ClientTools | undefined, cancelled: boolean): Effect.Effect<void> =>
  cancelled && tools !== undefined ? Effect.ignore(Effect.timeout(tools.settled, CLEAN_UP_BOUND)) : Effect.void

/** Opens a session (new, or resumed from `resume`) in a scope of its own, forked from `parent`. @internal */
export const open = (
  ctx: Context,
  parent: Scope.Scope,
  params: {
    readonly cwd: string
    readonly mcpServers: ReadonlyArray<McpServer>
    readonly resume?: string | undefined
  }
): Effect.Effect<AcpSession, RpcError, Transport.Transport> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    // a session that fails or is withdrawn while it opens is ended, with its CLI
    return yield* build(ctx, scope, params).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
  })

const build = (
  ctx: Context,
  scope: Scope.CloseableScope,
  params: {
    readonly cwd: string
    readonly mcpServers: ReadonlyArray<McpServer>
    readonly resume?: string | undefined
  }
): Effect.Effect<AcpSession, RpcError, Transport.Transport> =>
  Effect.gen(function*() {
    const { connection } = ctx
    const cwd = params.cwd
    const translator = makeTranslator(cwd)
    const modes = availableModes(ctx.options)
    let mode: string = ctx.options.permissionMode ?? "default"
    if (!modes.some((m) => m.id === mode)) mode = "default"
    let model = ctx.options.model ?? "default"
    let models: ReadonlyArray<Message.ModelInfo> = []
    const always: Array<string> = []
    // set once the CLI's session id is known (before any prompt, so before any permission request)
    let sessionId = ""
    const notify = (update: SessionUpdate) => connection.notify("session/update", { sessionId, update })

    const offers = ctx.offers()
    const policy = editorPolicy({
      connection,
      cwd,
      rules: ctx.rules,
      always,
      sessionId: () => sessionId,
      notify,
      announce: translator.announce,
      clientFs: offers.fs
    })
    const clientTools = yield* makeClientTools({
      connection,
      cwd,
      sessionId: () => sessionId,
      notify,
      terminalOf: translator.terminalOf,
      deny: ctx.rules.deny
    }, offers)

    const options: AgentOptions.Options = {
      ...ctx.options,
      cwd,
      permissionMode: toPermissionMode(modes, mode) ?? "default",
      includePartialMessages: true,
      mcpServers: {
        ...ctx.options.mcpServers,
        ...mcpServers(params.mcpServers),
        ...(clientTools === undefined ? {} : { [SERVER_NAME]: clientTools.server })
      },
      ...(clientTools === undefined
        ? {}
        : { disallowedTools: [...(ctx.options.disallowedTools ?? []), ...clientTools.replaced] }),
      ...(params.resume === undefined ? {} : { resume: params.resume })
    }
    const session = yield* ClaudeAgent.session(options).pipe(
      Effect.provide(Permissions.layer(policy, { timeout: ctx.permissionTimeout })),
      Scope.extend(scope),
      Effect.mapError((error) =>
        error._tag === "InvalidOptions"
          ? invalidParams(`Invalid session options: ${error.message}`)
          : internalError(`Claude Code could not start: ${error.message}`)
      )
    )
    sessionId = session.origin.sessionId ?? (yield* session.sessionId.pipe(
      Effect.mapError((error) => internalError(`Claude Code could not start: ${error.message}`))
    ))
    models = yield* session.supportedModels.pipe(Effect.orElseSucceed(() => []))

    /** The prompt in flight: at most one per session (a second is refused, not queued). */
    let running: { cancelled: boolean } | undefined
    let ended = false

    const onMessage = (message: Message.SdkMessage): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (
          (Message.isSystemInit(message) || (message.type === "system" && message.subtype === "status")) &&
          "permissionMode" in message && typeof message.permissionMode === "string" &&
          message.permissionMode !== mode && modes.some((m) => m.id === message.permissionMode)
        ) {
          mode = message.permissionMode
          yield* notify({ sessionUpdate: "current_mode_update", currentModeId: mode })
        }
        for (const update of translator.step(message)) yield* notify(update)
      })

    const interruptTurn = Effect.gen(function*() {
      const stopped = yield* session.interrupt.pipe(
        Effect.timeout(ctx.interruptTimeout),
        Effect.either
      )
      if (Either.isLeft(stopped)) {
        // the CLI did not stop the turn: end it, with everything it started
        yield* Effect.logWarning(`ACP: session ${sessionId} did not stop its turn; ending its CLI`)
        ended = true
        yield* Scope.close(scope, Exit.void)
      }
    })

    const cancel = Effect.suspend(() => {
      if (running === undefined || running.cancelled) return Effect.void
      running.cancelled = true
      return Effect.asVoid(Effect.forkIn(interruptTurn, scope))
    })

    const prompt = (params: PromptRequest) =>
      Effect.suspend(() => {
        if (ended) {
          return Effect.fail(
            internalError(`The Claude Code process of session ${sessionId} has ended; load the session again`)
          )
        }
        if (running !== undefined) {
          return Effect.fail(
            invalidRequest(
              `Session ${sessionId} is already running a prompt; wait for its response or send session/cancel`
            )
          )
        }
        const content = toContent(params.prompt)
        if (Either.isLeft(content)) return Effect.fail(invalidParams(`Invalid prompt: ${content.left}`))
        const turn: { cancelled: boolean; assistantError?: string | undefined } = { cancelled: false }
        running = turn
        return session.turn(Message.userMessage(content.right)).pipe(
          Stream.tap((message) => {
            if (message.type === "assistant" && message.parent_tool_use_id === null) turn.assistantError = message.error
            return onMessage(message)
          }),
          Stream.filter(Message.isResultMessage),
          Stream.runLast,
          Effect.map(Option.getOrUndefined),
          Effect.either,
          Effect.tap(() => afterCleanUp(clientTools, turn.cancelled)),
          Effect.flatMap((outcome) => {
            if (Either.isRight(outcome)) return stopReasonOf(outcome.right, turn.cancelled, turn.assistantError)
            if (turn.cancelled) return Either.right<StopReason>("cancelled")
            ended = true
            return Either.left(internalError(`Claude Code failed: ${describe(outcome.left)}`))
          }),
          Effect.map((stopReason) => ({ stopReason })),
          // a prompt request withdrawn by the client (`$/cancel_request`) stops the turn like session/cancel
          Effect.onInterrupt(() => cancel),
          Effect.ensuring(Effect.sync(() => {
            running = undefined
          }))
        )
      })

    const state = () => ({
      modes: modeState(modes, mode),
      configOptions: configOptions(modes, mode, models, model)
    })

    const setMode = (modeId: string) =>
      Effect.gen(function*() {
        const permissionMode = toPermissionMode(modes, modeId)
        if (permissionMode === undefined) return yield* Effect.fail(invalidParams(`Unknown mode: ${modeId}`))
        yield* session.setPermissionMode(permissionMode).pipe(
          Effect.mapError((error) => internalError(`Claude Code refused the mode: ${error.message}`))
        )
        mode = permissionMode
      })

    const setConfigOption = (configId: string, value: string | boolean) =>
      Effect.gen(function*() {
        if (typeof value !== "string") return yield* Effect.fail(invalidParams(`${configId} takes a value id`))
        if (configId === MODE_CONFIG) {
          yield* setMode(value)
        } else if (configId === MODEL_CONFIG && (value === model || models.some((m) => m.value === value))) {
          yield* session.setModel(value).pipe(
            Effect.mapError((error) => internalError(`Claude Code refused the model: ${error.message}`))
          )
          model = value
        } else {
          return yield* Effect.fail(invalidParams(`Unknown config option or value: ${configId} = ${value}`))
        }
        return state().configOptions
      })

    const replay = replayHistory(ctx.history, sessionId, cwd, (entry) =>
      Effect.forEach(translator.replay(entry), notify, { discard: true }))

    const announceCommands = commandsUpdate(session, notify)

    return {
      id: sessionId,
      cwd,
      state,
      prompt,
      cancel,
      setMode,
      setConfigOption,
      replay,
      announceCommands,
      close: Scope.close(scope, Exit.void)
    } satisfies AcpSession
  })
