// The CliResolver's version probe, with a probe the test controls (no processes): one probe for concurrent
// start-ups, waiters that leave at once, a probe interrupted when the last waiter leaves, the timeout, what is kept.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AgentError, type CliResolver } from "effect-claude-agent"
import { nodeHost } from "../src/internal/transport/cliPath.js"
import { makeWith } from "../src/internal/transport/cliResolver.js"

const RANGE = ">=2.1.100 <2.2.0"

/** A file to stand for the CLI (the version is kept by its path and modification time), removed with the scope. */
const cliFile = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eca-resolver-"))
    const file = path.join(dir, "claude")
    fs.writeFileSync(file, "")
    const cli: CliResolver.ResolvedCli = { command: file, prefixArgs: [], path: file }
    return { dir, file, cli }
  }),
  ({ dir }) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** A probe that counts its runs, answers when `answer` is completed, and records an interruption. */
const controlledProbe = Effect.gen(function*() {
  const answer = yield* Deferred.make<CliResolver.VersionProbe>()
  const interrupted = yield* Deferred.make<void>()
  let runs = 0
  const probe = (_cli: CliResolver.ResolvedCli) =>
    Effect.suspend(() => {
      runs++
      return Deferred.await(answer)
    }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
  return { answer, interrupted, probe, runs: () => runs }
})

describe("CliResolver: the --version probe", () => {
  it.scoped("100 concurrent start-ups run one probe; its version is kept and judged per range without another", () =>
    Effect.gen(function*() {
      const { cli } = yield* cliFile
      const control = yield* controlledProbe
      const resolver = yield* makeWith(undefined, control.probe)
      const waiters = yield* Effect.forEach(
        Array.from({ length: 100 }, () => resolver.checkVersion(cli, RANGE)),
        Effect.fork
      )
      // every start-up is waiting
      yield* TestClock.adjust("0 millis")
      expect(control.runs()).toBe(1)
      yield* Deferred.succeed(control.answer, { version: "2.1.332" })
      for (const waiter of waiters) expect(yield* Fiber.await(waiter)).toStrictEqual(Exit.void)
      // known now: judged again for another range, without a probe
      expect(yield* Effect.flip(resolver.checkVersion(cli, ">=3.0.0"))).toStrictEqual(
        new AgentError.VersionIncompatible({
          found: "2.1.332",
          supported: ">=3.0.0",
          reason: "OutOfRange",
          executable: cli.path,
          description: "set cliVersions to a range that holds it to run it anyway (e.g. cliVersions: \">=2.1.332\"; " +
            "\"*\" skips the check), or point pathToClaudeCodeExecutable at a CLI in >=3.0.0"
        })
      )
      expect(control.runs()).toBe(1)
    }))

  it.scoped("an interrupted waiter stops waiting at once; the last one to leave interrupts the probe", () =>
    Effect.gen(function*() {
      const { cli } = yield* cliFile
      const control = yield* controlledProbe
      const resolver = yield* makeWith(undefined, control.probe)
      const first = yield* Effect.fork(resolver.version(cli))
      const second = yield* Effect.fork(resolver.version(cli))
      yield* TestClock.adjust("0 millis")
      // the probe never answers: an interrupt that waited for it would not be done
      const leaving = yield* Effect.fork(Fiber.interrupt(first))
      yield* TestClock.adjust("0 millis")
      expect(leaving.unsafePoll()).not.toBeNull()
      expect(yield* Deferred.isDone(control.interrupted)).toBe(false)
      yield* Fiber.interrupt(second)
      expect(yield* Deferred.isDone(control.interrupted)).toBe(true)
      // the next start-up runs a new probe
      const third = yield* Effect.fork(resolver.version(cli))
      yield* TestClock.adjust("0 millis")
      expect(control.runs()).toBe(2)
      yield* Fiber.interrupt(third)
    }))

  it.scoped("a probe that does not answer within probeTimeout is interrupted; no version is kept, the next one probes", () =>
    Effect.gen(function*() {
      const { cli } = yield* cliFile
      const control = yield* controlledProbe
      const resolver = yield* makeWith({ probeTimeout: "3 seconds" }, control.probe)
      const waiter = yield* Effect.fork(resolver.checkVersion(cli, RANGE))
      yield* TestClock.adjust("2999 millis")
      expect(waiter.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      expect(waiter.unsafePoll()).not.toBeNull()
      expect(yield* Effect.flip(Fiber.join(waiter))).toStrictEqual(
        new AgentError.VersionIncompatible({
          found: "unknown",
          supported: RANGE,
          reason: "Unknown",
          executable: cli.path,
          description: "`--version` did not answer within 3000 ms; cliVersions: \"*\" skips the check"
        })
      )
      expect(yield* Deferred.isDone(control.interrupted)).toBe(true)
      const again = yield* Effect.fork(resolver.version(cli))
      yield* TestClock.adjust("0 millis")
      expect(control.runs()).toBe(2)
      yield* Fiber.interrupt(again)
    }))

  it.scoped("a version is kept by path and modification time: a CLI upgraded in place is probed again", () =>
    Effect.gen(function*() {
      const { cli, file } = yield* cliFile
      let version = "2.1.200"
      let runs = 0
      const resolver = yield* makeWith(undefined, () => Effect.sync(() => (runs++, { version })))
      expect(yield* resolver.version(cli)).toEqual({ version: "2.1.200" })
      version = "2.1.300"
      expect(yield* resolver.version(cli)).toEqual({ version: "2.1.200" })
      fs.utimesSync(file, 1_000_000_000, 1_000_000_000)
      expect(yield* resolver.version(cli)).toEqual({ version: "2.1.300" })
      expect(runs).toBe(2)
      // "*" asks nothing
      yield* resolver.checkVersion(cli, "*")
      expect(runs).toBe(2)
    }))

  it.scoped("an executable the caller names is the only place looked at: the bundled binary is not looked for", () =>
    Effect.gen(function*() {
      const { cli, file } = yield* cliFile
      fs.chmodSync(file, 0o755)
      // the bundled lookup (the platform packages, the C library that picks one) is what reads `arch`
      let bundledLookups = 0
      const host = {
        ...nodeHost(),
        get arch() {
          bundledLookups++
          return process.arch
        }
      }
      const resolver = yield* makeWith(undefined, () => Effect.die("no probe"), host)
      expect(yield* resolver.resolve({ explicit: file, env: {} })).toMatchObject({ command: cli.command })
      expect(yield* resolver.resolve({ env: { CLAUDE_CLI_PATH: file } })).toMatchObject({ command: cli.command })
      expect(bundledLookups).toBe(0)
      // the default lookup does look for it
      yield* Effect.either(resolver.resolve({ env: { PATH: "" } }))
      expect(bundledLookups).toBeGreaterThan(0)
    }))

  it.scoped("knownVerdict: what checkVersion answers, once the version is known without a probe; None before", () =>
    Effect.gen(function*() {
      const { cli, dir } = yield* cliFile
      const control = yield* controlledProbe
      const resolver = yield* makeWith(undefined, control.probe)
      const known = resolver.knownVerdict!
      // "*" needs no version at all
      expect(known(cli, "*")).toStrictEqual(Option.some(Either.void))
      // unknown: only the probe can tell, and asking does not start it
      expect(known(cli, RANGE)).toStrictEqual(Option.none())
      expect(control.runs()).toBe(0)
      const waiter = yield* Effect.fork(resolver.checkVersion(cli, RANGE))
      yield* TestClock.adjust("0 millis")
      yield* Deferred.succeed(control.answer, { version: "2.1.332" })
      yield* Fiber.join(waiter)
      // known now: the same verdicts as checkVersion, for any range
      expect(known(cli, RANGE)).toStrictEqual(Option.some(Either.void))
      const outside = yield* Effect.flip(resolver.checkVersion(cli, ">=3.0.0"))
      expect(known(cli, ">=3.0.0")).toStrictEqual(Option.some(Either.left(outside)))
      expect(control.runs()).toBe(1)
      // an npm package's binary: known from its package.json
      const packageJson = path.join(dir, "package.json")
      fs.writeFileSync(packageJson, JSON.stringify({ version: "2.0.5" }))
      const other = yield* makeWith(undefined, () => Effect.die("no probe for an installed binary"))
      expect(other.knownVerdict!({ ...cli, packageJson }, RANGE)).toStrictEqual(
        Option.some(Either.left(yield* Effect.flip(other.checkVersion({ ...cli, packageJson }, RANGE))))
      )
    }))

  it.scoped("a binary an npm package installed: its package.json answers, no probe runs", () =>
    Effect.gen(function*() {
      const { cli, dir } = yield* cliFile
      const packageJson = path.join(dir, "package.json")
      fs.writeFileSync(packageJson, JSON.stringify({ version: "2.1.332" }))
      const resolver = yield* makeWith(undefined, () => Effect.die("no probe for an installed binary"))
      expect(yield* resolver.version({ ...cli, packageJson })).toEqual({ version: "2.1.332" })
      yield* resolver.checkVersion({ ...cli, packageJson }, RANGE)
    }))

  it.scoped("a resolver whose build scope has closed still runs one shared probe and answers its waiters", () =>
    Effect.gen(function*() {
      const { cli } = yield* cliFile
      const control = yield* controlledProbe
      // what `Layer.build(...).pipe(Effect.provide(NodeClaudeAgent.layer))` does to the resolver it captures
      const resolver = yield* Effect.scoped(makeWith(undefined, control.probe))
      const waiters = yield* Effect.forEach([1, 2], () => Effect.fork(resolver.checkVersion(cli, RANGE)))
      yield* TestClock.adjust("0 millis")
      expect(control.runs()).toBe(1)
      yield* Deferred.succeed(control.answer, { version: "2.1.332" })
      for (const waiter of waiters) expect(yield* Fiber.await(waiter)).toStrictEqual(Exit.void)
    }))
})
