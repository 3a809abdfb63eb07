// An ACP client for the tests: the ACP SDK's own client (`@agentclientprotocol/sdk`, the library editors embed)
// connected to the agent binary over the real stdio of a spawned process.
import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Sink from "effect/Sink"
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Readable, Writable } from "node:stream"
import { Acp } from "effect-claude-agent/acp"

/** The binary's source (the tarball check runs the built one). */
export const BIN = path.join(import.meta.dirname, "..", "..", "src", "bin", "acp.ts")

/**
 * The binary's source as one JavaScript file (our modules bundled by esbuild, packages left to node_modules), built
 * once per test process: an agent then starts in ~0.6 s of CPU instead of ~1.5 s through tsx's loader, for the ~20
 * agents a run starts.
 */
const bundledBin: () => Promise<string> = (() => {
  let built: Promise<string> | undefined
  return () =>
    built ??= import("esbuild").then(async (esbuild) => {
      // one file for every test process, each build written aside and renamed over it (a rename is atomic)
      const outfile = path.join(import.meta.dirname, "..", "..", ".tmp", "acp-bin", "acp.mjs")
      const written = `${outfile}.${process.pid}.mjs`
      await esbuild.build({
        entryPoints: [BIN],
        outfile: written,
        bundle: true,
        packages: "external",
        platform: "node",
        target: "node20",
        format: "esm",
        sourcemap: "inline",
        logLevel: "warning"
      })
      // esbuild's service process would outlive the build (the tests count the processes they leave behind)
      await esbuild.stop()
      fs.renameSync(written, outfile)
      return outfile
    })
})()

/** A spawned agent process. */
export interface AgentProcess {
  readonly child: ChildProcessWithoutNullStreams
  /** Resolves with the exit code (or the signal) when the process has exited. */
  readonly exited: Promise<number | string>
  readonly stderr: () => string
}

/**
 * Spawns the agent with `env` added to this process's environment. The scope's release ends its stdin (the client
 * goes) and waits for it to exit; a process still alive 20 seconds later is killed, and the test fails (the
 * agent must exit when its client goes).
 */
export const spawnAgent = (env: Readonly<Record<string, string>>, args: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.map(Effect.promise(bundledBin), (bin): AgentProcess => {
      const child = spawn(process.execPath, ["--enable-source-maps", bin, ...args], {
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (chunk: string) => {
        stderr += chunk
      })
      const exited = new Promise<number | string>((resolve) =>
        child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"))
      )
      return { child, exited, stderr: () => stderr }
    }),
    (agent) =>
      Effect.promise(async () => {
        agent.child.stdin.end()
        const timer = setTimeout(() => agent.child.kill("SIGKILL"), 20_000)
        const code = await agent.exited
        clearTimeout(timer)
        if (code === "SIGKILL") throw new Error(`the agent did not exit after its client went:\n${agent.stderr()}`)
      })
  )

/** What the client saw. */
export interface Seen {
  readonly updates: Array<acp.SessionNotification>
  readonly permissions: Array<acp.RequestPermissionRequest>
}

/** How the test client answers a permission request (default: the first `allow_once` option). */
export type PermissionAnswer = (
  request: acp.RequestPermissionRequest,
  signal: AbortSignal
) => Promise<acp.RequestPermissionResponse>

export const choose = (kind: acp.PermissionOptionKind): PermissionAnswer => (request) => {
  const option = request.options.find((o) => o.kind === kind)
  return Promise.resolve(
    option === undefined
      ? { outcome: { outcome: "cancelled" } }
      : { outcome: { outcome: "selected", optionId: option.optionId } }
  )
}

/** A client connected to the agent's stdio; `answer` can be swapped during a test. */
export const connect = (agent: AgentProcess, clientCapabilities: acp.ClientCapabilities = {}) =>
  connectStreams(
    Writable.toWeb(agent.child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(agent.child.stdout) as ReadableStream<Uint8Array>,
    clientCapabilities
  )

/**
 * `Acp.serve` in this process (a host that lives on after its client goes), with a client over in-memory streams.
 * `disconnect` ends the agent's input, as a client that goes away; `served` is the fiber of `serve`.
 */
export const serveInProcess = (options: Acp.Options, clientCapabilities: acp.ClientCapabilities = {}) =>
  Effect.gen(function*() {
    const input = yield* Mailbox.make<Uint8Array>()
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined
    const fromAgent = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c
      }
    })
    const output = Sink.forEach((chunk: Uint8Array) => Effect.sync(() => controller?.enqueue(chunk)))
    const served = yield* Effect.fork(Acp.serve(Mailbox.toStream(input), output, options))
    const toAgent = new WritableStream<Uint8Array>({
      write: (chunk) => void Effect.runSync(input.offer(chunk))
    })
    const client = connectStreams(toAgent, fromAgent, clientCapabilities)
    yield* client.initialize
    return { client, served, disconnect: input.end }
  })

/** A terminal of the test editor: a process it runs for the agent. */
interface EditorTerminal {
  readonly child: ChildProcess
  output: string
  readonly exited: Promise<acp.TerminalExitStatus>
}

/**
 * What the test editor does for the agent when it offers `fs` and `terminal`: reads come from its (unsaved) buffers,
 * else the disk; writes go to its buffers, not the disk; terminals are processes it runs.
 */
export interface Editor {
  readonly buffers: Map<string, string>
  readonly calls: Array<{ readonly method: string; readonly params: unknown }>
  readonly terminals: Map<string, EditorTerminal>
}

const makeEditor = (): Editor => ({ buffers: new Map(), calls: [], terminals: new Map() })

const serveEditor = (app: acp.ClientApp, editor: Editor): acp.ClientApp => {
  let next = 0
  const terminal = (id: string) => {
    const t = editor.terminals.get(id)
    if (t === undefined) throw acp.RequestError.invalidParams({ terminalId: id }, "no such terminal")
    return t
  }
  const exitStatus = (t: EditorTerminal): acp.TerminalExitStatus | null =>
    t.child.exitCode === null && t.child.signalCode === null
      ? null
      : { exitCode: t.child.exitCode, signal: t.child.signalCode }
  return app
    .onRequest("fs/read_text_file", ({ params }) => {
      editor.calls.push({ method: "fs/read_text_file", params })
      const content = editor.buffers.get(params.path) ?? fs.readFileSync(params.path, "utf8")
      const lines = content.split("\n")
      const first = (params.line ?? 1) - 1
      return { content: lines.slice(first, params.limit == null ? undefined : first + params.limit).join("\n") }
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      editor.calls.push({ method: "fs/write_text_file", params })
      editor.buffers.set(params.path, params.content)
      return {}
    })
    .onRequest("terminal/create", ({ params }) => {
      editor.calls.push({ method: "terminal/create", params })
      const child = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? process.cwd(),
        stdio: ["ignore", "pipe", "pipe"]
      })
      const t: EditorTerminal = {
        child,
        output: "",
        exited: new Promise((resolve) => child.once("exit", (exitCode, signal) => resolve({ exitCode, signal })))
      }
      const append = (chunk: Buffer) => {
        t.output += chunk.toString("utf8")
      }
      child.stdout?.on("data", append)
      child.stderr?.on("data", append)
      const terminalId = `term-${next++}`
      editor.terminals.set(terminalId, t)
      return { terminalId }
    })
    .onRequest("terminal/output", ({ params }) => {
      const t = terminal(params.terminalId)
      return { output: t.output, truncated: false, exitStatus: exitStatus(t) }
    })
    .onRequest("terminal/wait_for_exit", async ({ params }) => terminal(params.terminalId).exited)
    // an editor that answers a kill once its command is gone (SIGKILL is delivered after kill() returns)
    .onRequest("terminal/kill", async ({ params }) => {
      editor.calls.push({ method: "terminal/kill", params })
      const t = terminal(params.terminalId)
      t.child.kill("SIGKILL")
      await t.exited
      return {}
    })
    .onRequest("terminal/release", ({ params }) => {
      editor.calls.push({ method: "terminal/release", params })
      terminal(params.terminalId).child.kill("SIGKILL")
      editor.terminals.delete(params.terminalId)
      return {}
    })
}

const connectStreams = (
  toAgent: WritableStream<Uint8Array>,
  fromAgent: ReadableStream<Uint8Array>,
  clientCapabilities: acp.ClientCapabilities
) => {
  const editor = makeEditor()
  const seen: Seen = { updates: [], permissions: [] }
  const state: { answer: PermissionAnswer } = { answer: choose("allow_once") }
  const app = acp.client({ name: "effect-claude-agent-test" })
    .onNotification("session/update", ({ params }) => {
      seen.updates.push(params)
    })
    .onRequest("session/request_permission", ({ params, signal }) => {
      seen.permissions.push(params)
      return state.answer(params, signal)
    })
  const connection = serveEditor(app, editor).connect(acp.ndJsonStream(toAgent, fromAgent))
  const request = <A>(f: (agent: acp.ClientContext) => Promise<A>) =>
    Effect.tryPromise({ try: () => f(connection.agent), catch: (error) => error })
  const initialize = request((a) =>
    a.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities })
  )
  return {
    seen,
    editor,
    connection,
    request,
    initialize,
    setAnswer: (answer: PermissionAnswer) => {
      state.answer = answer
    },
    newSession: (cwd: string) => request((a) => a.request("session/new", { cwd, mcpServers: [] })),
    prompt: (sessionId: string, text: string) =>
      request((a) => a.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] })),
    cancel: (sessionId: string) => request((a) => a.notify("session/cancel", { sessionId })),
    /** The updates of one session, in order. */
    updatesOf: (sessionId: string) => seen.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update)
  }
}

/** The text of the agent's message chunks. */
export const agentText = (updates: ReadonlyArray<acp.SessionUpdate>): string =>
  updates.flatMap((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [])
    .join("")

/** The error code of a rejected ACP request (`RequestError`), if it is one. */
export const errorCode = (error: unknown): number | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "number"
    ? error.code
    : undefined
