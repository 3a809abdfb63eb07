// `npm run bench`: figures P1–P5 of issue 10, each for this SDK's Promise API ("ours"), the official
// `@anthropic-ai/claude-agent-sdk` and the floor (a bare Node reader), all driving the same fake CLI. Every
// measurement runs in a fresh worker process (bench/worker.mjs); the three contenders take turns within each round
// so that machine noise hits them alike; the table shows medians. Writes bench/results.md.
//
//   node bench/run.mjs [--quick] [--runs N] [--only P1,P3] [--sdks ours,official,floor] [--out results.md]
//
// --quick scales every size down (about 20x less work) for a smoke run; the default is the issue's sizes.
import { spawn } from "node:child_process"
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
const only = option("only")?.split(",").map((s) => s.trim().toUpperCase())
const runsOverride = option("runs") === undefined ? undefined : Number(option("runs"))
const SDKS = option("sdks")?.split(",").map((s) => s.trim()) ?? ["ours", "official", "floor"]

const sizes = quick
  ? { p1: 20_000, p1Warmup: 20_000, p1PermWarmup: 2_000, p2: 2_000, p3Queries: 5, p4Queries: 400, p4Warmup: 200, p4Messages: 57_000, p5Sessions: 20, p5Messages: 1000 }
  : { p1: 100_000, p1Warmup: 100_000, p1PermWarmup: 20_000, p2: 10_000, p3Queries: 10, p4Queries: 2000, p4Warmup: 1000, p4Messages: 228_000, p5Sessions: 100, p5Messages: 1000 }

// ---------------------------------------------------------------------------------------------------------------------
// running workers
// ---------------------------------------------------------------------------------------------------------------------

const runNode = (argv, { timeoutMs = 600_000 } = {}) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, argv, { cwd: path.join(here, ".."), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("exit", (code, signal) => {
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
    measure: (sdk) =>
      worker("sequential", sdk, { queries: sizes.p4Queries, warmup: sizes.p4Warmup }, ["--expose-gc"]),
    rows: [
      { label: `P4 heap after ${Math.min(1000, sizes.p4Queries)} sequential queries`, key: "heapAt1000MB", unit: "MB", vsOfficial: 1.0 },
      { label: `P4 heap growth per query, queries 20→${Math.min(1000, sizes.p4Queries)} (JIT warm-up included)`, key: "earlyGrowthPerQueryB", unit: "B", max: 1024 },
      { label: `P4 heap after ${sizes.p4Queries} sequential queries`, key: "heapMB", unit: "MB" },
      { label: `P4 heap growth per query, queries ${sizes.p4Warmup}→${sizes.p4Queries} (all)`, key: "growthPerQueryB", unit: "B", max: 1024 },
      { label: `P4 heap growth per query, queries ${sizes.p4Warmup}→${sizes.p4Queries} (excl. code space)`, key: "dataGrowthPerQueryB", unit: "B", max: 1024 },
      { label: "P4 time per sequential query", key: "msPerQuery", unit: "ms" }
    ]
  },
  {
    id: "P4",
    runs: 1,
    // no JIT at all: what is left growing is retained data
    measure: (sdk) =>
      worker("sequential", sdk, { queries: sizes.p4Queries / 2 }, ["--expose-gc", "--jitless"]),
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
  return `${v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 })}${unit === "" ? "" : ` ${unit}`}`
}
const ratio = (a, b) => (a === undefined || b === undefined || b === 0 ? undefined : a / b)
const fmtRatio = (r) => (r === undefined ? "–" : `${r.toFixed(2)}×`)

const started = new Date()
const load0 = os.loadavg()
const selected = figures.filter((f) => only === undefined || only.includes(f.id))
const samples = new Map() // row label -> sdk -> values
const log = (s) => process.stderr.write(`${s}\n`)

log(`bench: ${quick ? "quick sizes" : "issue sizes"}, ${selected.length} measurements × 3 contenders`)
for (const figure of selected) {
  const runs = runsOverride ?? figure.runs
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

const rows = []
for (const figure of selected) {
  for (const row of figure.rows) {
    const bySdk = samples.get(row.label)
    if (bySdk === undefined) continue
    const m = Object.fromEntries(SDKS.map((sdk) => [sdk, median(bySdk.get(sdk) ?? [])]))
    const vsFloor = ratio(m.ours, m.floor)
    const vsOfficial = ratio(m.ours, m.official)
    const checks = []
    if (row.vsFloor !== undefined) checks.push(vsFloor !== undefined && vsFloor <= row.vsFloor)
    if (row.vsOfficial !== undefined) checks.push(vsOfficial !== undefined && vsOfficial <= row.vsOfficial)
    if (row.max !== undefined) checks.push(m.ours !== undefined && m.ours < row.max)
    const target = [
      row.vsFloor !== undefined ? `≤ ${row.vsFloor.toFixed(2)}× floor` : undefined,
      row.vsOfficial !== undefined ? `≤ official` : undefined,
      row.max !== undefined ? `< ${row.max} ${row.unit}` : undefined
    ].filter(Boolean).join(", ")
    rows.push({
      label: row.label,
      ours: fmt(m.ours, row.unit),
      official: fmt(m.official, row.unit),
      floor: fmt(m.floor, row.unit),
      vsFloor: fmtRatio(vsFloor),
      vsOfficial: fmtRatio(vsOfficial),
      target: target === "" ? "(info)" : target,
      met: checks.length === 0 ? "" : checks.every(Boolean) ? "yes" : "no",
      n: Math.min(...SDKS.map((sdk) => (bySdk.get(sdk) ?? []).length))
    })
  }
}

const header = ["figure (median)", "ours", "official", "floor", "ours/floor", "ours/official", "target", "met", "runs"]
const table = [
  `| ${header.join(" | ")} |`,
  `|${header.map(() => "---").join("|")}|`,
  ...rows.map((r) =>
    `| ${[r.label, r.ours, r.official, r.floor, r.vsFloor, r.vsOfficial, r.target, r.met, r.n].join(" | ")} |`
  )
].join("\n")

const pkg = (name) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(here, "..", "node_modules", name, "package.json"), "utf8")).version
  } catch {
    return "?"
  }
}
const ourVersion = JSON.parse(fs.readFileSync(path.join(here, "..", "package.json"), "utf8")).version
const cpus = os.cpus()
const load1 = os.loadavg()
const md = `# Benchmarks: effect-claude-agent vs the official SDK vs the floor

Generated by \`npm run bench\`${quick ? " (\`--quick\`: scaled-down sizes)" : ""} on ${started.toISOString()}.

- Machine: ${cpus[0]?.model ?? "?"} × ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}
- Node ${process.version}; load average ${load0.map((x) => x.toFixed(2)).join(" / ")} at start, ${load1.map((x) => x.toFixed(2)).join(" / ")} at the end
- ours: effect-claude-agent ${ourVersion} (Promise API, \`effect-claude-agent/promise\`: \`dist/promise.js\` as \`npm run build\` bundles it, with effect ${pkg("effect")} inside)
- official: @anthropic-ai/claude-agent-sdk ${pkg("@anthropic-ai/claude-agent-sdk")}
- floor: \`bench/floor.mjs\`, a bare Node reader (spawn, split stdout on \`\\n\`, \`JSON.parse\`, answer \`can_use_tool\`)
- All three drive the same fake CLI, \`bench/fake-cli.mjs\` (\`bench/fake-cli.sh\` for P4's sequential sessions)

${table}

How each figure is measured (every run is a fresh worker process, \`bench/worker.mjs\`; the contenders take turns):

- **P1**: ${sizes.p1.toLocaleString("en-US")} messages (${Math.round(sizes.p1 * 877 / 1e6)} MB: per tool call 10 text deltas, 3 input-json deltas, start/stop events,
  an assistant text block, an assistant tool_use block and a ~5 KB tool result) consumed with \`for await\`. "Warm" rows
  run a ${sizes.p1Warmup.toLocaleString("en-US")}-message query first in the same process (${sizes.p1PermWarmup.toLocaleString("en-US")} for the permission variant), i.e. steady state; the "cold" rows are the first query of
  the process (JIT warm-up and, for ours, the one-time \`--version\` probe included). Wall: first message → result;
  CPU: \`process.cpuUsage()\` from \`query()\` to the result. The permission variant asks \`can_use_tool\` before every tool
  call (1 per 23 messages) and waits for the answer.
- **P2**: ${sizes.p2.toLocaleString("en-US")} sequential \`can_use_tool\` requests; the fake CLI times request written → response read.
- **P3**: \`query()\` call → first byte on the fake CLI's stdin (both clocks are wall clocks), median of ${sizes.p3Queries} queries after a
  warm-up query; pre-warmed: \`startup()\` (spawn, \`initialize\` answered), then \`query("hi")\` → first message, median of
  ${sizes.p3Queries} after a warm-up (the floor's \`startup()\` reads up to the \`initialize\` answer); cold import: process wall of
  \`node bench/import.mjs <sdk>\` (spawn → exit), the floor imports \`node:child_process\` only.
- **P4**: heap (\`heapUsed\` after \`gc()\`) after ${sizes.p4Queries.toLocaleString("en-US")} sequential short queries, growth per query from query ${sizes.p4Warmup.toLocaleString("en-US")} on (with and
  without the code space; TurboFan's output keeps growing the heap for ~2,000 queries, in old space too), and from
  query 20 on over ${(sizes.p4Queries / 2).toLocaleString("en-US")} queries under \`--jitless\` (no JIT: retained data only); peak RSS (\`maxRSS\`) of a consumer that sleeps 1 ms
  every 128 messages over ${sizes.p4Messages.toLocaleString("en-US")} messages (~${Math.round(sizes.p4Messages * 877 / 1e6)} MB).
- **P5**: ${sizes.p5Sessions} queries started at once, ${sizes.p5Messages.toLocaleString("en-US")} messages each; wall until all ended, peak RSS, most \`process\` listeners added at once.
`

const out = option("out") ?? path.join(here, "results.md")
fs.writeFileSync(out, md)
process.stdout.write(`\n${table}\n\nwrote ${path.relative(process.cwd(), out)}\n`)
