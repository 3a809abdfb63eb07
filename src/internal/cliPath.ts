/** @internal */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { CliNotFound } from "../AgentError.js"

/** How to run a resolved CLI: the command and the arguments that go before ours. @internal */
export interface ResolvedCli {
  readonly command: string
  readonly prefixArgs: ReadonlyArray<string>
  readonly path: string
  /**
   * The `package.json` of the npm package that installed this binary (the bundled lookup only): its version is the
   * binary's, so the version check needs no `--version` run.
   */
  readonly packageJson?: string
}

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

let musl: boolean | undefined

// Building the process report takes ~3.5 ms, and the C library does not change while the process runs: once.
const detectMusl = (): boolean => {
  if (process.platform !== "linux") return false
  if (musl === undefined) {
    const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined
    musl = report?.header?.glibcVersionRuntime === undefined
  }
  return musl
}

/** The npm package names that may hold the native binary for this machine, best first. @internal */
export const platformPackages = (): ReadonlyArray<string> => {
  const base = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`
  if (process.platform !== "linux") return [base]
  return detectMusl() ? [`${base}-musl`, base] : [base, `${base}-musl`]
}

const binaryName = process.platform === "win32" ? "claude.exe" : "claude"

let installed: ReadonlyArray<string> | undefined
/** The `package.json` of each bundled candidate's package. */
const manifests = new Map<string, string>()

/**
 * Where the bundled `@anthropic-ai/claude-code` dependency keeps its native binary, if installed. Once a package was
 * found the places are kept for the process (each lookup cost ~0.5 ms); whether the binary is there is still checked
 * for every session.
 *
 * @internal
 */
export const bundledCandidates = (): ReadonlyArray<string> => installed ?? lookUpBundled()

const lookUpBundled = (): ReadonlyArray<string> => {
  const out: Array<string> = []
  const require = createRequire(import.meta.url)
  const resolvers: Array<NodeJS.Require> = [require]
  try {
    resolvers.push(createRequire(require.resolve("@anthropic-ai/claude-code/package.json")))
  } catch {
    // the wrapper package is not installed
  }
  for (const pkg of platformPackages()) {
    for (const r of resolvers) {
      try {
        const manifest = r.resolve(`${pkg}/package.json`)
        const candidate = path.join(path.dirname(manifest), binaryName)
        manifests.set(candidate, manifest)
        if (!out.includes(candidate)) out.push(candidate)
      } catch {
        // not installed for this resolver
      }
    }
  }
  try {
    const manifest = require.resolve("@anthropic-ai/claude-code/package.json")
    const wrapper = path.join(path.dirname(manifest), "bin", "claude.exe")
    manifests.set(wrapper, manifest)
    out.push(wrapper)
  } catch {
    // not installed
  }
  if (out.length === 0) out.push(`${platformPackages()[0]}/${binaryName} (npm package not installed)`)
  else installed = out
  return out
}

const commonInstallDirs = (): ReadonlyArray<string> => {
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
  /** Overrides where the bundled binary and the common install dirs are looked for (tests). */
  readonly bundled?: ReadonlyArray<string> | undefined
  readonly commonDirs?: ReadonlyArray<string> | undefined
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
    for (const candidate of options.bundled ?? bundledCandidates()) {
      searched.push(`bundled: ${candidate}`)
      if (isExecutableFile(candidate) && !isPlaceholder(candidate)) {
        return Effect.succeed(toResolved(candidate, executableArgs, manifests.get(candidate)))
      }
    }
    const pathDirs = (options.env["PATH"] ?? "").split(path.delimiter).filter((d) => d.length > 0)
    for (const dir of pathDirs) {
      const candidate = path.join(dir, binaryName)
      searched.push(`PATH: ${candidate}`)
      if (isExecutableFile(candidate)) return Effect.succeed(toResolved(candidate, executableArgs))
    }
    for (const candidate of options.commonDirs ?? commonInstallDirs()) {
      searched.push(candidate)
      if (isExecutableFile(candidate)) return Effect.succeed(toResolved(candidate, executableArgs))
    }
    return Effect.fail(new CliNotFound({ searched }))
  })
