import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import { type AgentOptions, ClaudeAgent, UserDialog } from "effect-claude-agent"
import { type OnUserDialog, query } from "effect-claude-agent/promise"
import { ScriptedCli } from "effect-claude-agent/testing"

/** A `request_user_dialog` as the CLI 2.1.332's schema defines it (the payload of a refusal fallback prompt). */
const refusalDialog = {
  dialog_kind: "refusal_fallback_prompt",
  payload: { originalModel: "claude-opus-4-8", fallbackModel: "claude-sonnet-4-6" },
  tool_use_id: "toolu_1"
}

const dialogFrame = (requestId: string, body: Readonly<Record<string, unknown>>) => ({
  type: "control_request",
  request_id: requestId,
  request: { subtype: "request_user_dialog", ...body }
})

/** Ids of the control requests the SDK answered. */
const answeredIds = (received: ReadonlyArray<unknown>): ReadonlyArray<string> =>
  received.flatMap((frame) => {
    if (typeof frame !== "object" || frame === null || !("type" in frame) || frame.type !== "control_response") {
      return []
    }
    const response: unknown = "response" in frame ? frame.response : undefined
    return typeof response === "object" && response !== null && "request_id" in response &&
        typeof response.request_id === "string"
      ? [response.request_id]
      : []
  })

/**
 * Starts a session with `options`; the scripted CLI sends `answered` as dialogs it waits the answers of, and
 * `unanswered` as dialogs it does not wait for (then an elicitation, answered by the default decline, so the SDK has
 * handled everything before). Returns the answers, the ids of unanswered dialogs the SDK answered, the `initialize`
 * request and the log lines.
 */
const dialogs = (
  options: AgentOptions.Options,
  answered: ReadonlyArray<Readonly<Record<string, unknown>>>,
  unanswered: ReadonlyArray<Readonly<Record<string, unknown>>> = []
) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    const logger = Logger.make(({ message }) => {
      logs.push(String(message))
    })
    const done = yield* Deferred.make<{
      readonly init: Readonly<Record<string, unknown>>
      readonly answers: ReadonlyArray<unknown>
      readonly answeredUnanswered: ReadonlyArray<string>
    }>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        const init = yield* cli.initialize
        const answers: Array<unknown> = []
        for (const request of answered) answers.push(yield* cli.requestRaw("request_user_dialog", request))
        for (const [i, request] of unanswered.entries()) yield* cli.emit(dialogFrame(`silent_${i}`, request))
        yield* cli.requestRaw("elicitation", { mcp_server_name: "s", message: "m" })
        const ids = answeredIds(yield* cli.received).filter((id) => id.startsWith("silent_"))
        yield* Deferred.succeed(done, { init, answers, answeredUnanswered: ids })
      }), { stepTimeout: "1 hour" })
    const result = yield* ClaudeAgent.session(options).pipe(
      Effect.zipRight(Deferred.await(done)),
      Effect.provide(layer),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return { ...result, logs }
  })

const success = (response: unknown) => ({ subtype: "success", response })

describe("UserDialog: onUserDialog and supportedDialogKinds", () => {
  it.scoped("initialize declares the kinds and perTaskStopAffordance; neither is sent when not given", () =>
    Effect.gen(function*() {
      const declared = yield* dialogs({
        onUserDialog: () => Effect.succeed(UserDialog.cancelled),
        supportedDialogKinds: ["refusal_fallback_prompt"],
        perTaskStopAffordance: true
      }, [])
      expect(declared.init).toMatchObject({
        supportedDialogKinds: ["refusal_fallback_prompt"],
        perTaskStopAffordance: true
      })
      const plain = yield* dialogs({ perTaskStopAffordance: false }, [])
      expect(Object.keys(plain.init).filter((key) => /dialog|perTask/i.test(key))).toEqual([])
    }))

  it.scoped("a declared kind reaches the handler with the official field names; completed is answered", () =>
    Effect.gen(function*() {
      const seen: Array<UserDialog.UserDialogRequest> = []
      const { answers } = yield* dialogs({
        supportedDialogKinds: ["refusal_fallback_prompt"],
        onUserDialog: (request) =>
          Effect.sync(() => {
            seen.push(request)
            return UserDialog.completed("retry_fallback")
          })
      }, [refusalDialog, { dialog_kind: "refusal_fallback_prompt", payload: {} }])
      expect(seen).toStrictEqual([
        {
          dialogKind: "refusal_fallback_prompt",
          payload: refusalDialog.payload,
          toolUseID: "toolu_1",
          requestId: "cli_1"
        },
        { dialogKind: "refusal_fallback_prompt", payload: {}, requestId: "cli_2" }
      ])
      expect(answers).toMatchObject([
        success({ behavior: "completed", result: "retry_fallback" }),
        success({ behavior: "completed", result: "retry_fallback" })
      ])
    }))

  it.scoped("a failing, dying or invalid handler answers cancelled (the dialog's default), with a warning", () =>
    Effect.gen(function*() {
      const outcomes: ReadonlyArray<Effect.Effect<UserDialog.UserDialogResult | null, unknown>> = [
        Effect.fail(new Error("no renderer")),
        Effect.die("boom"),
        // untyped code returning the wrong shape
        Effect.sync((): UserDialog.UserDialogResult => JSON.parse(`{"behavior":"accept"}`)),
        // results JSON cannot write: the CLI would get an error response, which it discards
        Effect.succeed(UserDialog.completed(10n)),
        Effect.sync(() => {
          const cycle: Record<string, unknown> = {}
          cycle["self"] = cycle
          return UserDialog.completed(cycle)
        }),
        Effect.succeed(UserDialog.completed({
          toJSON: () => {
            throw new Error("nope")
          }
        }))
      ]
      let calls = 0
      const { answers, logs } = yield* dialogs({
        supportedDialogKinds: ["refusal_fallback_prompt"],
        onUserDialog: () => outcomes[calls++]!
      }, outcomes.map(() => refusalDialog))
      expect(answers).toStrictEqual(
        Array.from({ length: outcomes.length }, (_, i) => ({
          subtype: "success",
          request_id: `cli_${i + 1}`,
          response: { behavior: "cancelled" }
        }))
      )
      expect(logs.filter((line) => line.includes("cancelled: the handler failed"))).toHaveLength(outcomes.length)
    }))

  it.scoped("the payload reaches the handler as the CLI sent it: a \"__proto__\" key stays an own key", () =>
    Effect.gen(function*() {
      const seen: Array<UserDialog.UserDialogRequest> = []
      yield* dialogs({
        supportedDialogKinds: ["refusal_fallback_prompt"],
        onUserDialog: (request) =>
          Effect.sync(() => {
            seen.push(request)
            return UserDialog.cancelled
          })
      }, [{ dialog_kind: "refusal_fallback_prompt", payload: JSON.parse(`{"__proto__":{"isAdmin":true},"n":1}`) }])
      const payload = seen[0]!.payload
      expect(Object.keys(payload)).toEqual(["__proto__", "n"])
      expect(Object.getPrototypeOf(payload)).toBe(Object.prototype)
      expect("isAdmin" in payload).toBe(false)
    }))

  it.scoped("without onUserDialog, for an undeclared kind, a malformed request or a null answer: no answer at all", () =>
    Effect.gen(function*() {
      const without = yield* dialogs({}, [], [refusalDialog])
      expect(without.answeredUnanswered).toEqual([])
      let calls = 0
      const declared = yield* dialogs(
        {
          supportedDialogKinds: ["refusal_fallback_prompt"],
          onUserDialog: (request) =>
            Effect.sync(() => {
              calls++
              // answered out of band
              return request.dialogKind === "refusal_fallback_prompt" ? null : UserDialog.cancelled
            })
        },
        [],
        [{ ...refusalDialog, dialog_kind: "auto_mode_outside_reads" }, { payload: {} }, refusalDialog]
      )
      expect(declared.answeredUnanswered).toEqual([])
      // only the declared kind reached the handler
      expect(calls).toBe(1)
      expect(declared.logs.filter((line) => line.includes("left unanswered"))).toHaveLength(2)
    }))

  it.effect("bad values fail with InvalidOptions before anything is spawned", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [AgentOptions.Options, string]> = [
        [{ supportedDialogKinds: ["refusal_fallback_prompt"] }, "supportedDialogKinds"],
        [{ onUserDialog: () => Effect.succeed(null), supportedDialogKinds: [""] }, "supportedDialogKinds"],
        [{ onUserDialog: "render" as never }, "onUserDialog"],
        [{ perTaskStopAffordance: "yes" as never }, "perTaskStopAffordance"]
      ]
      for (const [options, option] of cases) {
        let spawned = false
        const layer = ScriptedCli.layer(() =>
          Effect.sync(() => {
            spawned = true
          })
        )
        const exit = yield* Effect.exit(Effect.scoped(Effect.provide(ClaudeAgent.session(options), layer)))
        expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : exit).toMatchObject({
          _tag: "InvalidOptions",
          option
        })
        expect(spawned).toBe(false)
      }
      // an empty list needs no handler (it declares nothing)
      const { init } = yield* Effect.scoped(dialogs({ supportedDialogKinds: [] }, []))
      expect(init["supportedDialogKinds"]).toEqual([])
    }))
})

describe("UserDialog: promise API onUserDialog", () => {
  /** A query whose scripted CLI sends `requests` as dialogs and ends the turn with their answers as the result. */
  const run = async (
    onUserDialog: OnUserDialog | undefined,
    requests: ReadonlyArray<Record<string, unknown>>
  ) => {
    const transport = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        const init = yield* cli.initialize
        yield* cli.init()
        const answers: Array<unknown> = []
        for (const request of requests) answers.push(yield* cli.requestRaw("request_user_dialog", request))
        yield* cli.result(JSON.stringify({ init, answers }))
      })
    )
    let result: unknown
    const logger = () => {}
    const options = { transport, supportedDialogKinds: ["refusal_fallback_prompt"], logger }
    for await (
      const message of query({ prompt: "go", options: onUserDialog ? { ...options, onUserDialog } : options })
    ) {
      if (message.type === "result" && message.subtype === "success") result = JSON.parse(message.result)
    }
    return result
  }

  it("the official callback gets the request and { signal, requestId }; its answer is sent; a throw cancels", async () => {
    const calls: Array<{ readonly request: unknown; readonly requestId: string; readonly aborted: boolean }> = []
    const result = await run(async (request, { requestId, signal }) => {
      calls.push({ request, requestId, aborted: signal.aborted })
      if (calls.length === 2) throw new Error("no renderer")
      return { behavior: "completed", result: "retry_fallback" }
    }, [refusalDialog, refusalDialog])
    expect(calls[0]).toStrictEqual({
      request: { dialogKind: "refusal_fallback_prompt", payload: refusalDialog.payload, toolUseID: "toolu_1" },
      requestId: "cli_1",
      aborted: false
    })
    expect(result).toMatchObject({
      init: { supportedDialogKinds: ["refusal_fallback_prompt"] },
      answers: [
        success({ behavior: "completed", result: "retry_fallback" }),
        success({ behavior: "cancelled" })
      ]
    })
  })

  it("supportedDialogKinds without onUserDialog rejects with InvalidOptions", async () => {
    await expect(run(undefined, [])).rejects.toMatchObject({ _tag: "InvalidOptions", option: "supportedDialogKinds" })
  })
})
