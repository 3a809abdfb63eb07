import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, Message, Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import { tempDir } from "./support/cli.js"
import { expectLogs } from "./support/logs.js"
import { isAlive, NodeExecutor } from "./support/process.js"
import { eventually } from "./support/wait.js"
import { buildEnv, commandEnv } from "../src/internal/transport/env.js"
import { DEFAULT_CLOSE_GRACE_MILLIS, DEFAULT_KILL_GRACE_MILLIS } from "../src/internal/transport/processTransport.js"

/** The graces of the G2 test: the default close grace, a short kill grace; the default kill grace it must beat. */
const CLOSE_GRACE = DEFAULT_CLOSE_GRACE_MILLIS
const KILL_GRACE = 100
const DEFAULT_KILL_GRACE = DEFAULT_KILL_GRACE_MILLIS

const TransportLive = Transport.layerProcess.pipe(Layer.provide(NodeExecutor))

/** The scenarios of the fake CLI these tests use. */
const scenarios = {
  echo: FakeCli.echoScenario,
  bigline: (bytes: number) =>
    FakeCli.scenario([FakeCli.giantLine(bytes), FakeCli.result("after-big-line"), FakeCli.exit(0)]),
  splitEuro: FakeCli.scenario([FakeCli.splitUtf8("price: 5€ ok"), FakeCli.result("done"), FakeCli.exit(0)]),
  u2028: FakeCli.scenario([FakeCli.assistant("a\u2028b\u2029c"), FakeCli.result("done"), FakeCli.exit(0)]),
  crlf: FakeCli.scenario([
    FakeCli.assistant("crlf", { eol: "\r\n" }),
    FakeCli.result("done", {}, { eol: "\r\n" }),
    FakeCli.exit(0)
  ]),
  banner: FakeCli.scenario([
    FakeCli.malformed("Welcome to the fake CLI v0 (not JSON)"),
    FakeCli.raw("[1, 2, 3]\n"),
    FakeCli.assistant("after banner"),
    FakeCli.result("done"),
    FakeCli.exit(0)
  ]),
  // 10 MB to stderr, then exit 1
  stderrFlood: FakeCli.scenario([
    FakeCli.stderrFlood(10 * 1024 * 1024),
    FakeCli.stderr("FINAL-STDERR-LINE\n"),
    FakeCli.exit(1)
  ]),
  // ignores SIGTERM and keeps running, with a grandchild in its process group
  ignoreSigterm: FakeCli.scenario([FakeCli.ignoreSigterm, FakeCli.spawnGrandchild, FakeCli.stall]),
  waitForKill: FakeCli.scenario([FakeCli.assistant("before kill"), FakeCli.stall]),
  exitCode: (code: number) => FakeCli.scenario([FakeCli.exit(code, "about to exit\n")]),
  // exits 0 as soon as stdin closes (like the real CLI when idle)
  exitOnEof: (options?: Omit<FakeCli.Scenario, "steps">) => FakeCli.scenario([], options)
}

const spec = (scenario: FakeCli.Scenario, extra: Partial<Transport.LaunchSpec> = {}): Transport.LaunchSpec =>
  FakeCli.launch(scenario, extra)

const open = (s: Transport.LaunchSpec) => Effect.flatMap(Transport.Transport, (t) => t.open(s))

const collect = (connection: Transport.Connection) =>
  Stream.runCollect(connection.messages).pipe(Effect.map(Chunk.toReadonlyArray))

const texts = (frames: ReadonlyArray<Message.Frame>) =>
  frames.flatMap((f) => (f.type === "assistant" ? [Message.text(f)] : []))

/**
 * A CLI that ignores SIGTERM, with a grandchild in its process group, open in a scope of its own that the test closes:
 * once it has said so (its first message names the grandchild).
 */
const ignoringSigterm = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const connection = yield* open(spec(scenarios.ignoreSigterm, { killGraceMillis: KILL_GRACE })).pipe(
    Scope.extend(scope)
  )
  const first = yield* connection.messages.pipe(Stream.take(1), Stream.runCollect, Scope.extend(scope))
  const grandchild = (Chunk.unsafeHead(first) as { grandchild_pid?: number }).grandchild_pid
  return { scope, pid: Option.getOrThrow(connection.pid), grandchild }
})

describe("Transport (process)", () => {
  it.scopedLive("round-trips a user message through the echo CLI and ends cleanly on endInput", () =>
    Effect.gen(function*() {
      const connection = yield* open(spec(scenarios.echo))
      expect(Option.isSome(connection.pid)).toBe(true)
      yield* connection.send(Message.userMessage("hello"))
      const first = yield* connection.messages.pipe(
        Stream.filter(Message.isResultMessage),
        Stream.take(1),
        Stream.runCollect
      )
      expect(Chunk.unsafeHead(first)).toMatchObject({ type: "result", result: "echo: hello" })
      yield* connection.endInput
      expect(yield* connection.awaitExit).toEqual({ code: 0, signal: null })
      const sendAfter = yield* Effect.exit(connection.send(Message.userMessage("late")))
      expect(Exit.isFailure(sendAfter)).toBe(true)
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G8 reads a 50 MB line intact", () =>
    Effect.gen(function*() {
      const connection = yield* open(spec(scenarios.bigline(50 * 1024 * 1024)))
      const frames = yield* collect(connection)
      const [big] = texts(frames)
      expect(big?.length).toBe(50 * 1024 * 1024)
      expect(frames.at(-1)).toMatchObject({ type: "result", result: "after-big-line" })
    }).pipe(Effect.provide(TransportLive)), 60_000)

  it.scopedLive("G8 skips a line over the limit with an in-band LineTooLong and keeps going", () =>
    Effect.gen(function*() {
      const connection = yield* open(
        spec(scenarios.bigline(5 * 1024 * 1024), { maxLineBytes: 1024 * 1024 })
      )
      const frames = yield* collect(connection)
      expect(frames).toHaveLength(2)
      const [first, second] = frames
      expect(first?.type).toBe("transport_error")
      if (first?.type === "transport_error") {
        expect(first.error).toBeInstanceOf(AgentError.LineTooLong)
        expect(first.error._tag).toBe("LineTooLong")
        if (first.error._tag === "LineTooLong") {
          expect(first.error.bytes).toBeGreaterThan(5 * 1024 * 1024)
          expect(first.error.limit).toBe(1024 * 1024)
          expect(first.error.head.startsWith("{\"type\":\"assistant\"")).toBe(true)
        }
      }
      expect(second).toMatchObject({ type: "result", result: "after-big-line" })
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G8 keeps a € whose bytes arrive in two writes", () =>
    Effect.gen(function*() {
      const frames = yield* collect(yield* open(spec(scenarios.splitEuro)))
      expect(texts(frames)).toEqual(["price: 5€ ok"])
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G8 does not split on U+2028 / U+2029 inside strings", () =>
    Effect.gen(function*() {
      const frames = yield* collect(yield* open(spec(scenarios.u2028)))
      expect(texts(frames)).toEqual(["a\u2028b\u2029c"])
      expect(frames).toHaveLength(2)
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G8 accepts CRLF line endings", () =>
    Effect.gen(function*() {
      const frames = yield* collect(yield* open(spec(scenarios.crlf)))
      expect(frames.map((f) => f.type)).toEqual(["assistant", "result"])
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G10 turns a non-JSON banner and a non-object line into in-band MalformedLine errors", () =>
    Effect.gen(function*() {
      const frames = yield* collect(yield* open(spec(scenarios.banner)))
      expect(frames.map((f) => f.type)).toEqual(["transport_error", "transport_error", "assistant", "result"])
      const [banner, array] = frames
      if (banner?.type === "transport_error") {
        expect(banner.error._tag).toBe("MalformedLine")
        if (banner.error._tag === "MalformedLine") expect(banner.error.line).toContain("Welcome to the fake CLI")
      }
      if (array?.type === "transport_error" && array.error._tag === "MalformedLine") {
        expect(array.error).toMatchObject({ reason: "NotAnObject", description: "not a JSON object" })
      }
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G10 10 MB of stderr then exit 1: ProcessExited with a bounded tail, no stall", () =>
    Effect.gen(function*() {
      const chunks: Array<string> = []
      const connection = yield* open(spec(scenarios.stderrFlood, { onStderr: (c) => chunks.push(c) }))
      const started = Date.now()
      const exit = yield* Effect.exit(collect(connection))
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(exit._tag).toBe("Failure")
      if (exit._tag === "Failure") {
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error).toBeInstanceOf(AgentError.ProcessExited)
        if (error) {
          expect(error.code).toBe(1)
          expect(error.signal).toBe(null)
          expect(Buffer.byteLength(error.stderrTail)).toBeLessThanOrEqual(64 * 1024)
          expect(Buffer.byteLength(error.stderrTail)).toBeGreaterThan(60 * 1024)
          expect(error.stderrTail.endsWith("FINAL-STDERR-LINE\n")).toBe(true)
          expect(error.message).toContain("exited with code 1")
        }
      }
      expect(chunks.join("").length).toBeGreaterThan(10 * 1000 * 1000)
      // every later send fails the same way
      const send = yield* Effect.flip(connection.send(Message.userMessage("x")))
      expect(send._tag).toBe("ProcessExited")
    }).pipe(Effect.provide(TransportLive)))

  it.live("G2 a CLI that ignores SIGTERM is SIGKILLed within the bound, with its process group", () =>
    Effect.gen(function*() {
      const { grandchild, pid, scope } = yield* ignoringSigterm
      expect(typeof grandchild).toBe("number")
      expect(isAlive(pid)).toBe(true)
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      const took = Date.now() - started
      // the close grace, then the kill grace given, then SIGKILL: at least both graces, and well short of the
      // default kill grace (which would mean the option was ignored); the slack is for a loaded CI machine
      expect(took).toBeGreaterThanOrEqual(CLOSE_GRACE + KILL_GRACE - 50)
      expect(took).toBeLessThan(CLOSE_GRACE + DEFAULT_KILL_GRACE)
      expect(isAlive(pid)).toBe(false)
      // the grandchild got the same SIGKILL (its group); the kernel ends it, then init reaps it
      yield* eventually(`grandchild ${grandchild} gone`, () => !isAlive(grandchild!))
    }).pipe(Effect.provide(TransportLive), expectLogs([/CLI ignored SIGTERM: SIGKILL/])))

  it.live("G2 a close whose fiber is interrupted during its graces still ends the CLI and its process group", () =>
    Effect.gen(function*() {
      const { grandchild, pid, scope } = yield* ignoringSigterm
      // the close runs its waits (the close grace, the kill grace) while its fiber is interrupted: the interruption
      // waits for the close, which still signals, kills and reaps
      const started = yield* Deferred.make<void>()
      const closing = yield* Effect.fork(
        Effect.uninterruptible(Effect.zipRight(Deferred.succeed(started, undefined), Scope.close(scope, Exit.void)))
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(closing)
      expect(isAlive(pid)).toBe(false)
      yield* eventually(`grandchild ${grandchild} gone`, () => !isAlive(grandchild!))
    }).pipe(Effect.provide(TransportLive), expectLogs([/CLI ignored SIGTERM: SIGKILL/])))

  it.scopedLive("closing the scope of an idle CLI that exits on EOF is fast", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const log = path.join(yield* tempDir("eca-eof-"), "log.json")
      // a close grace far longer than the test's bound: closing must end when the CLI exits, not when a grace ends
      const connection = yield* open(spec(scenarios.exitOnEof({ log }), { closeGraceMillis: 60_000 })).pipe(
        Scope.extend(scope)
      )
      // the CLI is up (it logged its start) before the scope closes
      yield* eventually("the fake CLI's start", () => fs.existsSync(log))
      const pid = Option.getOrThrow(connection.pid)
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      // a few milliseconds when idle; the bound is generous for a loaded CI machine and far below the grace
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(isAlive(pid)).toBe(false)
      expect(yield* connection.exitStatus).toEqual(Option.some({ code: 0, signal: null }))
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G4 SIGKILL mid-stream: the stream fails with ProcessExited and the next send fails the same way", () =>
    Effect.gen(function*() {
      const connection = yield* open(spec(scenarios.waitForKill))
      const pid = Option.getOrThrow(connection.pid)
      const exit = yield* connection.messages.pipe(
        Stream.tap((f) => (f.type === "assistant" ? Effect.sync(() => process.kill(pid, "SIGKILL")) : Effect.void)),
        Stream.runCollect,
        Effect.exit
      )
      expect(exit).toStrictEqual(
        Exit.fail(new AgentError.ProcessExited({ code: null, signal: "SIGKILL", stderrTail: "" }))
      )
      const send = yield* Effect.flip(connection.send(Message.userMessage("after death")))
      expect(send).toStrictEqual(new AgentError.ProcessExited({ code: null, signal: "SIGKILL", stderrTail: "" }))
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G11 a missing binary fails with CliNotFound listing the searched paths", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(open({ args: [], executable: "/nonexistent/claude" }))
      expect(error._tag).toBe("CliNotFound")
      if (error._tag === "CliNotFound") {
        expect(error.searched).toEqual(["pathToClaudeCodeExecutable: /nonexistent/claude"])
        expect(error.message).toContain("/nonexistent/claude")
      }
      const fromEnv = yield* Effect.flip(open({ args: [], env: { CLAUDE_CLI_PATH: "/nope/claude" } }))
      expect(fromEnv).toMatchObject({ _tag: "CliNotFound", searched: ["CLAUDE_CLI_PATH: /nope/claude"] })
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G11 spawn environment: overlay, CLAUDECODE stripped, SDK variables set, base flags first", () =>
    Effect.gen(function*() {
      // with a nesting marker to strip (the whole environment is built) and without (the additions are inherited)
      for (const marker of [true, false]) {
        const dir = yield* tempDir("eca-env-")
        const log = path.join(dir, "log.json")
        if (marker) process.env["CLAUDECODE"] = "1"
        try {
          const connection = yield* open(
            spec(scenarios.exitOnEof({ log, logEnv: ["FAKE_MARKER"] }), {
              args: ["--model=fake"],
              cwd: dir,
              env: { FAKE_MARKER: "m" }
            })
          )
          yield* connection.endInput
          yield* connection.awaitExit
        } finally {
          delete process.env["CLAUDECODE"]
        }
        const seen = (yield* FakeCli.readLog(log)).start!
        expect(seen.argv).toEqual([
          "--output-format",
          "stream-json",
          "--verbose",
          "--input-format",
          "stream-json",
          "--model=fake"
        ])
        expect(fs.realpathSync(seen.cwd)).toBe(fs.realpathSync(dir))
        expect(seen.env.CLAUDECODE).toBe(null)
        expect(seen.env.CLAUDE_CODE_ENTRYPOINT).toBe("sdk-ts")
        expect(seen.env.CLAUDE_CODE_SDK_READS_SESSION_STATE).toBe("1")
        expect(seen.env.FAKE_MARKER).toBe("m")
        expect(seen.env.PATH).toBe(process.env["PATH"])
      }
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("G11 spawn environment: CLAUDECODE and NODE_OPTIONS removed from a spread of process.env, unless kept", () =>
    Effect.gen(function*() {
      const seenWith = (extra: Partial<Transport.LaunchSpec>) =>
        Effect.gen(function*() {
          const dir = yield* tempDir("eca-env-")
          const log = path.join(dir, "log.json")
          const connection = yield* open(spec(scenarios.exitOnEof({ log }), { cwd: dir, ...extra }))
          yield* connection.endInput
          yield* connection.awaitExit
          return (yield* FakeCli.readLog(log)).start!.env
        }).pipe(Effect.scoped)
      process.env["CLAUDECODE"] = "1"
      process.env["NODE_OPTIONS"] = "--no-warnings"
      const spread = { ...process.env, FAKE_MARKER: "m" }
      try {
        for (const envMode of ["overlay", "replace"] as const) {
          const env = yield* seenWith({ env: spread, envMode })
          expect([env.CLAUDECODE, env.NODE_OPTIONS, env.PATH]).toEqual([null, null, process.env["PATH"]])
        }
        const kept = yield* seenWith({ env: spread, keepEnv: ["CLAUDECODE", "NODE_OPTIONS"] })
        expect([kept.CLAUDECODE, kept.NODE_OPTIONS]).toEqual(["1", "--no-warnings"])
        const inherited = yield* seenWith({ keepEnv: ["CLAUDECODE"] })
        expect([inherited.CLAUDECODE, inherited.NODE_OPTIONS]).toEqual(["1", null])
      } finally {
        delete process.env["CLAUDECODE"]
        delete process.env["NODE_OPTIONS"]
      }
    }).pipe(Effect.provide(TransportLive)))

  it("the spawn environment inherits the parent's without copying it unless something must be removed", () => {
    const parent = { PATH: "/bin", HOME: "/h", KEEP: "k" }
    const cases: ReadonlyArray<Parameters<typeof commandEnv>[0]> = [
      { parent },
      { parent, env: { FAKE: "1", PATH: "/x" } },
      // removing what is not there
      { parent, env: { ABSENT: undefined } },
      // a nesting marker to strip
      { parent: { ...parent, CLAUDECODE: "1" } },
      // one the caller sets (or spreads) without keeping it
      { parent: { ...parent, NODE_OPTIONS: "--x" }, env: { NODE_OPTIONS: "--y" } },
      // one the caller keeps, inherited or set
      { parent: { ...parent, CLAUDECODE: "1" }, keep: ["CLAUDECODE"] },
      { parent, env: { NODE_OPTIONS: "--y" }, keep: ["NODE_OPTIONS"] },
      // set but not kept, the parent without it
      { parent, env: { CLAUDECODE: "1", FAKE: "1" } },
      // a variable the caller removes
      { parent, env: { KEEP: undefined } },
      { parent, env: { FAKE: "1" }, mode: "replace" }
    ]
    for (const c of cases) {
      const { env, extend } = commandEnv(c)
      expect(extend ? { ...c.parent, ...env } : env).toEqual(buildEnv(c))
    }
    expect(cases.map((c) => commandEnv(c).extend)).toEqual([
      true,
      true,
      true,
      false,
      false,
      true,
      true,
      true,
      false,
      false
    ])
    expect(buildEnv({ parent, env: { NODE_OPTIONS: "--y" }, keep: ["NODE_OPTIONS"] })["NODE_OPTIONS"]).toBe("--y")
    expect(commandEnv({ parent, env: { CLAUDECODE: "1" } }).env["CLAUDECODE"]).toBe(undefined)
  })

  it.scopedLive("G11 replace mode: only the given variables (no PATH) and the CLI still starts", () =>
    Effect.gen(function*() {
      const log = path.join(yield* tempDir("eca-env-"), "log.json")
      const connection = yield* open(spec(scenarios.exitOnEof({ log }), { envMode: "replace" }))
      yield* connection.endInput
      expect(yield* connection.awaitExit).toEqual({ code: 0, signal: null })
      const seen = (yield* FakeCli.readLog(log)).start!
      expect(seen.env.PATH).toBe(null)
      expect(seen.env.CLAUDE_CODE_ENTRYPOINT).toBe("sdk-ts")
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("stderr still open after the exit (held by a background process) is drained, boundedly", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("eca-late-stderr-")
      const script = (name: string, background: string) => {
        const file = path.join(dir, name)
        // the background process keeps the CLI's stderr (not its stdout) open after the CLI exited
        fs.writeFileSync(file, `#!/bin/sh\n(${background}) >/dev/null &\necho early >&2\nexit 3\n`, { mode: 0o755 })
        return { args: [], executable: file, cliVersions: "*" }
      }
      const late = yield* open(script("late", "sleep 0.3; echo LATE >&2"))
      expect(yield* Effect.flip(collect(late))).toStrictEqual(
        new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "early\nLATE\n" })
      )
      // a stderr that stays open is waited for one second at most (not the 30 s it stays open); generous for CI
      const started = Date.now()
      const held = yield* open(script("held", "sleep 30"))
      expect(yield* Effect.flip(collect(held))).toStrictEqual(
        new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "early\n" })
      )
      expect(Date.now() - started).toBeLessThan(10_000)
    }).pipe(Effect.provide(TransportLive)))

  it.scopedLive("a non-zero exit code is reported with the stderr tail", () =>
    Effect.gen(function*() {
      const connection = yield* open(spec(scenarios.exitCode(3)))
      const error = yield* Effect.flip(collect(connection))
      expect(error).toStrictEqual(
        new AgentError.ProcessExited({ code: 3, signal: null, stderrTail: "about to exit\n" })
      )
    }).pipe(Effect.provide(TransportLive)))
})
