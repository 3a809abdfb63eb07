import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AgentError, AgentOptions, ClaudeAgent, Hooks, Transport } from "effect-claude-agent"
import * as promise from "effect-claude-agent/promise"
import { ScriptedCli } from "effect-claude-agent/testing"
import { capturePromiseLogs, expectLogs } from "./support/logs.js"
import { NodeExecutor } from "./support/process.js"

/** Options as a careless caller (plain JavaScript, a cast) may pass them. */
const raw = (options: unknown): AgentOptions.Options => options as AgentOptions.Options

/** Promise API options as a careless caller may pass them. */
const rawPromise = (options: unknown): promise.Options => options as promise.Options

/** A transport that counts how often it was asked to start a CLI, and never starts one. */
const counting = () => {
  const state = { opened: 0 }
  const layer = Layer.succeed(Transport.Transport, {
    open: () => Effect.sync(() => state.opened++).pipe(Effect.zipRight(Effect.die("must not open")))
  })
  return { state, layer }
}

// [family, options, the option named, what the reason says]
const rejected: ReadonlyArray<readonly [string, unknown, string, RegExp]> = [
  ["enum: permissionMode", { permissionMode: "yolo" }, "permissionMode", /"acceptEdits".*actual "yolo"/],
  ["enum: effort", { effort: "huge" }, "effort", /actual "huge"/],
  ["enum: thinking type", { thinking: { type: "on" } }, "thinking", /type: Expected "adaptive" \| "enabled"/],
  ["outputFormat without a schema", { outputFormat: { type: "json_schema" } }, "outputFormat", /schema: is missing/],
  ["outputFormat of another type", { outputFormat: { type: "text", schema: {} } }, "outputFormat", /"json_schema"/],
  ["sessionId not a UUID", { sessionId: "abc" }, "sessionId", /UUID/],
  ["env: a number", { env: { FOO: 1 } }, "env", /^FOO: Expected string, actual 1$/],
  ["env: an object", { env: { FOO: { a: 1 } } }, "env", /^FOO: Expected string/],
  ["env: null", { env: { FOO: null } }, "env", /^FOO: Expected string, actual null$/],
  ["env: a NUL byte in a value", { env: { FOO: "a\0b" } }, "env", /NUL/],
  ["env: = in a name", { env: { "A=B": "x" } }, "env", /not an environment variable name/],
  ["env: NUL in a name", { env: { "A\0": "x" } }, "env", /not an environment variable name/],
  ["env: not a record", { env: "FOO=1" }, "env", /actual "FOO=1"/],
  ["allowedTools: a string", { allowedTools: "Bash" }, "allowedTools", /Expected Array<string>, actual "Bash"/],
  ["disallowedTools: a string", { disallowedTools: "Bash" }, "disallowedTools", /Expected Array<string>/],
  ["mcpServers: unknown type", { mcpServers: { x: { type: "ws", url: "ws://x" } } }, "mcpServers", /^x: Expected Mcp/],
  ["mcpServers: no command", { mcpServers: { x: { args: [] } } }, "mcpServers", /^x\.command: is missing$/],
  ["mcpServers: no url", { mcpServers: { x: { type: "http" } } }, "mcpServers", /^x\.url: is missing$/],
  ["mcpServers: a bad url", { mcpServers: { x: { type: "sse", url: "nope" } } }, "mcpServers", /not a URL/],
  ["mcpServers: null", { mcpServers: { x: null } }, "mcpServers", /actual null/],
  ["mcpServers: sdk without instance", { mcpServers: { x: { type: "sdk", name: "x" } } }, "mcpServers", /instance/],
  ["settings: bad JSON", { settings: "{bad" }, "settings", /not valid JSON/],
  ["settings: JSON not an object", { settings: "{}x" }, "settings", /not valid JSON/],
  ["settings: a number", { settings: 3 }, "settings", /actual 3/],
  ["positive integer: maxTurns 0", { maxTurns: 0 }, "maxTurns", /positive integer, got 0/],
  ["positive integer: maxTurns 1.5", { maxTurns: 1.5 }, "maxTurns", /positive integer/],
  ["positive integer: maxTurns string", { maxTurns: "3" }, "maxTurns", /Expected number/],
  ["non-negative integer: maxThinkingTokens", { maxThinkingTokens: -1 }, "maxThinkingTokens", /non-negative/],
  ["positive number: maxBudgetUsd", { maxBudgetUsd: 0 }, "maxBudgetUsd", /positive number/],
  ["positive number: maxBudgetUsd NaN", { maxBudgetUsd: Number.NaN }, "maxBudgetUsd", /positive number/],
  ["positive integer: taskBudget", { taskBudget: { total: 0 } }, "taskBudget", /^total: must be a positive/],
  ["positive integer: messageBufferSize", { messageBufferSize: 0 }, "messageBufferSize", /positive integer/],
  ["milliseconds: closeGraceMillis", { closeGraceMillis: -5 }, "closeGraceMillis", /milliseconds/],
  ["duration: idleTimeout", { idleTimeout: "soon" }, "idleTimeout", /^not a duration: "soon" \(or "infinity"\)$/],
  ["agents: no prompt", { agents: { a: { description: "d" } } }, "agents", /^a\.prompt: is missing$/],
  ["agents: maxTurns", { agents: { a: { description: "d", prompt: "p", maxTurns: 0 } } }, "agents", /a\.maxTurns/],
  ["plugins: unknown type", { plugins: [{ type: "remote", path: "x" }] }, "plugins", /^0\.type: Expected "local"/],
  ["plugins: not an array", { plugins: { type: "local", path: "x" } }, "plugins", /Expected Array/],
  ["additionalDirectories: a string", { additionalDirectories: "/tmp" }, "additionalDirectories", /Array<string>/],
  ["extraArgs: a number", { extraArgs: { verbose: 1 } }, "extraArgs", /^verbose: Expected string/],
  ["extraArgs: a dashed name", { extraArgs: { "--x": null } }, "extraArgs", /not a flag name/],
  ["cwd: empty", { cwd: "" }, "cwd", /non-empty/],
  ["cwd: a number", { cwd: 1 }, "cwd", /Expected string/],
  ["skills: a bad name", { skills: ["a b"] }, "skills", /invalid skill name/],
  ["systemPrompt: unknown preset", { systemPrompt: { type: "preset", preset: "x" } }, "systemPrompt", /claude_code/],
  ["autoResume: bad", { autoResume: { maxRestarts: -1 } }, "autoResume", /maxRestarts/],
  ["a function expected", { stderr: "log" }, "stderr", /Expected function/],
  ["rule between options", { model: "a", fallbackModel: "a" }, "fallbackModel", /must differ from model/],
  ["not an object", "fast", "options", /must be an object, got "fast"/]
]

/** Every shape the official SDK's `Options` accepts (sdk.d.ts), and this SDK's own. */
const accepted: Omit<AgentOptions.Options, "onElicitation" | "onUserDialog"> = {
  model: "sonnet",
  fallbackModel: "haiku",
  thinking: { type: "enabled", budgetTokens: 1024, display: "omitted" },
  maxThinkingTokens: 0,
  effort: "xhigh",
  betas: ["context-1m-2025-08-07"],
  outputFormat: { type: "json_schema", schema: { type: "object" } },
  maxTurns: 3,
  maxBudgetUsd: 0.5,
  taskBudget: { total: 1000 },
  additionalDirectories: ["/tmp"],
  env: { FOO: "1", REMOVED: undefined, EMPTY: "" },
  envMode: "overlay",
  executableArgs: ["--no-warnings"],
  extraArgs: { verbose: null, "debug-to-stderr": "x" },
  stderr: () => undefined,
  debug: false,
  allowedTools: ["Read", "Bash(npm test:*)"],
  disallowedTools: [],
  tools: { type: "preset", preset: "claude_code" },
  permissionMode: "plan",
  permissionPrompts: "host",
  skills: "all",
  toolAliases: { A: "B" },
  toolConfig: { askUserQuestion: { previewFormat: "html" } },
  systemPrompt: { type: "custom", prompt: ["a", "b"] },
  agents: {
    reviewer: { description: "d", prompt: "p", effort: 3, mcpServers: ["x", { y: {} }], tools: ["Read"] }
  },
  settingSources: [],
  settings: "{\"permissions\":{\"allow\":[]}}",
  managedSettings: {},
  plugins: [{ type: "local", path: "/tmp/plugin", skipMcpDiscovery: true }],
  mcpServers: {
    plain: { command: "node", args: ["s.js"], env: { TOKEN: "t" }, timeout: 5000 },
    stdio: { type: "stdio", command: "node" },
    web: { type: "http", url: "https://example.com/mcp", headers: { A: "b" } },
    events: { type: "sse", url: "http://127.0.0.1:1/sse" },
    local: {
      type: "sdk",
      name: "local",
      instance: { connect: () => Promise.resolve(), close: () => Promise.resolve() }
    }
  },
  strictMcpConfig: true,
  resume: "not-a-uuid-is-fine-for-resume",
  forkSession: true,
  sessionId: "123e4567-e89b-12d3-a456-426614174000",
  persistSession: false,
  includePartialMessages: true,
  controlRequestTimeout: "infinity",
  initializeTimeout: 30_000,
  idleTimeout: "5 minutes",
  interruptTimeout: "1 second",
  closeGraceMillis: 0,
  autoResume: Schedule.recurs(2),
  messageBufferSize: 16
}

describe("options are validated before anything is spawned (Effect API)", () => {
  for (const [family, options, option, reason] of rejected) {
    it.effect(family, () =>
      Effect.gen(function*() {
        const { layer, state } = counting()
        const error = yield* ClaudeAgent.query("x", raw(options)).pipe(
          Stream.runDrain,
          Effect.flip,
          Effect.provide(layer)
        )
        expect(error).toBeInstanceOf(AgentError.InvalidOptions)
        expect(error).toMatchObject({ _tag: "InvalidOptions", option })
        expect((error as AgentError.InvalidOptions).description).toMatch(reason)
        expect(state.opened).toBe(0)
      }))
  }

  it.effect("a session fails the same way, before it opens a CLI", () =>
    Effect.gen(function*() {
      const { layer, state } = counting()
      const error = yield* ClaudeAgent.session(raw({ env: { FOO: { a: 1 } } })).pipe(
        Effect.scoped,
        Effect.flip,
        Effect.provide(layer)
      )
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "env" })
      expect(state.opened).toBe(0)
    }))

  it.effect("the official SDK's shapes are accepted", () =>
    Effect.gen(function*() {
      const launch = yield* AgentOptions.toLaunch(accepted)
      // `undefined` unsets; a custom system prompt is sent as the system prompt
      expect(launch.env).toMatchObject({ FOO: "1", REMOVED: undefined })
      expect(launch.initialize["systemPrompt"]).toStrictEqual(["a", "b"])
    }))

  it.effect("an Effect Schema as outputFormat.schema, and unknown extra fields, are accepted", () =>
    Effect.gen(function*() {
      const launch = yield* AgentOptions.toLaunch(raw({
        outputFormat: { type: "json_schema", schema: Schema.Struct({ a: Schema.String }) },
        someFutureOption: 1
      }))
      expect(launch.args.some((a) => a.startsWith("--json-schema="))).toBe(true)
    }))
})

describe("options are validated before anything is spawned (Promise API)", () => {
  for (const [family, options, option, reason] of rejected.filter(([, options]) => typeof options === "object")) {
    it(family, async () => {
      const { layer, state } = counting()
      const q = promise.query({ prompt: "x", options: { ...(options as object), transport: layer } })
      await expect(q.next()).rejects.toSatisfy((error: unknown) =>
        error instanceof promise.InvalidOptions && error.option === option && reason.test(error.description)
      )
      expect(state.opened).toBe(0)
    })
  }

  // each of these made query() throw synchronously (a TypeError), or passed unchecked
  const promiseOnly: ReadonlyArray<readonly [string, unknown, string]> = [
    ["abortController: {}", { abortController: {} }, "abortController"],
    ["hooks: not a record", { hooks: "PreToolUse" }, "hooks"],
    ["hooks: matchers not an array", { hooks: { PreToolUse: { hooks: [] } } }, "hooks"],
    ["hooks: a callback that is not a function", { hooks: { PreToolUse: [{ hooks: ["x"] }] } }, "hooks"],
    ["canUseTool: not a function", { canUseTool: true }, "canUseTool"],
    ["permissionTimeoutMs: negative", { permissionTimeoutMs: -1 }, "permissionTimeoutMs"],
    ["transport: not a Layer", { transport: {} }, "transport"],
    ["options: a number", 5, "options"]
  ]
  for (const [family, options, option] of promiseOnly) {
    it(`${family}: no synchronous throw; the iterator and the methods reject with InvalidOptions`, async () => {
      let q: promise.Query | undefined
      expect(() => {
        q = promise.query({ prompt: "x", options: options as promise.Options })
      }).not.toThrow()
      await expect(q!.next()).rejects.toMatchObject({ _tag: "InvalidOptions", option })
      await expect(q!.interrupt()).rejects.toMatchObject({ _tag: "InvalidOptions", option })
      await q!.close()
    })
  }

  it("query() without params: no synchronous throw", async () => {
    let q: promise.Query | undefined
    expect(() => {
      q = promise.query(undefined as never)
    }).not.toThrow()
    await expect(q!.next()).rejects.toMatchObject({ _tag: "InvalidOptions", option: "prompt" })
  })

  it("startup() rejects with InvalidOptions, and does not throw", async () => {
    const { layer, state } = counting()
    await expect(promise.startup({ options: { permissionMode: "yolo" as "plan", transport: layer } })).rejects
      .toMatchObject({ _tag: "InvalidOptions", option: "permissionMode" })
    expect(state.opened).toBe(0)
  })

  it("the official SDK's shapes are accepted (hooks, abortController, canUseTool)", async () => {
    const { layer, state } = counting()
    const q = promise.query({
      prompt: "x",
      options: {
        ...accepted,
        abortController: new AbortController(),
        canUseTool: () => Promise.resolve({ behavior: "allow" }),
        permissionTimeoutMs: Infinity,
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => Promise.resolve({})], timeout: 5 }] },
        transport: layer
      }
    })
    // the options passed: the query got as far as opening a CLI
    await expect(q.next()).rejects.toThrow()
    expect(state.opened).toBe(1)
    await q.close()
  })
})

describe("cwd is checked with the file system before anything is spawned", () => {
  const TransportLive = Transport.layerProcess.pipe(Layer.provide(NodeExecutor))
  const open = (cwd: string) =>
    Effect.gen(function*() {
      const transport = yield* Transport.Transport
      // an executable that does not exist: the cwd must fail first (else this is CliNotFound)
      return yield* transport.open({ args: [], cwd, executable: "/nonexistent/claude" })
    }).pipe(Effect.scoped, Effect.flip, Effect.provide(TransportLive))

  it.effect("a directory that does not exist", () =>
    Effect.gen(function*() {
      const cwd = path.join(os.tmpdir(), "eca-no-such-dir-" + process.pid)
      const error = yield* open(cwd)
      expect(error).toStrictEqual(
        new AgentError.InvalidOptions({ option: "cwd", description: `${cwd} does not exist` })
      )
    }))

  it.effect("a file", () =>
    Effect.gen(function*() {
      const file = path.join(os.tmpdir(), `eca-cwd-file-${process.pid}`)
      fs.writeFileSync(file, "")
      const error = yield* open(file).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(file))))
      expect(error).toStrictEqual(
        new AgentError.InvalidOptions({ option: "cwd", description: `${file} is not a directory` })
      )
    }))

  it("the Promise API: InvalidOptions, no CLI", async () => {
    const q = promise.query({ prompt: "x", options: { cwd: "/nonexistent/dir" } })
    await expect(q.next()).rejects.toMatchObject({ _tag: "InvalidOptions", option: "cwd" })
  })
})

describe("setMcpServers checks its configs as the mcpServers option is checked", () => {
  it.scoped("a malformed config is InvalidOptions (it was a TypeError)", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) => Effect.zipRight(cli.init(), cli.stall))
      const error = yield* Effect.gen(function*() {
        const session = yield* ClaudeAgent.session()
        yield* session.initializationResult
        return yield* Effect.flip(session.setMcpServers(raw({ mcpServers: { x: null } }).mcpServers!))
      }).pipe(Effect.provide(layer))
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "mcpServers" })
      expect((error as AgentError.InvalidOptions).description).toMatch(/^x: Expected Mcp/)
    }))
})

describe("every problem of one call at once", () => {
  const rejectedBy = (options: unknown, layer: Layer.Layer<Transport.Transport> = counting().layer) =>
    ClaudeAgent.query("x", raw(options)).pipe(Stream.runDrain, Effect.flip, Effect.provide(layer))

  it.effect("two bad fields: both are listed, option is the first (it reported only model)", () =>
    Effect.gen(function*() {
      const error = yield* rejectedBy({ permissionMode: "yolo", model: 5 })
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "model" })
      const problems = (error as AgentError.InvalidOptions).problems ?? []
      expect(problems.map((p) => p.option)).toStrictEqual(["model", "permissionMode"])
      expect(problems[1]!.description).toMatch(/actual "yolo"/)
      expect(error.message).toMatch(/^Invalid option model: Expected string, actual 5\nInvalid option permissionMode: /)
    }))

  it.effect("bad fields and broken rules between options are listed together", () =>
    Effect.gen(function*() {
      const error = yield* rejectedBy({ maxTurns: 0, resume: "a", continue: true, forkSession: 1 })
      const problems = (error as AgentError.InvalidOptions).problems ?? []
      expect(problems.map((p) => p.option)).toStrictEqual(["maxTurns", "forkSession", "resume"])
    }))

  it.effect("several problems inside one option are each listed", () =>
    Effect.gen(function*() {
      const error = yield* rejectedBy({ env: { A: 1, B: null } })
      const problems = (error as AgentError.InvalidOptions).problems ?? []
      expect(problems.map((p) => p.description)).toStrictEqual([
        "A: Expected string, actual 1",
        "B: Expected string, actual null"
      ])
    }))

  it("the Promise API lists them too", async () => {
    const { layer, state } = counting()
    const q = promise.query({
      prompt: "x",
      options: rawPromise({ permissionMode: "yolo", model: 5, transport: layer })
    })
    await expect(q.next()).rejects.toSatisfy((error: unknown) =>
      error instanceof promise.InvalidOptions &&
      JSON.stringify(error.problems?.map((p) => p.option)) === JSON.stringify(["model", "permissionMode"])
    )
    expect(state.opened).toBe(0)
  })
})

describe("an option this SDK does not know is ignored with one warning naming the nearest option", () => {
  it.effect("maxTurn: the query runs; one warning says maxTurns", () =>
    Effect.gen(function*() {
      const { layer, state } = counting()
      // the options passed: the query got as far as opening a CLI (which this transport refuses)
      const exit = yield* ClaudeAgent.query("x", raw({ maxTurn: 3, permission_mode: "plan", someFutureOption: 1 }))
        .pipe(
          Stream.runDrain,
          Effect.exit,
          Effect.provide(layer),
          expectLogs([
            /^WARN Unknown options, ignored: maxTurn \(did you mean maxTurns\?\), permission_mode \(did you mean permissionMode\?\), someFutureOption$/
          ])
        )
      expect(exit._tag).toBe("Failure")
      expect(state.opened).toBe(1)
    }))

  it("the Promise API warns through its logger", async () => {
    const { layer } = counting()
    const logs = capturePromiseLogs([/^warning Unknown option, ignored: maxTurn \(did you mean maxTurns\?\)$/])
    const q = promise.query({ prompt: "x", options: rawPromise({ maxTurn: 3, transport: layer, logger: logs.logger }) })
    await expect(q.next()).rejects.toThrow()
    await q.close()
    logs.check()
  })
})

describe("a hook event that does not exist is InvalidOptions naming it (it was a TypeError defect)", () => {
  const hooks = (registration: object) => Hooks.layer(registration as Hooks.HookRegistrations)

  it.effect("Effect API: PreToolUs", () =>
    Effect.gen(function*() {
      const { layer, state } = counting()
      const error = yield* ClaudeAgent.query("x").pipe(
        Stream.runDrain,
        Effect.flip,
        Effect.provide(Layer.merge(layer, hooks({ PreToolUs: [{ hooks: [() => Effect.succeed({})] }] })))
      )
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "hooks" })
      expect((error as AgentError.InvalidOptions).description).toMatch(
        /^"PreToolUs" is not a hook event \(did you mean PreToolUse\?\); the events are PreToolUse, PostToolUse, /
      )
      expect(state.opened).toBe(0)
    }))

  it("Promise API: the iterator rejects with InvalidOptions, nothing is spawned", async () => {
    const { layer, state } = counting()
    const q = promise.query({
      prompt: "x",
      options: rawPromise({
        transport: layer,
        hooks: { PreToolUs: [{ hooks: [() => Promise.resolve({})] }], Nope: [] }
      })
    })
    await expect(q.next()).rejects.toSatisfy((error: unknown) =>
      error instanceof promise.InvalidOptions && error.option === "hooks" &&
      /"PreToolUs" is not a hook event \(did you mean PreToolUse\?\)/.test(error.message) &&
      /"Nope" is not a hook event; the events are /.test(error.message)
    )
    expect(state.opened).toBe(0)
  })
})
