/**
 * Session modes (Claude Code's permission modes) and config options (the mode and the model), as ACP shows them.
 *
 * @internal
 */
import type * as AgentOptions from "../../AgentOptions.js"
import type * as Message from "../../Message.js"
import type { SessionConfigOption, SessionMode, SessionModeState } from "./schema.js"

const MODES: ReadonlyArray<SessionMode & { readonly id: AgentOptions.PermissionMode }> = [
  { id: "default", name: "Default", description: "Asks before a tool call that needs permission" },
  { id: "acceptEdits", name: "Accept Edits", description: "Edits files without asking" },
  { id: "plan", name: "Plan", description: "Plans without editing files or running commands" },
  { id: "dontAsk", name: "Don't Ask", description: "Denies what is not allowed in advance, without asking" },
  { id: "bypassPermissions", name: "Bypass Permissions", description: "Runs every tool call without asking" }
]

/**
 * The modes a session offers. `bypassPermissions` only when the options allow it (`allowDangerouslySkipPermissions`)
 * and Claude Code accepts it (it refuses it to root unless `IS_SANDBOX` is set).
 *
 * @internal
 */
export const availableModes = (options: AgentOptions.Options): ReadonlyArray<SessionMode> => {
  const env = { ...process.env, ...options.env }
  const root = typeof process.getuid === "function" && process.getuid() === 0
  const bypass = options.allowDangerouslySkipPermissions === true &&
    (!root || (env["IS_SANDBOX"] !== undefined && env["IS_SANDBOX"] !== ""))
  return MODES.filter((mode) => bypass || mode.id !== "bypassPermissions")
}

/** A mode id as a permission mode, when it is one this session offers. @internal */
export const toPermissionMode = (
  modes: ReadonlyArray<SessionMode>,
  id: string
): AgentOptions.PermissionMode | undefined => {
  const mode = MODES.find((m) => m.id === id)
  return mode !== undefined && modes.some((m) => m.id === id) ? mode.id : undefined
}

/** @internal */
export const modeState = (modes: ReadonlyArray<SessionMode>, current: string): SessionModeState => ({
  currentModeId: current,
  availableModes: modes
})

/** The id of the mode config option. @internal */
export const MODE_CONFIG = "mode"
/** The id of the model config option. @internal */
export const MODEL_CONFIG = "model"

/** The config options: the mode, and the model when the CLI lists models. @internal */
export const configOptions = (
  modes: ReadonlyArray<SessionMode>,
  currentMode: string,
  models: ReadonlyArray<Message.ModelInfo>,
  currentModel: string
): ReadonlyArray<SessionConfigOption> => {
  const mode: SessionConfigOption = {
    type: "select",
    id: MODE_CONFIG,
    name: "Mode",
    category: "mode",
    currentValue: currentMode,
    options: modes.map((m) => ({
      value: m.id,
      name: m.name,
      ...(m.description === undefined ? {} : { description: m.description })
    }))
  }
  if (models.length === 0) return [mode]
  const listed = models.some((m) => m.value === currentModel)
  const model: SessionConfigOption = {
    type: "select",
    id: MODEL_CONFIG,
    name: "Model",
    category: "model",
    currentValue: currentModel,
    options: [
      ...(listed ? [] : [{ value: currentModel, name: currentModel }]),
      ...models.map((m) => ({ value: m.value, name: m.displayName, description: m.description }))
    ]
  }
  return [mode, model]
}
