// The commands a coding agent runs all day must stay allowed by the rules that name them, with deny rules for
// secrets present (they must not match what does not touch the secrets), and the ones that touch them must not be.
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bash } from "./support/rules.js"

const DENY = ["Bash(rm:*)", "Read(./secrets/**)", "Write(./secrets/**)", "Edit(./.env)"]

// [command, the allow rules a user would write for it]
const EVERYDAY: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["npm test && npm run lint", ["Bash(npm test:*)", "Bash(npm run lint:*)"]],
  ["git status", ["Bash(git status)"]],
  ["cat package.json | grep version", ["Bash(cat:*)", "Bash(grep:*)"]],
  ["echo done > out/status.txt", ["Bash(echo:*)", "Write(./out/**)"]],
  ["git diff --stat", ["Bash(git diff:*)"]],
  ["git log --oneline -5", ["Bash(git log:*)"]],
  ["git add -A && git commit -m \"fix: the parser\"", ["Bash(git add:*)", "Bash(git commit:*)"]],
  [
    "git commit -m \"$(cat <<'EOF'\nfix(rules): judge words after redirections\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
    ["Bash(git commit:*)", "Bash(cat:*)"]
  ],
  ["ls -la src", ["Bash(ls:*)"]],
  ["npm run build 2>&1 | tail -20", ["Bash(npm run build:*)", "Bash(tail:*)"]],
  ["cd packages/a && npm test", ["Bash(cd:*)", "Bash(npm test:*)"]],
  ["cd src && cat index.ts", ["Bash(cd:*)", "Bash(cat:*)"]],
  ["cd src && grep -rn TODO .", ["Bash(cd:*)", "Bash(grep:*)"]],
  ["grep -rn \"TODO\" src --include=*.ts", ["Bash(grep:*)"]],
  ["grep -rn TODO src/*.ts", ["Bash(grep:*)"]],
  ["find . -name \"*.ts\" -not -path \"./node_modules/*\"", ["Bash(find:*)"]],
  ["head -n 20 README.md", ["Bash(head:*)"]],
  ["wc -l src/*.ts", ["Bash(wc:*)"]],
  ["npx tsc --noEmit", ["Bash(npx tsc:*)"]],
  ["timeout 60 npm test", ["Bash(timeout 60 npm test:*)"]],
  ["mkdir -p out/x && echo hi > out/x/y", ["Bash(mkdir:*)", "Bash(echo:*)", "Write(./out/**)"]],
  ["python3 -m pytest -q", ["Bash(python3 -m pytest:*)"]],
  ["echo $HOME", ["Bash(echo:*)"]],
  ["printf '%s\\n' a b", ["Bash(printf:*)"]],
  ["diff -u src/index.ts src/other.ts", ["Bash(diff:*)"]],
  ["git checkout -b feature/x", ["Bash(git checkout:*)"]],
  ["sort data.txt | uniq -c", ["Bash(sort:*)", "Bash(uniq:*)"]],
  ["jq .version package.json", ["Bash(jq:*)"]],
  ["sed -n '1,20p' src/index.ts", ["Bash(sed:*)"]],
  ["npm test -- --watch=false 2>&1 | tee out/test.log", ["Bash(npm test:*)", "Bash(tee:*)"]],
  ["set -euo pipefail; npm test", ["Bash(set:*)", "Bash(npm test:*)"]],
  ["command -v node", ["Bash(command -v:*)"]],
  ["test -f package.json && echo yes", ["Bash(test:*)", "Bash(echo:*)"]],
  ["npm test > out/log.txt 2>&1", ["Bash(npm test:*)", "Write(./out/**)"]],
  ["cat <<'EOF' > out/notes.md\n# Notes\n$(not run)\nEOF", ["Bash(cat:*)", "Write(./out/**)"]],
  ["ls\ngit status", ["Bash(ls:*)", "Bash(git status)"]]
]

// commands that look everyday but touch the secrets: the deny rules must match them
const TOUCHING: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["cat secrets/api-key", ["Bash(cat:*)"]],
  ["grep -r KEY .", ["Bash(grep:*)"]],
  ["cd secrets && cat api-key", ["Bash(cd:*)", "Bash(cat:*)"]],
  ["cp secrets/api-key out/", ["Bash(cp:*)"]],
  ["echo x > secrets/api-key", ["Bash(echo:*)", "Write(./**)"]],
  ["rm -rf out", ["Bash(rm:*)"]],
  ["echo A=1 >> .env", ["Bash(echo:*)", "Write(./**)"]],
  ["git checkout evil && cat link/api-key", ["Bash(git checkout:*)", "Bash(cat:*)"]]
]

describe("everyday commands", () => {
  const withRepo = async (body: (repo: string) => Promise<void>) => {
    const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashrules-everyday-")))
    try {
      for (const dir of ["src", "out", "secrets", "packages/a"]) fs.mkdirSync(path.join(repo, dir), { recursive: true })
      for (const file of ["package.json", "README.md", "data.txt", "src/index.ts", "src/other.ts", ".env"]) {
        fs.writeFileSync(path.join(repo, file), "x\n")
      }
      fs.writeFileSync(path.join(repo, "secrets", "api-key"), "KEY\n")
      await body(repo)
    } finally {
      fs.rmSync(repo, { recursive: true, force: true })
    }
  }

  it("stay allowed by the rules that name them, with deny rules for the secrets present", () =>
    withRepo(async (repo) => {
      for (const [command, allow] of EVERYDAY) {
        expect([command, await bash({ allow, deny: DENY }, command, repo)]).toEqual([command, "allow"])
        expect([command, await bash({ allow }, command, repo)]).toEqual([command, "allow"])
      }
    }))

  it("the ones that touch the secrets are denied", () =>
    withRepo(async (repo) => {
      for (const [command, allow] of TOUCHING) {
        expect([command, await bash({ allow, deny: DENY }, command, repo)]).toEqual([command, "deny"])
      }
    }))
})
