// One measurement in a fresh process: `node bench/worker.mjs <case> <sdk> [json-params]`; prints one JSON line.
// The SDK is imported before any clock starts (cold import is measured separately, by `imports`).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { setTimeout as sleep } from "node:timers/promises"
import { pathToFileURL } from "node:url"

const here = path.dirname(new URL(import.meta.url).pathname)
const FAKE = path.join(here, "fake-cli.mjs")
const FAKE_SH = path.join(here, "fake-cli.sh")
const [caseName, sdkName, rawParams] = process.argv.slice(2)
const params = JSON.parse(rawParams ?? "{}")
const now = () => performance.now()

const loadSdk = async (name) => {
  if (name === "ours") return await import("effect-claude-agent/promise")
  // the Promise API of another build of this repo (`run.mjs --baseline <ref>` sets BENCH_BASELINE to its checkout)
  if (name === "baseline") {
    return await import(pathToFileURL(path.join(process.env.BENCH_BASELINE, "dist", "promise.js")).href)
  }
  if (name === "official") return await import("@anthropic-ai/claude-agent-sdk")
  return await import("./floor.mjs")
}
const { query, startup } = await loadSdk(sdkName)

const allow = async (_name, input) => ({ behavior: "allow", updatedInput: input })

const run = (prompt, { exe = FAKE, permission = false, fake } = {}) => {
  process.env.BENCH_FAKE = JSON.stringify(fake)
  return query({
    prompt,
    options: {
      pathToClaudeCodeExecutable: exe,
      includePartialMessages: true,
      ...(permission ? { canUseTool: allow } : {})
    }
  })
}

const tmpFile = (name) => path.join(os.tmpdir(), `bench-${process.pid}-${name}`)

/** The median of a run's samples (the upper one of an even count). */
const middle = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const readStats = (file) => fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l))

/** The pinned real CLI (`@anthropic-ai/claude-code`'s native binary). */
const realCliPath = () =>
  path.join(
    path.dirname(createRequire(import.meta.url).resolve("@anthropic-ai/claude-code/package.json")),
    "bin",
    "claude.exe"
  )

/** Starts bench/model-server.mjs; resolves to its environment for the CLI and a `stop` that returns its request log. */
const modelServer = () =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, "model-server.mjs")], { stdio: ["pipe", "pipe", "inherit"] })
    let out = ""
    const lines = []
    let onLine
    child.stdout.on("data", (d) => {
      out += d
      let nl
      while ((nl = out.indexOf("\n")) !== -1) {
        lines.push(JSON.parse(out.slice(0, nl)))
        out = out.slice(nl + 1)
        onLine?.()
      }
    })
    child.once("error", reject)
    onLine = () => {
      onLine = undefined
      resolve({
        env: lines[0].env,
        stop: () =>
          new Promise((done) => {
            child.once("exit", () => done(lines[1]))
            child.stdin.end()
          })
      })
    }
  })

const cases = {
  /**
   * The real CLI against the scripted model server, a one-shot text query to its result: after `warmup` queries,
   * `queries` more; wall query() → result (median), consumer CPU per query (this process only: the CLI and the
   * server run in other processes) over the whole measured loop, i.e. spawn, the turn and the close. With
   * `profile: <file>`, a V8 CPU profile of the measured loop is written there.
   */
  async realCli() {
    const warmup = params.warmup ?? 10
    const count = params.queries ?? 20
    const server = await modelServer()
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "bench-cli-"))
    const options = {
      pathToClaudeCodeExecutable: realCliPath(),
      cwd,
      env: { ...process.env, ...server.env },
      maxTurns: 1
    }
    const one = async () => {
      const start = now()
      let resultAt = 0
      let result
      for await (const m of query({ prompt: "SAY hello from the bench", options })) {
        if (m.type === "result") {
          resultAt = now()
          result = m
        }
      }
      if (result?.subtype !== "success" || result.result !== "hello from the bench") {
        throw new Error(`unexpected result: ${JSON.stringify(result)}`)
      }
      return { wall: resultAt - start, toEnd: now() - resultAt }
    }
    try {
      for (let i = 0; i < warmup; i++) await one()
      let profiler
      if (typeof params.profile === "string") {
        const inspector = await import("node:inspector/promises")
        profiler = new inspector.Session()
        profiler.connect()
        await profiler.post("Profiler.enable")
        await profiler.post("Profiler.setSamplingInterval", { interval: params.profileIntervalUs ?? 250 })
        await profiler.post("Profiler.start")
      }
      const walls = []
      const ends = []
      const cpu0 = process.cpuUsage()
      for (let i = 0; i < count; i++) {
        const { wall, toEnd } = await one()
        walls.push(wall)
        ends.push(toEnd)
      }
      const c = process.cpuUsage(cpu0)
      if (profiler !== undefined) {
        const { profile } = await profiler.post("Profiler.stop")
        fs.writeFileSync(params.profile, JSON.stringify(profile))
        profiler.disconnect()
      }
      const log = await server.stop()
      if (log.other.length > 0) throw new Error(`the CLI asked for more than the Messages API: ${log.other.join(", ")}`)
      return {
        wallMs: middle(walls),
        cpuMs: (c.user + c.system) / 1000 / count,
        closeMs: middle(ends),
        requests: log.requests
      }
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true })
    }
  },

  /** P1: N messages consumed to the end; wall first message -> result, CPU query() -> result. */
  async throughput() {
    const messages = params.messages ?? 100_000
    const permission = params.permission === true
    // a warm-up query first (same kind, fewer messages): the figure is steady-state throughput, not JIT warm-up
    if ((params.warmup ?? 0) > 0) {
      for await (const _ of run("go", { permission, fake: { mode: "stream", messages: params.warmup } })) {
        // drain
      }
    }
    const cpu0 = process.cpuUsage()
    const start = now()
    let first = 0
    let resultAt = 0
    let cpu
    let count = 0
    for await (const m of run("go", { permission, fake: { mode: "stream", messages } })) {
      count++
      if (first === 0) first = now()
      if (m.type === "result") {
        resultAt = now()
        const c = process.cpuUsage(cpu0)
        cpu = (c.user + c.system) / 1000
      }
    }
    return { wallMs: resultAt - first, cpuMs: cpu, startToResultMs: resultAt - start, count }
  },

  /** P2: can_use_tool round trips, timed inside the fake CLI. */
  async roundTrip() {
    const statsFile = tmpFile("rtt")
    for await (
      const _ of run("go", { permission: true, fake: { mode: "rtt", requests: params.requests ?? 10_000, statsFile } })
    ) {
      // drain
    }
    const [stats] = readStats(statsFile)
    fs.rmSync(statsFile, { force: true })
    return {
      p50Us: stats.p50,
      p99Us: stats.p99,
      meanUs: stats.mean,
      p50LateUs: stats.p50Late,
      p99LateUs: stats.p99Late
    }
  },

  /** P3: query() -> first byte on the CLI's stdin (after one warm-up query). */
  async firstByte() {
    const statsFile = tmpFile("first")
    const times = []
    const count = params.queries ?? 10
    let firstQueryMs
    for (let i = 0; i <= count; i++) {
      fs.rmSync(statsFile, { force: true })
      const called = performance.timeOrigin + performance.now()
      for await (const _ of run("hi", { fake: { mode: "short", statsFile } })) {
        // drain
      }
      const [stats] = readStats(statsFile)
      if (i === 0) firstQueryMs = stats.firstByte - called
      else times.push(stats.firstByte - called)
      await sleep(20)
    }
    fs.rmSync(statsFile, { force: true })
    return { firstByteMs: middle(times), firstQueryMs }
  },

  /** P3, pre-warmed: `startup()` (spawn and initialize), then `query(prompt)` → first message. */
  async warmQuery() {
    const times = []
    const count = params.queries ?? 10
    process.env.BENCH_FAKE = JSON.stringify({ mode: "short" })
    for (let i = 0; i <= count; i++) {
      const warm = await startup({ options: { pathToClaudeCodeExecutable: FAKE, includePartialMessages: true } })
      const start = now()
      let first = 0
      for await (const _ of warm.query("hi")) {
        if (first === 0) first = now() - start
      }
      if (i > 0) times.push(first)
      await sleep(20)
    }
    return { warmFirstMessageMs: middle(times) }
  },

  /**
   * P4a: heap after N sequential queries (with --expose-gc); growth per query from query `warmup` on. A warm-up long
   * enough for the optimizing JIT to settle matters: TurboFan's output is not only code space (deoptimization data,
   * relocation info and the maps' dependent-code lists live in old space), and it keeps growing for ~2,000 queries
   * in an SDK that runs many distinct functions per query (under `--jitless` the same loop grows by < 0).
   */
  async sequential() {
    const total = params.queries ?? 1000
    const warm = params.warmup ?? Math.min(20, Math.floor(total / 10))
    const gc = async () => {
      await sleep(10)
      globalThis.gc()
      await sleep(10)
      globalThis.gc()
      return process.memoryUsage().heapUsed
    }
    // compiled code grows while the JIT warms up; it is not retained data
    const code = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "code_space")?.space_used_size ?? 0
    const base = await gc()
    let afterWarm = base
    let codeAfterWarm = code()
    // the literal figure as well: heap after 1,000 queries, growth from query 20 to 1,000 (JIT warm-up included)
    const early = Math.min(20, warm)
    const literalEnd = Math.min(1000, total)
    let afterEarly = base
    let atLiteralEnd = base
    const start = now()
    for (let i = 0; i <= total; i++) {
      if (i === early) afterEarly = await gc()
      if (i === literalEnd) atLiteralEnd = await gc()
      if (i === total) break
      if (i === warm) {
        afterWarm = await gc()
        codeAfterWarm = code()
      }
      for await (const _ of run("hi", { exe: FAKE_SH })) {
        // drain
      }
    }
    const wall = now() - start
    const end = await gc()
    const codeGrowth = code() - codeAfterWarm
    return {
      heapMB: end / 1e6,
      heapAt1000MB: atLiteralEnd / 1e6,
      earlyGrowthPerQueryB: (atLiteralEnd - afterEarly) / Math.max(1, literalEnd - early),
      growthPerQueryB: (end - afterWarm) / (total - warm),
      dataGrowthPerQueryB: (end - afterWarm - codeGrowth) / (total - warm),
      baseHeapMB: base / 1e6,
      msPerQuery: wall / total
    }
  },

  /** P4b: peak RSS of a consumer slower than the producer over a large stream. */
  async slowConsumer() {
    const messages = params.messages ?? 228_000
    const every = params.every ?? 48
    let count = 0
    const start = now()
    for await (const _ of run("go", { fake: { mode: "stream", messages } })) {
      if (++count % every === 0) await sleep(1)
    }
    return { peakRssMB: process.resourceUsage().maxRSS / 1024, wallMs: now() - start, count }
  },

  /** P5: N concurrent sessions: wall, peak RSS, process listeners. */
  async concurrent() {
    const sessions = params.sessions ?? 100
    const messages = params.messages ?? 1000
    const listeners = () => process.eventNames().reduce((n, e) => n + process.listenerCount(e), 0)
    let warnings = 0
    process.on("warning", () => warnings++)
    const baseline = listeners()
    let maxListeners = baseline
    const sampler = setInterval(() => {
      maxListeners = Math.max(maxListeners, listeners())
    }, 5)
    const start = now()
    const counts = await Promise.all(
      Array.from({ length: sessions }, async () => {
        let count = 0
        for await (const _ of run("go", { fake: { mode: "stream", messages } })) {
          count++
          maxListeners = Math.max(maxListeners, listeners())
        }
        return count
      })
    )
    const wall = now() - start
    clearInterval(sampler)
    return {
      wallMs: wall,
      peakRssMB: process.resourceUsage().maxRSS / 1024,
      listeners: maxListeners - baseline,
      warnings,
      count: counts.reduce((a, b) => a + b, 0)
    }
  }
}

try {
  const result = await cases[caseName]()
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
}
