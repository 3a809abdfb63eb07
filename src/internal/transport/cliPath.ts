/** @internal */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { CliNotFound } from "../../AgentError.js"
import type { ResolvedCli } from "../../CliResolver.js"

const isExecutableFile = (file: string): boolean => {
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) return false
    fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

const isReadableFile = (file: string): boolean => {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

const isScript = (file: string) => /\.(?:m|c)?js$/.test(file)

/**
 * Whether this Linux runs on musl (no glibc in the process report). Building the report is not free: the resolver
 * asks once (see `CliResolver`).
 *
 * @internal
 */
export const detectMusl = (): boolean => {
  if (process.platform !== "linux") return false
  const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined
  return report?.header?.glibcVersionRuntime === undefined
}

/** The npm package names that may hold the native binary for this machine, best first. @internal */
export const platformPackages = (musl: boolean): ReadonlyArray<string> => {
  const base = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`
  if (process.platform !== "linux") return [base]
  return musl ? [`${base}-musl`, base] : [base, `${base}-musl`]
}

const binaryName = process.platform === "win32" ? "claude.exe" : "claude"

/** A place the bundled binary may be, with the `package.json` of the npm package that puts it there. @internal */
export interface BundledCandidate {
  readonly file: string
  readonly packageJson?: string
}

/** Where the bundled binary may be: `installed` is `false` when no package holding it is installed. @internal */
export interface Bundled {
  readonly candidates: ReadonlyArray<BundledCandidate>
  readonly installed: boolean
}

/**
 * Where the bundled `@anthropic-ai/claude-code` dependency keeps its native binary: the platform packages (resolved
 * from here and from the wrapper package), then the wrapper's own `bin/claude.exe`. Whether the binary is there is
 * checked by {@link resolveCli}, for every session.
 *
 * @internal
 */
export const lookUpBundled = (musl: boolean): Bundled => {
  const out: Array<BundledCandidate> = []
  const require = createRequire(import.meta.url)
  const resolvers: Array<NodeJS.Require> = [require]
  try {
    resolvers.push(createRequire(require.resolve("@anthropic-ai/claude-code/package.json")))
  } catch {
    // the wrapper package is not installed
  }
  for (const pkg of platformPackages(musl)) {
    for (const r of resolvers) {
      try {
        const manifest = r.resolve(`${pkg}/package.json`)
        const file = path.join(path.dirname(manifest), binaryName)
        if (!out.some((c) => c.file === file)) out.push({ file, packageJson: manifest })
      } catch {
        // not installed for this resolver
      }
    }
  }
  try {
    const manifest = require.resolve("@anthropic-ai/claude-code/package.json")
    out.push({ file: path.join(path.dirname(manifest), "bin", "claude.exe"), packageJson: manifest })
  } catch {
    // not installed
  }
  return out.length === 0
    ? {
      candidates: [{ file: `${platformPackages(musl)[0]}/${binaryName} (npm package not installed)` }],
      installed: false
    }
    : { candidates: out, installed: true }
}

/** The usual install places of a global `claude`. @internal */
export const commonInstallDirs = (): ReadonlyArray<string> => {
  const home = os.homedir()
  return [
    path.join(home, ".npm-global", "bin", "claude"),
    "/usr/local/bin/claude",
    path.join(home, ".local", "bin", "claude"),
    path.join(home, "node_modules", ".bin", "claude"),
    path.join(home, ".yarn", "bin", "claude"),
    path.join(home, ".claude", "local", "claude")
  ]
}

// The wrapper's bin/claude.exe is a tiny placeholder until its postinstall copies the native binary over it.
const isPlaceholder = (file: string): boolean => {
  try {
    return fs.statSync(file).size < 1024 * 1024 && file.endsWith(path.join("bin", "claude.exe"))
  } catch {
    return true
  }
}

const toResolved = (file: string, executableArgs: ReadonlyArray<string>, packageJson?: string): ResolvedCli =>
  isScript(file)
    ? { command: process.execPath, prefixArgs: [...executableArgs, file], path: file }
    : packageJson === undefined
    ? { command: file, prefixArgs: [], path: file }
    : { command: file, prefixArgs: [], path: file, packageJson }

/**
 * Finds the CLI: explicit path > `CLAUDE_CLI_PATH` > the bundled `@anthropic-ai/claude-code` binary > `PATH` >
 * common install directories. A `.js`/`.mjs`/`.cjs` path is run with the current Node executable.
 *
 * @internal
 */
export const resolveCli = (options: {
  readonly explicit?: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly executableArgs?: ReadonlyArray<string> | undefined
  /** Where the bundled binary may be (see {@link lookUpBundled}). */
  readonly bundled: ReadonlyArray<BundledCandidate>
  /** The common install places, searched last (see {@link commonInstallDirs}). */
  readonly commonDirs: ReadonlyArray<string>
}): Effect.Effect<ResolvedCli, CliNotFound> =>
  Effect.suspend(() => {
    const executableArgs = options.executableArgs ?? []
    const usable = (file: string) => (isScript(file) ? isReadableFile(file) : isExecutableFile(file))
    if (options.explicit !== undefined) {
      const file = path.resolve(options.explicit)
      return usable(file)
        ? Effect.succeed(toResolved(file, executableArgs))
        : Effect.fail(new CliNotFound({ searched: [`pathToClaudeCodeExecutable: ${file}`] }))
    }
    const fromEnv = options.env["CLAUDE_CLI_PATH"]
    if (fromEnv !== undefined && fromEnv.length > 0) {
      const file = path.resolve(fromEnv)
      return usable(file)
        ? Effect.succeed(toResolved(file, executableArgs))
        : Effect.fail(new CliNotFound({ searched: [`CLAUDE_CLI_PATH: ${file}`] }))
    }
    const searched: Array<string> = []
    for (const candidate of options.bundled) {
      searched.push(`bundled: ${candidate.file}`)
      if (isExecutableFile(candidate.file) && !isPlaceholder(candidate.file)) {
        return Effect.succeed(toResolved(candidate.file, executableArgs, candidate.packageJson))
      }
    }
    const pathDirs = (options.env["PATH"] ?? "").split(path.delimiter).filter((d) => d.length > 0)
    for (const dir of pathDirs) {
      const candidate = path.join(dir, binaryName)
      searched.push(`PATH: ${candidate}`)
      if (isExecutableFile(candidate)) return Effect.succeed(toResolved(candidate, executableArgs))
    }
    for (const candidate of options.commonDirs) {
      searched.push(candidate)
      if (isExecutableFile(candidate)) return Effect.succeed(toResolved(candidate, executableArgs))
    }
    return Effect.fail(new CliNotFound({ searched }))
  })
