#!/usr/bin/env node
// npm run examples [-- <name> …]: runs every example (examples/*.ts, except `_`-prefixed helpers) one after the
// other, offline (ANTHROPIC_API_KEY is removed, so each uses the scripted model server), each with a timeout, and
// exits non-zero if any fails, times out, or leaves a process behind. What CI runs.
//
//   EXAMPLE_TIMEOUT_MS   per-example timeout (default 60000)
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const timeoutMs = Number(process.env.EXAMPLE_TIMEOUT_MS ?? 60_000)
const tsx = path.join(root, "node_modules", "tsx", "dist", "cli.mjs")

const all = fs.readdirSync(path.join(root, "examples"))
  .filter((f) => f.endsWith(".ts") && !f.startsWith("_"))
  .map((f) => f.slice(0, -3))
  .sort()
const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !all.includes(name))
if (unknown.length > 0) {
  console.error(`unknown example(s): ${unknown.join(", ")}\navailable: ${all.join(", ")}`)
  process.exit(2)
}
const names = wanted.length > 0 ? wanted : all

// Every process an example starts (tsx, node, the claude CLI, MCP servers, …) inherits this marker, so that what is
// left behind after the example exits can be found — orphans included — without touching anyone else's processes.
const MARKER = "ECA_EXAMPLE_RUN"

/** Live processes whose environment carries `MARKER=<value>` (Linux only: elsewhere nothing is found). */
const marked = (value) => {
  if (!fs.existsSync("/proc/self/environ")) return []
  const needle = `${MARKER}=${value}\0`
  const out = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
      if (state === "Z" || state === "X") continue
      if (fs.readFileSync(`/proc/${entry}/environ`, "latin1").includes(needle)) {
        out.push({ pid: Number(entry), name: fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() })
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return out
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const kill = (pid, signal) => {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

// the examples run in their own process groups: pass a Ctrl-C (or a CI cancellation) on to the one running
let current
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (current !== undefined) kill(-current.pid, signal)
    process.exit(130)
  })
}

/** Runs one example; resolves to { name, ok, ms, reason }. */
const run = (name) =>
  new Promise((resolve) => {
    const started = Date.now()
    const marker = `${process.pid}-${name}`
    const env = { ...process.env, [MARKER]: marker }
    delete env.ANTHROPIC_API_KEY // offline: the scripted model server answers
    const file = path.join(root, "examples", `${name}.ts`)
    const child = spawn(process.execPath, [tsx, "--tsconfig", path.join(root, "tsconfig.json"), file], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true // its own process group, so that a timeout can stop all of it
    })
    current = child
    const prefix = (chunk) => chunk.toString().replace(/^(?!$)/gm, "  │ ")
    child.stdout.on("data", (chunk) => process.stdout.write(prefix(chunk)))
    child.stderr.on("data", (chunk) => process.stderr.write(prefix(chunk)))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      kill(-child.pid, "SIGTERM")
      setTimeout(() => kill(-child.pid, "SIGKILL"), 2_000).unref()
    }, timeoutMs)
    child.on("close", async (code, signal) => {
      clearTimeout(timer)
      current = undefined
      // the example is gone; give what it started a moment to exit, then anything still alive is a leak
      let left = marked(marker)
      for (let i = 0; i < 30 && left.length > 0; i++) {
        await sleep(100)
        left = marked(marker)
      }
      for (const p of left) kill(p.pid, "SIGKILL")
      const ms = Date.now() - started
      const reason = timedOut
        ? `timed out after ${timeoutMs} ms`
        : code !== 0
        ? `exited with ${code ?? signal}`
        : left.length > 0
        ? `left processes behind: ${left.map((p) => `${p.pid} (${p.name})`).join(", ")}`
        : undefined
      resolve({ name, ok: reason === undefined, ms, reason })
    })
  })

const results = []
const begin = Date.now()
for (const name of names) {
  console.log(`\n▶ ${name}`)
  const result = await run(name)
  console.log(result.ok ? `✔ ${name} (${(result.ms / 1000).toFixed(1)} s)` : `✘ ${name}: ${result.reason}`)
  results.push(result)
}

const failed = results.filter((r) => !r.ok)
console.log(`\n${"example".padEnd(22)} ${"result".padEnd(8)} time`)
for (const r of results) {
  const time = `${(r.ms / 1000).toFixed(1).padStart(5)} s`
  console.log(`${r.name.padEnd(22)} ${(r.ok ? "ok" : "FAILED").padEnd(8)} ${time}${r.ok ? "" : `  ${r.reason}`}`)
}
const total = `${((Date.now() - begin) / 1000).toFixed(1)} s`
console.log(`\n${results.length - failed.length}/${results.length} examples passed in ${total}`)
process.exit(failed.length > 0 ? 1 : 0)
