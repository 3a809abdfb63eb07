import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bash, decide, type Spec } from "./support/rules.js"

// Bypasses of the Bash permission rules found by red-teaming the tree-sitter-bash reduction. Each case is one that bash
// reads differently from the tree: the rules must not allow it (allow side) or must match it (deny side).

/** What a command leaves behind when bash runs it in an empty directory. */
const leftBehind = (command: string): Array<string> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-redteam-"))
  try {
    try {
      execFileSync("bash", ["-c", command], { cwd: dir, stdio: "ignore", input: "", timeout: 10_000 })
    } catch {
      // only what it left behind counts
    }
    return fs.readdirSync(dir)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// each of these runs `touch X` (or writes a file) in bash, under an allow list that names only the first command
const allowBypasses: ReadonlyArray<readonly [Spec, string]> = [
  // `\<CR><LF>`: tree-sitter-bash reads a line continuation, bash an escaped CR and then a newline
  [{ allow: ["Bash(echo:*)"] }, "echo hi \\\r\ntouch X"],
  [{ allow: ["Bash(npm test:*)"] }, "npm test \\\r\nbash -c 'touch X'"],
  [{ allow: ["Bash(ls:*)"] }, "ls \\\r\ntouch X"],
  // a `#` after CR / VT / FF or after a line continuation starts a comment in the tree, but continues a word in bash
  [{ allow: ["Bash(echo:*)"] }, "echo a\r#; touch X"],
  [{ allow: ["Bash(echo:*)"] }, "echo a\v#; touch X"],
  [{ allow: ["Bash(echo:*)"] }, "echo a\f#; touch X"],
  [{ allow: ["Bash(git status)"] }, "git status\r#; touch X"],
  [{ allow: ["Bash(echo:*)"] }, "echo a\\\n#; touch X"],
  [{ allow: ["Bash(npm test:*)"] }, "npm test a\\\n#; touch X"],
  // heredoc delimiters: bash ends the heredoc at the quote-removed word, tree-sitter-bash at the word as written
  [{ allow: ["Bash(cat:*)"] }, "cat <<E'O'F\nhi\nEOF\ntouch X\nE'O'F\n"],
  [{ allow: ["Bash(cat:*)"] }, "cat <<E\"O\"F\nhi\nEOF\ntouch X\nE\"O\"F\n"],
  [{ allow: ["Bash(cat:*)"] }, "cat <<EOF''\nhi\nEOF\ntouch X\nEOF''\n"],
  [{ allow: ["Bash(cat:*)"] }, "cat <<$'EOF'\nhi\nEOF\ntouch X\n$'EOF'\n"],
  [{ allow: ["Bash(cat:*)"] }, "cat <<$\"EOF\"\nhi\nEOF\ntouch X\n$\"EOF\"\n"],
  [{ allow: ["Bash(cat:*)"] }, "cat <<-E'OF'\nhi\n\tEOF\ntouch X\nE'OF'\n"],
  [{ allow: ["Bash(git status)"] }, "git status <<E'O'F\nEOF\ntouch X\nE'O'F"],
  // an unquoted heredoc's terminator line joined by a line continuation
  [{ allow: ["Bash(cat:*)"] }, "cat <<EOF\nhi\nEO\\\nF\ntouch X\nEOF\n"],
  [{ allow: ["Bash(cat:*)"] }, "cat << EOF\nhi\nE\\\nOF\ntouch X\nEOF\n"],
  // a line continuation glues the word after an fd duplication onto it: `>&1X` writes the file `1X`
  [{ allow: ["Bash(echo:*)"] }, "echo hi >&1\\\nX"],
  [{ allow: ["Bash(ls:*)"] }, "ls >&2\\\nX"]
]

describe("red team: Bash allow rules", () => {
  it("each payload really runs something else (or writes a file) in bash", () => {
    for (const [, command] of allowBypasses) {
      expect([command, leftBehind(command).length > 0]).toEqual([command, true])
    }
  })

  for (const [spec, command] of allowBypasses) {
    it(`${spec.allow?.join(", ")} does not allow ${JSON.stringify(command)}`, async () => {
      expect(await bash(spec, command)).toBe("fallback")
    })
  }

  it("a redirection target continued onto the next line is not the target bash writes", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-redteam-")))
    try {
      fs.mkdirSync(path.join(dir, "repo", "out", "sub"), { recursive: true })
      const repo = path.join(dir, "repo")
      const spec = { allow: ["Bash(echo:*)", "Write(./out/**)"] }
      // bash writes `out/../pwned` and `out/sub/../../pwned2`: both outside out/
      for (const command of ["echo hi > out\\\n/../pwned", "echo hi > out/sub\\\n/../../pwned2"]) {
        expect([command, await bash(spec, command, repo)]).toEqual([command, "fallback"])
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a write after an allowed `cd` is judged where the shell then is", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-redteam-")))
    try {
      fs.mkdirSync(path.join(dir, "repo", "out"), { recursive: true })
      const repo = path.join(dir, "repo")
      // bash writes `<dir>/out/x`, outside the session's `./out/**`
      const spec = { allow: ["Bash(echo:*)", "Bash(cd:*)", "Write(./out/**)"] }
      expect(await bash(spec, "cd .. ; echo hi > out/x", repo)).toBe("fallback")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("red team: Bash deny rules", () => {
  const spec = { deny: ["Bash(rm:*)"], allow: ["Bash"] }
  // each of these runs `rm x` in bash
  const hidden = [
    // the same parse mismatches as on the allow side
    "echo \\\r\nrm x",
    "echo a\r#; rm x",
    "echo a\\\n#; rm x",
    "cat <<E\"O\"F\ny\nEOF\nrm -rf x\nE\"O\"F",
    "cat <<$'EOF'\ny\nEOF\nrm x\n$'EOF'\n",
    "cat <<EOF\nEO\\\nF\nrm x\nEOF",
    // a line continuation inside the command name (`r\<newline>m` is `rm`)
    "r\\\nm x",
    // `<<-` heredoc bodies, which tree-sitter-bash leaves unparsed
    "cat <<-EOF\n\t$(rm x)\n\tEOF",
    // `$'…'` escapes beyond the single-character ones, and `$"…"`
    "$'\\x72m' x",
    "$'\\162m' x",
    "$'\\u0072m' x",
    "eval $'\\x72m x'",
    "$\"rm\" x",
    // brace expansion makes the command name
    "{rm,x}",
    "r{m,} x",
    // strings run by a shell or `eval` behind a wrapper, or after `--`
    "env bash -c 'rm x'",
    "exec bash -c 'rm x'",
    "nohup bash -c 'rm x'",
    "command eval 'rm x'",
    "time eval 'rm x'",
    "echo x | xargs sh -c 'rm x'",
    "find . -maxdepth 0 -exec bash -c 'rm x' \\;",
    "bash -c -- 'rm x'",
    "eval -- 'rm x'",
    // wrappers the list does not know, or that take the command as one string
    "find . -maxdepth 0 -exec env rm x \\;",
    "env -S 'rm x'"
  ]
  it("each payload really removes x in bash", () => {
    for (const command of hidden) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-redteam-"))
      try {
        fs.writeFileSync(path.join(dir, "x"), "")
        try {
          execFileSync("bash", ["-c", command], { cwd: dir, stdio: "ignore", input: "", timeout: 10_000 })
        } catch {
          // only whether x is gone counts
        }
        expect([command, fs.existsSync(path.join(dir, "x"))]).toEqual([command, false])
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  })

  for (const command of hidden) {
    it(`Bash(rm:*) denies ${JSON.stringify(command)}`, async () => {
      expect(await bash(spec, command)).toBe("deny")
    })
  }

  it("a deny rule for Write judges a redirection after `cd` where the shell then is", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-redteam-")))
    try {
      fs.mkdirSync(path.join(dir, "secrets"))
      const guarded = { deny: ["Write(./secrets/**)"], allow: ["Bash"] }
      expect(await bash(guarded, "cd secrets && echo hi > k", dir)).toBe("deny")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("red team: path rules", () => {
  it("a deny rule matches a file whose name holds a newline", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-redteam-")))
    try {
      fs.mkdirSync(path.join(dir, "secrets"))
      const guarded = { deny: ["Write(./secrets/**)"], allow: ["Write", "Bash"] }
      expect(await decide(guarded, "Write", { file_path: "secrets/a\nb", content: "x" }, dir)).toBe("deny")
      expect(await bash(guarded, "echo hi > 'secrets/a\nb'", dir)).toBe("deny")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a deny rule on `~/…` matches a file_path written with `~/` (the CLI expands it to the home directory)", async () => {
    const guarded = { deny: ["Write(~/.ssh/**)"], allow: ["Write"] }
    expect(await decide(guarded, "Write", { file_path: "~/.ssh/authorized_keys", content: "x" })).toBe("deny")
  })
})
