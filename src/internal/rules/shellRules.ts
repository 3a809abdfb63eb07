/**
 * What a Bash command runs, read from tree-sitter-bash's syntax tree: the simple commands it is made of, their words
 * after quote removal, and where they write. Permission rules are matched against this, never against the raw
 * string. The parser itself is loaded lazily (see `bashParser.ts`); this module only reads trees.
 *
 * @internal
 */
/// <reference path="./emscripten.d.ts" />
import type { Parser, Tree } from "web-tree-sitter"

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
 * A word of a simple command: its value after quote removal when it is a literal, and a best-effort reading.
 *
 * @internal
 */
export interface Word {
  /** The value bash passes, when no expansion can change it (no parameter, glob, brace, tilde or `$'…'`). */
  readonly literal: string | undefined
  /** The same with expansions left as written: for deny rules, which err on the side of matching. */
  readonly loose: string
}

/**
 * One simple command: its words (leading `NAME=value` assignments included) and its write redirections.
 *
 * @internal
 */
export interface SimpleCommand {
  readonly words: ReadonlyArray<Word>
  /** How many leading words are `NAME=value` assignments. */
  readonly assignments: number
  /** The targets of redirections that write a file (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>& file`), not `/dev/null`. */
  readonly writes: ReadonlyArray<Word>
}

/** A command as the rules see it. @internal */
export interface Analysis {
  /**
   * Every simple command anywhere: in substitutions, subshells, functions, control structures, heredocs, and in the
   * strings given to `bash -c`, `sh -c` and `eval`. Deny and ask rules match any of them.
   */
  readonly all: ReadonlyArray<SimpleCommand>
  /**
   * The simple commands joined by `&&`, `||`, `;`, `|`, `|&` and newlines that make up the whole command, when it is
   * only that and runs nothing else: otherwise `undefined`, and no allow rule can match it.
   */
  readonly top: ReadonlyArray<SimpleCommand> | undefined
  /** Whether a redirection may write somewhere other than it reads (after a `cd`): deny Write rules then match. */
  readonly writesUnknown?: boolean
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
const DUPLICATIONS: ReadonlySet<string> = new Set([">&", "<&", ">&-", "<&-"])

/** Commands that run the command in their arguments: deny rules also look at every suffix of their words. */
const WRAPPERS: ReadonlySet<string> = new Set([
  "builtin",
  "chroot",
  "command",
  "coproc",
  "doas",
  "env",
  "exec",
  "ionice",
  "nice",
  "nohup",
  "setsid",
  "stdbuf",
  "sudo",
  "time",
  "timeout",
  "watch",
  "xargs"
])
const EXEC_FLAGS: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const SHELLS: ReadonlySet<string> = new Set(["bash", "sh", "zsh", "dash", "ksh", "mksh", "busybox"])

/** How long one parse may run before the command counts as one that does not parse. */
const PARSE_BUDGET_MS = 200

/** How deep `bash -c '…'` / `eval …` strings are parsed again for deny rules. */
const MAX_DEPTH = 3

const children = (node: Node): ReadonlyArray<Node> => node.children

/** Removes backslash escapes of an unquoted word; `\<newline>` disappears. */
const unescapeUnquoted = (text: string): string => text.replace(/\\(\n|.)/gs, (_, c: string) => (c === "\n" ? "" : c))

/** Inside double quotes, `\` escapes only `$`, `` ` ``, `"`, `\` and a newline. */
const unescapeDouble = (text: string): string => text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c))

/** An unquoted word that bash would expand: globs, braces, a leading tilde, extglob parentheses. */
const expands = (raw: string): boolean => /(^|[^\\])[*?[\]{}()]/.test(raw) || raw.startsWith("~")

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

const word = (literal: string | undefined, loose: string): Word => ({ literal, loose })

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
      return word(expands(text) ? undefined : value, value)
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
      for (const part of node.namedChildren) {
        const w = wordOf(part)
        literal = literal === undefined || w.literal === undefined ? undefined : literal + w.literal
        loose += w.loose
      }
      return word(literal, loose)
    }
    default:
      return word(undefined, text)
  }
}

/** A parameter expansion that only reads a variable: `${NAME}`, `${1}`, `${@}` (no operators, no subscripts). */
const plainExpansion = (node: Node): boolean => /^\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}$/.test(node.text)

/**
 * How many `command` nodes the tree holds, or -1 when it holds anything an allowed command may not hold (one walk
 * for both: crossing into the parser's memory is the cost of a decision).
 */
const allowableCommands = (source: string, node: Node): number => {
  if (node.isMissing) return -1
  if (node.isNamed) {
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

/** Whether two adjacent words are really separate in bash (not joined by a line continuation). */
const separated = (source: string, left: Node, right: Node): boolean =>
  /[ \t]/.test(source.slice(left.endIndex, right.startIndex).replace(/\\\n/g, ""))

const REDIRECTS: ReadonlySet<string> = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"])

/** The write target of a redirection, if it writes a file other than `/dev/null`. */
const writeOf = (redirect: Node): Word | undefined | "none" => {
  if (redirect.type !== "file_redirect") return "none"
  const operator = children(redirect).find((c) => !c.isNamed)?.type ?? ""
  if (operator === ">&-" || operator === "<&-") return "none"
  const destination = childForField(redirect, "destination") ?? redirect.namedChildren.at(-1)
  if (destination === undefined) return undefined
  const target = wordOf(destination)
  if (DUPLICATIONS.has(operator)) {
    return /^([0-9]+-?|-)$/.test(destination.text) && destination.type !== "string" ? "none" : target
  }
  if (!WRITE_OPERATORS.has(operator)) return "none"
  return target.literal === "/dev/null" ? "none" : target
}

const HEREDOC_PARTS: ReadonlySet<string> = new Set(["heredoc_start", "heredoc_body", "heredoc_end"])

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

/** A simple command from a `command` node and the redirections around it; `ok` is false when allow must not match. */
const simpleCommand = (
  source: string,
  node: Node,
  redirects: ReadonlyArray<Node>
): { readonly command: SimpleCommand; readonly ok: boolean } => {
  const words: Array<Word> = []
  const writes: Array<Word> = []
  let assignments = 0
  let ok = true
  let previous: Node | undefined
  const redirect = (r: Node): void => {
    if (r.type === "heredoc_redirect") {
      if (!heredocIsInert(r) || !plainDelimiter(r)) ok = false
      // tree-sitter-bash puts what follows the heredoc operator on its line (`cat <<EOF > out | sh`) inside it
      for (const child of r.namedChildren) {
        if (REDIRECTS.has(child.type)) redirect(child)
        else if (!HEREDOC_PARTS.has(child.type)) ok = false
      }
      return
    }
    const target = writeOf(r)
    if (target === undefined) ok = false
    else if (target !== "none") writes.push(target)
  }
  for (const child of children(node)) {
    if (!child.isNamed) {
      ok = false
      continue
    }
    if (REDIRECTS.has(child.type)) {
      redirect(child)
      continue
    }
    if (child.type === "comment") continue
    if (previous !== undefined && !separated(source, previous, child)) ok = false
    previous = child
    if (child.type === "variable_assignment") {
      assignments++
      const value = child.namedChildren.slice(1)
      const name = child.namedChildren[0]?.text ?? ""
      const parts = value.map(wordOf)
      const literal = parts.every((p) => p.literal !== undefined) ? parts.map((p) => p.literal).join("") : undefined
      const loose = `${name}=${parts.map((p) => p.loose).join("")}`
      words.push(word(literal === undefined ? undefined : `${name}=${literal}`, loose))
      continue
    }
    words.push(wordOf(child))
  }
  redirects.forEach(redirect)
  if (words.length === assignments) ok = false
  return { command: { words, assignments, writes }, ok }
}

/** The top-level simple commands, or `undefined` when the command is anything more. */
const reduce = (source: string, node: Node, out: Array<SimpleCommand>): boolean => {
  switch (node.type) {
    case "program":
    case "list":
    case "pipeline":
      return children(node).every((child) =>
        child.isNamed
          ? child.type === "comment" || reduce(source, child, out)
          : SEPARATORS.has(child.type)
      )
    case "redirected_statement": {
      const body = childForField(node, "body")
      if (body === undefined || body.type !== "command") return false
      const redirects = node.namedChildren.filter((c) => c !== body)
      if (!redirects.every((r) => REDIRECTS.has(r.type))) return false
      const { command, ok } = simpleCommand(source, body, redirects)
      out.push(command)
      return ok
    }
    case "command": {
      const { command, ok } = simpleCommand(source, node, [])
      out.push(command)
      return ok
    }
    default:
      return false
  }
}

const basename = (s: string) => s.slice(s.lastIndexOf("/") + 1)

/**
 * The strings a simple command gives a shell or `eval` to run, wherever the shell or `eval` stands in it (behind
 * `env`, `exec`, `xargs`, `find -exec`, …), with a `--` before the script skipped; for deny rules, so it errs on the
 * side of finding one.
 */
const scripts = (command: SimpleCommand): Array<string> => {
  const words = command.words.slice(command.assignments).map((w) => w.loose)
  const found: Array<string> = []
  words.forEach((w, i) => {
    const name = basename(w)
    if (name === "eval") {
      const rest = words.slice(i + 1)
      found.push((rest[0] === "--" ? rest.slice(1) : rest).join(" "))
    } else if (SHELLS.has(name)) {
      const flag = words.findIndex((f, j) => j > i && /^-[a-zA-Z]*c/.test(f))
      if (flag > 0) {
        const script = words[flag + 1] === "--" ? words[flag + 2] : words[flag + 1]
        if (script !== undefined) found.push(script)
      }
    }
  })
  return found
}

/**
 * Every simple command of the tree, with the redirections around it, and the strings that `bash -c` and `eval` run,
 * parsed again. Redirections of anything else (`(…) > f`) are kept as a command without words.
 */
const collect = (
  parser: Parser,
  source: string,
  node: Node,
  depth: number,
  out: Array<SimpleCommand>,
  redirects: ReadonlyArray<Node> = []
): void => {
  if (node.type === "redirected_statement") {
    const body = childForField(node, "body")
    const around = node.namedChildren.filter((c) => REDIRECTS.has(c.type))
    if (body === undefined || body.type !== "command") {
      const writes = around.map(writeOf).map((w) => (w === undefined ? word(undefined, "") : w))
      out.push({ words: [], assignments: 0, writes: writes.filter((w) => w !== "none") })
    }
    for (const child of children(node)) collect(parser, source, child, depth, out, child === body ? around : [])
    return
  }
  if (node.type === "command") {
    const { command } = simpleCommand(source, node, redirects)
    out.push(command)
    if (depth < MAX_DEPTH) {
      for (const script of scripts(command)) out.push(...analyze(parser, script, depth + 1).all)
    }
  } else if (node.type === "heredoc_redirect" && depth < MAX_DEPTH) {
    // an unquoted heredoc's substitutions run; `<<-` bodies are not parsed by tree-sitter-bash, so parse them here
    const start = node.namedChildren.find((c) => c.type === "heredoc_start")?.text ?? ""
    const body = node.namedChildren.filter((c) => c.type === "heredoc_body").map((c) => c.text).join("\n")
    if (!/['"\\]/.test(start) && /`|\$\(/.test(body)) {
      out.push(...analyze(parser, body.replace(/^\t+/gm, ""), depth + 1).all)
    }
  } else if (node.type === "declaration_command" || node.type === "unset_command") {
    out.push({
      words: children(node).map((c) => (c.isNamed ? wordOf(c) : word(c.type, c.type))),
      assignments: 0,
      writes: []
    })
  }
  for (const child of children(node)) collect(parser, source, child, depth, out)
}

/**
 * How many words a derived candidate command keeps (a run of crude tokens, the words after a wrapper): enough for any
 * rule, and it keeps the number of words compared linear in the command's length.
 */
const MAX_RUN = 64

/** Crude tokens of a command that does not parse: each run of tokens is a candidate command for deny rules. */
const tokenCommands = (source: string): Array<SimpleCommand> => {
  const tokens = source.split(/[\s;&|()<>`$'"{},\\]+/).filter((t) => t.length > 0).map((t) => word(undefined, t))
  return tokens.map((_, i) => ({ words: tokens.slice(i, i + MAX_RUN), assignments: 0, writes: [] }))
}

/**
 * A command that could not be parsed: nothing to allow, and every run of its crude tokens for deny rules.
 *
 * @internal
 */
export const unparsed = (source: string): Analysis => ({ all: tokenCommands(source), top: undefined })

/**
 * Analyses a Bash command. A command that does not parse cleanly has no `top` (no allow), and its `all` holds what
 * the error-tolerant parse found plus every run of its crude tokens (so deny rules still match).
 *
 * @internal
 */
export const analyze = (parser: Parser, source: string, depth = 0): Analysis => {
  const parsed = analyzeTree(parser, source, depth)
  const moved = changesDirectoryBeforeWrite(parsed.all)
  if (agrees(source)) {
    const top = parsed.top !== undefined && changesDirectoryBeforeWrite(parsed.top) ? undefined : parsed.top
    return { all: parsed.all, top, writesUnknown: moved }
  }
  // bash may read this differently from the tree: no allow, and deny rules also see the command with its line
  // continuations joined (as bash joins them) and every run of its crude tokens
  const joined = source.replace(/\\\r?\n/g, "")
  const again = joined === source ? [] : analyzeTree(parser, joined, depth).all
  return {
    all: [...parsed.all, ...again, ...tokenCommands(joined)],
    top: undefined,
    writesUnknown: moved || changesDirectoryBeforeWrite(again)
  }
}

/**
 * Whether tree-sitter-bash and bash provably read a command alike: no control character and no blank but space, tab
 * and newline (bash reads CR, VT, FF, NBSP, … as word characters, the parser as blanks), no backslash-newline line
 * continuation (bash joins words, redirection targets and heredoc delimiter lines with it, the parser not always),
 * and no heredoc delimiter but a plain word.
 */
const agrees = (source: string): boolean =>
  // eslint-disable-next-line no-control-regex -- control characters are what this test looks for
  !/[\x00-\x08\x0b-\x1f\x7f-\x9f]|[^\S \t\n]|\\\r?\n/.test(source) && !ODD_HEREDOC.test(source)

/**
 * A heredoc operator whose delimiter is not a plain word (optionally quoted whole): bash ends the heredoc at the
 * quote-removed word, tree-sitter-bash at the word as written.
 */
const ODD_HEREDOC = /(?<!<)<<(?!<)(?!-?[ \t]*(?:[A-Za-z0-9_]+|'[A-Za-z0-9_]+'|"[A-Za-z0-9_]+")(?![^\s;&|<>()]))/

const DIRECTORY_CHANGES: ReadonlySet<string> = new Set(["cd", "pushd", "popd"])

/**
 * Whether a command changes the directory and writes with a redirection: the target may then not be where it looks.
 * Order is not considered (a redirection around a list comes before the list in the tree), which errs on caution.
 */
const changesDirectoryBeforeWrite = (commands: ReadonlyArray<SimpleCommand>): boolean =>
  commands.some((c) => c.writes.length > 0) &&
  commands.some((c) =>
    c.words.slice(c.assignments).some((w, i, ws) =>
      DIRECTORY_CHANGES.has(basename(w.loose)) && (i === 0 || WRAPPERS.has(basename(ws[0]!.loose)))
    )
  )

const analyzeTree = (parser: Parser, source: string, depth: number): Analysis => {
  // the model writes the command: a parse that takes too long (pathological error recovery) is abandoned
  const deadline = performance.now() + PARSE_BUDGET_MS
  const tree = parser.parse(source, null, { progressCallback: () => performance.now() > deadline })
  if (tree === null) return unparsed(source)
  try {
    let root: Node
    let hasError: boolean
    try {
      hasError = tree.rootNode.hasError
      root = copyTree(tree, source)
    } finally {
      tree.delete()
    }
    const all: Array<SimpleCommand> = []
    collect(parser, source, root, depth, all)
    if (hasError) return { all: [...all, ...tokenCommands(source)], top: undefined }
    const top: Array<SimpleCommand> = []
    const commands = allowableCommands(source, root)
    const reduced = commands !== -1 && reduce(source, root, top) && commands === top.length
    return { all, top: reduced ? top : undefined }
  } catch (error) {
    // a tree nested deeper than the stack (thousands of `$(`) is read as a command that does not parse
    if (error instanceof RangeError) return unparsed(source)
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

/** Whether an allow rule's content matches a simple command: the literal words, assignments included. @internal */
export const allowMatches = (content: string, command: SimpleCommand): boolean =>
  wordsMatch(content, command.words.map((w) => w.literal))

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
    wrapperCandidates(ws).some((c) => wordsMatch(content, c))
  )
}

/**
 * The commands a deny rule is compared with for one reading of a command's words: the words, the same with the
 * command's basename, and every suffix after a wrapper or a `find -exec` (wrappers behind `-exec` too), each also with
 * its words split at blanks (`env -S 'rm x'`).
 */
const wrapperCandidates = (words: ReadonlyArray<string>): Array<ReadonlyArray<string>> => {
  if (words.length === 0) return []
  const candidates: Array<ReadonlyArray<string>> = [words, [basename(words[0]!), ...words.slice(1)]]
  let runs = WRAPPERS.has(basename(words[0]!))
  words.forEach((w, i) => {
    if (i > 0 && EXEC_FLAGS.has(words[i - 1]!)) runs = true
    if (i > 0 && runs) {
      const rest = [basename(w), ...words.slice(i + 1, i + MAX_RUN)]
      candidates.push(rest, rest.flatMap((r) => r.split(/\s+/).filter((t) => t.length > 0)))
    }
  })
  return candidates
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
  const command: SimpleCommand = { words, assignments: 0, writes: [] }
  return { all: [command, ...tokenCommands(source)], top: plain && source.trim().length > 0 ? [command] : undefined }
}
