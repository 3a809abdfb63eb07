// One contender's fixed workload, run under callgrind by bench/icount.mjs: `node bench/icount-worker.mjs <sdk>`
// (ours: this checkout's `dist/promise.js`; official: `@anthropic-ai/claude-agent-sdk`). The workload's parts are
// marked by calls to `process.constrainedMemory()`: callgrind dumps (and zeroes) its counters on entering Node's
// `GetConstrainedMemory`, which neither SDK calls, so each dump holds exactly one part (and, after each, one dump holds
// the full collection made between parts):
//   1. start-up and the SDK's import (not compared: the import has its own bench row)
//   2. the first query of the process, on the fake CLI (bench/fake-cli.mjs, mode "short")
//   3. `queries` more such queries
//   4. one query answering `requests` `can_use_tool` requests (bench/fake-cli.mjs, mode "rtt")
//   5. one turn of the real, pinned CLI against the scripted model server (its environment in ICOUNT_CLI_ENV)
// Parameters come as JSON in ICOUNT_PARAMS: { queries, requests, cli: boolean }. Prints nothing on success.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"

const here = path.dirname(new URL(import.meta.url).pathname)
const FAKE = path.join(here, "fake-cli.mjs")
const sdkName = process.argv[2]
const params = JSON.parse(process.env.ICOUNT_PARAMS ?? "{}")
// Between two parts, a full collection in a dump of its own (not counted): each part starts from a collected heap, so
// a major collection owed to what came before (the import, an earlier part) never falls in it, and its count depends
// on its own work only. Needs `--expose-gc` (bench/icount-ceilings.json's nodeFlags).
const part = () => {
  process.constrainedMemory()
  globalThis.gc()
  process.constrainedMemory()
}

// ICOUNT_OURS: another build of ours to count (bench/icount.mjs --ours <file>), else this checkout's dist/promise.js
const { query } = sdkName === "ours"
  ? await import(process.env.ICOUNT_OURS ? pathToFileURL(process.env.ICOUNT_OURS).href : "effect-claude-agent/promise")
  : await import("@anthropic-ai/claude-agent-sdk")
part()

// Options of ours only (the official SDK has neither): no `--version` probe (the official SDK runs none; its wall cost
// is P3's row in bench/run.mjs, and on a starved machine its 10 s timeout can fire before the answer is read), and
// the CLI's own exit waited for up to a minute after its input ends (with the default 250 ms, a machine too busy to
// run the CLI's exit in time takes ours through the SIGTERM path, whose /proc reads would be counted or not by load)
const own = sdkName === "ours" ? { cliVersions: "*", closeGraceMillis: 60_000 } : {}

const drain = async (q) => {
  let result
  for await (const m of q) if (m.type === "result") result = m
  if (result?.subtype !== "success") throw new Error(`${sdkName}: no successful result: ${JSON.stringify(result)}`)
  return result
}

process.env.BENCH_FAKE = JSON.stringify({ mode: "short" })
const short = () =>
  drain(query({ prompt: "hi", options: { pathToClaudeCodeExecutable: FAKE, includePartialMessages: true, ...own } }))
await short()
part()
for (let i = 0; i < (params.queries ?? 10); i++) await short()
part()

process.env.BENCH_FAKE = JSON.stringify({ mode: "rtt", requests: params.requests ?? 50 })
let asked = 0
await drain(query({
  prompt: "go",
  options: {
    pathToClaudeCodeExecutable: FAKE,
    ...own,
    canUseTool: async (_name, input) => {
      asked++
      return { behavior: "allow", updatedInput: input }
    }
  }
}))
if (asked !== (params.requests ?? 50)) throw new Error(`${sdkName}: ${asked} permission requests answered`)
part()

if (params.cli === true) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "bench-icount-"))
  try {
    const claude = path.join(
      path.dirname(createRequire(import.meta.url).resolve("@anthropic-ai/claude-code/package.json")),
      "bin",
      "claude.exe"
    )
    const result = await drain(query({
      prompt: "SAY hello from the bench",
      options: {
        pathToClaudeCodeExecutable: claude,
        cwd,
        env: { ...process.env, ...JSON.parse(process.env.ICOUNT_CLI_ENV ?? "{}") },
        maxTurns: 1,
        ...own
      }
    }))
    if (result.result !== "hello from the bench") throw new Error(`${sdkName}: unexpected result ${result.result}`)
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true })
  }
}
part()
// exit at once, as a CLI tool would: what follows is Node's teardown, in the last dump
process.exit(0)
