// How a session ends (src/internal/session/termination.ts): every reason is reported to one record, the first one wins,
// and the message buffer is ended there: at once while the CLI runs, after the reader has routed everything the CLI
// wrote once it is gone.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { AgentError, type Message, Transport } from "effect-claude-agent"
import * as ProtocolInternal from "../src/internal/protocol/controlProtocol.js"
import { makeCell } from "../src/internal/session/cell.js"
import * as Termination from "../src/internal/session/termination.js"
import { success } from "./support/messages.js"

const origin = { kind: "new", requested: undefined, sessionId: "s", forked: false } as const
const status = (n: number) => ({ type: "system", subtype: "status", status: String(n), session_id: "s", uuid: `u${n}` })

/** A protocol over an in-memory CLI whose reader reports to a termination, as the session wires them. */
const setup = Effect.gen(function*() {
  const { connection, peer } = yield* Transport.makeMemoryConnection()
  const cell = yield* makeCell(origin, 0)
  const made = yield* Deferred.make<Termination.Termination>()
  const protocol = yield* ProtocolInternal.make(connection, {
    onEnd: (exit) => Effect.flatMap(Deferred.await(made), (t) => t.report({ _tag: "Exited", exit }))
  })
  const termination = yield* Termination.make({
    cell,
    connection,
    endMessages: protocol.endMessages,
    readerDone: protocol.readerDone,
    initialized: Effect.void
  })
  yield* Deferred.succeed(made, termination)
  /** Every message up to the end of the buffer. */
  const drain = Effect.gen(function*() {
    const out: Array<Message.SdkMessage> = []
    while (true) {
      const [chunk, done] = yield* Effect.orDie(protocol.takeMessages)
      out.push(...Chunk.toReadonlyArray(chunk))
      if (done) return out
    }
  })
  return { cell, peer, protocol, termination, drain }
})

describe("Termination", () => {
  it.scoped("the first reason reported wins; later ones change nothing", () =>
    Effect.gen(function*() {
      const { peer, termination } = yield* setup
      const idle = new AgentError.IdleTimeout({ lastEventAt: 0, timeoutMillis: 1, reason: "Idle", stderrTail: "" })
      yield* termination.report({ _tag: "Failed", error: idle })
      yield* termination.report({ _tag: "InputFailed" })
      yield* peer.exit({ code: 3, signal: null })
      expect(yield* termination.ending).toEqual({ _tag: "Failed", error: idle })
      expect(yield* termination.outcome).toEqual({ _tag: "Failed", error: idle })
    }))

  it.scoped("the CLI's exit, when it comes first, is why the messages end (explained by the state)", () =>
    Effect.gen(function*() {
      const { drain, peer, termination } = yield* setup
      yield* peer.emit(status(1))
      yield* peer.exit({ code: 3, signal: null })
      expect((yield* drain).length).toBe(1)
      const ending = yield* termination.ending
      expect(ending._tag === "Exited" && ending.exit?.code).toBe(3)
      const outcome = yield* termination.outcome
      // the CLI never answered initialize: a start-up failure
      expect(outcome._tag === "Failed" && outcome.error._tag).toBe("StartupFailed")
      // a later report changes nothing
      yield* termination.report({ _tag: "Drained" })
      expect((yield* termination.ending)._tag).toBe("Exited")
    }))

  it.scoped("while the CLI runs, a stop ends the buffer at once: what it writes later is dropped", () =>
    Effect.gen(function*() {
      const { cell, drain, peer, protocol, termination } = yield* setup
      cell.advance({ _tag: "InitializeAnswered" })
      yield* peer.emit(status(1))
      const [first] = yield* Effect.orDie(protocol.takeMessages)
      expect(Chunk.size(first)).toBe(1)
      yield* termination.report({ _tag: "Drained" })
      yield* peer.emit(success())
      expect(yield* drain).toEqual([])
      expect(yield* termination.outcome).toEqual({ _tag: "Clean" })
    }))

  it.scoped("once the CLI is gone, a stop waits for the reader: nothing the CLI wrote is lost", () =>
    Effect.gen(function*() {
      const { drain, peer, termination } = yield* setup
      yield* peer.emit(status(1))
      yield* peer.emit(success())
      yield* peer.exit({ code: 0, signal: null })
      yield* termination.report({ _tag: "InputFailed" })
      const messages = yield* drain
      expect(messages.map((m) => m.type)).toEqual(["system", "result"])
      expect(yield* termination.outcome).toEqual({ _tag: "InputFailed" })
    }))

  it.scoped("closing ends the buffer even when another reason came first", () =>
    Effect.gen(function*() {
      const { cell, drain, peer, termination } = yield* setup
      cell.advance({ _tag: "InitializeAnswered" })
      yield* peer.emit(status(1))
      yield* termination.report({ _tag: "InputFailed" })
      yield* termination.report({ _tag: "Closed" })
      yield* drain
      expect((yield* termination.ending)._tag).toBe("InputFailed")
    }))
})
