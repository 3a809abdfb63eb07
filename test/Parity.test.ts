// The parity check (scripts/parity.mjs, `npm run parity`): the repo's table matches the official sdk.d.ts and the
// code, and the check fails when the official surface grows, when the table names what the official surface dropped,
// and when the table says what the code contradicts.
import { expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { check, officialSurface, type OurSurface, ourSurface, readTable } from "../scripts/parity.mjs"

const root = path.join(import.meta.dirname, "..")
const script = path.join(root, "scripts", "parity.mjs")

/** A small official surface: one of each kind. */
const fakeDts = (extraOption = "") => `
export declare function query(_params: { prompt: string; options?: Options }): Query;
export declare const HOOK_EVENTS: readonly ['PreToolUse'];
export declare type Options = {
    /** The model. */
    model?: string;${extraOption}
};
export declare interface Query extends AsyncGenerator<SDKMessage, void> {
    interrupt(): Promise<void>;
}
declare type SDKResultSuccess = { type: 'result'; subtype: 'success' };
declare type SDKResultError = { type: 'result'; subtype: 'error_max_turns' | 'error_during_execution' };
export declare type SDKResultMessage = SDKResultSuccess | SDKResultError;
export declare type SDKMessage = SDKResultMessage;
declare type SDKControlInterruptRequest = { subtype: 'interrupt' };
declare type SDKControlRequestInner = SDKControlInterruptRequest;
export { }
`

const fakeTable = (extraRows = "") => `
# a table

| kind | name | status | notes |
| --- | --- | --- | --- |
| function | \`query\` | supported | |
| option | \`model\` | supported | |
| query | \`interrupt\` | supported | |
| message | \`SDKResultMessage\` | supported | |
| hook | \`PreToolUse\` | supported | |
| control | \`interrupt\` | supported | |
${extraRows}`

/** This SDK as the fake surface's rows need it (the real one is read once, by the last test). */
const ours: OurSurface = {
  promiseExports: new Set(["query"]),
  promiseOptions: new Set(["model"]),
  promiseQuery: new Set(["interrupt"]),
  rejectedOptions: new Set(),
  hookEvents: new Set(["PreToolUse"]),
  messageLiterals: new Set(["result", "success", "error_max_turns", "error_during_execution"]),
  srcLiterals: new Set(["interrupt"])
}

const files = (dts: string, table: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parity-"))
  fs.writeFileSync(path.join(dir, "sdk.d.ts"), dts)
  fs.writeFileSync(path.join(dir, "PARITY.md"), table)
  return { dts: path.join(dir, "sdk.d.ts"), table: path.join(dir, "PARITY.md"), dir }
}

const problemsOf = (dts: string, table: string, surface: OurSurface = ours) => {
  const f = files(dts, table)
  try {
    return check({ official: officialSurface(f.dts), ours: surface, table: readTable(f.table) }).problems
  } finally {
    fs.rmSync(f.dir, { recursive: true, force: true })
  }
}

it("reads each kind of item from a declaration file (a union message type: every member's type and subtype)", () => {
  const f = files(fakeDts(), fakeTable())
  const official = officialSurface(f.dts)
  fs.rmSync(f.dir, { recursive: true, force: true })
  expect(official.function).toEqual(["query"])
  expect(official.option).toEqual(["model"])
  expect(official.query).toEqual(["interrupt"])
  expect(official.hook).toEqual(["PreToolUse"])
  expect(official.control).toEqual(["interrupt"])
  expect(official.messageShapes.get("SDKResultMessage")).toEqual({
    name: "SDKResultMessage",
    type: ["result"],
    subtype: ["success", "error_max_turns", "error_during_execution"]
  })
  expect(problemsOf(fakeDts(), fakeTable())).toEqual([])
})

it("fails when the official surface has an option the table does not mention", () => {
  expect(problemsOf(fakeDts("\n    brandNewOption?: boolean;"), fakeTable())).toEqual([
    "option brandNewOption: the official SDK has it, the table does not mention it"
  ])
})

it("fails when the table names what the official surface no longer has, or a row has no reason", () => {
  const problems = problemsOf(
    fakeDts(),
    fakeTable("| option | `oldOption` | supported | |\n| option | `oldOption` | unsupported | |\n")
  )
  expect(problems).toEqual([
    expect.stringMatching(/option oldOption: unsupported needs a reason$/),
    expect.stringMatching(/option oldOption is listed twice$/),
    expect.stringMatching(/option oldOption: the official SDK no longer has it/)
  ])
})

it("fails when the table contradicts the code", () => {
  const lying: OurSurface = {
    ...ours,
    promiseExports: new Set(),
    rejectedOptions: new Set(["model", "spawnIt"]),
    hookEvents: new Set(),
    messageLiterals: new Set(["result", "success"]),
    srcLiterals: new Set()
  }
  expect(problemsOf(fakeDts(), fakeTable(), lying).map((p) => p.replace(/^PARITY\.md:\d+: /, ""))).toEqual([
    "function query: called supported, but effect-claude-agent/promise does not export it",
    "option model: called supported, but the Promise API rejects it (unsupportedOptions in src/internal/promise/)",
    "message SDKResultMessage: called supported, but src/Message.ts never names \"error_max_turns\", \"error_during_execution\"",
    "hook PreToolUse: called supported, but the Hooks module's HOOK_EVENTS does not list it",
    "control interrupt: called supported, but no source file under src/ names this subtype",
    "option spawnIt: the Promise API rejects it, the table does not say why"
  ])
})

it("fails when the table calls unsupported what the code has (an option, a method, a function)", () => {
  const table = fakeTable()
    .replace("| function | `query` | supported | |", "| function | `query` | unsupported | not yet |")
    .replace("| option | `model` | supported | |", "| option | `model` | unsupported | not yet |")
    .replace("| query | `interrupt` | supported | |", "| query | `interrupt` | not-applicable | no |")
  expect(problemsOf(fakeDts(), table).map((p) => p.replace(/^PARITY\.md:\d+: /, ""))).toEqual([
    "function query: called unsupported, but effect-claude-agent/promise exports it",
    "option model: called unsupported, but the Promise API's Options has it and does not reject it",
    "query interrupt: called not-applicable, but the Promise API's Query has it"
  ])
})

const official = path.join(root, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.d.ts")
const parityTable = path.join(root, "docs", "PARITY.md")

it("the repo's table matches the official SDK and the code; every option the Promise API rejects is official", () => {
  const surface = ourSurface()
  const officialNow = officialSurface(official)
  expect(check({ official: officialNow, ours: surface, table: readTable(parityTable) }).problems).toEqual([])
  expect([...surface.rejectedOptions].filter((o) => !officialNow.option.includes(o))).toEqual([])
  expect(surface.promiseOptions.has("model")).toBe(true)
})

it("npm run parity: a new official option fails it (exit code 1, the option named)", async () => {
  const run = (args: ReadonlyArray<string>) =>
    promisify(execFile)(process.execPath, [script, ...args], { cwd: root }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error
    )
  // the real table against the real sdk.d.ts with one more option
  const grown = fs.readFileSync(official, "utf8").replace(
    "export declare type Options = {",
    "export declare type Options = {\n    brandNewOption?: boolean;"
  )
  const f = files(grown, fs.readFileSync(parityTable, "utf8"))
  try {
    const failed = await run(["--dts", f.dts, "--table", f.table])
    expect(failed.code).toBe(1)
    expect(failed.stdout).toContain("✘ brandNewOption: not in the table")
    expect(failed.stderr).toContain("1 problem(s):")
    expect(failed.stderr).toContain("option brandNewOption: the official SDK has it, the table does not mention it")
  } finally {
    fs.rmSync(f.dir, { recursive: true, force: true })
  }
})
