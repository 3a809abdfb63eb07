/**
 * The ACP agent: one client over a pair of byte streams. `initialize` first; then sessions (`session/new`,
 * `session/load` with the history replayed, `session/resume`, `session/list`, `session/close`), prompts, cancel,
 * modes and config options. Every session belongs to the connection's scope: when the client goes (its input ends or
 * its output fails), every prompt is interrupted and every session closed, which reaps every CLI and what it started.
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Sink from "effect/Sink"
import type * as Stream from "effect/Stream"
import * as path from "node:path"
import type * as Acp from "../../AcpServer.js"
import type * as SessionStore from "../../SessionStore.js"
import type * as Transport from "../../Transport.js"
import { type ClientOffers, offersOf } from "./clientTools.js"
import {
  decodeParams,
  type Handlers,
  invalidParams,
  invalidRequest,
  type Reply,
  type RequestHandler,
  type RpcError,
  serve as serveJsonRpc
} from "./jsonRpc.js"
import {
  InitializeRequest,
  ListSessionsRequest,
  LoadSessionRequest,
  NewSessionRequest,
  PROTOCOL_VERSION,
  PromptRequest,
  SessionRequest,
  SetSessionConfigOptionRequest,
  SetSessionModeRequest
} from "./schema.js"
import { type AcpSession, type Context as SessionContext, isSessionId, open, sessionNotFound } from "./session.js"
import { agentInfo } from "./version.js"

/** The default longest message read from the client: the ACP SDK's own limit. @internal */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024

/** The sessions of one page of `session/list`. */
const LIST_PAGE = 50

const handleWith = <R>(services: Context.Context<R>) =>
<A, I>(
  schema: Schema.Schema<A, I>,
  f: (params: A) => Effect.Effect<Reply, RpcError, R>
): RequestHandler => {
  const decode = decodeParams(schema)
  return (params) => Effect.provide(Effect.flatMap(decode(params), f), services)
}

const absoluteCwd = (cwd: string) =>
  path.isAbsolute(cwd) ? Effect.succeed(cwd) : Effect.fail(invalidParams(`cwd must be an absolute path: ${cwd}`))

/** @internal */
export const serve = <E, R, E2, R2>(
  input: Stream.Stream<Uint8Array, E, R>,
  output: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>,
  options: Acp.Options,
  history: SessionStore.Service
): Effect.Effect<void, never, R | R2 | Transport.Transport> =>
  serveJsonRpc(input, output, {
    maxLineBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    flushTimeout: "2 seconds"
  }, (connection) =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      // the handlers run on the connection's fibers, with the services of the caller
      const services = yield* Effect.context<Transport.Transport>()
      const ctx: SessionContext = {
        connection,
        options: options.options ?? {},
        rules: {
          allow: options.rules?.allow ?? [],
          deny: options.rules?.deny ?? [],
          ask: options.rules?.ask ?? []
        },
        permissionTimeout: Duration.decode(options.permissionTimeout ?? "5 minutes"),
        interruptTimeout: Duration.decode("10 seconds"),
        history,
        offers: () => offers
      }
      const handle = handleWith(services)
      const sessions = new Map<string, AcpSession>()
      let initialized = false
      let offers: ClientOffers = { fs: false, terminal: false }

      const find = (sessionId: string) => {
        const session = sessions.get(sessionId)
        return session === undefined ? Effect.fail(sessionNotFound(sessionId)) : Effect.succeed(session)
      }

      const opened = (session: AcpSession): Reply => ({
        result: { sessionId: session.id, ...session.state() },
        after: session.announceCommands
      })

      const load = (replay: boolean) =>
        handle(LoadSessionRequest, (params) =>
          Effect.gen(function*() {
            const cwd = yield* absoluteCwd(params.cwd)
            if (!isSessionId(params.sessionId)) return yield* Effect.fail(sessionNotFound(params.sessionId))
            // the session may be open in this connection already: its CLI is ended first
            const previous = sessions.get(params.sessionId)
            if (previous !== undefined) {
              sessions.delete(params.sessionId)
              yield* previous.close
            }
            const session = yield* open(ctx, scope, {
              cwd,
              mcpServers: params.mcpServers ?? [],
              resume: params.sessionId
            })
            if (replay) yield* Effect.onError(session.replay, () => session.close)
            sessions.set(session.id, session)
            const { configOptions, modes } = session.state()
            return { result: { modes, configOptions }, after: session.announceCommands }
          }))

      const requests: Record<string, RequestHandler> = {
        initialize: handle(InitializeRequest, (params) =>
          Effect.sync(() => {
            initialized = true
            const offered = offersOf(params.clientCapabilities)
            offers = {
              fs: offered.fs && options.clientCapabilities?.fs !== false,
              terminal: offered.terminal && options.clientCapabilities?.terminal !== false
            }
            return {
              result: {
                protocolVersion: PROTOCOL_VERSION,
                agentCapabilities: {
                  loadSession: true,
                  promptCapabilities: { image: true, audio: false, embeddedContext: true },
                  mcpCapabilities: { http: true, sse: true },
                  sessionCapabilities: { close: {}, list: {}, resume: {} }
                },
                agentInfo: agentInfo(),
                authMethods: []
              }
            }
          })),
        authenticate: () => Effect.fail(invalidParams("No authentication method is offered")),
        "session/new": handle(NewSessionRequest, (params) =>
          Effect.gen(function*() {
            const cwd = yield* absoluteCwd(params.cwd)
            const session = yield* open(ctx, scope, { cwd, mcpServers: params.mcpServers ?? [] })
            sessions.set(session.id, session)
            return opened(session)
          })),
        "session/load": load(true),
        "session/resume": load(false),
        "session/close": handle(SessionRequest, (params) =>
          Effect.gen(function*() {
            const session = yield* find(params.sessionId)
            sessions.delete(params.sessionId)
            yield* session.close
            return { result: {} }
          })),
        "session/list": handle(ListSessionsRequest, (params) =>
          Effect.gen(function*() {
            const cwd = yield* absoluteCwd(params.cwd ?? ctx.options.cwd ?? process.cwd())
            const offset = params.cursor === undefined || params.cursor === null ? 0 : Number(params.cursor)
            if (!Number.isSafeInteger(offset) || offset < 0) return yield* Effect.fail(invalidParams("Invalid cursor"))
            const page = yield* history.list(cwd, { offset, limit: LIST_PAGE + 1, fast: true }).pipe(
              Effect.orElseSucceed((): ReadonlyArray<SessionStore.SessionInfo> => [])
            )
            return {
              result: {
                sessions: page.slice(0, LIST_PAGE).map((info) => ({
                  sessionId: info.sessionId,
                  cwd: info.cwd ?? cwd,
                  title: info.title ?? info.firstPrompt ?? null,
                  updatedAt: info.lastModified.toISOString()
                })),
                ...(page.length > LIST_PAGE ? { nextCursor: String(offset + LIST_PAGE) } : {})
              }
            }
          })),
        "session/prompt": handle(PromptRequest, (params) =>
          Effect.flatMap(
            find(params.sessionId),
            (session) => Effect.map(session.prompt(params), (result) => ({ result }))
          )),
        "session/set_mode": handle(SetSessionModeRequest, (params) =>
          Effect.gen(function*() {
            const session = yield* find(params.sessionId)
            yield* session.setMode(params.modeId)
            return { result: {} }
          })),
        "session/set_config_option": handle(SetSessionConfigOptionRequest, (params) =>
          Effect.gen(function*() {
            const session = yield* find(params.sessionId)
            const configOptions = yield* session.setConfigOption(params.configId, params.value)
            return { result: { configOptions } }
          }))
      }

      const cancel = decodeParams(SessionRequest)
      const handlers: Handlers = {
        requests,
        notifications: {
          "session/cancel": (params) =>
            cancel(params).pipe(
              Effect.flatMap((p) =>
                Option.match(Option.fromNullable(sessions.get(p.sessionId)), {
                  onNone: () => Effect.logDebug(`ACP: cancel of unknown session ${p.sessionId}`),
                  onSome: (session) => session.cancel
                })
              ),
              Effect.catchAll((error) => Effect.logDebug(`ACP: malformed session/cancel: ${error.message}`))
            )
        },
        gate: (method) =>
          initialized || method === "initialize"
            ? Option.none()
            : Option.some(invalidRequest("Invalid request: initialize first"))
      }
      // every session ends with the connection (this scope), prompts first
      yield* Effect.addFinalizer(() =>
        Effect.forEach(Array.from(sessions.values()), (s) => s.close, { concurrency: "unbounded", discard: true })
      )
      return handlers
    }))
