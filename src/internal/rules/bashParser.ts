/**
 * The Bash grammar: tree-sitter-bash on web-tree-sitter (WebAssembly). This module is imported lazily, by the first
 * decision that needs it (`import()` in `permissions.ts`), so importing the SDK loads no WebAssembly. It keeps
 * nothing: {@link load} returns a grammar its caller owns (a rule policy loads one and keeps it), and every parse runs
 * on a parser of its own, deleted after it, so a parse abandoned at its deadline leaves nothing behind for the next
 * one. The grammar ships in this package (`assets/tree-sitter-bash.wasm`) and is found through the package's own
 * exports, from the sources, `dist/` and the bundled `dist/promise.js` alike.
 *
 * @internal
 */
/// <reference path="./emscripten.d.ts" />
import { createRequire } from "node:module"
import type { Tree } from "web-tree-sitter"

/**
 * A loaded Bash grammar.
 *
 * @internal
 */
export interface BashLanguage {
  /**
   * Parses `source` on a new parser. `null` when the parse is abandoned because `performance.now()` passed
   * `deadline` (checked by tree-sitter between parse steps; one token is lexed without a check, which is why the
   * caller bounds the source's length first). The caller deletes the tree.
   */
  readonly parse: (source: string, deadline: number) => Tree | null
}

/**
 * Loads the grammar (the WebAssembly runtime, then `tree-sitter-bash.wasm`). Rejects when it cannot: then no Bash
 * content rule allows, and deny rules still match.
 *
 * @internal
 */
export const load = async (): Promise<BashLanguage> => {
  const { Language, Parser } = await import("web-tree-sitter")
  await Parser.init()
  const grammar = createRequire(import.meta.url).resolve("effect-claude-agent/assets/tree-sitter-bash.wasm")
  const language = await Language.load(grammar)
  return {
    parse: (source, deadline) => {
      const parser = new Parser()
      try {
        parser.setLanguage(language)
        return parser.parse(source, null, { progressCallback: () => performance.now() > deadline })
      } finally {
        parser.delete()
      }
    }
  }
}
