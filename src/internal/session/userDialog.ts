/** @internal */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { fromEffect, type Handler } from "../protocol/handler.js"
import { describeCause } from "../mcp/elicitation.js"
import { noAnswer } from "../protocol/controlProtocol.js"
import type { OnUserDialog, UserDialogRequest } from "../../UserDialog.js"
import type { Contribution } from "../protocol/contribution.js"

/**
 * The payload as the CLI sent it: a JSON object, handed over as parsed (a rebuilt copy would turn a `"__proto__"` key
 * into the copy's prototype, hidden from its own keys yet readable as its fields).
 */
const Payload = Schema.declare(
  (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u),
  { identifier: "JsonObject" }
)

/** The CLI's `request_user_dialog` control request. */
const WireRequest = Schema.Struct({
  dialog_kind: Schema.String,
  payload: Payload,
  tool_use_id: Schema.optional(Schema.String)
})

const decodeRequest = Schema.decodeUnknown(WireRequest)

/** What the handler answered, checked (it may come from untyped code); also the wire answer. */
const Result = Schema.Union(
  Schema.Struct({ behavior: Schema.Literal("completed"), result: Schema.Unknown }),
  Schema.Struct({ behavior: Schema.Literal("cancelled") })
)

/** An answer whose `result` JSON cannot write (a BigInt, a cycle, a throwing `toJSON`) is an invalid one. */
const Writable = Schema.NullOr(Result).pipe(Schema.filter((answer) => {
  if (answer === null || answer.behavior === "cancelled") return true
  try {
    JSON.stringify(answer.result)
    return true
  } catch (error) {
    return `result cannot be written as JSON: ${error instanceof Error ? error.message : String(error)}`
  }
}))

const decodeResult = Schema.decodeUnknown(Writable)

/** A failing handler: the CLI applies the dialog's default. */
const cancelled = { behavior: "cancelled" } as const

const toRequest = (wire: typeof WireRequest.Type, requestId: string): UserDialogRequest => ({
  dialogKind: wire.dialog_kind,
  payload: wire.payload,
  requestId,
  ...(wire.tool_use_id !== undefined ? { toolUseID: wire.tool_use_id } : {})
})

/** The wire answer: `result` is always present on `completed` (the CLI reads it), `cancelled` carries nothing else. */
const toWire = (result: typeof Result.Type): Record<string, unknown> =>
  result.behavior === "completed" ? { behavior: "completed", result: result.result } : cancelled

/**
 * Without `onUserDialog` the official SDK sends no answer: another attached client may be the renderer, and the CLI's
 * deadline settles the dialog. (An error response would be discarded by the CLI; a `cancelled` would settle it.)
 *
 * @internal
 */
export const unanswered: Handler = fromEffect(({ request }) =>
  Effect.as(
    Effect.logDebug(`request_user_dialog (kind=${String(request["dialog_kind"])}) left unanswered: no onUserDialog`),
    noAnswer
  )
)

/**
 * Answers `request_user_dialog` with `onUserDialog` for the declared kinds: `cancelled` on a failure, a defect or an
 * invalid answer; nothing for a kind not declared, a malformed request, a `null` answer (sent out of band), or
 * interruption (the CLI withdrew the dialog, the session closed).
 *
 * @internal
 */
export const handler = (onUserDialog: OnUserDialog, kinds: ReadonlySet<string>): Handler =>
  fromEffect(({ request: body, requestId }) =>
    Effect.gen(function*() {
      const wire = yield* Effect.either(decodeRequest(body))
      if (wire._tag === "Left") {
        yield* Effect.logWarning(`request_user_dialog left unanswered: malformed request: ${wire.left.message}`)
        return noAnswer
      }
      const kind = wire.right.dialog_kind
      if (!kinds.has(kind)) {
        yield* Effect.logWarning(`request_user_dialog left unanswered: kind ${kind} is not in supportedDialogKinds`)
        return noAnswer
      }
      const answer = yield* Effect.suspend(() => onUserDialog(toRequest(wire.right, requestId))).pipe(
        Effect.flatMap((result) =>
          Effect.mapError(decodeResult(result), (error) => new Error(`invalid answer: ${error.message}`))
        ),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.as(
              Effect.logWarning(`request_user_dialog ${kind} cancelled: the handler failed: ${describeCause(cause)}`),
              cancelled
            )
        )
      )
      // `null`: answered out of band, so this side sends nothing
      return answer === null ? noAnswer : toWire(answer)
    })
  )

/** What `onUserDialog` contributes to a session: the `request_user_dialog` handler. @internal */
export const contribution = (onUserDialog: OnUserDialog, kinds: ReadonlyArray<string>): Contribution => ({
  handlers: new Map([["request_user_dialog", handler(onUserDialog, new Set(kinds))]])
})
