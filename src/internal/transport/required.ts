/** @internal */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** What a program that starts a session with no Transport in its context dies with. @internal */
export const MISSING_TRANSPORT = "No Transport to start the Claude Code CLI with (service effect-claude-agent/" +
  "Transport not found): provide NodeClaudeAgent.layer for real CLI processes " +
  "(program.pipe(Effect.provide(NodeClaudeAgent.layer))), or a Transport of the testing kit (ScriptedCli.layer, " +
  "FakeCli.options with NodeClaudeAgent.layer)"

/**
 * The service of `tag`. Its type requires it, so typed code cannot run without one; code that runs anyway (plain
 * JavaScript, a cast) dies with {@link MISSING_TRANSPORT}, which says what to provide, instead of Effect's bare
 * "Service not found". `Transport.required` is this for the Transport tag.
 *
 * @internal
 */
export const required = <I, S>(tag: Context.Tag<I, S>): Effect.Effect<S, never, I> =>
  Effect.contextWithEffect((context: Context.Context<I>) =>
    Option.match(Context.getOption(context, tag), {
      onNone: () => Effect.dieMessage(MISSING_TRANSPORT),
      onSome: Effect.succeed
    })
  )
