import { describe, expect, it } from "@effect/vitest"
import madge from "madge"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const src = path.join(root, "src")

/** Every file of src/ that `entry` loads, its own included (type-only imports skipped, as at runtime). */
const loadedBy = async (entry: string) => {
  const graph = await madge(path.join(src, entry), {
    fileExtensions: ["ts"],
    tsConfig: path.join(root, "tsconfig.json"),
    detectiveOptions: { ts: { skipTypeImports: true } }
  })
  return Object.keys(graph.obj())
}

const clusterPeers = /from "@effect\/(cluster|rpc|sql|sql-sqlite-node|sql-pg|workflow)\//

describe("the cluster entry point", () => {
  it("the main entry loads no file that imports @effect/cluster and friends", async () => {
    const files = await loadedBy("index.ts")
    expect(files.length).toBeGreaterThan(10)
    const offenders = files.filter((file) => clusterPeers.test(fs.readFileSync(path.join(src, file), "utf8")))
    expect(offenders).toEqual([])
  }, 30_000)

  it("the cluster entry does load them (the check above can see them)", async () => {
    const files = await loadedBy("cluster.ts")
    expect(files.filter((file) => clusterPeers.test(fs.readFileSync(path.join(src, file), "utf8"))).length)
      .toBeGreaterThan(0)
  }, 30_000)
})
