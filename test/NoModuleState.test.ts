// No module-level mutable state in src/: state lives in the scope of a service's `make`. Fails on a top-level `let` /
// `var`, or a top-level `new Map` / `Set` / `WeakMap` / `WeakSet` not typed `ReadonlyMap` / `ReadonlySet`. An entry
// of ALLOWED states its reason; an entry that no longer matches anything fails too (delete it).
import { expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const ALLOWED: Record<string, string> = {}

const SRC = path.join(import.meta.dirname, "..", "src")
const MUTABLE = /^(?:Map|Set|WeakMap|WeakSet)$/

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** `file name` of every top-level binding that holds mutable state. */
const moduleState = (file: string): Array<string> => {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true)
  const relative = path.relative(SRC, file).split(path.sep).join("/")
  const found: Array<string> = []
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue
    const list = statement.declarationList
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0
    for (const declaration of list.declarations) {
      const name = declaration.name.getText(source)
      const init = declaration.initializer
      const readonlyType = declaration.type !== undefined &&
        /^Readonly(?:Map|Set)\b/.test(declaration.type.getText(source))
      const mutableCollection = init !== undefined && ts.isNewExpression(init) &&
        MUTABLE.test(init.expression.getText(source))
      if (!isConst || (mutableCollection && !readonlyType)) found.push(`${relative} ${name}`)
    }
  }
  return found
}

it("no module-level mutable state in src/ outside the allowlist (each entry with its reason)", () => {
  const found = sourceFiles(SRC).flatMap(moduleState)
  expect(found.filter((entry) => !(entry in ALLOWED))).toEqual([])
  expect(Object.keys(ALLOWED).filter((entry) => !found.includes(entry))).toEqual([])
})
