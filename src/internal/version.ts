/** @internal */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { VersionIncompatible } from "../AgentError.js"
import type { ResolvedCli } from "./cliPath.js"

/** The CLI versions this SDK was tested with (the pinned 2.1.332 and 2.1.100). @internal */
export const SUPPORTED_CLI_VERSIONS = ">=2.1.100 <2.2.0"

type Version = readonly [number, number, number]

const parse = (v: string): Version | undefined => {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(v)
  return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])]
}

const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/** `true` when `version` satisfies every comparator of `range` (`>=1.2.3 <2.0.0`, `*`, `1.2.3`). @internal */
export const satisfies = (version: string, range: string): boolean => {
  const v = parse(version)
  if (v === undefined) return false
  for (const part of range.trim().split(/\s+/)) {
    if (part === "*" || part === "") continue
    const m = /^(>=|<=|>|<|=)?(.+)$/.exec(part)
    const bound = m === null ? undefined : parse(m[2]!)
    if (m === null || bound === undefined) return false
    const c = compare(v, bound)
    const ok = m[1] === ">=" ? c >= 0 : m[1] === "<=" ? c <= 0 : m[1] === ">" ? c > 0 : m[1] === "<" ? c < 0 : c === 0
    if (!ok) return false
  }
  return true
}

const cache = new Map<string, string>()

/** How long `--version` may take before its process (group) is killed and the version is unknown. @internal */
export const PROBE_TIMEOUT_MILLIS = 10_000
const PROBE_OUTPUT_LIMIT = 64 * 1024

/** What `--version` told: the version, or why there is none. @internal */
export type Probe = { readonly version: string } | { readonly reason: string }

const clip = (text: string) => JSON.stringify(text.trim().slice(0, 200))

const cacheKey = (cli: ResolvedCli): string => {
  try {
    return `${cli.path}@${fs.statSync(cli.path).mtimeMs}`
  } catch {
    // a path we cannot stat is probed every time
    return cli.path
  }
}

/** The version a probe of this executable (same path and modification time) found before, if any. @internal */
export const knownVersion = (cli: ResolvedCli): string | undefined => cache.get(cacheKey(cli))

/** The version in the `package.json` of the npm package that installed the binary, if it names one. */
const packageVersion = (cli: ResolvedCli): string | undefined => {
  if (cli.packageJson === undefined) return undefined
  try {
    const manifest: unknown = JSON.parse(fs.readFileSync(cli.packageJson, "utf8"))
    const version = typeof manifest === "object" && manifest !== null && "version" in manifest
      ? manifest.version
      : undefined
    return typeof version === "string" && parse(version) !== undefined ? version : undefined
  } catch {
    return undefined
  }
}

/**
 * The CLI's version: for a binary an npm package installed (the bundled lookup), its `package.json`'s; otherwise
 * `<cli> --version`, run once per executable. Answers are cached by path and modification time. The run is bounded:
 * after `timeoutMillis` the probe's process group is killed (SIGKILL) and the answer is a reason, as it is when the
 * probe cannot start, exits non-zero, or prints no `x.y.z`.
 *
 * @internal
 */
export const probeVersion = (cli: ResolvedCli, timeoutMillis = PROBE_TIMEOUT_MILLIS): Effect.Effect<Probe> =>
  Effect.suspend(() => {
    const key = cacheKey(cli)
    const known = cache.get(key)
    if (known !== undefined) return Effect.succeed({ version: known })
    // a run of the native binary's `--version` costs the first session of a process ~12 ms (~100 ms from a cold disk)
    const installed = packageVersion(cli)
    if (installed !== undefined) {
      cache.set(key, installed)
      return Effect.succeed({ version: installed })
    }
    return Effect.async<Probe>((resume) => {
      let settled = false
      let stdout = ""
      const child = spawn(cli.command, [...cli.prefixArgs, "--version"], {
        stdio: ["ignore", "pipe", "ignore"],
        // its own process group: a wrapper script's children are killed with it
        detached: process.platform !== "win32"
      })
      const killGroup = () => {
        try {
          if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL")
          else child.kill("SIGKILL")
        } catch {
          // already gone
        }
      }
      const settle = (probe: Probe) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if ("version" in probe) cache.set(key, probe.version)
        resume(Effect.succeed(probe))
      }
      const timer = setTimeout(() => {
        killGroup()
        settle({ reason: `\`--version\` did not answer within ${timeoutMillis} ms` })
      }, timeoutMillis)
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => {
        if (stdout.length < PROBE_OUTPUT_LIMIT) stdout += chunk
      })
      child.on("error", (error) => settle({ reason: `\`--version\` could not run: ${error.message}` }))
      child.on("close", (code, signal) => {
        const version = /\d+\.\d+\.\d+/.exec(stdout)?.[0]
        if (code !== 0) {
          const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`
          settle({ reason: `\`--version\` ${how}` })
        } else if (version === undefined) settle({ reason: `\`--version\` printed no version: ${clip(stdout)}` })
        else settle({ version })
      })
      return Effect.sync(() => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        killGroup()
      })
    })
  })

/** Runs `<cli> --version` (see {@link probeVersion}); `undefined` when it reported no version. @internal */
export const cliVersion = (cli: ResolvedCli): Effect.Effect<string | undefined> =>
  Effect.map(probeVersion(cli), (probe) => ("version" in probe ? probe.version : undefined))

/**
 * Fails with `VersionIncompatible` when the CLI's version is outside `range` (`*` skips the check), or unknown
 * (`found: "unknown"`, with the reason).
 *
 * @internal
 */
export const checkVersion = (
  cli: ResolvedCli,
  range: string,
  timeoutMillis = PROBE_TIMEOUT_MILLIS
): Effect.Effect<void, VersionIncompatible> =>
  range.trim() === "*" ? Effect.void : Effect.flatMap(probeVersion(cli, timeoutMillis), (probe) => judge(probe, range))

/** What {@link checkVersion} concludes from a probe. @internal */
export const judge = (probe: Probe, range: string): Effect.Effect<void, VersionIncompatible> => {
  if (!("version" in probe)) {
    return Effect.fail(new VersionIncompatible({ found: "unknown", supported: range, reason: "Unknown", description: probe.reason }))
  }
  return satisfies(probe.version, range)
    ? Effect.void
    : Effect.fail(new VersionIncompatible({ found: probe.version, supported: range, reason: "OutOfRange" }))
}
