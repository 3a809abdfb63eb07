// The real-bash judge of the Bash rules' red-team tests: a sandbox with a secret and a victim, a command run in a real
// bash there (what it printed and what it left), and the rules' decision in a fresh sandbox of the same shape.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bash, type Spec } from "./rules.js"

/** A sandbox: `root/work` (the cwd) with out/, secrets/k, victim and data.txt; `root/outside/t`. */
export const sandbox = (): { readonly root: string; readonly work: string; readonly done: () => void } => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-r3-")))
  const work = path.join(root, "work")
  for (const dir of ["outside", "work/out", "work/secrets", "work/sub/out"]) {
    fs.mkdirSync(path.join(root, dir), { recursive: true })
  }
  fs.writeFileSync(path.join(root, "outside", "t"), "outside\n")
  fs.writeFileSync(path.join(work, "secrets", "k"), "SECRET\n")
  fs.writeFileSync(path.join(work, "victim"), "")
  fs.writeFileSync(path.join(work, "data.txt"), "data\n")
  return { root, work, done: () => fs.rmSync(root, { recursive: true, force: true }) }
}

/** Runs `command` in a real bash in a fresh sandbox (after `setup`); what it printed and what it left. */
export const inBash = (command: string, setup: (work: string, root: string) => void = () => undefined) => {
  const box = sandbox()
  try {
    setup(box.work, box.root)
    let output = ""
    try {
      output = execFileSync("bash", ["-c", command], { cwd: box.work, input: "", timeout: 30_000, encoding: "utf8" })
    } catch (error) {
      output = String((error as { stdout?: unknown }).stdout ?? "")
    }
    // what the command left, read before the sandbox is removed
    const left = new Set<string>()
    const walk = (dir: string, prefix: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        left.add(prefix + entry.name)
        // a link is not followed (a linked node_modules would be read whole)
        if (entry.isDirectory()) walk(path.join(dir, entry.name), `${prefix}${entry.name}/`)
      }
    }
    walk(box.work, "")
    const exists = (p: string) => left.has(p)
    return {
      output,
      touched: exists("X"),
      victimGone: !exists("victim"),
      victim: exists("victim") ? fs.readFileSync(path.join(box.work, "victim"), "utf8") : undefined,
      secret: fs.readFileSync(path.join(box.work, "secrets", "k"), "utf8"),
      outside: fs.readFileSync(path.join(box.root, "outside", "t"), "utf8"),
      exists
    }
  } finally {
    box.done()
  }
}

/** Decides `command` under `spec` in a fresh sandbox (after `setup`). */
export const decideIn = async (
  spec: Spec,
  command: string,
  setup: (work: string, root: string) => void = () => undefined
) => {
  const box = sandbox()
  try {
    setup(box.work, box.root)
    return await bash(spec, command, box.work)
  } finally {
    box.done()
  }
}
