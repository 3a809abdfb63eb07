/** @internal */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
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

/** Runs `<cli> --version` once per executable (cached by path and modification time). @internal */
export const cliVersion = (cli: ResolvedCli): Effect.Effect<string | undefined> =>
  Effect.suspend(() => {
    let key = cli.path
    try {
      key = `${cli.path}@${fs.statSync(cli.path).mtimeMs}`
    } catch {
      // a path we cannot stat is probed every time
    }
    const known = cache.get(key)
    if (known !== undefined) return Effect.succeed(known)
    return Effect.async<string | undefined>((resume) => {
      const child = execFile(cli.command, [...cli.prefixArgs, "--version"], { timeout: 10_000 }, (error, stdout) => {
        const version = error === null ? /\d+\.\d+\.\d+/.exec(stdout)?.[0] : undefined
        if (version !== undefined) cache.set(key, version)
        resume(Effect.succeed(version))
      })
      return Effect.sync(() => child.kill("SIGKILL"))
    })
  })

/** Fails with `VersionIncompatible` when the CLI's version is outside `range` (`*` skips the check). @internal */
export const checkVersion = (cli: ResolvedCli, range: string): Effect.Effect<void, VersionIncompatible> =>
  range.trim() === "*"
    ? Effect.void
    : Effect.flatMap(cliVersion(cli), (found) =>
      found !== undefined && satisfies(found, range)
        ? Effect.void
        : Effect.fail(new VersionIncompatible({ found: found ?? "unknown", supported: range })))
