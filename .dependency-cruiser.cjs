// The layer rules of docs/ARCHITECTURE.md, checked by `npm run check:layers` (dependency-cruiser, type imports counted).
//
// Layers, lowest first. An internal folder imports only folders of lower layers (never a peer, never one above);
// a public module (src/*.ts) belongs to the layer of the implementation it fronts and imports nothing above it.
//   0 message      Message.ts, AgentError.ts                    the wire messages and the errors
//   1 transport    Transport.ts, CliResolver.ts                 one CLI process
//   2 protocol     ControlProtocol.ts                           correlation, dispatch, the inbound contract
//   3 rules, mcp, transcript (peers: none imports another)
//                  Permissions.ts, Hooks.ts, SdkMcp.ts, McpProxy.ts, Elicitation.ts, TranscriptStore.ts,
//                  TranscriptStoreSql.ts, SessionHistory.ts, SessionStore.ts
//   4 session      AgentOptions.ts, ClaudeAgent.ts, SessionPool.ts, UserDialog.ts, PartialMessages.ts
//   5 testing   6 cluster (on top of the session; their public modules are compositions)
//   entry points and compositions (index.ts, promise.ts, NodeClaudeAgent.ts, the testing kit's modules, …): anything
// Adapters (internal/promise, ai, ui, acp) turn the public API into someone else's protocol: they import public
// modules (src/*.ts) and their own folder only.

const internal = (folders) => `^src/internal/(?:${folders.join("|")})/`
const publicModules = (names) => `^src/(?:${names.join("|")})\\.ts$`

const layers = [
  { name: "message", folders: ["message"], modules: ["Message", "AgentError"] },
  { name: "transport", folders: ["transport"], modules: ["Transport", "CliResolver"] },
  { name: "protocol", folders: ["protocol"], modules: ["ControlProtocol"] },
  {
    name: "services",
    folders: ["rules", "mcp", "transcript"],
    modules: [
      "Permissions",
      "Hooks",
      "SdkMcp",
      "McpProxy",
      "Elicitation",
      "TranscriptStore",
      "TranscriptStoreSql",
      "SessionHistory",
      "SessionStore"
    ]
  },
  {
    name: "session",
    folders: ["session"],
    modules: ["AgentOptions", "ClaudeAgent", "SessionPool", "UserDialog", "PartialMessages"]
  },
  // the testing kit and the cluster sit on top of the session; their public modules are compositions
  { name: "testing", folders: ["testing"], modules: [] },
  { name: "cluster", folders: ["cluster"], modules: [] }
]

const above = (index) => layers.slice(index + 1)
const ADAPTERS = ["promise", "ai", "ui", "acp"]
const PEERS = ["rules", "mcp", "transcript"]

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    ...layers.flatMap((layer, index) => {
      const higherModules = above(index).flatMap((l) => l.modules)
      const from = layer.modules.length === 0
        ? internal(layer.folders)
        : `${internal(layer.folders)}|${publicModules(layer.modules)}`
      return [
        {
          name: `${layer.name}-not-above-internal`,
          comment: `${layer.name} (its internal folder and public modules) imports no internal folder above it`,
          severity: "error",
          from: { path: from },
          to: { path: `^src/internal/(?!(?:${layer.folders.join("|")})/)` , pathNot: internal(layers.slice(0, index + 1).flatMap((l) => l.folders)) }
        },
        ...(higherModules.length === 0 || layer.modules.length === 0 ? [] : [{
          name: `${layer.name}-not-above-public`,
          comment: `${layer.name} imports no public module of a layer above it (nor a composition or an entry point)`,
          severity: "error",
          from: { path: from },
          to: { path: `^src/[^/]+\\.ts$`, pathNot: publicModules(layers.slice(0, index + 1).flatMap((l) => l.modules)) }
        }])
      ]
    }),
    {
      name: "protocol-uses-the-transport-interface",
      comment: "protocol/ reaches a CLI through Transport.ts's Connection only, never a transport implementation",
      severity: "error",
      from: { path: "^src/internal/protocol/" },
      to: { path: "^src/internal/transport/" }
    },
    {
      name: "services-are-peers",
      comment: "rules/, mcp/ and transcript/ do not import one another (what they share sits in protocol/)",
      severity: "error",
      from: { path: "^src/internal/(rules|mcp|transcript)/" },
      to: { path: internal(PEERS), pathNot: "^src/internal/$1/" }
    },
    {
      name: "adapters-use-public-modules",
      comment: "an adapter (promise/, ai/, ui/, acp/) imports public modules and its own folder only",
      severity: "error",
      from: { path: `^src/internal/(${ADAPTERS.join("|")})/` },
      to: { path: "^src/internal/", pathNot: "^src/internal/$1/" }
    },
    {
      name: "no-internal-folder-cycle",
      comment: "no two folders of src/internal/ import each other, directly or through others",
      severity: "error",
      from: { path: "^src/internal/([^/]+)/" },
      to: { path: "^src/internal/", pathNot: "^src/internal/$1/", circular: true }
    }
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".mjs"] }
  }
}
