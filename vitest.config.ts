import * as fs from "node:fs"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

const src = (file: string) => path.join(import.meta.dirname, "src", file)

/** Where `test/bundle.setup.ts` writes the bundled Promise entry for the "bundle" project. */
export const bundleFile = path.join(import.meta.dirname, ".tmp", "promise-bundle", "promise.js")

const manifest: { readonly exports: Readonly<Record<string, unknown>> } = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, "package.json"), "utf8")
)

/**
 * The package's entries as the tests import them: every module entry of package.json's `exports` at the source of
 * its `./dist/x.js`, `src/x.ts` (an entry added there needs nothing here), with the Promise entry at `promise`.
 */
export const entries = (promise: string) =>
  Object.entries(manifest.exports).flatMap(([key, target]) => {
    const module = /"\.\/dist\/([^"]+)\.js"/.exec(JSON.stringify(target))?.[1]
    if (module === undefined) return [] // data files: package.json, the Bash grammar
    const name = key === "." ? "effect-claude-agent" : `effect-claude-agent/${key.slice(2)}`
    const file = key === "./promise" ? promise : src(`${module}.ts`)
    return [{ find: new RegExp(`^${name.replaceAll("/", "\\/")}$`), replacement: file }]
  })

// The tiers, by file name (a new test file lands in its tier by its name):
//   *.cli.test.ts      the real CLI against the scripted model server       project "cli"
//   *.process.test.ts  a fake CLI or a child host through real processes    project "process"
//   any other          in memory (TestClock, ScriptedCli)                   project "unit"
// The Promise API's tests (promise*.test.ts, *.promise*.test.ts) and *.bundle.test.ts run against the bundle that
// `npm run build` ships as dist/promise.js (project "bundle"); the in-memory ones also against the source. A real-CLI
// Promise test runs against the bundle only: the source under it is the Effect API, which the cli tier runs.
const CLI = "test/**/*.cli.test.ts"
const PROCESS = "test/**/*.process.test.ts"
const BUNDLE_ONLY = "test/**/*.bundle.test.ts"
const PROMISE = ["test/**/promise*.test.ts", "test/**/*.promise*.test.ts"]

const shared = {
  setupFiles: ["./vitest.setup.ts"],
  testTimeout: 60_000,
  hookTimeout: 60_000
}

// Every file runs in a fresh process, in every tier. Sharing one process between files needs the root's
// `poolOptions.forks.isolate: false` (a project's own `isolate` does not reach vitest 3.2's one forks pool), which
// also runs the tiers one after another; it then needs `minWorkers` equal to `maxWorkers` (without it, seen: workers
// above tinypool's minimum, one less than the cores, ended mid-file, "Terminating worker thread", files never
// reported, orphaned workers left spinning). Measured whole (2 cores, loaded): 9% less CPU, longer wall time; so isolation stays.

export default defineConfig({
  test: {
    pool: "forks",
    // the real-CLI and process tiers mostly wait (for processes, sockets, timers): more files at once than cores
    maxWorkers: 3,
    projects: [
      {
        resolve: { alias: entries(src("promise.ts")) },
        test: {
          ...shared,
          name: "unit",
          include: ["test/**/*.test.ts"],
          // the browser test has a step of its own (npm run test:browser, vitest.browser.config.ts)
          exclude: [CLI, PROCESS, BUNDLE_ONLY, "test/**/*.browser.test.ts"]
        }
      },
      {
        resolve: { alias: entries(src("promise.ts")) },
        test: { ...shared, name: "process", include: [PROCESS] }
      },
      {
        resolve: { alias: entries(src("promise.ts")) },
        test: {
          ...shared,
          name: "cli",
          include: [CLI],
          exclude: PROMISE.map((glob) => glob.replace(".test.ts", ".cli.test.ts"))
        }
      },
      {
        // the file's own `effect` and the testing entry are a second copy beside the bundle's
        resolve: { alias: entries(bundleFile) },
        test: { ...shared, name: "bundle", include: [...PROMISE, BUNDLE_ONLY], globalSetup: ["./test/bundle.setup.ts"] }
      }
    ]
  }
})
