/**
 * What a browser page needs from this SDK besides the AI SDK itself (`effect-claude-agent/ui/client`). This module
 * imports nothing at run time, so it bundles for the browser.
 *
 * @example
 * ```ts
 * import { DefaultChatTransport } from "ai"
 * import { ChatClient } from "effect-claude-agent/ui/client"
 *
 * // useChat({ transport: new DefaultChatTransport({ api: "/api/chat" }), sendAutomaticallyWhen: ... })
 * export const chatOptions = {
 *   transport: new DefaultChatTransport({ api: "/api/chat" }),
 *   sendAutomaticallyWhen: ChatClient.sendAutomaticallyWhen
 * }
 * ```
 *
 * @since 0.1.0
 */
import type * as UIMessageStream from "./UIMessageStream.js"

/**
 * A tool part as the client holds it (static or dynamic).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolPartLike {
  readonly type: string
  readonly state?: string
  readonly providerExecuted?: boolean
}

const isToolPart = (part: ToolPartLike): boolean => part.type === "dynamic-tool" || part.type.startsWith("tool-")

/**
 * `useChat` / `Chat`'s `sendAutomaticallyWhen` for a chat server of this SDK: `true` when the last assistant message
 * has an answer the server waits for (an approval answered with `addToolApprovalResponse`, or a client tool such as
 * `AskUserQuestion` answered with `addToolOutput`) and nothing left unanswered.
 *
 * The AI SDK's own `lastAssistantMessageIsCompleteWithApprovalResponses` only looks at the last step and wants every
 * call in it decided; Claude Code asks for permissions one call at a time, while it runs a step's calls, so after
 * the first answer the other calls of the step are still waiting for input and that predicate would never send.
 *
 * @since 0.1.0
 * @category client
 */
export const sendAutomaticallyWhen = (
  options: {
    readonly messages: ReadonlyArray<
      Pick<UIMessageStream.UIMessage, "role"> & { readonly parts: ReadonlyArray<ToolPartLike> }
    >
  }
): boolean => {
  const last = options.messages[options.messages.length - 1]
  if (last === undefined || last.role !== "assistant") return false
  let answered = false
  for (const part of last.parts) {
    if (!isToolPart(part)) continue
    const client = part.providerExecuted !== true
    if (part.state === "approval-requested") return false
    if (client && (part.state === "input-available" || part.state === "input-streaming")) return false
    if (part.state === "approval-responded" || (client && part.state === "output-available")) answered = true
  }
  return answered
}
