// The host watchdog (src/internal/transport/hostWatchdog.ts): a host SIGKILLed while its CLIs are mid-turn leaves
// nothing behind (CLIs, their children, their tool processes in groups of their own) within the stated bound; the
// reaper starts with the first session and ends with the layer.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClaudeAgent, Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import { REAPER_ENV_NAME } from "../src/internal/transport/hostWatchdog.js"
import { isAlive, NodeExecutor, OWNER_ENV, withEnv } from "./support/process.js"

const HOST = path.join(import.meta.dirname, "fixtures", "watchdog-host.ts")
const SECRETS_HOST = path.join(import.meta.dirname, "fixtures", "secrets-host.ts")

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

/** The private files the CLI `pid` was given (`--settings`, `--mcp-config`), from its command line. */
const privateFiles = (pid: number): ReadonlyArray<string> => {
  const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
  return ["--settings", "--mcp-config"].flatMap((flag) => {
    const i = argv.indexOf(flag)
    return i === -1 ? [] : [argv[i + 1]!]
  })
}

/**
 * Starts the secrets host fixture (a session mid-query whose settings and MCP config hold a secret); its CLI's private
 * files, and `kill`: SIGKILLs the host, resolving with the time of the signal.
 */
const startSecretsHost = (args: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const owner = `secrets-${process.pid}-${Math.random().toString(16).slice(2)}`
    // a temporary directory of its own: no other host's start-up sweep (other test files) removes its files
    const tmp = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-secrets-test-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const host = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--import", "tsx", SECRETS_HOST, ...args], {
          env: { ...process.env, ECA_WATCHDOG_OWNER: owner, TMPDIR: tmp },
          stdio: ["ignore", "ignore", "pipe"]
        })
      ),
      (host) =>
        Effect.sync(() => {
          if (host.exitCode === null && host.signalCode === null) host.kill("SIGKILL")
          killAll(withEnv(OWNER_ENV, owner))
        })
    )
    const { cli } = yield* Effect.async<{ readonly cli: number }, Error>((resume) => {
      let err = ""
      host.stderr!.setEncoding("utf8")
      host.stderr!.on("data", (chunk: string) => {
        err += chunk
        const line = err.split("\n").find((l) => l.startsWith("{"))
        if (line !== undefined) resume(Effect.succeed(JSON.parse(line)))
      })
      host.once("exit", (code) => resume(Effect.fail(new Error(`host exited ${code}: ${err}`))))
    }).pipe(Effect.timeout("60 seconds"))
    const files = privateFiles(cli)
    const dir = path.dirname(files[0]!)
    expect(path.dirname(dir)).toBe(tmp)
    const kill = Effect.async<number>((resume) => {
      host.once("exit", () => resume(Effect.succeed(killedAt)))
      const killedAt = performance.now()
      host.kill("SIGKILL")
    })
    return { files, dir, kill, owner }
  })

describe("host watchdog (process)", () => {
  it.scopedLive(
    "a host SIGKILLed mid-query: its private settings and MCP config files (secrets) are gone within the bound",
    () =>
      Effect.gen(function*() {
        const host = yield* startSecretsHost()
        expect(host.files).toHaveLength(2)
        for (const file of host.files) expect(fs.readFileSync(file, "utf8")).toContain("host-secret")
        expect(path.basename(host.dir)).toMatch(/^eca-args-\d+-\d+-/)
        const killedAt = yield* host.kill
        const took = yield* Effect.promise(async () => {
          while (fs.existsSync(host.dir) && performance.now() - killedAt < 10_000) {
            await new Promise((resolve) => setTimeout(resolve, 2))
          }
          return performance.now() - killedAt
        })
        // eslint-disable-next-line no-console
        console.log(`[watchdog] host SIGKILL → private files gone: ${took.toFixed(1)} ms (bound ${BOUND_MILLIS} ms)`)
        expect(fs.existsSync(host.dir)).toBe(false)
        expect(took).toBeLessThan(BOUND_MILLIS * 3) // the bound, with room for a loaded machine
        expect(yield* within(10_000, () => withEnv(OWNER_ENV, host.owner).length === 0)).toBeDefined()
      }),
    90_000
  )

  it.scopedLive(
    "without the watchdog, a SIGKILLed host's private files stay until a later host's start-up sweep",
    () =>
      Effect.gen(function*() {
        const host = yield* startSecretsHost(["--no-watchdog"])
        yield* host.kill
        yield* Effect.sleep(BOUND_MILLIS * 1.5)
        expect(host.files.filter((f) => fs.existsSync(f))).toEqual(host.files)
      }),
    90_000
  )

  it.scopedLive(
    "a layer's close is not the host's death: the private files of sessions on another layer stay",
    () =>
      Effect.gen(function*() {
        const owner = `close-${process.pid}-${Math.random().toString(16).slice(2)}`
        const options = FakeCli.options(FakeCli.echoScenario, {
          env: { [OWNER_ENV]: owner },
          settings: { env: { TOKEN: "kept" } }
        })
        const layer = Transport.layerProcess.pipe(Layer.provide(NodeExecutor))
        // a session on one layer, open through the test
        const kept = yield* ClaudeAgent.session(options).pipe(Effect.provide(layer))
        const files = privateFiles(kept.pid._tag === "Some" ? kept.pid.value : -1)
        expect(files).toHaveLength(1)
        // a session on another layer, run and closed with its layer: that reaper's input ends
        const reapers = () => withEnv(REAPER_ENV_NAME, String(process.pid))
        const before = reapers()
        yield* Effect.scoped(Effect.flatMap(ClaudeAgent.session(options), (s) => Stream.runDrain(s.turn("x")))).pipe(
          Effect.provide(layer)
        )
        expect(yield* within(2000, () => reapers().length < before.length + 1)).toBeDefined()
        yield* Effect.sleep(BOUND_MILLIS / 2)
        expect(files.filter((f) => fs.existsSync(f))).toEqual(files)
        expect(yield* Stream.runCollect(kept.turn("still here")).pipe(Effect.map((c) => c.length))).toBeGreaterThan(0)
      }),
    60_000
  )

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
