/**
 * JSON-RPC 2.0 over newline-delimited JSON, the framing of the Agent Client Protocol: one connection to one client,
 * with bounded line reading, one writer, correlation of the requests we send, and dispatch of the client's requests
 * each on a fiber of its own.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"

/** JSON-RPC and ACP error codes. @internal */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  ResourceNotFound: -32002
} as const

/** An error answered to the client (a handler's failure), or the client's error answer to our request. @internal */
export class RpcError extends Schema.TaggedError<RpcError>("effect-claude-agent/Acp/RpcError")("RpcError", {
  code: Schema.Number,
  description: Schema.String,
  data: Schema.optional(Schema.Unknown)
}) {
  override get message(): string {
    return `${this.description} (JSON-RPC error ${this.code})`
  }

  /** The `error` member of a response. */
  toJson(): { readonly code: number; readonly message: string; readonly data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.description }
      : { code: this.code, message: this.description, data: this.data }
  }
}

/** @internal */
export const invalidParams = (description: string, data?: unknown) =>
  new RpcError({ code: ErrorCode.InvalidParams, description, data })

/** @internal */
export const invalidRequest = (description: string, data?: unknown) =>
  new RpcError({ code: ErrorCode.InvalidRequest, description, data })

/** @internal */
export const internalError = (description: string, data?: unknown) =>
  new RpcError({ code: ErrorCode.InternalError, description, data })

/** The peer went away (input ended, output failed) before it answered. @internal */
export class Disconnected extends Schema.TaggedError<Disconnected>("effect-claude-agent/Acp/Disconnected")(
  "Disconnected",
  {}
) {
  override get message(): string {
    return "the ACP client disconnected"
  }
}

/** A request id: the client's (string or number, `null` when it sent none usable) or ours (numbers). @internal */
export type Id = string | number | null

/** One inbound request handler: decoded params in, the result out (an `RpcError` is answered as it is). @internal */
export type RequestHandler = (params: unknown) => Effect.Effect<Reply, RpcError>

/** A result, and what to do once it is written (e.g. notifications the client must get after the response). */
export interface Reply {
  readonly result: unknown
  readonly after?: Effect.Effect<void> | undefined
}

/** @internal */
export interface Handlers {
  readonly requests: Readonly<Record<string, RequestHandler>>
  readonly notifications: Readonly<Record<string, (params: unknown) => Effect.Effect<void>>>
  /**
   * Whether a request may run now; `Some(error)` refuses it (e.g. before `initialize`). Called before dispatch, on
   * the reader, for every request.
   */
  readonly gate: (method: string) => Option.Option<RpcError>
}

/** @internal */
export interface Connection {
  /** Sends a request to the client and waits for its answer; interrupting it sends `$/cancel_request`. */
  readonly request: (method: string, params: unknown) => Effect.Effect<unknown, RpcError | Disconnected>
  /** Sends a notification to the client (queued in order with every other message). */
  readonly notify: (method: string, params: unknown) => Effect.Effect<void>
}

/** Decodes params with a schema; a failure is `invalid params` saying what is wrong. @internal */
export const decodeParams = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema, { errors: "first", onExcessProperty: "ignore" })
  return (params: unknown): Effect.Effect<A, RpcError> =>
    Effect.mapError(
      decode(params),
      (error) => invalidParams(`Invalid params: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
    )
}

const NEWLINE = 0x0a
const CR = 0x0d

/** A line of input, or the mark of a line that was longer than the limit (its bytes were dropped). */
type Line = { readonly _tag: "Line"; readonly text: string } | { readonly _tag: "TooLong"; readonly bytes: number }

/**
 * Splits bytes on `\n` (a trailing `\r` is dropped), decoding UTF-8 per complete line. Memory is bounded by
 * `maxLineBytes`: the bytes of a longer line are counted and dropped, and it becomes a `TooLong` mark.
 */
const splitLines = (maxLineBytes: number) => <E, R>(self: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Line, E, R> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder("utf-8")
    let pending: Array<Uint8Array> = []
    let pendingBytes = 0
    let skipped: number | undefined
    const take = (last: Uint8Array): string => {
      const parts = pending.length === 0 ? [last] : [...pending, last]
      pending = []
      pendingBytes = 0
      const size = parts.reduce((n, p) => n + p.byteLength, 0)
      const bytes = parts.length === 1 ? parts[0]! : concat(parts, size)
      const end = bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === CR ? bytes.byteLength - 1 : bytes.byteLength
      return decoder.decode(bytes.subarray(0, end))
    }
    const push = (chunk: Uint8Array): Array<Line> => {
      const out: Array<Line> = []
      let start = 0
      while (start <= chunk.byteLength) {
        const nl = chunk.indexOf(NEWLINE, start)
        const end = nl === -1 ? chunk.byteLength : nl
        const piece = chunk.subarray(start, end)
        if (skipped !== undefined) {
          skipped += piece.byteLength
        } else if (pendingBytes + piece.byteLength > maxLineBytes) {
          skipped = pendingBytes + piece.byteLength
          pending = []
          pendingBytes = 0
        } else if (nl !== -1) {
          out.push({ _tag: "Line", text: take(piece) })
        } else if (piece.byteLength > 0) {
          // the chunk's buffer may be reused by the reader: keep a copy
          pending.push(piece.slice())
          pendingBytes += piece.byteLength
        }
        if (nl === -1) break
        if (skipped !== undefined) {
          out.push({ _tag: "TooLong", bytes: skipped })
          skipped = undefined
        }
        start = nl + 1
      }
      return out
    }
    const end = (): Array<Line> => {
      if (skipped !== undefined) return [{ _tag: "TooLong", bytes: skipped }]
      return pendingBytes > 0 ? [{ _tag: "Line", text: take(new Uint8Array(0)) }] : []
    }
    return Stream.concat(
      Stream.mapConcat(self, push),
      Stream.suspend(() => Stream.fromIterable(end()))
    )
  })

const concat = (parts: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  const out = new Uint8Array(size)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.byteLength
  }
  return out
}

/** What one line of input is. */
type Inbound =
  | { readonly _tag: "Request"; readonly id: Id; readonly method: string; readonly params: unknown }
  | { readonly _tag: "Notification"; readonly method: string; readonly params: unknown }
  | { readonly _tag: "Response"; readonly id: Id; readonly result: Exit.Exit<unknown, RpcError> }
  | { readonly _tag: "Invalid"; readonly id: Id; readonly error: RpcError }
  | { readonly _tag: "Blank" }

const isId = (u: unknown): u is string | number => typeof u === "string" || (typeof u === "number" && isFinite(u))

const describeJsonError = (e: unknown) => (e instanceof Error ? e.message : "invalid JSON")

/** Classifies one line; never throws. @internal */
export const classify = (text: string): Inbound => {
  if (text.trim().length === 0) return { _tag: "Blank" }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return {
      _tag: "Invalid",
      id: null,
      error: new RpcError({ code: ErrorCode.ParseError, description: `Parse error: ${describeJsonError(e)}` })
    }
  }
  if (Array.isArray(value)) {
    return { _tag: "Invalid", id: null, error: invalidRequest("Invalid request: batches are not supported") }
  }
  if (!Predicate.isRecord(value)) {
    return { _tag: "Invalid", id: null, error: invalidRequest("Invalid request: not a JSON object") }
  }
  const rawId = value["id"]
  const hasId = "id" in value
  const id: Id = isId(rawId) ? rawId : null
  if (value["jsonrpc"] !== "2.0") {
    return { _tag: "Invalid", id, error: invalidRequest("Invalid request: jsonrpc must be \"2.0\"") }
  }
  if (hasId && rawId !== null && !isId(rawId)) {
    return { _tag: "Invalid", id: null, error: invalidRequest("Invalid request: id must be a string or a number") }
  }
  const method = value["method"]
  if (typeof method === "string") {
    return hasId
      ? { _tag: "Request", id, method, params: value["params"] }
      : { _tag: "Notification", method, params: value["params"] }
  }
  if (hasId && ("result" in value || "error" in value)) {
    const error = value["error"]
    if ("error" in value) {
      const code = Predicate.isRecord(error) && typeof error["code"] === "number"
        ? error["code"]
        : ErrorCode.InternalError
      const message = Predicate.isRecord(error) && typeof error["message"] === "string"
        ? error["message"]
        : "the client answered with a malformed error"
      const data = Predicate.isRecord(error) ? error["data"] : undefined
      return { _tag: "Response", id, result: Exit.fail(new RpcError({ code, description: message, data })) }
    }
    return { _tag: "Response", id, result: Exit.succeed(value["result"]) }
  }
  return { _tag: "Invalid", id, error: invalidRequest("Invalid request: no method, result or error") }
}

/** @internal */
export interface ServeOptions {
  /** The longest line read; a longer one is answered with `invalid request` and dropped. */
  readonly maxLineBytes: number
  /** How long the last messages may take to be written once the input has ended. */
  readonly flushTimeout: Duration.DurationInput
}

const encoder = new TextEncoder()

/**
 * Serves one client: `make` gets the connection (to send requests and notifications) and returns the handlers and a
 * release that runs when the input ends (after every request fiber is interrupted), before the output is flushed
 * and closed. Returns when the input has ended and everything is released.
 *
 * @internal
 */
export const serve = <E, R, E2, R2, R3>(
  input: Stream.Stream<Uint8Array, E, R>,
  output: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>,
  options: ServeOptions,
  make: (connection: Connection) => Effect.Effect<Handlers, never, R3 | Scope.Scope>
): Effect.Effect<void, never, R | R2 | Exclude<R3, Scope.Scope>> =>
  Effect.scoped(Effect.gen(function*() {
    const outbox = yield* Mailbox.make<Uint8Array>()
    const closed = yield* Deferred.make<void>()
    const write = (message: unknown): Effect.Effect<void> =>
      Effect.asVoid(outbox.offer(encoder.encode(`${JSON.stringify(message)}\n`)))
    const writer = yield* Mailbox.toStream(outbox).pipe(
      Stream.run(output),
      Effect.catchAllCause((cause) => Effect.logDebug("ACP output failed", cause)),
      // the client cannot be written to any more: it is gone
      Effect.ensuring(Deferred.succeed(closed, void 0)),
      Effect.fork
    )

    const pending = new Map<number, Deferred.Deferred<unknown, RpcError | Disconnected>>()
    let nextId = 0
    const request = (method: string, params: unknown): Effect.Effect<unknown, RpcError | Disconnected> =>
      Effect.suspend(() => {
        const id = nextId++
        return Effect.flatMap(Deferred.make<unknown, RpcError | Disconnected>(), (answer) => {
          pending.set(id, answer)
          return write({ jsonrpc: "2.0", id, method, params }).pipe(
            Effect.zipRight(Deferred.await(answer)),
            Effect.onInterrupt(() => write({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } })),
            Effect.ensuring(Effect.sync(() => pending.delete(id)))
          )
        })
      })
    const notify = (method: string, params: unknown) => write({ jsonrpc: "2.0", method, params })
    const connection: Connection = { request, notify }

    const running = yield* FiberSet.make<unknown, never>()
    const inFlight = new Map<Id, Fiber.RuntimeFiber<unknown, never>>()
    const handlers = yield* make(connection)

    const answer = (id: Id, exit: Exit.Exit<Reply, RpcError>): Effect.Effect<void> =>
      Exit.match(exit, {
        onSuccess: (reply) =>
          Effect.zipRight(
            write({ jsonrpc: "2.0", id, result: reply.result ?? null }),
            reply.after ?? Effect.void
          ),
        onFailure: (cause) => write({ jsonrpc: "2.0", id, error: causeToError(cause).toJson() })
      })

    const dispatchRequest = (id: Id, method: string, params: unknown): Effect.Effect<void> => {
      const refused = handlers.gate(method)
      if (Option.isSome(refused)) return write({ jsonrpc: "2.0", id, error: refused.value.toJson() })
      const handler = Object.hasOwn(handlers.requests, method) ? handlers.requests[method] : undefined
      if (handler === undefined) {
        return write({
          jsonrpc: "2.0",
          id,
          error: new RpcError({ code: ErrorCode.MethodNotFound, description: `Method not found: ${method}` }).toJson()
        })
      }
      return Effect.gen(function*() {
        const fiber = yield* FiberSet.run(
          running,
          Effect.exit(Effect.suspend(() => handler(params))).pipe(
            Effect.flatMap((exit) => answer(id, exit)),
            // withdrawn by the client (`$/cancel_request`); when the client is gone, the answer goes nowhere
            Effect.onInterrupt(() => answer(id, Exit.interrupt(FiberId.none))),
            Effect.ensuring(Effect.sync(() => inFlight.delete(id)))
          )
        )
        if (id !== null) inFlight.set(id, fiber)
      })
    }

    const dispatch = (line: Line): Effect.Effect<void> => {
      if (line._tag === "TooLong") {
        return write({
          jsonrpc: "2.0",
          id: null,
          error: invalidRequest(
            `Invalid request: a message of ${line.bytes} bytes is over the limit of ${options.maxLineBytes}`
          )
            .toJson()
        })
      }
      const inbound = classify(line.text)
      switch (inbound._tag) {
        case "Blank":
          return Effect.void
        case "Invalid":
          return write({ jsonrpc: "2.0", id: inbound.id, error: inbound.error.toJson() })
        case "Response": {
          const waiting = typeof inbound.id === "number" ? pending.get(inbound.id) : undefined
          return waiting === undefined ? Effect.void : Deferred.done(waiting, inbound.result)
        }
        case "Notification": {
          if (inbound.method === "$/cancel_request") return cancelRequest(inbound.params)
          const handler = Object.hasOwn(handlers.notifications, inbound.method)
            ? handlers.notifications[inbound.method]
            : undefined
          return handler === undefined
            ? Effect.logDebug(`ACP: ignored notification ${inbound.method}`)
            : Effect.catchAllCause(handler(inbound.params), (cause) =>
              Effect.logWarning("ACP notification failed", cause))
        }
        case "Request":
          return dispatchRequest(inbound.id, inbound.method, inbound.params)
      }
    }

    /** `$/cancel_request`: the request's fiber is interrupted and answered `request cancelled`. */
    const cancelRequest = (params: unknown): Effect.Effect<void> => {
      const requestId = Predicate.isRecord(params) && isId(params["requestId"]) ? params["requestId"] : undefined
      const fiber = requestId === undefined ? undefined : inFlight.get(requestId)
      return fiber === undefined ? Effect.void : Effect.asVoid(Effect.fork(Fiber.interrupt(fiber)))
    }

    yield* input.pipe(
      splitLines(options.maxLineBytes),
      Stream.runForEach(dispatch),
      Effect.catchAllCause((cause) =>
        Effect.logDebug("ACP input failed", cause)
      ),
      // the input ended, or the output is gone: the client is gone either way
      Effect.raceFirst(Deferred.await(closed))
    )
    // the client is gone: its requests are not answered, ours fail
    yield* FiberSet.clear(running)
    for (const answer of pending.values()) yield* Deferred.fail(answer, new Disconnected())
    yield* outbox.end
    yield* Fiber.join(writer).pipe(Effect.timeout(options.flushTimeout), Effect.ignore)
    yield* Fiber.interrupt(writer)
  }))

/**
 * The error answered for a failed handler: its `RpcError`, `request cancelled` when it was interrupted, or an
 * internal error (a defect, logged).
 */
const causeToError = (cause: Cause.Cause<RpcError>): RpcError => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return failure.value
  if (Cause.isInterruptedOnly(cause)) {
    return new RpcError({ code: ErrorCode.RequestCancelled, description: "Request cancelled" })
  }
  return internalError(`Internal error: ${Cause.pretty(cause).split("\n")[0]}`)
}
