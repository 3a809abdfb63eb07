/** @internal */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Past this many bytes of option flags, allow/deny tool lists move from argv into the settings file. @internal */
export const ARGV_BUDGET = 4096

const FILE_FLAGS = new Set(["--mcp-config", "--settings"])

const takeList = (args: Array<string>, flag: string): Array<string> => {
  const i = args.findIndex((a) => a.startsWith(`--${flag}=`))
  if (i === -1) return []
  const value = args[i]!.slice(flag.length + 3)
  args.splice(i, 1)
  return value === "" ? [] : value.split(",")
}

/**
 * Keeps secrets and large values off the command line (where `ps` shows them to every user of the machine): MCP
 * server configs (their `env` and `headers` often hold credentials) and settings objects are written to files in a
 * private temporary directory (mode 0700, files 0600) that is removed when the scope closes, and the CLI gets their
 * paths; if the flags still exceed {@link ARGV_BUDGET}, `allowedTools` / `disallowedTools` move into the settings
 * file as `permissions.allow` / `permissions.deny`.
 *
 * @internal
 */
export const protectArgs = (input: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const args = [...input]
    let settings: Record<string, unknown> | undefined
    const settingsAt = args.indexOf("--settings")
    if (settingsAt !== -1 && args[settingsAt + 1]?.startsWith("{") === true) {
      settings = JSON.parse(args[settingsAt + 1]!) as Record<string, unknown>
      args.splice(settingsAt, 2)
    }
    if (args.join(" ").length > ARGV_BUDGET) {
      const allow = takeList(args, "allowedTools")
      const deny = takeList(args, "disallowedTools")
      if (allow.length > 0 || deny.length > 0) {
        const permissions = { ...(settings?.["permissions"] as Record<string, unknown> | undefined) }
        if (allow.length > 0) permissions["allow"] = [...((permissions["allow"] as Array<string>) ?? []), ...allow]
        if (deny.length > 0) permissions["deny"] = [...((permissions["deny"] as Array<string>) ?? []), ...deny]
        settings = { ...settings, permissions }
      }
    }
    if (settings !== undefined) args.push("--settings", JSON.stringify(settings))
    if (!args.some((a, i) => FILE_FLAGS.has(a) && args[i + 1]?.startsWith("{") === true)) return args

    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-args-"))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    fs.chmodSync(dir, 0o700)
    for (let i = 0; i < args.length - 1; i++) {
      const flag = args[i]!
      const value = args[i + 1]!
      if (!FILE_FLAGS.has(flag) || !value.startsWith("{")) continue
      const file = path.join(dir, `${flag.slice(2)}.json`)
      fs.writeFileSync(file, value, { mode: 0o600 })
      args[i + 1] = file
    }
    return args
  })
