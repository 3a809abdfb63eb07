// onUserDialog / supportedDialogKinds against the real CLI 2.1.332. The CLI accepts the declaration in `initialize`;
// it sends `request_user_dialog` only from flows an offline run cannot reach (a refusal fallback needs the server's
// fallback routes), so a refusal ends the turn with the classic error and no dialog: see docs/PROTOCOL-NOTES.md.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ClaudeAgent, Message, UserDialog } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli } from "./support/cli.js"

const { reply, text } = ScriptedModelServer

describe("UserDialog against the real CLI", () => {
  it.live(
    "the CLI accepts supportedDialogKinds; a refused reply ends the turn without a dialog offline",
    () =>
      noClaudeLeft(Effect.gen(function*() {
        const { options } = yield* realCli({ handler: () => ({ ...reply(text("")), stopReason: "refusal" }) })
        const seen: Array<UserDialog.UserDialogRequest> = []
        const messages = yield* Stream.runCollect(ClaudeAgent.query(
          "go",
          options({
            fallbackModel: "claude-sonnet-4-6",
            supportedDialogKinds: ["refusal_fallback_prompt"],
            onUserDialog: (request) =>
              Effect.sync(() => {
                seen.push(request)
                return UserDialog.completed("retry_fallback")
              })
          })
        ))
        const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
        expect(result).toMatchObject({ stop_reason: "refusal" })
        expect(seen).toEqual([])
      })).pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer)),
    120_000
  )
})
