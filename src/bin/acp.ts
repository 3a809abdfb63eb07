#!/usr/bin/env node
/**
 * `effect-claude-agent-acp`: Claude Code as an Agent Client Protocol agent on stdio (see `Acp`). An editor spawns it
 * and talks ACP on its stdin and stdout; logs go to stderr. It exits when the editor closes its stdin, after every
 * Claude Code process it started is reaped.
 *
 * @internal
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { parseArgs } from "node:util"
import { Acp } from "../acp.js"
import type { AgentOptions } from "../index.js"
import { NodeClaudeAgent } from "../index.js"

const USAGE = `Usage: effect-claude-agent-acp [options]

Serves one Agent Client Protocol client on stdin/stdout with Claude Code.

Options:
  --model <model>               the model of new sessions (default: Claude Code's)
  --permission-mode <mode>      the initial mode: default, acceptEdits, plan, dontAsk, bypassPermissions
  --allow-bypass-permissions    offer the bypassPermissions mode (implied by --permission-mode bypassPermissions)
  --allow <rule>                a permission rule allowed without asking (repeatable), e.g. "Read" or "Bash(npm test:*)"
  --deny <rule>                 a permission rule denied without asking (repeatable), e.g. "Bash(rm:*)"
  --ask <rule>                  a permission rule always asked (repeatable)
  --permission-timeout <secs>   seconds the editor may take to answer a permission request (default 300)
  --no-editor-fs                Read, Write and Edit on the disk, even when the editor offers its file system
  --no-editor-terminal          commands in Claude Code's own shell, even when the editor offers terminals
  --log-level <level>           stderr log level: none, error, warning, info, debug (default warning)
  -h, --help                    this text

Environment: CLAUDE_CLI_PATH (the claude executable), ANTHROPIC_API_KEY and the other variables Claude Code reads.
`

const PERMISSION_MODES: ReadonlyArray<AgentOptions.PermissionMode> = [
  "default",
  "acceptEdits",
  "plan",
  "dontAsk",
  "bypassPermissions"
]

const fail = (message: string): never => {
  process.stderr.write(`effect-claude-agent-acp: ${message}\n\n${USAGE}`)
  process.exit(2)
}

const parse = () => {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      options: {
        model: { type: "string" },
        "permission-mode": { type: "string" },
        "allow-bypass-permissions": { type: "boolean" },
        allow: { type: "string", multiple: true },
        deny: { type: "string", multiple: true },
        ask: { type: "string", multiple: true },
        "permission-timeout": { type: "string" },
        "log-level": { type: "string" },
        "no-editor-fs": { type: "boolean" },
        "no-editor-terminal": { type: "boolean" },
        help: { type: "boolean", short: "h" }
      },
      strict: true,
      allowPositionals: false
    }).values
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error))
  }
}

const values = parse()
if (values.help === true) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const mode = values["permission-mode"]
const permissionMode = mode === undefined ? undefined : PERMISSION_MODES.find((m) => m === mode)
if (mode !== undefined && permissionMode === undefined) fail(`unknown permission mode ${mode}`)
const timeout = values["permission-timeout"] === undefined ? 300 : Number(values["permission-timeout"])
if (!Number.isFinite(timeout) || timeout <= 0) fail(`--permission-timeout takes a number of seconds`)
const LOG_LEVELS: Readonly<Record<string, LogLevel.LogLevel>> = {
  none: LogLevel.None,
  error: LogLevel.Error,
  warning: LogLevel.Warning,
  info: LogLevel.Info,
  debug: LogLevel.Debug
}
const logLevel = LOG_LEVELS[values["log-level"] ?? "warning"] ?? fail(`unknown log level ${values["log-level"]}`)

const program = Acp.serveStdio({
  options: {
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(permissionMode === undefined ? {} : { permissionMode }),
    ...(values["allow-bypass-permissions"] === true || permissionMode === "bypassPermissions"
      ? { allowDangerouslySkipPermissions: true }
      : {})
  },
  rules: { allow: values.allow ?? [], deny: values.deny ?? [], ask: values.ask ?? [] },
  permissionTimeout: `${timeout} seconds`,
  clientCapabilities: { fs: values["no-editor-fs"] !== true, terminal: values["no-editor-terminal"] !== true }
}).pipe(
  Effect.provide(Layer.merge(NodeClaudeAgent.layer, NodeClaudeAgent.layerSessionStore())),
  Logger.withMinimumLogLevel(logLevel)
)

NodeRuntime.runMain(program, {
  disablePrettyLogger: true,
  // the client is gone and every CLI is reaped: nothing may keep the process alive
  teardown: (exit, onExit) => {
    const code = exit._tag === "Success" ? 0 : 1
    onExit(code)
    process.exit(code)
  }
})
