/**
 * The Bash parser: tree-sitter-bash on web-tree-sitter (WebAssembly). This module is imported lazily, by the first
 * decision that needs it (`import()` in `permissions.ts`), so importing the SDK loads no WebAssembly; the module
 * system keeps the one parser it makes. The grammar ships in this package (`assets/tree-sitter-bash.wasm`) and is
 * found through the package's own exports, from the sources, `dist/` and the bundled `dist/promise.js` alike.
 *
 * @internal
 */
/// <reference path="./emscripten.d.ts" />
import { createRequire } from "node:module"
import type { Parser } from "web-tree-sitter"

const load = async (): Promise<Parser> => {
  const { Language, Parser } = await import("web-tree-sitter")
  await Parser.init()
  const grammar = createRequire(import.meta.url).resolve("effect-claude-agent/assets/tree-sitter-bash.wasm")
  const language = await Language.load(grammar)
  const parser = new Parser()
  parser.setLanguage(language)
  return parser
}

/**
 * The parser, or the reason it could not be loaded (then no Bash content rule allows, and deny rules still match).
 *
 * @internal
 */
export const parser: Promise<Parser> = load()
// observed by the first decision that awaits it; this keeps a failed load from being reported as unhandled meanwhile
parser.catch(() => undefined)
