// Closing a connection ends the tool processes the CLI started outside its process group (fake CLI, real processes).
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import { ClaudeAgent, Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import * as Reaper from "../src/internal/transport/reaper.js"
import { isAlive, NodeExecutor } from "./support/process.js"
import { expectLogs } from "./support/logs.js"

const TransportLive = Transport.layerProcess.pipe(Layer.provide(NodeExecutor))

const open = (spec: Transport.LaunchSpec) => Effect.flatMap(Transport.Transport, (t) => t.open(spec))

/** The pid of a `system/status` frame that announces a tool process. */
const toolPid = (frame: { readonly type: string }): Option.Option<number> => {
  const pid: unknown = frame.type === "system" && "tool_pid" in frame ? frame["tool_pid"] : undefined
  return typeof pid === "number" ? Option.some(pid) : Option.none()
}

/** The pids of the first `count` tool processes the connection announces. */
const toolPids = (connection: Transport.Connection, count: number) =>
  connection.messages.pipe(Stream.filterMap(toolPid), Stream.take(count), Stream.runCollect, Effect.map(Chunk.toArray))

/** Asserts that every process of `pids` still runs, then kills them. */
const stillRunning = (pids: ReadonlyArray<number>) =>
  Effect.sync(() => expect(pids.filter(isAlive)).toEqual(pids)).pipe(
    Effect.ensuring(Effect.sync(() => {
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // gone
        }
      }
    }))
  )

/** Opens `scenario`, waits for its `count` tool processes, closes the scope; the pids and how long closing took. */
const openAndClose = (scenario: FakeCli.Scenario, count: number, extra: Partial<Transport.LaunchSpec> = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const connection = yield* open(FakeCli.launch(scenario, extra)).pipe(Scope.extend(scope))
    const pids = yield* toolPids(connection, count).pipe(Scope.extend(scope))
    expect(pids).toHaveLength(count)
    for (const pid of pids) expect(isAlive(pid)).toBe(true)
    const started = Date.now()
    yield* Scope.close(scope, Exit.void)
    return { pids, took: Date.now() - started, cli: Option.getOrThrow(connection.pid) }
  })

describe("Reaping tool processes (process)", () => {
  it.live("a tool process in its own session and group is gone after a normal close", () =>
    Effect.gen(function*() {
      const { pids, took } = yield* openAndClose(FakeCli.scenario([FakeCli.spawnToolProcess()]), 1)
      expect(pids.filter(isAlive)).toEqual([])
      expect(took).toBeLessThan(2000)
    }).pipe(Effect.provide(TransportLive)), 30_000)

  it.live("one that ignores SIGTERM is SIGKILLed after the kill grace", () =>
    Effect.gen(function*() {
      const { pids, took } = yield* openAndClose(
        FakeCli.scenario([FakeCli.spawnToolProcess({ ignoreSigterm: true }), FakeCli.spawnToolProcess()]),
        2,
        { killGraceMillis: 500 }
      )
      expect(pids.filter(isAlive)).toEqual([])
      // the CLI exits on stdin EOF; the SIGTERM-proof tool waits out the 500 ms grace
      expect(took).toBeGreaterThanOrEqual(450)
      expect(took).toBeLessThan(5000)
    }).pipe(Effect.provide(TransportLive)), 30_000)

  it.live(
    "a CLI the SDK has to SIGKILL leaves no tool process, not even one that cleared its environment",
    () =>
      Effect.gen(function*() {
        const { cli, pids } = yield* openAndClose(
          FakeCli.scenario([
            FakeCli.ignoreSigterm,
            FakeCli.spawnToolProcess({ ignoreSigterm: true }),
            FakeCli.spawnToolProcess({ clearEnv: true }),
            FakeCli.stall
          ]),
          2,
          { killGraceMillis: 300 }
        )
        expect(isAlive(cli)).toBe(false)
        expect(pids.filter(isAlive)).toEqual([])
      }).pipe(expectLogs([/^WARN CLI ignored SIGTERM: SIGKILL/]), Effect.provide(TransportLive)),
    30_000
  )

  it.live("a CLI that crashed: its tool process is reaped when the scope closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const connection = yield* open(
        FakeCli.launch(FakeCli.scenario([FakeCli.spawnToolProcess(), FakeCli.sleep(100), FakeCli.exit(3)]))
      ).pipe(Scope.extend(scope))
      const [pid] = yield* toolPids(connection, 1).pipe(Scope.extend(scope))
      expect(yield* connection.awaitExit).toEqual({ code: 3, signal: null })
      expect(isAlive(pid!)).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(isAlive(pid!)).toBe(false)
    }).pipe(Effect.provide(TransportLive)), 30_000)

  it.live(
    "reapToolProcesses: false leaves the tool process running (and the CLI's environment unmarked)",
    () =>
      Effect.gen(function*() {
        const { pids } = yield* openAndClose(FakeCli.scenario([FakeCli.spawnToolProcess()]), 1, {
          reapToolProcesses: false
        })
        yield* stillRunning(pids)
      }).pipe(Effect.provide(TransportLive)),
    30_000
  )

  it.live("the option reaches the Transport from the session options", () =>
    Effect.gen(function*() {
      const scenario = FakeCli.scenario([FakeCli.expectUser(), FakeCli.spawnToolProcess(), FakeCli.turn("done")])
      const run = (reapToolProcesses: boolean | undefined) =>
        ClaudeAgent.query("go", FakeCli.options(scenario, { reapToolProcesses })).pipe(
          Stream.runCollect,
          Effect.map((messages) => Chunk.toArray(Chunk.filterMap(messages, toolPid)))
        )
      const reaped = yield* run(undefined)
      expect(reaped).toHaveLength(1)
      expect(reaped.filter(isAlive)).toEqual([])
      const left = yield* run(false)
      expect(left).toHaveLength(1)
      yield* stillRunning(left)
    }).pipe(Effect.provide(TransportLive)), 30_000)

  it.live("finds marked processes, also under nested markers; sessions closing together share one scan", () =>
    Effect.gen(function*() {
      const outer = Reaper.makeMarker()
      const inner = Reaper.makeMarker()
      const start = (env: Record<string, string>) =>
        Effect.acquireRelease(
          Effect.sync(() => spawn("sleep", ["30"], { stdio: "ignore", env: { ...process.env, ...env } })),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
      const scans = Reaper.makeScans()
      const first = scans.exited()
      expect(scans.markedSince(outer, first)).toEqual([])
      const both = yield* start({ [outer.name]: outer.value, [inner.name]: inner.value })
      const pids = (procs: ReadonlyArray<Reaper.Proc>) => procs.map((p) => p.pid)
      // the scan that started after exit `first` is reused: it did not see the process started since
      expect(scans.markedSince(outer, first)).toEqual([])
      const second = scans.exited()
      expect(pids(scans.markedSince(outer, second))).toEqual([both.pid])
      expect(pids(scans.markedSince(inner, second))).toEqual([both.pid])
      expect(pids(Reaper.marked(inner))).toEqual([both.pid])
      // a variable whose name only ends like a marker is not one
      const lookalike = yield* start({ [`X${outer.name}`]: "1" })
      expect(pids(Reaper.marked(outer))).toEqual([both.pid])
      expect(isAlive(lookalike.pid!)).toBe(true)
    }).pipe(Effect.scoped))

  it.live("a scan reads only the pids given out after the marker's origin, and finds every process started since", () =>
    Effect.gen(function*() {
      const scans = Reaper.makeScans()
      const start = (env: Record<string, string>) =>
        Effect.acquireRelease(
          Effect.sync(() => spawn("sleep", ["30"], { stdio: "ignore", env: { ...process.env, ...env } })),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
      const pids = (procs: ReadonlyArray<Reaper.Proc>) => procs.map((p) => p.pid).sort((a, b) => a - b)
      const name = Reaper.makeMarker()
      const env = { [name.name]: name.value }
      // started before the origin was taken: outside the window (no process can inherit a marker before its CLI runs)
      const before = yield* start(env)
      const marker: Reaper.Marker = { ...name, origin: Reaper.origin(scans.pidMax) }
      expect(marker.origin).toBeDefined()
      const after = yield* Effect.forEach(Array.from({ length: 20 }, () => env), start)
      const window = Reaper.windowSince(marker.origin, Reaper.origin(scans.pidMax))
      // every process started since the origin has a pid in the window: the window holds on this kernel (the
      // counter may have wrapped meanwhile on a machine with a low pid_max)
      expect(window.above).toBe(marker.origin!.lastPid)
      for (const child of after) expect(child.pid! > window.above || child.pid! <= window.upTo).toBe(true)
      expect(pids(Reaper.marked(marker))).toEqual(pids(after.map((c) => ({ pid: c.pid!, start: "" }))))
      expect(pids(scans.markedSince(marker, scans.exited()))).toEqual(pids(Reaper.marked(marker)))
      // without an origin every pid is read
      expect(pids(Reaper.marked(name))).toEqual(pids([before, ...after].map((c) => ({ pid: c.pid!, start: "" }))))
    }).pipe(Effect.scoped))

  it("the window holds the pids given out since the origin, across one wrap of the pid counter, and no more", () => {
    const since: Reaper.Origin = { lastPid: 30_000, forks: 1_000, tasks: 200, pidMax: 32_768 }
    const now = (lastPid: number, forks: number): Reaper.Origin => ({ lastPid, forks, tasks: 150, pidMax: 32_768 })
    const above = (n: number) => ({ above: n, upTo: 0 })
    expect(Reaper.windowSince(since, now(30_100, 1_100))).toEqual(above(30_000))
    // 32,768 − 1 − 30,000 − 200 = 2,567 tasks could have wrapped it and brought it back above the origin: every pid
    expect(Reaper.windowSince(since, now(30_100, 1_000 + 2_566))).toEqual(above(30_000))
    expect(Reaper.windowSince(since, now(30_100, 1_000 + 2_567))).toEqual(Reaper.EVERY_PID)
    // the last pid below the origin's: it wrapped once; the pids above the origin's and those up to where it is now
    expect(Reaper.windowSince(since, now(400, 1_100))).toEqual({ above: 30_000, upTo: 400 })
    // a second wrap takes a whole round from 300 giving out every pid not in use: 32,768 − 300 − 200 = 32,268 tasks
    expect(Reaper.windowSince(since, now(400, 1_000 + 32_267))).toEqual({ above: 30_000, upTo: 400 })
    expect(Reaper.windowSince(since, now(400, 1_000 + 32_268))).toEqual(Reaper.EVERY_PID)
    // a different bound, a counter that went back, or an unknown origin: every pid
    expect(Reaper.windowSince(since, { ...now(30_100, 1_100), pidMax: 4_194_304 })).toEqual(Reaper.EVERY_PID)
    expect(Reaper.windowSince(since, now(30_100, 900))).toEqual(Reaper.EVERY_PID)
    expect(Reaper.windowSince(undefined, now(30_100, 1_100))).toEqual(Reaper.EVERY_PID)
    expect(Reaper.windowSince(since, undefined)).toEqual(Reaper.EVERY_PID)
  })

  /** A `sleep` carrying `marker`'s variable, killed with the scope. */
  const sleeperWith = (marker: Reaper.Marker) =>
    Effect.acquireRelease(
      Effect.sync(() => spawn("sleep", ["30"], { stdio: "ignore", env: { ...process.env, [marker.name]: "1" } })),
      (child) => Effect.sync(() => child.kill("SIGKILL"))
    )

  it.live("a scan reads the pids of both ranges of a window, and only those", () =>
    Effect.gen(function*() {
      const marker = Reaper.makeMarker()
      const child = yield* sleeperWith(marker)
      const pid = child.pid!
      const found = (window: Reaper.Window) => (Reaper.scan(window).get(marker.name) ?? []).map((p) => p.pid)
      // as after a wrap: nothing above the origin's pid, the process among the pids given out since the wrap
      expect(found({ above: Number.MAX_SAFE_INTEGER, upTo: pid })).toEqual([pid])
      expect(found({ above: Number.MAX_SAFE_INTEGER, upTo: pid - 1 })).toEqual([])
      expect(found({ above: pid - 1, upTo: 0 })).toEqual([pid])
      expect(found({ above: pid, upTo: 0 })).toEqual([])
      expect(found(Reaper.EVERY_PID)).toEqual([pid])
    }).pipe(Effect.scoped))

  it.live("a scan reads every pid when the pid counter's bound changed since the origin", () =>
    Effect.gen(function*() {
      const marker = Reaper.makeMarker()
      const child = yield* sleeperWith(marker)
      // taken after the process started: its pid is below the window
      const origin = Reaper.origin(Reaper.pidMax())!
      const found = (m: Reaper.Marker) => Reaper.marked(m).map((p) => p.pid)
      expect(found({ ...marker, origin })).toEqual([])
      // a bound lowered (or raised) since: the counter may have wrapped below pids the window would leave out
      expect(found({ ...marker, origin: { ...origin, pidMax: origin.pidMax + 1 } })).toEqual([child.pid])
    }).pipe(Effect.scoped))

  it("a scan that read a window is reused only for a window it holds", () => {
    const every = Reaper.EVERY_PID
    expect(Reaper.covers(every, { above: 30_000, upTo: 400 })).toBe(true)
    expect(Reaper.covers({ above: 30_000, upTo: 0 }, every)).toBe(false)
    expect(Reaper.covers({ above: 29_000, upTo: 0 }, { above: 30_000, upTo: 0 })).toBe(true)
    expect(Reaper.covers({ above: 30_000, upTo: 0 }, { above: 29_000, upTo: 0 })).toBe(false)
    // after a wrap: the pids given out since it must have been read too
    expect(Reaper.covers({ above: 30_000, upTo: 0 }, { above: 30_000, upTo: 400 })).toBe(false)
    expect(Reaper.covers({ above: 29_000, upTo: 500 }, { above: 30_000, upTo: 400 })).toBe(true)
  })

  it("finds processes by parentage, never the host, and tells a reused pid apart", () => {
    const marker = Reaper.makeMarker()
    expect(marker.name).toMatch(/^ECA_SESSION_[0-9a-f]{32}$/)
    expect(Reaper.marked(marker)).toEqual([])
    const self = Reaper.descendants(1).find((p) => p.pid === process.pid)
    expect(self).toBeDefined()
    expect(Reaper.isRunning(self!)).toBe(true)
    expect(Reaper.isRunning({ ...self!, start: "0" })).toBe(false)
    expect(Reaper.union([self!], [self!, { pid: self!.pid, start: "0" }])).toHaveLength(2)
  })
})
