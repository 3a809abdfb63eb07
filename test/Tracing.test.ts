import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema, Stream, type Tracer } from "effect"
import { ClaudeAgent, SdkMcp } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { recordingTracer } from "./support/spans.js"

const ancestry = (span: Tracer.Span): ReadonlyArray<string> => {
  const names: Array<string> = []
  let parent = span.parent
  while (Option.isSome(parent) && parent.value._tag === "Span") {
    names.push(parent.value.name)
    parent = parent.value.parent
  }
  return names
}

it.live("spans: a tool's spans sit under its call, the call under the query, and the query span covers it all", () =>
  Effect.gen(function*() {
    const { spans, tracer } = yield* recordingTracer
    const cli = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.init({ mcp_servers: [{ name: "svc", status: "connected", source: "sdk" }] })
        yield* cli.request("mcp_message", {
          server_name: "svc",
          message: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "work", arguments: {} } }
        })
        yield* cli.assistant("done")
        yield* cli.result("done")
      })
    )
    yield* Effect.gen(function*() {
      const svc = yield* SdkMcp.createSdkMcpServer({
        name: "svc",
        tools: [
          SdkMcp.tool("work", "Works", Schema.Struct({}), () => Effect.succeed("ok").pipe(Effect.withSpan("app.work")))
        ]
      })
      yield* ClaudeAgent.query("go", { mcpServers: { svc } }).pipe(Stream.runDrain)
    }).pipe(Effect.provide(Layer.mergeAll(cli, Layer.setTracer(tracer))))

    const byName = (name: string) => spans.find((s) => s.name === name)
    const work = byName("app.work")
    const query = byName("ClaudeAgent.query")
    expect(work && ancestry(work)).toEqual(expect.arrayContaining(["SdkMcp.callTool", "ClaudeAgent.query"]))
    expect(work && ancestry(work)[0]).toBe("SdkMcp.callTool")
    expect(work && ancestry(work)).not.toContain("SdkMcp.createSdkMcpServer")
    expect(query?.status._tag).toBe("Ended")
    expect(work?.status._tag).toBe("Ended")
    if (query?.status._tag === "Ended" && work?.status._tag === "Ended") {
      expect(query.status.endTime >= work.status.endTime).toBe(true)
    }
  }))

it.live("spans: a session's start, initialize, control methods and turns are spans under the caller's span", () =>
  Effect.gen(function*() {
    const { spans, tracer } = yield* recordingTracer
    const cli = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.turn(ScriptedCli.textOf(yield* cli.expectUser))
      })
    )
    yield* Effect.gen(function*() {
      const session = yield* ClaudeAgent.session()
      yield* session.setModel("claude-other")
      yield* session.setPermissionMode("plan")
      yield* session.turn("hello").pipe(Stream.runDrain)
      yield* session.interrupt
    }).pipe(
      Effect.scoped,
      Effect.withSpan("app.workflow"),
      Effect.provide(Layer.mergeAll(cli, Layer.setTracer(tracer)))
    )

    const names = spans.map((s) => s.name)
    for (
      const name of [
        "ClaudeAgent.session",
        "Session.initialize",
        "Session.set_model",
        "Session.set_permission_mode",
        "Session.turn",
        "Session.interrupt"
      ]
    ) {
      expect(names).toContain(name)
      const span = spans.find((s) => s.name === name)!
      expect(ancestry(span)).toContain("app.workflow")
      expect(span.status._tag).toBe("Ended")
    }
  }))
