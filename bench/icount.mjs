// The drift guard against the official SDK (`npm run bench:icount`, a step of .ci/run): counts the instructions the
// consumer process executes — the Node process running the SDK, not the CLI it spawns, not the fake CLI, not the
// model server — for a small fixed workload, for this checkout's Promise API (`dist/promise.js`: run `npm run build`
// first) and for the official `@anthropic-ai/claude-agent-sdk`, in the same run. Instructions are counted by
// valgrind's callgrind, which counts every instruction of every thread of the process and is not moved by the
// machine's load the way time is. The workload (bench/icount-worker.mjs) has three parts, each compared on its own:
//
//   first        the first query of the process, on the fake CLI (bench/fake-cli.mjs)
//   queries      N more one-shot queries on the fake CLI
//   permissions  one query answering M `can_use_tool` requests (fake CLI)
//   cli          one turn of the real, pinned `claude` against the scripted model server (bench/model-server.mjs)
//
// Each part's ratio (ours / official) must stay at or under its ceiling in bench/icount-ceilings.json: a ratchet set
// just above the measured ratio, lowered as the code gets faster, toward the target (1 + tolerance). The step fails
// when a ratio exceeds its ceiling; it says so when a ratio is far below its ceiling (time to lower it).
//
//   node bench/icount.mjs [--runs N] [--write] [--json]
//
// --runs N   runs each contender N times (default 1) and compares the medians
// --write    also writes the figures into bench/results.md (between its `icount` markers)
// --keep D   keeps callgrind's files in directory D (one subdirectory per run), for `callgrind_annotate`
// --ours F   counts another build of ours (a `promise.js` bundle F) instead of dist/promise.js: to see the guard fail
//            on a deliberately slower build, or to compare a branch's build
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const here = path.dirname(new URL(import.meta.url).pathname)
const repo = path.join(here, "..")
const args = process.argv.slice(2)
const flag = (name) => args.includes(`--${name}`)
const option = (name) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const runs = Number(option("runs") ?? 1)
const log = (s) => process.stderr.write(`${s}\n`)

const CEILINGS = path.join(here, "icount-ceilings.json")
const config = JSON.parse(fs.readFileSync(CEILINGS, "utf8"))
const PARTS = ["first", "queries", "permissions", "cli"]
const CONTENDERS = ["ours", "official"]
// callgrind's files, kept for `callgrind_annotate` (by default they are removed)
const keep = option("keep")
const oursFile = option("ours") === undefined ? undefined : path.resolve(option("ours"))

if (oursFile !== undefined && !fs.existsSync(oursFile)) {
  log(`icount: ${oursFile} is missing`)
  process.exit(2)
}
if (!fs.existsSync(path.join(repo, "dist", "promise.js"))) {
  log("icount: dist/promise.js is missing: run `npm run build` first")
  process.exit(2)
}
try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" })
} catch {
  log("icount: valgrind is not installed (apt-get install -y valgrind)")
  process.exit(2)
}

/** Starts bench/model-server.mjs: the real CLI's environment and a `stop`. */
const modelServer = () =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, "model-server.mjs")], { stdio: ["pipe", "pipe", "inherit"] })
    let out = ""
    child.once("error", reject)
    child.stdout.on("data", (d) => {
      out += d
      const nl = out.indexOf("\n")
      if (nl === -1 || resolve === undefined) return
      const { env } = JSON.parse(out.slice(0, nl))
      const done = resolve
      resolve = undefined
      done({ env, stop: () => new Promise((ok) => (child.once("exit", ok), child.stdin.end())) })
    })
  })

/**
 * One contender's workload under callgrind: the instructions of each part (the dumps callgrind writes on entering
 * `GetConstrainedMemory`; the first is start-up and import, the last Node's exit).
 */
const measure = (sdk, env) =>
  new Promise((resolve, reject) => {
    const dir = keep === undefined
      ? fs.mkdtempSync(path.join(os.tmpdir(), "eca-icount-"))
      : fs.mkdtempSync(path.join(keep, `${sdk}-`))
    const started = Date.now()
    const child = spawn("valgrind", [
      "--tool=callgrind",
      `--callgrind-out-file=${path.join(dir, "cg.out")}`,
      "--dump-before=*GetConstrainedMemory*",
      "--dump-instr=no",
      "--dump-line=no",
      process.execPath,
      ...config.nodeFlags,
      path.join(here, "icount-worker.mjs"),
      sdk
    ], { cwd: repo, env, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    child.once("error", reject)
    child.once("exit", (code) => {
      try {
        if (code !== 0) throw new Error(`${sdk} exited ${code}: ${stderr.slice(-3000)}`)
        const totals = fs.readdirSync(dir)
          .map((name) => /^cg\.out\.(\d+)$/.exec(name))
          .filter((m) => m !== null)
          .sort((a, b) => Number(a[1]) - Number(b[1]))
          .map((m) => {
            const text = fs.readFileSync(path.join(dir, m[0]), "utf8")
            const total = /^totals:\s+(\d+)/m.exec(text) ?? /^summary:\s+(\d+)/m.exec(text)
            return Number(total?.[1])
          })
        // two marks after each part, around a full collection: import | gc | first | gc | queries | gc | permissions
        // | gc | cli | gc (the collections are not counted)
        if (totals.length !== 10) throw new Error(`${sdk}: ${totals.length} dumps, expected 10`)
        resolve({
          import: totals[0],
          first: totals[2],
          queries: totals[4],
          permissions: totals[6],
          cli: totals[8],
          seconds: (Date.now() - started) / 1000
        })
      } catch (error) {
        reject(error)
      } finally {
        if (keep === undefined) fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  })

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

const t0 = Date.now()
const server = await modelServer()
const params = { queries: config.workload.queries, requests: config.workload.requests, cli: true }
const env = {
  ...process.env,
  ICOUNT_PARAMS: JSON.stringify(params),
  ICOUNT_CLI_ENV: JSON.stringify(server.env),
  ...(oursFile === undefined ? {} : { ICOUNT_OURS: oursFile })
}
const samples = Object.fromEntries(CONTENDERS.map((c) => [c, []]))
try {
  for (let r = 0; r < runs; r++) {
    // the two contenders side by side (one core each on a 2-core machine): counts do not depend on the overlap
    const results = await Promise.all(CONTENDERS.map((sdk) => measure(sdk, env)))
    results.forEach((result, i) => {
      samples[CONTENDERS[i]].push(result)
      log(`icount: ${CONTENDERS[i]} run ${r + 1}/${runs}: ${JSON.stringify(result)}`)
    })
  }
} finally {
  await server.stop()
}

const M = (n) => `${(n / 1e6).toFixed(1)} M`
const rows = PARTS.map((part) => {
  const ours = median(samples.ours.map((s) => s[part]))
  const official = median(samples.official.map((s) => s[part]))
  const ratio = ours / official
  const ceiling = config.ceilings[part]
  return { part, ours, official, ratio, ceiling, ok: ratio <= ceiling }
})
const importRow = {
  ours: median(samples.ours.map((s) => s.import)),
  official: median(samples.official.map((s) => s.import))
}
const target = 1 + config.tolerance
const seconds = (Date.now() - t0) / 1000
const cpuSeconds = CONTENDERS.reduce((n, c) => n + samples[c].reduce((m, s) => m + s.seconds, 0), 0)

const describe = {
  first: "the first query of the process (fake CLI)",
  queries: `${params.queries} more one-shot queries (fake CLI)`,
  permissions: `1 query, ${params.requests} \`can_use_tool\` round trips (fake CLI)`,
  cli: "1 real-CLI turn (scripted model server)"
}
const table = [
  "| part | ours | official | ours/official | ceiling | target | within ceiling |",
  "|---|---|---|---|---|---|---|",
  ...rows.map((r) =>
    `| ${r.part}: ${describe[r.part]} | ${M(r.ours)} | ${M(r.official)} | ${r.ratio.toFixed(2)}× | ${
      r.ceiling.toFixed(2)
    }× | ${target.toFixed(2)}× | ${r.ok ? "yes" : "**NO**"} |`
  ),
  `| (start-up and import, not guarded) | ${M(importRow.ours)} | ${M(importRow.official)} | ${
    (importRow.ours / importRow.official).toFixed(2)
  }× | – | – | – |`
].join("\n")

// ours reads /proc/<pid>/environ of every process when a session closes (the tool-process reaper): its count
// grows with the machine's number of processes, which is printed with the figures
const processes = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).length
process.stdout.write(
  `\n${table}\n\nicount: ${runs} run(s) per contender, ${
    seconds.toFixed(0)
  } s wall, ${processes} processes on the machine\n`
)
for (const r of rows) {
  if (!r.ok) {
    log(
      `icount: ${r.part}: ours executes ${r.ratio.toFixed(3)}× the official SDK's instructions, over the ceiling ` +
        `${
          r.ceiling.toFixed(2)
        }× (bench/icount-ceilings.json). Profile it (bench/profile.mjs) before raising a ceiling.`
    )
  } else if (r.ratio * (1 + 2 * config.tolerance) < r.ceiling && r.ceiling > target) {
    log(
      `icount: ${r.part}: ${r.ratio.toFixed(2)}× is well under its ceiling ${
        r.ceiling.toFixed(2)
      }×: lower the ceiling ` +
        `in bench/icount-ceilings.json to hold the gain`
    )
  }
}

if (flag("write")) {
  const file = path.join(here, "results.md")
  const block = [
    "<!-- icount:start -->",
    "## Instructions per workload: the drift guard (`node bench/icount.mjs`)",
    "",
    `Generated on ${new Date().toISOString()} (Node ${process.version}, ${os.cpus()[0]?.model ?? "?"}, load average ${
      os.loadavg().map((x) => x.toFixed(2)).join(" / ")
    }), ${runs} run(s) per contender, medians;`,
    `instructions of the consumer process only (valgrind callgrind, every thread), ours = this checkout's`,
    "`dist/promise.js`, official = `@anthropic-ai/claude-agent-sdk` " +
    `${
      JSON.parse(fs.readFileSync(path.join(repo, "node_modules/@anthropic-ai/claude-agent-sdk/package.json"), "utf8"))
        .version
    }. Ceilings: bench/icount-ceilings.json; took ${seconds.toFixed(0)} s wall, ${
      cpuSeconds.toFixed(0)
    } s of valgrind run time; ${processes} processes on the machine.`,
    "",
    table,
    "<!-- icount:end -->"
  ].join("\n")
  const current = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
  const marked = /<!-- icount:start -->[\s\S]*<!-- icount:end -->/
  fs.writeFileSync(file, marked.test(current) ? current.replace(marked, block) : `${current.trimEnd()}\n\n${block}\n`)
  log(`icount: wrote ${path.relative(process.cwd(), file)}`)
}

process.exit(rows.every((r) => r.ok) ? 0 : 1)
