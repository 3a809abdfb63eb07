import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const src = path.join(import.meta.dirname, "..", "src")

/** The relative modules a file loads at runtime (`import type` and `export type` load nothing). */
const runtimeImports = (file: string): Array<string> => {
  const text = fs.readFileSync(file, "utf8")
  const out: Array<string> = []
  for (const match of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+"(\.[^"]+)"/gm)) {
    out.push(path.resolve(path.dirname(file), match[1]!.replace(/\.js$/, ".ts")))
  }
  return out
}

/** Every file of src/ that `entry` loads, its own included. */
const loadedBy = (entry: string): Array<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file) || !fs.existsSync(file)) return
    seen.add(file)
    runtimeImports(file).forEach(visit)
  }
  visit(path.join(src, entry))
  return [...seen]
}

const clusterPeers = /from "@effect\/(cluster|rpc|sql|sql-sqlite-node|sql-pg|workflow)\//

describe("the cluster entry point", () => {
  it("the main entry loads no file that imports @effect/cluster and friends", () => {
    const files = loadedBy("index.ts")
    expect(files.length).toBeGreaterThan(10)
    const offenders = files.filter((file) => clusterPeers.test(fs.readFileSync(file, "utf8")))
    expect(offenders).toEqual([])
  })

  it("the cluster entry does load them (the check above can see them)", () => {
    const files = loadedBy("cluster.ts")
    expect(files.filter((file) => clusterPeers.test(fs.readFileSync(file, "utf8"))).length)
      .toBeGreaterThan(0)
  })
})
