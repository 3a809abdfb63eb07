import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type AgentOptions, ClaudeAgent, type Transport } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

const SECRET = "sk-argv-secret-91c2"

/**
 * The flags an `Options` object can put on the command line, each reviewed: none carries settings, environment
 * variables, headers or prompts. `--settings` and `--mcp-config` carry only the path of a private file here. A new
 * flag in the Options → argv mapping fails the test below until it is added to this list (or kept off argv).
 */
const REVIEWED_FLAGS = new Set([
  "--effort",
  "--max-turns",
  "--max-budget-usd",
  "--task-budget",
  "--model",
  "--fallback-model",
  "--agent",
  "--permission-prompt-tool",
  "--permission-prompts",
  "--allowedTools",
  "--disallowedTools",
  "--tools",
  "--mcp-config",
  "--strict-mcp-config",
  "--setting-sources",
  "--permission-mode",
  "--allow-dangerously-skip-permissions",
  "--include-partial-messages",
  "--include-hook-events",
  "--add-dir",
  "--thinking",
  "--max-thinking-tokens",
  "--thinking-display",
  "--betas",
  "--json-schema",
  "--resume",
  "--continue",
  "--fork-session",
  "--session-id",
  "--resume-session-at",
  "--resume-drops-turn",
  "--no-session-persistence",
  "--settings",
  "--await-initialize",
  "--managed-settings-in-initialize",
  "--plugin-dir",
  "--plugin-dir-no-mcp",
  "--project-config-root",
  "--debug",
  "--debug-file",
  "--replay-user-messages"
])

const secretMcp = (name: string) => ({ mcpServers: { [name]: { command: "x", env: { TOKEN: SECRET } } } })

/**
 * Every option, set; secrets in every field that can hold settings, environment variables, headers or prompts.
 * `Required<Options>`: a new option does not compile until it is set here.
 */
const every: { readonly [K in keyof Required<AgentOptions.Options>]: AgentOptions.Options[K] } = {
  model: "sonnet",
  fallbackModel: "haiku",
  thinking: { type: "enabled", budgetTokens: 1024, display: "summarized" },
  maxThinkingTokens: 10,
  effort: "high",
  betas: ["context-1m-2025-08-07"],
  outputFormat: { type: "json_schema", schema: { type: "object" } },
  maxTurns: 3,
  maxBudgetUsd: 1,
  taskBudget: { total: 1000 },
  cwd: os.tmpdir(),
  additionalDirectories: ["/tmp"],
  env: { API_KEY: SECRET, ANTHROPIC_API_KEY: SECRET },
  envMode: "overlay",
  keepEnv: [],
  reapToolProcesses: true,
  pathToClaudeCodeExecutable: "/nonexistent/claude",
  executable: "node",
  executableArgs: [],
  extraArgs: {
    "replay-user-messages": null,
    "settings": `\n\t{"env":{"EXTRA":"${SECRET}"}}`,
    "mcp-config": `\uFEFF${JSON.stringify(secretMcp("extra"))}`
  },
  stderr: () => {},
  debug: true,
  debugFile: "/tmp/debug.log",
  allowedTools: ["Read"],
  disallowedTools: ["WebSearch"],
  tools: ["Read", "Bash"],
  permissionMode: "default",
  allowDangerouslySkipPermissions: true,
  permissionPromptToolName: "mcp__perm__ask",
  permissionPrompts: "host",
  skills: ["pdf"],
  toolAliases: { Shell: "Bash" },
  toolConfig: { askUserQuestion: { previewFormat: "markdown" } },
  systemPrompt: `system prompt ${SECRET}`,
  agents: {
    helper: {
      description: SECRET,
      prompt: SECRET,
      mcpServers: [{ inline: { command: "x", env: { TOKEN: SECRET } } }]
    }
  },
  agent: "helper",
  settingSources: ["user"],
  settings: { env: { SETTING: SECRET }, apiKeyHelper: `echo ${SECRET}` },
  managedSettings: { env: { MANAGED: SECRET }, permissions: { deny: [`Bash(${SECRET})`] } },
  sandbox: { enabled: true, network: { httpProxyPort: 1, note: SECRET } },
  plugins: [{ type: "local", path: "/plugins/a" }, { type: "local", path: "/plugins/b", skipMcpDiscovery: true }],
  pluginDelivery: "argv",
  planModeInstructions: SECRET,
  title: SECRET,
  projectConfigRoot: "/repo",
  mcpServers: {
    stdio: { command: "db-mcp", args: ["--verbose"], env: { DB_TOKEN: SECRET } },
    http: { type: "http", url: "https://mcp.example", headers: { Authorization: `Bearer ${SECRET}` } },
    sse: { type: "sse", url: "https://sse.example", headers: { "X-Api-Key": SECRET } }
  },
  mcpServersDelivery: "argv",
  strictMcpConfig: true,
  onElicitation: () => Effect.succeed({ action: "decline" }),
  onUserDialog: () => Effect.succeed({ behavior: "cancelled" }),
  supportedDialogKinds: ["refusal_fallback_prompt"],
  perTaskStopAffordance: true,
  resume: "00000000-0000-4000-8000-000000000001",
  continue: false,
  forkSession: true,
  sessionId: "00000000-0000-4000-8000-000000000002",
  resumeSessionAt: "00000000-0000-4000-8000-000000000003",
  resumeDropsTurn: "t",
  persistSession: false,
  enableFileCheckpointing: true,
  includePartialMessages: true,
  includeHookEvents: true,
  forwardSubagentText: true,
  promptSuggestions: true,
  agentProgressSummaries: true,
  verbatimPrompts: true,
  controlRequestTimeout: "1 minute",
  initializeTimeout: "1 minute",
  idleTimeout: "1 minute",
  firstMessageTimeout: "1 minute",
  interruptTimeout: "5 seconds",
  closeGraceMillis: 10,
  killGraceMillis: 10,
  maxLineBytes: 1024 * 1024,
  cliVersions: "*",
  autoResume: { maxRestarts: 1 },
  messageBufferSize: 16
}

/** The argv, private files and `initialize` request a session with these options gets. */
const launched = (options: AgentOptions.Options) =>
  Effect.gen(function*() {
    const seen = yield* Deferred.make<{
      spec: Transport.LaunchSpec
      files: Record<string, string>
      initialize: Record<string, unknown>
    }>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        const files: Record<string, string> = {}
        for (const file of cli.spec.args.filter((a) => a.startsWith(path.join(os.tmpdir(), "eca-args-")))) {
          expect(fs.statSync(file).mode & 0o777).toBe(0o600)
          expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
          files[file] = fs.readFileSync(file, "utf8")
        }
        const initialize = yield* cli.initialize
        yield* Deferred.succeed(seen, { spec: cli.spec, files, initialize })
      })
    )
    yield* ClaudeAgent.session(options).pipe(Effect.provide(layer))
    return yield* Deferred.await(seen)
  })

const flagsOf = (args: ReadonlyArray<string>) => args.filter((a) => a.startsWith("--")).map((a) => a.split("=")[0]!)

describe("no secret on argv (G12), whatever the options", () => {
  const variants: ReadonlyArray<readonly [string, AgentOptions.Options]> = [
    ["every option, settings as an object", every],
    ["settings as a JSON string with a byte order mark and whitespace", {
      ...every,
      settings: `\uFEFF  \r\n${JSON.stringify(every.settings)}  `
    }],
    ["settings as a JSON string, extraArgs in the --flag=value form", {
      ...every,
      settings: JSON.stringify(every.settings),
      extraArgs: {
        "settings": ` ${JSON.stringify({ env: { E: SECRET } })}`,
        "mcp-config": JSON.stringify(secretMcp("e"))
      }
    }]
  ]
  for (const [name, options] of variants) {
    it.scoped(name, () =>
      Effect.gen(function*() {
        const { files, initialize, spec } = yield* launched(options)
        expect(spec.args.join("\n")).not.toContain(SECRET)
        expect(flagsOf(spec.args).filter((flag) => !REVIEWED_FLAGS.has(flag))).toEqual([])
        // every --settings / --mcp-config value is a private file, which holds the secrets
        for (const [i, arg] of spec.args.entries()) {
          const value = arg === "--settings" || arg === "--mcp-config" ? spec.args[i + 1]! : undefined
          if (value !== undefined) expect(files[value]).toContain(SECRET)
        }
        expect(Object.keys(files).length).toBeGreaterThanOrEqual(4)
        expect(initialize["managedSettings"]).toEqual(every.managedSettings)
        expect(spec.env?.["API_KEY"]).toBe(SECRET)
      }))
  }

  it.scoped("a settings path stays a path; a JSON string that is not an object is InvalidOptions", () =>
    Effect.gen(function*() {
      const { files, spec } = yield* launched({ settings: "/etc/claude/settings.json" })
      expect(spec.args.slice(spec.args.indexOf("--settings"))).toEqual(["--settings", "/etc/claude/settings.json"])
      expect(files).toEqual({})
      for (const settings of [` [${JSON.stringify(SECRET)}]`, "{ not json", "\uFEFF[]"]) {
        const error = yield* Effect.flip(
          ClaudeAgent.session({ settings }).pipe(Effect.provide(ScriptedCli.layer(() => Effect.void)))
        )
        expect(error).toMatchObject({ _tag: "InvalidOptions", option: "settings" })
      }
    }))

  it.scoped("extraArgs that would put settings or prompts on the command line are InvalidOptions", () =>
    Effect.gen(function*() {
      for (const name of ["managed-settings", "--agents", "system-prompt=x", "append-system-prompt"]) {
        const error = yield* Effect.flip(
          ClaudeAgent.session({ extraArgs: { [name]: `{"env":{"A":"${SECRET}"}}` } }).pipe(
            Effect.provide(ScriptedCli.layer(() => Effect.void))
          )
        )
        expect(error).toMatchObject({ _tag: "InvalidOptions", option: "extraArgs" })
      }
    }))

  it.scoped("keepEnv reaches the transport; an unknown name is InvalidOptions", () =>
    Effect.gen(function*() {
      const { spec } = yield* launched({ keepEnv: ["CLAUDECODE"] })
      expect(spec.keepEnv).toEqual(["CLAUDECODE"])
      const error = yield* Effect.flip(
        // a JavaScript caller can pass any string
        ClaudeAgent.session({ keepEnv: JSON.parse(`["PATH"]`) }).pipe(
          Effect.provide(ScriptedCli.layer(() => Effect.void))
        )
      )
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "keepEnv" })
    }))
})
