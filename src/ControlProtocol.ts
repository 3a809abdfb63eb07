/**
 * The control protocol on top of a {@link Transport.Connection}.
 *
 * - **Outbound requests** (`initialize`, `interrupt`, `set_model`, …) are correlated with their responses through a
 *   `Deferred` per request id. Each has a timeout (typed `ControlTimeout`); on timeout or interruption of the
 *   caller a `control_cancel_request` is sent (best effort), and the pending entry is always removed.
 *   When the CLI goes away, every pending request fails at once with the same `ProcessExited`.
 * - **Inbound requests** (`can_use_tool`, `hook_callback`, `mcp_message`, `elicitation`, …) are dispatched to
 *   handlers (an {@link EffectHandler} runs on a fiber of its own), so they are served while our own requests (even
 *   `initialize`) are pending. A `control_cancel_request` from the CLI interrupts
 *   or abandons the handler. An unknown subtype gets the error response the official SDKs send; a handler that fails
 *   or dies gets an error response — the session keeps working.
 * - Everything else (the SDK messages) goes into one buffer, read as `messages`, with backpressure.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { ControlError, ControlTimeout, InputClosed, ProcessExited } from "./AgentError.js"
import * as internal from "./internal/protocol/controlProtocol.js"
import type * as Message from "./Message.js"
import type * as Transport from "./Transport.js"

/**
 * An inbound request handler failed with a message that is sent back to the CLI as the error response.
 *
 * @since 0.1.0
 * @category models
 */
export interface HandlerFailure {
  readonly _tag: "HandlerFailure"
  readonly message: string
}

/**
 * Creates a {@link HandlerFailure}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handlerFailure = (message: string): HandlerFailure => ({ _tag: "HandlerFailure", message })

/**
 * What an inbound handler is given.
 *
 * @since 0.1.0
 * @category models
 */
export interface InboundRequest {
  /** The CLI's request id. */
  readonly requestId: string
  /** The request body (`subtype` and its fields). */
  readonly request: Message.ControlRequestBody
}

/**
 * An inbound handler written as an Effect: the value it succeeds with is sent as the success `response`; a failure
 * is sent as an error response (its `message`); a defect is sent as an error response too. It runs on a fiber of its
 * own; interruption (the CLI cancelled the request, or the session closed) sends nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface EffectHandler {
  readonly _tag: "EffectHandler"
  /** Handles the request: its success is the response, its failure the error response. */
  readonly handle: (request: InboundRequest) => Effect.Effect<unknown, HandlerFailure>
}

/**
 * Answers one kind of inbound control request (an {@link EffectHandler}).
 *
 * @since 0.1.0
 * @category models
 */
export type InboundHandler = EffectHandler

/**
 * What a handler answers to send no response at all: the request stays pending on the CLI's side until the CLI
 * withdraws it (for a dialog another client renders, or one answered out of band).
 *
 * @since 0.1.0
 * @category constructors
 */
export const noAnswer: typeof internal.noAnswer = internal.noAnswer

/**
 * An {@link EffectHandler}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const effectHandler = (
  handle: (request: InboundRequest) => Effect.Effect<unknown, HandlerFailure>
): EffectHandler => ({ _tag: "EffectHandler", handle })

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Handlers by request subtype (`can_use_tool`, `hook_callback`, `mcp_message`, …). */
  readonly handlers?: ReadonlyMap<string, InboundHandler> | undefined
  /** Default timeout of outbound requests. Defaults to 60 seconds. */
  readonly requestTimeout?: Duration.DurationInput | "infinity" | undefined
  /**
   * How many SDK messages may wait for the consumer before the reader stops reading stdout (backpressure). While
   * it waits, control responses are not read either, so keep consuming `messages`. Defaults to 4096.
   */
  readonly bufferSize?: number | undefined
}

/**
 * Options of one outbound request.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  /** Overrides the default timeout. `"infinity"` waits forever. */
  readonly timeout?: Duration.DurationInput | "infinity" | undefined
}

/**
 * Errors of an outbound request.
 *
 * @since 0.1.0
 * @category errors
 */
export type RequestError = ControlError | ControlTimeout | ProcessExited | InputClosed

/**
 * @since 0.1.0
 * @category models
 */
export interface ControlProtocol {
  /**
   * Sends a control request and waits for the response body (the `response` field of a success response;
   * `undefined` when the CLI sent none).
   */
  readonly request: (
    subtype: string,
    payload?: Readonly<Record<string, unknown>>,
    options?: RequestOptions
  ) => Effect.Effect<unknown, RequestError>
  /** Writes a frame (user messages) through the single writer. */
  readonly send: (message: Message.StdinMessage) => Effect.Effect<void, ProcessExited | InputClosed>
  /** Closes the CLI's stdin after everything already sent. */
  readonly endInput: Effect.Effect<void>
  /**
   * The SDK messages (everything but control frames and keep-alives), in order, from the protocol's one buffer of
   * them. Single consumer.
   */
  readonly messages: Stream.Stream<Message.SdkMessage, ProcessExited>
  /** Outbound requests waiting for their response (for diagnostics and tests). */
  readonly pendingCount: Effect.Effect<number>
  /** Inbound requests whose handlers are running. */
  readonly inFlightCount: Effect.Effect<number>
  /** The underlying connection. */
  readonly connection: Transport.Connection
}

/**
 * Starts the protocol over a connection: its reader runs until the connection ends or the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  connection: Transport.Connection,
  options?: Options
) => Effect.Effect<ControlProtocol, never, Scope.Scope> = internal.makePublic

/**
 * The error text sent for a request subtype nobody handles (the same text the official SDKs send).
 *
 * @since 0.1.0
 * @category constants
 */
export const unsupportedSubtype = (subtype: string): string => `Unsupported control request subtype: ${subtype}`
