// Property test: the words the rules read from a simple command are the words bash passes. Random simple commands
// (words quoted every way bash accepts, redirections at random positions, with or without a blank before them,
// heredocs and here-strings) are run by bash with a function that prints its arguments; whenever the matcher reads
// a command as one an allow rule could match, its words (after quote removal) must be bash's, and its write targets
// the files bash wrote.
import { expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { load } from "../src/internal/rules/bashParser.js"
import { analyze } from "../src/internal/rules/shellRules.js"
import { type Rng, rng } from "./support/bashFuzz.js"

const WORDS = [
  "a",
  "-n",
  "--no-index",
  "--output=X",
  "x y",
  "it's",
  "a\"b",
  "$HOME",
  "*",
  "~",
  "-exec",
  ";",
  "2",
  "1x",
  "é"
]

const quoteWord = (r: Rng, w: string): string => {
  const plain = /^[A-Za-z0-9_=.,+-]+$/.test(w)
  switch (r.int(plain ? 6 : 4)) {
    case 0:
      return `'${w.replace(/'/g, "'\\''")}'`
    case 1:
      return `"${w.replace(/["\\$`]/g, "\\$&")}"`
    case 2:
      return w.replace(/[^A-Za-z0-9_]/g, "\\$&")
    case 3: {
      const cut = r.int(w.length + 1)
      return `'${w.slice(0, cut).replace(/'/g, "'\\''")}'"${w.slice(cut).replace(/["\\$`]/g, "\\$&")}"`
    }
    default:
      return w
  }
}

const REDIRECTS = [
  ">o1",
  "2>/dev/null",
  "<data",
  ">&2",
  "2>&1",
  "<<<w",
  ">>o2",
  "1>o3",
  "&>o4",
  "2>o5",
  "<data",
  ">|o6"
]

/** A random simple command named `f`, and the words bash should pass it. */
const render = (
  r: Rng
): { readonly text: string; readonly words: ReadonlyArray<string>; readonly files: Array<string> } => {
  const words = Array.from({ length: r.int(5) }, () => r.pick(WORDS))
  const parts: Array<string> = ["f", ...words.map((w) => quoteWord(r, w))]
  const files: Array<string> = []
  let heredoc = ""
  const count = r.int(4)
  for (let i = 0; i < count; i++) {
    const at = r.int(parts.length + 1)
    if (r.chance(0.15) && heredoc === "") {
      parts.splice(at, 0, r.pick(["<<EOF", "<<'EOF'", "<<-EOF"]))
      heredoc = "\nbody\nEOF"
    } else {
      const redirect = r.pick(REDIRECTS)
      const file = /^[0-9&]*>[>|]?([a-z0-9]+)$/.exec(redirect)?.[1]
      if (file !== undefined) files.push(file)
      parts.splice(at, 0, redirect)
    }
  }
  // a redirection may follow a word without a blank, unless that would make it part of the word
  const text = parts.reduce((acc, part, i) => {
    if (i === 0) return part
    const glue = /^[<>&]/.test(part) && !/[0-9]$/.test(acc) && r.chance(0.3) ? "" : " "
    return acc + glue + part
  }, "")
  return { text: text + heredoc, words, files: [...new Set(files)] }
}

it("the words and write targets read from a simple command are bash's own", async () => {
  const language = await load()
  const r = rng(20_251_129)
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashwords-")))
  let judged = 0
  const cases = 300
  try {
    fs.writeFileSync(path.join(dir, "data"), "data\n")
    for (let i = 0; i < cases; i++) {
      const { text } = render(r)
      const analysis = analyze(language, text)
      if (analysis.top === undefined) continue
      judged++
      for (const f of fs.readdirSync(dir)) if (f !== "data") fs.rmSync(path.join(dir, f))
      const result = spawnSync("bash", ["-c", `f() { [ $# -eq 0 ] || printf '%s\\0' "$@" >&3; }\n${text}`], {
        cwd: dir,
        stdio: ["pipe", "ignore", "ignore", "pipe"],
        input: "",
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: "/home/nobody", LC_ALL: "C.UTF-8" }
      })
      const printed = String(result.output[3] ?? "").split("\0").slice(0, -1)
      const [command] = analysis.top
      const read = command!.words.map((w) => w.literal ?? `<${w.loose}>`)
      expect([text, read]).toEqual([text, ["f", ...printed]])
      const written = fs.readdirSync(dir).filter((f) => f !== "data").sort()
      expect([text, [...new Set(command!.writes.map((w) => w.literal))].sort()]).toEqual([text, written])
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  // most commands are read as bash reads them, not just set aside
  expect(judged).toBeGreaterThan(cases * 0.6)
}, 120_000)
