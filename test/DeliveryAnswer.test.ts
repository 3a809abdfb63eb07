// mcpServersDelivery / pluginDelivery "initialize": the CLI's initialize answer must confirm it read what was sent
// (a CLI that ignores the fields would run without the servers or plugins). Through the ScriptedCli.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import type { AgentOptions } from "effect-claude-agent"
import { ClaudeAgent } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

const servers: AgentOptions.Options = {
  mcpServers: { ext: { type: "stdio", command: "node", args: ["server.mjs"] } },
  mcpServersDelivery: "initialize"
}
const plugins: AgentOptions.Options = {
  plugins: [{ type: "local", path: "/opt/plugin" }],
  pluginDelivery: "initialize"
}

/** Starts a session whose scripted CLI answers initialize with `answer`; its exit, the request, the log lines. */
const start = (options: AgentOptions.Options, answer: Readonly<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    let request: unknown
    const layer = ScriptedCli.layer((cli) =>
      Effect.flatMap(cli.initialize, (init) =>
        Effect.sync(() => {
          request = init
        })), { initializeResponse: answer })
    const exit = yield* Effect.exit(Effect.scoped(Effect.flatMap(
      ClaudeAgent.session(options),
      (session) => session.initializationResult
    ))).pipe(
      Effect.provide(layer),
      Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message)))))
    )
    return { exit, request, logs }
  })

const failureText = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? String(exit.cause.error) : "no typed failure"

describe("initialize delivery: the CLI's answer confirms it", () => {
  it.scoped("MCP servers sent in initialize: without mcp_servers_applied the session fails, naming the option", () =>
    Effect.gen(function*() {
      const missing = yield* start(servers, {})
      expect(missing.request).toMatchObject({ mcpServers: { ext: { command: "node" } } })
      expect(missing.exit._tag).toBe("Failure")
      expect(failureText(missing.exit)).toContain("mcpServersDelivery")
      const refused = yield* start(servers, { mcp_servers_applied: false })
      expect(failureText(refused.exit)).toContain("mcpServersDelivery")
      const applied = yield* start(servers, { mcp_servers_applied: true })
      expect(applied.exit._tag).toBe("Success")
    }))

  it.scoped("plugins sent in initialize: no plugins_applied fails; false starts with a warning", () =>
    Effect.gen(function*() {
      const missing = yield* start(plugins, {})
      expect(missing.request).toMatchObject({ plugins: [{ type: "local", path: "/opt/plugin" }] })
      expect(failureText(missing.exit)).toContain("pluginDelivery")
      const partial = yield* start(plugins, { plugins_applied: false })
      expect(partial.exit._tag).toBe("Success")
      expect(partial.logs.some((line) => line.includes("did not load every plugin"))).toBe(true)
      expect((yield* start(plugins, { plugins_applied: true })).exit._tag).toBe("Success")
    }))

  it.scoped("with argv delivery nothing is asked of the answer", () =>
    Effect.gen(function*() {
      const { exit, request } = yield* start({ ...servers, mcpServersDelivery: "argv" }, {})
      expect(exit._tag).toBe("Success")
      expect(request).not.toHaveProperty("mcpServers")
    }))
})
