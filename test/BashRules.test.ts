import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Permissions } from "effect-claude-agent"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bash, decide, request } from "./support/rules.js"

const ECHO = { allow: ["Bash(echo:*)"] }

describe("Bash allow rules against an attacker", () => {
  // each of these runs `touch X` (or writes a file) in a real bash: none may be allowed by `Bash(echo:*)`
  const bypasses = [
    "echo $(touch X)",
    "echo `touch X`",
    "echo \"$(touch X)\"",
    "echo \"a `touch X` b\"",
    "echo ${x:-$(touch X)}",
    "echo \"${x:-$(touch X)}\"",
    "echo ${x:=`touch X`}",
    "echo hi & touch X",
    "echo hi &",
    "echo <(touch X)",
    "echo >(touch X)",
    "echo $'a\\'b'; touch X",
    "echo $'\\''; touch X",
    "echo hi # it's\ntouch X",
    "echo hi > FILE",
    "echo hi >> FILE",
    "echo hi >| FILE",
    "echo hi &> FILE",
    "echo hi &>> FILE",
    "echo hi 2> FILE",
    "echo hi >& FILE",
    "echo hi 1<> FILE",
    "echo hi > $(touch X)",
    "echo hi > /dev/null$X",
    "cat <<EOF\n$(touch X)\nEOF",
    "echo <<EOF | sh\ntouch X\nEOF",
    "echo $((1 + $(touch X)))",
    "echo $((a[$(touch X)]))",
    "echo $[x]",
    "echo ${!x}",
    "echo ${x@P}",
    "echo ${a[$i]}",
    "X=$(touch X) echo hi",
    "PATH=/tmp/evil echo hi",
    "echo a; (touch X)",
    "echo a; { touch X; }",
    "f() { touch X; }; echo f",
    "if true; then touch X; fi",
    "for i in 1; do touch X; done",
    "while false; do :; done; touch X",
    "case x in x) touch X;; esac",
    "! touch X",
    "time touch X",
    "coproc touch X",
    "eval echo hi",
    "exec touch X",
    "x=1",
    "export X=$(touch X)",
    "echo hi; touch X",
    "echo hi && touch X",
    "echo hi || touch X",
    "echo hi | touch X",
    "echo hi |& touch X",
    "echo 'unterminated",
    "echo hi )",
    "ech\\\no hi",
    "$X hi",
    "\"$X\" hi",
    "e*o hi",
    "~/echo hi",
    "./echo hi",
    "echo a; . ./x",
    "echo a; source x",
    "[[ -f x ]] && echo a",
    "local x=1; echo a",
    "declare -x A=1; echo a"
  ]
  for (const command of bypasses) {
    it(`Bash(echo:*) does not allow ${JSON.stringify(command)}`, async () => {
      expect(await bash(ECHO, command)).toBe("fallback")
    })
  }

  it("a deny rule matches a command hidden anywhere in the tree", async () => {
    const spec = { deny: ["Bash(rm:*)"], allow: ["Bash(echo:*)"] }
    for (
      const command of [
        "echo $(rm x)",
        "echo `rm x`",
        "echo \"$(rm x)\"",
        "echo ${x:-$(rm x)}",
        "echo <(rm x)",
        "echo hi & rm x",
        "echo $'a\\''; rm x",
        "echo hi # it's\nrm x",
        "(rm x)",
        "{ rm x; }",
        "f() { rm x; }",
        "if true; then rm x; fi",
        "for i in 1; do rm -rf /; done",
        "cat <<EOF\n$(rm x)\nEOF",
        "X=$(rm x) echo",
        "export X=$(rm x)",
        "! rm x",
        "time rm x",
        "nohup rm x",
        "sudo rm x",
        "env A=b rm x",
        "xargs rm < list",
        "command rm x",
        "exec rm x",
        "coproc rm x",
        "/bin/rm x",
        "\"rm\" x",
        "r\"m\" x",
        "bash -c 'rm x'",
        "sh -c \"echo; rm x\"",
        "eval 'rm x'",
        "echo 'unterminated; rm x",
        "echo $(( $(rm x) ))"
      ]
    ) {
      expect([command, await bash(spec, command)]).toEqual([command, "deny"])
    }
    // a deny rule does not match words that only mention the command
    expect(await bash(spec, "echo rm x")).toBe("allow")
    expect(await bash(spec, "echo 'rm x'")).toBe("allow")
  })

  it("a tree nested deeper than the stack, or a very long command, is one that does not parse", async () => {
    const spec = { deny: ["Bash(rm:*)"], allow: ["Bash(echo:*)"] }
    const deep = "echo " + "$(".repeat(5000) + "rm x" + ")".repeat(5000)
    expect(await bash(spec, deep)).toBe("deny")
    expect(await bash({ allow: ["Bash(echo:*)"] }, deep.replace("rm x", "touch X"))).toBe("fallback")
    expect(await bash(spec, `echo ${"a ".repeat(50_000)}; rm x`)).toBe("deny")
  })

  it("an ask rule goes to the fallback when any simple command anywhere matches", async () => {
    const spec = { ask: ["Bash(git push:*)"], allow: ["Bash(echo:*)", "Bash(git push:*)"] }
    expect(await bash(spec, "echo $(git push)")).toBe("fallback")
    expect(await bash(spec, "echo a && git push origin")).toBe("fallback")
  })
})

describe("what Bash(echo:*) / Bash(cat:*) allow runs nothing else in a real bash", () => {
  // differential: every command of this corpus that the rules allow is run by bash in an empty directory, which must
  // stay empty (each payload would create a file); the corpus mixes bypass attempts with harmless commands
  const corpus = [
    "echo a<(touch X)",
    "echo $(<X)",
    "echo ${x/$(touch X)/y}",
    "echo ~+",
    "echo \"\\`touch X\\`\"",
    "echo $'\\x27'; touch X",
    "{echo,hi}; touch X",
    "echo hi;touch X",
    "echo hi&&touch X",
    "echo <<-EOF\n\t$(touch X)\n\tEOF",
    "cat <<-EOF\n\t`touch X`\n\tEOF",
    "cat <<EOF > X\nhi\nEOF",
    "cat <<EOF >> X\nhi\nEOF",
    "cat <<EOF | tee X\nhi\nEOF",
    "cat <<EOF && touch X\nhi\nEOF",
    "echo @(a|b)",
    "echo hi >&$X",
    "echo hi 2>&1-",
    "echo $'a\\'' ; touch X ; echo ''",
    "echo 'a'\\''b'; touch X",
    "echo \"a'b\" 'c\"d' ; touch X",
    "echo a\\'b ; touch X ; echo \\'",
    "echo $\"x\"; touch X",
    "echo \\$(touch X)",
    "echo '$(touch X)'",
    "echo \"\\$(touch X)\"",
    "echo $'$(touch X)'",
    "echo a#b; touch X",
    "echo a #b\\\ntouch X",
    "echo <<EOF\nx\nEOF\ntouch X",
    "echo <<'EOF'\n$(touch X)\nEOF\n",
    "echo <<E\"O\"F\n$(touch X)\nEOF",
    "echo <<\\EOF\n$(touch X)\nEOF",
    "echo ${x#$(touch X)}",
    "echo [a] ]",
    "echo $@ $* $# $? $$ $!",
    "echo x\\\n; touch X",
    "echo hi \\\n&& touch X",
    "echo hi\r\ntouch X",
    "echo hi |\ntouch X",
    "echo $(\ntouch X\n)",
    "echo `\ntouch X`",
    "echo hi >/dev/null 2>&1",
    "echo {a,b}",
    "echo $'\\'' '; touch X #'",
    "echo $'\\\\'; touch X",
    "echo \"\\\"\"; touch X",
    "echo 'it''s'; touch X",
    "echo hi>X",
    "echo hi>|X",
    "echo hi 1>X",
    "echo hi <>X",
    "echo hi >>X",
    "echo hi &>X",
    "echo \"${x:-\"$(touch X)\"}\"",
    "echo \"${x:-'$(touch X)'}\"",
    "echo $\"$(touch X)\"",
    "echo hi | cat",
    "echo a\necho b",
    "echo a;echo b;",
    "echo \\\\; touch X",
    "echo \\\\\\; touch X",
    "cat <<< \"$(touch X)\"",
    "cat <<< $'x'; touch X",
    "echo hi # $(touch X)",
    "echo hi #\ntouch X",
    "echo hi & touch X",
    "echo hi\ttouch X"
  ]
  it("the corpus", async () => {
    const spec = { allow: ["Bash(echo:*)", "Bash(cat:*)"] }
    const allowed: Array<string> = []
    for (const command of corpus) {
      if (await bash(spec, command) !== "allow") continue
      allowed.push(command)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-run-"))
      try {
        try {
          execFileSync("bash", ["-c", command], { cwd: dir, stdio: "ignore", input: "", timeout: 10_000 })
        } catch {
          // a failing command is fine: only what it left behind counts
        }
        expect([command, fs.readdirSync(dir)]).toEqual([command, []])
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
    // not vacuous: the harmless ones are allowed
    expect(allowed).toEqual(expect.arrayContaining(["echo '$(touch X)'", "echo hi | cat", "echo a\necho b"]))
  })
})

describe("Bash allow rules on parsed words", () => {
  it("compound commands whose parts match different allow rules", async () => {
    const spec = { allow: ["Bash(npm test:*)", "Bash(npm run lint:*)"] }
    expect(await bash(spec, "npm test && npm run lint")).toBe("allow")
    expect(await bash(spec, "npm test; npm run lint -- --fix\nnpm test || npm run lint | npm test")).toBe("allow")
    expect(await bash(spec, "npm test && npm run build")).toBe("fallback")
    expect(await bash(spec, "npm testing")).toBe("fallback")
  })

  it("words are compared after quote removal; expansions and globs never match a rule's word", async () => {
    const spec = { allow: ["Bash(npm test:*)"] }
    expect(await bash(spec, "npm \"test\"")).toBe("allow")
    expect(await bash(spec, "npm 'test' -- --watch")).toBe("allow")
    expect(await bash(spec, "npm te\\st")).toBe("allow")
    expect(await bash(spec, "npm \"te\"st -- $HOME \"$X\" ${Y} *.ts")).toBe("allow")
    // before a `--`, a word not known may be an option that changes what npm runs (`--script-shell=…`)
    expect(await bash(spec, "npm \"te\"st $HOME \"$X\" ${Y} *.ts")).toBe("fallback")
    expect(await bash(spec, "npm $X")).toBe("fallback")
    expect(await bash(spec, "npm ${X}")).toBe("fallback")
    expect(await bash(spec, "npm t*")).toBe("fallback")
    expect(await bash(spec, "npm $'test'")).toBe("fallback")
    // a line continuation joins words in bash: `npm test\<newline>x` runs the script "testx"
    expect(await bash(spec, "npm test\\\nx")).toBe("fallback")
    // … and any line continuation falls back: the parser and bash do not always agree where one joins (a redirection
    // target, a heredoc delimiter line, `\<CR><LF>`), so allow rules never judge a command that has one
    expect(await bash(spec, "npm test \\\n  --watch")).toBe("fallback")
  })

  it("NBSP and U+2028 in a word fall back; a tab is a blank; a plain `<<-` delimiter is fine", async () => {
    const spec = { allow: ["Bash(npm test:*)", "Bash(cd:*)"] }
    expect(await bash(spec, "npm test\u00a0x")).toBe("fallback")
    expect(await bash(spec, "npm test\u2028x")).toBe("fallback")
    expect(await bash(spec, "npm test \tx")).toBe("allow")
    expect(await bash({ allow: ["Bash(cat:*)"] }, "cat <<-EOF\nhi\n\tEOF")).toBe("allow")
    expect(await bash({ allow: ["Bash(cat:*)"] }, "cat <<-E'OF'\nhi\n\tEOF")).toBe("fallback")
    // a directory change alone is fine; with a redirection that writes, see BashRules.redteam.test.ts
    expect(await bash(spec, "cd sub && npm test")).toBe("allow")
  })

  it("exact rules and wildcards compare the parsed words", async () => {
    expect(await bash({ allow: ["Bash(git status)"] }, "git  'status'")).toBe("allow")
    expect(await bash({ allow: ["Bash(git status)"] }, "git status -s")).toBe("fallback")
    expect(await bash({ allow: ["Bash(git * --dry-run)"] }, "git push --dry-run")).toBe("allow")
    expect(await bash({ allow: ["Bash(git * --dry-run)"] }, "git push --dry-run; rm x")).toBe("fallback")
    expect(await bash({ allow: ["Bash"] }, "echo $(touch X) & rm -rf /")).toBe("allow")
  })

  it("harmless redirections: input, heredocs that do not expand commands, fd duplication, /dev/null", async () => {
    for (
      const command of [
        "echo hi 2>&1",
        "echo hi >&-",
        "echo hi 2>&1-",
        "echo hi >&2",
        "echo hi 2>/dev/null",
        "echo hi >/dev/null 2>&1",
        "echo hi &>/dev/null",
        "echo hi < input.txt",
        "echo <<'EOF'\n$(touch X)\nEOF",
        "echo <<EOF\nhello $USER\nEOF",
        "echo <<< \"$HOME\""
      ]
    ) {
      expect([command, await bash(ECHO, command)]).toEqual([command, "allow"])
    }
  })

  it("a write redirection is allowed by an allow rule for Write on its target", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-"))
    try {
      fs.mkdirSync(path.join(dir, "out"))
      const spec = { allow: ["Bash(echo:*)", "Write(./out/**)"] }
      const at = (command: string) => decide(spec, "Bash", { command }, dir)
      expect(await at("echo hi > out/log.txt")).toBe("allow")
      expect(await at("echo hi >> out/log.txt 2>&1")).toBe("allow")
      expect(await at("echo hi > log.txt")).toBe("fallback")
      expect(await at("echo hi > out/../log.txt")).toBe("fallback")
      expect(await at("echo hi > out/$X")).toBe("fallback")
      fs.symlinkSync(os.tmpdir(), path.join(dir, "out", "link"))
      expect(await at("echo hi > out/link/pwned.txt")).toBe("fallback")
      const edit = { allow: ["Bash(echo:*)", "Edit(./out/*.txt)"] }
      expect(await decide(edit, "Bash", { command: "echo >out/a.txt" }, dir)).toBe("allow")
      // deny (and ask) rules for Write and Edit judge the files a command writes, wherever it writes them
      const guarded = { deny: ["Write(./secrets/**)", "Edit(./keys/*)"], ask: ["Write(./ask/**)"], allow: ["Bash"] }
      expect(await decide(guarded, "Bash", { command: "echo hi > secrets/x" }, dir)).toBe("deny")
      expect(await decide(guarded, "Bash", { command: "(echo hi) 2>keys/k" }, dir)).toBe("deny")
      expect(await decide(guarded, "Bash", { command: "echo $(cat <<EOF > secrets/y\nEOF\n)" }, dir)).toBe("deny")
      expect(await decide(guarded, "Bash", { command: "echo hi > ask/x" }, dir)).toBe("fallback")
      expect(await decide(guarded, "Bash", { command: "echo hi > other/x" }, dir)).toBe("allow")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("Permissions.matches uses the same rules", async () => {
    const matches = (rule: string, command: string) =>
      Effect.runPromise(Permissions.matches(rule, request("Bash", { command })))
    expect(await matches("Bash(echo:*)", "echo hi")).toBe(true)
    expect(await matches("Bash(echo:*)", "echo $(touch X)")).toBe(false)
  })
})

describe("PowerShell rules fail closed", () => {
  const ps = (spec: Parameters<typeof decide>[0], command: string) => decide(spec, "PowerShell", { command })
  it("an allow content rule matches only a plain word sequence", async () => {
    const spec = { allow: ["PowerShell(Get-ChildItem:*)"] }
    expect(await ps(spec, "Get-ChildItem -Path C:\\src")).toBe("allow")
    for (
      const command of [
        "Get-ChildItem; Remove-Item x",
        "Get-ChildItem | Remove-Item",
        "Get-ChildItem $(Remove-Item x)",
        "Get-ChildItem (Remove-Item x)",
        "Get-ChildItem `\nRemove-Item x",
        "Get-ChildItem & Remove-Item x",
        "Get-ChildItem @{a=1}",
        "Get-ChildItem 'x'",
        "Get-ChildItem > out.txt"
      ]
    ) {
      expect([command, await ps(spec, command)]).toEqual([command, "fallback"])
    }
  })
  it("a deny rule matches its words anywhere", async () => {
    const spec = { deny: ["PowerShell(Remove-Item:*)"], allow: ["PowerShell"] }
    expect(await ps(spec, "Get-ChildItem | Remove-Item")).toBe("deny")
    expect(await ps(spec, "Get-ChildItem $(Remove-Item x)")).toBe("deny")
    expect(await ps(spec, "Get-ChildItem")).toBe("allow")
  })
})

describe("path rules on real paths", () => {
  const withTree = (body: (dir: string) => Promise<void>) => async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pathrules-")))
    try {
      fs.mkdirSync(path.join(root, "repo", "src"), { recursive: true })
      fs.mkdirSync(path.join(root, "outside"))
      await body(root)
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
  const write = (spec: Parameters<typeof decide>[0], file_path: string, cwd: string) =>
    decide(spec, "Write", { file_path, content: "x" }, cwd)
  const ALLOW_SRC = { allow: ["Write(./src/**)"] }

  it(
    "lexical paths: `..` and absolute paths",
    withTree(async (root) => {
      const repo = path.join(root, "repo")
      expect(await write(ALLOW_SRC, "src/a.ts", repo)).toBe("allow")
      expect(await write(ALLOW_SRC, "src/new/dir/a.ts", repo)).toBe("allow")
      expect(await write(ALLOW_SRC, path.join(repo, "src", "a.ts"), repo)).toBe("allow")
      expect(await write(ALLOW_SRC, "src/../a.ts", repo)).toBe("fallback")
      expect(await write(ALLOW_SRC, "src/../../outside/a.ts", repo)).toBe("fallback")
      expect(await write(ALLOW_SRC, path.join(root, "outside", "a.ts"), repo)).toBe("fallback")
    })
  )

  it(
    "a symlinked directory inside the tree that points outside",
    withTree(async (root) => {
      const repo = path.join(root, "repo")
      fs.symlinkSync("../../outside", path.join(repo, "src", "link"))
      expect(await write(ALLOW_SRC, "src/link/pwned.txt", repo)).toBe("fallback")
      expect(await write(ALLOW_SRC, "src/link/new/pwned.txt", repo)).toBe("fallback")
      // `..` after a symlink is the real parent of its target, as the kernel resolves it
      fs.mkdirSync(path.join(root, "outside", "deep"))
      fs.symlinkSync("../../outside/deep", path.join(repo, "src", "deeplink"))
      expect(await write(ALLOW_SRC, "src/deeplink/../x.txt", repo)).toBe("fallback")
      // deny rules match the lexical or the real path
      expect(await write({ deny: [`Write(${path.join(root, "outside")}/**)`], allow: ["Write"] }, "src/link/x", repo))
        .toBe("deny")
      expect(await write({ deny: ["Write(./src/link/**)"], allow: ["Write"] }, "src/link/x", repo)).toBe("deny")
    })
  )

  it(
    "a symlinked final file pointing outside, and a dangling one",
    withTree(async (root) => {
      const repo = path.join(root, "repo")
      fs.writeFileSync(path.join(root, "outside", "target.txt"), "")
      fs.symlinkSync(path.join(root, "outside", "target.txt"), path.join(repo, "src", "file.txt"))
      expect(await write(ALLOW_SRC, "src/file.txt", repo)).toBe("fallback")
      fs.symlinkSync(path.join(root, "outside", "not-yet.txt"), path.join(repo, "src", "dangling.txt"))
      expect(await write(ALLOW_SRC, "src/dangling.txt", repo)).toBe("fallback")
      fs.symlinkSync(path.join(repo, "src", "real-not-yet.txt"), path.join(repo, "src", "inside.txt"))
      expect(await write(ALLOW_SRC, "src/inside.txt", repo)).toBe("allow")
    })
  )

  it(
    "a symlink loop neither throws nor hangs: no allow, and deny rules match",
    withTree(async (root) => {
      const repo = path.join(root, "repo")
      fs.symlinkSync("loop-b", path.join(repo, "src", "loop-a"))
      fs.symlinkSync("loop-a", path.join(repo, "src", "loop-b"))
      expect(await write(ALLOW_SRC, "src/loop-a", repo)).toBe("fallback")
      expect(await write(ALLOW_SRC, "src/loop-a/x.txt", repo)).toBe("fallback")
      expect(await write({ deny: ["Write(/nowhere/**)"], allow: ["Write"] }, "src/loop-a/x.txt", repo)).toBe("deny")
    })
  )

  it(
    "a cwd under a symlinked directory still matches its own tree",
    withTree(async (root) => {
      fs.symlinkSync(path.join(root, "repo"), path.join(root, "alias"))
      const cwd = path.join(root, "alias")
      expect(await write(ALLOW_SRC, "src/a.ts", cwd)).toBe("allow")
      expect(await write(ALLOW_SRC, path.join(root, "repo", "src", "a.ts"), cwd)).toBe("allow")
      expect(await write(ALLOW_SRC, path.join(root, "outside", "a.ts"), cwd)).toBe("fallback")
    })
  )
})
