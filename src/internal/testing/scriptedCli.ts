/** @internal */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import type * as Message from "../../Message.js"
import type { Options, Responder, ScriptedCli } from "../../ScriptedCli.js"
import { Transport } from "../../Transport.js"
import type { LaunchSpec, MemoryPeer } from "../../Transport.js"
import { makeConnection } from "../transport/memoryTransport.js"

/** @internal */
export class ScriptError extends Schema.TaggedError<ScriptError>("effect-claude-agent/ScriptedCli/ScriptError")(
  "ScriptError",
  {
    /** `"Timeout"`: nothing came in time; `"InputEnded"`: the SDK closed stdin; `"ErrorAnswer"`: an error response. */
    reason: Schema.Literal("Timeout", "InputEnded", "ErrorAnswer"),
    description: Schema.String
  }
) {
  override get message(): string {
    return this.description
  }
}

const DEFAULT_SESSION_ID = "5c6f6e3a-0000-4000-8000-00000000cafe"
const MODEL = "claude-scripted"

/** @internal */
export const defaultInitializeResponse: Message.InitializeResponse = {
  commands: [{ name: "compact", description: "Clear conversation history but keep a summary", argumentHint: "" }],
  agents: [{ name: "general-purpose", description: "General-purpose agent" }],
  models: [
    { value: "default", displayName: "Default", description: "The default model", resolvedModel: MODEL },
    { value: "haiku", displayName: "Haiku", description: "Fast", resolvedModel: "claude-haiku-scripted" }
  ],
  account: { tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY", apiProvider: "firstParty" },
  output_style: "default",
  available_output_styles: ["default"],
  claude_code_version: "2.1.332",
  current_permission_mode: "default"
}

const defaultResponders = (initializeResponse: Readonly<Record<string, unknown>>): Map<string, Responder> =>
  new Map<string, Responder>([
    ["initialize", () => Effect.succeed({ ...defaultInitializeResponse, ...initializeResponse })],
    ["interrupt", () => Effect.succeed({ still_queued: [] })],
    ["set_model", (body) => Effect.succeed({ model: body["model"] })],
    ["set_permission_mode", (body) => Effect.succeed({ mode: body["mode"] })],
    ["set_max_thinking_tokens", () => Effect.succeed({})],
    ["mcp_status", () => Effect.succeed({ mcpServers: [] })],
    ["get_context_usage", () => Effect.succeed({ totalTokens: 0, maxTokens: 200_000, percentage: 0, categories: [] })],
    ["rewind_files", () => Effect.succeed({ canRewind: true, filesChanged: [], insertions: 0, deletions: 0 })],
    ["mcp_set_servers", () => Effect.succeed({ added: [], removed: [], errors: {} })],
    ["mcp_reconnect", () => Effect.succeed({})],
    ["mcp_toggle", () => Effect.succeed({})],
    ["stop_task", () => Effect.succeed({})]
  ])

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

const make = (peer: MemoryPeer, spec: LaunchSpec, options: Options) =>
  Effect.gen(function*() {
    const fromArgs = (flag: string) => spec.args.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3)
    // like the real CLI: the id the SDK assigned, else the resumed one
    const sessionId = options.sessionId ?? fromArgs("session-id") ?? fromArgs("resume") ?? DEFAULT_SESSION_ID
    const stepTimeout = Duration.decode(options.stepTimeout ?? "10 seconds")
    const users = yield* Queue.unbounded<Option.Option<Message.UserMessage>>()
    const controls = new Map<string, Queue.Queue<Message.ControlRequestBody>>()
    const controlQueue = (subtype: string) => {
      let q = controls.get(subtype)
      if (q === undefined) {
        q = Effect.runSync(Queue.unbounded<Message.ControlRequestBody>())
        controls.set(subtype, q)
      }
      return q
    }
    const responders = defaultResponders(options.initializeResponse ?? {})
    for (const [subtype, responder] of Object.entries(options.responders ?? {})) responders.set(subtype, responder)
    // answers held back: after a delay, or never (a slow or hung CLI)
    const delays = new Map<string, Duration.Duration>()
    for (const [subtype, delay] of Object.entries(options.delays ?? {})) delays.set(subtype, Duration.decode(delay))
    for (const subtype of options.silent ?? []) delays.set(subtype, Duration.infinity)
    const scope = yield* Effect.scope
    const pending = new Map<string, Deferred.Deferred<Message.ControlResponse["response"]>>()
    const initialized = yield* Deferred.make<Message.ControlRequestBody>()
    const inputEnded = yield* Deferred.make<void>()
    const cancelled: Array<string> = []
    let counter = 0
    let messageCounter = 0

    // Every frame goes through the byte framing, like a real process's output. (Mixing `peer.emit` with
    // `peer.emitRaw` would also trip an Effect 3.22 Mailbox bug: `offerAll(chunk)` after `offer` repeats items.)
    const emit = (frame: object): Effect.Effect<void> => peer.emitRaw(`${JSON.stringify(frame)}\n`)

    const timed = <A>(what: string, effect: Effect.Effect<A, ScriptError>, timeout = stepTimeout) =>
      effect.pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new ScriptError({
              reason: "Timeout",
              description: `timed out after ${Duration.format(timeout)} waiting for ${what}`
            })
        })
      )

    const answer = (requestId: string, request: Message.ControlRequestBody) => {
      const responder = responders.get(request.subtype)
      const response: Effect.Effect<Message.ControlResponse["response"]> = responder === undefined
        ? Effect.succeed({
          subtype: "error",
          request_id: requestId,
          error: `Unsupported control request subtype: ${request.subtype}`,
          error_code: "unsupported_request"
        })
        : responder(request).pipe(
          Effect.match({
            onFailure: (error) => ({ subtype: "error" as const, request_id: requestId, error }),
            onSuccess: (body) => ({ subtype: "success" as const, request_id: requestId, response: body })
          })
        )
      const emitted = Effect.flatMap(response, (r) => emit({ type: "control_response", response: r }))
      const delay = delays.get(request.subtype)
      const held = delay === undefined
        ? emitted
        : Duration.isFinite(delay)
        ? Effect.delay(emitted, delay)
        : Effect.never
      // on its own fiber, like the real CLI: a slow or silent answer never holds up reading stdin
      return Effect.asVoid(Effect.forkIn(held, scope))
    }

    const dispatch = (frame: Message.StdinMessage): Effect.Effect<void> => {
      switch (frame.type) {
        case "user":
          return Effect.asVoid(users.offer(Option.some(frame)))
        case "control_request":
          return Effect.gen(function*() {
            if (frame.request.subtype === "initialize") yield* Deferred.succeed(initialized, frame.request)
            yield* controlQueue(frame.request.subtype).offer(frame.request)
            yield* answer(frame.request_id, frame.request)
          })
        case "control_response":
          return Effect.suspend(() => {
            const deferred = pending.get(frame.response.request_id)
            pending.delete(frame.response.request_id)
            return deferred === undefined ? Effect.void : Deferred.succeed(deferred, frame.response)
          })
        case "control_cancel_request":
          return Effect.sync(() => {
            cancelled.push(frame.request_id)
          })
      }
    }

    yield* peer.take.pipe(
      Effect.flatMap(dispatch),
      Effect.forever,
      Effect.catchAll(() =>
        Effect.zipRight(Deferred.succeed(inputEnded, undefined), users.offer(Option.none<Message.UserMessage>()))
      ),
      Effect.forkScoped
    )

    // stdin closing is remembered: every later read sees None
    const nextUser: Effect.Effect<Option.Option<Message.UserMessage>, ScriptError> = timed(
      "a user message",
      Effect.flatMap(
        users.take,
        (o): Effect.Effect<Option.Option<Message.UserMessage>> =>
          Option.isSome(o) ? Effect.succeed(o) : Effect.as(users.offer(o), o)
      )
    )

    const requestRaw = (
      subtype: string,
      body: Readonly<Record<string, unknown>> = {},
      requestOptions?: { readonly timeout?: Duration.DurationInput }
    ) =>
      Effect.gen(function*() {
        const requestId = `cli_${++counter}`
        const deferred = yield* Deferred.make<Message.ControlResponse["response"]>()
        pending.set(requestId, deferred)
        yield* emit({ type: "control_request", request_id: requestId, request: { ...body, subtype } })
        return yield* timed(
          `the answer to ${subtype} (${requestId})`,
          Deferred.await(deferred),
          requestOptions?.timeout === undefined ? stepTimeout : Duration.decode(requestOptions.timeout)
        )
      })

    const assistantFrame = (block: Message.ContentBlock) => ({
      type: "assistant",
      message: {
        id: `msg_scripted_${messageCounter}`,
        type: "message",
        role: "assistant",
        model: MODEL,
        content: [block],
        stop_reason: null,
        stop_sequence: null,
        usage
      },
      parent_tool_use_id: null,
      session_id: sessionId,
      uuid: randomUUID(),
      timestamp: new Date().toISOString()
    })
    const emitAssistant = (block: Message.ContentBlock) => emit(assistantFrame(block))

    const cli: ScriptedCli = {
      spec,
      peer,
      sessionId,
      initialize: timed("the initialize request", Deferred.await(initialized)),
      expectUser: Effect.flatMap(nextUser, (o) =>
        Option.isSome(o)
          ? Effect.succeed(o.value)
          : Effect.fail(
            new ScriptError({ reason: "InputEnded", description: "expected a user message, but the SDK closed stdin" })
          )),
      nextUser,
      expectControl: (subtype) => timed(`a ${subtype} control request`, controlQueue(subtype).take),
      expectEndInput: timed("stdin to close", Deferred.await(inputEnded)),
      respond: (subtype, responder) => Effect.sync(() => responders.set(subtype, responder)),
      slow: (subtype, duration) => Effect.sync(() => delays.set(subtype, Duration.decode(duration))),
      neverAnswer: (subtype) => Effect.sync(() => delays.set(subtype, Duration.infinity)),
      emit,
      emitRaw: peer.emitRaw,
      stderr: peer.emitStderr,
      init: (fields) =>
        emit({
          type: "system",
          subtype: "init",
          cwd: spec.cwd ?? "/",
          session_id: sessionId,
          tools: ["Bash", "Read", "Write", "Edit"],
          mcp_servers: [],
          model: MODEL,
          permissionMode: "default",
          slash_commands: ["compact"],
          apiKeySource: "ANTHROPIC_API_KEY",
          claude_code_version: "2.1.332",
          output_style: "default",
          agents: ["general-purpose"],
          skills: [],
          plugins: [],
          uuid: randomUUID(),
          ...fields
        }),
      assistant: (...content) =>
        Effect.gen(function*() {
          messageCounter++
          for (const part of content) {
            yield* emitAssistant(typeof part === "string" ? { type: "text", text: part } : part)
          }
        }),
      toolResult: (toolUseId, content, isError = false) =>
        emit({
          type: "user",
          message: {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: toolUseId, content, is_error: isError }]
          },
          parent_tool_use_id: null,
          session_id: sessionId,
          uuid: randomUUID(),
          timestamp: new Date().toISOString()
        }),
      result: (text = "done", fields) =>
        Effect.zipRight(
          emit({
            type: "result",
            subtype: "success",
            is_error: false,
            result: text,
            duration_ms: 12,
            duration_api_ms: 8,
            num_turns: 1,
            session_id: sessionId,
            uuid: randomUUID(),
            stop_reason: "end_turn",
            total_cost_usd: 0.0001,
            usage,
            modelUsage: { [MODEL]: { inputTokens: 10, outputTokens: 5, costUSD: 0.0001 } },
            permission_denials: [],
            terminal_reason: "completed",
            ...fields
          }),
          emit({
            // as the real CLI does right after every result (with CLAUDE_CODE_SDK_READS_SESSION_STATE=1)
            type: "system",
            subtype: "session_state_changed",
            state: "idle",
            sdk_host_only: true,
            session_id: sessionId,
            uuid: randomUUID()
          })
        ),
      turn: (text) =>
        Effect.gen(function*() {
          yield* cli.init()
          yield* cli.assistant(text)
          yield* cli.result(text)
        }),
      requestRaw,
      request: (subtype, body, requestOptions) =>
        Effect.flatMap(
          requestRaw(subtype, body, requestOptions),
          (response) =>
            response.subtype === "success"
              ? Effect.succeed(response.response)
              : Effect.fail(
                new ScriptError({
                  reason: "ErrorAnswer",
                  description: `the SDK answered ${subtype} with an error: ${response.error}`
                })
              )
        ),
      canUseTool: (toolName, input, extra) =>
        cli.request("can_use_tool", {
          tool_name: toolName,
          display_name: toolName,
          input,
          tool_use_id: `toolu_scripted_${counter + 1}`,
          permission_suggestions: [],
          ...extra
        }),
      cancel: (requestId) => emit({ type: "control_cancel_request", request_id: requestId }),
      cancelled: Effect.sync(() => [...cancelled]),
      received: peer.sent,
      exit: (code, stderr) =>
        Effect.zipRight(
          stderr === undefined ? Effect.void : peer.emitStderr(stderr),
          peer.exit({ code, signal: null })
        ),
      kill: (signal = "SIGKILL") => peer.exit({ code: null, signal }),
      stall: Effect.never,
      malformed: (line = "this is not JSON") => peer.emitRaw(`${line}\n`),
      giantLine: (bytes) =>
        Effect.suspend(() => {
          messageCounter++
          const frame = assistantFrame({ type: "text", text: "x".repeat(Math.max(0, bytes)) })
          return peer.emitRaw(`${JSON.stringify(frame)}\n`)
        }),
      unknownMessage: (type = "scripted_future_message", fields) =>
        emit({ session_id: sessionId, uuid: randomUUID(), ...fields, type })
    }
    return { cli, inputEnded }
  })

/** @internal */
export const layer = (
  script: (cli: ScriptedCli) => Effect.Effect<void, ScriptError>,
  options: Options = {}
): Layer.Layer<Transport> =>
  Layer.succeed(
    Transport,
    Transport.of({
      open: (spec) =>
        Effect.gen(function*() {
          const { connection, peer } = yield* makeConnection(spec)
          const { cli, inputEnded } = yield* make(peer, spec, options)
          yield* script(cli).pipe(
            Effect.matchEffect({
              onFailure: (error) =>
                Effect.zipRight(
                  peer.emitStderr(`scripted CLI: ${error.message}\n`),
                  peer.exit({ code: 70, signal: null })
                ),
              onSuccess: () => Effect.zipRight(Deferred.await(inputEnded), peer.exit({ code: 0, signal: null }))
            }),
            Effect.forkScoped
          )
          return connection
        })
    })
  )

/** @internal */
export const exitsAtOnce = (code = 1, stderr = ""): Layer.Layer<Transport> =>
  layer((cli) => cli.exit(code, stderr.length > 0 ? stderr : undefined))

/** @internal */
export const neverAnswersInitialize: Layer.Layer<Transport> = layer((cli) => cli.stall, { silent: ["initialize"] })

/** @internal */
export const echo: Layer.Layer<Transport> = layer((cli) =>
  Effect.gen(function*() {
    while (true) {
      const next = yield* Effect.either(cli.expectUser)
      if (next._tag === "Left") return
      const content = next.right.message.content
      const text = typeof content === "string"
        ? content
        : content.map((b) => (b.type === "text" ? b.text : "")).join("")
      yield* cli.turn(`echo: ${text}`)
    }
  }), { stepTimeout: "365 days" })
