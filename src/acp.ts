/**
 * Claude Code as an Agent Client Protocol agent (`effect-claude-agent/acp`), for editors and other ACP clients. The
 * `effect-claude-agent-acp` binary serves it on stdio.
 *
 * @since 0.1.0
 */

/**
 * Serve one ACP client over a pair of byte streams, or stdio.
 *
 * @since 0.1.0
 */
export * as Acp from "./AcpServer.js"
