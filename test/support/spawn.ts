import { spawn } from "node:child_process"
import type { SpawnedProcess, SpawnOptions } from "effect-claude-agent/promise"

/** A spawn function that runs the command locally, recording what it was asked and the process it started. */
export const localSpawn = () => {
  const calls: Array<SpawnOptions> = []
  const started: Array<SpawnedProcess & { readonly pid?: number | undefined }> = []
  const fn = (options: SpawnOptions): SpawnedProcess => {
    calls.push(options)
    const child = spawn(options.command, options.args, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: options.env,
      signal: options.signal,
      stdio: ["pipe", "pipe", "pipe"]
    })
    // the abort error of the signal is expected at close
    child.on("error", () => undefined)
    started.push(child)
    return child
  }
  return { fn, calls, started }
}
