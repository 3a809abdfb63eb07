/** @internal */
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { InvalidOptions } from "../AgentError.js"
import type { Extensions, Launch, McpServerConfig, Options } from "../AgentOptions.js"
import * as Message from "../Message.js"
import { isInlineJson, isRecord } from "./argv.js"
import { STRIPPED_ENV } from "./env.js"

const invalid = (option: string, reason: string) => Effect.fail(new InvalidOptions({ option, reason }))

const isPositiveInteger = (n: number) => Number.isInteger(n) && n > 0

const flag = (name: string, value: string | number) => `--${name}=${value}`

const json = (value: unknown) => JSON.stringify(value)

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text.trim())
  } catch {
    return undefined
  }
}

/**
 * `extraArgs` names refused because their value would sit on the command line, where every user of the machine can
 * read it, with the option that carries the same value off it. (`--settings` and `--mcp-config` are accepted: an
 * inline JSON value of theirs goes into a private file.)
 */
const EXTRA_ARGS_WITH_OPTIONS: Readonly<Record<string, string>> = {
  "managed-settings": "managedSettings",
  "agents": "agents",
  "system-prompt": "systemPrompt",
  "append-system-prompt": "systemPrompt",
  "append-subagent-system-prompt": "agents"
}

/**
 * The servers the CLI runs itself (all but `sdk` ones), as the CLI takes them: a stdio config without `type` gets
 * `type: "stdio"`. Used for `--mcp-config` and for `mcp_set_servers`.
 *
 * @internal
 */
export const processMcpServers = (servers: Readonly<Record<string, McpServerConfig>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [name, config] of Object.entries(servers)) {
    if (config.type === "sdk") continue
    out[name] = config.type === undefined ? { type: "stdio", ...config } : config
  }
  return out
}

/** @internal */
export const toLaunch = (options: Options, extensions: Extensions = {}): Effect.Effect<Launch, InvalidOptions> =>
  Effect.suspend(() => {
    const args: Array<string> = []
    const env: Record<string, string | undefined> = { ...options.env }
    const initialize: Record<string, unknown> = {}

    // --- validation ----------------------------------------------------------------------------------------------
    if (options.fallbackModel !== undefined && options.fallbackModel === options.model) {
      return invalid("fallbackModel", "must differ from model")
    }
    if (options.maxTurns !== undefined && !isPositiveInteger(options.maxTurns)) {
      return invalid("maxTurns", "must be a positive integer")
    }
    if (options.maxBudgetUsd !== undefined && !(options.maxBudgetUsd > 0)) {
      return invalid("maxBudgetUsd", "must be a positive number")
    }
    if (
      options.maxThinkingTokens !== undefined &&
      !(Number.isInteger(options.maxThinkingTokens) && options.maxThinkingTokens >= 0)
    ) {
      return invalid("maxThinkingTokens", "must be a non-negative integer")
    }
    if (options.resume !== undefined && options.continue === true) {
      return invalid("resume", "resume and continue are mutually exclusive")
    }
    if (
      options.sessionId !== undefined && (options.resume !== undefined || options.continue === true) &&
      options.forkSession !== true
    ) {
      return invalid("sessionId", "with resume or continue, sessionId requires forkSession: true")
    }
    if (options.forkSession === true && options.resume === undefined && options.continue !== true) {
      return invalid("forkSession", "forkSession requires resume or continue")
    }
    if (options.permissionPromptToolName !== undefined && extensions.permissionPromptStdio === true) {
      return invalid("permissionPromptToolName", "cannot be combined with a Permissions handler (canUseTool)")
    }
    // a settings string the CLI would read as JSON is parsed here, so that it goes into a private file like an object
    let settingsObject: Readonly<Record<string, unknown>> | undefined
    if (typeof options.settings === "string" && isInlineJson(options.settings)) {
      const parsed = parseJson(options.settings)
      if (!isRecord(parsed)) return invalid("settings", "a JSON string that is not a JSON object")
      settingsObject = parsed
    } else if (typeof options.settings === "object" && options.settings !== null) {
      settingsObject = options.settings
    }
    if (typeof options.settings === "string" && settingsObject === undefined && options.sandbox !== undefined) {
      return invalid("sandbox", "cannot be merged into settings given as a file path; pass settings as an object")
    }
    if (options.managedSettings !== undefined && !isRecord(options.managedSettings)) {
      return invalid("managedSettings", "must be a settings object")
    }
    for (const name of Object.keys(options.extraArgs ?? {})) {
      const option = EXTRA_ARGS_WITH_OPTIONS[name.replace(/^-+/, "").split("=")[0]!]
      if (option !== undefined) {
        return invalid("extraArgs", `--${name} would put its value on the command line; use the ${option} option`)
      }
    }
    for (const name of options.keepEnv ?? []) {
      if (!STRIPPED_ENV.includes(name)) {
        return invalid("keepEnv", `${JSON.stringify(name)} is not one of ${STRIPPED_ENV.join(", ")}`)
      }
    }
    if (options.permissionMode === "bypassPermissions" && options.allowDangerouslySkipPermissions !== true) {
      return invalid("permissionMode", "bypassPermissions requires allowDangerouslySkipPermissions: true")
    }
    for (const plugin of options.plugins ?? []) {
      if (plugin.type !== "local") return invalid("plugins", `unsupported plugin type ${String(plugin.type)}`)
    }
    if (options.skills !== undefined && options.skills !== "all") {
      for (const skill of options.skills) {
        if (!/^[\w:.-]+$/.test(skill)) return invalid("skills", `invalid skill name ${JSON.stringify(skill)}`)
      }
    }

    // --- argv ----------------------------------------------------------------------------------------------------
    if (options.effort !== undefined) args.push(flag("effort", options.effort))
    if (options.maxTurns !== undefined) args.push(flag("max-turns", options.maxTurns))
    if (options.maxBudgetUsd !== undefined) args.push(flag("max-budget-usd", options.maxBudgetUsd))
    if (options.taskBudget !== undefined) args.push(flag("task-budget", options.taskBudget.total))
    if (options.model !== undefined) args.push(flag("model", options.model))
    if (options.fallbackModel !== undefined) args.push(flag("fallback-model", options.fallbackModel))
    if (options.agent !== undefined) args.push(flag("agent", options.agent))

    if (extensions.permissionPromptStdio === true) args.push(flag("permission-prompt-tool", "stdio"))
    else if (options.permissionPromptToolName !== undefined) {
      args.push(flag("permission-prompt-tool", options.permissionPromptToolName))
    }
    if (options.permissionPrompts !== undefined) args.push(flag("permission-prompts", options.permissionPrompts))

    const allowedTools = [...(options.allowedTools ?? []), ...(extensions.allowedTools ?? [])]
    if (options.skills === "all") allowedTools.push("Skill")
    else if (options.skills !== undefined) for (const s of options.skills) allowedTools.push(`Skill(${s})`)
    if (allowedTools.length > 0) args.push(flag("allowedTools", allowedTools.join(",")))
    if (options.disallowedTools !== undefined && options.disallowedTools.length > 0) {
      args.push(flag("disallowedTools", options.disallowedTools.join(",")))
    }
    if (options.tools !== undefined) {
      args.push(flag("tools", Array.isArray(options.tools) ? options.tools.join(",") : "default"))
    }

    if (options.mcpServers !== undefined) {
      const external = processMcpServers(options.mcpServers)
      if (Object.keys(external).length > 0) args.push("--mcp-config", json({ mcpServers: external }))
    }
    if (options.strictMcpConfig === true) args.push("--strict-mcp-config")
    if (options.settingSources !== undefined) args.push(flag("setting-sources", options.settingSources.join(",")))
    if (options.permissionMode !== undefined) args.push(flag("permission-mode", options.permissionMode))
    if (options.allowDangerouslySkipPermissions === true) args.push("--allow-dangerously-skip-permissions")
    if (options.includePartialMessages === true) args.push("--include-partial-messages")
    if (options.includeHookEvents === true) args.push("--include-hook-events")
    for (const dir of options.additionalDirectories ?? []) args.push(flag("add-dir", dir))

    if (options.thinking !== undefined) {
      const t = options.thinking
      if (t.type === "disabled") args.push(flag("thinking", "disabled"))
      else if (t.type === "enabled" && t.budgetTokens !== undefined) args.push(flag("max-thinking-tokens", t.budgetTokens))
      else args.push(flag("thinking", "adaptive"))
      if (t.type !== "disabled" && t.display !== undefined) args.push(flag("thinking-display", t.display))
    } else if (options.maxThinkingTokens !== undefined) {
      args.push(
        options.maxThinkingTokens === 0
          ? flag("thinking", "disabled")
          : flag("max-thinking-tokens", options.maxThinkingTokens)
      )
    }
    if (options.betas !== undefined && options.betas.length > 0) args.push(flag("betas", options.betas.join(",")))
    if (options.outputFormat !== undefined) {
      const schema = Schema.isSchema(options.outputFormat.schema)
        ? JSONSchema.make(options.outputFormat.schema)
        : options.outputFormat.schema
      args.push(flag("json-schema", json(schema)))
      initialize["jsonSchema"] = schema
    }

    if (options.resume !== undefined) args.push(flag("resume", options.resume))
    if (options.continue === true) args.push("--continue")
    if (options.forkSession === true) args.push("--fork-session")
    if (options.sessionId !== undefined) args.push(flag("session-id", options.sessionId))
    if (options.resumeSessionAt !== undefined) args.push(flag("resume-session-at", options.resumeSessionAt))
    if (options.resumeDropsTurn !== undefined) args.push(flag("resume-drops-turn", options.resumeDropsTurn))
    if (options.persistSession === false) args.push("--no-session-persistence")

    if (options.settings !== undefined || options.sandbox !== undefined) {
      if (settingsObject === undefined && typeof options.settings === "string") {
        args.push("--settings", options.settings)
      } else {
        const settings: Record<string, unknown> = { ...settingsObject }
        if (options.sandbox !== undefined) {
          const sandbox = { ...options.sandbox }
          if (sandbox["enabled"] === true && sandbox["failIfUnavailable"] === undefined) {
            sandbox["failIfUnavailable"] = true
          }
          settings["sandbox"] = sandbox
        }
        args.push("--settings", json(settings))
      }
    }
    // the CLI reads `--managed-settings` only as JSON on the command line: they travel in `initialize` instead
    if (options.managedSettings !== undefined) {
      args.push("--await-initialize", "--managed-settings-in-initialize")
      initialize["managedSettings"] = options.managedSettings
    }
    for (const plugin of options.plugins ?? []) {
      args.push(flag(plugin.skipMcpDiscovery === true ? "plugin-dir-no-mcp" : "plugin-dir", plugin.path))
    }
    if (options.projectConfigRoot !== undefined) args.push(flag("project-config-root", options.projectConfigRoot))
    if (options.debug === true) args.push("--debug")
    if (options.debugFile !== undefined) args.push(flag("debug-file", options.debugFile))

    for (const [name, value] of Object.entries(options.extraArgs ?? {})) {
      if (value === null) args.push(`--${name}`)
      else if (value.startsWith("-")) args.push(`--${name}=${value}`)
      else args.push(`--${name}`, value)
    }

    // --- environment ---------------------------------------------------------------------------------------------
    if (options.enableFileCheckpointing === true) env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] = "true"
    const previewFormat = options.toolConfig?.askUserQuestion?.previewFormat
    if (previewFormat !== undefined) env["CLAUDE_CODE_QUESTION_PREVIEW_FORMAT"] = previewFormat

    // --- initialize ----------------------------------------------------------------------------------------------
    const sp = options.systemPrompt
    if (sp === undefined) initialize["systemPrompt"] = [""]
    else if (typeof sp === "string") initialize["systemPrompt"] = [sp]
    else if (Array.isArray(sp)) initialize["systemPrompt"] = [...sp]
    else if (typeof sp === "object" && "type" in sp) {
      if (sp.append !== undefined) initialize["appendSystemPrompt"] = sp.append
      if (sp.excludeDynamicSections !== undefined) initialize["excludeDynamicSections"] = sp.excludeDynamicSections
    }
    if (options.agents !== undefined) initialize["agents"] = options.agents
    if (options.title !== undefined) initialize["title"] = options.title
    if (options.skills !== undefined && options.skills !== "all") initialize["skills"] = options.skills
    if (options.promptSuggestions === true) initialize["promptSuggestions"] = true
    if (options.agentProgressSummaries === true) initialize["agentProgressSummaries"] = true
    if (options.forwardSubagentText === true) initialize["forwardSubagentText"] = true
    if (options.planModeInstructions !== undefined) initialize["planModeInstructions"] = options.planModeInstructions
    if (options.toolAliases !== undefined) initialize["toolAliases"] = options.toolAliases
    Object.assign(initialize, extensions.initialize)

    return Effect.succeed({ args, env, initialize })
  })

/** @internal */
export const userMessage = (options: Options, prompt: string | Message.UserMessage): Message.UserMessage => {
  const message = typeof prompt === "string" ? Message.userMessage(prompt) : prompt
  return options.verbatimPrompts === true && message.client_composed === undefined
    ? { ...message, client_composed: true }
    : message
}
