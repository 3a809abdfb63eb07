import * as path from "node:path"
import { defineConfig } from "vitest/config"
import { entries } from "./vitest.config.js"

/**
 * `npm run test:browser`: the chat page in a real headless Chromium (Debian's `chromium`, driven by playwright-core;
 * `.ci/chromium` installs it). Not part of `npm test`: it needs the browser, and `.ci/run` runs it as a step of its
 * own.
 */
export default defineConfig({
  resolve: { alias: entries(path.join(import.meta.dirname, "src", "promise.ts")) },
  test: {
    include: ["test/**/*.browser.test.ts"],
    setupFiles: ["./vitest.setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks"
  }
})
