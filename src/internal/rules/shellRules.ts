/**
 * What a Bash command runs, read from tree-sitter-bash's syntax tree: the simple commands it is made of, their words
 * after quote removal (wherever the grammar puts them, redirection and heredoc nodes included), and what their
 * redirections read and write. Permission rules are matched against this, never against the raw string. The grammar
 * is loaded by the caller (see `bashParser.ts`); this module only reads trees.
 *
 * @internal
 */
/// <reference path="./emscripten.d.ts" />
import type { Tree } from "web-tree-sitter"
import type { BashLanguage } from "./bashParser.js"
import { assignedScripts, basename, denyCandidates, runsInput, scripts, type Word } from "./shellPrograms.js"

export type { Word } from "./shellPrograms.js"

/**
 * A node of the syntax tree, copied out of the parser's memory in one cursor walk: reading a tree-sitter node's
 * properties crosses into WebAssembly each time, which cost ten times the parse when the rules read them directly.
 */
interface Node {
  readonly type: string
  readonly isNamed: boolean
  readonly isMissing: boolean
  /** The field of its parent this node is in (`body`, `destination`, …). */
  readonly field: string | null
  readonly startIndex: number
  readonly endIndex: number
  readonly text: string
  readonly children: ReadonlyArray<Node>
  readonly namedChildren: ReadonlyArray<Node>
}

/** Copies a tree (indices are UTF-16 code units of `source`, as web-tree-sitter reports them for a string). */
const copyTree = (tree: Tree, source: string): Node => {
  const cursor = tree.walk()
  try {
    const visit = (): Node => {
      const type = cursor.nodeType
      const isNamed = cursor.nodeIsNamed
      const isMissing = cursor.nodeIsMissing
      const field = cursor.currentFieldName
      const startIndex = cursor.startIndex
      const endIndex = cursor.endIndex
      const children: Array<Node> = []
      if (cursor.gotoFirstChild()) {
        do children.push(visit())
        while (cursor.gotoNextSibling())
        cursor.gotoParent()
      }
      return {
        type,
        isNamed,
        isMissing,
        field,
        startIndex,
        endIndex,
        text: source.slice(startIndex, endIndex),
        children,
        namedChildren: children.filter((c) => c.isNamed)
      }
    }
    return visit()
  } finally {
    cursor.delete()
  }
}

const childForField = (node: Node, field: string): Node | undefined => node.children.find((c) => c.field === field)

/**
 * One simple command: its words (leading `NAME=value` assignments included) and its redirections.
 *
 * @internal
 */
export interface SimpleCommand {
  readonly words: ReadonlyArray<Word>
  /** How many leading words are `NAME=value` assignments. */
  readonly assignments: number
  /** The targets of redirections that write a file (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>& file`), not `/dev/null`. */
  readonly writes: ReadonlyArray<Word>
  /** The targets of redirections that read a file (`<`, `<>`, `<& file`). */
  readonly inputs: ReadonlyArray<Word>
  /** What its heredocs and here-strings give it on its input, as written (a shell or `source` runs it). */
  readonly stdin?: ReadonlyArray<string> | undefined
}

/** A command as the rules see it. @internal */
export interface Analysis {
  /**
   * Every simple command anywhere: in substitutions, subshells, functions, control structures, heredocs, and in the
   * strings given to `bash -c`, `eval`, `trap` and the other builtins that run code. Deny and ask rules match any.
   */
  readonly all: ReadonlyArray<SimpleCommand>
  /**
   * The simple commands joined by `&&`, `||`, `;`, `|`, `|&` and newlines that make up the whole command (and the
   * `cat` of a literal commit-message heredoc, see {@link commitMessage}), when it is only that and runs nothing else:
   * otherwise `undefined`, and no allow rule can match it.
   */
  readonly top: ReadonlyArray<SimpleCommand> | undefined
  /**
   * With `top`: the operator after each of its commands (`&&`, `||`, `;`, `|`, `|&`, a newline, `undefined` for the
   * last and for a commit message's `cat`). The commands of `top` are the same objects as in `all`.
   */
  readonly joiners?: ReadonlyArray<string | undefined> | undefined
  /**
   * A limit was reached (the command's size, the parse's time, the nesting of the scripts it runs, the stack): what
   * the command does is not known, so every deny and ask rule that could apply matches it, and no allow rule does.
   */
  readonly limit: boolean
  /**
   * The command, or a script it runs, does not parse cleanly: where it reads and writes is not known, so every deny
   * and ask rule for Read, Write or Edit matches it.
   */
  readonly broken: boolean
  /**
   * The crude tokens of a command that does not parse cleanly, or that bash might read differently from the tree
   * (split at blanks, shell metacharacters and commas): deny and ask rules match any run of them.
   */
  readonly tokens: ReadonlyArray<string>
}

/** Node kinds an allowed command may contain; anything else (substitutions, arithmetic, functions, …) stops allow. */
const ALLOWED_KINDS: ReadonlySet<string> = new Set([
  "program",
  "list",
  "pipeline",
  "redirected_statement",
  "command",
  "command_name",
  "variable_assignment",
  "variable_name",
  "special_variable_name",
  "word",
  "number",
  "string",
  "string_content",
  "raw_string",
  "ansi_c_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "brace_expression",
  "file_redirect",
  "file_descriptor",
  "heredoc_redirect",
  "heredoc_start",
  "heredoc_body",
  "heredoc_content",
  "heredoc_end",
  "herestring_redirect",
  "comment"
])

/** Tokens that may join or end the statements of an allowed command. */
const SEPARATORS: ReadonlySet<string> = new Set([";", "&&", "||", "|", "|&", "\n"])

const WRITE_OPERATORS: ReadonlySet<string> = new Set([">", ">>", ">|", "&>", "&>>", "<>"])
const READ_OPERATORS: ReadonlySet<string> = new Set(["<", "<>"])
const DUPLICATIONS: ReadonlySet<string> = new Set([">&", "<&", ">&-", "<&-"])

/**
 * The longest command judged (UTF-16 code units), checked before anything is parsed: a longer one is decided in
 * microseconds as one that reached a limit. It also bounds the time of the one step tree-sitter cannot interrupt
 * (lexing a single token).
 */
export const MAX_COMMAND_LENGTH = 32_768

/** How long parsing one decision's command (and the scripts it runs) may take before the limit is reached. */
const PARSE_BUDGET_MS = 200

/** How deep the strings given to `bash -c`, `eval`, … are parsed again; deeper ones reach the limit. */
const MAX_DEPTH = 3

/**
 * How many words a derived candidate command keeps (the words after a wrapper, a run of crude tokens): enough for
 * any rule, and it keeps the number of words compared linear in the command's length.
 */
const MAX_RUN = 64

const children = (node: Node): ReadonlyArray<Node> => node.children

/** Removes backslash escapes of an unquoted word; `\<newline>` disappears. */
const unescapeUnquoted = (text: string): string => text.replace(/\\(\n|.)/gs, (_, c: string) => (c === "\n" ? "" : c))

/** Inside double quotes, `\` escapes only `$`, `` ` ``, `"`, `\` and a newline. */
const unescapeDouble = (text: string): string => text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c))

/** A character quoted in a glob pattern. */
const escapeGlob = (text: string): string => text.replace(/[\\*?[\]]/g, "\\$&")

/**
 * How bash expands an unquoted word (its text as written): `"literal"`, `"glob"` (pathname expansion only: `*`, `?`,
 * `[`), or `"other"` (braces, a tilde at its start or after `=` / `:`, a lone `$`, extglob parentheses).
 */
const expansionOf = (raw: string): "literal" | "glob" | "other" => {
  let kind: "literal" | "glob" = "literal"
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    if (c === "\\") {
      i++
      continue
    }
    if (c === "*" || c === "?" || c === "[" || c === "]") kind = "glob"
    else if (c === "{" || c === "}" || c === "(" || c === ")" || c === "$") return "other"
    else if (c === "~" && (i === 0 || raw[i - 1] === "=" || raw[i - 1] === ":")) return "other"
  }
  return kind
}

const ANSI_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  "\"": "\""
}

/** Decodes the body of `$'…'` as bash does: one-character escapes, `\xHH`, `\NNN`, `\uHHHH`, `\UHHHHHHHH`, `\cX`. */
const decodeAnsiC = (body: string): string =>
  body.replace(
    /\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|c.|.)/gs,
    (_, e: string) => {
      const code = (digits: string, radix: number) => {
        const n = parseInt(digits, radix)
        return n <= 0x10ffff ? String.fromCodePoint(n) : ""
      }
      if (/^x[0-9A-Fa-f]/.test(e)) return code(e.slice(1), 16)
      if (/^[0-7]/.test(e)) return code(e, 8)
      if (/^[uU][0-9A-Fa-f]/.test(e)) return code(e.slice(1), 16)
      if (e.startsWith("c") && e.length === 2) return String.fromCharCode(e.charCodeAt(1) & 0x1f)
      return ANSI_ESCAPES[e] ?? e
    }
  )

const word = (literal: string | undefined, loose: string, glob?: string): Word =>
  glob === undefined ? { literal, loose } : { literal, loose, glob }

/**
 * The literal value of `"$(cat <<'D'⏎BODY⏎D⏎)"`, the form Claude Code writes commit messages in: a double-quoted
 * string that is exactly one command substitution of exactly `cat` with one heredoc whose delimiter `D`
 * (`[A-Za-z0-9_]+`) is quoted whole with `'` or `"` (so its body is not expanded). Its value is BODY with its trailing
 * newlines removed (what `$(…)` does); `undefined` for anything else.
 *
 * @internal
 */
export const commitMessage = (node: Node): string | undefined => {
  if (node.type !== "string" || node.namedChildren.length !== 1) return undefined
  const substitution = node.namedChildren[0]!
  if (substitution.type !== "command_substitution") return undefined
  const m = /^"\$\(cat <<(['"])([A-Za-z0-9_]+)\1\n((?:[^\n]*\n)*?)\2\n\)"$/.exec(node.text)
  if (m === null || m[3]!.split("\n").includes(m[2]!)) return undefined
  const statement = substitution.namedChildren
  if (statement.length !== 1 || statement[0]!.type !== "redirected_statement") return undefined
  const body = childForField(statement[0]!, "body")
  const redirects = statement[0]!.namedChildren.filter((c) => c !== body)
  if (body?.type !== "command" || body.namedChildren.length !== 1 || body.text !== "cat") return undefined
  const heredoc = redirects[0]
  if (redirects.length !== 1 || heredoc?.type !== "heredoc_redirect") return undefined
  if (!heredoc.namedChildren.every((c) => HEREDOC_PARTS.has(c.type) && c.namedChildren.length === 0)) return undefined
  return m[3]!.replace(/\n+$/, "")
}

/** The value of a word-like node. */
const wordOf = (node: Node): Word => {
  const text = node.text
  switch (node.type) {
    case "word":
    case "command_name": {
      if (node.type === "command_name") {
        const inner = node.namedChildren[0]
        if (inner !== undefined && inner.type !== "word") return wordOf(inner)
      }
      const value = unescapeUnquoted(text)
      const kind = expansionOf(text)
      return word(kind === "literal" ? value : undefined, value, kind === "glob" ? text : undefined)
    }
    case "number":
      return word(text, text)
    case "raw_string":
      return word(text.slice(1, -1), text.slice(1, -1))
    case "ansi_c_string":
      // never a literal for allow rules; decoded for deny rules
      return word(undefined, decodeAnsiC(text.slice(2, -1)))
    case "translated_string": {
      // `$"…"` is a double-quoted string (translated through a message catalogue that is normally absent)
      const inner = node.namedChildren[0]
      return inner === undefined ? word(undefined, text.slice(1)) : word(undefined, wordOf(inner).loose)
    }
    case "string": {
      const message = commitMessage(node)
      if (message !== undefined) return word(message, message)
      let literal: string | undefined = ""
      let loose = ""
      for (const part of node.namedChildren) {
        if (part.type === "string_content") {
          const value = unescapeDouble(part.text)
          literal = literal === undefined ? undefined : literal + value
          loose += value
        } else {
          literal = undefined
          loose += part.text
        }
      }
      return word(literal, loose)
    }
    case "concatenation": {
      let literal: string | undefined = ""
      let loose = ""
      let glob: string | undefined = ""
      for (const part of node.namedChildren) {
        const w = wordOf(part)
        literal = literal === undefined || w.literal === undefined ? undefined : literal + w.literal
        loose += w.loose
        const pattern = w.glob ??
          (w.literal === undefined ? undefined : part.type === "word" ? part.text : escapeGlob(w.literal))
        glob = glob === undefined || pattern === undefined ? undefined : glob + pattern
      }
      return word(literal, loose, literal === undefined ? glob : undefined)
    }
    default:
      return word(undefined, text)
  }
}

/** A parameter expansion that only reads a variable: `${NAME}`, `${1}`, `${@}` (no operators, no subscripts). */
const plainExpansion = (node: Node): boolean => /^\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}$/.test(node.text)

/**
 * How many `command` nodes the tree holds (the `cat` of a commit-message heredoc included), or -1 when it holds
 * anything an allowed command may not hold (one walk for both: crossing into the parser's memory is the cost of a
 * decision).
 */
const allowableCommands = (source: string, node: Node): number => {
  if (node.isMissing) return -1
  if (node.isNamed) {
    if (node.type === "string" && commitMessage(node) !== undefined) return 1
    if (!ALLOWED_KINDS.has(node.type)) return -1
    if (node.type === "expansion" && !plainExpansion(node)) return -1
  } else if (node.type === "&") {
    return -1
  }
  if (node.type === "comment" && node.startIndex > 0 && !/[ \t\n;&|()]/.test(source[node.startIndex - 1]!)) return -1
  let count = node.type === "command" ? 1 : 0
  for (const child of children(node)) {
    const n = allowableCommands(source, child)
    if (n === -1) return -1
    count += n
  }
  return count
}

/** Whether two adjacent nodes are really separate words in bash (not one word, not joined by a line continuation). */
const separated = (source: string, left: Node, right: Node): boolean =>
  /[ \t\n]/.test(source.slice(left.endIndex, right.startIndex).replace(/\\\n/g, ""))

const REDIRECTS: ReadonlySet<string> = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"])

const HEREDOC_PARTS: ReadonlySet<string> = new Set(["heredoc_start", "heredoc_body", "heredoc_end"])

/** Joins nodes that bash reads as one word (no blank between them) into one word; the join itself means unsure. */
const joinWord = (nodes: ReadonlyArray<Node>): Word => {
  if (nodes.length === 1) return wordOf(nodes[0]!)
  const loose = nodes.map((n) => wordOf(n).loose).join("")
  return word(undefined, loose)
}

/**
 * Whether a heredoc's body runs nothing: its delimiter is quoted (no expansion at all), or its text has no command
 * substitution, arithmetic or parameter expansion beyond `$NAME` / `${NAME}`. Read from the text, because
 * tree-sitter-bash does not parse the body of every heredoc form (`<<-`).
 */
const heredocIsInert = (node: Node): boolean => {
  const start = node.namedChildren.find((c) => c.type === "heredoc_start")?.text ?? ""
  if (/['"\\]/.test(start)) return true
  const body = node.namedChildren.filter((c) => c.type === "heredoc_body").map((c) => c.text).join("\n")
  return !/`|\$[([]|\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/.test(body)
}

/**
 * Whether a heredoc's delimiter is one the parser and bash end the heredoc at alike: a word of `[A-Za-z0-9_]`,
 * optionally quoted as a whole with one pair of `'…'` or `"…"`.
 */
const plainDelimiter = (node: Node): boolean => {
  const start = node.namedChildren.find((c) => c.type === "heredoc_start")?.text ?? ""
  return /^(?:[A-Za-z0-9_]+|'[A-Za-z0-9_]+'|"[A-Za-z0-9_]+")$/.test(start)
}

/** Whether a redirection target opens a network connection (bash's `/dev/tcp/host/port`, `/dev/udp/host/port`). */
const network = (target: Word): boolean => /^\/dev\/(tcp|udp)\//.test(target.literal ?? target.loose)

/** What one simple command's parts collect to, and whether allow rules may trust it. */
interface Collected {
  readonly command: SimpleCommand
  readonly ok: boolean
}

/**
 * A simple command from a `command` node and the redirections around it. Its words come from everywhere the grammar
 * puts them: the command's own children, the destinations of a redirection past its target (`git diff 2>/dev/null
 * --no-index …` is one command of four words), the arguments inside a heredoc redirection (`env <<EOF rm x`), and
 * nested redirections, in source order. `ok` is false when allow rules must not match: a node bash may read
 * differently, a heredoc that expands, a target not known before it runs or that opens a connection.
 */
const simpleCommand = (source: string, node: Node, around: ReadonlyArray<Node>): Collected => {
  const wordNodes: Array<{ readonly nodes: Array<Node>; readonly assignment: boolean }> = []
  const writes: Array<Word> = []
  const inputs: Array<Word> = []
  const stdin: Array<string> = []
  let ok = true
  const addWord = (n: Node, assignment: boolean) => {
    const last = wordNodes.at(-1)?.nodes.at(-1)
    if (last !== undefined && !separated(source, last, n) && n.startIndex >= last.endIndex) {
      // bash reads these as one word; the parser did not
      ok = false
      wordNodes.at(-1)!.nodes.push(n)
    } else {
      wordNodes.push({ nodes: [n], assignment })
    }
  }
  // where each redirection target ends: a word that starts there without a blank is, in bash, part of the target
  const targetEnds: Array<number> = []
  const target = (nodes: ReadonlyArray<Node>): { readonly target: Word; readonly rest: ReadonlyArray<Node> } => {
    let end = 1
    while (end < nodes.length && !separated(source, nodes[end - 1]!, nodes[end]!)) end++
    if (end > 1) ok = false
    targetEnds.push(nodes[end - 1]!.endIndex)
    return { target: joinWord(nodes.slice(0, end)), rest: nodes.slice(end) }
  }
  const redirect = (r: Node): Array<Node> => {
    const pending: Array<Node> = []
    if (r.type === "heredoc_redirect") {
      if (!heredocIsInert(r) || !plainDelimiter(r)) ok = false
      stdin.push(r.namedChildren.filter((c) => c.type === "heredoc_body").map((c) => c.text).join("\n"))
      // tree-sitter-bash puts what follows the heredoc operator on its line (`cat <<EOF > out x`) inside it
      for (const child of r.namedChildren) {
        if (REDIRECTS.has(child.type)) pending.push(...redirect(child))
        else if (!HEREDOC_PARTS.has(child.type)) pending.push(child)
      }
      return pending
    }
    const operator = children(r).find((c) => !c.isNamed)?.type ?? ""
    if (r.type === "herestring_redirect") {
      const parts = r.namedChildren
      if (parts.length === 0) return pending
      stdin.push(target(parts).target.loose)
      return [...target(parts).rest]
    }
    const destinations = r.children.filter((c) => c.field === "destination")
    if (operator === ">&-" || operator === "<&-") return [...destinations]
    if (destinations.length === 0) {
      ok = false
      return pending
    }
    const { target: file, rest } = target(destinations)
    const duplication = DUPLICATIONS.has(operator) && /^([0-9]+-?|-)$/.test(destinations[0]!.text) &&
      destinations[0]!.type !== "string"
    if (!duplication) {
      if (file.literal === undefined || network(file)) ok = false
      if (WRITE_OPERATORS.has(operator) || operator === ">&") {
        if (file.literal !== "/dev/null") writes.push(file)
      }
      if (READ_OPERATORS.has(operator) || operator === "<&") inputs.push(file)
    }
    return [...rest]
  }
  const extra: Array<Node> = []
  for (const child of children(node)) {
    if (!child.isNamed) {
      ok = false
      continue
    }
    if (REDIRECTS.has(child.type)) {
      extra.push(...redirect(child))
      continue
    }
    if (child.type === "comment") continue
    addWord(child, child.type === "variable_assignment" && wordNodes.every((w) => w.assignment))
  }
  for (const r of around) extra.push(...redirect(r))
  // words found in redirection nodes go where they stand in the source
  for (const n of extra.sort((a, b) => a.startIndex - b.startIndex)) {
    if (n.type === "comment") continue
    const at = wordNodes.findIndex((w) => w.nodes[0]!.startIndex > n.startIndex)
    if (at === -1) addWord(n, false)
    else {
      ok = false
      wordNodes.splice(at, 0, { nodes: [n], assignment: false })
    }
  }
  // a word glued to a redirection target (`> 's'\\ecrets/k`, read by the parser as the target `'s'` and a word):
  // the target bash opens is not known
  if (wordNodes.some((w) => targetEnds.includes(w.nodes[0]!.startIndex))) {
    ok = false
    writes.splice(0, writes.length, ...writes.map((w) => word(undefined, w.loose)))
    inputs.splice(0, inputs.length, ...inputs.map((w) => word(undefined, w.loose)))
  }
  const assignments = wordNodes.findIndex((w) => !w.assignment)
  const words = wordNodes.map((w) => w.nodes.length === 1 ? assignmentOrWord(w.nodes[0]!) : joinWord(w.nodes))
  const leading = assignments === -1 ? words.length : assignments
  if (words.length === leading) ok = false
  return { command: { words, assignments: leading, writes, inputs, ...(stdin.length > 0 ? { stdin } : {}) }, ok }
}

/** A `NAME=value` word (its value's parts read as one word), or any other word. */
const assignmentOrWord = (node: Node): Word => {
  if (node.type !== "variable_assignment") return wordOf(node)
  const value = node.namedChildren.slice(1)
  const name = node.namedChildren[0]?.text ?? ""
  const parts = value.map(wordOf)
  const literal = parts.every((p) => p.literal !== undefined) && node.namedChildren[0]?.type === "variable_name"
    ? parts.map((p) => p.literal).join("")
    : undefined
  return word(literal === undefined ? undefined : `${name}=${literal}`, `${name}=${parts.map((p) => p.loose).join("")}`)
}

/** The `cat` command of a commit-message heredoc inside a word (see {@link commitMessage}). */
const commitCats = (node: Node, out: Array<SimpleCommand>): void => {
  if (node.type === "string" && commitMessage(node) !== undefined) {
    out.push({ words: [word("cat", "cat")], assignments: 0, writes: [], inputs: [] })
    return
  }
  for (const child of node.namedChildren) commitCats(child, out)
}

/** The top-level simple commands as they are read, with what joins them and the nodes they were read from. */
interface Reduced {
  readonly commands: Array<SimpleCommand>
  readonly joiners: Array<string | undefined>
  /** The simple command read from each `command` node (`collect` reads the same node to the same object). */
  readonly read: Map<Node, SimpleCommand>
  /** The index of the last command read from a node (an operator follows it). */
  last: number
}

/**
 * The top-level simple commands, or `false` when the command is anything more. tree-sitter-bash reads
 * `a && b > f` as `(a && b) > f`; bash gives the redirection to `b`, the simple command it ends: `trailing` carries
 * such redirections down to the last simple command of the list.
 */
const reduce = (source: string, node: Node, out: Reduced, trailing: ReadonlyArray<Node> = []): boolean => {
  const push = (body: Node, redirects: ReadonlyArray<Node>) => {
    const { command, ok } = simpleCommand(source, body, redirects)
    out.last = out.commands.length
    out.commands.push(command)
    out.joiners.push(undefined)
    out.read.set(body, command)
    const cats: Array<SimpleCommand> = []
    commitCats(body, cats)
    for (const cat of cats) {
      out.commands.push(cat)
      out.joiners.push(undefined)
    }
    return ok
  }
  switch (node.type) {
    case "program":
    case "list":
    case "pipeline": {
      const statements = children(node).filter((c) => c.isNamed && c.type !== "comment")
      return children(node).every((child) => {
        if (child.isNamed) {
          return child.type === "comment" || reduce(source, child, out, child === statements.at(-1) ? trailing : [])
        }
        if (!SEPARATORS.has(child.type)) return false
        // the operator follows the last command read (a commit message's `cat` runs inside it)
        if (out.last >= 0) out.joiners[out.last] = child.type
        return true
      })
    }
    case "redirected_statement": {
      const body = childForField(node, "body")
      const redirects = node.namedChildren.filter((c) => c !== body)
      if (body === undefined || !redirects.every((r) => REDIRECTS.has(r.type))) return false
      if (body.type === "list" || body.type === "pipeline") {
        if (node.type === "redirected_statement" && trailing.length > 0) return false
        return reduce(source, body, out, redirects)
      }
      if (body.type !== "command") return false
      return push(body, [...redirects, ...trailing])
    }
    case "command":
      return push(node, trailing)
    default:
      return false
  }
}

/** What one decision's parses share: the deadline of all its parses, and whether a limit was reached. */
interface Budget {
  readonly language: BashLanguage
  readonly deadline: number
  limit: boolean
  /** A parse (of the command or of a script it runs) had an error. */
  broken: boolean
  /** The crude tokens of every parse that had an error, or that bash may read differently. */
  readonly tokens: Array<string>
}

/** The simple commands already read from `command` nodes (so `top` and `all` share them). */
type Read = ReadonlyMap<Node, SimpleCommand>

/**
 * Every simple command of the tree, with the redirections around it, and the strings that `bash -c`, `eval` and
 * the other builtins that run code run, parsed again. Redirections of anything else (`(…) > f`) are kept as a command
 * without words.
 */
const collect = (
  budget: Budget,
  read: Read,
  source: string,
  node: Node,
  depth: number,
  out: Array<SimpleCommand>,
  redirects: ReadonlyArray<Node> = []
): void => {
  // the scripts a node runs, parsed one level deeper (past the nesting limit, the limit is reached)
  const analyzeScripts = (found: ReadonlyArray<string>): void => {
    if (found.length > 0 && depth >= MAX_DEPTH) budget.limit = true
    else for (const script of found) out.push(...analyzeAt(budget, script, depth + 1).all)
  }
  // a simple command found, with the scripts it runs: a shell or `source` given its script by a heredoc or a
  // here-string; code held in assignments
  const found = (command: SimpleCommand): void => {
    out.push(command)
    const words = loose(command)
    analyzeScripts([
      ...scripts(words),
      ...assignedScripts([...command.words, ...command.writes, ...command.inputs].map((w) => w.loose)),
      ...(runsInput(words) ? command.stdin ?? [] : [])
    ])
  }
  // redirections with no `command` node to go with them (`(…) > f`, `$(<f)`, `>/dev/null <<E rm x`, `X=1 <<E rm x`,
  // `<f <f rm x`): tree-sitter-bash then puts the command's words (and assignments) inside the redirections, where
  // bash reads them as the command they are; `keepWords: false` for a list's, which its last command is given
  const redirectionsAlone = (around: ReadonlyArray<Node>, leading: ReadonlyArray<Node>, keepWords: boolean): void => {
    const { command } = simpleCommand(source, { ...node, children: [...leading, ...around] }, [])
    found(keepWords ? command : { ...command, words: [], assignments: 0 })
  }
  if (node.type === "redirected_statement") {
    const body = childForField(node, "body")
    // the redirections handed down (`a && b 2>f`, nested statements) are this statement's too
    const around = [...node.namedChildren.filter((c) => REDIRECTS.has(c.type)), ...redirects]
    if (body?.type === "list" || body?.type === "pipeline") redirectionsAlone(around, [], false)
    else if (body === undefined || (body.type !== "command" && body.type !== "redirected_statement")) {
      redirectionsAlone(around, body?.type === "variable_assignment" ? [body] : [], true)
    }
    for (const child of children(node)) collect(budget, read, source, child, depth, out, child === body ? around : [])
    return
  }
  if (node.type === "command_substitution") {
    // `$(<file)` reads a file and `$(>file)` writes one, with no command: tree-sitter-bash puts the redirection
    // directly in the substitution
    const around = node.namedChildren.filter((c) => REDIRECTS.has(c.type))
    if (around.length > 0) redirectionsAlone(around, [], false)
  }
  if (node.type === "pipeline") {
    // `echo 'rm x' | bash`: what a shell or `source` reads from the pipe may be the words of anything before it
    // (`{ echo …; } | sh`, `! echo … | sh`, `cat <<< '…' | sh`), wherever the shell stands in its part (`… | (sh)`,
    // `… | sh | c && d`, which tree-sitter-bash reads as a list inside the pipeline)
    const parts = node.namedChildren.filter((c) => c.type !== "comment")
    // the commands of every part after the first, read once: to find the last that reads the pipe, then as upstream
    const later = parts.map((part, i) => (i > 0 ? commandsIn(source, part) : []))
    const reading = later.map((commands) => commands.some((c) => runsInput(loose(c)))).lastIndexOf(true)
    if (reading > 0) {
      const first = parts[0] === undefined ? [] : commandsIn(source, parts[0])
      for (const upstream of [...first, ...later.slice(1, reading).flat()]) {
        const args = upstream.words.slice(upstream.assignments + 1).map((w) => w.loose)
        analyzeScripts([args.join(" "), ...args, ...(upstream.stdin ?? [])])
      }
    }
  }
  if (node.type === "command") {
    found(read.get(node) ?? simpleCommand(source, node, redirects).command)
  } else if (node.type === "heredoc_redirect") {
    // an unquoted heredoc's substitutions run; `<<-` bodies are not parsed by tree-sitter-bash, so parse them here
    const start = node.namedChildren.find((c) => c.type === "heredoc_start")?.text ?? ""
    const body = node.namedChildren.filter((c) => c.type === "heredoc_body").map((c) => c.text).join("\n")
    if (!/['"\\]/.test(start) && /`|\$[([]/.test(body)) analyzeScripts([body.replace(/^\t+/gm, "")])
  } else if (node.type === "variable_assignment") {
    // `x='a[$(…)]'` runs the substitution wherever `x` is evaluated as arithmetic
    const found = assignedScripts([assignmentOrWord(node).loose])
    analyzeScripts(found)
  } else if (node.type === "test_command") {
    // `[[ -v 'a[$(…)]' ]]`, `[[ $x -eq 1 ]]`: subscripts in what it evaluates run their substitutions
    const found = assignedScripts(node.namedChildren.flatMap(function texts(c: Node): Array<string> {
      return [c.text.replace(/^['"]|['"]$/g, ""), ...c.namedChildren.flatMap(texts)]
    }))
    analyzeScripts(found)
  } else if (node.type === "declaration_command" || node.type === "unset_command") {
    const words = children(node).map((c) => (c.isNamed ? assignmentOrWord(c) : word(c.type, c.type)))
    out.push({ words, assignments: 0, writes: [], inputs: [] })
    const found = [...scripts(words.map((w) => w.loose)), ...assignedScripts(words.map((w) => w.loose))]
    analyzeScripts(found)
  }
  // `a && b 2>f x`: tree-sitter-bash gives the redirection (and the words after its target) to the list; bash gives
  // them to the last simple command, as `reduce` does for the top level
  const statements = node.type === "list" || node.type === "pipeline"
    ? children(node).filter((c) => c.isNamed && c.type !== "comment")
    : []
  const last = redirects.length > 0 ? statements.at(-1) : undefined
  for (const child of children(node)) {
    collect(budget, read, source, child, depth, out, child === last ? redirects : [])
  }
}

/** A simple command's words from its name on, as written. */
const loose = (command: SimpleCommand): Array<string> => command.words.slice(command.assignments).map((w) => w.loose)

/** Every simple command anywhere under `node` (with the redirections of its statement), for a pipe's upstream. */
const commandsIn = (source: string, node: Node, around: ReadonlyArray<Node> = []): Array<SimpleCommand> => {
  if (node.type === "command") return [simpleCommand(source, node, around).command]
  const body = node.type === "redirected_statement" ? childForField(node, "body") : undefined
  const redirects = body === undefined ? [] : node.namedChildren.filter((c) => REDIRECTS.has(c.type))
  return node.namedChildren.flatMap((child) =>
    commandsIn(source, child, child === body ? [...redirects, ...around] : [])
  )
}

/** Crude tokens of a command: split at blanks, shell metacharacters and commas. */
const tokensOf = (source: string): Array<string> => source.split(/[\s;&|()<>`$'"{},\\]+/).filter((t) => t.length > 0)

/**
 * A command that reached a limit: nothing to allow, every deny and ask rule matches.
 *
 * @internal
 */
export const limited: Analysis = { all: [], top: undefined, limit: true, broken: false, tokens: [] }

/**
 * A command that could not be judged on a parse (the grammar did not load): nothing to allow, and every run of its
 * crude tokens for deny rules.
 *
 * @internal
 */
export const unparsed = (source: string): Analysis =>
  source.length > MAX_COMMAND_LENGTH
    ? limited
    : { all: [], top: undefined, limit: false, broken: true, tokens: tokensOf(source) }

/**
 * Analyses a Bash command with a grammar the caller owns. A command longer than {@link MAX_COMMAND_LENGTH}, or whose
 * parses run past their time, or whose scripts nest deeper than three levels, reached a limit. A command that does
 * not parse cleanly has no `top` (no allow), and its crude tokens are kept for deny rules.
 *
 * @internal
 */
export const analyze = (language: BashLanguage, source: string): Analysis => {
  if (source.length > MAX_COMMAND_LENGTH) return limited
  const budget: Budget = {
    language,
    deadline: performance.now() + PARSE_BUDGET_MS,
    limit: false,
    broken: false,
    tokens: []
  }
  const analysis = analyzeAt(budget, source, 0)
  if (budget.limit) return { ...limited, all: analysis.all }
  return { ...analysis, broken: budget.broken, tokens: budget.tokens }
}

const analyzeAt = (budget: Budget, source: string, depth: number): Analysis => {
  const parsed = analyzeTree(budget, source, depth)
  if (agrees(source)) return parsed
  // bash may read this differently from the tree: no allow, and deny rules also see the command with its line
  // continuations joined (as bash joins them) and its crude tokens
  const joined = source.replace(/\\\r?\n/g, "")
  const again = joined === source ? undefined : analyzeTree(budget, joined, depth)
  budget.tokens.push(...tokensOf(joined))
  return { all: [...parsed.all, ...(again?.all ?? [])], top: undefined, limit: false, broken: false, tokens: [] }
}

/**
 * Whether tree-sitter-bash and bash provably read a command alike: no control character and no blank but space, tab
 * and newline (bash reads CR, VT, FF, NBSP, … as word characters, the parser as blanks), no backslash-newline line
 * continuation (bash joins words, redirection targets and heredoc delimiter lines with it, the parser not always), no
 * backslash-tab (bash keeps the tab in the word, so a `#` after it is no comment; the parser starts one), no heredoc
 * delimiter but a plain word, and no descriptor variable with a subscript.
 */
const agrees = (source: string): boolean =>
  // eslint-disable-next-line no-control-regex -- control characters are what this test looks for
  !/[\x00-\x08\x0b-\x1f\x7f-\x9f]|[^\S \t\n]|\\\r?\n|\\\t/.test(source) && !ODD_HEREDOC.test(source) &&
  !FD_VARIABLE_SUBSCRIPT.test(source)

/**
 * A redirection whose file descriptor is a variable with a subscript (`{a[$_]}>f`): bash evaluates the subscript as
 * arithmetic (running what a value holds); tree-sitter-bash reads the braces as a word.
 */
const FD_VARIABLE_SUBSCRIPT = /\{[A-Za-z_][A-Za-z0-9_]*\[[^}]*\}[<>]/

/**
 * A heredoc operator whose delimiter is not a plain word (optionally quoted whole): bash ends the heredoc at the
 * quote-removed word, tree-sitter-bash at the word as written.
 */
const ODD_HEREDOC = /(?<!<)<<(?!<)(?!-?[ \t]*(?:[A-Za-z0-9_]+|'[A-Za-z0-9_]+'|"[A-Za-z0-9_]+")(?![^\s;&|<>()]))/

const analyzeTree = (budget: Budget, source: string, depth: number): Analysis => {
  // the model writes the command: a parse that runs past the decision's deadline (pathological error recovery) is
  // abandoned, and its parser with it
  const tree = budget.language.parse(source, budget.deadline)
  if (tree === null) {
    budget.limit = true
    return limited
  }
  try {
    let root: Node
    let hasError: boolean
    try {
      hasError = tree.rootNode.hasError
      root = copyTree(tree, source)
    } finally {
      tree.delete()
    }
    const reduced: Reduced = { commands: [], joiners: [], read: new Map(), last: -1 }
    const commands = hasError ? -1 : allowableCommands(source, root)
    const top = commands !== -1 && reduce(source, root, reduced) && commands === reduced.commands.length
    const all: Array<SimpleCommand> = []
    collect(budget, reduced.read, source, root, depth, all)
    if (hasError) {
      budget.broken = true
      budget.tokens.push(...tokensOf(source))
    }
    return top
      ? { all, top: reduced.commands, joiners: reduced.joiners, limit: false, broken: false, tokens: [] }
      : { all, top: undefined, limit: false, broken: false, tokens: [] }
  } catch (error) {
    // a tree nested deeper than the stack (thousands of `$(`) is a limit
    if (error instanceof RangeError) {
      budget.limit = true
      return limited
    }
    throw error
  }
}

/** The words a rule is compared with; `undefined` for a word whose value is not known before it runs. */
type Reading = ReadonlyArray<string | undefined>

/**
 * Whether a rule's content matches a command's words: `prefix:*` compares the leading words one by one, anything else
 * (with `*` wildcards) the words joined by single spaces. A word without a value (`undefined`) never matches.
 *
 * @internal
 */
export const wordsMatch = (content: string, words: Reading): boolean => {
  if (content.endsWith(":*")) {
    const prefix = content.slice(0, -2).split(/\s+/).filter((w) => w.length > 0)
    return prefix.length <= words.length && prefix.every((w, i) => words[i] === w)
  }
  if (words.some((w) => w === undefined)) return false
  const escaped = content.trim().split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")
  return new RegExp(`^${escaped}$`, "s").test(words.join(" "))
}

/**
 * How many leading words a rule names for sure: a `prefix:*` rule its prefix, a rule with `*` wildcards its words
 * before the first `*`, an exact rule every word (`Infinity`).
 */
const namedWords = (content: string): number => {
  if (content.endsWith(":*")) return content.slice(0, -2).split(/\s+/).filter((w) => w.length > 0).length
  const star = content.indexOf("*")
  if (star === -1) return Infinity
  return content.slice(0, star).split(/\s+/).filter((w) => w.length > 0).length -
    (/\S$/.test(content.slice(0, star)) ? 1 : 0)
}

/**
 * Whether an allow rule's content matches a simple command: the literal words, assignments included, and the rule
 * names at least `reach` leading words (see `allowReach` in `shellPrograms.ts`: a wrapper and what it runs, every word
 * of a builtin that runs code).
 *
 * @internal
 */
export const allowMatches = (content: string, command: SimpleCommand, reach: number): boolean =>
  namedWords(content) >= reach && wordsMatch(content, command.words.map((w) => w.literal))

/**
 * Whether a deny (or ask) rule's content matches a simple command, erring on the side of matching: the words as
 * written, without the leading assignments, with the command's basename (`/bin/rm` as `rm`), and every suffix of the
 * words of a wrapper (`sudo`, `env`, `xargs`, `time`, …) or after a `find -exec`.
 *
 * @internal
 */
export const denyMatches = (content: string, command: SimpleCommand): boolean => {
  const loose = command.words.map((w) => w.loose)
  const words = loose.slice(command.assignments)
  if (words.length === 0) return false
  return [loose, words, words.flatMap(expandBraces)].some((ws) =>
    denyCandidates(ws, MAX_RUN).some((c) => wordsMatch(content, c))
  )
}

/**
 * Whether a deny (or ask) rule's content matches a run of crude tokens: its words (with `*` wildcards) as a run of
 * whole tokens anywhere, the tokens read as written and as their basenames (`/bin/rm` as `rm`). One scan of the
 * joined tokens, however many there are.
 *
 * @internal
 */
export const tokensMatch = (content: string, tokens: ReadonlyArray<string>): boolean => {
  if (tokens.length === 0) return false
  const words = content.endsWith(":*") ? content.slice(0, -2) : content
  const pattern = words.trim().split(/\s+/).join(" ").split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*")
  const run = new RegExp(`(?:^| )${pattern}(?= |$)`, "s")
  return run.test(tokens.join(" ")) || run.test(tokens.map(basename).join(" "))
}

/** How many words one brace expansion may make, for deny rules (bash has no limit; a rule needs only the first). */
const MAX_BRACE_WORDS = 64

/** Brace expansion of a word as bash does it for a literal list `{a,b}` (bounded); other words unchanged. */
const expandBraces = (w: string): Array<string> => {
  const out: Array<string> = []
  const expand = (s: string): void => {
    if (out.length >= MAX_BRACE_WORDS) return
    const m = /\{([^{}]*,[^{}]*)\}/.exec(s)
    if (m === null) {
      out.push(s)
      return
    }
    for (const part of m[1]!.split(",")) expand(s.slice(0, m.index) + part + s.slice(m.index + m[0].length))
  }
  expand(w)
  return out.filter((x) => x.length > 0)
}

/**
 * PowerShell has no parser here: an allow rule matches only a command of plain words (letters, digits and
 * `-_./:=,+\`), split at whitespace; a deny rule matches any run of its tokens, split at whitespace and PowerShell
 * metacharacters.
 *
 * @internal
 */
export const powerShell = (source: string): Analysis => {
  const plain = /^[A-Za-z0-9_\-./:=,+\\ \t]+$/.test(source)
  const words = source.trim().split(/[ \t]+/).map((w) => word(w, w))
  const command: SimpleCommand = { words, assignments: 0, writes: [], inputs: [] }
  return {
    all: [command],
    top: plain && source.trim().length > 0 ? [command] : undefined,
    limit: false,
    broken: !plain,
    tokens: tokensOf(source)
  }
}
