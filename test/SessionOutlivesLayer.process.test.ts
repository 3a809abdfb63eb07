// A session kept in a scope longer than the layer that made it (issue 31, item 3): the Node layer provided per call
// (`Effect.provide`), built in a scope that closes first (`Layer.build`), or held by a runtime the caller disposes
// (the Promise API's `transport`). The session's CLI — started by the process Transport, watched by the layer's host
// watchdog — must keep working until the session's own scope closes, and be reaped then.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ClaudeAgent, Message, NodeClaudeAgent, Transport } from "effect-claude-agent"
import { query, type SDKMessage, type SDKUserMessage } from "effect-claude-agent/promise"
import { FakeCli } from "effect-claude-agent/testing"
import { REAPER_ENV_NAME } from "../src/internal/transport/hostWatchdog.js"
import { isAlive, withEnv } from "./support/process.js"

const options = FakeCli.options(FakeCli.echoScenario)

/** One turn of the session, to its result text. */
const turn = (session: ClaudeAgent.Session, text: string) =>
  session.turn(text).pipe(
    Stream.runCollect,
    Effect.map((messages) => {
      const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
      return result?.subtype === "success" ? result.result : result
    })
  )

/** A service of the caller's that opens sessions in a scope it is given, on the Transport its layer was built with. */
class Agent extends Context.Tag("test/Agent")<Agent, {
  readonly open: (scope: Scope.Scope) => Effect.Effect<ClaudeAgent.Session, ClaudeAgent.SessionError>
}>() {}

const AgentLive = Layer.effect(
  Agent,
  Effect.map(Effect.context<Transport.Transport>(), (context) => ({
    open: (scope: Scope.Scope) => ClaudeAgent.session(options).pipe(Scope.extend(scope), Effect.provide(context))
  }))
).pipe(Layer.provide(NodeClaudeAgent.layer))

const reapers = () => withEnv(REAPER_ENV_NAME, String(process.pid))

/** Polls (real time: real processes) until `done`. */
const eventually = (done: () => boolean) =>
  Effect.gen(function*() {
    while (!done()) yield* Effect.sleep("20 millis")
  }).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("timed out") }))

/**
 * A session made in `make` (which provides the Node layer and ends that layer's scope before it returns), kept in a
 * scope of the test's own: it answers a turn after the layer closed, and its CLI (and the reaper it no longer needs)
 * is gone once that scope closes.
 */
const outlives = (
  make: (scope: Scope.Scope) => Effect.Effect<ClaudeAgent.Session, unknown>
) =>
  Effect.gen(function*() {
    const before = reapers()
    const scope = yield* Scope.make()
    const session = yield* make(scope)
    expect(yield* turn(session, "first")).toBe("echo: first")
    // let the closed layer's finalizers (and anything they set off) run before the next turn
    yield* Effect.sleep("200 millis")
    const pid = session.pid._tag === "Some" ? session.pid.value : -1
    expect(isAlive(pid)).toBe(true)
    expect(yield* turn(session, "second")).toBe("echo: second")
    yield* Scope.close(scope, Exit.void)
    expect(isAlive(pid)).toBe(false)
    yield* eventually(() => reapers().every((p) => before.includes(p)))
  })

describe("a session outlives the layer that made it", () => {
  it.live(
    "Effect.provide per call: the session, extended into a longer scope, answers after the provide ended",
    () =>
      outlives((scope) =>
        ClaudeAgent.session(options).pipe(
          Scope.extend(scope),
          Effect.provide(NodeClaudeAgent.layer)
        )
      ),
    60_000
  )

  it.live(
    "Layer composition: the Node layer built in a scope that closes before the session's",
    () =>
      outlives((scope) =>
        Effect.gen(function*() {
          const layerScope = yield* Scope.make()
          const context = yield* Layer.buildWithScope(NodeClaudeAgent.layer, layerScope)
          const session = yield* ClaudeAgent.session(options).pipe(Scope.extend(scope), Effect.provide(context))
          yield* Scope.close(layerScope, Exit.void)
          return session
        })
      ),
    60_000
  )

  it.live(
    "Layer composition: a service of the caller's, built on the Node layer per request, hands out sessions",
    () => outlives((scope) => Agent.pipe(Effect.flatMap((agent) => agent.open(scope)), Effect.provide(AgentLive))),
    60_000
  )

  it.live(
    "a session made after its layer closed starts, answers, and leaves no reaper behind",
    () =>
      Effect.gen(function*() {
        const before = reapers()
        const context = yield* Layer.build(NodeClaudeAgent.layer).pipe(Effect.scoped)
        const answer = yield* Effect.scoped(
          Effect.flatMap(ClaudeAgent.session(options), (session) => turn(session, "late"))
        ).pipe(Effect.provide(context))
        expect(answer).toBe("echo: late")
        yield* eventually(() => reapers().every((p) => before.includes(p)))
      }),
    60_000
  )

  it(
    "Promise API: a query on a transport whose runtime the caller disposed mid-query answers its next prompt",
    async () => {
      const runtime = ManagedRuntime.make(NodeClaudeAgent.layer)
      const transport = await runtime.runPromise(Transport.Transport)
      // the prompts, given one at a time; the query ends its input when `end` is called
      const given: Array<SDKUserMessage> = []
      let wake: () => void = () => {}
      let ended = false
      const give = (message: SDKUserMessage) => {
        given.push(message)
        wake()
      }
      const end = () => {
        ended = true
        wake()
      }
      async function* prompts(): AsyncGenerator<SDKUserMessage> {
        for (;;) {
          const next = given.shift()
          if (next !== undefined) yield next
          else if (ended) return
          else await new Promise<void>((resolve) => (wake = resolve))
        }
      }
      const user = (text: string): SDKUserMessage => ({
        type: "user",
        message: { role: "user", content: text },
        parent_tool_use_id: null,
        session_id: ""
      })
      const q = query({
        prompt: prompts(),
        options: {
          transport: Layer.succeed(Transport.Transport, transport),
          pathToClaudeCodeExecutable: options.pathToClaudeCodeExecutable!,
          env: { ...process.env, ...options.env }
        }
      })
      const results: Array<SDKMessage> = []
      const untilResult = async () => {
        for (;;) {
          const next = await q.next()
          if (next.done === true) return
          if (next.value.type === "result") {
            results.push(next.value)
            return
          }
        }
      }
      try {
        const first = untilResult()
        give(user("first"))
        await first
        await runtime.dispose()
        await new Promise((resolve) => setTimeout(resolve, 200))
        const second = untilResult()
        give(user("second"))
        await second
        expect(results.map((r) => r.type === "result" && r.subtype === "success" ? r.result : r)).toEqual([
          "echo: first",
          "echo: second"
        ])
      } finally {
        end()
        await q.close()
      }
    },
    60_000
  )
})
