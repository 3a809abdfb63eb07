// The CLI lookup and the command line on Windows, as pure logic on any system: a made-up Windows host (its files,
// PATH and PATHEXT) and `path.win32` paths.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { AgentError } from "effect-claude-agent"
import {
  commandLineTooLong,
  commonInstallDirs,
  type Host,
  platformPackages,
  quoteWindowsArg,
  resolveCli,
  WINDOWS_COMMAND_LINE_MAX
} from "../src/internal/transport/cliPath.js"

const BIG = 200 * 1024 * 1024
const join = path.win32.join

/** A Windows machine holding `files` (path → size); names compare without case, as on NTFS. */
const windows = (files: Record<string, number>): Host => {
  const find = (file: string) => Object.keys(files).find((k) => k.toLowerCase() === file.toLowerCase())
  return {
    platform: "win32",
    arch: "x64",
    homedir: "C:\\Users\\u",
    execPath: "C:\\Program Files\\nodejs\\node.exe",
    isExecutableFile: (file) => find(file) !== undefined,
    isReadableFile: (file) => find(file) !== undefined,
    fileSize: (file) => {
      const key = find(file)
      return key === undefined ? undefined : files[key]
    },
    fileKind: (file) => (find(file) === undefined ? "missing" : "file")
  }
}

const npmGlobal = "C:\\Users\\u\\AppData\\Roaming\\npm"
const npmGlobalExe = join(npmGlobal, "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
const project = "C:\\work\\app\\node_modules"
const projectExe = join(project, "@anthropic-ai", "claude-code", "bin", "claude.exe")
const native = "C:\\Users\\u\\.local\\bin"

const lookup = (host: Host, env: Record<string, string>, explicit?: string) =>
  resolveCli({ explicit, env, bundled: [], commonDirs: [], host })

describe("Windows CLI lookup", () => {
  it.effect("claude.exe anywhere on PATH wins over an npm shim earlier on it", () =>
    Effect.gen(function*() {
      const host = windows({
        [join(npmGlobal, "claude.cmd")]: 300,
        [npmGlobalExe]: BIG,
        [join(native, "claude.exe")]: BIG
      })
      const cli = yield* lookup(host, { PATH: [npmGlobal, native].join(";") })
      expect(cli).toEqual({ command: join(native, "claude.exe"), prefixArgs: [], path: join(native, "claude.exe") })
    }))

  it.effect("an npm shim is never run: the claude.exe of its package is (global install, and a project's .bin)", () =>
    Effect.gen(function*() {
      const global = windows({ [join(npmGlobal, "claude.cmd")]: 300, [npmGlobalExe]: BIG })
      expect(yield* lookup(global, { PATH: `"${npmGlobal}"` })).toEqual({
        command: npmGlobalExe,
        prefixArgs: [],
        path: npmGlobalExe,
        packageJson: join(npmGlobal, "node_modules", "@anthropic-ai", "claude-code", "package.json")
      })
      const local = windows({ [join(project, ".bin", "claude.CMD")]: 300, [projectExe]: BIG })
      expect((yield* lookup(local, { PATH: join(project, ".bin") })).command).toBe(projectExe)
      // named explicitly, the shim (or npm's extensionless sh shim) is seen through the same way
      expect((yield* lookup(global, {}, join(npmGlobal, "claude.cmd"))).command).toBe(npmGlobalExe)
      expect((yield* lookup(local, {}, join(project, ".bin", "claude"))).command).toBe(projectExe)
    }))

  it.effect("shims are taken in PATHEXT order; one whose claude.exe is missing (or the placeholder) is listed, not run", () =>
    Effect.gen(function*() {
      const host = windows({
        [join(npmGlobal, "claude.cmd")]: 300,
        [join(npmGlobal, "claude.ps1")]: 300,
        [npmGlobalExe]: 500
      })
      const missing = (pathext: string) =>
        Effect.map(Effect.flip(lookup(host, { PATH: npmGlobal, PATHEXT: pathext })), (e) => e.searched)
      const cmdFirst = yield* missing(".COM;.EXE;.CMD;.PS1")
      expect(cmdFirst[0]).toBe(`PATH: ${join(npmGlobal, "claude.exe")}`)
      expect(cmdFirst.slice(1).map((s) => s.slice(0, s.indexOf(" ("))))
        .toEqual([`PATH: ${join(npmGlobal, "claude.cmd")}`, `PATH: ${join(npmGlobal, "claude.ps1")}`])
      expect(cmdFirst[1]).toContain(npmGlobalExe)
      expect(cmdFirst[1]).toContain("set pathToClaudeCodeExecutable to claude.exe")
      const ps1First = yield* missing(".PS1;.CMD")
      expect(ps1First[1]).toMatch(/claude\.ps1 /)
      // the default PATHEXT has no .PS1
      expect((yield* missing("")).length).toBe(1)
      const unset = yield* Effect.flip(lookup(host, { PATH: npmGlobal }))
      expect(unset.searched.map((s) => s.slice(0, s.indexOf(" ("))).slice(1)).toEqual([
        `PATH: ${join(npmGlobal, "claude.cmd")}`
      ])
      // a shim named explicitly without its claude.exe: CliNotFound says so
      const explicit = yield* Effect.flip(lookup(host, {}, join(npmGlobal, "claude.cmd")))
      expect(explicit.searched[0]).toMatch(/^pathToClaudeCodeExecutable: .*claude\.cmd \(a shim that needs a shell/)
    }))

  it.effect("a .com program on PATH runs as is; a .js CLI runs with Node", () =>
    Effect.gen(function*() {
      const host = windows({ [join(native, "claude.com")]: BIG, "C:\\cli\\cli.js": 10 })
      expect((yield* lookup(host, { PATH: native })).command).toBe(join(native, "claude.com"))
      expect(yield* lookup(host, {}, "C:\\cli\\cli.js")).toEqual({
        command: "C:\\Program Files\\nodejs\\node.exe",
        prefixArgs: ["C:\\cli\\cli.js"],
        path: "C:\\cli\\cli.js"
      })
    }))

  it.effect("the bundled package: win32 platform package's claude.exe, else the wrapper's bin\\claude.exe once installed", () =>
    Effect.gen(function*() {
      expect(platformPackages(false, { platform: "win32", arch: "x64" })).toEqual([
        "@anthropic-ai/claude-code-win32-x64"
      ])
      expect(platformPackages(false, { platform: "win32", arch: "arm64" })).toEqual([
        "@anthropic-ai/claude-code-win32-arm64"
      ])
      const platformExe = join(project, "@anthropic-ai", "claude-code-win32-x64", "claude.exe")
      const bundled = [{ file: platformExe }, { file: projectExe }]
      const both = windows({ [platformExe]: BIG, [projectExe]: BIG })
      expect((yield* resolveCli({ env: {}, bundled, commonDirs: [], host: both })).command).toBe(platformExe)
      const wrapperOnly = windows({ [projectExe]: BIG })
      expect((yield* resolveCli({ env: {}, bundled, commonDirs: [], host: wrapperOnly })).command).toBe(projectExe)
      // before its postinstall, the wrapper's claude.exe is a placeholder: not found
      const placeholder = windows({ [projectExe]: 500 })
      yield* Effect.flip(resolveCli({ env: {}, bundled, commonDirs: [], host: placeholder }))
    }))

  it.effect("common install places: the native installer's claude.exe and npm's global package, never a shim", () =>
    Effect.gen(function*() {
      const host = windows({ [npmGlobalExe]: BIG })
      const dirs = commonInstallDirs(host)
      expect(dirs).toContain(join(native, "claude.exe"))
      expect(dirs.every((d) => d.endsWith(".exe"))).toBe(true)
      expect((yield* resolveCli({ env: {}, bundled: [], commonDirs: dirs, host })).command).toBe(npmGlobalExe)
    }))
})

describe("Windows command line", () => {
  it("arguments are counted as Node quotes them", () => {
    expect(quoteWindowsArg("")).toBe("\"\"")
    expect(quoteWindowsArg("plain")).toBe("plain")
    expect(quoteWindowsArg("C:\\a b\\")).toBe("\"C:\\a b\\\\\"")
    expect(quoteWindowsArg("say \"hi\"")).toBe("\"say \\\"hi\\\"\"")
    expect(quoteWindowsArg("a\\\"b")).toBe("\"a\\\\\\\"b\"")
    expect(quoteWindowsArg("a\\b")).toBe("a\\b")
  })

  it("over 32,767 characters: InvalidOptions naming the longest argument's flag and what to do; none elsewhere", () => {
    const command = "C:\\bin\\claude.exe"
    const fixed = ["--output-format", "stream-json", "--append-system-prompt"]
    const length = (value: string) => [command, ...fixed, value].join(" ").length
    const fits = "x".repeat(WINDOWS_COMMAND_LINE_MAX - length(""))
    expect(length(fits)).toBe(WINDOWS_COMMAND_LINE_MAX)
    expect(commandLineTooLong("win32", command, [...fixed, fits])).toBeUndefined()
    const over = commandLineTooLong("win32", command, [...fixed, `${fits}y`])
    expect(over).toBeInstanceOf(AgentError.InvalidOptions)
    expect(over?.option).toBe("--append-system-prompt")
    expect(over?.description).toContain(`${WINDOWS_COMMAND_LINE_MAX + 1} characters`)
    expect(over?.description).toContain("--append-system-prompt-file")
    // quoting counts: spaces add two quotes
    const spaced = `${"x ".repeat((fits.length - 2) / 2)}`
    expect(commandLineTooLong("win32", command, [...fixed, spaced])).toBeUndefined()
    expect(commandLineTooLong("win32", command, [...fixed, `${spaced}  `])?.option).toBe("--append-system-prompt")
    // `--flag=value` is named by its flag
    expect(commandLineTooLong("win32", command, [`--settings=${fits}${fits}`, "--x"])?.option).toBe("--settings")
    // other systems: no Windows limit
    expect(commandLineTooLong("linux", command, [...fixed, `${fits}${fits}`])).toBeUndefined()
  })
})
