// Cold import of one contender (timed from outside, as process wall): `node bench/import.mjs ours|official|floor|baseline`
// (baseline: the Promise API of the checkout in BENCH_BASELINE).
import * as path from "node:path"
import { pathToFileURL } from "node:url"

const sdk = process.argv[2]
if (sdk === "ours") await import("effect-claude-agent/promise")
else if (sdk === "official") await import("@anthropic-ai/claude-agent-sdk")
else if (sdk === "baseline") {
  await import(pathToFileURL(path.join(process.env.BENCH_BASELINE, "dist", "promise.js")).href)
} else await import("node:child_process")
