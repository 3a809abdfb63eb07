import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClaudeAgent, SessionHistory, TranscriptStore } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-hostile-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const sessionId = "11111111-1111-4111-8111-111111111111"

/** A logger that keeps the warnings. */
const capture = () => {
  const warnings: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    if (logLevel._tag === "Warning") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
  })
  return { warnings, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Resumes `sessionId` with `store`; the error the session fails with (or `undefined`), and the config dir. */
const resume = (store: TranscriptStore.Service, configDir: string, loadTimeout: Duration.DurationInput = "2 seconds") =>
  ClaudeAgent.session({ resume: sessionId, env: { CLAUDE_CONFIG_DIR: configDir } }).pipe(
    Effect.scoped,
    Effect.flip,
    Effect.provide(ScriptedCli.echo),
    Effect.provideService(TranscriptStore.TranscriptStore, store),
    Effect.provideService(TranscriptStore.Mirror, { flush: "batched", loadTimeout, closeTimeout: "1 second" })
  )

const expectLoadFailed = (error: unknown, reason?: string) => {
  expect(error).toMatchObject({ _tag: "StartupFailed", reason: "Spawn" })
  expect(error).toMatchObject({ cause: { _tag: "TranscriptStoreError", ...(reason === undefined ? {} : { reason }) } })
}

const files = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((f) => fs.statSync(path.join(dir, f)).isFile())

describe("a store whose load misbehaves fails the start with StartupFailed", () => {
  it.scopedLive("load dies, or throws instead of returning an Effect", () =>
    Effect.gen(function*() {
      const memory = yield* TranscriptStore.makeMemory
      const dies = yield* resume({
        ...memory,
        load: () =>
          Effect.sync(() => {
            throw new Error("driver crashed")
          })
      }, yield* tempDir)
      expectLoadFailed(dies, "BackendFailed")
      const throws = yield* resume({
        ...memory,
        load: () => {
          throw new Error("sync throw")
        }
      }, yield* tempDir)
      expectLoadFailed(throws, "BackendFailed")
    }))

  it.scopedLive("loadTimeout bounds a load that cannot be interrupted", () =>
    Effect.gen(function*() {
      const memory = yield* TranscriptStore.makeMemory
      const stuck = Effect.acquireUseRelease(Effect.never, () => Effect.succeed(Option.none()), () => Effect.void)
      const error = yield* resume({ ...memory, load: () => stuck }, yield* tempDir, "100 millis").pipe(
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "not bounded" })
      )
      expectLoadFailed(error, "Timeout")
    }), 20_000)

  const sparse = (): Array<unknown> => {
    const entries: Array<unknown> = []
    entries.length = 2 ** 27
    entries[0] = { type: "user" }
    return entries
  }
  const hostileLoads: ReadonlyArray<readonly [string, () => unknown]> = [
    ["Some(not an array)", () => "hello"],
    ["Some([null])", () => [null]],
    ["a sparse array of length 2^27", sparse],
    ["an entry with a throwing getter", () => [{
      get type(): string {
        throw new Error("getter boom")
      }
    }]],
    ["a Proxy array that throws", () =>
      new Proxy([{ type: "user" }], {
        get(target, k) {
          if (k === "length" || k === "every" || k === "0") throw new Error("proxy boom")
          return Reflect.get(target, k)
        }
      })],
    ["an inherited type", () => [Object.create({ type: "user", uuid: "x" })]],
    ["an entry whose toJSON writes no object", () => [{ type: "user", toJSON: () => "INJECTED" }]],
    ["a class instance", () => [
      new (class Entry {
        type = "user"
      })()
    ]]
  ]

  for (const [name, load] of hostileLoads) {
    it.scopedLive(`the Effect API: ${name}`, () =>
      Effect.gen(function*() {
        const configDir = yield* tempDir
        const memory = yield* TranscriptStore.makeMemory
        const started = Date.now()
        const error = yield* resume({
          ...memory,
          load: () => Effect.sync(() => Option.some(load() as ReadonlyArray<TranscriptStore.Entry>))
        }, configDir)
        expect(Date.now() - started).toBeLessThan(5_000)
        expectLoadFailed(error)
        expect(files(configDir)).toEqual([])
      }), 20_000)

    it.scopedLive(`the official shape: ${name}`, () =>
      Effect.gen(function*() {
        const configDir = yield* tempDir
        const store = TranscriptStore.fromSessionStore({
          append: async () => {},
          load: async () => load() as Array<TranscriptStore.Entry>
        })
        const started = Date.now()
        const error = yield* resume(store, configDir)
        expect(Date.now() - started).toBeLessThan(5_000)
        expectLoadFailed(error)
        expect(files(configDir)).toEqual([])
      }), 20_000)
  }
})

describe("writing the loaded transcript", () => {
  it.scopedLive("follows no symlink planted where the temporary file goes", () =>
    Effect.gen(function*() {
      const configDir = yield* tempDir
      const outside = yield* tempDir
      const victim = path.join(outside, "victim")
      fs.writeFileSync(victim, "untouched")
      const cwd = process.cwd()
      const projectDir = path.join(configDir, "projects", SessionHistory.encodeCwd(fs.realpathSync(cwd)))
      fs.mkdirSync(projectDir, { recursive: true })
      const file = path.join(projectDir, `${sessionId}.jsonl`)
      // every name the old scheme (pid, then the time in ms) could pick while this test may run (its timeout)
      const now = Date.now()
      for (let t = now; t < now + 20_000; t++) fs.symlinkSync(victim, `${file}.${process.pid}.${t}.tmp`)
      const memory = yield* TranscriptStore.makeMemory
      yield* memory.append({ projectKey: SessionHistory.encodeCwd(fs.realpathSync(cwd)), sessionId }, [{
        type: "user",
        uuid: "a"
      }])
      yield* ClaudeAgent.session({ cwd, resume: sessionId, env: { CLAUDE_CONFIG_DIR: configDir } }).pipe(
        Effect.scoped,
        Effect.provide(ScriptedCli.echo),
        Effect.provideService(TranscriptStore.TranscriptStore, memory)
      )
      expect(fs.readFileSync(victim, "utf8")).toBe("untouched")
      expect(fs.readFileSync(file, "utf8")).toBe(`{"type":"user","uuid":"a"}\n`)
    }), 20_000)
})

describe("mirroring to a store that misbehaves", () => {
  const projectsOf = (configDir: string) => path.join(configDir, "projects")
  const script = (configDir: string) =>
    ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        const filePath = path.join(projectsOf(configDir), "-p", "s1.jsonl")
        yield* cli.init()
        yield* cli.expectUser
        yield* cli.emit({ type: "transcript_mirror", filePath, entries: [{ type: "user", uuid: "u1" }] })
        yield* cli.emit({
          type: "transcript_mirror",
          filePath,
          entries: [{ type: "user", uuid: "u2" }, "not-an-entry", { type: "user", uuid: "u3" }]
        })
        yield* cli.turn("hi")
        yield* cli.emit({ type: "transcript_mirror", filePath, entries: [{ type: "assistant", uuid: "u4" }] })
        yield* cli.expectEndInput
        yield* cli.exit(0)
      })
    )
  const run = (store: TranscriptStore.Service, configDir: string) => {
    const logs = capture()
    return Effect.gen(function*() {
      const session = yield* ClaudeAgent.session({ env: { CLAUDE_CONFIG_DIR: configDir } })
      yield* Stream.runDrain(session.turn("hello"))
    }).pipe(
      Effect.scoped,
      Effect.provide(script(configDir)),
      Effect.provideService(TranscriptStore.TranscriptStore, store),
      Effect.provideService(TranscriptStore.Mirror, {
        flush: "eager",
        loadTimeout: "1 second",
        closeTimeout: "2 seconds"
      }),
      Effect.provide(logs.layer),
      Effect.exit,
      Effect.map((exit) => ({ exit, warnings: logs.warnings }))
    )
  }
  const uuids = (memory: TranscriptStore.Service) =>
    memory.load({ projectKey: "-p", sessionId: "s1" }).pipe(
      Effect.map(Option.match({ onNone: () => [], onSome: (es) => es.map((e) => e.uuid) }))
    )

  it.scopedLive(
    "an append that dies drops its batch with a warning; the writer goes on; the session closes well",
    () =>
      Effect.gen(function*() {
        const memory = yield* TranscriptStore.makeMemory
        let calls = 0
        const { exit, warnings } = yield* run({
          ...memory,
          append: (key, entries) =>
            ++calls === 1
              ? Effect.sync(() => {
                throw new Error("driver crashed")
              })
              : memory.append(key, entries)
        }, yield* tempDir)
        expect(exit._tag).toBe("Success")
        expect(yield* uuids(memory)).toEqual(["u2", "u3", "u4"])
        expect(warnings.some((w) => w.includes("1 entries dropped") && w.includes("driver crashed"))).toBe(true)
      }),
    20_000
  )

  it.scopedLive("a frame with one bad entry keeps its valid entries, with a warning", () =>
    Effect.gen(function*() {
      const memory = yield* TranscriptStore.makeMemory
      const { exit, warnings } = yield* run(memory, yield* tempDir)
      expect(exit._tag).toBe("Success")
      expect(yield* uuids(memory)).toEqual(["u1", "u2", "u3", "u4"])
      expect(warnings.some((w) => w.includes("1 invalid"))).toBe(true)
    }), 20_000)

  it.scopedLive(
    "an append that cannot be interrupted does not hold the close past closeTimeout",
    () =>
      Effect.gen(function*() {
        const memory = yield* TranscriptStore.makeMemory
        const stuck = Effect.acquireUseRelease(Effect.never, () => Effect.void, () => Effect.void)
        const started = Date.now()
        const { exit } = yield* run({ ...memory, append: () => stuck }, yield* tempDir).pipe(
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "not bounded" })
        )
        expect(exit._tag).toBe("Success")
        expect(Date.now() - started).toBeLessThan(8_000)
      }),
    20_000
  )
})
