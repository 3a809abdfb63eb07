// Round 4 of the red team, programs (`shellPrograms.ts`): bypass classes the fuzzer found (test/support/bashFuzz.ts),
// each payload checked in a real bash first (it really reads the secret or writes the file), then decided by the rules.
import { describe, expect, it } from "@effect/vitest"
import { fileOperands, scripts, type Word } from "../src/internal/rules/shellPrograms.js"
import { ALLOWLIST, DENYLIST } from "./support/bashFuzz.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { decideIn, inBash } from "./support/bashJudge.js"

const literal = (text: string): Word => ({ literal: text, loose: text })

describe("G: a builtin's callback runs with arguments the shell supplies from data", () => {
  const reads = [
    "mapfile -t -C cat -c 1 a <<< secrets/k",
    "mapfile -t -Ccat -c1 a <<< secrets/k",
    "mapfile -tC cat -c 1 a <<< secrets/k",
    "readarray -t -C cat -c 1 a <<< secrets/k",
    "mapfile -t -C 'head -n 5' -c 1 a <<< secrets/k",
    "compgen -C cat secrets/k",
    "compgen -Ccat secrets/k"
  ]
  it("each payload really reads secrets/k in bash", () => {
    for (const command of reads) expect([command, inBash(command).output.includes("SECRET")]).toEqual([command, true])
  })
  for (const command of reads) {
    it(`Read(./secrets/**) denies ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
    })
  }
  const writes: ReadonlyArray<readonly [string, string]> = [
    ["mapfile -t -C touch -c 1 a <<< secrets/new", "secrets/new"],
    ["readarray -t -C 'touch X' -c 1 a <<< secrets/new", "secrets/new"],
    [
      "1>../outside/x mapfile -C 'touch X' -c 1 a <<< x -v <<< secrets/k && echo hi > /dev/null ~ -e out/f\n" +
      "git status -c out/l/f -e\n",
      "secrets/k\n"
    ]
  ]
  it("each payload really writes under secrets/ in bash", () => {
    for (const [command, file] of writes) expect([command, inBash(command).exists(file)]).toEqual([command, true])
  })
  for (const [command] of writes) {
    it(`Write(./secrets/**) denies ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
      expect(await decideIn({ allow: ["Bash"], deny: ["Write(./secrets/**)"] }, command)).toBe("deny")
    })
  }
  it("the callback is judged as a command with arguments not known", () => {
    expect(scripts(["mapfile", "-t", "-C", "cat", "-c", "1", "a"])).toContain("cat \"$@\"")
    expect(scripts(["mapfile", "-Ccat", "a"])).toContain("cat \"$@\"")
    expect(scripts(["readarray", "-tC", "touch X", "a"])).toContain("touch X \"$@\"")
    expect(scripts(["compgen", "-C", "cat", "w"])).toContain("cat \"$@\"")
    expect(scripts(["compgen", "-F", "f", "w"])).toContain("f \"$@\"")
    expect(scripts(["complete", "-C", "cat", "w"])).toContain("cat \"$@\"")
    // `-W`'s word list is expanded, not run with arguments; `-d C` is a delimiter, not a callback
    expect(scripts(["compgen", "-W", "a b", "w"])).toEqual(["a b"])
    expect(scripts(["mapfile", "-d", "C", "a"])).toEqual([])
    expect(scripts(["mapfile", "-t", "a"])).toEqual([])
  })
  it("precision: mapfile without -C, and a callback that reads no file, stay as they were", async () => {
    expect(await decideIn(DENYLIST.spec, "mapfile -t a < data.txt")).toBe("allow")
    // `Bash(mapfile:*)` names no word of it: a builtin that assigns names needs a rule naming every word, as before
    expect(await decideIn(ALLOWLIST.spec, "mapfile -t a < data.txt")).toBe("fallback")
    expect(await decideIn(DENYLIST.spec, "mapfile -t -C echo -c 1 a < data.txt")).toBe("allow")
    // `cat` given lines of data.txt as operands reads files not known: the deny rules fail closed
    expect(await decideIn(ALLOWLIST.spec, "mapfile -t -C cat -c 1 a < data.txt")).toBe("deny")
  })
})

describe("E: a wrapper whose options are not parsed hides xargs", () => {
  const reads = [
    "stdbuf -o0 xargs cat <<< secrets/k",
    "jobs -x xargs cat <<< secrets/k",
    "stdbuf -o0 nice xargs cat <<< secrets/k",
    "timeout --foo=1 5 xargs cat <<< secrets/k"
  ]
  it("each payload really reads secrets/k in bash", () => {
    for (const command of reads.slice(0, 3)) {
      expect([command, inBash(command).output.includes("SECRET")]).toEqual([command, true])
    }
  })
  for (const command of reads) {
    it(`Read(./secrets/**) denies ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
    })
  }
  it("stdbuf -o0 xargs touch <<< secrets/new really writes it, and Write(./secrets/**) denies it", async () => {
    expect(inBash("stdbuf -o0 xargs touch <<< secrets/new").exists("secrets/new")).toBe(true)
    expect(await decideIn({ allow: ["Bash"], deny: ["Write(./secrets/**)"] }, "stdbuf -o0 xargs touch <<< secrets/new"))
      .toBe("deny")
  })
  it("xargs running a program the lists do not know really reads secrets/k, and is denied", async () => {
    // a program of the project's own that reads its operands
    const tool = (work: string) =>
      fs.writeFileSync(path.join(work, "mytool"), "#!/bin/sh\ncat \"$@\"\n", { mode: 0o755 })
    for (const command of ["xargs ./mytool <<< secrets/k", "stdbuf -o0 xargs -n 1 ./mytool <<< secrets/k"]) {
      expect([command, inBash(command, tool).output.includes("SECRET")]).toEqual([command, true])
      expect([command, await decideIn(DENYLIST.spec, command, tool)]).toEqual([command, "deny"])
    }
    for (const command of ["xargs -n 1 echo <<< 'secrets sub'", "xargs <<< 'secrets sub'", "xargs -- ls <<< sub"]) {
      expect([command, await decideIn(DENYLIST.spec, command)]).toEqual([command, "allow"])
    }
  })
  it("every program the scan may run is judged", () => {
    const words = (text: string) => text.split(" ").map(literal)
    expect(fileOperands(words("stdbuf -o0 xargs cat")).readsUnknown).toBe(true)
    expect(fileOperands(words("jobs -x xargs touch")).writesUnknown).toBe(true)
    expect(fileOperands(words("stdbuf -o0 cat data.txt")).readsUnknown).not.toBe(true)
  })
  it("precision: a wrapper around a reader of named files stays as it was", async () => {
    expect(await decideIn(DENYLIST.spec, "stdbuf -o0 cat data.txt")).toBe("allow")
    expect(await decideIn(DENYLIST.spec, "stdbuf -o0 xargs echo <<< secrets/k")).toBe("allow")
  })
})

describe("I: an operand with no literal text", () => {
  const reads = [
    "git diff $'secrets' sub",
    "git diff $'sec'rets sub",
    "git diff \"sec\"$'rets' sub",
    "git diff $'\\x73ecrets' sub",
    "X=secrets; git diff $X sub",
    "X=secrets; git diff \"$X\" sub"
  ]
  it("each payload really reads secrets/k in bash", () => {
    for (const command of reads) expect([command, inBash(command).output.includes("-SECRET")]).toEqual([command, true])
  })
  for (const command of reads) {
    it(`Read(./secrets/**) denies ${JSON.stringify(command)}`, async () => {
      expect(await decideIn(DENYLIST.spec, command)).toBe("deny")
    })
  }
  it("an operand is guessed from its static value; one with no computable value is not known", () => {
    const guesses = (...args: ReadonlyArray<Word>) =>
      fileOperands([literal("git"), literal("diff"), ...args]).guesses.slice(1)
    expect(guesses({ literal: undefined, loose: "secrets" })).toEqual([{ literal: "secrets", loose: "secrets" }])
    expect(guesses({ literal: undefined, loose: "$X" })).toEqual([{ literal: undefined, loose: "$X" }])
    expect(guesses({ literal: undefined, loose: "a\u0000b" })).toEqual([{ literal: undefined, loose: "a\u0000b" }])
  })
  it("precision: git diff of other paths stays allowed", async () => {
    expect(await decideIn(DENYLIST.spec, "git diff sub")).toBe("allow")
    expect(await decideIn(DENYLIST.spec, "git diff $'sub' out")).toBe("allow")
    expect(await decideIn(DENYLIST.spec, "git diff secrets sub")).toBe("deny")
  })
})
