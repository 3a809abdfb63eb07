// No module-level mutable state in src/: state lives in the scope of a service's `make`. Fails on a top-level `let` /
// `var`, or a top-level `new Map` / `Set` / `WeakMap` / `WeakSet` not typed `ReadonlyMap` / `ReadonlySet`. An entry
// of ALLOWED states its reason; an entry that no longer matches anything fails too (delete it).
import { expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const ALLOWED: Record<string, string> = {
  "internal/fakeCliMain.ts messageCounter": "a standalone program (the fake CLI), not the library",
  "internal/fakeCliMain.ts controls": "a standalone program (the fake CLI), not the library",
  "internal/fakeCliMain.ts pending": "a standalone program (the fake CLI), not the library",
  "internal/fakeCliMain.ts inputEnded": "a standalone program (the fake CLI), not the library",
  "internal/fakeCliMain.ts resolveInputEnded": "a standalone program (the fake CLI), not the library",
  "internal/fakeCliMain.ts buffered": "a standalone program (the fake CLI), not the library",
  "internal/fakeCliMain.ts lastPrompt": "a standalone program (the fake CLI), not the library",
  "internal/fakeCliMain.ts requestCounter": "a standalone program (the fake CLI), not the library",
  "internal/decode.ts cache": "owned by the errors helper (issue 22 item 6: schemas injected into the decoder)",
  "internal/decode.ts validators": "owned by the errors helper (issue 22 item 6: schemas injected into the decoder)",
  "internal/fastPaths.ts syncSends": "owned by core (issue 22 item 1 deletes fastPaths.ts)",
  "internal/fastPaths.ts callbackHandlers": "owned by core (issue 22 item 1 deletes fastPaths.ts)",
  "internal/controlProtocol.ts coalescing": "owned by core (issue 22 items 1 and 4)",
  "internal/controlProtocol.ts chunkPulls": "owned by core (issue 22 item 1: no WeakMap capabilities)",
  "internal/processTransport.ts frameSources": "owned by core (issue 22 item 1: no WeakMap capabilities)",
  "internal/permissions.ts promisePolicies": "owned by core (issue 22 item 1: no WeakMap capabilities)",
  "internal/hooks.ts promiseHooks": "owned by core (issue 22 item 1: no WeakMap capabilities)",
  "internal/sessionStore.ts validators":
    "built lazily because SessionStore.ts and this module import each other; to go with that cycle (item 6)",
  "internal/shellRules.ts ALLOWED_KINDS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts SEPARATORS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts WRITE_OPERATORS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts DUPLICATIONS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts WRAPPERS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts EXEC_FLAGS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts SHELLS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts REDIRECTS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts HEREDOC_PARTS": "a constant set, never written: to be typed ReadonlySet",
  "internal/shellRules.ts DIRECTORY_CHANGES": "a constant set, never written: to be typed ReadonlySet",
  "internal/sdkMcp.ts DATA_KEYWORDS": "a constant set, never written: to be typed ReadonlySet"
}

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
