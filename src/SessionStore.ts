/**
 * The former name of {@link SessionHistory} (session history on disk), kept for one release.
 *
 * @deprecated Use `SessionHistory`: the official SDK's `SessionStore` is this package's `TranscriptStore`, so the old
 * name collided with it. Every export of `SessionHistory` is here too; the old names below are aliases. The error's
 * `_tag` is now `"SessionHistoryError"`.
 * @since 0.1.0
 */
import * as SessionHistory from "./SessionHistory.js"

export * from "./SessionHistory.js"

/**
 * The session history service's tag.
 *
 * @deprecated Use `SessionHistory.SessionHistory`.
 * @since 0.1.0
 * @category tags
 */
export const SessionStore: typeof SessionHistory.SessionHistory = SessionHistory.SessionHistory

/**
 * @deprecated Use `SessionHistory.SessionHistory`.
 * @since 0.1.0
 * @category tags
 */
export type SessionStore = SessionHistory.SessionHistory

/**
 * @deprecated Use `SessionHistory.SessionHistoryError`.
 * @since 0.1.0
 * @category errors
 */
export const SessionStoreError: typeof SessionHistory.SessionHistoryError = SessionHistory.SessionHistoryError

/**
 * @deprecated Use `SessionHistory.SessionHistoryError`.
 * @since 0.1.0
 * @category errors
 */
export type SessionStoreError = SessionHistory.SessionHistoryError

/**
 * @deprecated Use `SessionHistory.isSessionHistoryError`.
 * @since 0.1.0
 * @category guards
 */
export const isSessionStoreError: (u: unknown) => u is SessionHistory.SessionHistoryError =
  SessionHistory.isSessionHistoryError
