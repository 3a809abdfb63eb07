// ControlProtocol.noAnswer through the real process layer: the fake CLI (a real process) sends request_user_dialog
// frames the SDK must leave unanswered (no onUserDialog; a kind the session did not declare, with a handler that
// answers nothing), then goes on with an elicitation it waits the answer of and a turn. Nothing is written back for the
// dialogs; the session goes on.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type AgentOptions, ClaudeAgent, Message, NodeClaudeAgent, type UserDialog } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"

const dialog = (requestId: string, kind: string) =>
  FakeCli.emit({
    type: "control_request",
    request_id: requestId,
    request: {
      subtype: "request_user_dialog",
      dialog_kind: kind,
      payload: { originalModel: "claude-opus-4-8", fallbackModel: "claude-sonnet-4-6" },
      tool_use_id: "toolu_1"
    }
  })

/** Runs a turn against a fake CLI that sends the dialogs first; returns the turn's result and every frame it read. */
const run = (options: AgentOptions.Options, dialogs: ReadonlyArray<readonly [string, string]>) =>
  Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-dialog-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    const log = path.join(dir, "log.jsonl")
    const scenario = FakeCli.scenario([
      FakeCli.expectUser(),
      ...dialogs.map(([id, kind]) => dialog(id, kind)),
      // answered (declined by default): by then the SDK has handled the dialogs before it
      FakeCli.request("elicitation", { mcp_server_name: "s", message: "m" }),
      FakeCli.turn("went on")
    ], { log })
    const messages = yield* Effect.scoped(
      Stream.runCollect(ClaudeAgent.query("hi", { ...FakeCli.options(scenario), ...options }))
    )
    const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
    return { result, received: (yield* FakeCli.readLog(log)).received }
  })

const answeredIds = (received: ReadonlyArray<FakeCli.JsonObject>) =>
  received.flatMap((frame) => {
    const response = frame["response"]
    return frame["type"] === "control_response" && typeof response === "object" && response !== null &&
        "request_id" in response
      ? [String(response.request_id)]
      : []
  })

describe("ControlProtocol.noAnswer through the process transport", () => {
  it.scopedLive("a dialog without a handler gets no answer, and the session goes on", () =>
    Effect.gen(function*() {
      const { received, result } = yield* run({}, [["dialog_1", "refusal_fallback_prompt"]])
      expect(result?.subtype === "success" && result.result).toBe("went on")
      const answered = answeredIds(received)
      expect(answered).not.toContain("dialog_1")
      // the elicitation after it was answered: the SDK read and handled the dialog first
      expect(answered.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

  it.scopedLive(
    "a kind the session did not declare is not handed to the handler, and gets no answer",
    () =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        const onUserDialog: UserDialog.OnUserDialog = (request) =>
          Effect.sync(() => {
            seen.push(request.dialogKind)
            return null
          })
        const { received, result } = yield* run(
          { onUserDialog, supportedDialogKinds: ["refusal_fallback_prompt"] },
          [["dialog_undeclared", "some_future_kind"], ["dialog_declared", "refusal_fallback_prompt"]]
        )
        expect(result?.subtype === "success" && result.result).toBe("went on")
        const answered = answeredIds(received)
        expect(answered).not.toContain("dialog_undeclared")
        // the handler answered the declared one out of band (`null`): nothing written for it either
        expect(answered).not.toContain("dialog_declared")
        expect(seen).toEqual(["refusal_fallback_prompt"])
      }).pipe(Effect.provide(NodeClaudeAgent.layer)),
    60_000
  )
})
