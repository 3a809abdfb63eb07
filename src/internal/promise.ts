/** @internal */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { InputClosed } from "../AgentError.js"
import type * as AgentOptions from "../AgentOptions.js"
import * as Hooks from "../Hooks.js"
import type * as Message from "../Message.js"
import * as NodeClaudeAgent from "../NodeClaudeAgent.js"
import * as Permissions from "../Permissions.js"
import type { CanUseTool, HookCallbackMatcher, Options, Query } from "../promise.js"
import * as session from "./session.js"

/** @internal */
export class AbortError extends Error {
  constructor(message = "Claude Code process aborted by user") {
    super(message)
    this.name = "AbortError"
  }
}

/** The real error of a failed Exit: the SDK's tagged error (not a FiberFailure), or the defect. */
const squash = (cause: Cause.Cause<unknown>, aborted: boolean): unknown => {
  if (aborted && Cause.isInterruptedOnly(cause)) return new AbortError()
  return Cause.squash(cause)
}

const signalFrom = (signal: AbortSignal, request: AbortSignal): AbortSignal => AbortSignal.any([signal, request])

const permissionsLayer = (canUseTool: CanUseTool, timeout: number | undefined): Layer.Layer<Permissions.Permissions> =>
  Permissions.layer(
    (request) =>
      Effect.tryPromise({
        try: (signal) =>
          canUseTool(request.toolName, request.input as Record<string, unknown>, {
            signal: signalFrom(signal, request.signal),
            suggestions: request.suggestions,
            toolUseID: request.toolUseId,
            requestId: request.requestId,
            ...(request.blockedPath !== undefined ? { blockedPath: request.blockedPath } : {}),
            ...(request.decisionReason !== undefined ? { decisionReason: request.decisionReason } : {}),
            ...(request.title !== undefined ? { title: request.title } : {}),
            ...(request.displayName !== undefined ? { displayName: request.displayName } : {}),
            ...(request.description !== undefined ? { description: request.description } : {}),
            ...(request.agentId !== undefined ? { agentID: request.agentId } : {}),
            ...(request.mcpServer !== undefined ? { mcpServer: request.mcpServer } : {})
          }),
        catch: (error) => error
      }).pipe(
        Effect.map((result): Permissions.PermissionResult =>
          // the official SDK lets `null` mean "answered out of band"; there is no such channel here: fail closed
          result === null || result === undefined
            ? { behavior: "deny", message: "canUseTool returned no decision" }
            : result
        )
      ),
    timeout !== undefined ? { timeout: `${timeout} millis` } : undefined
  )

const hooksLayer = (
  hooks: Partial<Record<Hooks.HookEvent, ReadonlyArray<HookCallbackMatcher>>>
): Layer.Layer<Hooks.Hooks> => {
  const registrations: Record<string, Array<Hooks.HookMatcher>> = {}
  for (const [event, matchers] of Object.entries(hooks)) {
    if (matchers === undefined) continue
    registrations[event] = matchers.map((m) => ({
      matcher: m.matcher,
      timeout: m.timeout,
      onFailure: m.onFailure,
      hooks: m.hooks.map((callback) => (input: Hooks.HookInput, toolUseId: string | undefined) =>
        Effect.tryPromise({
          try: (signal) => callback(input, toolUseId, { signal }),
          catch: (error) => error
        })
      )
    }))
  }
  return Hooks.layer(registrations as Hooks.HookRegistrations)
}

const toEffectOptions = (options: Options): AgentOptions.Options => {
  const { abortController: _a, canUseTool: _c, hooks: _h, permissionTimeoutMs: _p, transport: _t, ...rest } = options
  return rest
}

/** @internal */
export const query = (params: {
  readonly prompt: string | AsyncIterable<Message.UserMessage>
  readonly options?: Options | undefined
}): Query => {
  const options = params.options ?? {}
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      options.transport ?? NodeClaudeAgent.layer,
      options.canUseTool === undefined ? Layer.empty : permissionsLayer(options.canUseTool, options.permissionTimeoutMs),
      options.hooks === undefined ? Layer.empty : hooksLayer(options.hooks)
    )
  )
  const abort = options.abortController
  let aborted = abort?.signal.aborted === true
  let closing: Promise<void> | undefined
  let done = false

  const prompt: string | Stream.Stream<Message.UserMessage, unknown> = typeof params.prompt === "string"
    ? params.prompt
    : Stream.fromAsyncIterable(params.prompt, (error) => error)

  // one scope for the whole query: the session (process) and its message pull live in it
  const started = runtime.runPromiseExit(
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      return yield* Effect.gen(function*() {
        const internal = yield* session.make(toEffectOptions(options))
        const messages = yield* session.drive(internal, prompt)
        const pull = yield* Stream.toPull(messages)
        return { scope, internal, pull }
      }).pipe(
        Scope.extend(scope),
        Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
      )
    })
  )
  // never an unhandled rejection: failures surface through next() and the methods
  started.catch(() => undefined)

  const close = (): Promise<void> => {
    if (closing !== undefined) return closing
    done = true
    closing = started.then(async (exit) => {
      if (Exit.isSuccess(exit)) await runtime.runPromise(Scope.close(exit.value.scope, Exit.void))
      await runtime.dispose()
    }).catch(() => undefined)
    return closing
  }

  const onAbort = () => {
    aborted = true
    void close()
  }
  abort?.signal.addEventListener("abort", onAbort, { once: true })
  if (aborted) void close()

  const handles = () =>
    started.then((exit) => {
      if (Exit.isFailure(exit)) throw squash(exit.cause, aborted)
      return exit.value
    })

  const run = async <A>(f: (s: session.SessionInternal) => Effect.Effect<A, unknown>): Promise<A> => {
    const { internal } = await handles()
    if (aborted) throw new AbortError()
    if (closing !== undefined) throw new InputClosed({ reason: "closed" })
    const exit = await runtime.runPromiseExit(f(internal))
    if (Exit.isFailure(exit)) throw squash(exit.cause, aborted)
    return exit.value
  }

  let buffer: Array<Message.SdkMessage> = []
  const next = async (): Promise<IteratorResult<Message.SdkMessage, void>> => {
    if (buffer.length > 0) return { done: false, value: buffer.shift()! }
    if (done) {
      await closing
      if (aborted) throw new AbortError()
      return { done: true, value: undefined }
    }
    try {
      const { pull } = await handles()
      const exit = await runtime.runPromiseExit(pull)
      if (Exit.isSuccess(exit)) {
        buffer = Chunk.toArray(exit.value)
        return next()
      }
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure) && Option.isNone(failure.value)) {
        await close()
        if (aborted) throw new AbortError()
        return { done: true, value: undefined }
      }
      const error = Option.isSome(failure) && Option.isSome(failure.value)
        ? failure.value.value
        : squash(exit.cause, aborted)
      await close()
      throw aborted ? new AbortError() : error
    } catch (error) {
      await close()
      throw aborted ? new AbortError() : error
    }
  }

  const iterator: Query = {
    next,
    return: async () => {
      await close()
      return { done: true, value: undefined }
    },
    throw: async (error: unknown) => {
      await close()
      throw error
    },
    [Symbol.asyncIterator]() {
      return this
    },
    [Symbol.asyncDispose]: () => close(),
    close,
    interrupt: () => run((s) => s.session.interrupt),
    setPermissionMode: (mode) => run((s) => Effect.map(s.session.setPermissionMode(mode), (m) => ({ mode: Option.getOrUndefined(m) }))),
    setModel: (model) => run((s) => s.session.setModel(model)),
    setMaxThinkingTokens: (n, display) => run((s) => s.session.setMaxThinkingTokens(n, display)),
    supportedCommands: () => run((s) => Effect.map(s.session.supportedCommands, (c) => [...c])),
    supportedModels: () => run((s) => Effect.map(s.session.supportedModels, (m) => [...m])),
    supportedAgents: () => run((s) => Effect.map(s.session.supportedAgents, (a) => [...a])),
    accountInfo: () => run((s) => s.session.accountInfo),
    initializationResult: () => run((s) => s.session.initializationResult),
    mcpServerStatus: () => run((s) => Effect.map(s.session.mcpServerStatus, (m) => [...m])),
    getContextUsage: (opts) => run((s) => s.session.getContextUsage(opts)),
    rewindFiles: (id, opts) => run((s) => s.session.rewindFiles(id, opts)),
    reconnectMcpServer: (name) => run((s) => s.session.reconnectMcpServer(name)),
    toggleMcpServer: (name, enabled) => run((s) => s.session.toggleMcpServer(name, enabled)),
    setMcpServers: (servers) => run((s) => s.session.setMcpServers(servers)),
    stopTask: (taskId) => run((s) => s.session.stopTask(taskId)),
    sessionId: () => run((s) => s.session.sessionId),
    pid: () => run((s) => Effect.succeed(Option.getOrUndefined(s.session.pid)))
  }
  return iterator
}
