/**
 * The SQL entry point (`effect-claude-agent/sql`): a `TranscriptStore` on `@effect/sql`. A separate entry so that
 * `@effect/sql` and its drivers stay optional peers of the package.
 *
 * @since 0.1.0
 */

/**
 * A `TranscriptStore` in a SQL database: SQLite embedded, PostgreSQL (or any `SqlClient`) shared.
 *
 * @since 0.1.0
 */
export * as TranscriptStoreSql from "./TranscriptStoreSql.js"
