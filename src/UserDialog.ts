/**
 * The CLI's blocking dialogs (`request_user_dialog`): a flow inside the CLI asks the host to render a dialog and
 * return the user's choice — for example `"refusal_fallback_prompt"` (retry a refused request on the fallback model,
 * or edit the prompt). Each `dialogKind` defines its own payload and result shape; the protocol carries both
 * opaquely.
 *
 * The CLI sends only the kinds declared in the `supportedDialogKinds` option (which requires `onUserDialog`), and fails
 * closed on absence: an undeclared kind is never sent, and its flow takes its no-dialog path. Answering
 * {@link cancelled} makes the CLI apply the dialog's default — the answer for a kind the handler does not recognize.
 *
 * Fail-closed rules, as in the official SDK:
 * - without `onUserDialog` nothing is answered (another attached client may be the renderer; the CLI's deadline
 *   settles the dialog);
 * - a dialog of a kind that was not declared is not answered either (a `cancelled` would be a real settlement);
 * - a handler that fails, dies or returns something that is not a {@link UserDialogResult} answers `cancelled`, with
 *   a warning in the log;
 * - a handler returning `null` has answered out of band (echoing `requestId`): nothing is sent;
 * - when the CLI withdraws the dialog or the session closes, the handler is interrupted and nothing is answered.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ClaudeAgent, UserDialog } from "effect-claude-agent"
 *
 * declare const askRetry: (payload: Record<string, unknown>) => Effect.Effect<boolean>
 *
 * const program = ClaudeAgent.query("Summarize the report", {
 *   supportedDialogKinds: ["refusal_fallback_prompt"],
 *   onUserDialog: (request) =>
 *     request.dialogKind === "refusal_fallback_prompt"
 *       ? Effect.map(askRetry(request.payload), (retry) =>
 *         retry ? UserDialog.completed("retry_fallback") : UserDialog.cancelled)
 *       : Effect.succeed(UserDialog.cancelled)
 * }).pipe(Stream.runDrain)
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"

/**
 * A dialog the CLI asks the host to render (the official SDK's `UserDialogRequest`, plus the CLI's request id).
 *
 * @since 0.1.0
 * @category models
 */
export interface UserDialogRequest {
  /** Which dialog (an open set: new kinds may come without a protocol change). */
  readonly dialogKind: string
  /** Dialog-specific data for the renderer; its shape is defined per `dialogKind`. */
  readonly payload: Readonly<Record<string, unknown>>
  /** The tool call the dialog belongs to, when it belongs to one (the `toolUseID` a permission request carries). */
  readonly toolUseID?: string | undefined
  /** The CLI's control request id (the official SDK passes it as `options.requestId`). */
  readonly requestId: string
}

/**
 * The answer: `"completed"` with the dialog's `result` (its shape is defined per `dialogKind`), or `"cancelled"`
 * (the CLI applies the dialog's default).
 *
 * @since 0.1.0
 * @category models
 */
export type UserDialogResult =
  | { readonly behavior: "completed"; readonly result: unknown }
  | { readonly behavior: "cancelled" }

/**
 * Answers the CLI's dialogs: the `onUserDialog` option. `null`: the answer was sent out of band, send nothing.
 * Failures and defects answer {@link cancelled} (fail closed).
 *
 * @since 0.1.0
 * @category models
 */
export type OnUserDialog = (request: UserDialogRequest) => Effect.Effect<UserDialogResult | null, unknown>

/**
 * The user made a choice: `result` is the dialog's answer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const completed = (result: unknown): UserDialogResult => ({ behavior: "completed", result })

/**
 * The user dismissed the dialog (or its kind is not one the handler renders): the CLI applies the dialog's default.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cancelled: UserDialogResult = { behavior: "cancelled" }
