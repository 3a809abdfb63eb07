/** @internal */

/** What a call of the main entry's `query` is told. @internal */
export const QUERY_HINT = "query() is exported by \"effect-claude-agent/promise\" (the official SDK's Promise API: " +
  "import { query } from \"effect-claude-agent/promise\"); with Effect, use ClaudeAgent.query from " +
  "\"effect-claude-agent\""

/** @internal */
export const query = (..._: ReadonlyArray<unknown>): never => {
  throw new TypeError(QUERY_HINT)
}
