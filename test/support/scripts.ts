import * as Effect from "effect/Effect"
import type { ScriptedCli } from "effect-claude-agent/testing"

/**
 * What the real CLI does for `--resume` of a session it does not have: an error result naming the id, then exit 1,
 * without answering `initialize` (the caller's layer keeps it silent).
 */
export const unknownSession = (cli: ScriptedCli.ScriptedCli) =>
  Effect.gen(function*() {
    yield* cli.result(undefined, {
      subtype: "error_during_execution",
      is_error: true,
      num_turns: 0,
      errors: [`No conversation found with session ID: ${cli.sessionId}`]
    })
    yield* cli.exit(1)
  })
