/** @internal */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { CliNotFound, InvalidOptions } from "../../AgentError.js"
import type { JavaScriptRuntime, ResolvedCli } from "../../CliResolver.js"

/**
 * What the lookup reads of the machine it runs on. The resolver builds it once from Node ({@link nodeHost}); tests
 * pass one of their own, so that the Windows rules (paths, `PATHEXT`, `claude.exe`) run on any system.
 *
 * @internal
 */
export interface Host {
  readonly platform: NodeJS.Platform
  readonly arch: string
  readonly homedir: string
  /** The Node executable a JavaScript CLI runs with. */
  readonly execPath: string
  /** A regular file this process may execute (on Windows: every regular file). */
  readonly isExecutableFile: (file: string) => boolean
  /** A regular file. */
  readonly isReadableFile: (file: string) => boolean
  /** The size of a file, `undefined` when it cannot be stat'ed. */
  readonly fileSize: (file: string) => number | undefined
  /** What is at a path (to say why a path the caller named cannot be run). */
  readonly fileKind: (file: string) => "missing" | "directory" | "file" | "other"
}

/**
 * The system the process Transport starts programs on, for its command-line limit: this one unless a test says
 * otherwise.
 *
 * @internal
 */
export class HostPlatform extends Context.Reference<HostPlatform>()("effect-claude-agent/HostPlatform", {
  defaultValue: (): NodeJS.Platform => process.platform
}) {}

/** This machine, read through Node's `process`, `os` and `fs`. @internal */
export const nodeHost = (): Host => ({
  platform: process.platform,
  arch: process.arch,
  homedir: os.homedir(),
  execPath: process.execPath,
  isExecutableFile: (file) => {
    try {
      if (!fs.statSync(file).isFile()) return false
      fs.accessSync(file, fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  },
  isReadableFile: (file) => {
    try {
      return fs.statSync(file).isFile()
    } catch {
      return false
    }
  },
  fileSize: (file) => {
    try {
      return fs.statSync(file).size
    } catch {
      return undefined
    }
  },
  fileKind: (file) => {
    try {
      const stat = fs.statSync(file)
      return stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other"
    } catch {
      return "missing"
    }
  }
})

/** The path rules of the host's system (`path.win32` on Windows, wherever the code runs). */
const pathOf = (host: Host): path.PlatformPath => (host.platform === "win32" ? path.win32 : path.posix)

const binaryName = (host: Host) => (host.platform === "win32" ? "claude.exe" : "claude")

const isScript = (file: string) => /\.(?:m|c)?js$/i.test(file)

/**
 * Whether this Linux runs on musl (no glibc in the process report). Building the report is not free: the resolver
 * asks once (see `CliResolver`).
 *
 * @internal
 */
export const detectMusl = (platform: NodeJS.Platform = process.platform): boolean => {
  if (platform !== "linux") return false
  const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined
  return report?.header?.glibcVersionRuntime === undefined
}

/** The npm package names that may hold the native binary for this machine, best first. @internal */
export const platformPackages = (
  musl: boolean,
  host: Pick<Host, "platform" | "arch"> = { platform: process.platform, arch: process.arch }
): ReadonlyArray<string> => {
  const base = `@anthropic-ai/claude-code-${host.platform}-${host.arch}`
  if (host.platform !== "linux") return [base]
  return musl ? [`${base}-musl`, base] : [base, `${base}-musl`]
}

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

/** The wrapper package's own binary: `bin/claude.exe` on every system (its `package.json` `bin` points there). */
const WRAPPER_BINARY = ["bin", "claude.exe"] as const
const WRAPPER_PACKAGE = ["@anthropic-ai", "claude-code"] as const

/**
 * Where the bundled `@anthropic-ai/claude-code` dependency keeps its native binary: the platform packages (resolved
 * from here and from the wrapper package; `claude.exe` in `@anthropic-ai/claude-code-win32-<arch>` on Windows), then
 * the wrapper's own `bin/claude.exe` (its postinstall links or copies the platform binary over a placeholder there).
 * Whether the binary is there is checked by {@link resolveCli}, for every session.
 *
 * @internal
 */
export const lookUpBundled = (musl: boolean, host: Host = nodeHost()): Bundled => {
  const p = pathOf(host)
  const out: Array<BundledCandidate> = []
  const require = createRequire(import.meta.url)
  const resolvers: Array<NodeJS.Require> = [require]
  try {
    resolvers.push(createRequire(require.resolve("@anthropic-ai/claude-code/package.json")))
  } catch {
    // the wrapper package is not installed
  }
  for (const pkg of platformPackages(musl, host)) {
    for (const r of resolvers) {
      try {
        const manifest = r.resolve(`${pkg}/package.json`)
        const file = p.join(p.dirname(manifest), binaryName(host))
        if (!out.some((c) => c.file === file)) out.push({ file, packageJson: manifest })
      } catch {
        // not installed for this resolver
      }
    }
  }
  try {
    const manifest = require.resolve("@anthropic-ai/claude-code/package.json")
    out.push({ file: p.join(p.dirname(manifest), ...WRAPPER_BINARY), packageJson: manifest })
  } catch {
    // not installed
  }
  return out.length === 0
    ? {
      candidates: [{ file: `${platformPackages(musl, host)[0]}/${binaryName(host)} (npm package not installed)` }],
      installed: false
    }
    : { candidates: out, installed: true }
}

/**
 * The usual install places of a global `claude`: on Windows the native installer's `claude.exe` and npm's global
 * package (its binary, not the `.cmd` shim).
 *
 * @internal
 */
export const commonInstallDirs = (host: Host = nodeHost()): ReadonlyArray<string> => {
  const p = pathOf(host)
  const home = host.homedir
  if (host.platform === "win32") {
    return [
      p.join(home, ".local", "bin", "claude.exe"),
      p.join(home, "AppData", "Roaming", "npm", "node_modules", ...WRAPPER_PACKAGE, ...WRAPPER_BINARY),
      p.join(home, ".claude", "local", "claude.exe")
    ]
  }
  return [
    p.join(home, ".npm-global", "bin", "claude"),
    "/usr/local/bin/claude",
    p.join(home, ".local", "bin", "claude"),
    p.join(home, "node_modules", ".bin", "claude"),
    p.join(home, ".yarn", "bin", "claude"),
    p.join(home, ".claude", "local", "claude")
  ]
}

// The wrapper's bin/claude.exe is a tiny placeholder until its postinstall copies the native binary over it.
const isPlaceholder = (host: Host, file: string): boolean => {
  const size = host.fileSize(file)
  return size === undefined || (size < 1024 * 1024 && file.endsWith(pathOf(host).join(...WRAPPER_BINARY)))
}

/** A usable native binary: executable, and not the wrapper's placeholder. */
const isBinary = (host: Host, file: string) => host.isExecutableFile(file) && !isPlaceholder(host, file)

/** The program that runs a JavaScript CLI file, and the arguments it gets before the file. */
interface Runner {
  readonly runtime: string
  readonly executableArgs: ReadonlyArray<string>
}

const toResolved = (file: string, runner: Runner, packageJson?: string): ResolvedCli =>
  isScript(file)
    ? { command: runner.runtime, prefixArgs: [...runner.executableArgs, file], path: file }
    : packageJson === undefined
    ? { command: file, prefixArgs: [], path: file }
    : { command: file, prefixArgs: [], path: file, packageJson }

/** What Windows looks for after a bare command name when `PATHEXT` is not set. */
const DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"

/** Extensions Windows starts as programs; anything else on `PATH` (`.cmd`, `.bat`, `.ps1`, …) needs an interpreter. */
const isWindowsProgram = (file: string) => /\.(?:exe|com)$/i.test(file)

/**
 * The `claude.exe` an npm shim (`claude.cmd`, `claude.ps1`, `claude`) runs: npm puts the shims of a global install
 * beside `node_modules` (`%APPDATA%\npm`), those of a project in `node_modules\.bin`.
 */
const shimTargets = (host: Host, shim: string): ReadonlyArray<{ file: string; packageJson: string }> => {
  const p = pathOf(host)
  const dir = p.dirname(shim)
  const packages = [p.join(dir, "node_modules", ...WRAPPER_PACKAGE)]
  if (p.basename(dir).toLowerCase() === ".bin") packages.push(p.join(dir, "..", ...WRAPPER_PACKAGE))
  return packages.map((pkg) => ({ file: p.join(pkg, ...WRAPPER_BINARY), packageJson: p.join(pkg, "package.json") }))
}

/**
 * On Windows a file that is not a program (an npm `.cmd`/`.ps1` shim) is never run: it would go through `cmd.exe`
 * or PowerShell, which re-parse every argument. The `claude.exe` it stands for is run instead, or the lookup goes
 * on, telling why the shim was passed over.
 */
const throughShim = (
  host: Host,
  shim: string,
  runner: Runner
): { readonly found: ResolvedCli } | { readonly skipped: string } => {
  for (const target of shimTargets(host, shim)) {
    if (isBinary(host, target.file)) return { found: toResolved(target.file, runner, target.packageJson) }
  }
  return {
    skipped: `${shim} (a shim that needs a shell, not run; its claude.exe is not at ${
      shimTargets(host, shim).map((t) => t.file).join(" or ")
    }: set pathToClaudeCodeExecutable to claude.exe)`
  }
}

/** Why a path that was named cannot be run (it is not a usable file). */
const whyNot = (host: Host, file: string): "Missing" | "Directory" | "NotExecutable" | "NotAFile" => {
  switch (host.fileKind(file)) {
    case "missing":
      return "Missing"
    case "directory":
      return "Directory"
    case "other":
      return "NotAFile"
    case "file":
      return "NotExecutable"
  }
}

/** `PATH` split the host's way; on Windows entries may be quoted. */
const pathDirs = (host: Host, value: string | undefined): ReadonlyArray<string> =>
  (value ?? "").split(pathOf(host).delimiter)
    .map((d) => (host.platform === "win32" ? d.replace(/^"(.*)"$/, "$1") : d))
    .filter((d) => d.length > 0)

/** Where to look for the CLI, and how to run a JavaScript one. @internal */
export interface CliLookup {
  readonly explicit?: string | undefined
  /** `CLAUDE_CLI_PATH`, `PATH` and (on Windows) `PATHEXT`. */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly executableArgs?: ReadonlyArray<string> | undefined
  /** The runtime of a JavaScript CLI: this Node (`"node"`, the default), or `bun` / `deno` found on `PATH`. */
  readonly runtime?: JavaScriptRuntime | undefined
  /** Where the bundled binary may be (see {@link lookUpBundled}). */
  readonly bundled: ReadonlyArray<BundledCandidate>
  /** The common install places, searched last (see {@link commonInstallDirs}). */
  readonly commonDirs: ReadonlyArray<string>
  /** The machine; this one by default. */
  readonly host?: Host | undefined
}

/**
 * Finds the CLI: explicit path > `CLAUDE_CLI_PATH` > the bundled `@anthropic-ai/claude-code` binary > `PATH` >
 * common install directories. A `.js`/`.mjs`/`.cjs` path is run with the current Node executable, or with the
 * `bun` / `deno` on `PATH` that `runtime` names (`InvalidOptions` for `executable` when there is none); a native
 * binary runs by itself, whatever `runtime` says.
 *
 * On Windows, `claude.exe` anywhere on `PATH` wins over a shim earlier on it; then the other `PATHEXT` names
 * (`claude.cmd`, …, in `PATHEXT` order) are taken for the npm package whose `claude.exe` they run, which is what
 * is started (a shim itself never is).
 *
 * @internal
 */
export const resolveCliWithRuntime = (
  options: CliLookup
): Effect.Effect<ResolvedCli, CliNotFound | InvalidOptions> =>
  Effect.flatMap(resolveCli(options), (cli) => {
    const runtime = options.runtime ?? "node"
    if (runtime === "node" || !isScript(cli.path)) return Effect.succeed(cli)
    const host = options.host ?? nodeHost()
    const found = findRuntime(host, runtime, options.env["PATH"])
    return "found" in found
      ? Effect.succeed({ ...cli, command: found.found })
      : Effect.fail(
        new InvalidOptions({
          option: "executable",
          description: `${JSON.stringify(runtime)} is to run the JavaScript CLI ${cli.path}, but no ${runtime} ` +
            `executable is on PATH (searched: ${found.searched.join(", ") || "PATH is empty"}); install it, put it ` +
            `on PATH (env.PATH), or leave executable unset to run the CLI with this Node`
        })
      )
  })

/** The `bun` / `deno` program on `PATH` (`bun.exe`, … on Windows), or every place looked at. */
const findRuntime = (
  host: Host,
  runtime: Exclude<JavaScriptRuntime, "node">,
  pathValue: string | undefined
): { readonly found: string } | { readonly searched: ReadonlyArray<string> } => {
  const p = pathOf(host)
  const name = host.platform === "win32" ? `${runtime}.exe` : runtime
  const searched: Array<string> = []
  for (const dir of pathDirs(host, pathValue)) {
    const candidate = p.join(dir, name)
    searched.push(candidate)
    if (host.isExecutableFile(candidate)) return { found: candidate }
  }
  return { searched }
}

/**
 * The CLI's file and how to run it, a JavaScript one with this Node (`runtime` is not read): see
 * {@link resolveCliWithRuntime}.
 *
 * @internal
 */
export const resolveCli = (options: CliLookup): Effect.Effect<ResolvedCli, CliNotFound> =>
  Effect.suspend(() => {
    const host = options.host ?? nodeHost()
    const p = pathOf(host)
    const windows = host.platform === "win32"
    const runner: Runner = { runtime: host.execPath, executableArgs: options.executableArgs ?? [] }
    const named = (
      label: "pathToClaudeCodeExecutable" | "CLAUDE_CLI_PATH",
      value: string
    ): Effect.Effect<ResolvedCli, CliNotFound> => {
      const file = p.resolve(value)
      if (windows && !isScript(file) && !isWindowsProgram(file)) {
        const through = throughShim(host, file, runner)
        return "found" in through
          ? Effect.succeed(through.found)
          : Effect.fail(new CliNotFound({ searched: [`${label}: ${through.skipped}`], reason: "NotFound" }))
      }
      const usable = isScript(file) ? host.isReadableFile(file) : host.isExecutableFile(file)
      return usable
        ? Effect.succeed(toResolved(file, runner))
        : Effect.fail(
          new CliNotFound({
            searched: [`${label}: ${file}`],
            reason: whyNot(host, file),
            named: { source: label, path: file }
          })
        )
    }
    if (options.explicit !== undefined) return named("pathToClaudeCodeExecutable", options.explicit)
    const fromEnv = options.env["CLAUDE_CLI_PATH"]
    if (fromEnv !== undefined && fromEnv.length > 0) return named("CLAUDE_CLI_PATH", fromEnv)

    const searched: Array<string> = []
    for (const candidate of options.bundled) {
      searched.push(`bundled: ${candidate.file}`)
      if (isBinary(host, candidate.file)) {
        return Effect.succeed(toResolved(candidate.file, runner, candidate.packageJson))
      }
    }
    const dirs = pathDirs(host, options.env["PATH"])
    for (const dir of dirs) {
      const candidate = p.join(dir, binaryName(host))
      searched.push(`PATH: ${candidate}`)
      if (host.isExecutableFile(candidate)) return Effect.succeed(toResolved(candidate, runner))
    }
    if (windows) {
      const extensions = (options.env["PATHEXT"] ?? DEFAULT_PATHEXT).split(";")
        .map((e) => e.trim().toLowerCase())
        .filter((e) => e.startsWith(".") && e !== ".exe")
      for (const dir of dirs) {
        for (const extension of extensions) {
          const shim = p.join(dir, `claude${extension}`)
          if (!host.isReadableFile(shim)) continue
          if (isWindowsProgram(shim) || isScript(shim)) return Effect.succeed(toResolved(shim, runner))
          const through = throughShim(host, shim, runner)
          if ("found" in through) return Effect.succeed(through.found)
          searched.push(`PATH: ${through.skipped}`)
        }
      }
    }
    for (const candidate of options.commonDirs) {
      searched.push(candidate)
      if (isBinary(host, candidate)) return Effect.succeed(toResolved(candidate, runner))
    }
    return Effect.fail(new CliNotFound({ searched, reason: "NotFound" }))
  })

/**
 * The longest command line Windows starts a program with: `CreateProcess` takes 32,767 UTF-16 units, its
 * terminating null included. (A `.cmd` shim would go through `cmd.exe`, whose limit is 8,191; shims are never run,
 * see {@link resolveCli}.)
 *
 * @internal
 */
export const WINDOWS_COMMAND_LINE_MAX = 32_766

/** One argument as Node (libuv) quotes it into a Windows command line, for the C runtime to split again. @internal */
export const quoteWindowsArg = (arg: string): string => {
  if (arg.length === 0) return "\"\""
  if (!/[ \t"]/.test(arg)) return arg
  if (!/["\\]/.test(arg)) return `"${arg}"`
  // backslashes are literal unless they precede a quote: those are doubled, and the quote escaped
  let out = "\""
  let backslashes = 0
  for (const c of arg) {
    if (c === "\\") {
      backslashes++
      continue
    }
    out += c === "\"" ? "\\".repeat(backslashes * 2 + 1) + c : "\\".repeat(backslashes) + c
    backslashes = 0
  }
  return out + "\\".repeat(backslashes * 2) + "\""
}

/** The flag an argument is the value of (`--flag value`, `--flag=value`), or the argument itself. */
const argumentName = (args: ReadonlyArray<string>, i: number): string => {
  const arg = args[i]!
  if (arg.startsWith("--")) return arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg
  const previous = args[i - 1]
  return previous !== undefined && previous.startsWith("--") && !previous.includes("=") ? previous : `argument ${i}`
}

/**
 * On Windows, `InvalidOptions` when the command line `command` and `args` make is longer than Windows starts a
 * program with ({@link WINDOWS_COMMAND_LINE_MAX}), naming the longest argument (by its flag) and what to do; on
 * other systems, and when it fits, `undefined`. Checked before anything is spawned.
 *
 * @internal
 */
export const commandLineTooLong = (
  platform: NodeJS.Platform,
  command: string,
  args: ReadonlyArray<string>
): InvalidOptions | undefined => {
  if (platform !== "win32") return undefined
  const quoted = args.map(quoteWindowsArg)
  const length = [quoteWindowsArg(command), ...quoted].reduce((n, a) => n + a.length + 1, -1)
  if (length <= WINDOWS_COMMAND_LINE_MAX) return undefined
  let longest = 0
  for (let i = 1; i < quoted.length; i++) if (quoted[i]!.length > quoted[longest]!.length) longest = i
  const name = argumentName(args, longest)
  return new InvalidOptions({
    option: name,
    description: `the command line would be ${length} characters, over the ${WINDOWS_COMMAND_LINE_MAX} Windows ` +
      `starts a program with; the longest argument is ${name} (${quoted[longest]!.length} characters). Shorten ` +
      "it, or pass it in a file: the CLI reads --system-prompt-file, --append-system-prompt-file, --agents, " +
      "--settings and --mcp-config from files (inline JSON settings and MCP configs already go to one)"
  })
}
