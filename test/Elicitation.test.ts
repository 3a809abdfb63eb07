import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import { type AgentOptions, ClaudeAgent, Elicitation } from "effect-claude-agent"
import { type ElicitationResult, type OnElicitation, query } from "effect-claude-agent/promise"
import { ScriptedCli } from "effect-claude-agent/testing"
import { capturePromiseLogs } from "./support/logs.js"

/** The CLI's `elicitation` request for a form, as the real CLI 2.1.332 sends it (plus a field from the future). */
const formRequest = {
  mcp_server_name: "booking",
  message: "Which table?",
  mode: "form",
  requested_schema: {
    type: "object",
    properties: { guests: { type: "integer" }, terrace: { type: "boolean" } },
    required: ["guests"]
  },
  property_order: ["guests", "terrace"],
  title: "Book a table",
  display_name: "Booking",
  description: "for tonight",
  from_a_newer_cli: true
}

const urlRequest = {
  mcp_server_name: "auth",
  message: "Sign in",
  mode: "url",
  url: "https://example.com/login",
  elicitation_id: "el-1"
}

/**
 * Starts a session with `options`, sends each elicitation request from the scripted CLI and returns the raw answers
 * (`control_response` bodies), the `initialize` request and what was logged.
 */
const elicit = (options: AgentOptions.Options, requests: ReadonlyArray<Readonly<Record<string, unknown>>>) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    const logger = Logger.make(({ message }) => {
      logs.push(String(message))
    })
    const done = yield* Deferred.make<{
      readonly init: Readonly<Record<string, unknown>>
      readonly answers: ReadonlyArray<unknown>
    }>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        const init = yield* cli.initialize
        const answers: Array<unknown> = []
        for (const request of requests) answers.push(yield* cli.requestRaw("elicitation", request))
        yield* Deferred.succeed(done, { init, answers })
      }), { stepTimeout: "1 hour" })
    const { answers, init } = yield* ClaudeAgent.session(options).pipe(
      Effect.zipRight(Deferred.await(done)),
      Effect.provide(layer),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return { answers, init, logs }
  })

const success = (response: unknown) => ({ subtype: "success", response })

describe("Elicitation: onElicitation", () => {
  it.scoped("a form request reaches the handler with the official field names; accept with content is answered", () =>
    Effect.gen(function*() {
      const seen: Array<Elicitation.ElicitationRequest> = []
      const { answers, init } = yield* elicit({
        onElicitation: (request) =>
          Effect.sync(() => {
            seen.push(request)
            return Elicitation.accept({ guests: 4, terrace: true })
          })
      }, [formRequest])
      expect(seen).toStrictEqual([{
        serverName: "booking",
        message: "Which table?",
        mode: "form",
        requestedSchema: formRequest.requested_schema,
        title: "Book a table",
        displayName: "Booking",
        description: "for tonight",
        requestId: "cli_1"
      }])
      expect(answers).toMatchObject([success({ action: "accept", content: { guests: 4, terrace: true } })])
      // as the official SDK: nothing in initialize announces the handler
      expect(Object.keys(init).filter((key) => /elicit/i.test(key))).toEqual([])
    }))

  it.scoped("a URL request carries url and elicitationId; decline and cancel are answered as they are", () =>
    Effect.gen(function*() {
      const seen: Array<Elicitation.ElicitationRequest> = []
      const answersInOrder = [Elicitation.decline, Elicitation.cancel]
      const { answers } = yield* elicit({
        onElicitation: (request) =>
          Effect.sync(() => {
            seen.push(request)
            return answersInOrder[seen.length - 1]!
          })
      }, [urlRequest, urlRequest])
      expect(seen[0]).toStrictEqual({
        serverName: "auth",
        message: "Sign in",
        mode: "url",
        url: "https://example.com/login",
        elicitationId: "el-1",
        requestId: "cli_1"
      })
      expect(answers).toMatchObject([success({ action: "decline" }), success({ action: "cancel" })])
    }))

  it.scoped("without onElicitation every elicitation is declined", () =>
    Effect.gen(function*() {
      const { answers } = yield* elicit({}, [formRequest, urlRequest])
      expect(answers).toMatchObject([success({ action: "decline" }), success({ action: "decline" })])
    }))

  it.scoped("fail closed: a failing, dying or invalid handler and a malformed request answer cancel (logged)", () =>
    Effect.gen(function*() {
      let calls = 0
      const behaviours: ReadonlyArray<Effect.Effect<Elicitation.ElicitResult, unknown>> = [
        Effect.fail("no UI here"),
        Effect.die(new Error("handler bug")),
        // an answer from untyped code
        Effect.sync(() => JSON.parse(`{"action":"maybe"}`)),
        Effect.sync(() => JSON.parse(`{"action":"accept","content":{"nested":{"a":1}}}`))
      ]
      const { answers, logs } = yield* elicit({
        onElicitation: () => Effect.suspend(() => behaviours[calls++]!)
      }, [formRequest, formRequest, formRequest, formRequest, { mcp_server_name: "booking" }])
      expect(answers).toMatchObject(Array.from({ length: 5 }, () => success({ action: "cancel" })))
      expect(calls).toBe(4)
      expect(logs.filter((l) => l.startsWith("Elicitation from booking cancelled"))).toHaveLength(5)
      expect(logs.some((l) => l.includes("no UI here"))).toBe(true)
      expect(logs.some((l) => l.includes("handler bug"))).toBe(true)
      expect(logs.some((l) => l.includes("malformed request"))).toBe(true)
    }))

  it.scoped("a control_cancel_request interrupts the handler; nothing is answered and the next request is served", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      let interrupted = false
      let calls = 0
      const outcome = yield* Deferred.make<{ readonly next: unknown; readonly answered: boolean }>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          // the script's first request gets the id cli_1
          const pending = yield* Effect.fork(cli.requestRaw("elicitation", formRequest))
          yield* Deferred.await(started)
          yield* cli.cancel("cli_1")
          // frames are handled in order: once the next request is answered, the cancel has been handled
          const next = yield* cli.requestRaw("elicitation", formRequest)
          const answered = (yield* cli.received).some((frame) =>
            frame.type === "control_response" && frame.response.request_id === "cli_1"
          )
          yield* Fiber.interrupt(pending)
          yield* Deferred.succeed(outcome, { next, answered })
        }), { stepTimeout: "1 hour" })
      const result = yield* ClaudeAgent.session({
        onElicitation: () =>
          ++calls > 1
            ? Effect.succeed(Elicitation.accept({ guests: 2 }))
            : Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))
            )
      }).pipe(Effect.zipRight(Deferred.await(outcome)), Effect.provide(layer))
      expect(interrupted).toBe(true)
      expect(result.answered).toBe(false)
      expect(result.next).toMatchObject(success({ action: "accept", content: { guests: 2 } }))
      expect(calls).toBe(2)
    }))
})

describe("Elicitation: promise API onElicitation", () => {
  /**
   * A query whose scripted CLI sends `requests` as elicitations and ends the turn with their answers as the result;
   * its warnings must be the `warnings` (see `capturePromiseLogs`).
   */
  const run = async (
    onElicitation: OnElicitation | undefined,
    requests: ReadonlyArray<Record<string, unknown>>,
    warnings: ReadonlyArray<RegExp> = []
  ) => {
    const logs = capturePromiseLogs(warnings)
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.init()
        const answers: Array<unknown> = []
        for (const request of requests) answers.push(yield* cli.requestRaw("elicitation", request))
        yield* cli.result(JSON.stringify(answers))
      })
    )
    let result: unknown
    for await (const message of query({ prompt: "go", options: { transport, onElicitation, logger: logs.logger } })) {
      if (message.type === "result" && message.subtype === "success") result = JSON.parse(message.result)
    }
    logs.check()
    return result
  }

  it("the official callback gets the request and { signal, requestId }; its answer is sent", async () => {
    const calls: Array<{ readonly request: unknown; readonly requestId: string; readonly aborted: boolean }> = []
    const answers = await run(async (request, { requestId, signal }) => {
      calls.push({ request, requestId, aborted: signal.aborted })
      return { action: "accept", content: { guests: 3 } }
    }, [formRequest])
    expect(calls).toStrictEqual([{
      request: {
        serverName: "booking",
        message: "Which table?",
        mode: "form",
        requestedSchema: formRequest.requested_schema,
        title: "Book a table",
        displayName: "Booking",
        description: "for tonight"
      },
      requestId: "cli_1",
      aborted: false
    }])
    expect(answers).toMatchObject([success({ action: "accept", content: { guests: 3 } })])
  })

  it("a callback that throws, rejects or returns null cancels; without one, decline", async () => {
    let calls = 0
    const outcomes: ReadonlyArray<() => Promise<ElicitationResult | null>> = [
      () => {
        throw new Error("sync throw")
      },
      () => Promise.reject(new Error("rejected")),
      () => Promise.resolve(null)
    ]
    const cancelled = (why: string) =>
      new RegExp(`^warning Elicitation from auth cancelled: the handler failed: ${why}$`)
    expect(
      await run(() => outcomes[calls++]!(), [urlRequest, urlRequest, urlRequest], [
        cancelled("sync throw"),
        cancelled("rejected"),
        cancelled("onElicitation returned no answer")
      ])
    ).toMatchObject(
      Array.from({ length: 3 }, () => success({ action: "cancel" }))
    )
    expect(calls).toBe(3)
    expect(await run(undefined, [urlRequest])).toMatchObject([success({ action: "decline" })])
  })

  it("a withdrawn request aborts the callback's signal", async () => {
    let signal: AbortSignal | undefined
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.init()
        const pending = yield* Effect.fork(cli.requestRaw("elicitation", urlRequest))
        yield* Effect.promise(() => waitFor(() => signal !== undefined))
        yield* cli.cancel("cli_1")
        yield* Effect.promise(() => waitFor(() => signal?.aborted === true))
        yield* Fiber.interrupt(pending)
        yield* cli.result("done")
      })
    )
    const messages: Array<string> = []
    for await (
      const message of query({
        prompt: "go",
        options: {
          transport,
          onElicitation: (_, options) => {
            signal = options.signal
            return new Promise(() => {})
          }
        }
      })
    ) messages.push(message.type)
    expect(signal?.aborted).toBe(true)
    expect(messages.at(-1)).toBe("result")
  })
})

const waitFor = async (condition: () => boolean) => {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (!condition()) throw new Error("condition never held")
}
