import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import { AgentError, Message, Transport } from "effect-claude-agent"

const collect = (c: Transport.Connection) => Stream.runCollect(c.messages).pipe(Effect.map(Chunk.toReadonlyArray))

describe("Transport (memory)", () => {
  it.scoped("frames raw output exactly like a process: split chunks, split UTF-8, CRLF, blank lines", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      const line = Buffer.from(JSON.stringify({ type: "keep_alive", note: "5€ \u2028" }) + "\r\n\n", "utf8")
      const euro = line.indexOf(Buffer.from("€"))
      yield* peer.emitRaw(line.subarray(0, euro + 1))
      yield* peer.emitRaw(line.subarray(euro + 1))
      yield* peer.emitRaw("{\"type\":\"keep_")
      yield* peer.emitRaw("alive\"}")
      yield* peer.exit({ code: 0, signal: null })
      const frames = yield* collect(connection)
      expect(frames).toEqual([{ type: "keep_alive", note: "5€ \u2028" }, { type: "keep_alive" }])
    }))

  it.scoped("an oversized line is skipped with LineTooLong and the next line still arrives", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection({ args: [], maxLineBytes: 100 })
      yield* peer.emitRaw("x".repeat(60))
      yield* peer.emitRaw("y".repeat(60))
      yield* peer.emitRaw("z".repeat(60) + "\n{\"type\":\"keep_alive\"}\n")
      yield* peer.emitRaw("w".repeat(500) + "\n")
      yield* peer.exit({ code: 0, signal: null })
      const frames = yield* collect(connection)
      expect(frames.map((f) => f.type)).toEqual(["transport_error", "keep_alive", "transport_error"])
      const [first, , third] = frames
      expect(first).toMatchObject({ error: { _tag: "LineTooLong", bytes: 180, limit: 100 } })
      expect(third).toMatchObject({ error: { _tag: "LineTooLong", bytes: 500, limit: 100 } })
    }))

  it.scoped("a line exactly at the limit is accepted", () =>
    Effect.gen(function*() {
      const frame = JSON.stringify({ type: "keep_alive", pad: "" })
      const padded = JSON.stringify({ type: "keep_alive", pad: "p".repeat(100 - frame.length) })
      expect(Buffer.byteLength(padded)).toBe(100)
      const { connection, peer } = yield* Transport.makeMemoryConnection({ args: [], maxLineBytes: 100 })
      yield* peer.emitRaw(padded + "\n")
      yield* peer.exit({ code: 0, signal: null })
      expect((yield* collect(connection)).map((f) => f.type)).toEqual(["keep_alive"])
    }))

  it.scoped("a final line without newline is delivered at exit; a truncated one is MalformedLine", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      yield* peer.emitRaw("{\"type\":\"keep_alive\"}\n{\"type\":\"assis")
      yield* peer.exit({ code: 0, signal: null })
      const frames = yield* collect(connection)
      expect(frames.map((f) => f.type)).toEqual(["keep_alive", "transport_error"])
      expect(frames[1]).toMatchObject({ error: { _tag: "MalformedLine" } })
    }))

  it.scoped("exit with a non-zero code fails the stream with ProcessExited and later sends fail the same way", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      yield* peer.emit({ type: "keep_alive" })
      yield* peer.emitStderr("boom\n")
      yield* peer.exit({ code: 1, signal: null })
      const exit = yield* Effect.exit(collect(connection))
      const expected = new AgentError.ProcessExited({ code: 1, signal: null, stderrTail: "boom\n" })
      expect(exit).toStrictEqual(Exit.fail(expected))
      expect(yield* Effect.flip(connection.send(Message.userMessage("x")))).toStrictEqual(expected)
    }))

  it.scoped("send reaches the peer; endInput closes it and later sends fail with InputClosed", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      yield* connection.send(Message.userMessage("one"))
      yield* connection.send({ type: "control_cancel_request", request_id: "r1" })
      expect(yield* peer.take).toEqual(Message.userMessage("one"))
      expect(yield* peer.take).toEqual({ type: "control_cancel_request", request_id: "r1" })
      yield* connection.endInput
      yield* peer.inputEnded
      const taken = yield* Effect.exit(peer.take)
      expect(Exit.isFailure(taken)).toBe(true)
      expect(yield* Effect.flip(connection.send(Message.userMessage("two")))).toStrictEqual(
        new AgentError.InputClosed({ reason: "InputEnded" })
      )
      expect((yield* peer.sent).length).toBe(2)
    }))

  it.scoped("layerMemory runs a script per open and records the spec", () =>
    Effect.gen(function*() {
      const transport = yield* Transport.Transport
      const connection = yield* transport.open({ args: ["--model=x"] })
      yield* connection.send(Message.userMessage("ping"))
      const frames = yield* collect(connection)
      expect(frames).toEqual([{ type: "keep_alive", args: ["--model=x"], got: "ping" }])
      expect(connection.command.slice(1, 6)).toEqual(Transport.BASE_ARGS)
    }).pipe(Effect.provide(Transport.layerMemory((peer) =>
      Effect.gen(function*() {
        const msg = yield* Effect.orDie(peer.take)
        const got = msg.type === "user" && typeof msg.message.content !== "string"
          ? msg.message.content.map((b) => (b.type === "text" ? b.text : "")).join("")
          : ""
        yield* peer.emit({ type: "keep_alive", args: peer.spec.args, got })
      })
    ))))
})
