// One measurement of `npm run bench:bash` (bench/bash-rules.mjs): decides a corpus of Bash commands with the rule
// policy of the sources under `process.argv[2]` (this checkout, or a baseline's), run by tsx. Prints JSON.
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = process.argv[2] ?? path.join(import.meta.dirname, "..")
const iterations = Number(process.argv[3] ?? "200")
const { rules } = await import(path.join(root, "src", "internal", "rules", "permissions.ts"))

const SPEC = {
  allow: [
    "Bash(npm test:*)",
    "Bash(npm run lint:*)",
    "Bash(npm run build:*)",
    "Bash(git status)",
    "Bash(git diff:*)",
    "Bash(git log:*)",
    "Bash(git add:*)",
    "Bash(git commit:*)",
    "Bash(cat:*)",
    "Bash(grep:*)",
    "Bash(head:*)",
    "Bash(tail:*)",
    "Bash(ls:*)",
    "Bash(echo:*)",
    "Bash(cd:*)",
    "Write(./out/**)"
  ],
  deny: ["Bash(rm:*)", "Read(./secrets/**)", "Write(./secrets/**)"]
}

/** The everyday commands of test/BashRules.everyday.test.ts and a few an attacker writes. */
const EVERYDAY = [
  "npm test && npm run lint",
  "git status",
  "cat package.json | grep version",
  "echo done > out/status.txt",
  "git diff --stat",
  "git log --oneline -5",
  "git add -A && git commit -m \"fix: the parser\"",
  "git commit -m \"$(cat <<'EOF'\nfix(rules): judge words after redirections\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
  "ls -la src",
  "npm run build 2>&1 | tail -20",
  "cd src && cat index.ts",
  "grep -rn \"TODO\" src --include=*.ts",
  "head -n 20 README.md",
  "npm test > out/log.txt 2>&1",
  "cat secrets/api-key",
  "echo $(rm -rf out)",
  "bash -c 'eval \"rm x\"'"
]
const LONG = `echo ${"word ".repeat(6000)}`

const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bench-bash-")))
for (const dir of ["src", "out", "secrets"]) fs.mkdirSync(path.join(repo, dir))
for (const file of ["package.json", "README.md", "src/index.ts"]) fs.writeFileSync(path.join(repo, file), "x\n")
fs.writeFileSync(path.join(repo, "secrets", "api-key"), "KEY\n")

const policy = rules(SPEC, () => Effect.succeed({ behavior: "deny", message: "fallback" }))
const decide = (command: string) => Effect.runPromise(policy({ toolName: "Bash", input: { command }, cwd: repo }))

const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const p99 = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!

try {
  let t0 = performance.now()
  let c0 = cpu()
  await decide("git status")
  const cold = { wallMs: performance.now() - t0, cpuMs: cpu() - c0 }
  for (let i = 0; i < 20; i++) for (const command of EVERYDAY) await decide(command)
  const times: Array<number> = []
  c0 = cpu()
  for (let i = 0; i < iterations; i++) {
    for (const command of EVERYDAY) {
      t0 = performance.now()
      await decide(command)
      times.push(performance.now() - t0)
    }
  }
  const cpuPerDecision = (cpu() - c0) / times.length
  const long: Array<number> = []
  for (let i = 0; i < 10; i++) {
    t0 = performance.now()
    await decide(LONG)
    long.push(performance.now() - t0)
  }
  const huge = `echo ${"a".repeat(4 * 1024 * 1024)}`
  t0 = performance.now()
  await decide(huge)
  const hugeMs = performance.now() - t0
  process.stdout.write(
    JSON.stringify({
      cold,
      decisions: times.length,
      medianUs: median(times) * 1000,
      p99Us: p99(times) * 1000,
      cpuUsPerDecision: cpuPerDecision * 1000,
      long30kMedianMs: median(long),
      huge4MbMs: hugeMs
    }) + "\n"
  )
} finally {
  fs.rmSync(repo, { recursive: true, force: true })
}
