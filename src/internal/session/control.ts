/**
 * A session's control methods (`interrupt`, `setModel`, `mcpServerStatus`, …): control requests with their answers
 * checked against their schemas.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { InterruptTimeout, type ProtocolViolation } from "../../AgentError.js"
import type { Options } from "../../AgentOptions.js"
import type { ControlMethodError, Session, SessionError } from "../../ClaudeAgent.js"
import type * as ControlProtocol from "../../ControlProtocol.js"
import * as Message from "../../Message.js"
import type { SessionExtensions } from "./extensions.js"
import * as Opts from "./options.js"
import { decodeResponse } from "./startup.js"

/**
 * Checks `mcp_status` answers. `mcpServerStatus` is built with every session: its guard is compiled once, here (see
 * `decodeResponse`), not per session.
 */
const decodeMcpStatus = decodeResponse(
  Schema.Struct({ mcpServers: Schema.Array(Message.McpServerStatus) }),
  "mcp_status"
)

/**
 * The members of a {@link Session} that are control requests.
 *
 * @internal
 */
export type Controls = Pick<
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
>

/**
 * The control methods of a session over `protocol`. `commands` is the latest `commands_changed` list, if any.
 *
 * @internal
 */
export const make = (
  protocol: ControlProtocol.ControlProtocol,
  extensions: SessionExtensions,
  options: Options,
  initializationResult: Effect.Effect<Message.InitializeResponse, SessionError>,
  commands: () => ReadonlyArray<Message.SlashCommand> | undefined
): Controls => {
  const request = (
    subtype: string,
    payload?: Readonly<Record<string, unknown>>,
    requestOptions?: ControlProtocol.RequestOptions
  ): Effect.Effect<unknown, ControlMethodError> => protocol.request(subtype, payload, requestOptions)

  const checked = <A>(
    decode: (u: unknown) => Effect.Effect<A, ProtocolViolation>,
    subtype: string,
    payload?: Readonly<Record<string, unknown>>
  ): Effect.Effect<A, ControlMethodError> =>
    Effect.flatMap(request(subtype, payload), decode).pipe(Effect.withSpan(`Session.${subtype}`))

  const typed = <A, I>(
    schema: Schema.Schema<A, I>,
    subtype: string,
    payload?: Readonly<Record<string, unknown>>
  ): Effect.Effect<A, ControlMethodError> => checked(decodeResponse(schema, subtype), subtype, payload)

  const unit = (subtype: string, payload?: Readonly<Record<string, unknown>>) =>
    Effect.asVoid(request(subtype, payload)).pipe(Effect.withSpan(`Session.${subtype}`))

  const interruptTimeout = options.interruptTimeout ?? "5 seconds"
  return {
    interrupt: Effect.flatMap(
      request("interrupt", {}, { timeout: interruptTimeout }).pipe(
        Effect.catchTag("ControlTimeout", (e) => Effect.fail(new InterruptTimeout({ timeoutMillis: e.timeoutMillis })))
      ),
      (u) => u === undefined ? Effect.succeed({}) : decodeResponse(Message.InterruptResponse, "interrupt")(u)
    ).pipe(Effect.withSpan("Session.interrupt")),
    setPermissionMode: (mode) =>
      Effect.map(
        typed(Schema.UndefinedOr(Schema.Struct({ mode: Schema.optional(Schema.String) })), "set_permission_mode", {
          mode
        }),
        (response) => Option.fromNullable(response?.mode)
      ),
    setModel: (model) => unit("set_model", { model: model ?? "default" }),
    setMaxThinkingTokens: (maxThinkingTokens, display) =>
      unit("set_max_thinking_tokens", {
        max_thinking_tokens: maxThinkingTokens,
        ...(display !== undefined ? { thinking_display: display } : {})
      }),
    initializationResult,
    supportedCommands: Effect.map(initializationResult, (init) => commands() ?? init.commands),
    supportedModels: Effect.map(initializationResult, (init) => init.models),
    supportedAgents: Effect.map(initializationResult, (init) => init.agents),
    accountInfo: Effect.map(initializationResult, (init) => init.account),
    mcpServerStatus: Effect.flatMap(
      checked(decodeMcpStatus, "mcp_status"),
      (response) => extensions.mcpServers.status(response.mcpServers)
    ),
    getContextUsage: (opts) =>
      typed(Message.ContextUsage, "get_context_usage", opts?.detail !== undefined ? { detail: opts.detail } : {}),
    rewindFiles: (userMessageId, opts) =>
      typed(Message.RewindFilesResult, "rewind_files", {
        user_message_id: userMessageId,
        dry_run: opts?.dryRun ?? false
      }),
    reconnectMcpServer: (serverName) =>
      unit("mcp_reconnect", { serverName }).pipe(
        Effect.catchTag(
          "ControlError",
          (error) => Effect.fail(extensions.mcpServers.reconnectFailed(serverName, error))
        )
      ),
    toggleMcpServer: (serverName, enabled) => unit("mcp_toggle", { serverName, enabled }),
    setMcpServers: (servers) =>
      Effect.zipRight(
        Opts.validateMcpServers(servers),
        extensions.mcpServers.set(servers, (wire) =>
          typed(Message.McpSetServersResult, "mcp_set_servers", { servers: wire }))
      ).pipe(Effect.withSpan("Session.setMcpServers")),
    stopTask: (taskId) => unit("stop_task", { task_id: taskId }),
    request: (subtype, payload, requestOptions) =>
      request(subtype, payload, requestOptions?.timeout !== undefined ? { timeout: requestOptions.timeout } : {})
        .pipe(Effect.withSpan(`Session.request.${subtype}`))
  }
}
