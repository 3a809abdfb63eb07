import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import { removeStaleDirs } from "../src/internal/transport/argv.js"
import { startTime } from "../src/internal/transport/reaper.js"
import { isAlive, NodeExecutor } from "./support/process.js"

const HOST = path.join(import.meta.dirname, "fixtures", "argv-host.ts")

/** A child process, killed (SIGKILL) and reaped when the scope closes. */
const child = (command: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] })),
    (c) =>
      Effect.async<void>((resume) => {
        if (c.exitCode !== null || c.signalCode !== null) return resume(Effect.void)
        c.once("exit", () => resume(Effect.void))
        c.kill("SIGKILL")
      })
  )

/** Starts the host fixture and waits for the path of its `--settings` file. */
const startHost = Effect.gen(function*() {
  const host = yield* child(process.execPath, ["--import", "tsx", HOST])
  const file = yield* Effect.async<string, Error>((resume) => {
    let err = ""
    host.stderr!.setEncoding("utf8")
    host.stderr!.on("data", (chunk: string) => {
      err += chunk
      const line = err.split("\n").find((l) => l.endsWith(".json"))
      if (line !== undefined) resume(Effect.succeed(line))
    })
    host.once("exit", (code) => resume(Effect.fail(new Error(`host exited ${code}: ${err}`))))
  })
  return { host, file }
})

const kill9 = (host: ReturnType<typeof spawn>) =>
  Effect.async<void>((resume) => {
    host.once("exit", () => resume(Effect.void))
    host.kill("SIGKILL")
  })

/** A directory in the temporary directory named as a host's private directory. */
const fakeDir = (name: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = path.join(os.tmpdir(), name)
      fs.mkdirSync(dir, { mode: 0o700 })
      fs.writeFileSync(path.join(dir, "settings-0.json"), "{}", { mode: 0o600 })
      return dir
    }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

const suffix = () => Math.random().toString(36).slice(2, 8).padEnd(6, "0")

describe("private argument files of a host that died hard", () => {
  it.scopedLive(
    "a SIGKILLed host's files are removed by the next start; live hosts' and other users' are kept",
    () =>
      Effect.gen(function*() {
        const dead = yield* startHost
        const live = yield* startHost
        const settingsDir = path.dirname(dead.file)
        expect(fs.readFileSync(dead.file, "utf8")).toContain("host-secret")
        expect(fs.readdirSync(settingsDir).sort()).toEqual(["mcp-config-0.json", "settings-0.json"])
        expect(path.basename(settingsDir)).toMatch(new RegExp(`^eca-args-${dead.host.pid}-\\d+-`))
        yield* kill9(dead.host)
        // the finalizer never ran
        expect(fs.existsSync(dead.file)).toBe(true)

        // a live pid whose start time differs: the pid was reused, the host that named the directory is gone
        const sleeper = yield* child("sleep", ["300"])
        const start = Number(startTime(sleeper.pid!))
        const reused = yield* fakeDir(`eca-args-${sleeper.pid}-${start + 1}-${suffix()}`)
        const running = yield* fakeDir(`eca-args-${sleeper.pid}-${start}-${suffix()}`)
        // of another user (the tests run as root here, so its files could be removed), and not a directory
        const foreign = yield* fakeDir(`eca-args-${dead.host.pid}-1-${suffix()}`)
        if (process.getuid?.() === 0) fs.chownSync(foreign, 65534, 65534)
        const notDir = path.join(os.tmpdir(), `eca-args-${dead.host.pid}-1-${suffix()}`)
        fs.writeFileSync(notDir, "")
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(notDir, { force: true })))

        // the next start of the SDK (the first session of a process transport) removes what dead hosts left
        const log = path.join(yield* fakeDir(`eca-stale-log-${suffix()}`), "log.json")
        yield* Effect.gen(function*() {
          const transport = yield* Transport.Transport
          const connection = yield* transport.open(FakeCli.launch(FakeCli.scenario([], { log })))
          yield* connection.endInput
          yield* connection.awaitExit
        }).pipe(Effect.scoped, Effect.provide(Transport.layerProcess.pipe(Layer.provide(NodeExecutor))))

        expect(fs.existsSync(settingsDir)).toBe(false)
        expect(fs.existsSync(reused)).toBe(false)
        expect(fs.existsSync(live.file)).toBe(true)
        expect(isAlive(live.host.pid!)).toBe(true)
        expect(fs.existsSync(running)).toBe(true)
        expect(fs.existsSync(foreign) || process.getuid?.() !== 0).toBe(true)
        expect(fs.existsSync(notDir)).toBe(true)
        // a second sweep finds nothing more to remove
        expect((yield* removeStaleDirs()).filter((d) => [running, foreign, path.dirname(live.file)].includes(d)))
          .toEqual([])
      }),
    120_000
  )
})
