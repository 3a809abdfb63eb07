/**
 * The browser side of `effect-claude-agent/ui` (`effect-claude-agent/ui/client`): what a page built with the AI
 * SDK's `useChat` needs from this SDK. It imports nothing at run time (no Effect, no Node), so it bundles for the
 * browser.
 *
 * @since 0.1.0
 */

/**
 * `sendAutomaticallyWhen` for a chat page on a `ChatServer`.
 *
 * @since 0.1.0
 */
export * as ChatClient from "./ChatClient.js"
