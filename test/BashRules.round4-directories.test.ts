// Round 4 of the red team, directories: the fuzzer's classes B (a `cd` that failed or was skipped taken as done) and H
// (a program's "run in DIR" option taken to move the shell's own redirections). Each payload is checked in a real
// bash first (it really reads the secret, writes the file, empties the victim), then decided by the rules.
import { describe, expect, it } from "@effect/vitest"
import { ALLOWLIST, DENYLIST } from "./support/bashFuzz.js"
import { decideIn, inBash } from "./support/bashJudge.js"

describe("class B: a `cd` that failed or was skipped leaves the shell where it was", () => {
  it("`cd x && true; cat secrets/k` reads the secret here", async () => {
    const command = "cd x && true; cat secrets/k"
    expect(inBash(command).output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
    expect(await decideIn(ALLOWLIST.spec, command)).toBe("deny")
  })

  it("`cd x && true || cat secrets/k` reads the secret here", async () => {
    const command = "cd x && true || cat secrets/k"
    expect(inBash(command).output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
    expect(await decideIn(ALLOWLIST.spec, command)).toBe("deny")
  })

  it("`cd out/f && true; echo hi > X` writes ./X, outside what ALLOWLIST lets it write", async () => {
    const command = "cd out/f && true; echo hi > X"
    expect(inBash(command).touched).toBe(true)
    expect(await decideIn(ALLOWLIST.spec, command)).not.toBe("allow")
  })

  it("`cd out/x && echo || echo hi > victim` writes ./victim", async () => {
    const command = "cd out/x && echo || echo hi > victim"
    expect(inBash(command).victim).toBe("hi\n")
    expect(await decideIn(ALLOWLIST.spec, command)).not.toBe("allow")
  })

  it("`cd x && true; echo hi > secrets/new` writes a secret", async () => {
    const command = "cd x && true; echo hi > secrets/new"
    expect(inBash(command).exists("secrets/new")).toBe(true)
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
    expect(await decideIn(ALLOWLIST.spec, command)).toBe("deny")
  })

  it("a newline ends the list as `;` does", async () => {
    const command = "cd x && true\ncat secrets/k"
    expect(inBash(command).output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
  })

  it("the fuzzer's instance: a failed command skips the `cd`, and `||` runs here", async () => {
    const command = "umask %s out/f hi && cd sub && echo hi > out/f -x || cat secrets/k"
    expect(inBash(command).output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
  })

  it("a `cd` in a pipeline does not move the shell", async () => {
    const command = "cd out | true; cat ../secrets/k; cat secrets/k"
    expect(inBash(command).output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
  })
})

describe("class B: what stays precise", () => {
  it("`cd out && echo hi > f` is allowed: the write runs only in out/", async () => {
    expect(inBash("cd out && echo hi > f").exists("out/f")).toBe(true)
    expect(await decideIn(ALLOWLIST.spec, "cd out && echo hi > f")).toBe("allow")
    expect(await decideIn(ALLOWLIST.spec, "true && cd out && true && echo hi > f")).toBe("allow")
  })

  it("after the list, the shell may be in either directory: both are judged", async () => {
    // in out/ (out/out/g) or here (out/g): both under out/
    expect(await decideIn(ALLOWLIST.spec, "cd out && echo hi > f; echo hi > out/g")).toBe("allow")
    // here, ./g is not under out/
    expect(await decideIn(ALLOWLIST.spec, "cd out && echo hi > f; echo hi > g")).not.toBe("allow")
    expect(await decideIn(ALLOWLIST.spec, "cd out && echo hi > f || echo hi > g")).not.toBe("allow")
    // in secrets/ (secrets/k) or here (k): a deny rule matches if either does
    expect(await decideIn(DENYLIST.spec, "cd secrets && true; cat k")).toBe("deny")
    expect(await decideIn(DENYLIST.spec, "cd out && true; cat k")).toBe("allow")
  })

  it("a `cd` another command may skip is not taken as done", async () => {
    expect(await decideIn(ALLOWLIST.spec, "true || cd out && echo hi > f")).not.toBe("allow")
    // `true` runs when the `cd` failed, and its status lets the write run here
    expect(inBash("cd out/x || true && echo hi > X").touched).toBe(true)
    expect(await decideIn(ALLOWLIST.spec, "cd out/x || true && echo hi > X")).not.toBe("allow")
    // but on every path that reaches the write here, a `cd out` has succeeded
    expect(await decideIn(ALLOWLIST.spec, "cd out || cd out && echo hi > f")).toBe("allow")
  })
})

describe("class H: a program's directory option does not move the shell's redirections", () => {
  it("`env -C out cat < secrets/k` reads the secret here", async () => {
    const command = "env -C out cat < secrets/k"
    expect(inBash(command).output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
  })

  it("`make -C sub > secrets/new` writes a secret here", async () => {
    const command = "make -C sub > secrets/new"
    expect(inBash(command).exists("secrets/new")).toBe(true)
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
  })

  it("the fuzzer's instance: `make … -C … > secrets/k` empties the secret", async () => {
    const command = `$'git diff' -n -x %s;make --eval='x:=$(shell touch X)' 2>/dev/null '-C'"" -x . > secrets/k`
    expect(inBash(command).secret).toBe("")
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
  })

  it("`git -C out status > secrets/s` writes a secret here", async () => {
    const command = "git -C out status > secrets/s 2>&1"
    expect(inBash(command).exists("secrets/s")).toBe(true)
    expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
  })

  it("what the program opens is still judged from its directory", async () => {
    expect(inBash("env -C secrets cat k").output).toContain("SECRET")
    expect(await decideIn(DENYLIST.spec, "env -C secrets cat k")).toBe("deny")
    expect(await decideIn(DENYLIST.spec, "env -C out cat ../secrets/k")).toBe("deny")
    // the redirection is the shell's: data.txt here, not secrets/data.txt
    expect(await decideIn(DENYLIST.spec, "env -C secrets cat < data.txt")).toBe("allow")
    expect(await decideIn(DENYLIST.spec, "env -C out cat < data.txt")).toBe("allow")
  })
})
