import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { AgentError, ControlProtocol, Message, Transport } from "effect-claude-agent"
import * as ProtocolInternal from "../src/internal/protocol/controlProtocol.js"
import type * as Handler from "../src/internal/protocol/handler.js"

const setup = (options?: ControlProtocol.Options) =>
  Effect.gen(function*() {
    const { connection, peer } = yield* Transport.makeMemoryConnection()
    const protocol = yield* ControlProtocol.make(connection, options)
    return { protocol, peer }
  })

/** Takes the next control_request the SDK wrote. */
const takeRequest = (peer: Transport.MemoryPeer) =>
  Effect.gen(function*() {
    const frame = yield* Effect.orDie(peer.take)
    if (frame.type !== "control_request") throw new Error(`expected control_request, got ${frame.type}`)
    return frame
  })

const takeResponse = (peer: Transport.MemoryPeer) =>
  Effect.gen(function*() {
    const frame = yield* Effect.orDie(peer.take)
    if (frame.type !== "control_response") throw new Error(`expected control_response, got ${frame.type}`)
    return frame.response
  })

const success = (requestId: string, response: unknown) => ({
  type: "control_response",
  response: { subtype: "success", request_id: requestId, response }
})

describe("ControlProtocol: outbound requests", () => {
  it.scoped("correlates responses that arrive out of order", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      const a = yield* Effect.fork(protocol.request("set_model", { model: "a" }))
      const b = yield* Effect.fork(protocol.request("set_model", { model: "b" }))
      const ra = yield* takeRequest(peer)
      const rb = yield* takeRequest(peer)
      expect(ra.request).toEqual({ subtype: "set_model", model: "a" })
      yield* peer.emit(success(rb.request_id, { model: "B" }))
      yield* peer.emit(success(ra.request_id, { model: "A" }))
      expect(yield* Fiber.join(a)).toEqual({ model: "A" })
      expect(yield* Fiber.join(b)).toEqual({ model: "B" })
      expect(ra.request_id).not.toBe(rb.request_id)
      expect(yield* protocol.pendingCount).toBe(0)
    }))

  it.scoped("an error response fails with ControlError carrying the error code", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      const fiber = yield* Effect.fork(protocol.request("no_such_subtype"))
      const req = yield* takeRequest(peer)
      yield* peer.emit({
        type: "control_response",
        response: {
          subtype: "error",
          request_id: req.request_id,
          error: "Unsupported control request subtype: no_such_subtype",
          error_code: "unsupported_request"
        }
      })
      expect(yield* Fiber.join(fiber).pipe(Effect.flip)).toStrictEqual(
        new AgentError.ControlError({
          subtype: "no_such_subtype",
          description: "Unsupported control request subtype: no_such_subtype",
          errorCode: "unsupported_request"
        })
      )
      expect(yield* protocol.pendingCount).toBe(0)
    }))

  it.scoped("times out with ControlTimeout, writes control_cancel_request, and forgets the request", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup({ requestTimeout: "10 seconds" })
      const fiber = yield* Effect.fork(protocol.request("mcp_status"))
      const req = yield* takeRequest(peer)
      yield* TestClock.adjust("9 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber).pipe(Effect.flip)).toStrictEqual(
        new AgentError.ControlTimeout({ subtype: "mcp_status", requestId: req.request_id, timeoutMillis: 10_000 })
      )
      expect(yield* Effect.orDie(peer.take)).toEqual({ type: "control_cancel_request", request_id: req.request_id })
      expect(yield* protocol.pendingCount).toBe(0)
      // a late answer is ignored
      yield* peer.emit(success(req.request_id, {}))
      expect(yield* protocol.pendingCount).toBe(0)
    }))

  it.scoped("a per-request timeout overrides the default", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      const fiber = yield* Effect.fork(protocol.request("interrupt", {}, { timeout: "2 seconds" }))
      yield* takeRequest(peer)
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.join(fiber).pipe(Effect.flip))._tag).toBe("ControlTimeout")
    }))

  it.scoped("interrupting the caller sends control_cancel_request and forgets the request", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      const fiber = yield* Effect.fork(protocol.request("get_context_usage"))
      const req = yield* takeRequest(peer)
      yield* Fiber.interrupt(fiber)
      expect(yield* Effect.orDie(peer.take)).toEqual({ type: "control_cancel_request", request_id: req.request_id })
      expect(yield* protocol.pendingCount).toBe(0)
    }))

  it.scoped("interrupted at any point (before or after the write), a request never stays pending and every written request is cancelled", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      // the write itself is synchronous (`unsafeSend`): interruption lands before it or after it
      const protocol = yield* ControlProtocol.make(connection)
      for (let yields = 0; yields < 8; yields++) {
        const fiber = yield* Effect.fork(protocol.request("get_context_usage"))
        for (let i = 0; i < yields; i++) yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber)
        expect(yield* protocol.pendingCount).toBe(0)
      }
      // each cancel was written when its request's fiber ended (Fiber.interrupt waits for that)
      const sent = yield* peer.sent
      const written = sent.flatMap((f) => (f.type === "control_request" ? [f.request_id] : []))
      const cancelled = new Set(sent.flatMap((f) => (f.type === "control_cancel_request" ? [f.request_id] : [])))
      expect(written.length).toBeGreaterThan(0)
      for (const id of written) expect(cancelled.has(id)).toBe(true)
    }))

  it.scoped("a request whose payload cannot be written dies, and nothing stays pending or reaches the CLI", () =>
    Effect.gen(function*() {
      const { peer, protocol } = yield* setup()
      const exit = yield* Effect.exit(protocol.request("set_model", { model: BigInt(1) }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(yield* protocol.pendingCount).toBe(0)
      expect(yield* peer.sent).toEqual([])
    }))

  it.scoped("\"infinity\" as the default or per-request timeout waits past any duration (no throw)", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup({ requestTimeout: "infinity" })
      const a = yield* Effect.fork(protocol.request("get_context_usage"))
      const b = yield* Effect.fork(protocol.request("get_context_usage", {}, { timeout: "infinity" }))
      const ra = yield* takeRequest(peer)
      const rb = yield* takeRequest(peer)
      yield* TestClock.adjust("30 days")
      expect(yield* protocol.pendingCount).toBe(2)
      yield* peer.emit(success(ra.request_id, { a: 1 }))
      yield* peer.emit(success(rb.request_id, { b: 2 }))
      expect(yield* Fiber.join(a)).toEqual({ a: 1 })
      expect(yield* Fiber.join(b)).toEqual({ b: 2 })
      expect(yield* protocol.pendingCount).toBe(0)
    }))

  it.scoped("transport death fails every pending request at once with the same ProcessExited", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      const fibers = yield* Effect.forEach(
        ["a", "b", "c"],
        (m) => Effect.fork(protocol.request("set_model", { model: m }))
      )
      for (let i = 0; i < 3; i++) yield* takeRequest(peer)
      expect(yield* protocol.pendingCount).toBe(3)
      yield* peer.emitStderr("segfault\n")
      yield* peer.exit({ code: null, signal: "SIGKILL" })
      const expected = new AgentError.ProcessExited({ code: null, signal: "SIGKILL", stderrTail: "segfault\n" })
      for (const f of fibers) expect(yield* Fiber.join(f).pipe(Effect.flip)).toStrictEqual(expected)
      expect(yield* protocol.pendingCount).toBe(0)
      // and later requests fail at once
      expect(yield* Effect.flip(protocol.request("interrupt"))).toStrictEqual(expected)
    }))

  it.scoped("a clean exit fails pending requests with ProcessExited code 0", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      const fiber = yield* Effect.fork(protocol.request("interrupt"))
      yield* takeRequest(peer)
      yield* peer.exit({ code: 0, signal: null })
      expect(yield* Fiber.join(fiber).pipe(Effect.flip)).toMatchObject({ _tag: "ProcessExited", code: 0 })
    }))

  it.scoped("whenReaderDone: told once the reader has read the CLI's stdout to its end, at once after that", () =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      const protocol = yield* ProtocolInternal.make(connection)
      const told: Array<string> = []
      protocol.whenReaderDone(() => told.push("before"))
      yield* Effect.yieldNow()
      expect(told).toEqual([])
      yield* peer.exit({ code: 0, signal: null })
      yield* protocol.readerDone
      expect(told).toEqual(["before"])
      protocol.whenReaderDone(() => told.push("after"))
      expect(told).toEqual(["before", "after"])
    }))

  it.scoped("responses for unknown ids are ignored and nothing leaks into messages", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      yield* peer.emit(success("never-sent", {}))
      yield* peer.emit({ type: "keep_alive" })
      yield* peer.emit({ type: "system", subtype: "status", status: null, session_id: "s", uuid: "u" })
      yield* peer.exit({ code: 0, signal: null })
      const messages = yield* Stream.runCollect(protocol.messages)
      expect(Chunk.toReadonlyArray(messages).map((m) => m.type)).toEqual(["system"])
      expect(yield* protocol.pendingCount).toBe(0)
    }))
})

describe("ControlProtocol: inbound requests", () => {
  const canUseTool = (id: string) => ({
    type: "control_request",
    request_id: id,
    request: { subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" }, tool_use_id: "t" }
  })

  it.scoped("dispatches to the handler and writes its success response", () =>
    Effect.gen(function*() {
      const handlers = new Map<string, ControlProtocol.InboundHandler>([
        [
          "can_use_tool",
          ControlProtocol.effectHandler(({ request }) =>
            Effect.succeed({ behavior: "allow", updatedInput: request["input"] })
          )
        ]
      ])
      const { peer } = yield* setup({ handlers })
      yield* peer.emit(canUseTool("cli-1"))
      expect(yield* takeResponse(peer)).toEqual({
        subtype: "success",
        request_id: "cli-1",
        response: { behavior: "allow", updatedInput: { command: "ls" } }
      })
    }))

  it.scoped("an unsupported subtype gets the official error response", () =>
    Effect.gen(function*() {
      const { peer } = yield* setup()
      yield* peer.emit({ type: "control_request", request_id: "cli-2", request: { subtype: "oauth_token_refresh" } })
      expect(yield* takeResponse(peer)).toEqual({
        subtype: "error",
        request_id: "cli-2",
        error: "Unsupported control request subtype: oauth_token_refresh"
      })
    }))

  it.scoped("a failing handler and a defective handler get error responses; the session keeps working", () =>
    Effect.gen(function*() {
      let calls = 0
      const handlers = new Map<string, ControlProtocol.InboundHandler>([
        [
          "can_use_tool",
          ControlProtocol.effectHandler(() => {
            calls++
            if (calls === 1) return Effect.fail(ControlProtocol.handlerFailure("policy says no"))
            if (calls === 2) return Effect.die(new TypeError("callback exploded"))
            return Effect.succeed({ behavior: "deny", message: "third" })
          })
        ]
      ])
      const { protocol, peer } = yield* setup({ handlers })
      yield* peer.emit(canUseTool("c1"))
      expect(yield* takeResponse(peer)).toEqual({ subtype: "error", request_id: "c1", error: "policy says no" })
      yield* peer.emit(canUseTool("c2"))
      expect(yield* takeResponse(peer)).toEqual({
        subtype: "error",
        request_id: "c2",
        error: "TypeError: callback exploded"
      })
      yield* peer.emit(canUseTool("c3"))
      expect(yield* takeResponse(peer)).toMatchObject({ subtype: "success", request_id: "c3" })
      // outbound still works too
      const fiber = yield* Effect.fork(protocol.request("mcp_status"))
      const req = yield* takeRequest(peer)
      yield* peer.emit(success(req.request_id, { mcpServers: [] }))
      expect(yield* Fiber.join(fiber)).toEqual({ mcpServers: [] })
      expect(yield* protocol.inFlightCount).toBe(0)
    }))

  it.scoped("control_cancel_request from the CLI interrupts the handler and no response is written", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const handlers = new Map<string, ControlProtocol.InboundHandler>([
        [
          "hook_callback",
          ControlProtocol.effectHandler(() =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
          )
        ]
      ])
      const { protocol, peer } = yield* setup({ handlers })
      yield* peer.emit({ type: "control_request", request_id: "h1", request: { subtype: "hook_callback" } })
      yield* Deferred.await(started)
      expect(yield* protocol.inFlightCount).toBe(1)
      yield* peer.emit({ type: "control_cancel_request", request_id: "h1" })
      yield* Deferred.await(interrupted)
      // the next thing written is the answer to a later request, not one for h1
      yield* peer.emit({ type: "control_request", request_id: "x1", request: { subtype: "nope" } })
      expect((yield* takeResponse(peer)).request_id).toBe("x1")
      // frames are handled in order, and the cancel waited for the handler's fiber to end: it is gone
      expect(yield* protocol.inFlightCount).toBe(0)
    }))

  it.scoped("inbound requests are served while an outbound request (initialize) is pending", () =>
    Effect.gen(function*() {
      const handlers = new Map<string, ControlProtocol.InboundHandler>([
        [
          "mcp_message",
          ControlProtocol.effectHandler(() => Effect.succeed({ mcp_response: { jsonrpc: "2.0", id: 0, result: {} } }))
        ]
      ])
      const { protocol, peer } = yield* setup({ handlers })
      const init = yield* Effect.fork(protocol.request("initialize", { hooks: {} }))
      const req = yield* takeRequest(peer)
      expect(req.request.subtype).toBe("initialize")
      // the CLI asks something before answering initialize (PROTOCOL.md section 14)
      yield* peer.emit({
        type: "control_request",
        request_id: "m1",
        request: { subtype: "mcp_message", server_name: "s", message: { jsonrpc: "2.0", id: 0, method: "initialize" } }
      })
      expect((yield* takeResponse(peer)).request_id).toBe("m1")
      yield* peer.emit(success(req.request_id, { commands: [] }))
      expect(yield* Fiber.join(init)).toEqual({ commands: [] })
    }))

  it.scoped("SDK messages flow out in order around control frames", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      const status = (n: number) => ({
        type: "system",
        subtype: "status",
        status: String(n),
        session_id: "s",
        uuid: "u"
      })
      yield* peer.emit(status(1))
      yield* peer.emit({ type: "control_request", request_id: "z", request: { subtype: "x" } })
      yield* peer.emit(status(2))
      yield* peer.exit({ code: 0, signal: null })
      const messages = Chunk.toReadonlyArray(yield* Stream.runCollect(protocol.messages))
      expect(messages.map((m) => (m.type === "system" && m.subtype === "status" ? m.status : m.type))).toEqual([
        "1",
        "2"
      ])
    }))

  it.scoped("the message stream fails with the transport's ProcessExited", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      yield* peer.exit({ code: 2, signal: null })
      const exit = yield* Effect.exit(Stream.runDrain(protocol.messages))
      expect(exit).toStrictEqual(Exit.fail(new AgentError.ProcessExited({ code: 2, signal: null, stderrTail: "" })))
    }))

  it.scoped("sending a user message goes through the single writer", () =>
    Effect.gen(function*() {
      const { protocol, peer } = yield* setup()
      yield* protocol.send(Message.userMessage("hi"))
      expect(yield* Effect.orDie(peer.take)).toEqual(Message.userMessage("hi"))
    }))
})

describe("ControlProtocol: the one inbound contract (no fiber per request)", () => {
  const setupInternal = (handlers: ReadonlyMap<string, Handler.Handler>) =>
    Effect.gen(function*() {
      const { connection, peer } = yield* Transport.makeMemoryConnection()
      const protocol = yield* ProtocolInternal.make(connection, { handlers })
      return { protocol, peer }
    })

  const request = (id: string) => ({ type: "control_request", request_id: id, request: { subtype: "can_use_tool" } })

  /**
   * A callback handler that hands each request's reply to the test and records abandonments; `reached` and
   * `abandonedQueue` tell each as it happens.
   */
  const recording = () => {
    const replies = new Map<string, Handler.Reply>()
    const abandoned: Array<string> = []
    const reached = Effect.runSync(Queue.unbounded<string>())
    const abandonedQueue = Effect.runSync(Queue.unbounded<string>())
    const handler: Handler.Handler = ({ requestId }, reply) => {
      replies.set(requestId, reply)
      reached.unsafeOffer(requestId)
      return () => {
        abandoned.push(requestId)
        abandonedQueue.unsafeOffer(requestId)
      }
    }
    const reply = (id: string) => {
      const r = replies.get(id)
      if (r === undefined) throw new Error(`no request ${id} reached the handler`)
      return r
    }
    return { handlers: new Map([["can_use_tool", handler]]), reply, abandoned, reached, abandonedQueue }
  }

  it.scoped("answers with succeed, fail or from a forked effect, once; a cancelled request is abandoned, unanswered", () =>
    Effect.gen(function*() {
      const { abandoned, abandonedQueue, handlers, reached, reply } = recording()
      const { protocol, peer } = yield* setupInternal(handlers)
      yield* peer.emit(request("c1"))
      yield* peer.emit(request("c2"))
      yield* peer.emit(request("c3"))
      yield* peer.emit(request("c4"))
      yield* peer.emit(request("c5"))
      expect(Chunk.toReadonlyArray(yield* Queue.takeN(reached, 5))).toEqual(["c1", "c2", "c3", "c4", "c5"])
      expect(yield* protocol.inFlightCount).toBe(5)

      reply("c1").succeed({ behavior: "allow" })
      reply("c1").fail("answered twice")
      expect(yield* takeResponse(peer)).toEqual({
        subtype: "success",
        request_id: "c1",
        response: { behavior: "allow" }
      })
      reply("c2").fail("policy says no")
      expect(yield* takeResponse(peer)).toEqual({ subtype: "error", request_id: "c2", error: "policy says no" })
      reply("c3").fork(Effect.sync(() => reply("c3").succeed({ via: "effect" })))
      expect(yield* takeResponse(peer)).toEqual({ subtype: "success", request_id: "c3", response: { via: "effect" } })
      reply("c4").fork(Effect.sync(() => reply("c4").fail("effect says no")))
      expect(yield* takeResponse(peer)).toEqual({ subtype: "error", request_id: "c4", error: "effect says no" })

      yield* peer.emit({ type: "control_cancel_request", request_id: "c5" })
      expect(yield* Queue.take(abandonedQueue)).toBe("c5")
      expect(abandoned).toEqual(["c5"])
      expect(yield* protocol.inFlightCount).toBe(0)
      reply("c5").succeed({ behavior: "allow" })
      // the next thing written answers a later request, not c5
      yield* peer.emit({ type: "control_request", request_id: "x1", request: { subtype: "nope" } })
      expect((yield* takeResponse(peer)).request_id).toBe("x1")
      // answered requests are not abandoned later
      expect(abandoned).toEqual(["c5"])
    }))

  it.scoped("a callback that throws instead of answering gets an error response; the reader goes on", () =>
    Effect.gen(function*() {
      const handler: Handler.Handler = ({ requestId }, reply) => {
        if (requestId === "t1") throw new TypeError("callback exploded")
        reply.succeed({ ok: requestId })
        return () => {}
      }
      const { protocol, peer } = yield* setupInternal(new Map([["can_use_tool", handler]]))
      yield* peer.emit(request("t1"))
      expect(yield* takeResponse(peer)).toEqual({
        subtype: "error",
        request_id: "t1",
        error: "TypeError: callback exploded"
      })
      yield* peer.emit(request("t2"))
      expect(yield* takeResponse(peer)).toEqual({ subtype: "success", request_id: "t2", response: { ok: "t2" } })
      expect(yield* protocol.inFlightCount).toBe(0)
    }))

  it.effect("closing the protocol abandons what is still waiting", () =>
    Effect.gen(function*() {
      const { abandoned, handlers, reached } = recording()
      yield* Effect.scoped(
        Effect.gen(function*() {
          const { protocol, peer } = yield* setupInternal(handlers)
          yield* peer.emit(request("w1"))
          expect(yield* Queue.take(reached)).toBe("w1")
          expect(yield* protocol.inFlightCount).toBe(1)
          expect(abandoned).toEqual([])
        })
      )
      expect(abandoned).toEqual(["w1"])
    }))
})
