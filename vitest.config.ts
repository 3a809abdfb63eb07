import * as path from "node:path"
import { defineConfig } from "vitest/config"

const src = (file: string) => path.join(import.meta.dirname, "src", file)

/** Where `test/bundle.setup.ts` writes the bundled Promise entry for the "bundle" project. */
export const bundleFile = path.join(import.meta.dirname, ".tmp", "promise-bundle", "promise.js")

/** The package's entries as the tests import them: the sources, with the Promise entry at `promise`. */
export const entries = (promise: string) => [
  { find: /^effect-claude-agent$/, replacement: src("index.ts") },
  { find: /^effect-claude-agent\/promise$/, replacement: promise },
  { find: /^effect-claude-agent\/testing$/, replacement: src("testing.ts") },
  { find: /^effect-claude-agent\/cluster$/, replacement: src("cluster.ts") },
  { find: /^effect-claude-agent\/sql$/, replacement: src("sql.ts") },
  { find: /^effect-claude-agent\/ai$/, replacement: src("ai.ts") },
  { find: /^effect-claude-agent\/acp$/, replacement: src("acp.ts") }
]

const shared = {
  setupFiles: ["./vitest.setup.ts"],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: "forks" as const
}

export default defineConfig({
  test: {
    projects: [
      {
        resolve: { alias: entries(src("promise.ts")) },
        test: { ...shared, name: "src", include: ["test/**/*.test.ts"], exclude: ["test/**/*.bundle.test.ts"] }
      },
      {
        // the Promise API's tests again, against the self-contained bundle `npm run build` ships as
        // `dist/promise.js`; the test files' own `effect` and the testing entry are a second copy beside it
        resolve: { alias: entries(bundleFile) },
        test: {
          ...shared,
          name: "bundle",
          include: [
            "test/promise.test.ts",
            "test/promise.cli.test.ts",
            "test/promise.logging.test.ts",
            "test/promise.errors.test.ts",
            "test/promise.abandon.test.ts",
            "test/promise.outputs.test.ts",
            "test/TranscriptStore.promise.cli.test.ts",
            "test/**/*.bundle.test.ts"
          ],
          globalSetup: ["./test/bundle.setup.ts"]
        }
      }
    ]
  }
})
