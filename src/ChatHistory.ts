/**
 * A chat's `UIMessage[]` back from where Claude Code keeps a session (`effect-claude-agent/ui`): the CLI's session
 * files ({@link fromSessionFiles}, read with `SessionStore`) or a `TranscriptStore` ({@link fromTranscriptStore},
 * so it works on another machine). The parts are the ones the live stream ({@link UIMessageStream}) produced:
 *
 * - a user message per prompt (id: the prompt entry's uuid), an assistant message per turn (id: its first reply
 *   entry's uuid; `metadata` has the session id and model);
 * - a `step-start` per API message, text and reasoning parts (`state: "done"`, reasoning ids
 *   `<API message id>:<block index>` as on the stream), each tool call as a `dynamic-tool` part in its final state:
 *   `output-available` (the tool's structured output), `output-error`, `output-denied` (with
 *   `approval: { id, approved: false, reason }`), or `input-available` for a call that never got a result;
 * - a subagent's parts right after the tool call that started it, tagged as on the stream
 *   (`toolMetadata.parentToolCallId`, `providerMetadata.claudeCode.parentToolCallId`).
 *
 * Not in history: which allowed calls were approved in the browser (the client's `approval` on allowed calls),
 * per-turn cost and usage, and partial output of a turn cut short (the CLI does not write it).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as internal from "./internal/ui/history.js"
import type * as SessionStore from "./SessionStore.js"
import type * as TranscriptStore from "./TranscriptStore.js"
import type * as UIMessageStream from "./UIMessageStream.js"

/**
 * The transcript of a subagent by its agent id, `undefined` when there is none.
 *
 * @since 0.1.0
 * @category models
 */
export type Subagents = (agentId: string) => ReadonlyArray<SessionStore.TranscriptItem> | undefined

/**
 * The messages of a transcript (pure): `SessionStore.entries` of a session, and optionally its subagents'.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTranscript: (
  items: Iterable<SessionStore.TranscriptItem>,
  subagents?: Subagents
) => Array<UIMessageStream.UIMessage> = internal.fromTranscript

/**
 * The messages of a session from the CLI's session files under the `SessionStore`'s config dir (subagents from
 * `<session id>/subagents/agent-<id>.jsonl`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSessionFiles: (
  sessionId: string,
  cwd: string
) => Effect.Effect<
  Array<UIMessageStream.UIMessage>,
  SessionStore.SessionStoreError,
  SessionStore.SessionStore | FileSystem.FileSystem | Path.Path
> = internal.fromSessionFiles

/**
 * The messages of a session from a `TranscriptStore` (`None` when the store has no such session).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTranscriptStore: (
  key: { readonly projectKey: string; readonly sessionId: string }
) => Effect.Effect<
  Option.Option<Array<UIMessageStream.UIMessage>>,
  TranscriptStore.TranscriptStoreError,
  TranscriptStore.TranscriptStore
> = internal.fromTranscriptStore
