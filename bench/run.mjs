// `npm run bench`: figures P1–P5 of issue 10, each for this SDK's Promise API ("ours"), the official
// `@anthropic-ai/claude-agent-sdk` and the floor (a bare Node reader), all driving the same fake CLI, and the CLI row:
// the real, pinned `claude` against the scripted model server. Every measurement runs in a fresh worker process
// (bench/worker.mjs); the contenders take turns within each round so that machine noise hits them alike; the table
// shows medians and each row's run-to-run spread. Writes bench/results.md.
//
//   npm run bench -- [--quick] [--runs N] [--rows P1,CLI] [--sdks ours,official,floor] [--baseline <git ref>]
//                    [--out results.md]
//
// --quick scales every size down (about 20x less work) and runs each measurement twice: a smoke run, or a quick check
// of a few rows. --rows (or --only) picks figures by id: P1 … P5, CLI. --baseline builds <git ref> in a temporary git
// worktree (outside the repo, removed afterwards, also on Ctrl-C) and adds its Promise API as one more contender,
// "baseline", with an ours/baseline column.
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const here = path.dirname(new URL(import.meta.url).pathname)
const args = process.argv.slice(2)
const flag = (name) => args.includes(`--${name}`)
const option = (name) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const quick = flag("quick")
const only = (option("rows") ?? option("only"))?.split(",").map((s) => s.trim().toUpperCase())
const runsOverride = option("runs") === undefined ? undefined : Number(option("runs"))
const baselineRef = option("baseline")
const SDKS = option("sdks")?.split(",").map((s) => s.trim()) ??
  ["ours", "official", "floor", ...(baselineRef === undefined ? [] : ["baseline"])]
const repo = path.join(here, "..")
const benchStarted = Date.now()
const log = (s) => process.stderr.write(`${s}\n`)

const sizes = quick
  ? {
    p1: 20_000,
    p1Warmup: 20_000,
    p1PermWarmup: 2_000,
    p2: 2_000,
    p3Queries: 5,
    p4Queries: 400,
    p4Warmup: 200,
    p4Messages: 57_000,
    p5Sessions: 20,
    p5Messages: 1000,
    cliWarmup: 10,
    cliQueries: 10
  }
  : {
    p1: 100_000,
    p1Warmup: 100_000,
    p1PermWarmup: 20_000,
    p2: 10_000,
    p3Queries: 10,
    p4Queries: 2000,
    p4Warmup: 1000,
    p4Messages: 228_000,
    p5Sessions: 100,
    p5Messages: 1000,
    cliWarmup: 10,
    cliQueries: 20
  }

// ---------------------------------------------------------------------------------------------------------------------
// the baseline build
// ---------------------------------------------------------------------------------------------------------------------

const git = (...argv) => execFileSync("git", ["-C", repo, ...argv], { encoding: "utf8" }).trim()

/** The checkout of `--baseline`, while it exists: `{ dir, root, sha, subject }`. */
let baseline
/** Workers running now, killed if the run is interrupted. */
const running = new Set()

/** Removes the baseline worktree (synchronously, so that it also runs on exit and on signals). Idempotent. */
const removeBaseline = () => {
  if (baseline === undefined) return
  const { dir, root } = baseline
  baseline = undefined
  // the shared node_modules is a symlink: remove it first, so that nothing follows it
  try {
    const nm = path.join(dir, "node_modules")
    if (fs.lstatSync(nm).isSymbolicLink()) fs.unlinkSync(nm)
  } catch {
    // not there
  }
  try {
    execFileSync("git", ["-C", repo, "worktree", "remove", "--force", dir], { stdio: "ignore" })
  } catch {
    // not registered (creation failed half-way): the directory goes below (no `git worktree prune`: it would also
    // forget other people's worktrees whose directories are gone)
  }
  fs.rmSync(root, { recursive: true, force: true })
  log(`bench: removed the baseline worktree ${dir}`)
}

process.on("exit", removeBaseline)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    for (const child of running) child.kill("SIGKILL")
    removeBaseline()
    process.exit(128 + (os.constants.signals[signal] ?? 1))
  })
}

/**
 * Checks `ref` out in a new worktree under os.tmpdir(), gives it this checkout's node_modules (a symlink) when its
 * package-lock.json is the same, else installs with `npm ci`, and builds it with `npm run build`.
 */
const prepareBaseline = (ref) => {
  const sha = git("rev-parse", "--verify", `${ref}^{commit}`)
  const subject = git("log", "-1", "--format=%s", sha)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "eca-bench-baseline-"))
  const dir = path.join(root, "repo")
  baseline = { dir, root, sha, subject, ref, install: "" }
  const t0 = Date.now()
  execFileSync("git", ["-C", repo, "worktree", "add", "--detach", dir, sha], { stdio: ["ignore", "ignore", "inherit"] })
  let lockOfRef
  try {
    lockOfRef = git("show", `${sha}:package-lock.json`)
  } catch {
    lockOfRef = undefined
  }
  const lockHere = fs.readFileSync(path.join(repo, "package-lock.json"), "utf8").trim()
  if (lockOfRef === lockHere) {
    fs.symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"), "dir")
    baseline.install = "this checkout's node_modules (same package-lock.json)"
  } else {
    log(`bench: ${ref}'s package-lock.json differs from this checkout's: npm ci in ${dir}`)
    execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", process.stderr, "inherit"] })
    baseline.install = "its own node_modules (`npm ci`: its package-lock.json differs)"
  }
  execFileSync("npm", ["run", "build"], { cwd: dir, stdio: ["ignore", process.stderr, "inherit"] })
  log(`bench: baseline ${ref} = ${sha.slice(0, 10)} built in ${dir} (${((Date.now() - t0) / 1000).toFixed(0)} s)`)
}

// ---------------------------------------------------------------------------------------------------------------------
// running workers
// ---------------------------------------------------------------------------------------------------------------------

const runNode = (argv, { timeoutMs = 600_000 } = {}) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const env = baseline === undefined ? process.env : { ...process.env, BENCH_BASELINE: baseline.dir }
    const child = spawn(process.execPath, argv, { cwd: repo, stdio: ["ignore", "pipe", "pipe"], env })
    running.add(child)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    // "close": stdout is read to its end
    child.on("close", (code, signal) => {
      running.delete(child)
      clearTimeout(timer)
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6
      if (code !== 0) reject(new Error(`${argv.join(" ")} exited ${code ?? signal}: ${stderr.slice(-2000)}`))
      else resolve({ stdout, wallMs })
    })
  })

const worker = async (caseName, sdk, params, nodeFlags = []) => {
  const { stdout } = await runNode([...nodeFlags, path.join(here, "worker.mjs"), caseName, sdk, JSON.stringify(params)])
  const lines = stdout.trim().split("\n")
  return JSON.parse(lines[lines.length - 1])
}

/** Process wall of a cold `import` of each SDK (node start included; the floor imports only what it needs). */
const coldImport = async (sdk) => {
  const { wallMs } = await runNode([path.join(here, "import.mjs"), sdk])
  return { importWallMs: wallMs }
}

// ---------------------------------------------------------------------------------------------------------------------
// figures
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Each figure: how to measure one run of one SDK, which values to report, the issue's target (as a ratio of ours to
 * the floor, `vsFloor`, and/or to the official SDK, `vsOfficial`).
 */
const figures = [
  {
    id: "P1",
    title: `P1 ${sizes.p1 / 1000}k msgs, first msg→result (warm)`,
    runs: 5,
    measure: (sdk) => worker("throughput", sdk, { messages: sizes.p1, warmup: sizes.p1Warmup }),
    rows: [
      { label: `P1 ${sizes.p1 / 1000}k msgs, first msg→result`, key: "wallMs", unit: "ms", vsFloor: 1.10 },
      { label: "P1 consumer CPU (query()→result)", key: "cpuMs", unit: "ms", vsFloor: 1.25 }
    ]
  },
  {
    id: "P1",
    runs: 5,
    measure: (sdk) => worker("throughput", sdk, { messages: sizes.p1, warmup: sizes.p1PermWarmup, permission: true }),
    rows: [
      { label: "P1 with a permission callback set", key: "wallMs", unit: "ms", vsFloor: 1.15 },
      { label: "P1 with a permission callback, CPU", key: "cpuMs", unit: "ms" }
    ]
  },
  {
    id: "P1",
    runs: 3,
    measure: (sdk) => worker("throughput", sdk, { messages: sizes.p1 }),
    rows: [
      { label: "P1 cold (first query of the process), first msg→result", key: "wallMs", unit: "ms" },
      { label: "P1 cold, CPU", key: "cpuMs", unit: "ms" }
    ]
  },
  {
    id: "P2",
    runs: 3,
    measure: (sdk) => worker("roundTrip", sdk, { requests: sizes.p2 }),
    rows: [
      { label: `P2 can_use_tool round trip p50 (${sizes.p2 / 1000}k)`, key: "p50Us", unit: "µs", vsFloor: 1.15 },
      { label: "P2 can_use_tool round trip p99", key: "p99Us", unit: "µs", vsFloor: 1.0 },
      { label: "P2 p99, second half only (after warm-up)", key: "p99LateUs", unit: "µs" }
    ]
  },
  {
    id: "P3",
    runs: 3,
    measure: (sdk) => worker("firstByte", sdk, { queries: sizes.p3Queries }),
    rows: [
      { label: "P3 query() → first stdin byte", key: "firstByteMs", unit: "ms", vsFloor: 1.02 },
      { label: "P3 … first query of the process", key: "firstQueryMs", unit: "ms" }
    ]
  },
  {
    id: "P3",
    runs: 3,
    measure: (sdk) => worker("warmQuery", sdk, { queries: sizes.p3Queries }),
    rows: [{ label: "P3 startup(), then query() → first message", key: "warmFirstMessageMs", unit: "ms" }]
  },
  {
    id: "P3",
    runs: 7,
    measure: coldImport,
    rows: [{ label: "P3 cold import (process wall)", key: "importWallMs", unit: "ms", vsOfficial: 1.0 }]
  },
  {
    id: "P4",
    runs: quick ? 1 : 2,
    measure: (sdk) => worker("sequential", sdk, { queries: sizes.p4Queries, warmup: sizes.p4Warmup }, ["--expose-gc"]),
    rows: [
      {
        label: `P4 heap after ${Math.min(1000, sizes.p4Queries)} sequential queries`,
        key: "heapAt1000MB",
        unit: "MB",
        vsOfficial: 1.0
      },
      {
        label: `P4 heap growth per query, queries 20→${Math.min(1000, sizes.p4Queries)} (JIT warm-up included)`,
        key: "earlyGrowthPerQueryB",
        unit: "B",
        max: 1024
      },
      { label: `P4 heap after ${sizes.p4Queries} sequential queries`, key: "heapMB", unit: "MB" },
      {
        label: `P4 heap growth per query, queries ${sizes.p4Warmup}→${sizes.p4Queries} (all)`,
        key: "growthPerQueryB",
        unit: "B",
        max: 1024
      },
      {
        label: `P4 heap growth per query, queries ${sizes.p4Warmup}→${sizes.p4Queries} (excl. code space)`,
        key: "dataGrowthPerQueryB",
        unit: "B",
        max: 1024
      },
      { label: "P4 time per sequential query", key: "msPerQuery", unit: "ms" }
    ]
  },
  {
    id: "P4",
    runs: 1,
    // no JIT at all: what is left growing is retained data
    measure: (sdk) => worker("sequential", sdk, { queries: sizes.p4Queries / 2 }, ["--expose-gc", "--jitless"]),
    rows: [{ label: "P4 heap growth per query, --jitless", key: "growthPerQueryB", unit: "B", max: 1024 }]
  },
  {
    id: "P4",
    runs: 3,
    measure: (sdk) => worker("slowConsumer", sdk, { messages: sizes.p4Messages, every: 128 }),
    rows: [
      {
        label: `P4 slow consumer over a ${Math.round(sizes.p4Messages * 877 / 1e6)} MB stream, peak RSS`,
        key: "peakRssMB",
        unit: "MB",
        vsFloor: 1.3
      },
      { label: "P4 slow consumer, wall", key: "wallMs", unit: "ms" }
    ]
  },
  {
    id: "P5",
    runs: 3,
    measure: (sdk) => worker("concurrent", sdk, { sessions: sizes.p5Sessions, messages: sizes.p5Messages }),
    rows: [
      { label: `P5 ${sizes.p5Sessions} concurrent sessions, wall`, key: "wallMs", unit: "ms", vsFloor: 1.05 },
      { label: `P5 ${sizes.p5Sessions} concurrent, peak RSS`, key: "peakRssMB", unit: "MB", vsFloor: 1.3 },
      { label: `P5 ${sizes.p5Sessions} concurrent, process listeners added`, key: "listeners", unit: "" }
    ]
  },
  {
    id: "CLI",
    runs: 3,
    measure: (sdk) => worker("realCli", sdk, { warmup: sizes.cliWarmup, queries: sizes.cliQueries }),
    rows: [
      { label: "CLI real claude, one-shot text query → result, wall", key: "wallMs", unit: "ms", vsOfficial: 1.05 },
      { label: "CLI consumer CPU per query (spawn → CLI exited)", key: "cpuMs", unit: "ms" },
      { label: "CLI result → CLI exited (close path)", key: "closeMs", unit: "ms", max: 500 }
    ]
  }
]

// ---------------------------------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------------------------------

const median = (xs) => {
  const s = xs.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b)
  if (s.length === 0) return undefined
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

const fmt = (v, unit) => {
  if (v === undefined) return "–"
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2
  return `${v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 })}${
    unit === "" ? "" : ` ${unit}`
  }`
}
const ratio = (a, b) => (a === undefined || b === undefined || b === 0 ? undefined : a / b)
const fmtRatio = (r) => (r === undefined ? "–" : `${r.toFixed(2)}×`)

const started = new Date()
const load0 = os.loadavg()
const selected = figures.filter((f) => only === undefined || only.includes(f.id))
const samples = new Map() // row label -> sdk -> values

if (selected.length === 0) {
  log(`bench: no figure matches --rows ${only?.join(",")} (ids: ${[...new Set(figures.map((f) => f.id))].join(", ")})`)
  process.exit(2)
}
if (SDKS.includes("baseline") && baselineRef === undefined) {
  log("bench: the contender baseline needs --baseline <git ref>")
  process.exit(2)
}
if (baselineRef !== undefined) prepareBaseline(baselineRef)
/** Runs of one measurement: quick mode halves them, but keeps two so that a spread exists. */
const runsOf = (figure) => runsOverride ?? (quick ? Math.min(figure.runs, 2) : figure.runs)

log(
  `bench: ${quick ? "quick sizes" : "issue sizes"}, ${selected.length} measurements × ${SDKS.length} contenders (${
    SDKS.join(", ")
  })`
)
for (const figure of selected) {
  const runs = runsOf(figure)
  for (let r = 0; r < runs; r++) {
    // rotate who goes first
    const order = SDKS.map((_, i) => SDKS[(i + r) % SDKS.length])
    for (const sdk of order) {
      const t0 = Date.now()
      let result
      try {
        result = await figure.measure(sdk)
      } catch (error) {
        log(`  ${figure.rows[0].label} / ${sdk}: FAILED ${String(error.message).slice(0, 500)}`)
        continue
      }
      for (const row of figure.rows) {
        const bySdk = samples.get(row.label) ?? new Map()
        samples.set(row.label, bySdk)
        const values = bySdk.get(sdk) ?? []
        values.push(result[row.key])
        bySdk.set(sdk, values)
      }
      log(`  ${figure.rows[0].label} / ${sdk} run ${r + 1}/${runs}: ${JSON.stringify(result)} (${Date.now() - t0} ms)`)
    }
  }
}

/** Run-to-run spread of one contender's runs: (max − min) / median, as a fraction; undefined under two runs. */
const spreadOf = (xs) => {
  const s = (xs ?? []).filter((x) => typeof x === "number" && Number.isFinite(x))
  const m = median(s)
  if (s.length < 2 || m === undefined || m === 0) return undefined
  return (Math.max(...s) - Math.min(...s)) / Math.abs(m)
}
const fmtSpread = (x) => (x === undefined ? "–" : `${(x * 100).toFixed(x * 100 < 10 ? 1 : 0)}%`)
const withBaseline = SDKS.includes("baseline")

const baselineInfo = baseline
removeBaseline()

const rows = []
for (const figure of selected) {
  for (const row of figure.rows) {
    const bySdk = samples.get(row.label)
    if (bySdk === undefined) continue
    const m = Object.fromEntries(SDKS.map((sdk) => [sdk, median(bySdk.get(sdk) ?? [])]))
    const vsFloor = ratio(m.ours, m.floor)
    const vsOfficial = ratio(m.ours, m.official)
    const vsBaseline = ratio(m.ours, m.baseline)
    // the noise band of this row: the larger relative range of ours' and the baseline's runs (or ours' alone)
    const spreads = [spreadOf(bySdk.get("ours")), ...(withBaseline ? [spreadOf(bySdk.get("baseline"))] : [])]
    const spread = spreads.some((x) => x === undefined) ? undefined : Math.max(...spreads)
    // worse than the baseline by more than the spread (every figure is lower-is-better)
    const worse = m.ours === undefined || m.baseline === undefined || spread === undefined
      ? "?"
      : m.ours - m.baseline > spread * Math.abs(m.baseline)
      ? "WORSE"
      : "no"
    const checks = []
    if (row.vsFloor !== undefined) checks.push(vsFloor !== undefined && vsFloor <= row.vsFloor)
    if (row.vsOfficial !== undefined) checks.push(vsOfficial !== undefined && vsOfficial <= row.vsOfficial)
    if (row.max !== undefined) checks.push(m.ours !== undefined && m.ours < row.max)
    const target = [
      row.vsFloor !== undefined ? `≤ ${row.vsFloor.toFixed(2)}× floor` : undefined,
      row.vsOfficial !== undefined
        ? (row.vsOfficial === 1 ? "≤ official" : `≤ ${row.vsOfficial.toFixed(2)}× official`)
        : undefined,
      row.max !== undefined ? `< ${row.max} ${row.unit}` : undefined
    ].filter(Boolean).join(", ")
    rows.push({
      label: row.label,
      ours: fmt(m.ours, row.unit),
      official: fmt(m.official, row.unit),
      floor: fmt(m.floor, row.unit),
      baseline: fmt(m.baseline, row.unit),
      vsFloor: fmtRatio(vsFloor),
      vsOfficial: fmtRatio(vsOfficial),
      vsBaseline: fmtRatio(vsBaseline),
      spread: fmtSpread(spread),
      worse,
      target: target === "" ? "(info)" : target,
      met: checks.length === 0 ? "" : checks.every(Boolean) ? "yes" : "no",
      n: Math.min(...SDKS.map((sdk) => (bySdk.get(sdk) ?? []).length))
    })
  }
}

const columns = [
  ["figure (median)", (r) => r.label],
  ["ours", (r) => r.ours],
  ["official", (r) => r.official],
  ["floor", (r) => r.floor],
  ...(withBaseline ? [["baseline", (r) => r.baseline]] : []),
  ["ours/floor", (r) => r.vsFloor],
  ["ours/official", (r) => r.vsOfficial],
  ...(withBaseline ? [["ours/baseline", (r) => r.vsBaseline]] : []),
  ["spread", (r) => r.spread],
  ...(withBaseline ? [["worse than spread", (r) => r.worse]] : []),
  ["target", (r) => r.target],
  ["met", (r) => r.met],
  ["runs", (r) => r.n]
]
const table = [
  `| ${columns.map(([h]) => h).join(" | ")} |`,
  `|${columns.map(() => "---").join("|")}|`,
  ...rows.map((r) => `| ${columns.map(([, f]) => f(r)).join(" | ")} |`)
].join("\n")
const tookMin = (Date.now() - benchStarted) / 60_000

const pkg = (name) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(here, "..", "node_modules", name, "package.json"), "utf8")).version
  } catch {
    return "?"
  }
}
const oursCommit = (() => {
  try {
    const dirty = git("status", "--porcelain", "--untracked-files=no") !== ""
    return `${git("rev-parse", "HEAD").slice(0, 10)}${dirty ? " with uncommitted changes" : ""} (branch ${
      git("rev-parse", "--abbrev-ref", "HEAD")
    })`
  } catch {
    return "?"
  }
})()
const ourVersion = JSON.parse(fs.readFileSync(path.join(here, "..", "package.json"), "utf8")).version
const cpus = os.cpus()
const load1 = os.loadavg()
const md = `# Benchmarks: effect-claude-agent vs the official SDK vs the floor

Generated by \`npm run bench\`${quick ? " (`--quick`: scaled-down sizes)" : ""} on ${started.toISOString()}.

- Machine: ${cpus[0]?.model ?? "?"} × ${cpus.length} cores, ${
  (os.totalmem() / 2 ** 30).toFixed(1)
} GiB, ${os.type()} ${os.release()}
- Node ${process.version}; load average ${load0.map((x) => x.toFixed(2)).join(" / ")} at start, ${
  load1.map((x) => x.toFixed(2)).join(" / ")
} at the end
- ours: effect-claude-agent ${ourVersion} (Promise API, \`effect-claude-agent/promise\`: \`dist/promise.js\` as \`npm run build\` bundles it, with effect ${
  pkg("effect")
} inside)
- official: @anthropic-ai/claude-agent-sdk ${pkg("@anthropic-ai/claude-agent-sdk")}
- floor: \`bench/floor.mjs\`, a bare Node reader (spawn, split stdout on \`\\n\`, \`JSON.parse\`, answer \`can_use_tool\`)
${
  baselineInfo === undefined ?
    "" :
    `- baseline: \`--baseline ${baselineInfo.ref}\` = ${baselineInfo.sha} ("${baselineInfo.subject}"), its \`dist/promise.js\` built by its own \`npm run build\` in a temporary worktree with ${baselineInfo.install}
`
}- ours is this checkout: ${oursCommit}
- All of them drive the same fake CLI, \`bench/fake-cli.mjs\` (\`bench/fake-cli.sh\` for P4's sequential sessions), except the CLI row: the real, pinned \`claude\` (@anthropic-ai/claude-code ${
  pkg("@anthropic-ai/claude-code")
}) against \`bench/model-server.mjs\` (the scripted model server)
- spread: (max − min) / median of a row's runs, the larger of ours' and the baseline's${
  withBaseline
    ? "; \"worse than spread\": ours' median exceeds the baseline's by more than that spread (every row is lower-is-better)"
    : ""
}
- Took ${tookMin.toFixed(1)} min (${SDKS.length} contenders${quick ? ", quick" : ""}${
  only === undefined ? "" : `, rows ${only.join(",")}`
})

${table}

How each figure is measured (every run is a fresh worker process, \`bench/worker.mjs\`; the contenders take turns):

- **P1**: ${sizes.p1.toLocaleString("en-US")} messages (${
  Math.round(sizes.p1 * 877 / 1e6)
} MB: per tool call 10 text deltas, 3 input-json deltas, start/stop events,
  an assistant text block, an assistant tool_use block and a ~5 KB tool result) consumed with \`for await\`. "Warm" rows
  run a ${sizes.p1Warmup.toLocaleString("en-US")}-message query first in the same process (${
  sizes.p1PermWarmup.toLocaleString("en-US")
} for the permission variant), i.e. steady state; the "cold" rows are the first query of
  the process (JIT warm-up and, for ours, the one-time \`--version\` probe included). Wall: first message → result;
  CPU: \`process.cpuUsage()\` from \`query()\` to the result. The permission variant asks \`can_use_tool\` before every tool
  call (1 per 23 messages) and waits for the answer.
- **P2**: ${
  sizes.p2.toLocaleString("en-US")
} sequential \`can_use_tool\` requests; the fake CLI times request written → response read.
- **P3**: \`query()\` call → first byte on the fake CLI's stdin (both clocks are wall clocks), median of ${sizes.p3Queries} queries after a
  warm-up query; pre-warmed: \`startup()\` (spawn, \`initialize\` answered), then \`query("hi")\` → first message, median of
  ${sizes.p3Queries} after a warm-up (the floor's \`startup()\` reads up to the \`initialize\` answer); cold import: process wall of
  \`node bench/import.mjs <sdk>\` (spawn → exit), the floor imports \`node:child_process\` only.
- **P4**: heap (\`heapUsed\` after \`gc()\`) after ${
  sizes.p4Queries.toLocaleString("en-US")
} sequential short queries, growth per query from query ${sizes.p4Warmup.toLocaleString("en-US")} on (with and
  without the code space; TurboFan's output keeps growing the heap for ~2,000 queries, in old space too), and from
  query 20 on over ${
  (sizes.p4Queries / 2).toLocaleString("en-US")
} queries under \`--jitless\` (no JIT: retained data only); peak RSS (\`maxRSS\`) of a consumer that sleeps 1 ms
  every 128 messages over ${sizes.p4Messages.toLocaleString("en-US")} messages (~${
  Math.round(sizes.p4Messages * 877 / 1e6)
} MB).
- **P5**: ${sizes.p5Sessions} queries started at once, ${
  sizes.p5Messages.toLocaleString("en-US")
} messages each; wall until all ended, peak RSS, most \`process\` listeners added at once.
- **CLI**: the real \`claude\` binary, one-shot \`query({ prompt: "SAY hello from the bench" })\` consumed to its end, against the
  scripted model server in another process (\`ANTHROPIC_BASE_URL\` on 127.0.0.1, every other host behind a dead proxy; the
  run fails if the CLI sends the server anything but \`POST /v1/messages\`), in a temporary \`cwd\` and \`HOME\`; ${sizes.cliWarmup}
  warm-up queries, then ${sizes.cliQueries}: wall \`query()\` → result (median), consumer CPU (\`process.cpuUsage()\` of the
  consumer process over the ${sizes.cliQueries} queries, spawn to CLI exit, divided by ${sizes.cliQueries}), result → end of the iteration
  (the CLI exited and was reaped; median). Where ours' CPU goes: docs/PERFORMANCE.md.
`

const out = option("out") ?? path.join(here, "results.md")
// the instruction-count guard's figures (bench/icount.mjs --write) stay where they are
const kept = (() => {
  try {
    return /<!-- icount:start -->[\s\S]*<!-- icount:end -->/.exec(fs.readFileSync(out, "utf8"))?.[0]
  } catch {
    return undefined
  }
})()
fs.writeFileSync(out, kept === undefined ? md : `${md}\n${kept}\n`)
process.stdout.write(`\n${table}\n\nwrote ${path.relative(process.cwd(), out)} (took ${tookMin.toFixed(1)} min)\n`)
