#!/usr/bin/env node
// npm run check:functions — no function in src/ spans more than MAX_LINES lines, so every function can be read top to
// bottom in one sitting (issue 22). Counts lines from the function's first token to its closing one, nested functions
// included; each function, nested or not, is measured on its own. Prints every offender and exits 1 when there is one.
// `node scripts/check-function-length.mjs --all N` lists every function of at least N lines (for refactoring).
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const MAX_LINES = 200
const root = path.join(import.meta.dirname, "..")
const args = process.argv.slice(2)
const listFrom = args[0] === "--all" ? Number(args[1] ?? 0) : undefined

/** Every .ts/.js source file under `dir`, in a stable order. */
const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) return walk(full)
      return /\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : []
    })

/** A readable name for a function node: its own name, or the variable / property it is assigned to. */
const nameOf = (node, sourceFile) => {
  if (node.name !== undefined) return node.name.getText(sourceFile)
  const parent = node.parent
  if (parent !== undefined && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))) {
    return parent.name.getText(sourceFile)
  }
  return "<anonymous>"
}

/** Every function-like node with a body in `file`, with its first line and its length in lines. */
const functionsIn = (file) => {
  const text = fs.readFileSync(file, "utf8")
  const kind = /\.(js|mjs)$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, kind)
  const found = []
  // `outer` is the enclosing function's entry: a wrapper that is the whole body of its parent
  // (`(...) => Effect.gen(function*() { ... })`) is reported as its parent, not a second time.
  const visit = (node, outer) => {
    let next = outer
    if (ts.isFunctionLike(node) && node.body !== undefined) {
      const first = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line
      const last = sourceFile.getLineAndCharacterOfPosition(node.getEnd()).line
      const entry = { file, line: first + 1, lines: last - first + 1, name: nameOf(node, sourceFile) }
      const wrapper = outer !== undefined && entry.line - outer.line <= 8 &&
        (outer.line + outer.lines) - (entry.line + entry.lines) <= 2
      if (!wrapper) found.push(entry)
      next = wrapper ? outer : entry
    }
    ts.forEachChild(node, (child) => visit(child, next))
  }
  visit(sourceFile, undefined)
  return found
}

const all = walk(path.join(root, "src")).flatMap(functionsIn)
const report = (f) => `${path.relative(root, f.file)}:${f.line}  ${f.name}  ${f.lines} lines`

if (listFrom !== undefined) {
  for (const f of all.filter((f) => f.lines >= listFrom).sort((a, b) => b.lines - a.lines)) console.log(report(f))
  process.exit(0)
}
const offenders = all.filter((f) => f.lines > MAX_LINES)
if (offenders.length > 0) {
  console.error(`check-function-length: ${offenders.length} function(s) in src/ longer than ${MAX_LINES} lines:`)
  for (const f of offenders) console.error(`  ${report(f)}`)
  process.exit(1)
}
console.log(`check-function-length: ${all.length} functions in src/, none longer than ${MAX_LINES} lines`)
