import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { AgentError, AgentOptions, Message } from "effect-claude-agent"

const launch = (options: AgentOptions.Options, extensions?: AgentOptions.Extensions) =>
  Effect.runSync(AgentOptions.toLaunch(options, extensions))

// option → argv, as FEATURES.md §1 and PROTOCOL.md §1.1 record the official TS SDK's mapping
const argvCases: ReadonlyArray<readonly [string, AgentOptions.Options, ReadonlyArray<string>]> = [
  ["effort", { effort: "low" }, ["--effort=low"]],
  ["maxTurns", { maxTurns: 3 }, ["--max-turns=3"]],
  ["maxBudgetUsd", { maxBudgetUsd: 5 }, ["--max-budget-usd=5"]],
  ["taskBudget", { taskBudget: { total: 1000 } }, ["--task-budget=1000"]],
  ["model", { model: "claude-sonnet-4-5" }, ["--model=claude-sonnet-4-5"]],
  ["fallbackModel", { model: "a", fallbackModel: "b" }, ["--model=a", "--fallback-model=b"]],
  ["agent", { agent: "reviewer" }, ["--agent=reviewer"]],
  ["permissionPromptToolName", { permissionPromptToolName: "mcp__p__ask" }, ["--permission-prompt-tool=mcp__p__ask"]],
  ["permissionPrompts", { permissionPrompts: "none" }, ["--permission-prompts=none"]],
  ["allowedTools", { allowedTools: ["Read", "mcp__s__t"] }, ["--allowedTools=Read,mcp__s__t"]],
  ["disallowedTools", { disallowedTools: ["WebSearch"] }, ["--disallowedTools=WebSearch"]],
  ["tools list", { tools: ["Bash", "Read"] }, ["--tools=Bash,Read"]],
  ["tools empty", { tools: [] }, ["--tools="]],
  ["tools preset", { tools: { type: "preset", preset: "claude_code" } }, ["--tools=default"]],
  [
    "mcpServers (external)",
    { mcpServers: { stdiosrv: { command: "true", args: [] }, web: { type: "http", url: "http://x" } } },
    [
      "--mcp-config",
      "{\"mcpServers\":{\"stdiosrv\":{\"type\":\"stdio\",\"command\":\"true\",\"args\":[]},\"web\":{\"type\":\"http\",\"url\":\"http://x\"}}}"
    ]
  ],
  [
    "mcpServers (SSE with headers, passed through; in-process entries stay off argv)",
    {
      mcpServers: {
        events: {
          type: "sse",
          url: "https://mcp.example.com/sse",
          headers: { Authorization: "Bearer t" },
          timeout: 5000
        },
        calc: {
          type: "sdk",
          name: "calc",
          instance: { connect: () => Promise.resolve(), close: () => Promise.resolve() }
        }
      }
    },
    [
      "--mcp-config",
      "{\"mcpServers\":{\"events\":{\"type\":\"sse\",\"url\":\"https://mcp.example.com/sse\",\"headers\":" +
      "{\"Authorization\":\"Bearer t\"},\"timeout\":5000}}}"
    ]
  ],
  ["strictMcpConfig", { strictMcpConfig: true }, ["--strict-mcp-config"]],
  ["settingSources", { settingSources: ["project"] }, ["--setting-sources=project"]],
  ["settingSources empty", { settingSources: [] }, ["--setting-sources="]],
  ["permissionMode", { permissionMode: "acceptEdits" }, ["--permission-mode=acceptEdits"]],
  [
    "bypassPermissions",
    { permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true },
    ["--permission-mode=bypassPermissions", "--allow-dangerously-skip-permissions"]
  ],
  ["includePartialMessages", { includePartialMessages: true }, ["--include-partial-messages"]],
  ["includeHookEvents", { includeHookEvents: true }, ["--include-hook-events"]],
  ["additionalDirectories", { additionalDirectories: ["/tmp", "/var"] }, ["--add-dir=/tmp", "--add-dir=/var"]],
  ["thinking disabled", { thinking: { type: "disabled" } }, ["--thinking=disabled"]],
  ["thinking adaptive", { thinking: { type: "adaptive", display: "omitted" } }, [
    "--thinking=adaptive",
    "--thinking-display=omitted"
  ]],
  ["thinking enabled without budget", { thinking: { type: "enabled" } }, ["--thinking=adaptive"]],
  ["thinking enabled with budget", { thinking: { type: "enabled", budgetTokens: 2048 } }, [
    "--max-thinking-tokens=2048"
  ]],
  ["maxThinkingTokens 0", { maxThinkingTokens: 0 }, ["--thinking=disabled"]],
  ["maxThinkingTokens N", { maxThinkingTokens: 4096 }, ["--max-thinking-tokens=4096"]],
  ["thinking wins over maxThinkingTokens", { thinking: { type: "disabled" }, maxThinkingTokens: 10 }, [
    "--thinking=disabled"
  ]],
  ["betas", { betas: ["context-1m-2025-08-07"] }, ["--betas=context-1m-2025-08-07"]],
  ["outputFormat", { outputFormat: { type: "json_schema", schema: { type: "object" } } }, [
    "--json-schema={\"type\":\"object\"}"
  ]],
  ["resume", { resume: "abc" }, ["--resume=abc"]],
  ["continue", { continue: true }, ["--continue"]],
  ["forkSession", { resume: "abc", forkSession: true }, ["--resume=abc", "--fork-session"]],
  [
    "sessionId with fork",
    { resume: "abc", forkSession: true, sessionId: "00000000-0000-4000-8000-000000000001" },
    ["--resume=abc", "--fork-session", "--session-id=00000000-0000-4000-8000-000000000001"]
  ],
  ["sessionId", { sessionId: "00000000-0000-4000-8000-000000000001" }, [
    "--session-id=00000000-0000-4000-8000-000000000001"
  ]],
  ["resumeSessionAt", { resume: "abc", resumeSessionAt: "m1" }, ["--resume=abc", "--resume-session-at=m1"]],
  ["resumeDropsTurn", { resume: "abc", resumeDropsTurn: "" }, ["--resume=abc", "--resume-drops-turn="]],
  ["persistSession false", { persistSession: false }, ["--no-session-persistence"]],
  ["persistSession true", { persistSession: true }, []],
  ["settings object", { settings: { env: { HARNESS_SETTING: "1" } } }, [
    "--settings",
    "{\"env\":{\"HARNESS_SETTING\":\"1\"}}"
  ]],
  ["settings path", { settings: "/etc/claude.json" }, ["--settings", "/etc/claude.json"]],
  [
    "sandbox merged into settings",
    { settings: { a: 1 }, sandbox: { enabled: true } },
    ["--settings", "{\"a\":1,\"sandbox\":{\"enabled\":true,\"failIfUnavailable\":true}}"]
  ],
  ["managedSettings", { managedSettings: { x: true } }, ["--await-initialize", "--managed-settings-in-initialize"]],
  [
    "plugins",
    { plugins: [{ type: "local", path: "/p1" }, { type: "local", path: "/p2", skipMcpDiscovery: true }] },
    ["--plugin-dir=/p1", "--plugin-dir-no-mcp=/p2"]
  ],
  ["projectConfigRoot", { projectConfigRoot: "/repo" }, ["--project-config-root=/repo"]],
  ["debug", { debug: true, debugFile: "/tmp/d.log" }, ["--debug", "--debug-file=/tmp/d.log"]],
  [
    "extraArgs",
    { extraArgs: { "replay-user-messages": null, "some-flag": "v", neg: "-1" } },
    ["--replay-user-messages", "--some-flag", "v", "--neg=-1"]
  ],
  ["skills all", { skills: "all" }, ["--allowedTools=Skill"]],
  ["skills names", { allowedTools: ["Read"], skills: ["pdf"] }, ["--allowedTools=Read,Skill(pdf)"]],
  ["nothing", {}, []]
]

describe("AgentOptions.toLaunch: argv", () => {
  for (const [name, options, expected] of argvCases) {
    it(name, () => {
      expect(launch(options).args).toEqual(expected)
    })
  }

  it("a permission handler adds --permission-prompt-tool=stdio", () => {
    expect(launch({}, { permissionPromptStdio: true }).args).toEqual(["--permission-prompt-tool=stdio"])
  })

  it("prompts and large values never go to argv", () => {
    const big = "x".repeat(1024 * 1024)
    const agents = Object.fromEntries(
      Array.from(
        { length: 100 },
        (_, i) => [`agent${i}`, { description: big.slice(0, 1000), prompt: big.slice(0, 10_000) }]
      )
    )
    const result = launch({ systemPrompt: big, agents, title: big.slice(0, 100) })
    expect(result.args).toEqual([])
    expect(result.initialize["systemPrompt"]).toEqual([big])
    expect(Object.keys(result.initialize["agents"] as object)).toHaveLength(100)
  })
})

describe("AgentOptions.toLaunch: initialize", () => {
  it("the default system prompt is the official SDK's empty one", () => {
    expect(launch({}).initialize).toEqual({ systemPrompt: [""] })
  })

  it("systemPrompt variants", () => {
    expect(launch({ systemPrompt: "CUSTOM" }).initialize).toEqual({ systemPrompt: ["CUSTOM"] })
    expect(launch({ systemPrompt: ["a", "b"] }).initialize).toEqual({ systemPrompt: ["a", "b"] })
    expect(launch({ systemPrompt: { type: "preset", preset: "claude_code" } }).initialize).toEqual({})
    expect(launch({ systemPrompt: { type: "preset", preset: "claude_code", append: "APPEND" } }).initialize).toEqual({
      appendSystemPrompt: "APPEND"
    })
    expect(
      launch({ systemPrompt: { type: "preset", preset: "claude_code", excludeDynamicSections: true } }).initialize
    ).toEqual({ excludeDynamicSections: true })
  })

  it("initialize-only options", () => {
    const agents = { reviewer: { description: "Reviews code", prompt: "You review code.", tools: ["Read"] } }
    const schema = { type: "object", properties: { a: { type: "string" } } }
    expect(
      launch({
        agents,
        title: "T",
        skills: ["pdf"],
        promptSuggestions: true,
        agentProgressSummaries: true,
        forwardSubagentText: true,
        planModeInstructions: "plan well",
        toolAliases: { Bash: "mcp__ws__bash" },
        outputFormat: { type: "json_schema", schema }
      }).initialize
    ).toEqual({
      systemPrompt: [""],
      agents,
      title: "T",
      skills: ["pdf"],
      promptSuggestions: true,
      agentProgressSummaries: true,
      forwardSubagentText: true,
      planModeInstructions: "plan well",
      toolAliases: { Bash: "mcp__ws__bash" },
      jsonSchema: schema
    })
  })

  it("outputFormat takes an Effect Schema and sends its JSON Schema; Message.structuredOutput decodes the answer", () => {
    const Answer = Schema.Struct({ n: Schema.Int })
    const sent = launch({ outputFormat: { type: "json_schema", schema: Answer } })
    expect(sent.initialize["jsonSchema"]).toEqual(JSONSchema.make(Answer))
    expect(sent.args).toContain(`--json-schema=${JSON.stringify(JSONSchema.make(Answer))}`)
    const result = (structured_output: unknown): Message.ResultMessage => ({
      type: "result",
      subtype: "success",
      result: "",
      duration_ms: 1,
      duration_api_ms: 1,
      is_error: false,
      num_turns: 1,
      session_id: "s",
      uuid: "u",
      total_cost_usd: 0,
      usage: { input_tokens: 0, output_tokens: 0 },
      modelUsage: {},
      permission_denials: [],
      structured_output
    })
    expect(Effect.runSync(Message.structuredOutput(Answer)(result({ n: 4 })))).toEqual({ n: 4 })
    expect(Effect.runSync(Effect.flip(Message.structuredOutput(Answer)(result({ n: 4.5 }))))._tag).toBe("ParseError")
    expect(Effect.runSync(Effect.flip(Message.structuredOutput(Answer)(result(undefined))))._tag).toBe("ParseError")
  })

  it("extensions are merged into initialize and allowedTools", () => {
    const result = launch({ allowedTools: ["Read"] }, {
      initialize: { hooks: { PreToolUse: [] } },
      allowedTools: ["mcp__calc__add"]
    })
    expect(result.initialize).toEqual({ systemPrompt: [""], hooks: { PreToolUse: [] } })
    expect(result.args).toEqual(["--allowedTools=Read,mcp__calc__add"])
  })
})

describe("AgentOptions.toLaunch: env", () => {
  it("env overlay, file checkpointing, question preview format", () => {
    expect(
      launch({
        env: { A: "1", B: undefined },
        enableFileCheckpointing: true,
        toolConfig: { askUserQuestion: { previewFormat: "html" } }
      }).env
    ).toEqual({
      A: "1",
      B: undefined,
      CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: "true",
      CLAUDE_CODE_QUESTION_PREVIEW_FORMAT: "html"
    })
  })
})

describe("AgentOptions.toLaunch: validation", () => {
  const cases: ReadonlyArray<readonly [AgentOptions.Options, AgentOptions.Extensions, string]> = [
    [{ model: "a", fallbackModel: "a" }, {}, "fallbackModel"],
    [{ maxTurns: 0 }, {}, "maxTurns"],
    [{ maxTurns: 1.5 }, {}, "maxTurns"],
    [{ maxBudgetUsd: -1 }, {}, "maxBudgetUsd"],
    [{ maxThinkingTokens: -5 }, {}, "maxThinkingTokens"],
    [{ resume: "a", continue: true }, {}, "resume"],
    [{ resume: "a", sessionId: "b" }, {}, "sessionId"],
    [{ forkSession: true }, {}, "forkSession"],
    [{ permissionPromptToolName: "x" }, { permissionPromptStdio: true }, "permissionPromptToolName"],
    [{ settings: "/path.json", sandbox: { enabled: true } }, {}, "sandbox"],
    [{ permissionMode: "bypassPermissions" }, {}, "permissionMode"],
    [{ skills: ["bad name"] }, {}, "skills"]
  ]
  for (const [options, extensions, option] of cases) {
    it(`rejects ${JSON.stringify(options)}`, () => {
      const error = Effect.runSync(Effect.flip(AgentOptions.toLaunch(options, extensions)))
      expect(error).toBeInstanceOf(AgentError.InvalidOptions)
      expect(error.option).toBe(option)
    })
  }
})

describe("AgentOptions.userMessage", () => {
  it("verbatimPrompts adds client_composed", () => {
    expect(AgentOptions.userMessage({ verbatimPrompts: true }, "hi")).toMatchObject({ client_composed: true })
    expect(AgentOptions.userMessage({}, "hi")).not.toHaveProperty("client_composed")
  })
})
