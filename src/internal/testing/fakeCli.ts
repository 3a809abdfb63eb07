/** @internal */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import type { Options as AgentOptions } from "../../AgentOptions.js"
import type * as Api from "../../FakeCli.js"
import type { LaunchSpec } from "../../Transport.js"

/** @internal keep in sync with `fakeCliMain.js` */
export const SCENARIO_ENV = "EFFECT_CLAUDE_AGENT_FAKE_CLI"

// -------------------------------------------------------------------------------------------------
// locating the program
// -------------------------------------------------------------------------------------------------

/**
 * The program is plain JavaScript next to this module (`src/internal/testing/fakeCliMain.js` in this repository,
 * `dist/internal/testing/fakeCliMain.js` in the published package), so Node runs it as it is.
 *
 * @internal
 */
export const executable = (): { readonly executable: string; readonly executableArgs: ReadonlyArray<string> } => ({
  executable: fileURLToPath(new URL("./fakeCliMain.js", import.meta.url)),
  executableArgs: []
})

/** @internal */
export const env = (scenario: Api.Scenario): Record<string, string> => ({
  [SCENARIO_ENV]: JSON.stringify(scenario)
})

/** @internal */
export const options = (scenario: Api.Scenario, extra: AgentOptions = {}): AgentOptions => {
  const program = executable()
  return {
    ...extra,
    pathToClaudeCodeExecutable: program.executable,
    executableArgs: program.executableArgs,
    env: { ...extra.env, ...env(scenario) }
  }
}

/** @internal */
export const launch = (scenario: Api.Scenario, extra: Partial<LaunchSpec> = {}): LaunchSpec => {
  const program = executable()
  return {
    args: [],
    ...extra,
    executable: program.executable,
    executableArgs: program.executableArgs,
    env: { ...extra.env, ...env(scenario) }
  }
}

// -------------------------------------------------------------------------------------------------
// scenario constructors
// -------------------------------------------------------------------------------------------------

/** @internal */
export const scenario = (steps: ReadonlyArray<Api.Step>, options: Omit<Api.Scenario, "steps"> = {}): Api.Scenario => ({
  ...options,
  steps
})

/** @internal */
export const echo: Api.Step = { op: "echo" }

/** @internal */
export const echoScenario: Api.Scenario = { steps: [echo] }

const eolOf = (options?: { readonly eol?: Api.LineEnding }) => (options?.eol === undefined ? {} : { eol: options.eol })

/** @internal */
export const expectUser = (contains?: string): Api.Step =>
  contains === undefined ? { op: "expectUser" } : { op: "expectUser", contains }

/** @internal */
export const turn = (text: string): Api.Step => ({ op: "turn", text })

/** @internal */
export const init = (fields?: Api.JsonObject): Api.Step =>
  fields === undefined ? { op: "init" } : { op: "init", fields }

/** @internal */
export const assistant = (text: string, options?: { readonly eol?: Api.LineEnding }): Api.Step => ({
  op: "assistant",
  text,
  ...eolOf(options)
})

/** @internal */
export const result = (
  text = "done",
  fields?: Api.JsonObject,
  options?: { readonly eol?: Api.LineEnding }
): Api.Step => ({ op: "result", text, ...(fields === undefined ? {} : { fields }), ...eolOf(options) })

/** @internal */
export const emit = (frame: Api.JsonObject, options?: { readonly eol?: Api.LineEnding }): Api.Step => ({
  op: "emit",
  frame,
  ...eolOf(options)
})

/** @internal */
export const raw = (text: string): Api.Step => ({ op: "raw", text })

/** @internal */
export const malformed = (line = "this is not JSON"): Api.Step => raw(`${line}\n`)

/** @internal */
export const giantLine = (bytes: number): Api.Step => ({ op: "giantLine", bytes })

/** @internal */
export const splitUtf8 = (text: string, options?: { readonly pauseMs?: number }): Api.Step => ({
  op: "splitUtf8",
  text,
  ...(options?.pauseMs === undefined ? {} : { pauseMs: options.pauseMs })
})

/** @internal */
export const unknownMessage = (type = "fake_future_message", fields?: Api.JsonObject): Api.Step =>
  emit({ ...fields, type })

/** @internal */
export const stderr = (text: string, options?: { readonly repeat?: number }): Api.Step => ({
  op: "stderr",
  text,
  ...(options?.repeat === undefined ? {} : { repeat: options.repeat })
})

const FLOOD_LINE = 64 * 1024

/** @internal */
export const stderrFlood = (bytes: number): Api.Step =>
  stderr(`${"e".repeat(FLOOD_LINE - 1)}\n`, { repeat: Math.max(1, Math.ceil(bytes / FLOOD_LINE)) })

/** @internal */
export const sleep = (ms: number): Api.Step => ({ op: "sleep", ms })

/** @internal */
export const stall: Api.Step = { op: "stall" }

/** @internal */
export const exit = (code: number, stderr?: string): Api.Step =>
  stderr === undefined ? { op: "exit", code } : { op: "exit", code, stderr }

/** @internal */
export const kill = (signal = "SIGKILL"): Api.Step => ({ op: "kill", signal })

/** @internal */
export const ignoreSigterm: Api.Step = { op: "ignoreSigterm" }

/** @internal */
export const spawnGrandchild: Api.Step = { op: "spawnGrandchild" }

/** @internal */
export const spawnToolProcess = (
  options?: { readonly ignoreSigterm?: boolean; readonly clearEnv?: boolean }
): Api.Step => ({
  op: "spawnToolProcess",
  ...(options?.ignoreSigterm === undefined ? {} : { ignoreSigterm: options.ignoreSigterm }),
  ...(options?.clearEnv === undefined ? {} : { clearEnv: options.clearEnv })
})

/** @internal */
export const request = (
  subtype: string,
  body?: Api.JsonObject,
  options?: { readonly timeoutMs?: number }
): Api.Step => ({
  op: "request",
  subtype,
  ...(body === undefined ? {} : { body }),
  ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
})

/** @internal the fake fills in `tool_use_id` (`toolu_fake_<n>`) unless `extra` has one */
export const canUseTool = (toolName: string, input: Api.JsonObject, extra?: Api.JsonObject): Api.Step =>
  request("can_use_tool", {
    tool_name: toolName,
    display_name: toolName,
    input,
    permission_suggestions: [],
    ...extra
  })

/** @internal */
export const expectControl = (subtype: string): Api.Step => ({ op: "expectControl", subtype })

/** @internal */
export const expectEndInput: Api.Step = { op: "expectEndInput" }

/** @internal */
export const answer = (response: unknown, options?: { readonly delayMs?: number }): Api.Answer =>
  options?.delayMs === undefined ? { response } : { response, delayMs: options.delayMs }

/** @internal */
export const answerError = (
  error: string,
  options?: { readonly errorCode?: string; readonly delayMs?: number }
): Api.Answer => ({
  error,
  ...(options?.errorCode === undefined ? {} : { errorCode: options.errorCode }),
  ...(options?.delayMs === undefined ? {} : { delayMs: options.delayMs })
})

/** @internal */
export const noAnswer: Api.Answer = { never: true }

// -------------------------------------------------------------------------------------------------
// log
// -------------------------------------------------------------------------------------------------

const isLogEntry = (u: unknown): u is Api.LogEntry =>
  typeof u === "object" && u !== null && "event" in u && typeof u.event === "string"

/** @internal */
export const readLog = (file: string): Effect.Effect<Api.Log> =>
  Effect.sync(() => {
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
    const entries: Array<Api.LogEntry> = []
    for (const line of text.split("\n")) {
      if (line.trim().length === 0) continue
      const parsed: unknown = JSON.parse(line)
      if (isLogEntry(parsed)) entries.push(parsed)
    }
    let start: Extract<Api.LogEntry, { readonly event: "start" }> | undefined
    const received: Array<Api.JsonObject> = []
    const answers: Array<Extract<Api.LogEntry, { readonly event: "answer" }>> = []
    for (const entry of entries) {
      if (entry.event === "start") start ??= entry
      else if (entry.event === "stdin") received.push(entry.frame)
      else answers.push(entry)
    }
    return { start, received, answers, entries }
  })
