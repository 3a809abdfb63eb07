import * as path from "node:path"
import { defineConfig } from "vitest/config"

const src = (file: string) => path.join(import.meta.dirname, "src", file)

export default defineConfig({
  resolve: {
    alias: [
      { find: /^effect-claude-agent$/, replacement: src("index.ts") },
      { find: /^effect-claude-agent\/promise$/, replacement: src("promise.ts") },
      { find: /^effect-claude-agent\/testing$/, replacement: src("testing.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["./vitest.setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks"
  }
})
