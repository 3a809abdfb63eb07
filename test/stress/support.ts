import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { FakeCli } from "effect-claude-agent/testing"
import type { AgentOptions } from "effect-claude-agent"
import { descendants, OWNER_ENV, ownedProcesses } from "../support/process.js"

/** FakeCli options carrying this process's owner marker, so orphans are found even after reparenting. */
export const fake = (scenario: FakeCli.Scenario, extra: AgentOptions.Options = {}): AgentOptions.Options =>
  FakeCli.options(scenario, { ...extra, env: { ...extra.env, [OWNER_ENV]: String(process.pid) } })

/** Processes this test process started (directly or not), orphans included. */
export const leftovers = () => [...new Set([...descendants(process.pid), ...ownedProcesses()])]

/** Open file descriptors of this process. */
export const openFds = () => fs.readdirSync("/proc/self/fd").length

export const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

export const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0
}

export const gc = () => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("run with --expose-gc (npm run test:stress does)")
  for (let i = 0; i < 3; i++) collect()
}

/** Where `report` keeps the figures of the last stress run, one entry per guarantee (`.tmp/` is gitignored). */
export const RESULTS_FILE = path.join(import.meta.dirname, "..", "..", ".tmp", "stress-results.json")

const readResults = (): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(RESULTS_FILE, "utf8"))
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : {}
  } catch {
    return {}
  }
}

/**
 * Prints a guarantee's figures and records them in {@link RESULTS_FILE} (merged with the other guarantees' latest
 * figures, each with the time it was measured), so the closing note can quote them.
 */
export const report = (name: string, figures: Record<string, number | string>) => {
  // eslint-disable-next-line no-console
  console.log(`[stress] ${name}: ${Object.entries(figures).map(([k, v]) => `${k}=${v}`).join(" ")}`)
  const results = readResults()
  results[name] = { ...figures, measuredAt: new Date().toISOString(), node: process.version, cpus: os.cpus().length }
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true })
  // atomic: a reader never sees half a file
  const temporary = `${RESULTS_FILE}.${process.pid}`
  fs.writeFileSync(temporary, `${JSON.stringify(results, null, 2)}\n`)
  fs.renameSync(temporary, RESULTS_FILE)
}
