// What a permission rule set costs: the deny and ask rules a session hands to the CLI's settings (a private settings
// file per session) and the PreToolUse hook that checks every tool call. Each measurement runs in a fresh process; the
// contenders take turns within each round; the table shows medians and each row's run-to-run spread.
//
//   npm run build && node bench/rules.mjs [--runs N] [--baseline <built checkout of another commit>]
//
// Rows:
// - R1 session with a rule set, query() → result (fake CLI, short turn): ours and the baseline with
//   `Permissions.layer(Permissions.rules(RULES))`, ours with a plain policy (no rules), the official SDK with
//   `canUseTool` and the same deny rules as `disallowedTools` (its way of handing deny rules to the CLI).
// - R2 PreToolUse hook callbacks per tool call (fake CLI, alternating a Read and a read-only Bash command): ours with
//   the rule set's hook, and a trivial hook (`() => ({})`) on ours, the baseline, this SDK's Promise API ("promise")
//   and the official SDK.
import { spawn } from "node:child_process"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

const here = path.dirname(new URL(import.meta.url).pathname)
const repo = path.join(here, "..")
const FAKE = path.join(here, "fake-cli.mjs")
const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}

const RULES = {
  deny: ["Read(./secrets/**)", "Edit(./.git/**)", "Bash(rm:*)"],
  allow: ["Read", "Bash(cat:*)", "Bash(grep:*)", "Edit(./src/**)"]
}

// ---------------------------------------------------------------------------------------------------------------------
// worker: `node bench/rules.mjs --worker <case> <contender> <json>`, prints one JSON line
// ---------------------------------------------------------------------------------------------------------------------

const worker = async (caseName, contender, params) => {
  const [sdkName, variant] = contender.split(":")
  const statsFile = path.join(process.env.TMPDIR ?? "/tmp", `bench-rules-${process.pid}.json`)
  const fake = caseName === "start" ? { mode: "short" } : { mode: "hooks", requests: params.requests, statsFile }
  process.env.BENCH_FAKE = JSON.stringify(fake)
  const options = { pathToClaudeCodeExecutable: FAKE, cwd: repo }
  let runOne
  if (sdkName === "official" || sdkName === "promise") {
    // the official SDK, or this SDK's Promise API (whose hooks are callbacks answered without a fiber)
    const { query } = sdkName === "official"
      ? await import("@anthropic-ai/claude-agent-sdk")
      : await import(pathToFileURL(path.join(repo, "dist", "promise.js")).href)
    const hooks = variant === "hook" ? { PreToolUse: [{ hooks: [async () => ({})] }] } : undefined
    runOne = async () => {
      for await (
        const m of query({
          prompt: "go",
          options: {
            ...options,
            canUseTool: async (_tool, input) => ({ behavior: "allow", updatedInput: input }),
            disallowedTools: RULES.deny,
            ...(hooks === undefined ? {} : { hooks })
          }
        })
      ) {
        if (m.type === "result") break
      }
    }
  } else {
    const dir = sdkName === "ours" ? repo : process.env.BENCH_BASELINE
    const { ClaudeAgent, Hooks, NodeClaudeAgent, Permissions } = await import(
      pathToFileURL(path.join(dir, "dist", "index.js")).href
    )
    const { Effect, Layer, ManagedRuntime, Stream } = await import("effect")
    const policy = variant === "rules"
      ? Permissions.rules(RULES)
      : () => Effect.succeed(Permissions.allow())
    const layer = Layer.mergeAll(
      Permissions.layer(policy),
      variant === "hook" ? Hooks.layer({ PreToolUse: [{ hooks: [() => Effect.succeed({})] }] }) : Layer.empty,
      NodeClaudeAgent.layer
    )
    // one runtime per process, as an application holds it: the CLI is resolved once
    const runtime = ManagedRuntime.make(layer)
    runOne = () => runtime.runPromise(Stream.runDrain(ClaudeAgent.query("go", options)))
  }
  if (caseName === "start") {
    for (let i = 0; i < params.warmup; i++) await runOne()
    const samples = []
    const cpu0 = process.cpuUsage()
    for (let i = 0; i < params.queries; i++) {
      const t0 = performance.now()
      await runOne()
      samples.push(performance.now() - t0)
    }
    const cpu = process.cpuUsage(cpu0)
    samples.sort((a, b) => a - b)
    return {
      msPerQuery: samples[Math.floor(samples.length / 2)],
      cpuMsPerQuery: (cpu.user + cpu.system) / 1000 / params.queries
    }
  }
  const fs = await import("node:fs")
  const cpu0 = process.cpuUsage()
  await runOne()
  const cpu = process.cpuUsage(cpu0)
  const stats = JSON.parse(fs.readFileSync(statsFile, "utf8").trim().split("\n").at(-1))
  fs.rmSync(statsFile, { force: true })
  return {
    p50Us: stats.p50,
    p99Us: stats.p99,
    p50LateUs: stats.p50Late,
    cpuUsPerCall: (cpu.user + cpu.system) / params.requests
  }
}

if (args[0] === "--worker") {
  const result = await worker(args[1], args[2], JSON.parse(args[3] ?? "{}"))
  process.stdout.write(JSON.stringify(result) + "\n")
  process.exit(0)
}

// ---------------------------------------------------------------------------------------------------------------------
// driver
// ---------------------------------------------------------------------------------------------------------------------

const runs = Number(option("runs") ?? 5)
const onlyCase = option("case")
const baseline = option("baseline")
const env = { ...process.env, ...(baseline === undefined ? {} : { BENCH_BASELINE: path.resolve(baseline) }) }

const measure = (caseName, contender, params) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, "rules.mjs"), "--worker", caseName, contender, params], {
      env,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split("\n").at(-1)))
        : reject(new Error(`${contender} exited ${code}`)))
  })

const cases = [
  {
    id: "R1",
    name: "start",
    params: JSON.stringify({ warmup: 5, queries: 20 }),
    contenders: ["ours:rules", "ours:policy", ...(baseline ? ["baseline:rules"] : []), "official:deny"],
    rows: [
      { label: "R1 session with a rule set, query() → result (median of 20)", key: "msPerQuery", unit: "ms" },
      { label: "R1 … SDK process CPU per query", key: "cpuMsPerQuery", unit: "ms" }
    ]
  },
  {
    id: "R2",
    name: "hooks",
    params: JSON.stringify({ requests: 2_000 }),
    contenders: ["ours:rules", "ours:hook", ...(baseline ? ["baseline:hook"] : []), "promise:hook", "official:hook"],
    rows: [
      { label: "R2 PreToolUse callbacks per tool call p50 (2k calls)", key: "p50Us", unit: "µs" },
      { label: "R2 … p99", key: "p99Us", unit: "µs" },
      { label: "R2 … p50, second half only", key: "p50LateUs", unit: "µs" },
      { label: "R2 SDK process CPU per tool call (whole query / 2k)", key: "cpuUsPerCall", unit: "µs" }
    ]
  }
]

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const lines = []
for (const c of cases.filter((c) => onlyCase === undefined || c.id === onlyCase)) {
  const samples = Object.fromEntries(c.contenders.map((k) => [k, []]))
  for (let r = 0; r < runs; r++) {
    for (const contender of c.contenders) {
      const result = await measure(c.name, contender, c.params)
      samples[contender].push(result)
      process.stderr.write(`${c.id} ${contender} run ${r + 1}/${runs}: ${JSON.stringify(result)}\n`)
    }
  }
  for (const row of c.rows) {
    const cells = c.contenders.map((k) => {
      const xs = samples[k].map((s) => s[row.key])
      const m = median(xs)
      const spread = (Math.max(...xs) - Math.min(...xs)) / m
      return `${k} ${m.toFixed(row.unit === "ms" ? 1 : 0)} ${row.unit} (±${(spread * 50).toFixed(0)}%)`
    })
    lines.push(`| ${row.label} | ${cells.join(" | ")} |`)
  }
}
process.stdout.write(lines.join("\n") + "\n")
