/** @internal */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { fromEffect, type Handler } from "../protocol/handler.js"
import type { ElicitationRequest, ElicitResult, OnElicitation } from "../../Elicitation.js"
import type { Contribution } from "../protocol/contribution.js"

/** The CLI's `elicitation` control request (unknown fields, e.g. `property_order`, are dropped). */
const WireRequest = Schema.Struct({
  mcp_server_name: Schema.String,
  message: Schema.String,
  mode: Schema.optional(Schema.Literal("form", "url")),
  url: Schema.optional(Schema.String),
  elicitation_id: Schema.optional(Schema.String),
  requested_schema: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  title: Schema.optional(Schema.String),
  display_name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String)
})

const decodeRequest = Schema.decodeUnknown(WireRequest)

/** What the handler answered, checked (it may come from untyped code); also the wire answer the CLI expects. */
const Result = Schema.Struct({
  action: Schema.Literal("accept", "decline", "cancel"),
  content: Schema.optional(
    Schema.Record({
      key: Schema.String,
      value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))
    })
  )
})

const decodeResult = Schema.decodeUnknown(Result)

/** The official SDK declines when there is no `onElicitation`. @internal */
export const declined: ElicitResult = { action: "decline" }

/** A failing handler: the CLI answers the server `cancel` when the official SDK's callback throws. */
const failedClosed: ElicitResult = { action: "cancel" }

/** The message of a handler's failure or defect, for the log. @internal */
export const describeCause = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  return squashed instanceof Error ? squashed.message : String(squashed)
}

const toRequest = (wire: typeof WireRequest.Type, requestId: string): ElicitationRequest => ({
  serverName: wire.mcp_server_name,
  message: wire.message,
  requestId,
  ...(wire.mode !== undefined ? { mode: wire.mode } : {}),
  ...(wire.url !== undefined ? { url: wire.url } : {}),
  ...(wire.elicitation_id !== undefined ? { elicitationId: wire.elicitation_id } : {}),
  ...(wire.requested_schema !== undefined ? { requestedSchema: wire.requested_schema } : {}),
  ...(wire.title !== undefined ? { title: wire.title } : {}),
  ...(wire.display_name !== undefined ? { displayName: wire.display_name } : {}),
  ...(wire.description !== undefined ? { description: wire.description } : {})
})

const toWire = (result: typeof Result.Type): Record<string, unknown> =>
  result.content === undefined ? { action: result.action } : { action: result.action, content: result.content }

/**
 * Answers `elicitation` requests with `onElicitation`: fail closed (`cancel`) on a malformed request, a failure, a
 * defect or an invalid answer; interruption (the CLI withdrew the request, the session closed) answers nothing.
 *
 * @internal
 */
export const handler = (onElicitation: OnElicitation): Handler =>
  fromEffect(({ request: body, requestId }) =>
    Effect.gen(function*() {
      const server = typeof body["mcp_server_name"] === "string" ? body["mcp_server_name"] : "an MCP server"
      const wire = yield* Effect.either(decodeRequest(body))
      if (wire._tag === "Left") {
        yield* Effect.logWarning(`Elicitation from ${server} cancelled: malformed request: ${wire.left.message}`)
        return toWire(failedClosed)
      }
      return yield* Effect.suspend(() => onElicitation(toRequest(wire.right, requestId))).pipe(
        Effect.flatMap((result) =>
          Effect.mapError(decodeResult(result), (error) => new Error(`invalid answer: ${error.message}`))
        ),
        Effect.map(toWire),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.as(
              Effect.logWarning(`Elicitation from ${server} cancelled: the handler failed: ${describeCause(cause)}`),
              toWire(failedClosed)
            )
        )
      )
    })
  )

/** What `onElicitation` contributes to a session: the `elicitation` handler. @internal */
export const contribution = (onElicitation: OnElicitation): Contribution => ({
  handlers: new Map([["elicitation", handler(onElicitation)]])
})
