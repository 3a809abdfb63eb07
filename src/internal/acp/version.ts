/**
 * Who this agent is, for `initialize`: the package's name and version, read from its `package.json` (the same
 * relative path from `src/internal/acp/` and `dist/internal/acp/`).
 *
 * @internal
 */
import { createRequire } from "node:module"

/** @internal */
export const agentInfo = (): { readonly name: string; readonly title: string; readonly version: string } => {
  let version = "unknown"
  try {
    const manifest: unknown = createRequire(import.meta.url)("../../../package.json")
    if (
      typeof manifest === "object" && manifest !== null && "version" in manifest && typeof manifest.version === "string"
    ) {
      version = manifest.version
    }
  } catch {
    // a bundled copy without its package.json
  }
  return { name: "effect-claude-agent", title: "Claude Code (effect-claude-agent)", version }
}
