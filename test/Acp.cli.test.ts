// The ACP agent judged by the ACP SDK's own client (`@agentclientprotocol/sdk`, what editors embed), over the real
// stdio of a spawned `effect-claude-agent-acp`, with the real CLI against the scripted model server (offline).
import type * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { Hooks } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import { agentText, choose, connect, errorCode, serveInProcess, spawnAgent } from "./support/acp.js"
import { NodeClaudeAgent, noClaudeLeft, tempDir } from "./support/cli.js"
import { OWNER_ENV, running } from "./support/process.js"

const { reply, text, toolUse } = ScriptedModelServer

// each test starts an agent process (TypeScript compiled by tsx) and 1-3 CLI sessions of 1-4 turns
const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope>, timeout = 120_000) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())), timeout)

const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`

/** The scripted model server, a working directory, and a spawned agent with a connected, initialized client. */
const setup = (options: {
  readonly args?: ReadonlyArray<string>
  readonly server?: ScriptedModelServer.ScriptedModelServer
  readonly cwd?: string
  readonly clientCapabilities?: acp.ClientCapabilities
} = {}) =>
  Effect.gen(function*() {
    const server = options.server ?? (yield* ScriptedModelServer.make())
    const cwd = options.cwd ?? fs.realpathSync(yield* tempDir("eca-acp-"))
    const agent = yield* spawnAgent({ ...server.env(), [OWNER_ENV]: String(process.pid) }, options.args)
    const client = connect(agent, options.clientCapabilities)
    const initialized = yield* client.initialize
    return { server, cwd, agent, client, initialized }
  })

/** Waits (polling, bounded) until `argv` runs. */
const started = (...argv: ReadonlyArray<string>) =>
  Effect.sync(() => running(...argv)).pipe(
    Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (pids) => pids.length > 0 }),
    Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error(`${argv.join(" ")} never started`) }),
    Effect.orDie
  )

/**
 * Waits until no process runs with this command line. For what the CLI ends itself (a tool it stops on interrupt): it
 * sends the turn's result as it signals the tool, so the process may take a moment to go after the prompt returns.
 */
const gone = (...argv: ReadonlyArray<string>) =>
  Effect.sync(() => running(...argv)).pipe(
    Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (pids) => pids.length === 0 }),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`${argv.join(" ")} still runs`) }),
    Effect.orDie
  )

const toolCalls = (updates: ReadonlyArray<acp.SessionUpdate>) =>
  updates.flatMap((u) => (u.sessionUpdate === "tool_call" ? [u] : []))

const toolUpdates = (updates: ReadonlyArray<acp.SessionUpdate>) =>
  updates.flatMap((u) => (u.sessionUpdate === "tool_call_update" ? [u] : []))

const resultText = (update: acp.ToolCallUpdate | undefined) =>
  (update?.content ?? []).flatMap((c) => (c.type === "content" && c.content.type === "text" ? [c.content.text] : []))
    .join("")

describe("ACP agent: the ACP SDK's client over stdio, real CLI", () => {
  live(
    "initialize states the capabilities; a text turn streams the answer and ends with end_turn; commands are announced",
    () =>
      Effect.gen(function*() {
        const { client, cwd, initialized } = yield* setup()
        expect(initialized.protocolVersion).toBe(1)
        expect(initialized.agentCapabilities).toMatchObject({
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: true },
          sessionCapabilities: { close: {}, list: {}, resume: {} }
        })
        expect(initialized.agentInfo?.name).toBe("effect-claude-agent")
        const session = yield* client.newSession(cwd)
        expect(session.modes?.currentModeId).toBe("default")
        expect(session.configOptions?.map((o) => o.id)).toContain("mode")
        const response = yield* client.prompt(session.sessionId, "SAY hello from the editor")
        expect(response.stopReason).toBe("end_turn")
        const updates = client.updatesOf(session.sessionId)
        expect(agentText(updates)).toBe("hello from the editor")
        const commands = updates.find((u) => u.sessionUpdate === "available_commands_update")
        expect(commands?.sessionUpdate === "available_commands_update" && commands.availableCommands.length)
          .toBeGreaterThan(0)
      })
  )

  live("a tool call asks the editor: allow once runs it, and its output is shown", () =>
    Effect.gen(function*() {
      const { client, cwd } = yield* setup()
      const { sessionId } = yield* client.newSession(cwd)
      const response = yield* client.prompt(sessionId, bash("touch allowed.txt && echo ran-ok"))
      expect(response.stopReason).toBe("end_turn")
      expect(fs.existsSync(path.join(cwd, "allowed.txt"))).toBe(true)
      const [asked] = client.seen.permissions
      expect(asked?.toolCall).toMatchObject({ kind: "execute", title: "`touch allowed.txt && echo ran-ok`" })
      expect(asked?.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"])
      const updates = client.updatesOf(sessionId)
      // the editor knew the call before it was asked about it
      const call = toolCalls(updates)[0]
      expect(call?.toolCallId).toBe(asked?.toolCall.toolCallId)
      expect(updates.indexOf(call!)).toBeLessThan(updates.length)
      const done = toolUpdates(updates).find((u) => u.status === "completed")
      expect(done?.toolCallId).toBe(call?.toolCallId)
      expect(resultText(done)).toContain("ran-ok")
      expect(agentText(updates)).toBe("tool said: ran-ok")
    }))

  live(
    "always allow is remembered for the session and never asked again; a deny rule still wins",
    () =>
      Effect.gen(function*() {
        const { client, cwd } = yield* setup({ args: ["--deny", "Bash(rm:*)"] })
        client.setAnswer(choose("allow_always"))
        const { sessionId } = yield* client.newSession(cwd)
        yield* client.prompt(sessionId, bash("touch always.txt"))
        expect(client.seen.permissions).toHaveLength(1)
        expect(fs.existsSync(path.join(cwd, "always.txt"))).toBe(true)
        fs.rmSync(path.join(cwd, "always.txt"))
        // the same call again: the session's rule allows it, the editor is not asked
        client.setAnswer(choose("reject_once"))
        yield* client.prompt(sessionId, bash("touch always.txt"))
        expect(client.seen.permissions).toHaveLength(1)
        expect(fs.existsSync(path.join(cwd, "always.txt"))).toBe(true)
        // a deny rule is judged first: never asked, never run
        client.setAnswer(choose("allow_once"))
        yield* client.prompt(sessionId, bash("rm always.txt"))
        expect(client.seen.permissions).toHaveLength(1)
        expect(fs.existsSync(path.join(cwd, "always.txt"))).toBe(true)
      })
  )

  live(
    "reject: the tool does not run, the call fails, and the model is told; a session's rules stay its own",
    () =>
      Effect.gen(function*() {
        const { client, cwd, server } = yield* setup()
        const first = yield* client.newSession(cwd)
        client.setAnswer(choose("allow_always"))
        yield* client.prompt(first.sessionId, bash("touch mine.txt"))
        // another session does not inherit the rule: it is asked, rejects, and the model is told
        const { sessionId } = yield* client.newSession(cwd)
        client.setAnswer(choose("reject_once"))
        expect((yield* client.prompt(sessionId, bash("touch mine.txt"))).stopReason).toBe("end_turn")
        expect(client.seen.permissions).toHaveLength(2)
        expect(toolUpdates(client.updatesOf(sessionId)).map((u) => u.status)).toEqual(["failed"])
        const last = (yield* server.requests).filter((r) => r.isMessages).at(-1)
        expect(JSON.stringify(last?.toolResults)).toContain("The user rejected this tool call")
      })
  )

  live("an edit is shown as a diff, in the tool call and in the permission request", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const { client, cwd } = yield* setup({ server })
      const file = path.join(cwd, "notes.txt")
      fs.writeFileSync(file, "hello world\n")
      yield* server.addReplies(
        reply(toolUse("Read", { file_path: file })),
        reply(toolUse("Edit", { file_path: file, old_string: "world", new_string: "editor" })),
        reply(text("edited"))
      )
      const { sessionId } = yield* client.newSession(cwd)
      const response = yield* client.prompt(sessionId, "edit the notes")
      expect(response.stopReason).toBe("end_turn")
      expect(fs.readFileSync(file, "utf8")).toBe("hello editor\n")
      const diff = { type: "diff", path: file, oldText: "world", newText: "editor" }
      const edit = toolCalls(client.updatesOf(sessionId)).find((c) => c.kind === "edit")
      expect(edit).toMatchObject({ title: "Edit notes.txt", locations: [{ path: file }], content: [diff] })
      const read = toolCalls(client.updatesOf(sessionId)).find((c) => c.kind === "read")
      expect(read).toMatchObject({ title: "Read notes.txt", locations: [{ path: file }] })
      expect(client.seen.permissions.map((p) => p.toolCall.content)).toEqual([[diff]])
    }))

  live(
    "cancel mid-tool: the prompt ends with cancelled, the tool process is gone, the session goes on",
    () =>
      Effect.gen(function*() {
        const { client, cwd } = yield* setup()
        const { sessionId } = yield* client.newSession(cwd)
        const prompt = yield* Effect.fork(client.prompt(sessionId, bash("sh -c 'sleep 321.5'; echo done")))
        yield* started("sleep", "321.5")
        yield* client.cancel(sessionId)
        const response = yield* Fiber.join(prompt)
        expect(response.stopReason).toBe("cancelled")
        yield* gone("sleep", "321.5")
        const again = yield* client.prompt(sessionId, "SAY still here")
        expect(again.stopReason).toBe("end_turn")
        expect(agentText(client.updatesOf(sessionId))).toContain("still here")
      })
  )

  live("session/load replays the history before it answers, and the session continues", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const cwd = fs.realpathSync(yield* tempDir("eca-acp-"))
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const { client } = yield* setup({ server, cwd })
        const { sessionId } = yield* client.newSession(cwd)
        yield* client.prompt(sessionId, "SAY remember forty-two")
        yield* client.prompt(sessionId, bash("touch loaded.txt && echo made"))
        return { cwd, sessionId }
      }))
      // a new agent process, as an editor that restarts
      const { client } = yield* setup({ server })
      const loaded = yield* client.request((a) =>
        a.request("session/load", { sessionId: first.sessionId, cwd: first.cwd, mcpServers: [] })
      )
      expect(loaded.modes?.currentModeId).toBe("default")
      const replayed = client.updatesOf(first.sessionId)
      expect(
        replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) =>
          u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? u.content.text : ""
        )
      ).toEqual(["SAY remember forty-two", bash("touch loaded.txt && echo made")])
      expect(agentText(replayed)).toBe("remember forty-twotool said: made")
      expect(toolCalls(replayed).map((c) => c.title)).toEqual(["`touch loaded.txt && echo made`"])
      expect(toolUpdates(replayed).map((u) => u.status)).toEqual(["completed"])
      const response = yield* client.prompt(first.sessionId, "HISTORY")
      expect(response.stopReason).toBe("end_turn")
      expect(agentText(client.updatesOf(first.sessionId))).toContain("SAY remember forty-two")
    }))

  live(
    "cancel while the editor is asked: the request is withdrawn and the prompt ends with cancelled",
    () =>
      Effect.gen(function*() {
        const { client, cwd } = yield* setup()
        const asked = yield* Deferred.make<void>()
        const withdrawn = yield* Deferred.make<void>()
        client.setAnswer((_request, signal) =>
          new Promise((resolve) => {
            Effect.runSync(Deferred.succeed(asked, void 0))
            signal.addEventListener("abort", () => {
              Effect.runSync(Deferred.succeed(withdrawn, void 0))
              resolve({ outcome: { outcome: "cancelled" } })
            })
          })
        )
        const { sessionId } = yield* client.newSession(cwd)
        const prompt = yield* Effect.fork(client.prompt(sessionId, bash("touch never.txt")))
        yield* Deferred.await(asked)
        yield* client.cancel(sessionId)
        expect((yield* Fiber.join(prompt)).stopReason).toBe("cancelled")
        yield* Deferred.await(withdrawn)
        expect(fs.existsSync(path.join(cwd, "never.txt"))).toBe(false)
      })
  )

  live(
    "a client that disconnects mid-turn ends the agent, every CLI and every tool process",
    () =>
      Effect.gen(function*() {
        const { agent, client, cwd } = yield* setup()
        const { sessionId } = yield* client.newSession(cwd)
        // the tool ignores SIGTERM: only the SDK's reaper (SIGKILL) ends it, not the CLI's own clean-up
        yield* Effect.fork(
          Effect.either(client.prompt(sessionId, bash("trap '' TERM; sh -c 'sleep 322.5'; echo done")))
        )
        yield* started("sleep", "322.5")
        agent.child.stdin.end()
        const code = yield* Effect.promise(() => agent.exited)
        expect(code).toBe(0)
        expect(running("sleep", "322.5")).toEqual([])
      })
  )

  live(
    "Acp.serve in a host that lives on: when the client goes, serve returns and every CLI is reaped",
    () =>
      Effect.gen(function*() {
        const server = yield* ScriptedModelServer.make()
        const cwd = fs.realpathSync(yield* tempDir("eca-acp-"))
        const env = server.env()
        const { client, disconnect, served } = yield* serveInProcess({
          options: { env: { ...env, [OWNER_ENV]: String(process.pid) } }
        }).pipe(
          Effect.provide(Layer.merge(
            NodeClaudeAgent.layer,
            NodeClaudeAgent.layerSessionStore({ configDir: env["CLAUDE_CONFIG_DIR"] })
          ))
        )
        const { sessionId } = yield* client.newSession(cwd)
        yield* Effect.fork(
          Effect.either(client.prompt(sessionId, bash("trap '' TERM; sh -c 'sleep 323.5'; echo done")))
        )
        yield* started("sleep", "323.5")
        yield* disconnect
        yield* Fiber.join(served)
        expect(running("sleep", "323.5")).toEqual([])
      })
  )

  live(
    "Hooks in the environment of Acp.serve apply first: a PreToolUse deny is never asked about",
    () =>
      Effect.gen(function*() {
        const server = yield* ScriptedModelServer.make()
        const cwd = fs.realpathSync(yield* tempDir("eca-acp-"))
        const env = server.env()
        const hooks = Hooks.layer({
          PreToolUse: [{ matcher: "Bash", hooks: [() => Effect.succeed(Hooks.deny("blocked by hook"))] }]
        })
        const { client, disconnect, served } = yield* serveInProcess({
          options: { env: { ...env, [OWNER_ENV]: String(process.pid) } }
        }).pipe(
          Effect.provide(Layer.mergeAll(
            NodeClaudeAgent.layer,
            NodeClaudeAgent.layerSessionStore({ configDir: env["CLAUDE_CONFIG_DIR"] }),
            hooks
          ))
        )
        const { sessionId } = yield* client.newSession(cwd)
        expect((yield* client.prompt(sessionId, bash("touch hooked.txt"))).stopReason).toBe("end_turn")
        expect(client.seen.permissions).toEqual([])
        expect(fs.existsSync(path.join(cwd, "hooked.txt"))).toBe(false)
        expect(agentText(client.updatesOf(sessionId))).toContain("blocked by hook")
        yield* disconnect
        yield* Fiber.join(served)
      })
  )

  live("an unknown session is an error; a second prompt while one runs is refused", () =>
    Effect.gen(function*() {
      const { client, cwd } = yield* setup()
      const unknown = yield* Effect.flip(client.prompt("5f0c1e4c-0000-4000-8000-000000000000", "SAY hi"))
      expect(errorCode(unknown)).toBe(-32002)
      const { sessionId } = yield* client.newSession(cwd)
      const release = yield* Deferred.make<void>()
      const asked = yield* Deferred.make<void>()
      client.setAnswer((request) =>
        Effect.runPromise(
          Deferred.succeed(asked, void 0).pipe(
            Effect.zipRight(Deferred.await(release)),
            Effect.as<acp.RequestPermissionResponse>({
              outcome: { outcome: "selected", optionId: request.options[0]!.optionId }
            })
          )
        )
      )
      const first = yield* Effect.fork(client.prompt(sessionId, bash("touch first.txt")))
      yield* Deferred.await(asked)
      const second = yield* Effect.flip(client.prompt(sessionId, "SAY second"))
      expect(errorCode(second)).toBe(-32600)
      yield* Deferred.succeed(release, void 0)
      expect((yield* Fiber.join(first)).stopReason).toBe("end_turn")
      expect(fs.existsSync(path.join(cwd, "first.txt"))).toBe(true)
    }))

  live(
    "an editor that never answers is a deny after the permission timeout, and is told to withdraw",
    () =>
      Effect.gen(function*() {
        const { client, cwd, server } = yield* setup({ args: ["--permission-timeout", "1"] })
        const withdrawn = yield* Deferred.make<void>()
        client.setAnswer((_request, signal) =>
          new Promise((resolve) =>
            signal.addEventListener("abort", () => {
              Effect.runSync(Deferred.succeed(withdrawn, void 0))
              resolve({ outcome: { outcome: "cancelled" } })
            })
          )
        )
        const { sessionId } = yield* client.newSession(cwd)
        const response = yield* client.prompt(sessionId, bash("touch late.txt"))
        expect(response.stopReason).toBe("end_turn")
        yield* Deferred.await(withdrawn)
        expect(fs.existsSync(path.join(cwd, "late.txt"))).toBe(false)
        const last = (yield* server.requests).filter((r) => r.isMessages).at(-1)
        expect(JSON.stringify(last?.toolResults)).toContain("no decision within 1s")
      })
  )

  live(
    "modes: set_mode changes Claude Code's permission mode (acceptEdits writes without asking)",
    () =>
      Effect.gen(function*() {
        const { client, cwd } = yield* setup()
        client.setAnswer(choose("reject_once"))
        const { sessionId } = yield* client.newSession(cwd)
        const bad = yield* Effect.flip(client.request((a) => a.request("session/set_mode", { sessionId, modeId: "x" })))
        expect(errorCode(bad)).toBe(-32602)
        yield* client.request((a) => a.request("session/set_mode", { sessionId, modeId: "acceptEdits" }))
        const file = path.join(cwd, "written.txt")
        yield* client.prompt(sessionId, `TOOL Write ${JSON.stringify({ file_path: file, content: "by mode\n" })}`)
        expect(client.seen.permissions).toEqual([])
        expect(fs.readFileSync(file, "utf8")).toBe("by mode\n")
        const write = toolCalls(client.updatesOf(sessionId)).find((c) => c.kind === "edit")
        expect(write?.content).toEqual([{ type: "diff", path: file, oldText: null, newText: "by mode\n" }])
      })
  )

  live(
    "with the editor's fs and terminals: reads see unsaved buffers, edits land in the editor, commands run in its terminal",
    () =>
      Effect.gen(function*() {
        const server = yield* ScriptedModelServer.make()
        const { client, cwd } = yield* setup({
          server,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true }
        })
        const file = path.join(cwd, "notes.txt")
        fs.writeFileSync(file, "on disk\n")
        client.editor.buffers.set(file, "in the buffer\n")
        yield* server.addReplies(
          reply(toolUse("mcp__acp__Read", { file_path: file })),
          reply(toolUse("mcp__acp__Edit", { file_path: file, old_string: "buffer", new_string: "editor" })),
          reply(toolUse("mcp__acp__Bash", { command: "echo from-terminal", description: "say" })),
          reply(text("done"))
        )
        const { sessionId } = yield* client.newSession(cwd)
        expect((yield* client.prompt(sessionId, "work in the editor")).stopReason).toBe("end_turn")
        const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
        expect(JSON.stringify(results[0])).toContain("in the buffer")
        // the edit went into the editor's buffer; the disk is the editor's business
        expect(client.editor.buffers.get(file)).toBe("in the editor\n")
        expect(fs.readFileSync(file, "utf8")).toBe("on disk\n")
        expect(JSON.stringify(results[2])).toContain("from-terminal")
        // a read in the working directory is not asked about; the edit and the command are, as the built-in tools
        expect(client.seen.permissions.map((p) => p.toolCall.kind)).toEqual(["edit", "execute"])
        expect(client.seen.permissions[0]?.toolCall.content).toEqual([
          { type: "diff", path: file, oldText: "buffer", newText: "editor" }
        ])
        const updates = client.updatesOf(sessionId)
        const bashCall = toolCalls(updates).find((c) => c.kind === "execute")
        expect(bashCall?.title).toBe("`echo from-terminal`")
        const finished = toolUpdates(updates).filter((u) =>
          u.toolCallId === bashCall?.toolCallId && u.status === "completed"
        )
        expect(finished[0]?.content).toEqual([{ type: "terminal", terminalId: "term-0" }])
        expect(client.editor.calls.map((c) => c.method)).toContain("terminal/release")
        expect(client.editor.terminals.size).toBe(0)
      })
  )

  live(
    "cancel while a command runs in the editor's terminal: the terminal is killed and released",
    () =>
      Effect.gen(function*() {
        const server = yield* ScriptedModelServer.make()
        const { client, cwd } = yield* setup({ server, clientCapabilities: { terminal: true } })
        yield* server.addReplies(reply(toolUse("mcp__acp__Bash", { command: "sleep 324.5", description: "wait" })))
        const { sessionId } = yield* client.newSession(cwd)
        const prompt = yield* Effect.fork(client.prompt(sessionId, "wait"))
        yield* started("sleep", "324.5")
        yield* client.cancel(sessionId)
        expect((yield* Fiber.join(prompt)).stopReason).toBe("cancelled")
        expect(running("sleep", "324.5")).toEqual([])
        expect(client.editor.calls.map((c) => c.method)).toEqual([
          "terminal/create",
          "terminal/kill",
          "terminal/release"
        ])
      })
  )

  live(
    "a deny rule holds for the editor's terminal also where Claude Code asks nothing (bypassPermissions)",
    () =>
      Effect.gen(function*() {
        const server = yield* ScriptedModelServer.make()
        const { client, cwd } = yield* setup({
          server,
          args: ["--deny", "Bash(touch:*)", "--permission-mode", "bypassPermissions"],
          clientCapabilities: { terminal: true }
        })
        yield* server.addReplies(
          reply(toolUse("mcp__acp__Bash", { command: "touch bypassed.txt", description: "touch" })),
          reply(text("done"))
        )
        const { sessionId, modes } = yield* client.newSession(cwd)
        expect(modes?.currentModeId).toBe("bypassPermissions")
        expect((yield* client.prompt(sessionId, "touch it")).stopReason).toBe("end_turn")
        expect(client.seen.permissions).toEqual([])
        expect(client.editor.calls).toEqual([])
        expect(fs.existsSync(path.join(cwd, "bypassed.txt"))).toBe(false)
        const results = (yield* server.requests).filter((r) => r.isMessages).flatMap((r) => r.toolResults)
        expect(JSON.stringify(results)).toContain("Denied by permission rule Bash(touch:*) (judged as the call ran)")
      })
  )

  live("a TodoWrite is the plan; max_tokens and refusal are their own stop reasons", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedModelServer.make()
      const { client, cwd } = yield* setup({ server })
      const { sessionId } = yield* client.newSession(cwd)
      const todos = [
        { content: "Write the tests", activeForm: "Writing the tests", status: "in_progress" },
        { content: "Ship it", activeForm: "Shipping it", status: "pending" }
      ]
      yield* client.prompt(sessionId, `TOOL TodoWrite ${JSON.stringify({ todos })}`)
      const plan = client.updatesOf(sessionId).find((u) => u.sessionUpdate === "plan")
      expect(plan).toEqual({
        sessionUpdate: "plan",
        entries: [
          { content: "Writing the tests", status: "in_progress", priority: "medium" },
          { content: "Ship it", status: "pending", priority: "medium" }
        ]
      })
      expect(toolCalls(client.updatesOf(sessionId))).toEqual([])
      // Claude Code retries a cut answer three times, and a refused one once, before it gives up
      const cut = { ...reply(text("cut")), stopReason: "max_tokens" as const }
      yield* server.addReplies(cut, cut, cut, cut)
      expect((yield* client.prompt(sessionId, "long")).stopReason).toBe("max_tokens")
      const refused = { ...reply(text("no")), stopReason: "refusal" as const }
      yield* server.addReplies(refused, refused)
      expect((yield* client.prompt(sessionId, "bad")).stopReason).toBe("refusal")
    }))
})
