/**
 * Claude Code sessions as @effect/cluster entities (`effect-claude-agent/cluster`): sessions that outlive a runner.
 * Needs the optional peers `@effect/cluster`, `@effect/rpc` and `@effect/sql` (and `@effect/sql-sqlite-node` for a
 * cluster on an SQLite file); the main entry never loads them.
 *
 * @since 0.1.0
 */

/**
 * The `AgentSession` entity, its runner layers and its client.
 *
 * @since 0.1.0
 */
export * as AgentCluster from "./AgentCluster.js"

/**
 * The cluster's own error.
 *
 * @since 0.1.0
 */
export * as ClusterError from "./ClusterError.js"
