// No module-level mutable state in src/: state lives in the scope of a service's `make`. Fails on a top-level `let` /
// `var`, a top-level `new Map` / `Set` / `WeakMap` / `WeakSet` not typed `ReadonlyMap` / `ReadonlySet`, and on a
// module-level singleton: a `ManagedRuntime`, a cached promise (typed `Promise`, or made by `import()`, `new Promise`,
// `.then`, `Promise.*` or `Effect.runPromise`), an effect run at import (`Effect.run*`), or any other top-level
// `new X()` (a `RegExp` or a `TextEncoder` excepted: they hold no state between uses). An entry of ALLOWED states its
// reason; an entry that no longer matches anything fails too (delete it).
import { expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const ALLOWED: Record<string, string> = {
  "promise.ts defaultRuntime":
    "the Promise entry's runtime, passed to its adapter: one per process so that the CLI resolver's knowledge makes " +
    "the second query cheap; it builds nothing until the first query and holds no process"
}

const SRC = path.join(import.meta.dirname, "..", "src")
const MUTABLE = /^(?:Map|Set|WeakMap|WeakSet)$/
/** What makes a top-level binding a process-wide singleton or a promise cached by the module. */
const SINGLETON = /\bManagedRuntime\.make\(|\bimport\(|\bnew Promise\b|\.then\(|\bPromise\.\w+\(|\bEffect\.run\w*\(/
/** Classes whose instances hold no state between uses. */
const STATELESS = /^(?:RegExp|TextEncoder)$/

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** The text of an initializer that runs at import: the bodies of the functions inside it are blanked out (lazy). */
const evaluatedAtImport = (init: ts.Node, source: ts.SourceFile): string => {
  let text = init.getText(source)
  const start = init.getStart(source)
  const blank = (node: ts.Node): void => {
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      const from = node.getStart(source) - start
      const to = node.getEnd() - start
      text = text.slice(0, from) + " ".repeat(to - from) + text.slice(to)
      return
    }
    ts.forEachChild(node, blank)
  }
  blank(init)
  return text
}

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
      const created = init !== undefined && ts.isNewExpression(init) ? init.expression.getText(source) : undefined
      const mutableCollection = created !== undefined && MUTABLE.test(created)
      const otherInstance = created !== undefined && !MUTABLE.test(created) && !STATELESS.test(created)
      const cachedPromise = declaration.type !== undefined && /^Promise\b/.test(declaration.type.getText(source))
      const singleton = init !== undefined && SINGLETON.test(evaluatedAtImport(init, source))
      if (!isConst || (mutableCollection && !readonlyType) || otherInstance || cachedPromise || singleton) {
        found.push(`${relative} ${name}`)
      }
    }
  }
  return found
}

it("no module-level mutable state in src/ outside the allowlist (each entry with its reason)", () => {
  const found = sourceFiles(SRC).flatMap(moduleState)
  expect(found.filter((entry) => !(entry in ALLOWED))).toEqual([])
  expect(Object.keys(ALLOWED).filter((entry) => !found.includes(entry))).toEqual([])
})
