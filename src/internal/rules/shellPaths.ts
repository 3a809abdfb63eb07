/**
 * The file system as a Bash command's paths meet it at decision time: pathname expansion as bash does it by default
 * (no `dotglob`, `globstar`, `extglob` or `nocaseglob`), and hard links (a file with more than one name).
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** How many directory entries one glob or one inode search may read before it gives up. */
const MAX_ENTRIES = 10_000

/** A bracket expression's POSIX classes. */
const CLASSES: Readonly<Record<string, string>> = {
  alpha: "A-Za-z",
  digit: "0-9",
  alnum: "A-Za-z0-9",
  upper: "A-Z",
  lower: "a-z",
  space: " \\t\\n\\r\\f\\v",
  blank: " \\t",
  punct: "!-\\/:-@\\[-`{-~",
  xdigit: "0-9A-Fa-f",
  word: "A-Za-z0-9_",
  cntrl: "\\x00-\\x1f\\x7f",
  print: " -~",
  graph: "!-~"
}

const escapeRegExp = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")

/** One path segment of a glob as a regular expression, or `undefined` when it has no unquoted glob character. */
const segmentRegExp = (segment: string): RegExp | undefined => {
  let out = ""
  let glob = false
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!
    if (c === "\\") {
      out += escapeRegExp(segment[++i] ?? "\\")
    } else if (c === "*") {
      glob = true
      out += ".*"
    } else if (c === "?") {
      glob = true
      out += "."
    } else if (c === "[") {
      const close = bracketEnd(segment, i)
      if (close === -1) {
        out += "\\["
        continue
      }
      glob = true
      out += bracket(segment.slice(i + 1, close))
      i = close
    } else out += escapeRegExp(c)
  }
  return glob ? new RegExp(`^${out}$`, "s") : undefined
}

/** Where a bracket expression that starts at `open` ends (`]` first, or after `!`/`^`, is a member), or -1. */
const bracketEnd = (s: string, open: number): number => {
  let i = open + 1
  if (s[i] === "!" || s[i] === "^") i++
  if (s[i] === "]") i++
  for (; i < s.length; i++) {
    if (s[i] === "[" && s[i + 1] === ":") {
      const end = s.indexOf(":]", i + 2)
      if (end !== -1) i = end + 1
    } else if (s[i] === "]") return i
  }
  return -1
}

const bracket = (body: string): string => {
  let negate = false
  let i = 0
  if (body[0] === "!" || body[0] === "^") {
    negate = true
    i = 1
  }
  let members = ""
  for (; i < body.length; i++) {
    const c = body[i]!
    if (c === "[" && body[i + 1] === ":") {
      const end = body.indexOf(":]", i + 2)
      members += CLASSES[body.slice(i + 2, end)] ?? ""
      i = end + 1
    } else if (c === "-" && members.length > 0 && i + 1 < body.length) members += "-"
    else if (c === "\\") members += escapeRegExp(body[++i] ?? "\\")
    else members += escapeRegExp(c)
  }
  return `[${negate ? "^" : ""}${members}]`
}

/**
 * `p` made absolute from `dir` as the kernel resolves it: a `..` goes up from where the path so far really is (after
 * `out/link/..` the path is the link target's parent, not `out`). Without a `..`, the lexical resolution.
 *
 * @internal
 */
export const resolvePhysical = (dir: string, p: string): string => {
  if (!p.split("/").includes("..")) return path.resolve(dir, p)
  let current = p.startsWith("/") ? "/" : path.resolve(dir)
  for (const segment of p.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment !== "..") {
      current = path.join(current, segment)
      continue
    }
    let real = current
    try {
      real = fs.realpathSync(current)
    } catch {
      // a component that does not exist: the kernel fails the whole path; the lexical parent stands in
    }
    current = path.dirname(real)
  }
  return current
}

/** Removes the backslashes that quote characters of a glob. */
export const unquoteGlob = (pattern: string): string => pattern.replace(/\\(.)/gs, "$1")

/**
 * The paths a glob expands to, relative to `cwd` when it is relative (as bash expands it now: without `dotglob`,
 * a `*` or `?` does not match a leading dot; `**` is `*`); an empty list when nothing matches (bash then passes the
 * word unchanged). `undefined` when the expansion would read more than {@link MAX_ENTRIES} entries.
 *
 * @internal
 */
export const expandGlob = (pattern: string, cwd: string): ReadonlyArray<string> | undefined => {
  // collating symbols and equivalence classes (`[[.t.]]`, `[[=t=]]`) depend on the locale: not expanded here
  if (/\[[.=]/.test(pattern)) return undefined
  const absolute = pattern.startsWith("/")
  const segments = pattern.split("/").filter((s, i) => s.length > 0 || i === 0)
  let matches: Array<string> = [absolute ? "/" : ""]
  let budget = MAX_ENTRIES
  for (const segment of absolute ? segments.slice(1) : segments) {
    const regexp = segmentRegExp(segment)
    const next: Array<string> = []
    for (const base of matches) {
      if (regexp === undefined) {
        next.push(base === "" ? unquoteGlob(segment) : path.join(base, unquoteGlob(segment)))
        continue
      }
      let entries: Array<string>
      try {
        entries = fs.readdirSync(path.resolve(cwd, base || "."))
      } catch {
        continue
      }
      budget -= entries.length
      if (budget < 0) return undefined
      const dotOk = segment.startsWith(".") || segment.startsWith("\\.")
      for (const entry of entries) {
        if (entry.startsWith(".") && !dotOk) continue
        if (regexp.test(entry)) next.push(base === "" ? entry : path.join(base, entry))
      }
    }
    matches = next
    if (matches.length === 0) return []
  }
  return matches.filter((m) => {
    try {
      fs.lstatSync(path.resolve(cwd, m))
      return true
    } catch {
      return false
    }
  })
}

/**
 * The identity of an existing regular file that has more than one name (a hard link), or `undefined`.
 *
 * @internal
 */
export const multiplyLinked = (file: string): { readonly dev: number; readonly ino: number } | undefined => {
  try {
    const stat = fs.statSync(file)
    return stat.isFile() && stat.nlink > 1 ? { dev: stat.dev, ino: stat.ino } : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a file with this identity has a name under `root` (symlinks not followed): `undefined` when the search
 * would read more than {@link MAX_ENTRIES} entries.
 *
 * @internal
 */
export const hasNameUnder = (
  root: string,
  id: { readonly dev: number; readonly ino: number }
): boolean | undefined => {
  let budget = MAX_ENTRIES
  const visit = (dir: string): boolean | undefined => {
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return false
    }
    budget -= entries.length
    if (budget < 0) return undefined
    for (const entry of entries) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        const found = visit(full)
        if (found !== false) return found
      } else if (entry.isFile()) {
        try {
          const stat = fs.lstatSync(full)
          if (stat.dev === id.dev && stat.ino === id.ino) return true
        } catch {
          // gone meanwhile
        }
      }
    }
    return false
  }
  try {
    const stat = fs.lstatSync(root)
    if (stat.isFile()) return stat.dev === id.dev && stat.ino === id.ino
    if (!stat.isDirectory()) return false
  } catch {
    return false
  }
  return visit(root)
}
