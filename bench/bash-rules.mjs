// `npm run bench:bash`: the cost of one Bash permission decision (`Permissions.rules` with Bash content rules and
// deny rules for a secrets tree) on a corpus of everyday commands: the first decision (the grammar's load), then the
// median and p99 of a decision's wall time and its CPU time, a 30 kB command and a 4 MB one. Each measurement runs
// in a fresh process (bench/bash-rules-worker.ts, by tsx, on the sources); the contenders take turns.
//
//   node bench/bash-rules.mjs [--baseline <git ref>] [--runs N] [--iterations N]
//
// --baseline extracts <git ref>'s sources (`git archive`) into a temporary directory beside this checkout's
// node_modules and measures them the same way.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const here = path.dirname(new URL(import.meta.url).pathname)
const repo = path.join(here, "..")
const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const runs = Number(option("runs") ?? "5")
const iterations = option("iterations") ?? "200"
const baselineRef = option("baseline")
const log = (s) => process.stderr.write(`${s}\n`)

let baselineRoot
const cleanup = () => {
  if (baselineRoot !== undefined) fs.rmSync(baselineRoot, { recursive: true, force: true })
  baselineRoot = undefined
}
process.on("exit", cleanup)

const contenders = [["ours", repo]]
if (baselineRef !== undefined) {
  baselineRoot = fs.mkdtempSync(path.join(os.tmpdir(), "eca-bench-bash-"))
  const archive = execFileSync("git", ["-C", repo, "archive", baselineRef, "src", "assets", "package.json"], {
    maxBuffer: 1 << 30
  })
  execFileSync("tar", ["-x", "-C", baselineRoot], { input: archive })
  fs.symlinkSync(path.join(repo, "node_modules"), path.join(baselineRoot, "node_modules"))
  contenders.push([`baseline ${baselineRef}`, baselineRoot])
}

const tsx = path.join(repo, "node_modules", ".bin", "tsx")
const results = new Map(contenders.map(([name]) => [name, []]))
for (let run = 0; run < runs; run++) {
  for (const [name, root] of contenders) {
    const out = execFileSync(tsx, [
      "--tsconfig",
      path.join(repo, "tsconfig.json"),
      path.join(here, "bash-rules-worker.ts"),
      root,
      iterations
    ], {
      cwd: root,
      encoding: "utf8"
    })
    const result = JSON.parse(out.trim().split("\n").at(-1))
    results.get(name).push(result)
    log(`${name} run ${run + 1}/${runs}: ${JSON.stringify(result)}`)
  }
}

const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const range = (xs) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`
const rows = [
  ["first decision (grammar load), ms CPU", (r) => r.cold.cpuMs],
  ["decision, median µs (wall)", (r) => r.medianUs],
  ["decision, p99 µs (wall)", (r) => r.p99Us],
  ["decision, µs CPU (mean)", (r) => r.cpuUsPerDecision],
  ["30 kB command, ms (wall)", (r) => r.long30kMedianMs],
  ["4 MB command, ms (wall)", (r) => r.huge4MbMs]
]
const lines = [
  `| figure (median of ${runs} runs, range) | ${contenders.map(([name]) => name).join(" | ")} |`,
  `|---|${contenders.map(() => "---").join("|")}|`,
  ...rows.map(([label, get]) =>
    `| ${label} | ${
      contenders.map(([name]) => {
        const xs = results.get(name).map(get)
        return `${med(xs).toFixed(1)} (${range(xs)})`
      }).join(" | ")
    } |`
  )
]
process.stdout.write(lines.join("\n") + "\n")
