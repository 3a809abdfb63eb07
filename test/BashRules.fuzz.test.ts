// The differential fuzzer (test/support/bashFuzz.ts) with a fixed seed: random commands from a grammar of bash's
// constructs, decided by `Permissions.rules` under an allow list and a deny list, and every command let through run
// by a real bash in a fresh sandbox. Any effect the rule set forbids (a command no allow rule names, a write outside
// `out/`, a read of `secrets/`, `victim` removed, a network connection) is a bypass. The longer run is
// test/stress/BashRules.fuzz.stress.ts.
import { expect, it } from "@effect/vitest"
import { fuzz } from "./support/bashFuzz.js"

const SEED = 20_251_128
const COUNT = Number(process.env["ECA_BASH_FUZZ_COUNT"] ?? "250")

it("the fuzzer finds no bypass of the Bash rules (fixed seed)", async () => {
  const report = await fuzz({ seed: SEED, count: COUNT })
  // eslint-disable-next-line no-console
  console.log(
    `bash fuzz: seed ${SEED}, ${report.tried} decisions, ${report.allowed} allowed (run in bash), ${report.denied} ` +
      `denied, ${report.fallback} fallback, ${report.bypasses.length} bypasses; ${JSON.stringify(report.bySet)}; ` +
      `${Math.round(report.timing.decide)} ms deciding, ${Math.round(report.timing.run)} ms in bash`
  )
  expect(report.bypasses).toEqual([])
  // not vacuous: under both rule sets, commands were allowed and run in bash
  expect(report.bySet["allowlist"]!.allowed).toBeGreaterThan(COUNT / 20)
  expect(report.bySet["denylist"]!.allowed).toBeGreaterThan(COUNT / 4)
}, 300_000)
