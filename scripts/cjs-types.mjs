// Writes `dist/**/*.d.cts` beside every `dist/**/*.d.ts`: the declarations a CommonJS program compiled by
// TypeScript reads through the `"require"` condition of `exports`. The JavaScript is the same ESM file for both
// conditions: Node ≥ 20.19 loads it with `require()` (require of ESM), and what `require()` returns is the module's
// namespace, whose named exports are the ones these declarations describe (no entry has a default export).
//
// `module: nodenext` reads the `.d.ts` of an ESM file from CommonJS as it is; `module: node16` (and `node18`) do not
// (TS1479: "the referenced file is an ECMAScript module and cannot be imported with 'require'"). A `.d.cts` is a
// CommonJS declaration file, and so must every file it imports be: the copies import each other (`./X.cjs` resolves
// to `./X.d.cts`), never the `.d.ts` files. Declaration maps are copied too, so "go to definition" still reaches `src/`.
//
//   node scripts/cjs-types.mjs [dist]          after `tsc -p tsconfig.build.json` (npm run build)
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** A relative module specifier ending in `.js` inside `from "…"`, `import("…")` or `import "…"`. */
const RELATIVE_JS = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]*?)\.js\2/g

/** The declaration text with its relative `.js` specifiers pointing at the `.cjs` twins. */
export const toCommonJs = (text) =>
  text.replace(RELATIVE_JS, (_, lead, quote, stem) => `${lead}${quote}${stem}.cjs${quote}`)
    .replace(/^\/\/# sourceMappingURL=(.+)\.d\.ts\.map$/m, "//# sourceMappingURL=$1.d.cts.map")

const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    return entry.isDirectory() ? walk(file) : [file]
  })

/** Writes the `.d.cts` (and `.d.cts.map`) twin of every `.d.ts` under `dist`; returns how many. */
export const writeCommonJsTypes = (dist) => {
  let count = 0
  for (const file of walk(dist)) {
    if (!file.endsWith(".d.ts")) continue
    const twin = file.replace(/\.d\.ts$/, ".d.cts")
    fs.writeFileSync(twin, toCommonJs(fs.readFileSync(file, "utf8")))
    const map = `${file}.map`
    if (fs.existsSync(map)) {
      const parsed = JSON.parse(fs.readFileSync(map, "utf8"))
      fs.writeFileSync(`${twin}.map`, JSON.stringify({ ...parsed, file: path.basename(twin) }))
    }
    count++
  }
  return count
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
  const dist = path.resolve(root, process.argv[2] ?? "dist")
  console.log(
    `wrote ${writeCommonJsTypes(dist)} CommonJS declaration files (.d.cts) under ${path.relative(root, dist)}`
  )
}
