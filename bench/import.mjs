// Cold import of one contender (timed from outside, as process wall): `node bench/import.mjs ours|official|floor`.
const sdk = process.argv[2]
if (sdk === "ours") await import("effect-claude-agent/promise")
else if (sdk === "official") await import("@anthropic-ai/claude-agent-sdk")
else await import("node:child_process")
