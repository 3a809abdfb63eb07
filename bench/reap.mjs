// What reaping tool processes adds to closing a session:
//   npm run build && node bench/reap.mjs [fakeCloses] [realCloses]
// Prints a markdown table (medians). Closes with `reapToolProcesses: false` (the process group only) and with the
// default alternate within one run, so both see the same machine load.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ClaudeAgent, NodeClaudeAgent, Permissions } from "../dist/index.js"
import * as Reaper from "../dist/internal/transport/reaper.js"
import { FakeCli, ScriptedModelServer } from "../dist/testing.js"

const FAKE_CLOSES = Number(process.argv[2] ?? 50)
const REAL_CLOSES = Number(process.argv[3] ?? 10)

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(0)} ms`
const pidCount = () => fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e)).length

/** Median wall time of `f` (synchronous) over `n` calls. */
const timeSync = (f, n = 50) => {
  const samples = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    f()
    samples.push(performance.now() - t)
  }
  return median(samples)
}

/** One session: started, one turn answered, then its scope closed; the time the close took. */
const closeOnce = (options, prompt) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const session = yield* ClaudeAgent.session(options).pipe(Scope.extend(scope))
    yield* Stream.runDrain(session.turn(prompt)).pipe(Scope.extend(scope))
    const started = performance.now()
    yield* Scope.close(scope, Exit.void)
    return performance.now() - started
  })

/** `n` closes of each variant, alternating; the median of each. */
const compare = (n, options) =>
  Effect.gen(function*() {
    const off = []
    const on = []
    for (let i = 0; i < n; i++) {
      off.push(yield* options(false))
      on.push(yield* options(true))
    }
    return { off: median(off), on: median(on) }
  })

const program = Effect.gen(function*() {
  const rows = []
  const pids = pidCount()
  const marker = Reaper.makeMarker()
  rows.push([`marker scan of /proc (${pids} processes)`, ms(timeSync(() => Reaper.marked(marker)))])
  rows.push([`process-tree snapshot (${pids} processes)`, ms(timeSync(() => Reaper.descendants(process.pid)))])

  // the same two scans with 1,000 more processes (idle `sleep`s of this user)
  const extra = Array.from({ length: 1000 }, () => spawn("sleep", ["600"], { stdio: "ignore" }))
  yield* Effect.sleep("1 second")
  const more = pidCount()
  rows.push([`marker scan of /proc (${more} processes)`, ms(timeSync(() => Reaper.marked(marker), 20))])
  // as a close scans: only the pids given out since its CLI's spawn (here: since the marker was made)
  const since = Reaper.makeMarker(Reaper.origin(Reaper.pidMax()))
  rows.push([
    `… the pids given out since the CLI's start (${more} processes on the machine)`,
    ms(timeSync(() => Reaper.marked(since), 20))
  ])
  rows.push([`process-tree snapshot (${more} processes)`, ms(timeSync(() => Reaper.descendants(process.pid), 20))])
  for (const child of extra) child.kill("SIGKILL")
  yield* Effect.sleep("1 second")

  const fake = (scenario) => (reap) => closeOnce(FakeCli.options(scenario, { reapToolProcesses: reap }), "hi")
  const echo = yield* compare(FAKE_CLOSES, fake(FakeCli.echoScenario))
  rows.push([`close of a fake-CLI session, median of ${FAKE_CLOSES}: process group only`, ms(echo.off)])
  rows.push([`… with tool reaping (default)`, ms(echo.on)])

  // a backgrounded tool process left behind: reaping SIGTERMs it and waits for it to go
  const left = FakeCli.scenario([FakeCli.expectUser(), FakeCli.spawnToolProcess(), FakeCli.turn("done")])
  const leftovers = []
  for (let i = 0; i < FAKE_CLOSES; i++) leftovers.push(yield* fake(left)(true))
  rows.push([`… with one backgrounded tool process to reap, median of ${FAKE_CLOSES}`, ms(median(leftovers))])

  // many sessions closed together (one scope): their CLIs exit in the same ticks, the scans are shared
  const together = (count) => (reap) =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const options = FakeCli.options(FakeCli.echoScenario, { reapToolProcesses: reap })
      yield* Effect.forEach(
        Array.from({ length: count }),
        () =>
          Effect.flatMap(
            Scope.extend(ClaudeAgent.session(options), scope),
            (session) => Scope.extend(Stream.runDrain(session.turn("hi")), scope)
          ),
        { concurrency: "unbounded", discard: true }
      )
      const started = performance.now()
      yield* Scope.close(scope, Exit.void)
      return performance.now() - started
    })
  const CONCURRENT = 50
  const concurrent = yield* compare(5, together(CONCURRENT))
  rows.push([`${CONCURRENT} fake-CLI sessions closed together, median of 5: process group only`, ms(concurrent.off)])
  rows.push([`… with tool reaping (default)`, ms(concurrent.on)])

  const server = yield* ScriptedModelServer.make()
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "eca-bench-reap-"))
  const real = (reap) =>
    closeOnce({ cwd, env: server.env(), reapToolProcesses: reap }, "SAY hi").pipe(Effect.provide(Permissions.allowAll))
  const cli = yield* compare(REAL_CLOSES, real)
  rows.push([`close of a real-CLI session, median of ${REAL_CLOSES}: process group only`, ms(cli.off)])
  rows.push([`… with tool reaping (default)`, ms(cli.on)])
  fs.rmSync(cwd, { recursive: true, force: true })

  const load = os.loadavg().map((l) => l.toFixed(2)).join(" / ")
  console.log(`Node ${process.version}, ${os.cpus().length} cores, load ${load}\n`)
  console.log("| figure | median |\n|---|---|")
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`)
})

await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer)))
