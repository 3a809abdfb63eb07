#!/usr/bin/env node
// npm run example -- <name>: runs examples/<name>.ts with tsx (no build step needed)
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
const run = spawnSync(tsx, ["--tsconfig", path.join(root, "tsconfig.json"), path.join(root, "examples", `${name}.ts`)], {
  stdio: "inherit",
  cwd: root
})
process.exit(run.status ?? 1)
