import * as path from "node:path"
import { defineConfig } from "vitest/config"
import { entries } from "./vitest.config.js"

// npm run test:stress: the slow guarantees (G2, G5 real CLI, G14, G15, G16), one file at a time
export default defineConfig({
  resolve: { alias: entries(path.join(import.meta.dirname, "src", "promise.ts")) },
  test: {
    include: ["test/stress/**/*.stress.ts"],
    setupFiles: ["./vitest.setup.ts"],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: "forks",
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
    fileParallelism: false
  }
})
