// Builds the Promise entry, `dist/promise.js`, as one self-contained ESM file: our modules and the parts of effect and
// @effect/platform(-node) they use, tree-shaken. Its users do not load Effect themselves, and Node then reads and
// links one file instead of ~550 modules (`bench/results.md`, P3 cold import). The other entries stay unbundled and
// share the app's `effect` (peer dependency). Nothing is minified: names and line breaks are kept, so that a stack
// trace names functions at short lines (an uncaught error prints its source line), and the linked source map (shipped
// with `src/`) gives the TypeScript files and lines under `node --enable-source-maps`.
//
//   node scripts/bundle-promise.mjs            after `tsc -p tsconfig.build.json` (npm run build)
//   bundlePromise({ outfile })                 from tests (test/bundle.setup.ts, the "bundle" project)
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))

/**
 * What stays an import besides Node's built-ins: what is loaded lazily or optionally at run time from the app's
 * node_modules (the MCP SDK, zod, web-tree-sitter for Bash rules, which finds its own WebAssembly beside it). The
 * bundled CLI is only located (`require.resolve`), never imported; the Bash grammar is found through the package's
 * exports (`effect-claude-agent/assets/tree-sitter-bash.wasm`).
 */
export const external = ["@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*", "zod", "zod/*", "web-tree-sitter"]

/**
 * esbuild: its native binary, or the same version compiled to WebAssembly when the binary is not installed (a build
 * from `npm ci --omit=optional`, which leaves out every platform's binary package). Both give the same output.
 */
const loadEsbuild = async () => {
  try {
    const native = await import("esbuild")
    await native.transform("") // starts the binary: fails here when its platform package is not installed
    return native
  } catch {
    return import("esbuild-wasm")
  }
}

/** Bundles `src/promise.ts` into `outfile` (with a linked source map); resolves to esbuild's metafile. */
export const bundlePromise = async ({ outfile }) => {
  const esbuild = await loadEsbuild()
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(root, "src", "promise.ts")],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    external,
    // no `keepNames`: it costs ~0.9 MB of heap for `.name` properties; scope hoisting renames a few colliding
    // functions (`tool3`), classes and their tags keep their names, and the source map gives the original ones
    sourcemap: "linked",
    sourcesContent: false,
    tsconfig: path.join(root, "tsconfig.build.json"),
    metafile: true,
    logLevel: "warning",
    legalComments: "none"
  })
  return result.metafile
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outfile = path.join(root, "dist", "promise.js")
  const meta = await bundlePromise({ outfile })
  const bytes = Object.values(meta.outputs).find((o) => o.entryPoint !== undefined)?.bytes ?? 0
  console.log(
    `bundled ${path.relative(root, outfile)}: ${(bytes / 1024).toFixed(0)} KiB from ${
      Object.keys(meta.inputs).length
    } modules`
  )
}
