/** @internal */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import type * as Message from "../../Message.js"
import type { Options, Responder, ScriptedCli } from "../../ScriptedCli.js"
import { Transport } from "../../Transport.js"
import type { LaunchSpec, MemoryPeer } from "../../Transport.js"
import { makeConnection } from "../transport/memoryTransport.js"
import * as Frames from "./cliFrames.js"

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
export const defaultInitializeResponse: Message.InitializeResponse = Frames.initializeResponse(MODEL, [
  { value: "haiku", displayName: "Haiku", description: "Fast", resolvedModel: "claude-haiku-scripted" }
])

const defaultResponders = (initializeResponse: Readonly<Record<string, unknown>>): Map<string, Responder> =>
  new Map<string, Responder>([
    ["initialize", () => Effect.succeed({ ...defaultInitializeResponse, ...initializeResponse })],
    ...Object.entries(Frames.defaultAnswers).map(([subtype, answer]): [string, Responder] => [
      subtype,
      (request) => Effect.succeed(answer(request))
    ])
  ])

/** What the parts of one scripted CLI share: its end of the connection, what the SDK sent, and how it answers. */
interface Script {
  readonly peer: MemoryPeer
  readonly spec: LaunchSpec
  readonly identity: Frames.Identity
  readonly stepTimeout: Duration.Duration
  /** The SDK's user messages; `None` once stdin closed. */
  readonly users: Queue.Queue<Option.Option<Message.UserMessage>>
  /** The SDK's control requests, by subtype. */
  readonly controls: Map<string, Queue.Queue<Message.ControlRequestBody>>
  readonly responders: Map<string, Responder>
  /** Answers held back: after a delay, or never (a slow or hung CLI). */
  readonly delays: Map<string, Duration.Duration>
  /** The scope of the connection: answers run on its fibers. */
  readonly scope: Scope.Scope
  /** The CLI's own requests awaiting the SDK's answer, by request id. */
  readonly pending: Map<string, Deferred.Deferred<Message.ControlResponse["response"]>>
  readonly initialized: Deferred.Deferred<Message.ControlRequestBody>
  readonly inputEnded: Deferred.Deferred<void>
  /** The ids of the requests the SDK cancelled. */
  readonly cancelled: Array<string>
  /** Numbers the CLI's requests. */
  requests: number
  /** Numbers the assistant messages. */
  messages: number
}

const makeScript = (
  peer: MemoryPeer,
  spec: LaunchSpec,
  options: Options
): Effect.Effect<Script, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fromArgs = (flag: string) => spec.args.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3)
    // like the real CLI: the id the SDK assigned, else the resumed one
    const sessionId = options.sessionId ?? fromArgs("session-id") ?? fromArgs("resume") ?? DEFAULT_SESSION_ID
    const responders = defaultResponders(options.initializeResponse ?? {})
    for (const [subtype, responder] of Object.entries(options.responders ?? {})) responders.set(subtype, responder)
    const delays = new Map<string, Duration.Duration>()
    for (const [subtype, delay] of Object.entries(options.delays ?? {})) delays.set(subtype, Duration.decode(delay))
    for (const subtype of options.silent ?? []) delays.set(subtype, Duration.infinity)
    return {
      peer,
      spec,
      identity: { cwd: spec.cwd ?? "/", sessionId, model: MODEL },
      stepTimeout: Duration.decode(options.stepTimeout ?? "10 seconds"),
      users: yield* Queue.unbounded<Option.Option<Message.UserMessage>>(),
      controls: new Map(),
      responders,
      delays,
      scope: yield* Effect.scope,
      pending: new Map(),
      initialized: yield* Deferred.make<Message.ControlRequestBody>(),
      inputEnded: yield* Deferred.make<void>(),
      cancelled: [],
      requests: 0,
      messages: 0
    }
  })

// Every frame goes through the byte framing, like a real process's output. (Mixing `peer.emit` with
// `peer.emitRaw` would also trip an Effect 3.22 Mailbox bug: `offerAll(chunk)` after `offer` repeats items.)
const emit = (script: Script, frame: object): Effect.Effect<void> => script.peer.emitRaw(`${JSON.stringify(frame)}\n`)

/** `effect`, failing with a `Timeout` `ScriptError` after the step timeout (or `timeout`). */
const timed = <A>(
  script: Script,
  what: string,
  effect: Effect.Effect<A, ScriptError>,
  timeout = script.stepTimeout
): Effect.Effect<A, ScriptError> =>
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

const controlQueue = (script: Script, subtype: string): Queue.Queue<Message.ControlRequestBody> => {
  let q = script.controls.get(subtype)
  if (q === undefined) {
    q = Effect.runSync(Queue.unbounded<Message.ControlRequestBody>())
    script.controls.set(subtype, q)
  }
  return q
}

/** Answers an SDK control request with its responder, unless the subtype is held back (slow or silent). */
const answer = (script: Script, requestId: string, request: Message.ControlRequestBody): Effect.Effect<void> => {
  const responder = script.responders.get(request.subtype)
  const response: Effect.Effect<Message.ControlResponse["response"]> = responder === undefined
    ? Effect.succeed(Frames.unsupported(requestId, request.subtype))
    : responder(request).pipe(
      Effect.match({
        onFailure: (error) => ({ subtype: "error" as const, request_id: requestId, error }),
        onSuccess: (body) => ({ subtype: "success" as const, request_id: requestId, response: body })
      })
    )
  const emitted = Effect.flatMap(response, (r) => emit(script, { type: "control_response", response: r }))
  const delay = script.delays.get(request.subtype)
  const held = delay === undefined
    ? emitted
    : Duration.isFinite(delay)
    ? Effect.delay(emitted, delay)
    : Effect.never
  // on its own fiber, like the real CLI: a slow or silent answer never holds up reading stdin
  return Effect.asVoid(Effect.forkIn(held, script.scope))
}

/** Files one frame of the SDK's stdin: user messages and requests are queued, answers complete the CLI's requests. */
const dispatch = (script: Script, frame: Message.StdinMessage): Effect.Effect<void> => {
  switch (frame.type) {
    case "user":
      return Effect.asVoid(script.users.offer(Option.some(frame)))
    case "control_request":
      return Effect.gen(function*() {
        if (frame.request.subtype === "initialize") yield* Deferred.succeed(script.initialized, frame.request)
        yield* controlQueue(script, frame.request.subtype).offer(frame.request)
        yield* answer(script, frame.request_id, frame.request)
      })
    case "control_response":
      return Effect.suspend(() => {
        const deferred = script.pending.get(frame.response.request_id)
        script.pending.delete(frame.response.request_id)
        return deferred === undefined ? Effect.void : Deferred.succeed(deferred, frame.response)
      })
    case "control_cancel_request":
      return Effect.sync(() => {
        script.cancelled.push(frame.request_id)
      })
  }
}

/** Reads the SDK's stdin until it closes, in the background; then `inputEnded` completes and users see `None`. */
const readStdin = (script: Script): Effect.Effect<void, never, Scope.Scope> =>
  script.peer.take.pipe(
    Effect.flatMap((frame) => dispatch(script, frame)),
    Effect.forever,
    Effect.catchAll(() =>
      Effect.zipRight(
        Deferred.succeed(script.inputEnded, undefined),
        script.users.offer(Option.none<Message.UserMessage>())
      )
    ),
    Effect.forkScoped,
    Effect.asVoid
  )

/** The next user message; stdin closing is remembered: every later read sees `None`. */
const nextUser = (script: Script): Effect.Effect<Option.Option<Message.UserMessage>, ScriptError> =>
  timed(
    script,
    "a user message",
    Effect.flatMap(
      script.users.take,
      (o): Effect.Effect<Option.Option<Message.UserMessage>> =>
        Option.isSome(o) ? Effect.succeed(o) : Effect.as(script.users.offer(o), o)
    )
  )

const assistantFrame = (script: Script, block: Message.ContentBlock) => ({
  ...Frames.assistantFrame(script.identity, `msg_scripted_${script.messages}`, block),
  timestamp: new Date().toISOString()
})

/** The conversation a script writes: `system/init`, assistant messages, tool results and results. */
const conversationOf = (
  script: Script
): Pick<ScriptedCli, "init" | "assistant" | "toolResult" | "result" | "turn"> => {
  const sessionId = script.identity.sessionId
  const init: ScriptedCli["init"] = (fields) => emit(script, Frames.initFrame(script.identity, fields))
  const assistant: ScriptedCli["assistant"] = (...content) =>
    Effect.gen(function*() {
      script.messages++
      for (const part of content) {
        yield* emit(script, assistantFrame(script, typeof part === "string" ? { type: "text", text: part } : part))
      }
    })
  const result: ScriptedCli["result"] = (text = "done", fields) =>
    Effect.zipRight(
      emit(
        script,
        Frames.resultFrame(script.identity, text, {
          duration_ms: 12,
          duration_api_ms: 8,
          total_cost_usd: 0.0001,
          modelUsage: { [MODEL]: { inputTokens: 10, outputTokens: 5, costUSD: 0.0001 } },
          terminal_reason: "completed",
          ...fields
        })
      ),
      emit(script, Frames.idleFrame(script.identity))
    )
  return {
    init,
    assistant,
    toolResult: (toolUseId, content, isError = false) =>
      emit(script, {
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
    result,
    turn: (text) =>
      Effect.gen(function*() {
        yield* init()
        yield* assistant(text)
        yield* result(text)
      })
  }
}

/** The control requests of the CLI to the SDK, and how the CLI answers the SDK's. */
const controlOf = (
  script: Script
): Pick<
  ScriptedCli,
  | "expectControl"
  | "respond"
  | "slow"
  | "neverAnswer"
  | "requestRaw"
  | "request"
  | "canUseTool"
  | "cancel"
  | "cancelled"
> => {
  const requestRaw: ScriptedCli["requestRaw"] = (subtype, body = {}, requestOptions) =>
    Effect.gen(function*() {
      const requestId = `cli_${++script.requests}`
      const deferred = yield* Deferred.make<Message.ControlResponse["response"]>()
      script.pending.set(requestId, deferred)
      yield* emit(script, { type: "control_request", request_id: requestId, request: { ...body, subtype } })
      return yield* timed(
        script,
        `the answer to ${subtype} (${requestId})`,
        Deferred.await(deferred),
        requestOptions?.timeout === undefined ? script.stepTimeout : Duration.decode(requestOptions.timeout)
      )
    })
  const request: ScriptedCli["request"] = (subtype, body, requestOptions) =>
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
    )
  return {
    expectControl: (subtype) => timed(script, `a ${subtype} control request`, controlQueue(script, subtype).take),
    respond: (subtype, responder) => Effect.sync(() => script.responders.set(subtype, responder)),
    slow: (subtype, duration) => Effect.sync(() => script.delays.set(subtype, Duration.decode(duration))),
    neverAnswer: (subtype) => Effect.sync(() => script.delays.set(subtype, Duration.infinity)),
    requestRaw,
    request,
    canUseTool: (toolName, input, extra) =>
      request("can_use_tool", {
        tool_name: toolName,
        display_name: toolName,
        input,
        tool_use_id: `toolu_scripted_${script.requests + 1}`,
        permission_suggestions: [],
        ...extra
      }),
    cancel: (requestId) => emit(script, { type: "control_cancel_request", request_id: requestId }),
    cancelled: Effect.sync(() => [...script.cancelled])
  }
}

/** How the CLI misbehaves or ends: exits, kills, stalls, malformed and oversized lines, unknown messages. */
const faultsOf = (
  script: Script
): Pick<ScriptedCli, "exit" | "kill" | "stall" | "malformed" | "giantLine" | "unknownMessage"> => {
  const peer = script.peer
  return {
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
        script.messages++
        const frame = assistantFrame(script, { type: "text", text: "x".repeat(Math.max(0, bytes)) })
        return peer.emitRaw(`${JSON.stringify(frame)}\n`)
      }),
    unknownMessage: (type = "scripted_future_message", fields) =>
      emit(script, { session_id: script.identity.sessionId, uuid: randomUUID(), ...fields, type })
  }
}

const make = (peer: MemoryPeer, spec: LaunchSpec, options: Options) =>
  Effect.gen(function*() {
    const script = yield* makeScript(peer, spec, options)
    yield* readStdin(script)
    const cli: ScriptedCli = {
      spec,
      peer,
      sessionId: script.identity.sessionId,
      initialize: timed(script, "the initialize request", Deferred.await(script.initialized)),
      expectUser: Effect.flatMap(nextUser(script), (o) =>
        Option.isSome(o)
          ? Effect.succeed(o.value)
          : Effect.fail(
            new ScriptError({ reason: "InputEnded", description: "expected a user message, but the SDK closed stdin" })
          )),
      nextUser: nextUser(script),
      expectEndInput: timed(script, "stdin to close", Deferred.await(script.inputEnded)),
      emit: (frame) => emit(script, frame),
      emitRaw: peer.emitRaw,
      stderr: peer.emitStderr,
      received: peer.sent,
      ...conversationOf(script),
      ...controlOf(script),
      ...faultsOf(script)
    }
    return { cli, inputEnded: script.inputEnded }
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
