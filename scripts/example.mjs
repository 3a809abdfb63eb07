#!/usr/bin/env node
// npm run example -- <name> [args…]: runs examples/<name>.ts with tsx (no build step needed); args go to the example
// (e.g. `npm run example -- ui-streaming --serve`). `npm run examples` runs them all (scripts/examples.mjs).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const name = process.argv[2]
const available = fs.readdirSync(path.join(root, "examples")).filter((f) => f.endsWith(".ts") && !f.startsWith("_"))
  .map((f) => f.slice(0, -3))
if (!name || !available.includes(name)) {
  console.error(`usage: npm run example -- <name>\navailable: ${available.join(", ")}`)
  process.exit(name ? 1 : 0)
}
const tsx = path.join(root, "node_modules", ".bin", "tsx")
const args = process.argv.slice(3)
const run = spawnSync(tsx, [
  "--tsconfig",
  path.join(root, "tsconfig.json"),
  path.join(root, "examples", `${name}.ts`),
  ...args
], {
  stdio: "inherit",
  cwd: root
})
process.exit(run.status ?? 1)
