import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Layer from "effect/Layer"
import { CliResolver } from "effect-claude-agent"
import * as fs from "node:fs"

/** What the process Transport needs from Node: the CommandExecutor, the file system and the CLI resolver. */
export const NodeExecutor = NodeCommandExecutor.layer.pipe(
  Layer.provideMerge(NodeFileSystem.layer),
  Layer.merge(CliResolver.layer())
)

/** `true` when the process exists and is not a zombie. */
export const isAlive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

/** Pids of live processes whose command name is exactly `name`. */
export const pidsNamed = (name: string): Array<number> => {
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const comm = fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim()
      if (comm === name && isAlive(Number(entry))) out.push(Number(entry))
    } catch {
      // gone
    }
  }
  return out
}

/** Pids of live descendants of `pid` (children, grandchildren, …). */
export const descendants = (pid: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      const list = children.get(ppid) ?? []
      list.push(Number(entry))
      children.set(ppid, list)
    } catch {
      // gone
    }
  }
  const out: Array<number> = []
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      if (isAlive(c)) out.push(c)
      walk(c)
    }
  }
  walk(pid)
  return out
}

/** The marker put in the environment of every CLI a test starts (inherited by what the CLI starts). */
export const OWNER_ENV = "ECA_TEST_OWNER"

/** Live processes whose environment carries this test process's owner marker (orphans included). */
export const ownedProcesses = (): Array<number> => {
  const needle = `${OWNER_ENV}=${process.pid}\0`
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`, "latin1").includes(needle) && isAlive(Number(entry))) {
        out.push(Number(entry))
      }
    } catch {
      // gone or not readable
    }
  }
  return out
}

/**
 * Whether `pid` has a SIGKILL pending: the kernel marks it when the signal is sent, before the process ends, so a
 * process that is alive and has none was not sent one.
 */
export const killPending = (pid: number): boolean => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const sigkill = 1n << 8n
    return [/^SigPnd:\s*([0-9a-f]+)$/m, /^ShdPnd:\s*([0-9a-f]+)$/m].some((field) => {
      const mask = field.exec(status)?.[1]
      return mask !== undefined && (BigInt(`0x${mask}`) & sigkill) !== 0n
    })
  } catch {
    return false
  }
}

/** Live processes whose argv is exactly `argv` (each test sleeps for a duration no other test uses). */
export const running = (...argv: ReadonlyArray<string>): Array<number> => {
  const wanted = `${argv.join("\0")}\0`
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, "latin1") === wanted && isAlive(Number(entry))) out.push(+entry)
    } catch {
      // gone
    }
  }
  return out
}

/** Live processes whose environment holds `name=value` (orphans included). */
export const withEnv = (name: string, value: string): Array<number> => {
  const needle = `${name}=${value}\0`
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`, "latin1").includes(needle) && isAlive(Number(entry))) {
        out.push(Number(entry))
      }
    } catch {
      // gone or not readable
    }
  }
  return out
}
