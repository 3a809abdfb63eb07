import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, ClaudeAgent, Message, SessionHistory, type Transport } from "effect-claude-agent"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 90_000)

const lastResult = (messages: Chunk.Chunk<Message.SdkMessage>) => {
  const result = Chunk.toReadonlyArray(messages).filter(Message.isResultMessage).at(-1)
  return result?.subtype === "success" ? result.result : `(${result?.subtype})`
}

/** One session (own process, own scope) that runs `prompts` as turns and closes. */
const runSession = (options: Parameters<typeof ClaudeAgent.session>[0], prompts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const session = yield* ClaudeAgent.session(options)
    const replies: Array<string> = []
    for (const prompt of prompts) replies.push(lastResult(yield* Stream.runCollect(session.turn(prompt))))
    return { origin: session.origin, sessionId: yield* session.sessionId, replies }
  }).pipe(Effect.scoped)

const transcriptOf = (home: string, cwd: string, id: string) =>
  path.join(home, ".claude", "projects", fs.realpathSync(cwd).replace(/[^a-zA-Z0-9]/g, "-"), `${id}.jsonl`)

describe("resume, continue and fork against the real CLI", () => {
  live(
    "close then resume by id in a new process: the model sees the earlier turns, the id is kept",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const first = yield* runSession(options(), ["SAY one", "SAY two"])
        expect(first.origin.kind).toBe("new")
        expect(first.sessionId).toBe(first.origin.sessionId)
        const resumed = yield* runSession(options({ resume: first.sessionId }), ["HISTORY"])
        expect(resumed.origin).toEqual({
          kind: "resume",
          requested: first.sessionId,
          sessionId: first.sessionId,
          forked: false
        })
        expect(resumed.sessionId).toBe(first.sessionId)
        expect(resumed.replies[0]).toContain("user prompts: SAY one | SAY two | HISTORY")
      })
  )

  live("G13 close → resume cycles right after each close never lose a completed turn", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const first = yield* runSession(options(), ["SAY turn-0"])
      const expected = ["SAY turn-0"]
      for (let i = 1; i <= 5; i++) {
        const next = yield* runSession(options({ resume: first.sessionId }), [`SAY turn-${i}`, "HISTORY"])
        expected.push(`SAY turn-${i}`)
        expect(next.replies[1]).toContain(`user prompts: ${[...expected, "HISTORY"].join(" | ")}`)
        expected.push("HISTORY")
      }
    }))

  live(
    "forkSession: a new id (known before the first prompt), the original transcript unchanged",
    () =>
      Effect.gen(function*() {
        const { options, server, cwd } = yield* realCli()
        const first = yield* runSession(options(), ["SAY original"])
        const home = server.env()["HOME"]!
        const originalFile = transcriptOf(home, cwd, first.sessionId)
        const before = fs.readFileSync(originalFile, "utf8")
        const fork = yield* runSession(options({ resume: first.sessionId, forkSession: true }), ["HISTORY"])
        expect(fork.origin.kind).toBe("fork")
        expect(fork.origin.sessionId).toBeDefined()
        expect(fork.sessionId).toBe(fork.origin.sessionId)
        expect(fork.sessionId).not.toBe(first.sessionId)
        expect(fork.replies[0]).toContain("user prompts: SAY original | HISTORY")
        expect(fs.readFileSync(originalFile, "utf8")).toBe(before)
        expect(fs.existsSync(transcriptOf(home, cwd, fork.sessionId))).toBe(true)
      })
  )

  live("continue picks the latest session of the cwd", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      yield* runSession(options(), ["SAY older"])
      const latest = yield* runSession(options(), ["SAY newer"])
      const continued = yield* runSession(options({ continue: true }), ["HISTORY"])
      expect(continued.origin).toEqual({
        kind: "continue",
        requested: latest.sessionId,
        sessionId: latest.sessionId,
        forked: false
      })
      expect(continued.sessionId).toBe(latest.sessionId)
      expect(continued.replies[0]).toContain("user prompts: SAY newer | HISTORY")
    }))

  live("G13 a bogus id fails quickly with SessionNotFound and leaves no process", () =>
    Effect.gen(function*() {
      const { options } = yield* realCli()
      const bogus = "00000000-0000-4000-8000-000000000000"
      const started = Date.now()
      const fromQuery = yield* ClaudeAgent.query("hi", options({ resume: bogus })).pipe(Stream.runDrain, Effect.flip)
      expect(fromQuery).toBeInstanceOf(AgentError.SessionNotFound)
      expect(fromQuery).toMatchObject({
        sessionId: bogus,
        description: `No conversation found with session ID: ${bogus}`
      })
      const fromSession = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session(options({ resume: bogus }))
        return yield* Effect.flip(session.initializationResult)
      }).pipe(Effect.scoped)
      expect(fromSession._tag).toBe("SessionNotFound")
      expect(Date.now() - started).toBeLessThan(5000)
    }))

  live(
    "the sessions just created are listed with correct counts, and reading one yields its exchange",
    () =>
      Effect.gen(function*() {
        const { options, server, cwd } = yield* realCli()
        const a = yield* runSession(options(), ["SAY alpha", "SAY beta"])
        const b = yield* runSession(options(), ["SAY gamma"])
        const store = yield* SessionHistory.SessionHistory.pipe(
          Effect.provide(
            NodeClaudeAgent.layerSessionHistory({ configDir: path.join(server.env()["HOME"]!, ".claude") })
          )
        )
        const listed = yield* store.list(cwd)
        expect(listed.map((s) => s.sessionId).sort()).toEqual([a.sessionId, b.sessionId].sort())
        expect(listed.find((s) => s.sessionId === a.sessionId)).toMatchObject({
          messageCount: 4,
          firstPrompt: "SAY alpha"
        })
        expect(listed.find((s) => s.sessionId === b.sessionId)).toMatchObject({
          messageCount: 2,
          firstPrompt: "SAY gamma"
        })
        const exchange = yield* store.messages(a.sessionId, cwd).pipe(Stream.runCollect)
        expect(Chunk.toReadonlyArray(exchange).map((m) => m.text)).toEqual(["SAY alpha", "alpha", "SAY beta", "beta"])
      })
  )

  live(
    "queryWithOrigin: the resumed id is known before the prompt reaches the model; the id is kept",
    () =>
      Effect.gen(function*() {
        const { options, server } = yield* realCli()
        const first = yield* runSession(options(), ["SAY one"])
        const modelRequests = Effect.map(server.requests, (rs) => rs.filter((r) => r.isMessages && !r.isProbe).length)
        const before = yield* modelRequests
        const query = yield* ClaudeAgent.queryWithOrigin("HISTORY", options({ resume: first.sessionId }))
        expect(query.origin).toEqual({
          kind: "resume",
          requested: first.sessionId,
          sessionId: first.sessionId,
          forked: false
        })
        expect(Option.isSome(query.pid)).toBe(true)
        // the CLI is up (it answered initialize) and no prompt has gone out
        yield* Effect.sleep("300 millis")
        expect(yield* modelRequests).toBe(before)
        const messages = yield* Stream.runCollect(query.messages)
        expect(lastResult(messages)).toContain("user prompts: SAY one | HISTORY")
        expect(yield* query.sessionId).toBe(first.sessionId)
        expect(Chunk.toReadonlyArray(messages).find(Message.isSystemInit)?.session_id).toBe(first.sessionId)
      })
  )

  live(
    "queryWithOrigin with forkSession: the new id is known first, and it is the one the CLI uses",
    () =>
      Effect.gen(function*() {
        const { options, server, cwd } = yield* realCli()
        const first = yield* runSession(options(), ["SAY original"])
        const query = yield* ClaudeAgent.queryWithOrigin(
          "HISTORY",
          options({ resume: first.sessionId, forkSession: true })
        )
        expect(query.origin).toMatchObject({ kind: "fork", requested: first.sessionId, forked: true })
        const forkId = query.origin.sessionId!
        expect(forkId).not.toBe(first.sessionId)
        const messages = yield* Stream.runCollect(query.messages)
        expect(lastResult(messages)).toContain("user prompts: SAY original | HISTORY")
        expect(yield* query.sessionId).toBe(forkId)
        expect(fs.existsSync(transcriptOf(server.env()["HOME"]!, cwd, forkId))).toBe(true)
      })
  )

  live(
    "resumeSessionAt: the resumed conversation ends at that message; later turns are left out",
    () =>
      Effect.gen(function*() {
        const { options } = yield* realCli()
        const { assistantOfFirst, sessionId } = yield* Effect.scoped(Effect.gen(function*() {
          const session = yield* ClaudeAgent.session(options())
          const first = yield* Stream.runCollect(session.turn("SAY one"))
          yield* Stream.runDrain(session.turn("SAY two"))
          const assistant = Chunk.toReadonlyArray(first).filter((m) => m.type === "assistant").at(-1)
          return {
            assistantOfFirst: assistant?.type === "assistant" ? assistant.uuid : undefined,
            sessionId: yield* session.sessionId
          }
        }))
        expect(assistantOfFirst).toBeDefined()
        const whole = yield* runSession(options({ resume: sessionId }), ["HISTORY"])
        expect(whole.replies[0]).toContain("user prompts: SAY one | SAY two | HISTORY")
        const cut = yield* runSession(options({ resume: sessionId, resumeSessionAt: assistantOfFirst! }), ["HISTORY"])
        expect(cut.replies[0]).toContain("user prompts: SAY one | HISTORY")
        expect(cut.replies[0]).not.toContain("SAY two")
      })
  )
})
