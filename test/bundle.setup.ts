// Global setup of the "bundle" test project: bundles the Promise entry as `npm run build` does.
import * as fs from "node:fs"
import * as path from "node:path"
import { bundlePromise } from "../scripts/bundle-promise.mjs"
import { bundleFile } from "../vitest.config.js"

export default async function setup() {
  fs.rmSync(path.dirname(bundleFile), { recursive: true, force: true })
  const meta = await bundlePromise({ outfile: bundleFile })
  // what the bundle still imports, for test/promise.bundle.test.ts
  fs.writeFileSync(`${bundleFile}.meta.json`, JSON.stringify(meta))
}
