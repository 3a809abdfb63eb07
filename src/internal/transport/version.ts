/** @internal */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { VersionIncompatible } from "../../AgentError.js"
import type { ResolvedCli } from "../../CliResolver.js"

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

/** How long `--version` may take before its process (group) is killed and the version is unknown. @internal */
export const PROBE_TIMEOUT_MILLIS = 10_000
const PROBE_OUTPUT_LIMIT = 64 * 1024

/** What `--version` told: the version, or why there is none. @internal */
export type Probe = { readonly version: string } | { readonly reason: string }

const clip = (text: string) => JSON.stringify(text.trim().slice(0, 200))

/**
 * What identifies an executable's version: how it is run, its path and its modification time (`undefined` when the
 * file cannot be stat'ed: such a CLI is never answered from a cache).
 *
 * @internal
 */
export const versionKey = (cli: ResolvedCli): string | undefined => {
  try {
    return [cli.command, ...cli.prefixArgs, `${cli.path}@${fs.statSync(cli.path).mtimeMs}`].join("\0")
  } catch {
    return undefined
  }
}

/** The version in the `package.json` of the npm package that installed the binary, if it names one. @internal */
export const packageVersion = (cli: ResolvedCli): string | undefined => {
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
 * Runs `<cli> --version` in a process group of its own and reads `x.y.z` from its stdout. The answer is a reason when
 * the probe cannot start, exits non-zero, or prints no version. Interrupting it kills the process group (SIGKILL),
 * so a wrapper script's children go with it. Unbounded: the caller applies the timeout.
 *
 * @internal
 */
export const spawnProbe = (cli: ResolvedCli): Effect.Effect<Probe> =>
  Effect.async<Probe>((resume) => {
    let settled = false
    let stdout = ""
    const child = spawn(cli.command, [...cli.prefixArgs, "--version"], {
      stdio: ["ignore", "pipe", "ignore"],
      // its own process group: a wrapper script's children are killed with it
      detached: process.platform !== "win32"
    })
    const settle = (probe: Probe) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(probe))
    }
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
      try {
        if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL")
        else child.kill("SIGKILL")
      } catch {
        // already gone
      }
    })
  })

/**
 * Whether a probe's answer is in `range`: `VersionIncompatible` when it is not, or when there is no version. A value,
 * so that a verdict on a version known already is had without running anything. @internal
 */
export const judge = (probe: Probe, range: string): Either.Either<void, VersionIncompatible> => {
  if (!("version" in probe)) {
    return Either.left(
      new VersionIncompatible({ found: "unknown", supported: range, reason: "Unknown", description: probe.reason })
    )
  }
  return satisfies(probe.version, range)
    ? Either.void
    : Either.left(new VersionIncompatible({ found: probe.version, supported: range, reason: "OutOfRange" }))
}
