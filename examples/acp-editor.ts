/**
 * Claude Code in an editor, through the Agent Client Protocol: this program plays the editor. It spawns the
 * `effect-claude-agent-acp` agent (here from the sources; in your project, `npx effect-claude-agent-acp`), talks ACP
 * to it over its stdio with the ACP SDK's own client (what Zed and other editors embed), opens a session, sends a
 * prompt, shows the streamed updates, and answers the agent's permission request as a user clicking "Allow" would.
 *
 *   npm run example -- acp-editor
 *
 * Offline, the scripted model asks to run a shell command, then answers; with ANTHROPIC_API_KEY the real model does
 * the same work. Closing the agent's stdin (the editor going away) ends it, with every Claude Code process it started.
 */
import * as acp from "@agentclientprotocol/sdk"
import { Console, Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Readable, Writable } from "node:stream"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { exampleOptions } from "./_offline.js"

const { reply, toolUse } = ScriptedModelServer

const program = Effect.gen(function*() {
  const { cwd, env } = yield* exampleOptions([
    reply(
      "I'll write it with the shell.",
      toolUse("Bash", { command: "echo hi > hello.txt", description: "Write it" })
    ),
    reply("Done: hello.txt says hi.")
  ])
  // the agent: in your project, spawn("npx", ["effect-claude-agent-acp"]) (or point your editor at it)
  const agent = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "..", "src", "bin", "acp.ts")], {
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "inherit"]
      })
    ),
    (child) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          // the editor goes away: the agent reaps its Claude Code processes and exits
          child.once("exit", () => resolve())
          child.stdin.end()
        })
      )
  )

  // the editor's side: show what the agent streams, answer what it asks
  const client = acp.client({ name: "example-editor" })
    .onNotification("session/update", ({ params: { update } }) => {
      switch (update.sessionUpdate) {
        case "agent_message_chunk":
          if (update.content.type === "text") process.stdout.write(update.content.text)
          return
        case "tool_call":
          return console.log(`\n[tool] ${update.title} (${update.kind ?? "other"})`)
        case "tool_call_update":
          if (update.status === "completed" || update.status === "failed") {
            console.log(`[tool] ${update.toolCallId} ${update.status}`)
          }
          return
        default:
          return
      }
    })
    .onRequest("session/request_permission", ({ params }) => {
      console.log(`[permission] ${params.toolCall.title}: ${params.options.map((o) => o.name).join(" / ")}`)
      const allow = params.options.find((o) => o.kind === "allow_once")
      return allow === undefined
        ? { outcome: { outcome: "cancelled" } }
        : { outcome: { outcome: "selected", optionId: allow.optionId } }
    })
  const connection = client.connect(
    acp.ndJsonStream(
      Writable.toWeb(agent.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(agent.stdout) as ReadableStream<Uint8Array>
    )
  )

  const answer = yield* Effect.promise(async () => {
    const init = await connection.agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION })
    console.log(`agent: ${init.agentInfo?.title} ${init.agentInfo?.version}`)
    const session = await connection.agent.request("session/new", { cwd, mcpServers: [] })
    console.log(`session ${session.sessionId}, mode ${session.modes?.currentModeId}`)
    return connection.agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Create hello.txt containing hi, using the shell." }]
    })
  })
  yield* Console.log(`\nstop reason: ${answer.stopReason}`)
  yield* Console.log(`hello.txt: ${fs.readFileSync(path.join(cwd, "hello.txt"), "utf8").trim()}`)
})

Effect.runPromise(Effect.scoped(program)).catch((error) => {
  console.error(error)
  process.exit(1)
})
