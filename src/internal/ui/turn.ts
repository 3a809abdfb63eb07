/** @internal */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as AgentOptions from "../../AgentOptions.js"
import * as ClaudeAgent from "../../ClaudeAgent.js"
import * as Permissions from "../../Permissions.js"
import type * as Transport from "../../Transport.js"
import type * as Api from "../../UIMessageStream.js"
import * as chunks from "./chunks.js"
import { errorChunk } from "./sse.js"

/** A permission the browser decides, waiting for the request that carries the decision. */
export interface Pending {
  readonly toolCallId: string
  /** `approval`: approve or deny; `input`: a client tool (AskUserQuestion) answered with `addToolOutput`. */
  readonly kind: "approval" | "input"
  readonly input: Readonly<Record<string, unknown>>
  readonly decision: Deferred.Deferred<Permissions.PermissionResult>
}

/** What a turn writes for the responses: chunks, and `pause` where the turn waits for the browser. */
export type Output = Api.UIMessageChunk | "pause"

/** One turn of a chat: the query's fiber and what the responses read from it. */
export interface Turn {
  readonly chatId: string
  /** The assistant message every response of the turn continues. */
  readonly messageId: string
  readonly output: Mailbox.Mailbox<Output>
  /** Read from the mailbox but not yet sent (after a pause). */
  readonly leftover: Array<Output>
  /** Permissions waiting for the browser, by tool call id. */
  readonly pending: Map<string, Pending>
  /** Tool calls the browser already decided (a repeated decision is ignored). */
  readonly decided: Set<string>
  /** A response is reading the turn. */
  attached: boolean
  fiber: Fiber.RuntimeFiber<void> | undefined
}

/** @internal */
export interface TurnOptions {
  readonly prompt: string
  readonly options: AgentOptions.Options
  /** Permission rules the server decides without asking (`Permissions.rules` syntax). */
  readonly allow: ReadonlyArray<string>
  readonly deny: ReadonlyArray<string>
  readonly approvalTimeout: Duration.Duration
  readonly clientTools: ReadonlyArray<string>
  readonly onError: ((error: unknown) => string) | undefined
}

/** What `canUseTool` does for a call the server's rules leave to the browser. */
const askBrowser = (
  turn: Turn,
  requests: Queue.Queue<Api.ApprovalRequest>,
  options: TurnOptions
): Permissions.Policy =>
(request) =>
  Effect.gen(function*() {
    const kind = options.clientTools.includes(request.toolName) ? "input" : "approval"
    const decision = yield* Deferred.make<Permissions.PermissionResult>()
    turn.pending.set(request.toolUseId, { toolCallId: request.toolUseId, kind, input: request.input, decision })
    yield* Queue.offer(requests, {
      type: "approval_request",
      toolUseId: request.toolUseId,
      kind,
      reason: request.decisionReason ?? request.title
    })
    return yield* Deferred.await(decision).pipe(
      Effect.timeoutTo({
        duration: options.approvalTimeout,
        // the browser went away (or never answered): a deny, never a hang
        onTimeout: () => Permissions.deny("The user did not answer in time."),
        onSuccess: (result) => result
      })
    )
  }).pipe(Effect.ensuring(Effect.sync(() => turn.pending.delete(request.toolUseId))))

/** Runs the turn's query into its mailbox (with `pause` where it waits for the browser), then ends the mailbox. */
export const run = (
  turn: Turn,
  options: TurnOptions
): Effect.Effect<void, never, Transport.Transport> =>
  Effect.gen(function*() {
    const requests = yield* Queue.unbounded<Api.ApprovalRequest>()
    const policy = Permissions.rules({
      allow: options.allow,
      deny: options.deny,
      fallback: askBrowser(turn, requests, options)
    })
    // the browser's own bound decides first; the service's is a backstop
    const timeout = Duration.sum(options.approvalTimeout, Duration.seconds(30))
    const messages = ClaudeAgent.query(options.prompt, { ...options.options, includePartialMessages: true }).pipe(
      Stream.provideSomeLayer(Permissions.layer(policy, { timeout }))
    )
    const translate = { clientTools: options.clientTools, onError: options.onError }
    let state = chunks.initial
    const write = (produced: ReadonlyArray<Api.UIMessageChunk>) => {
      const out: Array<Output> = []
      // every response sends its own `start`
      for (const chunk of produced) if (chunk.type !== "start") out.push(chunk)
      const [pause, next] = chunks.takePause(state)
      state = next
      if (pause) out.push("pause")
      return out.length === 0 ? Effect.void : turn.output.offerAll(out)
    }
    const inputs = Stream.merge(messages, Stream.fromQueue(requests), { haltStrategy: "left" })
    const failed = yield* inputs.pipe(
      Stream.runForEach((input) => {
        const [next, produced] = chunks.step(state, input, translate)
        state = next
        return write(produced)
      }),
      Effect.as(false),
      Effect.catchAllCause((cause) =>
        Effect.logError("ChatServer: the turn failed", cause).pipe(
          Effect.zipRight(turn.output.offer(errorChunk(translate, cause))),
          Effect.as(true)
        )
      )
    )
    if (!failed) yield* write(chunks.flush(state, translate))
  }).pipe(Effect.ensuring(turn.output.end))

/**
 * The chunks of the turn up to its next pause (or its end). Chunks read past a pause stay in `leftover` for the
 * next response. Only one response reads a turn at a time (`attached`).
 */
export const readUntilPause = (turn: Turn): Stream.Stream<Api.UIMessageChunk | "pause"> => {
  let stopped = false
  const take: Effect.Effect<Chunk.Chunk<Output>, Option.Option<never>> = Effect.suspend(() => {
    if (stopped) return Effect.fail(Option.none())
    const source = turn.leftover.length > 0
      ? Effect.succeed([turn.leftover.splice(0, turn.leftover.length), false] as const)
      : Effect.map(turn.output.takeAll, ([items, done]) => [Chunk.toArray(items), done] as const)
    return Effect.flatMap(source, ([items, done]) => {
      const pause = items.indexOf("pause")
      if (pause >= 0) {
        turn.leftover.push(...items.slice(pause + 1))
        stopped = true
        return Effect.succeed(Chunk.unsafeFromArray(items.slice(0, pause + 1)))
      }
      if (done) stopped = true
      if (items.length === 0) return done ? Effect.fail(Option.none()) : take
      return Effect.succeed(Chunk.unsafeFromArray(items))
    })
  })
  return Stream.repeatEffectChunkOption(take)
}

/** @internal */
export const makeTurn = (chatId: string, messageId: string): Effect.Effect<Turn> =>
  Effect.map(Mailbox.make<Output>(), (output) => ({
    chatId,
    messageId,
    output,
    leftover: [],
    pending: new Map(),
    decided: new Set(),
    attached: true,
    fiber: undefined
  }))

/** Starts the turn on a fiber of `scope` (the server's: a turn outlives the request that started it). */
export const start = (turn: Turn, options: TurnOptions, scope: Scope.Scope) =>
  Effect.tap(Effect.forkIn(run(turn, options), scope), (fiber) => Effect.sync(() => (turn.fiber = fiber)))
