import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { isAlive, OWNER_ENV, ownedProcesses } from "./process.js"

/**
 * A stand-in `claude` whose `--version` sleeps for a minute (a slow or frozen probe) and which exits 3 for anything
 * else. The `sleep` it runs carries this test process's owner marker, so `ownedProcesses()` sees the probe while it
 * runs, and after it was orphaned. `remove` deletes its directory.
 */
export const slowVersionCli = (): { readonly executable: string; readonly remove: () => void } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-slow-version-"))
  const executable = path.join(dir, "claude")
  fs.writeFileSync(
    executable,
    [
      "#!/bin/sh",
      `export ${OWNER_ENV}=${process.pid}`,
      `if [ "$1" = "--version" ]; then sleep 60; echo 2.1.332; exit 0; fi`,
      "exit 3",
      ""
    ].join("\n"),
    { mode: 0o755 }
  )
  return { executable, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

/** Resolves once a process with the owner marker runs (the probe's `sleep`); rejects after `ms`. */
export const probeRunning = async (ms = 5_000): Promise<ReadonlyArray<number>> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const pids = ownedProcesses()
    if (pids.length > 0) return pids
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`no --version probe running after ${ms} ms`)
}

/**
 * The processes of `pids` still alive, and any other with the owner marker, once they are all gone or `ms` passed: a
 * process sent SIGKILL takes the kernel a moment to end.
 */
export const leftAfterKill = async (pids: ReadonlyArray<number>, ms = 1_000): Promise<ReadonlyArray<number>> => {
  const deadline = Date.now() + ms
  while (true) {
    const left = [...new Set([...pids.filter(isAlive), ...ownedProcesses()])]
    if (left.length === 0 || Date.now() >= deadline) return left
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
