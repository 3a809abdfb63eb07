// An error the bundled Promise entry (dist/promise.js) lets escape, as a program that does not catch it prints it: Node
// prints the source line it was made on and the stack. The bundle keeps its line breaks, so that line is one line of
// code and each frame names a function at a line; with --enable-source-maps the frames are the TypeScript sources.
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import { pathToFileURL } from "node:url"
import { bundleFile } from "../vitest.config.js"

/** What `node` prints (stderr) for an uncaught CliNotFound from the bundle. */
const uncaught = (...nodeArgs: ReadonlyArray<string>) => {
  const program = `import { query } from ${JSON.stringify(pathToFileURL(bundleFile).href)}
await query({ prompt: "hi", options: { pathToClaudeCodeExecutable: "/nope/claude" } }).next()`
  const run = spawnSync(process.execPath, [...nodeArgs, "--input-type=module", "-e", program], {
    encoding: "utf8",
    timeout: 30_000
  })
  return { status: run.status, stderr: run.stderr }
}

describe("an uncaught error from the bundle", () => {
  it("prints a short report: the source line and frames that name functions at lines of dist/promise.js", () => {
    const { status, stderr } = uncaught()
    expect(status).toBe(1)
    // it printed ~180 KB when the bundle's whitespace was minified (its lines were up to 180,000 characters long)
    expect(stderr.length).toBeLessThan(4_000)
    for (const line of stderr.split("\n")) expect(line.length).toBeLessThan(300)
    const lines = stderr.split("\n")
    expect(lines[0]).toMatch(/\/promise\.js:\d+$/)
    // the line the error was made on: one line of code (it was the whole of a 180,000-character line)
    expect(lines[1]).toContain("new CliNotFound(")
    expect(lines[1]!.length).toBeLessThan(200)
    const frames = lines.filter((line) => /^\s+at /.test(line))
    expect(frames[0]).toMatch(/^ {4}at [A-Za-z_$][\w$.]* \(file:\/\/\S+\/promise\.js:\d+:\d+\)$/)
    expect(stderr).toContain("CliNotFound: Claude Code CLI not found: pathToClaudeCodeExecutable is /nope/claude")
  })

  it("with --enable-source-maps the frames are the TypeScript sources (the map ships beside the bundle)", () => {
    const { stderr } = uncaught("--enable-source-maps")
    const frames = stderr.split("\n").filter((line) => /^\s+at /.test(line))
    expect(frames[0]).toMatch(/^ {4}at named \(\S+\/src\/internal\/transport\/cliPath\.ts:\d+:\d+\)$/)
  })
})
