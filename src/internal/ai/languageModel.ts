import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Response from "@effect/ai/Response"
import * as Tool from "@effect/ai/Tool"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { ApiFailure } from "../../AgentError.js"
import type * as AgentOptions from "../../AgentOptions.js"
import type { Options } from "../../ClaudeCodeLanguageModel.js"
import * as ClaudeAgent from "../../ClaudeAgent.js"
import * as Message from "../../Message.js"
import * as PartialMessages from "../../PartialMessages.js"
import * as SdkMcp from "../../SdkMcp.js"
import * as Transport from "../../Transport.js"
import { mapPrompt } from "./prompt.js"

const MODULE = "ClaudeCodeLanguageModel"

/** The outcome of one handler run, as the response reports it. */
interface ToolOutcome {
  readonly result: unknown
  readonly encodedResult: unknown
  readonly isFailure: boolean
}

/** A resolved toolkit, seen through what this provider needs of it. */
interface CallToolkit {
  readonly tools: Readonly<Record<string, Tool.Any>>
  readonly handle: (name: string, params: unknown) => Effect.Effect<unknown, unknown>
}

/** The toolkit of the call in flight: the provider functions of `LanguageModel.make` only see tool definitions. */
class CurrentToolkit extends Context.Tag("effect-claude-agent/ClaudeCodeLanguageModel/CurrentToolkit")<
  CurrentToolkit,
  CallToolkit
>() {}

const isHandlerResult = (u: unknown): u is ToolOutcome =>
  Predicate.hasProperty(u, "isFailure") && typeof u.isFailure === "boolean" && Predicate.hasProperty(u, "result") &&
  Predicate.hasProperty(u, "encodedResult")

/**
 * A `Toolkit.WithHandler`: its `handle` runs with the services of the caller, which the wrapper below provides, so
 * it is typed as needing none here.
 */
const isHandlerToolkit = (u: unknown): u is CallToolkit =>
  Predicate.hasProperty(u, "tools") && Predicate.isRecord(u.tools) && Predicate.hasProperty(u, "handle") &&
  Predicate.isFunction(u.handle)

/** The toolkit option of a call as an Effect (its error and services are the caller's). */
const resolveToolkit = <A, E, R>(toolkit: A | Effect.Effect<A, E, R> | undefined): Effect.Effect<unknown, E, R> =>
  Effect.isEffect(toolkit) ? toolkit : Effect.succeed(toolkit)

/**
 * The call's toolkit (a value or an Effect, as `LanguageModel` accepts it), resolved, its handlers bound to the
 * caller's services; none when it has no handlers.
 */
const callToolkit = <A, E, R>(
  toolkit: A | Effect.Effect<A, E, R> | undefined
): Effect.Effect<Option.Option<CallToolkit>, E, R> =>
  Effect.flatMap(resolveToolkit(toolkit), (resolved) =>
    isHandlerToolkit(resolved)
      ? Effect.map(Effect.context<never>(), (context) =>
        Option.some({
          tools: resolved.tools,
          handle: (name: string, params: unknown) => Effect.provide(resolved.handle(name, params), context)
        }))
      : Effect.succeedNone)

/** Runs `self` with the call's toolkit. */
const withToolkit = <A, E, R, E2, R2>(
  toolkit: Effect.Effect<Option.Option<CallToolkit>, E2, R2>,
  self: Effect.Effect<A, E, R>
) =>
  Effect.flatMap(
    toolkit,
    Option.match({
      onNone: () => self,
      onSome: (resolved) => Effect.provideService(self, CurrentToolkit, resolved)
    })
  )

/** Runs the stream `self` with the call's toolkit (resolved when the stream runs). */
const withToolkitStream = <A, E, R, E2, R2>(
  toolkit: Effect.Effect<Option.Option<CallToolkit>, E2, R2>,
  self: Stream.Stream<A, E, R>
) =>
  Stream.unwrap(Effect.map(
    toolkit,
    Option.match({
      onNone: () => self,
      onSome: (resolved) => Stream.provideService(self, CurrentToolkit, resolved)
    })
  ))

const notHonoured = (description: string) =>
  new AiError.MalformedInput({ module: MODULE, method: "toolChoice", description })

/** The tools the call serves: toolkit tools by MCP name, `undefined` for none. */
const toolsOf = (
  provider: LanguageModel.ProviderOptions
): Either.Either<ReadonlyArray<Tool.Any>, AiError.MalformedInput> => {
  const choice = provider.toolChoice
  if (choice === "none") return Either.right([])
  if (choice === "required" || (typeof choice === "object" && ("tool" in choice || choice.mode === "required"))) {
    return Either.left(
      notHonoured(
        `toolChoice ${JSON.stringify(choice)} cannot be honoured: Claude Code decides itself whether to call a tool ` +
          "(use \"auto\", \"none\" or { oneOf } without mode \"required\")"
      )
    )
  }
  return Either.right(provider.tools.filter((tool) => !Tool.isProviderDefined(tool)))
}

const toolResultText = (outcome: ToolOutcome): string =>
  typeof outcome.encodedResult === "string" ? outcome.encodedResult : JSON.stringify(outcome.encodedResult) ?? ""

const describe = (error: unknown): string =>
  Predicate.hasProperty(error, "message") && typeof error.message === "string" ? error.message : String(error)

/** The MCP tool serving one toolkit tool: runs the Effect handler and keeps its outcome for the response. */
const mcpTool = (tool: Tool.Any, toolkit: CallToolkit, outcomes: Map<string, ToolOutcome>) =>
  SdkMcp.toolFromJsonSchema(
    tool.name,
    tool.description ?? Tool.getDescriptionFromSchemaAst(tool.parametersSchema.ast) ?? tool.name,
    { ...Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast) },
    Either.right,
    (params, extra) =>
      toolkit.handle(tool.name, params).pipe(
        Effect.flatMap((u) =>
          isHandlerResult(u) ? Effect.succeed(u) : Effect.fail(new Error("the toolkit returned no handler result"))
        ),
        Effect.map((outcome): SdkMcp.ToolResult => {
          if (extra.toolUseId !== undefined) outcomes.set(extra.toolUseId, outcome)
          const text = toolResultText(outcome)
          return outcome.isFailure ? SdkMcp.errorResult(text) : text
        }),
        // a failure of a tool whose failure mode is "error" goes to the model as an error result
        Effect.catchAll((error) => Effect.succeed(SdkMcp.errorResult(describe(error))))
      )
  )

const finishReason = (result: Message.ResultMessage): Response.FinishReason => {
  if (result.subtype === "error_max_turns") return "length"
  if (result.subtype !== "success") return "error"
  switch (result.stop_reason) {
    case "end_turn":
    case "stop_sequence":
    case null:
    case undefined:
      return "stop"
    case "max_tokens":
      return "length"
    case "tool_use":
      return "tool-calls"
    case "refusal":
      return "content-filter"
    case "pause_turn":
      return "pause"
    default:
      return "other"
  }
}

const finishPart = (result: Message.ResultMessage): Response.FinishPartEncoded => {
  const input = (result.usage.input_tokens ?? 0) + (result.usage.cache_read_input_tokens ?? 0) +
    (result.usage.cache_creation_input_tokens ?? 0)
  const output = result.usage.output_tokens ?? 0
  return {
    type: "finish",
    reason: finishReason(result),
    usage: {
      inputTokens: input,
      outputTokens: output,
      totalTokens: input + output,
      ...(typeof result.usage.cache_read_input_tokens === "number"
        ? { cachedInputTokens: result.usage.cache_read_input_tokens }
        : {})
    },
    metadata: {
      claudeCode: {
        sessionId: result.session_id,
        costUsd: result.total_cost_usd,
        numTurns: result.num_turns,
        durationMs: result.duration_ms,
        subtype: result.subtype
      }
    }
  }
}

/** Maps an API failure of the CLI to the `AiError` an HTTP provider would report. */
const fromAgentError = (
  error: ClaudeAgent.SessionError | ApiFailure
): AiError.AiError => {
  if (
    (error._tag === "ApiError" || error._tag === "RateLimited" || error._tag === "Overloaded") && error.status !== null
  ) {
    return new AiError.HttpResponseError({
      module: MODULE,
      method: "generateText",
      reason: "StatusCode",
      request: { method: "POST", url: "/v1/messages", urlParams: [], hash: Option.none(), headers: {} },
      response: { status: error.status, headers: {} },
      description: error.message
    })
  }
  if (error._tag === "InvalidOptions") {
    return new AiError.MalformedInput({
      module: MODULE,
      method: "generateText",
      description: error.message,
      cause: error
    })
  }
  return new AiError.UnknownError({ module: MODULE, method: "generateText", description: error.message, cause: error })
}

/** Per-call state of the event mapping. */
interface MapState {
  readonly json: boolean
  readonly serverPrefix: string
  readonly toolNames: ReadonlySet<string>
  readonly calls: Map<string, string>
  readonly outcomes: Map<string, ToolOutcome>
}

const toolNameOf = (state: MapState, mcpName: string): string | undefined => {
  if (!mcpName.startsWith(state.serverPrefix)) return undefined
  const name = mcpName.slice(state.serverPrefix.length)
  return state.toolNames.has(name) ? name : undefined
}

/** One event of the CLI's stream as stream parts (main agent only: subagents' messages are their own business). */
const streamParts = (state: MapState, event: PartialMessages.UiEvent): Array<Response.StreamPartEncoded> => {
  if ("parentToolUseId" in event && event.parentToolUseId !== null) return []
  switch (event.type) {
    case "message-start":
      return [{
        type: "response-metadata",
        id: event.messageId,
        ...(event.model === undefined ? {} : { modelId: event.model })
      }]
    case "text-start":
      return state.json ? [] : [{ type: "text-start", id: `${event.messageId}:${event.index}` }]
    case "text-delta":
      return state.json ? [] : [{ type: "text-delta", id: `${event.messageId}:${event.index}`, delta: event.delta }]
    case "text-end":
      return state.json ? [] : [{ type: "text-end", id: `${event.messageId}:${event.index}` }]
    case "thinking-start":
      return [{ type: "reasoning-start", id: `${event.messageId}:${event.index}` }]
    case "thinking-delta":
      return [{ type: "reasoning-delta", id: `${event.messageId}:${event.index}`, delta: event.delta }]
    case "thinking-end":
      return [{ type: "reasoning-end", id: `${event.messageId}:${event.index}` }]
    case "tool-input-available": {
      const name = toolNameOf(state, event.toolName)
      if (name === undefined) return []
      state.calls.set(event.toolUseId, name)
      return [{
        type: "tool-call",
        id: event.toolUseId,
        name,
        params: event.input,
        providerName: event.toolName,
        providerExecuted: true
      }]
    }
    case "tool-output-available": {
      const name = state.calls.get(event.toolUseId)
      const outcome = state.outcomes.get(event.toolUseId)
      if (name === undefined || outcome === undefined) return []
      return [{
        type: "tool-result",
        id: event.toolUseId,
        name,
        result: outcome.encodedResult,
        isFailure: outcome.isFailure,
        providerName: `${state.serverPrefix}${name}`,
        providerExecuted: true
      }]
    }
    case "message": {
      const message = event.message
      if (message.type !== "result") return []
      const object: Array<Response.StreamPartEncoded> = state.json
        ? [
          { type: "text-start", id: "structured-output" },
          { type: "text-delta", id: "structured-output", delta: JSON.stringify(message.structured_output ?? null) },
          { type: "text-end", id: "structured-output" }
        ]
        : []
      return [...object, finishPart(message)]
    }
    default:
      return []
  }
}

/** Folds stream parts into the parts of a complete response. */
const collectParts = (parts: ReadonlyArray<Response.StreamPartEncoded>): Array<Response.PartEncoded> => {
  const out: Array<Response.PartEncoded> = []
  const text = new Map<string, string>()
  for (const part of parts) {
    switch (part.type) {
      case "text-start":
      case "reasoning-start":
        text.set(part.id, "")
        break
      case "text-delta":
      case "reasoning-delta":
        text.set(part.id, (text.get(part.id) ?? "") + part.delta)
        break
      case "text-end":
        out.push({ type: "text", text: text.get(part.id) ?? "" })
        break
      case "reasoning-end":
        out.push({ type: "reasoning", text: text.get(part.id) ?? "" })
        break
      case "response-metadata":
      case "tool-call":
      case "tool-result":
      case "finish":
        out.push(part)
        break
      default:
        break
    }
  }
  return out
}

/** Makes the `LanguageModel` service; see `ClaudeCodeLanguageModel.make`. */
export const make = Effect.fnUntraced(function*(options: Options = {}) {
  const transport = yield* Transport.required
  const serverName = options.serverName ?? "toolkit"
  const serverPrefix = `mcp__${serverName}__`
  const maxConversations = options.maxConversations ?? 1000
  // conversation key → the session that answered it (resume mode)
  const conversations = yield* Ref.make(new Map<string, string>())

  const run = (provider: LanguageModel.ProviderOptions): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const mapped = yield* mapPrompt(provider.prompt)
      const tools = yield* toolsOf(provider)
      const toolkit = yield* Effect.serviceOption(CurrentToolkit)
      const outcomes = new Map<string, ToolOutcome>()
      const served = Option.isSome(toolkit) ? tools : []
      const mcpServers = Option.isSome(toolkit) && served.length > 0
        ? {
          [serverName]: yield* SdkMcp.createSdkMcpServer({
            name: serverName,
            tools: served.map((tool) => mcpTool(tool, toolkit.value, outcomes))
          }).pipe(Effect.mapError((error) =>
            new AiError.MalformedInput({
              module: MODULE,
              method: "tools",
              description: error.message,
              cause: error
            })
          ))
        }
        : {}
      const explicitNone = provider.toolChoice === "none" && provider.tools.length > 0
      const base = options.options ?? {}
      const resumeFrom = options.conversation === "resume"
        ? (yield* Ref.get(conversations)).get(mapped.conversationKey)
        : undefined
      const json = provider.responseFormat.type === "json"
      const agentOptions: AgentOptions.Options = {
        ...base,
        ...(mapped.system === undefined ? {} : { systemPrompt: mapped.system }),
        tools: explicitNone ? [] : [...(options.builtInTools ?? [])],
        mcpServers: { ...base.mcpServers, ...mcpServers },
        allowedTools: [...(base.allowedTools ?? []), ...served.map((tool) => `${serverPrefix}${tool.name}`)],
        includePartialMessages: true,
        ...(json
          ? { outputFormat: { type: "json_schema", schema: provider.responseFormat.schema } }
          : {}),
        ...(resumeFrom === undefined ? {} : { resume: resumeFrom, forkSession: true })
      }
      const content = resumeFrom === undefined ? mapped.content : mapped.lastTurn
      const state: MapState = {
        json,
        serverPrefix,
        toolNames: new Set(served.map((tool) => tool.name)),
        calls: new Map(),
        outcomes
      }
      return ClaudeAgent.query(Stream.make(Message.userMessage(content)), agentOptions).pipe(
        ClaudeAgent.failOnApiError,
        Stream.tap((message) =>
          message.type === "result" && options.conversation === "resume"
            ? Ref.update(conversations, (map) => {
              const next = new Map(map)
              next.set(mapped.nextConversationKey, message.session_id)
              while (next.size > maxConversations) next.delete(next.keys().next().value ?? "")
              return next
            })
            : Effect.void
        ),
        PartialMessages.assembleWith({ passThrough: "others" }),
        Stream.mapConcat((event) => streamParts(state, event)),
        Stream.mapError(fromAgentError)
      )
    })).pipe(Stream.provideService(Transport.Transport, transport))

  const inner = yield* LanguageModel.make({
    generateText: (provider) =>
      Effect.map(Stream.runCollect(run(provider)), (c) => collectParts(Chunk.toReadonlyArray(c))),
    streamText: run
  })

  return LanguageModel.LanguageModel.of({
    generateText: (o) => withToolkit(callToolkit(o.toolkit), inner.generateText(o)),
    generateObject: (o) => withToolkit(callToolkit(o.toolkit), inner.generateObject(o)),
    streamText: (o) => withToolkitStream(callToolkit(o.toolkit), inner.streamText(o))
  })
})
