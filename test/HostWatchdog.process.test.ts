// The host watchdog (src/internal/transport/hostWatchdog.ts): a host SIGKILLed while its CLIs are mid-turn leaves
// nothing behind (CLIs, their children, their tool processes in groups of their own) within the stated bound; the
// reaper starts with the first session and ends with the layer.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import { REAPER_ENV_NAME } from "../src/internal/transport/hostWatchdog.js"
import { isAlive, NodeExecutor, OWNER_ENV, withEnv } from "./support/process.js"

const HOST = path.join(import.meta.dirname, "fixtures", "watchdog-host.ts")

/** The bound SECURITY.md states: from the host's death to the last of its CLIs' processes gone. */
const BOUND_MILLIS = 1000

const killAll = (pids: ReadonlyArray<number>) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }
}

/** Polls (every 10 ms, up to `limitMillis`) until `done`; how long it took, or `undefined`. */
const within = (limitMillis: number, done: () => boolean) =>
  Effect.promise(async () => {
    const started = Date.now()
    while (Date.now() - started < limitMillis) {
      if (done()) return Date.now() - started
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return done() ? Date.now() - started : undefined
  })

interface Started {
  readonly cli: number
  readonly tools: ReadonlyArray<number>
}

/**
 * Starts the host fixture with `sessions` fake CLIs mid-turn, marked with a fresh owner value; its pid, what it
 * started, and the owner value. The host is SIGKILLed and everything owned is killed when the scope closes.
 */
const startHost = (sessions: number, args: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const owner = `watchdog-${process.pid}-${Math.random().toString(16).slice(2)}`
    const host = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--import", "tsx", HOST, ...args], {
          env: { ...process.env, ECA_WATCHDOG_SESSIONS: String(sessions), ECA_WATCHDOG_OWNER: owner },
          stdio: ["ignore", "ignore", "pipe"]
        })
      ),
      (host) =>
        Effect.sync(() => {
          if (host.exitCode === null && host.signalCode === null) host.kill("SIGKILL")
          killAll(withEnv(OWNER_ENV, owner))
        })
    )
    const started = yield* Effect.async<ReadonlyArray<Started>, Error>((resume) => {
      let err = ""
      host.stderr!.setEncoding("utf8")
      host.stderr!.on("data", (chunk: string) => {
        err += chunk
        const line = err.split("\n").find((l) => l.startsWith("["))
        if (line !== undefined) resume(Effect.succeed(JSON.parse(line)))
      })
      host.once("exit", (code) => resume(Effect.fail(new Error(`host exited ${code}: ${err}`))))
    }).pipe(Effect.timeout("60 seconds"))
    const killed = Effect.async<void>((resume) => {
      host.once("exit", () => resume(Effect.void))
      host.kill("SIGKILL")
    })
    return { pid: host.pid!, started, owner, killed }
  })

describe("host watchdog (process)", () => {
  it.scopedLive(
    "a host SIGKILLed mid-turn: its CLIs, their children and tool processes are gone within the bound",
    () =>
      Effect.gen(function*() {
        const host = yield* startHost(3)
        const pids = host.started.flatMap((s) => [s.cli, ...s.tools])
        // three CLIs, each with a tool process (own session and group) and a child in its group
        expect(pids).toHaveLength(9)
        expect(pids.filter(isAlive)).toEqual(pids)
        const owned = withEnv(OWNER_ENV, host.owner)
        expect(owned.length).toBeGreaterThanOrEqual(9)
        expect(withEnv(REAPER_ENV_NAME, String(host.pid))).toHaveLength(1)

        yield* host.killed
        const took = yield* within(10_000, () => withEnv(OWNER_ENV, host.owner).length === 0)
        // eslint-disable-next-line no-console
        console.log(`[watchdog] host SIGKILL → last marked process gone: ${took} ms (bound ${BOUND_MILLIS} ms)`)
        expect(took).toBeDefined()
        expect(took!).toBeLessThan(BOUND_MILLIS * 3) // the bound, with room for a loaded machine
        // and the reaper itself is gone
        expect(yield* within(2000, () => withEnv(REAPER_ENV_NAME, String(host.pid)).length === 0)).toBeDefined()
      }),
    90_000
  )

  it.scopedLive(
    "sessions kept after the layer that opened them closed: still watched, gone within the bound of a host SIGKILL",
    () =>
      Effect.gen(function*() {
        const host = yield* startHost(2, ["--layer-closed"])
        const pids = host.started.flatMap((s) => [s.cli, ...s.tools])
        // longer than a reaper takes to end what is registered once its input ends
        yield* Effect.sleep(BOUND_MILLIS * 1.5)
        expect(pids.filter(isAlive)).toEqual(pids)
        // the layer's close left the reaper to the sessions still using it
        expect(withEnv(REAPER_ENV_NAME, String(host.pid))).toHaveLength(1)
        yield* host.killed
        const took = yield* within(10_000, () => withEnv(OWNER_ENV, host.owner).length === 0)
        expect(took).toBeDefined()
        expect(took!).toBeLessThan(BOUND_MILLIS * 3)
      }),
    90_000
  )

  it.scopedLive(
    "without the watchdog, a SIGKILLed host's CLIs go on with their turn (why it exists)",
    () =>
      Effect.gen(function*() {
        const host = yield* startHost(1, ["--no-watchdog"])
        expect(withEnv(REAPER_ENV_NAME, String(host.pid))).toEqual([])
        yield* host.killed
        yield* Effect.sleep(BOUND_MILLIS * 1.5)
        const pids = host.started.flatMap((s) => [s.cli, ...s.tools])
        expect(pids.filter(isAlive)).toEqual(pids)
      }),
    90_000
  )

  it.scopedLive(
    "the reaper starts with the first session and ends with the layer, leaving the CLIs' close alone",
    () =>
      Effect.gen(function*() {
        const reapers = () => withEnv(REAPER_ENV_NAME, String(process.pid))
        const before = reapers()
        yield* Effect.gen(function*() {
          const transport = yield* Transport.Transport
          expect(reapers()).toEqual(before)
          for (let i = 0; i < 2; i++) {
            yield* Effect.scoped(Effect.gen(function*() {
              const connection = yield* transport.open(FakeCli.launch(FakeCli.scenario([FakeCli.turn("hi")])))
              yield* connection.messages.pipe(Stream.take(1), Stream.runDrain)
              // one reaper for the layer, however many sessions
              expect(reapers().filter((p) => !before.includes(p))).toHaveLength(1)
            }))
          }
        }).pipe(Effect.provide(Transport.layerProcess.pipe(Layer.provide(NodeExecutor))))
        expect(yield* within(2000, () => reapers().every((p) => before.includes(p)))).toBeDefined()
      }),
    60_000
  )
})
