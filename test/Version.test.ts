// G20: the CLI version gate. Tiny executables stand in for `claude`: they answer `--version` and nothing else.
import { describe, expect, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentError, ClaudeAgent, CliResolver, Transport } from "effect-claude-agent"
import { satisfies } from "../src/internal/transport/version.js"
import { NodeClaudeAgent, noClaudeLeft, tempDir } from "./support/cli.js"
import { descendants, isAlive, OWNER_ENV } from "./support/process.js"
import { eventually } from "./support/wait.js"

/** An executable that prints `version` for `--version` (after `delay` seconds) and exits 3 for anything else. */
const fakeClaude = (
  name: string,
  version: string,
  options: { readonly exitCode?: number; readonly delay?: number } = {}
) =>
  Effect.map(tempDir("eca-version-"), (dir) => {
    const file = path.join(dir, name)
    fs.writeFileSync(
      file,
      [
        "#!/bin/sh",
        // the owner marker makes a leftover probe visible to noClaudeLeft even once reparented
        `export ${OWNER_ENV}=${process.pid}`,
        `if [ "$1" = "--version" ]; then`,
        options.delay !== undefined ? `  sleep ${options.delay}` : "",
        `  printf '%s\\n' ${JSON.stringify(version)}`,
        `  exit ${options.exitCode ?? 0}`,
        "fi",
        "exit 3",
        ""
      ].join("\n"),
      { mode: 0o755 }
    )
    return file
  })

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Transport.Transport | Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())).pipe(Effect.provide(NodeClaudeAgent.layer)), 30_000)

/** What an unknown version's error adds to why it is unknown. */
const SKIPS = "cliVersions: \"*\" skips the check"

const queryWith = (executable: string, cliVersions?: string) =>
  ClaudeAgent.query("hi", {
    pathToClaudeCodeExecutable: executable,
    ...(cliVersions !== undefined ? { cliVersions } : {})
  }).pipe(Stream.runDrain, Effect.flip)

describe("G20 the CLI version gate", () => {
  it("ranges: bounds, exact versions, \"*\", and versions that do not parse", () => {
    expect(satisfies("2.1.100", Transport.SUPPORTED_CLI_VERSIONS)).toBe(true)
    expect(satisfies("2.1.99", Transport.SUPPORTED_CLI_VERSIONS)).toBe(false)
    expect(satisfies("2.2.0", Transport.SUPPORTED_CLI_VERSIONS)).toBe(false)
    expect(satisfies("2.0.5 (Claude Code)", ">=2.0.0 <2.1.0")).toBe(true)
    expect(satisfies("1.2.3", "1.2.3")).toBe(true)
    expect(satisfies("1.2.3", "*")).toBe(true)
    expect(satisfies("dev", "*")).toBe(false)
  })

  live(
    "G20 a CLI below the supported range: VersionIncompatible, and the session never starts",
    () =>
      Effect.gen(function*() {
        const old = yield* fakeClaude("claude-old", "2.0.5 (Claude Code)")
        const error = yield* queryWith(old)
        expect(error).toMatchObject({
          _tag: "VersionIncompatible",
          found: "2.0.5",
          supported: Transport.SUPPORTED_CLI_VERSIONS,
          reason: "OutOfRange",
          executable: old
        })
        // the message names the executable and how to widen the range
        expect(error.message).toBe(
          `Claude Code 2.0.5 at ${old} is outside the supported range ${Transport.SUPPORTED_CLI_VERSIONS} (set ` +
            "cliVersions to a range that holds it to run it anyway (e.g. cliVersions: \">=2.0.5\"; \"*\" skips the " +
            `check), or point pathToClaudeCodeExecutable at a CLI in ${Transport.SUPPORTED_CLI_VERSIONS})`
        )
        // the override lets it through (and then the session runs it: this one exits 3 at once)
        expect(yield* queryWith(old, ">=2.0.0")).toMatchObject({ _tag: "StartupFailed", exitCode: 3 })
      })
  )

  live("G20 a version found before is judged again for every range (no second probe)", () =>
    Effect.gen(function*() {
      const cli = yield* fakeClaude("claude-known", "2.1.332 (Claude Code)")
      // the cache is keyed by path and modification time (whole seconds here, so they can be set again exactly)
      fs.utimesSync(cli, 1_000_000_000, 1_000_000_000)
      // the first session probes and caches 2.1.332 (then the fake exits 3 at once)
      expect(yield* queryWith(cli)).toMatchObject({ _tag: "StartupFailed", exitCode: 3 })
      // a probe now would print 9.9.9, but the file keeps its modification time: the cached 2.1.332 is judged
      fs.writeFileSync(cli, "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo 9.9.9; exit 0; fi\nexit 3\n")
      fs.utimesSync(cli, 1_000_000_000, 1_000_000_000)
      const cached = yield* queryWith(cli, ">=3.0.0")
      expect(cached._tag).toBe("VersionIncompatible")
      expect(cached).toMatchObject({ found: "2.1.332", supported: ">=3.0.0" })
      // another modification time: probed again, 9.9.9 is in range (and the fake exits 3 at once)
      fs.utimesSync(cli, 1_000_000_001, 1_000_000_001)
      expect(yield* queryWith(cli, ">=3.0.0")).toMatchObject({ _tag: "StartupFailed", exitCode: 3 })
    }))

  live(
    "G20 --version runs while the CLI starts; an incompatible one is killed having been sent nothing, and a version " +
      "known already is judged before anything is spawned",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("eca-version-")
        const cli = path.join(dir, "claude-old")
        const started = path.join(dir, "started")
        const stdin = path.join(dir, "stdin")
        // `--version` answers only once the CLI itself is running: a check made before the spawn would wait for it
        // until the probe timeout and find no version
        fs.writeFileSync(
          cli,
          [
            "#!/bin/sh",
            `export ${OWNER_ENV}=${process.pid}`,
            `if [ "$1" = "--version" ]; then`,
            `  while [ ! -s ${JSON.stringify(started)} ]; do sleep 0.01; done`,
            "  echo 1.0.0",
            "  exit 0",
            "fi",
            `echo $$ > ${JSON.stringify(started)}`,
            `exec cat > ${JSON.stringify(stdin)}`,
            ""
          ].join("\n"),
          { mode: 0o755 }
        )
        const error = yield* queryWith(cli)
        expect(error).toMatchObject({
          _tag: "VersionIncompatible",
          found: "1.0.0",
          supported: Transport.SUPPORTED_CLI_VERSIONS,
          reason: "OutOfRange",
          executable: cli
        })
        // it ran, got not one byte, and was killed at once (SIGKILL, not the close grace)
        const pid = Number(fs.readFileSync(started, "utf8"))
        expect(fs.readFileSync(stdin, "utf8")).toBe("")
        yield* eventually("the incompatible CLI gone", () => !isAlive(pid))
        // now the version is known: judged before the spawn, nothing runs
        fs.rmSync(started)
        fs.rmSync(stdin)
        expect(yield* queryWith(cli)).toMatchObject({ _tag: "VersionIncompatible", found: "1.0.0" })
        expect(fs.existsSync(started) || fs.existsSync(stdin)).toBe(false)
      })
  )

  live(
    "a resolver written before knownVerdict: a version it knows is still judged before anything is spawned",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("eca-version-")
        const cli = path.join(dir, "claude-old")
        const started = path.join(dir, "started")
        // the CLI itself records that it ran; --version answers an old version
        fs.writeFileSync(
          cli,
          [
            "#!/bin/sh",
            `export ${OWNER_ENV}=${process.pid}`,
            `if [ "$1" = "--version" ]; then echo 1.0.0; exit 0; fi`,
            `echo $$ > ${JSON.stringify(started)}`,
            "exit 3",
            ""
          ].join("\n"),
          { mode: 0o755 }
        )
        const { checkVersion, resolve, version } = yield* CliResolver.make()
        const legacy = Transport.layerProcess.pipe(
          Layer.provide(Layer.succeed(CliResolver.CliResolver, { resolve, version, checkVersion })),
          Layer.provide(NodeFileSystem.layer)
        )
        // the probe makes the version known (the CLI may have started meanwhile)
        const resolved = yield* resolve({ explicit: cli, env: {} })
        expect(yield* version(resolved)).toEqual({ version: "1.0.0" })
        const error = yield* queryWith(cli).pipe(Effect.provide(legacy))
        expect(error).toMatchObject({ _tag: "VersionIncompatible", found: "1.0.0", reason: "OutOfRange" })
        expect(fs.existsSync(started)).toBe(false)
      })
  )

  live(
    "G20 an unparsable --version: VersionIncompatible { found: \"unknown\" } with the output in the reason",
    () =>
      Effect.gen(function*() {
        const garbage = yield* fakeClaude("claude-garbage", "Claude Code (development build)")
        expect(yield* queryWith(garbage)).toStrictEqual(
          new AgentError.VersionIncompatible({
            found: "unknown",
            supported: Transport.SUPPORTED_CLI_VERSIONS,
            reason: "Unknown",
            executable: garbage,
            description: "`--version` printed no version: \"Claude Code (development build)\"; " + SKIPS
          })
        )
        // "*" skips the check altogether
        expect(yield* queryWith(garbage, "*")).toMatchObject({ _tag: "StartupFailed", exitCode: 3 })
      })
  )

  live(
    "G20 a failing --version: VersionIncompatible { found: \"unknown\" } with its exit code",
    () =>
      Effect.gen(function*() {
        const failing = yield* fakeClaude("claude-failing", "2.1.332", { exitCode: 2 })
        expect(yield* queryWith(failing)).toStrictEqual(
          new AgentError.VersionIncompatible({
            found: "unknown",
            supported: Transport.SUPPORTED_CLI_VERSIONS,
            reason: "Unknown",
            executable: failing,
            description: "`--version` exited with code 2; " + SKIPS
          })
        )
      })
  )

  live(
    "a binary an npm package installed: the version in its package.json, without a --version run",
    () =>
      Effect.gen(function*() {
        // --version would hang: answering at all shows it was not run
        const resolver = yield* CliResolver.make({ probeTimeout: "500 millis" })
        const binary = yield* fakeClaude("claude", "9.9.9", { delay: 60 })
        const manifest = path.join(path.dirname(binary), "package.json")
        const cli = { command: binary, prefixArgs: [], path: binary, packageJson: manifest }
        fs.writeFileSync(manifest, JSON.stringify({ name: "@anthropic-ai/claude-code-linux-x64", version: "2.0.5" }))
        expect(yield* Effect.flip(resolver.checkVersion(cli, Transport.SUPPORTED_CLI_VERSIONS))).toMatchObject({
          found: "2.0.5",
          supported: Transport.SUPPORTED_CLI_VERSIONS,
          reason: "OutOfRange",
          executable: binary
        })
        // an upgrade in place (a new binary, a new manifest) is seen: the answer is cached by the binary's mtime
        fs.writeFileSync(manifest, JSON.stringify({ name: "@anthropic-ai/claude-code-linux-x64", version: "2.1.332" }))
        fs.utimesSync(binary, new Date(), new Date(Date.now() + 5_000))
        expect(yield* resolver.version(cli)).toEqual({ version: "2.1.332" })
        // a manifest without a usable version: --version is run after all
        const other = yield* fakeClaude("claude", "2.1.200")
        const unreadable = path.join(path.dirname(other), "package.json")
        fs.writeFileSync(unreadable, JSON.stringify({ name: "x", version: "next" }))
        expect(yield* resolver.version({ command: other, prefixArgs: [], path: other, packageJson: unreadable }))
          .toEqual({
            version: "2.1.200"
          })
      })
  )

  it.scoped("the default lookup knows the bundled binary's package.json", () =>
    Effect.gen(function*() {
      const resolver = yield* CliResolver.make()
      const cli = yield* resolver.resolve({ env: {} })
      expect(cli.packageJson).toBeDefined()
      const manifest: { readonly name: string; readonly version: string } = JSON.parse(
        fs.readFileSync(cli.packageJson!, "utf8")
      )
      expect(manifest.name).toMatch(/^@anthropic-ai\/claude-code/)
      expect(yield* resolver.version(cli)).toEqual({ version: manifest.version })
    }))

  live(
    "G7 a --version that hangs is bounded: its process group is killed, the version is unknown",
    () =>
      Effect.gen(function*() {
        const before = new Set(descendants(process.pid))
        const hanging = yield* fakeClaude("claude-hanging", "2.1.332", { delay: 60 })
        const cli = { command: hanging, prefixArgs: [], path: hanging }
        const resolver = yield* CliResolver.make({ probeTimeout: "500 millis" })
        const started = Date.now()
        expect(yield* resolver.version(cli)).toEqual({ reason: "`--version` did not answer within 500 ms" })
        expect(yield* Effect.flip(resolver.checkVersion(cli, Transport.SUPPORTED_CLI_VERSIONS))).toStrictEqual(
          new AgentError.VersionIncompatible({
            found: "unknown",
            supported: Transport.SUPPORTED_CLI_VERSIONS,
            reason: "Unknown",
            executable: hanging,
            description: "`--version` did not answer within 500 ms; " + SKIPS
          })
        )
        // 500 ms and a process kill, far from the minute the probe would take; generous for a loaded CI machine
        expect(Date.now() - started).toBeLessThan(10_000)
        // the shell and its `sleep` were sent SIGKILL (not awaited): gone once the kernel has ended them
        yield* eventually("the --version probe's processes gone", () =>
          descendants(process.pid).every((pid) => before.has(pid)))
      })
  )
})
