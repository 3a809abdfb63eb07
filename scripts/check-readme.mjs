#!/usr/bin/env node
// npm run check:readme — every ```ts block of the Markdown docs must compile as a module of its own, against the
// sources (the same compiler options as the package). A block lists its own imports; names from outside the SDK
// (your app's functions) are `declare`d in the block. Errors are reported at the README line they come from.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const docs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["README.md", "SECURITY.md"]
const out = path.join(root, ".tmp", "readme-blocks")
fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })

/** file name in .tmp → { doc, firstLine } */
const origins = new Map()
for (const doc of docs) {
  const lines = fs.readFileSync(path.join(root, doc), "utf8").split("\n")
  let block = undefined
  lines.forEach((line, index) => {
    if (block === undefined && /^```(ts|typescript)\s*$/.test(line)) {
      block = { firstLine: index + 2, lines: [] }
    } else if (block !== undefined && /^```\s*$/.test(line)) {
      const name = `${path.basename(doc, ".md")}-L${block.firstLine}.ts`
      // `export {}` keeps every block a module, so top-level names never clash between blocks
      fs.writeFileSync(path.join(out, name), block.lines.join("\n") + "\nexport {}\n")
      origins.set(name, { doc, firstLine: block.firstLine })
      block = undefined
    } else if (block !== undefined) {
      block.lines.push(line)
    }
  })
}
if (origins.size === 0) {
  console.error("check-readme: no ```ts blocks found")
  process.exit(1)
}

const rel = (p) => path.relative(out, path.join(root, p))
fs.writeFileSync(
  path.join(out, "tsconfig.json"),
  JSON.stringify(
    {
      extends: rel("tsconfig.base.json"),
      compilerOptions: {
        noEmit: true,
        // a snippet may show a value without using it
        noUnusedLocals: false,
        // the testing kit's frames are plain JavaScript shared with the fake CLI program (src/internal/testing)
        allowJs: true,
        // every module entry of package.json's `exports`, at the source of its ./dist/x.js: src/x.ts
        paths: Object.fromEntries(
          Object.entries(JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).exports)
            .flatMap(([key, target]) => {
              const module = /"\.\/dist\/([^"]+)\.js"/.exec(JSON.stringify(target))?.[1]
              return module === undefined
                ? []
                : [[key === "." ? "effect-claude-agent" : `effect-claude-agent/${key.slice(2)}`, [
                  rel(`src/${module}.ts`)
                ]]]
            })
        )
      },
      // @effect/rpc's typings name the DOM's `Transferable` (the cluster entry's snippets load them)
      include: ["*.ts", rel("src/internal/cluster/transferable.d.ts")]
    },
    null,
    2
  )
)

const tsc = spawnSync(path.join(root, "node_modules", ".bin", "tsc"), [
  "-p",
  path.join(out, "tsconfig.json"),
  "--pretty",
  "false"
], {
  cwd: root,
  encoding: "utf8"
})
const output = `${tsc.stdout}${tsc.stderr}`
let errors = 0
for (const line of output.split("\n")) {
  const match = /([^/\\(]+\.ts)\((\d+),(\d+)\): (error .*)$/.exec(line)
  const origin = match ? origins.get(match[1]) : undefined
  if (match && origin) {
    errors++
    console.error(`${origin.doc}:${origin.firstLine + Number(match[2]) - 1}:${match[3]} ${match[4]}`)
  } else if (line.trim() !== "" && !line.startsWith(" ")) {
    // errors outside the blocks (the sources) count too
    if (/error TS/.test(line)) errors++
    console.error(line)
  } else if (line.trim() !== "") {
    console.error(line)
  }
}
if (tsc.status !== 0 || errors > 0) {
  console.error(`check-readme: ${errors} error(s) in ${origins.size} code blocks`)
  process.exit(1)
}
console.log(`check-readme: ${origins.size} code blocks of ${docs.join(", ")} compile`)
