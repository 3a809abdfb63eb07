/** @internal */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startTime } from "./reaper.js"

/**
 * Past this many bytes of option flags, allow/deny tool lists move from argv into the settings file (unless the
 * settings are a file the caller named).
 *
 * @internal
 */
export const ARGV_BUDGET = 4096

/** Flags whose value the CLI takes as a file path or as inline JSON: inline JSON goes into a private file. @internal */
export const FILE_FLAGS: ReadonlyArray<string> = ["--settings", "--mcp-config"]

/** Prefix of the private directories, followed by the host's pid and start time: `eca-args-<pid>-<start>-XXXXXX`. */
const DIR_PREFIX = "eca-args-"
const DIR_NAME = /^eca-args-(\d+)-(\d+|x)-[A-Za-z0-9]{6}$/

/**
 * `true` when the CLI would read this flag value as JSON rather than as a path. `String.prototype.trim` removes a
 * byte order mark too; an array counts as JSON (the CLI would fail on it, but it is never left in argv).
 *
 * @internal
 */
export const isInlineJson = (value: string): boolean => /^[{[]/.test(value.trim())

/** The name prefix of this host's private directories (pid and start time). @internal */
export const hostDirPrefix = (): string => `${DIR_PREFIX}${process.pid}-${startTime("self") ?? "x"}-`

/** Whether the host that named a directory `<pid>-<start>` still runs (unsure counts as running). */
const hostAlive = (pid: number, start: string): boolean => {
  if (start !== "x") {
    const now = startTime(pid)
    if (now !== undefined) return now === start
    if (fs.existsSync("/proc/self/stat")) return false
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: a process of another user holds the pid, so the host (of this user) is gone
    return !(error instanceof Error && "code" in error && (error.code === "ESRCH" || error.code === "EPERM"))
  }
}

/**
 * Removes the private directories that hosts of this user left in `dir` (the system temporary directory by default)
 * when they died without running their finalizers (SIGKILL, OOM kill, power loss): those named after a host whose
 * pid is gone or now belongs to a process started at another time. Directories of running hosts, of other users,
 * and anything that is not a plain directory of ours are left alone. Errors (a directory removed concurrently by
 * another host) are ignored. Returns the directories removed.
 *
 * @internal
 */
export const removeStaleDirs = (dir: string = os.tmpdir()): Effect.Effect<ReadonlyArray<string>> =>
  Effect.sync(() => {
    const removed: Array<string> = []
    let entries: Array<string>
    try {
      entries = fs.readdirSync(dir)
    } catch {
      return removed
    }
    const uid = process.getuid?.()
    for (const name of entries) {
      const match = DIR_NAME.exec(name)
      if (match === null) continue
      const pid = Number(match[1])
      if (pid === process.pid) continue
      const full = path.join(dir, name)
      try {
        const stat = fs.lstatSync(full)
        if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue
        if (hostAlive(pid, match[2]!)) continue
        fs.rmSync(full, { recursive: true, force: true })
        removed.push(full)
      } catch {
        // removed meanwhile, or not ours to remove
      }
    }
    return removed
  })

const takeList = (args: Array<string>, flag: string): Array<string> => {
  const i = args.findIndex((a) => a.startsWith(`--${flag}=`))
  if (i === -1) return []
  const value = args[i]!.slice(flag.length + 3)
  args.splice(i, 1)
  return value === "" ? [] : value.split(",")
}

/** A JSON object (not an array, not `null`). @internal */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The position of a file flag's value: `--flag value` (value at `i + 1`) or `--flag=value` (inline). */
const fileFlagAt = (args: ReadonlyArray<string>, i: number): { flag: string; value: string } | undefined => {
  const arg = args[i]!
  for (const flag of FILE_FLAGS) {
    if (arg === flag && i + 1 < args.length) return { flag, value: args[i + 1]! }
    if (arg.startsWith(`${flag}=`)) return { flag, value: arg.slice(flag.length + 1) }
  }
  return undefined
}

/**
 * Keeps secrets and large values off the command line (where `ps` shows them to every user of the machine): every
 * value of `--settings` and `--mcp-config` that the CLI would read as JSON (whatever its form: leading whitespace,
 * a byte order mark, `--flag=value`) is written to a file in a private temporary directory (mode 0700, files 0600),
 * and the CLI gets its path; paths stay as given. If the flags still exceed {@link ARGV_BUDGET}, `allowedTools` /
 * `disallowedTools` move into the settings file as `permissions.allow` / `permissions.deny`.
 *
 * The directory is removed when the scope closes. It is named after the host's pid and start time
 * (`eca-args-<pid>-<start>-XXXXXX`), so that when the host dies without running finalizers, a later host of the same
 * user removes it ({@link removeStaleDirs}).
 *
 * @internal
 */
export const protectArgs = (input: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const args = [...input]
    // a settings file the caller named cannot take the lists (a second `--settings` would replace it)
    const namesSettingsFile = args.some((_, i) => {
      const found = fileFlagAt(args, i)
      return found?.flag === "--settings" && !isInlineJson(found.value)
    })
    if (!namesSettingsFile && args.join(" ").length > ARGV_BUDGET) {
      const allow = takeList(args, "allowedTools")
      const deny = takeList(args, "disallowedTools")
      if (allow.length > 0 || deny.length > 0) {
        // merged into the (last) inline settings object, or into a settings object of their own
        let at = -1
        let settings: Record<string, unknown> = {}
        for (let i = 0; i < args.length; i++) {
          const found = fileFlagAt(args, i)
          if (found?.flag !== "--settings" || !isInlineJson(found.value)) continue
          try {
            const parsed: unknown = JSON.parse(found.value.trim())
            if (isRecord(parsed)) {
              at = i
              settings = parsed
            }
          } catch {
            // left as it is: the CLI reports it
          }
        }
        const permissions = isRecord(settings["permissions"]) ? { ...settings["permissions"] } : {}
        const list = (key: string) => (Array.isArray(permissions[key]) ? permissions[key] : [])
        if (allow.length > 0) permissions["allow"] = [...list("allow"), ...allow]
        if (deny.length > 0) permissions["deny"] = [...list("deny"), ...deny]
        const merged = JSON.stringify({ ...settings, permissions })
        if (at === -1) args.push("--settings", merged)
        else if (args[at] === "--settings") args[at + 1] = merged
        else args[at] = `--settings=${merged}`
      }
    }
    const inline = args.flatMap((_, i) => {
      const found = fileFlagAt(args, i)
      return found !== undefined && isInlineJson(found.value) ? [i] : []
    })
    if (inline.length === 0) return args

    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), hostDirPrefix()))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    fs.chmodSync(dir, 0o700)
    const written = new Map<string, number>()
    for (const i of inline) {
      const { flag, value } = fileFlagAt(args, i)!
      const n = written.get(flag) ?? 0
      written.set(flag, n + 1)
      const file = path.join(dir, `${flag.slice(2)}-${n}.json`)
      fs.writeFileSync(file, value.trim(), { mode: 0o600, flag: "wx" })
      if (args[i] === flag) args[i + 1] = file
      else args[i] = `${flag}=${file}`
    }
    return args
  })
