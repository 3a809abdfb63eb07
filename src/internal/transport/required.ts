/** @internal */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Transport } from "../../Transport.js"

/** What a program that starts a session with no Transport in its context dies with. @internal */
export const MISSING_TRANSPORT = "No Transport to start the Claude Code CLI with (service effect-claude-agent/" +
  "Transport not found): provide NodeClaudeAgent.layer for real CLI processes " +
  "(program.pipe(Effect.provide(NodeClaudeAgent.layer))), or a Transport of the testing kit (ScriptedCli.layer, " +
  "FakeCli.options with NodeClaudeAgent.layer)"

/**
 * The Transport service. Its type requires it, so typed code cannot run without one; code that runs anyway (plain
 * JavaScript, a cast) dies with {@link MISSING_TRANSPORT}, which says what to provide, instead of Effect's bare
 * "Service not found".
 *
 * @internal
 */
export const transport: Effect.Effect<Context.Tag.Service<Transport>, never, Transport> = Effect.contextWithEffect((
  context: Context.Context<Transport>
) =>
  Option.match(Context.getOption(context, Transport), {
    onNone: () => Effect.dieMessage(MISSING_TRANSPORT),
    onSome: Effect.succeed
  })
)
