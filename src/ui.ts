/**
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as UIMessageStream from "./UIMessageStream.js"

/**
 * @since 0.1.0
 */
export * as ChatHistory from "./ChatHistory.js"

/**
 * @since 0.1.0
 */
export * as ChatStore from "./ChatStore.js"

/**
 * @since 0.1.0
 */
export * as ChatServer from "./ChatServer.js"
