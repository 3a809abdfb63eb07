// No module-level mutable state in src/: state lives in the scope of a service's `make`. Fails on a top-level `let` /
// `var`, a top-level `new Map` / `Set` / `WeakMap` / `WeakSet` not typed `ReadonlyMap` / `ReadonlySet`, or a top-level
// cached promise (a module-wide singleton made when the module loads: a binding typed `Promise<…>`, or initialised
// with `new Promise`, `Promise.*`, `import()`, `.then` / `.catch` / `.finally`, or a call of the module's own async
// function). An entry of ALLOWED states its reason; an entry that no longer matches anything fails too (delete it).
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

/** The names of the async functions a module declares at its top level. */
const asyncFunctions = (source: ts.SourceFile): ReadonlySet<string> => {
  const names = new Set<string>()
  const isAsync = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.AsyncKeyword)
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name !== undefined && isAsync(statement)) {
      names.add(statement.name.text)
    }
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) {
        const init = d.initializer
        if (init !== undefined && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) && isAsync(init)) {
          names.add(d.name.getText(source))
        }
      }
    }
  }
  return names
}

/** Whether an initialiser makes a promise when the module loads. */
const makesPromise = (init: ts.Expression, source: ts.SourceFile, async: ReadonlySet<string>): boolean => {
  if (ts.isNewExpression(init)) return init.expression.getText(source) === "Promise"
  if (ts.isAwaitExpression(init)) return true
  if (!ts.isCallExpression(init)) return false
  const callee = init.expression
  if (callee.kind === ts.SyntaxKind.ImportKeyword) return true
  if (ts.isIdentifier(callee)) return async.has(callee.text)
  if (ts.isPropertyAccessExpression(callee)) {
    return callee.expression.getText(source) === "Promise" || ["then", "catch", "finally"].includes(callee.name.text)
  }
  return false
}

/** `file name` of every top-level binding that holds mutable state. */
const moduleState = (file: string, text = fs.readFileSync(file, "utf8")): Array<string> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true)
  const relative = path.relative(SRC, file).split(path.sep).join("/")
  const async = asyncFunctions(source)
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
      const typedPromise = declaration.type !== undefined && ts.isTypeReferenceNode(declaration.type) &&
        declaration.type.typeName.getText(source) === "Promise"
      const promise = typedPromise ||
        (init !== undefined && makesPromise(init, source, async))
      if (!isConst || (mutableCollection && !readonlyType) || promise) found.push(`${relative} ${name}`)
    }
  }
  return found
}

it("no module-level mutable state in src/ outside the allowlist (each entry with its reason)", () => {
  const found = sourceFiles(SRC).flatMap((file) => moduleState(file))
  expect(found.filter((entry) => !(entry in ALLOWED))).toEqual([])
  expect(Object.keys(ALLOWED).filter((entry) => !found.includes(entry))).toEqual([])
})

it("a module-level cached promise is found (the Bash parser was one)", () => {
  const file = path.join(SRC, "internal", "example.ts")
  const found = (text: string) => moduleState(file, text)
  expect(found("const load = async () => 1\nexport const parser: Promise<number> = load()")).toEqual([
    "internal/example.ts parser"
  ])
  expect(found("async function load() { return 1 }\nconst a = load()")).toEqual(["internal/example.ts a"])
  expect(found("const a = import(\"x\").then((m) => m)")).toEqual(["internal/example.ts a"])
  expect(found("const a = Promise.resolve(1)\nconst b = new Promise(() => {})")).toEqual([
    "internal/example.ts a",
    "internal/example.ts b"
  ])
  expect(found("const load = async () => 1\nexport const lazy = () => load()")).toEqual([])
})
