// The differential fuzzer (test/support/bashFuzz.ts), longer than the fixed-seed run of `npm test`: several seeds,
// thousands of commands each (ECA_BASH_FUZZ_COUNT per seed, ECA_BASH_FUZZ_SEEDS seeds, a random first seed unless
// ECA_BASH_FUZZ_SEED is given; a failure prints the seed to reproduce it).
import { expect, it } from "@effect/vitest"
import { fuzz } from "../support/bashFuzz.js"

const COUNT = Number(process.env["ECA_BASH_FUZZ_COUNT"] ?? "1000")
const SEEDS = Number(process.env["ECA_BASH_FUZZ_SEEDS"] ?? "2")
const FIRST = Number(process.env["ECA_BASH_FUZZ_SEED"] ?? String(Date.now() % 1_000_000_000))

it("the fuzzer finds no bypass of the Bash rules (several seeds)", async () => {
  for (let seed = FIRST; seed < FIRST + SEEDS; seed++) {
    const report = await fuzz({ seed, count: COUNT })
    // eslint-disable-next-line no-console
    console.log(
      `bash fuzz: seed ${seed}, ${report.tried} decisions, ${report.allowed} allowed (run in bash), ` +
        `${report.denied} denied, ${report.fallback} fallback, ${report.bypasses.length} bypasses`
    )
    expect([seed, report.bypasses]).toEqual([seed, []])
  }
}, 3_600_000)
