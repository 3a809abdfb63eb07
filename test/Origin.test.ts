// G13 / issue 8: which session a query or session runs is known before the first prompt, and stays truthful.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { AgentError, ClaudeAgent, Message } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { unknownSession } from "./support/scripts.js"

const RESUMED = "11111111-1111-4111-8111-111111111111"
const OTHER = "22222222-2222-4222-8222-222222222222"

/** An echo CLI that hands each instance to the test. */
const echoing = (options: ScriptedCli.Options = {}) =>
  Effect.gen(function*() {
    const clis = yield* Queue.unbounded<ScriptedCli.ScriptedCli>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* clis.offer(cli)
        while (true) {
          const next = yield* cli.nextUser
          if (next._tag === "None") return
          yield* cli.turn(`echo: ${ScriptedCli.textOf(next.value)}`)
        }
      }), options)
    return { layer, clis }
  })

/**
 * Collects what is logged at warning level: `next` waits for the next line; `barrier` waits until every warning a
 * fiber forked so far logs is in (a marker logged from a fiber forked now comes after them) and returns the count.
 */
const warnings = Effect.map(Queue.unbounded<string>(), (queue) => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    if (logLevel._tag !== "Warning") return
    const line = Array.isArray(message) ? message.join(" ") : String(message)
    if (line !== BARRIER) lines.push(line)
    queue.unsafeOffer(line)
  })
  const layer = Logger.replace(Logger.defaultLogger, logger)
  const next = Effect.filterOrElse(queue.take, (line) => line !== BARRIER, () => Effect.dieMessage("no warning"))
  const barrier = Effect.gen(function*() {
    yield* Effect.fork(Effect.logWarning(BARRIER)).pipe(Effect.provide(layer))
    while ((yield* queue.take) !== BARRIER) { /* a line logged before the marker: counted in `lines` */ }
    return lines.length
  })
  return { lines, next, barrier, layer }
})

const BARRIER = "(test barrier)"

describe("ClaudeAgent.queryWithOrigin", () => {
  it.scoped("the origin is known before the prompt is sent; running messages sends it", () =>
    Effect.gen(function*() {
      const { clis, layer } = yield* echoing()
      const query = yield* ClaudeAgent.queryWithOrigin("hello").pipe(Effect.provide(layer))
      expect(query.origin.kind).toBe("new")
      expect(query.origin.sessionId).toMatch(/^[0-9a-f-]{36}$/)
      const cli = yield* clis.take
      yield* cli.initialize
      // nothing but initialize on the wire yet
      expect((yield* cli.received).map((m) => m.type)).toEqual(["control_request"])
      const messages = yield* Stream.runCollect(query.messages)
      expect(Chunk.unsafeLast(messages)).toMatchObject({ type: "result", result: "echo: hello" })
      expect((yield* cli.received).filter((m) => m.type === "user")).toHaveLength(1)
      expect(yield* query.sessionId).toBe(query.origin.sessionId)
      expect(Chunk.toReadonlyArray(messages).find(Message.isSystemInit)?.session_id).toBe(query.origin.sessionId)
    }))

  it.scoped("a resume: the requested id, before anything is sent; a stream of prompts works too", () =>
    Effect.gen(function*() {
      const { layer } = yield* echoing()
      const query = yield* ClaudeAgent.queryWithOrigin(Stream.make("a", "b"), { resume: RESUMED }).pipe(
        Effect.provide(layer)
      )
      expect(query.origin).toEqual({ kind: "resume", requested: RESUMED, sessionId: RESUMED, forked: false })
      const results = Chunk.toReadonlyArray(yield* Stream.runCollect(query.messages)).filter(Message.isResultMessage)
      expect(results.map((r) => (r.subtype === "success" ? r.result : r.subtype))).toEqual(["echo: a", "echo: b"])
    }))

  it.scoped("a resume of an unknown session fails with SessionNotFound even if messages runs after the CLI exited", () =>
    Effect.gen(function*() {
      const gone = yield* Deferred.make<void>()
      const layer = ScriptedCli.layer(
        (cli) => Effect.ensuring(unknownSession(cli), Deferred.succeed(gone, undefined)),
        {
          silent: ["initialize"]
        }
      )
      const query = yield* ClaudeAgent.queryWithOrigin("hi", { resume: RESUMED }).pipe(Effect.provide(layer))
      // the CLI is gone before the caller sends anything
      yield* Deferred.await(gone)
      const error = yield* Effect.flip(Stream.runDrain(query.messages))
      expect(error).toStrictEqual(
        new AgentError.SessionNotFound({
          sessionId: RESUMED,
          description: `No conversation found with session ID: ${RESUMED}`
        })
      )
    }))
})

describe("a session whose id only the CLI can tell", () => {
  it.scoped("continue with no session on record: sessionId fails with why when the CLI exits before telling", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) => cli.exit(1), { silent: ["initialize"] })
      const query = yield* ClaudeAgent.queryWithOrigin("hi", { continue: true, cwd: "/nonexistent/eca-origin" }).pipe(
        Effect.provide(layer)
      )
      expect(query.origin).toMatchObject({ kind: "continue", requested: undefined, sessionId: undefined })
      const error = yield* Effect.flip(query.sessionId)
      expect(error).toMatchObject({ _tag: "StartupFailed", exitCode: 1 })
    }))
})

describe("a CLI that runs another session than expected", () => {
  it.scoped("system/init with another id: Session.sessionId follows the CLI, origin is kept, a warning is logged", () =>
    Effect.gen(function*() {
      const log = yield* warnings
      const { layer } = yield* echoing({ sessionId: OTHER })
      const session = yield* ClaudeAgent.session({ resume: RESUMED }).pipe(
        Effect.provide(layer),
        Effect.provide(log.layer)
      )
      expect(yield* session.sessionId).toBe(RESUMED)
      const turn = yield* Stream.runCollect(session.turn("x"))
      expect(Chunk.toReadonlyArray(turn).find(Message.isSystemInit)?.session_id).toBe(OTHER)
      expect(yield* session.sessionId).toBe(OTHER)
      expect(session.origin).toEqual({ kind: "resume", requested: RESUMED, sessionId: RESUMED, forked: false })
      expect(yield* log.next).toBe(
        `the CLI runs session ${OTHER}, not ${RESUMED} as expected; Session.sessionId now reports ${OTHER}`
      )
      // once: the next turn's init names the same session
      yield* Stream.runDrain(session.turn("y"))
      expect(yield* log.barrier).toBe(1)
    }))

  it.scoped("the same for queryWithOrigin: sessionId reports the CLI's id once its init arrived", () =>
    Effect.gen(function*() {
      const log = yield* warnings
      const { layer } = yield* echoing({ sessionId: OTHER })
      const query = yield* ClaudeAgent.queryWithOrigin("x").pipe(Effect.provide(layer), Effect.provide(log.layer))
      const assigned = query.origin.sessionId
      expect(assigned).not.toBe(OTHER)
      yield* Stream.runDrain(query.messages)
      expect(yield* query.sessionId).toBe(OTHER)
      expect(query.origin.sessionId).toBe(assigned)
      yield* log.next
      expect(yield* log.barrier).toBe(1)
    }))
})
