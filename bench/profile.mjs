// Where the consumer CPU of the CLI row goes: runs the CLI row's worker (bench/worker.mjs realCli) with a V8 CPU
// profile of the measured queries (after the warm-up), then sums the profile by module and by function, in ms per
// query, with `dist/promise.js` mapped back to its TypeScript sources through its source map.
//
//   node bench/profile.mjs [--sdk ours|official|baseline] [--queries 50] [--warmup 10] [--top 25] [--interval 250]
//                          [--keep file]
//   node bench/profile.mjs --summarize file.cpuprofile --queries N      (an existing profile)
//   BENCH_BASELINE=<a built checkout> node bench/profile.mjs --sdk baseline   (another build of this repo)
//
// (after `npm run build`). Self time: samples whose top frame is the function; total: samples with the function
// anywhere on the stack (counted once per sample). "(program)" is V8/Node native work not attributed to JS
// (e.g. libuv, the child_process binding), "(garbage collector)" is GC.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { SourceMap } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? fallback : args[i + 1]
}
const sdk = option("sdk", "ours")
const queries = Number(option("queries", "50"))
const warmup = Number(option("warmup", "10"))
const top = Number(option("top", "25"))
const intervalUs = Number(option("interval", "250"))

let file = option("summarize")
if (file === undefined) {
  file = option("keep") ?? path.join(os.tmpdir(), `bench-cli-${process.pid}.cpuprofile`)
  const out = execFileSync(process.execPath, [
    path.join(here, "worker.mjs"),
    "realCli",
    sdk,
    JSON.stringify({ warmup, queries, profile: file, profileIntervalUs: intervalUs })
  ], { cwd: path.join(here, ".."), encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  process.stdout.write(`worker (${sdk}, ${warmup} warm-up + ${queries} profiled queries): ${out.trim()}\n`)
}
const profile = JSON.parse(fs.readFileSync(file, "utf8"))
if (option("keep") === undefined && option("summarize") === undefined) fs.rmSync(file, { force: true })

// source maps of the bundles the profile ran (file URL → SourceMap | null)
const maps = new Map()
const mapOf = (url) => {
  if (!maps.has(url)) {
    let map = null
    try {
      const js = fileURLToPath(url)
      const ref = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(fs.readFileSync(js, "utf8"))
      if (ref !== null) {
        const mapFile = path.resolve(path.dirname(js), ref[1])
        map = { map: new SourceMap(JSON.parse(fs.readFileSync(mapFile, "utf8"))), dir: path.dirname(mapFile) }
      }
    } catch {
      // not a file URL, or no map
    }
    maps.set(url, map)
  }
  return maps.get(url)
}

/** A readable module name for a frame: the TypeScript source (via the map), a package, or a Node internal. */
const moduleOf = (frame) => {
  const { url, lineNumber, columnNumber } = frame
  if (url === "") {
    if (frame.functionName.startsWith("(")) return frame.functionName
    // code without a script is native (a binding, a builtin); with one, it was compiled at run time (`new Function`)
    return String(frame.scriptId) === "0" ? "(native)" : "(compiled at run time: new Function)"
  }
  const m = mapOf(url)
  if (m !== null) {
    const entry = m.map.findEntry(lineNumber, columnNumber)
    if (entry?.originalSource !== undefined) {
      const source = entry.originalSource.startsWith("file:")
        ? fileURLToPath(entry.originalSource)
        : path.resolve(m.dir, entry.originalSource)
      return { module: shorten(source), line: entry.originalLine + 1, name: entry.name }
    }
  }
  return url.startsWith("file:") ? shorten(fileURLToPath(url)) : url
}
const shorten = (file) => {
  const nm = file.lastIndexOf("/node_modules/")
  if (nm !== -1) {
    const rest = file.slice(nm + "/node_modules/".length)
    return rest.replace(/^(@[^/]+\/[^/]+|[^/]+)\/(?:dist\/(?:esm|cjs|dts)\/|src\/)?/, "$1: ")
  }
  const src = file.lastIndexOf("/src/")
  if (src !== -1) return file.slice(src + 1)
  return path.relative(path.join(here, ".."), file)
}

const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const info = new Map()
const infoOf = (node) => {
  let i = info.get(node.id)
  if (i === undefined) {
    const where = moduleOf(node.callFrame)
    const module = typeof where === "string" ? where : where.module
    const line = typeof where === "string" ? node.callFrame.lineNumber + 1 : where.line
    const name = node.callFrame.functionName || (typeof where === "string" ? "" : where.name) || "(anonymous)"
    i = { module, fn: `${name} (${module}${node.callFrame.url === "" ? "" : `:${line}`})` }
    info.set(node.id, i)
  }
  return i
}

// each sample's duration: the gap to the next sample
const { samples, timeDeltas } = profile
const dur = samples.map((_, i) => (i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0) / 1000) // ms
/**
 * One category per sample, the first that applies: what the consumer was doing, whatever the library. Spawning and
 * the /proc scans are named by the stack (their own JS is cheap, the native call is not); the rest by the frame on
 * top of the stack.
 */
const categories = [
  [
    "spawning the CLI (child_process.spawn, native fork/exec included)",
    (stack) => stack.some((f) => f.fn.startsWith("ChildProcess.spawn ") || f.fn.startsWith("spawn (node:child_process"))
  ],
  [
    "/proc scans at close (reaper: marker scan, process tree)",
    (stack) => stack.some((f) => f.module === "src/internal/transport/reaper.ts")
  ],
  ["garbage collector", (stack) => stack[0].module === "(garbage collector)"],
  [
    "Effect runtime (fibers, scheduler, scopes, streams, Schema)",
    (stack) => /^(effect|@effect\/[^:]+):/.test(stack[0].module)
  ],
  ["ours (src/)", (stack) => stack[0].module.startsWith("src/")],
  ["Node (streams, pipes, timers, promises)", (stack) => stack[0].module.startsWith("node:")],
  [
    "ours (src/), compiled at run time",
    (stack) => stack[0].module.startsWith("(compiled") && stack.some((f) => f.module.startsWith("src/"))
  ],
  ["other native / program", (stack) => stack[0].module.startsWith("(")],
  ["other JS (the SDK bundle, bench)", () => true]
]
const byCategory = new Map()
// the innermost frame of this repo's src/ on the stack: which of our code the sample was working for
const byOurs = new Map()
const selfFn = new Map()
const selfModule = new Map()
const totalFn = new Map()
const totalModule = new Map()
let busy = 0
const add = (map, key, ms) => map.set(key, (map.get(key) ?? 0) + ms)
for (let i = 0; i < samples.length; i++) {
  const node = nodes.get(samples[i])
  const ms = dur[i]
  if (node.callFrame.functionName === "(idle)") {
    continue
  }
  busy += ms
  const self = infoOf(node)
  add(selfFn, self.fn, ms)
  add(selfModule, self.module, ms)
  const fns = new Set()
  const modules = new Set()
  const stack = []
  for (let id = node.id; id !== undefined; id = parent.get(id)) {
    const n = nodes.get(id)
    if (n.callFrame.functionName === "(root)") continue
    const i2 = infoOf(n)
    stack.push(i2)
    fns.add(i2.fn)
    modules.add(i2.module)
  }
  if (stack.length > 0) add(byCategory, categories.find(([, test]) => test(stack))[0], ms)
  add(byOurs, stack.find((f) => f.module.startsWith("src/"))?.fn ?? "(no frame of src/ on the stack)", ms)
  for (const f of fns) add(totalFn, f, ms)
  for (const m of modules) add(totalModule, m, ms)
}

const perQuery = (ms) => (ms / queries).toFixed(2).padStart(7)
const share = (ms) => `${((ms / busy) * 100).toFixed(1).padStart(5)}%`
const print = (title, map, n) => {
  process.stdout.write(`\n${title}\n  ms/query  share\n`)
  for (const [k, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    process.stdout.write(`  ${perQuery(ms)} ${share(ms)}  ${k}\n`)
  }
}
const wall = (profile.endTime - profile.startTime) / 1000
process.stdout.write(
  `\nprofile: ${wall.toFixed(0)} ms over ${queries} queries; on CPU (not idle) ${busy.toFixed(0)} ms = ${
    perQuery(busy).trim()
  } ms/query (sampling adds its own overhead)\n`
)
print("by category (each sample counted once)", byCategory, categories.length)
print("by the innermost function of src/ on the stack (each sample counted once)", byOurs, top)
print("self time by module", selfModule, top)
print("self time by function", selfFn, top)
print("total time by module (stack contains it)", totalModule, top)
print("total time by function (stack contains it)", totalFn, top)
