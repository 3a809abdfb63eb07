// Round 4 of the red team (issue 31), found by the differential fuzzer over many seeds: statements tree-sitter-bash
// reads without a `command` node, and shells that read a pipe from anything before them. Each payload is first
// checked in a real bash (it really removes the victim or reads the secret), then decided by the rules.
import { describe, expect, it } from "@effect/vitest"
import { DENYLIST } from "./support/bashFuzz.js"
import { decideIn, inBash } from "./support/bashJudge.js"

/** A payload, what bash did with it, and what the deny list must say. */
interface Case {
  readonly command: string
  readonly did: (result: ReturnType<typeof inBash>) => boolean
}

const removes = (command: string): Case => ({ command, did: (r) => r.victimGone })
const reads = (command: string): Case => ({ command, did: (r) => r.output.includes("SECRET") })

const judged = (title: string, cases: ReadonlyArray<Case>) =>
  describe(title, () => {
    it("each payload really does it in bash", () => {
      for (const c of cases) expect([c.command, c.did(inBash(c.command))]).toEqual([c.command, true])
    })
    for (const c of cases) {
      it(`the deny list denies ${JSON.stringify(c.command)}`, async () => {
        expect(await decideIn(DENYLIST.spec, c.command)).toBe("deny")
      })
    }
  })

judged("redirections before the command: tree-sitter-bash puts its words inside them, with no command node", [
  removes(">/dev/null <<E rm victim\nE"),
  removes("X=1 <<E rm victim\nE"),
  removes("true && >/dev/null <<E rm victim\nE"),
  reads("2>/dev/null <<E cat secrets/k\nE"),
  removes("<data.txt <data.txt rm victim <data.txt"),
  reads("2>/dev/null <data.txt cat secrets/k <data.txt"),
  removes(">/dev/null <<E bash\nrm victim\nE"),
  // the fuzzer's instance (seed 200000001)
  reads("</dev/null <<'EOF' 2>/dev/null a=$(touch X) timeout 5 cat secrets/k\ntouch X\nEOF")
])

judged("a shell reading a pipe: what it runs may be the words of anything before it, wherever it stands", [
  removes("echo rm victim | sh | true && true"),
  reads("echo cat secrets/k | sh | cat || true"),
  removes("{ echo rm victim; } | sh"),
  removes("(echo rm victim) | sh"),
  removes("cat <<< 'rm victim' | sh"),
  removes("echo rm victim | (sh)"),
  removes("! echo rm victim | sh"),
  // the fuzzer's instances (seeds 1000009, 123456789)
  removes("printf '%s\\n' 'rm -f victim' | sh |& exec x X && command -v --"),
  removes("unset -c ; ! printf '%s\\n' 'rm -f victim' | sh ; >/dev/null shopt 2>&-")
])

describe("what stays allowed", () => {
  it("redirections before a command the rules allow; a pipe into a program that is not a shell", async () => {
    expect(await decideIn({ allow: ["Bash(echo:*)"] }, ">/dev/null echo hi")).toBe("allow")
    expect(await decideIn({ allow: ["Bash(echo:*)", "Bash(cat:*)"] }, "echo rm victim | cat")).toBe("allow")
    expect(await decideIn(DENYLIST.spec, "echo hi | sh")).toBe("allow")
  })
})
