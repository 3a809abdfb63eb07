/**
 * The workflow the testing example checks: an agent that tidies up a project's `tmp/` folder. The app's policy
 * lets it delete inside `tmp/`, and nothing else.
 *
 * It is ordinary application code: it needs a `Transport` (the real CLI in production, `NodeClaudeAgent.layer`)
 * and knows nothing about tests. `workflow.test.ts` tests it three ways without changing a line of it.
 */
import { Chunk, Effect, Stream } from "effect"
import { type AgentOptions, ClaudeAgent, Message, Permissions } from "effect-claude-agent"

/** The app's permission policy: deleting under `tmp/` is fine, anything else is refused. */
export const policy = Permissions.layer(
  Permissions.rules(
    { allow: ["Bash(rm -rf tmp/*)"] },
    (request) => Effect.succeed(Permissions.deny(`tidyUp may not use ${request.toolName} that way`))
  )
)

/** What the workflow reports. */
export interface Report {
  readonly answer: string
  /** Tools the policy refused. */
  readonly refused: ReadonlyArray<string>
}

/** Asks the agent to clean `tmp/` and reports its answer and what was refused. */
export const tidyUp = (options: AgentOptions.Options = {}) =>
  ClaudeAgent.query("Delete everything in tmp/ and nothing else.", options).pipe(
    Stream.runCollect,
    Effect.map((messages): Report => {
      const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
      return {
        answer: result?.subtype === "success" ? result.result : `(${result?.subtype ?? "no result"})`,
        refused: result?.permission_denials.map((d) => d.tool_name) ?? []
      }
    }),
    Effect.provide(policy)
  )
