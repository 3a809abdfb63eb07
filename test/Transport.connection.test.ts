// A Connection states its capabilities (a batch reader, a synchronous send) in its type; a wrapper that passes them
// through (the internal connection make over the wrapped core) behaves exactly like the connection it wraps.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Message, Transport } from "effect-claude-agent"
import * as ProtocolInternal from "../src/internal/protocol/controlProtocol.js"
import type { Handler } from "../src/internal/protocol/handler.js"
import { make as makeConnection } from "../src/internal/transport/connection.js"

/** A pass-through wrapper, as a recorder or a tracer would write one: it counts what goes by. */
const wrap = (connection: Transport.Connection) => {
  let frames = 0
  let sends = 0
  const wrapped = makeConnection({
    ...connection,
    pull: Effect.map(connection.pull, (pull) =>
      Effect.tap(pull, (chunk) =>
        Effect.sync(() => {
          frames += chunk.length
        }))),
    unsafeSend: (message) => {
      sends++
      return connection.unsafeSend(message)
    }
  })
  return { wrapped, counts: () => ({ frames, sends }) }
}

const canUseTool = (id: string) =>
  JSON.stringify({ type: "control_request", request_id: id, request: { subtype: "can_use_tool" } }) + "\n"
const status = (n: number) =>
  JSON.stringify({ type: "system", subtype: "status", status: String(n), session_id: "s", uuid: `u${n}` }) + "\n"

/**
 * Runs the protocol over `connection` with a callback handler that answers at once, feeds it one stdout read
 * (request, message, request, message), and records, for each SDK message as the reader meets it, how many frames
 * had been written to stdin by then.
 */
const observe = (
  connection: Transport.Connection,
  peer: Transport.MemoryPeer
) =>
  Effect.gen(function*() {
    const writtenAtMessage: Array<number> = []
    const handler: Handler = ({ requestId }, reply) => {
      reply.succeed({ behavior: "allow", id: requestId })
      return () => {}
    }
    const protocol = yield* ProtocolInternal.make(connection, {
      handlers: new Map([["can_use_tool", handler]]),
      onMessage: () => {
        writtenAtMessage.push(Effect.runSync(peer.sent).length)
        return true
      }
    })
    yield* peer.emitRaw(canUseTool("r1") + status(1) + canUseTool("r2") + status(2))
    const messages = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(protocol.messages, 2)))
    const sent = yield* peer.sent
    return {
      writtenAtMessage,
      messages: messages.map((m) => (m.type === "system" && m.subtype === "status" ? m.status : m.type)),
      sent: sent.map((m) => (m.type === "control_response" ? m.response.request_id : m.type))
    }
  })

describe("Transport.Connection capabilities", () => {
  it.scoped("a wrapped connection behaves exactly like the one it wraps (synchronous answers included)", () =>
    Effect.gen(function*() {
      const raw = yield* Transport.makeMemoryConnection()
      const direct = yield* observe(raw.connection, raw.peer)

      const inner = yield* Transport.makeMemoryConnection()
      const { counts, wrapped } = wrap(inner.connection)
      const throughWrapper = yield* observe(wrapped, inner.peer)

      expect(throughWrapper).toEqual(direct)
      // each answer is written on the reader, before the message after its request is buffered
      expect(direct.writtenAtMessage).toEqual([1, 2])
      expect(direct.messages).toEqual(["1", "2"])
      expect(direct.sent).toEqual(["r1", "r2"])
      // and the wrapper saw everything go by
      expect(counts()).toEqual({ frames: 4, sends: 2 })
    }))

  it.scoped("messages and send are the core's pull and unsafeSend", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      yield* connection.send(Message.userMessage("one"))
      expect(connection.unsafeSend(Message.userMessage("two"))).toBeUndefined()
      expect((yield* peer.sent).length).toBe(2)
      yield* peer.emitRaw(status(1) + status(2))
      yield* peer.exit({ code: 3, signal: null })
      const pull = yield* connection.pull
      expect(Chunk.toReadonlyArray(yield* pull).map((f) => f.type)).toEqual(["system", "system"])
      const end = yield* Effect.flip(pull)
      expect(end._tag === "Some" && end.value._tag).toBe("ProcessExited")
      // once the process exited, both forms of send say so
      expect(connection.unsafeSend(Message.userMessage("three"))?._tag).toBe("ProcessExited")
      expect((yield* Effect.flip(connection.send(Message.userMessage("four"))))._tag).toBe("ProcessExited")
    }))
})
