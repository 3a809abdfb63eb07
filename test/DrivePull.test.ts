// The two ways to read a driven query (src/internal/session.ts `driveParts`): the stream, and the chunk pull the
// Promise API's pump uses. They must hand out the same messages and end the same way.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Message } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { unknownSession } from "./support/scripts.js"
import * as internal from "../src/internal/session.js"
import type { AgentOptions } from "effect-claude-agent"

type Script = (cli: ScriptedCli.ScriptedCli) => Effect.Effect<void, ScriptedCli.ScriptError>

interface Outcome {
  readonly types: ReadonlyArray<string>
  readonly end: string
}

const describeEnd = <E>(exit: Exit.Exit<unknown, E>): string =>
  Exit.isSuccess(exit) ? "end" : Option.match(Cause.failureOption(exit.cause), {
    onNone: () => `cause: ${Cause.pretty(exit.cause).split("\n")[0]}`,
    onSome: (error) => (typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "?")
  })

type Prompt = string | Stream.Stream<string, { readonly _tag: "InputBroke" }>

/** The two ways `driveParts` gives the messages (errors left open). */
interface Parts {
  readonly messages: Stream.Stream<Message.SdkMessage, unknown>
  readonly pull: Effect.Effect<Effect.Effect<Chunk.Chunk<Message.SdkMessage>, Option.Option<unknown>>, never, Scope.Scope>
}

/** Drives `prompt` on a scripted CLI and reads the messages with `read` (the stream or the pull). */
const driven = (read: (parts: Parts) => Effect.Effect<Outcome, never, Scope.Scope>) =>
(script: Script, options: AgentOptions.Options, cliOptions?: ScriptedCli.Options, prompt: Prompt = "hi") =>
  Effect.scoped(Effect.flatMap(internal.make(options), (s) => Effect.flatMap(internal.driveParts(s, prompt), read)))
    .pipe(Effect.provide(ScriptedCli.layer(script, cliOptions)))

const viaStream = driven(({ messages }) =>
  Effect.gen(function*() {
    const types: Array<string> = []
    const exit = yield* Effect.exit(Stream.runForEach(messages, (m: Message.SdkMessage) =>
      Effect.sync(() => {
        types.push(m.type)
      })))
    return { types, end: describeEnd(exit) }
  })
)

const viaPull = driven(({ pull: makePull }) =>
  Effect.gen(function*() {
    const pull = yield* makePull
    const types: Array<string> = []
    while (true) {
      const exit = yield* Effect.exit(pull)
      if (Exit.isSuccess(exit)) {
        for (const m of Chunk.toReadonlyArray(exit.value)) types.push(m.type)
        continue
      }
      const failure = Cause.failureOption(exit.cause)
      const end = Option.isSome(failure) && Option.isNone(failure.value)
        ? "end"
        : describeEnd(Exit.failCause(Cause.map(exit.cause, (e) => Option.getOrUndefined(e))))
      // once ended, a pull stays ended
      const again = yield* Effect.exit(pull)
      expect(Exit.isFailure(again)).toBe(true)
      return { types, end }
    }
  })
)

const scenarios: ReadonlyArray<
  readonly [string, Script, AgentOptions.Options, ScriptedCli.Options | undefined, Outcome["end"], Prompt?]
> = [
  ["a turn that ends cleanly", (cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.init()
      yield* cli.assistant("hello")
      yield* cli.result("hello")
      yield* cli.expectEndInput
      yield* cli.exit(0)
    }), {}, undefined, "end"],
  ["an error result followed by exit code 1", (cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.result("API Error: 400", { is_error: true, terminal_reason: "api_error" })
      yield* cli.expectEndInput
      yield* cli.exit(1)
    }), {}, undefined, "end"],
  ["a crash in the middle of the turn", (cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.assistant("working")
      yield* cli.exit(3, "fatal: out of cheese\n")
    }), {}, undefined, "ProcessExited"],
  [
    "a resume of a session that does not exist",
    unknownSession,
    { resume: "11111111-1111-4111-8111-111111111111" },
    { silent: ["initialize"] },
    "SessionNotFound"
  ],
  [
    "exit 0 with no result before initialize was answered",
    (cli) => Effect.zipRight(cli.expectUser, cli.exit(0)),
    {},
    { responders: { initialize: () => Effect.never } },
    "StartupFailed"
  ],
  ["a CLI that goes silent in the middle of a turn (idle timeout)", (cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.assistant("thinking")
      yield* Effect.never
    }), { idleTimeout: "100 millis" }, undefined, "IdleTimeout"],
  ["a stream of prompts that fails after its first prompt", (cli) =>
    Effect.gen(function*() {
      yield* cli.expectUser
      yield* cli.assistant("first")
      yield* cli.result("first")
      yield* Effect.never
    }), {}, undefined, "InputBroke", Stream.concat(Stream.make("one"), Stream.fail({ _tag: "InputBroke" } as const))]
]

describe("driveParts: the stream and the pull agree", () => {
  for (const [name, script, options, cliOptions, end, prompt] of scenarios) {
    it.live(name, () =>
      Effect.gen(function*() {
        const stream = yield* viaStream(script, options, cliOptions, prompt)
        const pulled = yield* viaPull(script, options, cliOptions, prompt)
        expect(stream.end).toBe(end)
        expect(pulled).toEqual(stream)
      }))
  }
})
