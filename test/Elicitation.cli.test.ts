// MCP elicitation against the real CLI (2.1.332, offline, ScriptedModelServer): the scripted model calls a tool of
// an external stdio MCP server (test/fixtures/mcp-elicit-server.mjs) that asks for user input with
// `elicitInput`; the CLI forwards it to the SDK as an `elicitation` control request, and the tool reports what the
// elicitation returned.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { type AgentOptions, ClaudeAgent, Elicitation, Message } from "effect-claude-agent"
import type { Transport } from "effect-claude-agent"
import { Recording, ScriptedModelServer } from "effect-claude-agent/testing"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"
import { expectLogs } from "./support/logs.js"

const { reply, text, toolUse } = ScriptedModelServer

const ELICIT_SERVER = path.join(import.meta.dirname, "fixtures", "mcp-elicit-server.mjs")

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope | Transport.Transport>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 60_000)

/** The model: `CALL <tool>` calls the tool; a tool result is answered `got <content>`. */
const model = () =>
  realCli({
    handler: (request) => {
      const result = request.toolResults[0]
      if (result !== undefined) return reply(text(`got ${result.content}`))
      const prompt = request.lastUserText ?? ""
      return prompt.startsWith("CALL ") ? reply(toolUse(prompt.slice(5), {})) : reply(text("ok"))
    }
  })

/** Runs one query that calls `tool`; returns the result text (what the tool got back from the elicitation). */
const callTool = (tool: "ask" | "login", onElicitation?: Elicitation.OnElicitation) =>
  Effect.gen(function*() {
    const { options } = yield* model()
    const extra: AgentOptions.Options = {
      strictMcpConfig: true,
      mcpServers: { elicit: { command: process.execPath, args: [ELICIT_SERVER] } },
      allowedTools: [`mcp__elicit__${tool}`],
      ...(onElicitation !== undefined ? { onElicitation } : {})
    }
    const messages = yield* Stream.runCollect(ClaudeAgent.query(`CALL mcp__elicit__${tool}`, options(extra)))
    const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
    return result?.subtype === "success" ? result.result : `not a success: ${JSON.stringify(result)}`
  })

describe("MCP elicitation against the real CLI", () => {
  live(
    "a form elicitation reaches onElicitation with every field; the accepted content reaches the tool",
    () =>
      Effect.gen(function*() {
        const seen: Array<Elicitation.ElicitationRequest> = []
        const file = path.join(yield* tempDir("eca-elicit-"), "wire.jsonl")
        const answer = yield* callTool("ask", (request) =>
          Effect.sync(() => {
            seen.push(request)
            return Elicitation.accept({ name: "Ada", age: 36 })
          })).pipe(Effect.provide(Recording.layerRecord(file).pipe(Layer.provide(NodeClaudeAgent.layer))))
        // the wire: the CLI's request (property_order is not passed on, as in the official SDK) and our answer
        const entries = (yield* Recording.read(file)).connections.flatMap((c) => c.entries)
        const request = entries.find((e) =>
          e.event === "stdout" && e.frame["type"] === "control_request" &&
          JSON.stringify(e.frame["request"]).includes(`"subtype":"elicitation"`)
        )
        expect(request).toMatchObject({
          frame: {
            request: {
              subtype: "elicitation",
              mcp_server_name: "elicit",
              message: "Who are you?",
              mode: "form",
              property_order: ["name", "age"],
              title: "Identify yourself",
              display_name: "Elicit",
              description: "name and age"
            }
          }
        })
        const requestId = request?.event === "stdout" ? request.frame["request_id"] : undefined
        expect(entries.filter((e) => e.event === "stdin" && JSON.stringify(e.frame).includes(`"${requestId}"`)))
          .toMatchObject([{
            frame: {
              type: "control_response",
              response: {
                subtype: "success",
                request_id: requestId,
                response: { action: "accept", content: { name: "Ada", age: 36 } }
              }
            }
          }])
        expect(seen).toEqual([{
          serverName: "elicit",
          message: "Who are you?",
          mode: "form",
          requestedSchema: {
            type: "object",
            properties: { name: { type: "string", title: "Name" }, age: { type: "integer", title: "Age" } },
            required: ["name"]
          },
          title: "Identify yourself",
          displayName: "Elicit",
          description: "name and age",
          requestId: expect.any(String)
        }])
        expect(answer).toBe(`got ${JSON.stringify({ action: "accept", content: { name: "Ada", age: 36 } })}`)
      })
  )

  live("a URL elicitation carries mode, url and elicitationId", () =>
    Effect.gen(function*() {
      const seen: Array<Elicitation.ElicitationRequest> = []
      const answer = yield* callTool("login", (request) =>
        Effect.sync(() => {
          seen.push(request)
          return Elicitation.accept()
        }))
      expect(seen).toEqual([{
        serverName: "elicit",
        message: "Sign in to continue",
        mode: "url",
        url: "https://example.com/login",
        elicitationId: "elicit-1",
        requestId: expect.any(String)
      }])
      expect(answer).toBe(`got ${JSON.stringify({ action: "accept" })}`)
    }))

  live(
    "without onElicitation the tool gets decline",
    () => Effect.map(callTool("ask"), (answer) => expect(answer).toBe(`got ${JSON.stringify({ action: "decline" })}`))
  )

  live("a failing onElicitation: the tool gets cancel", () =>
    Effect.map(
      callTool("ask", () => Effect.fail(new Error("no UI"))),
      (answer) => expect(answer).toBe(`got ${JSON.stringify({ action: "cancel" })}`)
    ).pipe(expectLogs([/^WARN Elicitation from elicit cancelled: the handler failed: no UI/])))
})
