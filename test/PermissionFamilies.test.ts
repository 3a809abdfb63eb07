// Rules by tool family (one table, src/internal/rules/toolFamilies.ts), what a rule set hands to the CLI's settings,
// and the PreToolUse hook that checks every tool call against the rules.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AgentOptions, ClaudeAgent, Permissions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { cliPermissions } from "../src/internal/rules/ruleEnforcement.js"
import { MEMBERS } from "../src/internal/rules/toolFamilies.js"
import { decide } from "./support/rules.js"

const CWD = "/work/repo"

describe("rules by tool family", () => {
  it("Read covers every tool that only reads files, and nothing that changes them", async () => {
    const spec = { allow: ["Read"] }
    for (const tool of ["Read", "Grep", "Glob", "LS", "NotebookRead"]) {
      expect([tool, await decide(spec, tool, { file_path: "/x", path: "/x", pattern: "*", notebook_path: "/x" })])
        .toEqual([tool, "allow"])
    }
    for (const tool of ["Edit", "MultiEdit", "Write", "NotebookEdit", "Bash", "WebFetch"]) {
      expect([tool, await decide(spec, tool, { file_path: "/x", command: "ls" })]).toEqual([tool, "fallback"])
    }
  })

  it("Edit and Write both cover every tool that changes files, both ways", async () => {
    for (const family of ["Edit", "Write"]) {
      for (const tool of ["Edit", "MultiEdit", "Write"]) {
        expect(await decide({ deny: [`${family}(./secrets/**)`] }, tool, { file_path: `${CWD}/secrets/k` }))
          .toBe("deny")
        expect(await decide({ allow: [`${family}(./src/**)`] }, tool, { file_path: `${CWD}/src/a.ts` })).toBe("allow")
        expect(await decide({ allow: [`${family}(./src/**)`] }, tool, { file_path: `${CWD}/lib/a.ts` }))
          .toBe("fallback")
      }
      expect(await decide({ deny: [`${family}(./nb/**)`] }, "NotebookEdit", { notebook_path: `${CWD}/nb/a.ipynb` }))
        .toBe("deny")
      expect(await decide({ allow: [family] }, "Read", { file_path: `${CWD}/a` })).toBe("fallback")
    }
  })

  it("a deny or ask Read rule also refuses changing what it covers; an allow Read rule allows no change", async () => {
    for (const tool of ["Edit", "Write", "MultiEdit"]) {
      expect(await decide({ deny: ["Read(./secrets/**)"] }, tool, { file_path: `${CWD}/secrets/k` })).toBe("deny")
      expect(await decide({ ask: ["Read(./secrets/**)"], allow: [tool] }, tool, { file_path: `${CWD}/secrets/k` }))
        .toBe("fallback")
      expect(await decide({ allow: ["Read(./src/**)"] }, tool, { file_path: `${CWD}/src/a.ts` })).toBe("fallback")
    }
    // a bare deny Read removes the reading tools only
    expect(await decide({ deny: ["Read"], allow: ["Write"] }, "Write", { file_path: `${CWD}/a` })).toBe("allow")
  })

  it("a rule on a directory covers what is in it (deny and ask); an allow rule stays exact", async () => {
    expect(await decide({ deny: ["Read(./secrets)"] }, "Read", { file_path: `${CWD}/secrets/deep/k` })).toBe("deny")
    expect(await decide({ deny: ["Read(./secrets)"] }, "Read", { file_path: `${CWD}/secretsX` })).toBe("fallback")
    expect(await decide({ allow: ["Read(./src)"] }, "Read", { file_path: `${CWD}/src/a.ts` })).toBe("fallback")
  })

  it("a path the kernel resolves per process cannot be judged here: deny and ask rules match, allow rules do not", async () => {
    for (const file of ["/proc/self/cwd/secrets/k", "/proc/1/root/etc/passwd", "/dev/fd/3", "/dev/stdin"]) {
      expect([file, await decide({ deny: ["Read(./secrets/**)"], allow: ["Read"] }, "Read", { file_path: file })])
        .toEqual([file, "deny"])
      expect([file, await decide({ allow: ["Read(/**)"] }, "Read", { file_path: file })]).toEqual([file, "fallback"])
    }
    expect(await decide({ deny: ["Read(./secrets/**)"] }, "Read", { file_path: "/procfs/x" })).toBe("fallback")
  })

  it("a call whose path the input does not give: deny and ask rules match it, allow rules do not", async () => {
    for (const input of [{}, { file_path: 42 }, { file_path: "" }]) {
      expect(await decide({ deny: ["Read(./secrets/**)"] }, "Read", input)).toBe("deny")
      expect(await decide({ allow: ["Read(./src/**)"] }, "Read", input)).toBe("fallback")
    }
    expect(await decide({ deny: ["Read(./secrets/**)"] }, "NotebookEdit", { file_path: `${CWD}/a` })).toBe("deny")
  })

  it("a deny or ask Read rule covers the script a Workflow reads; no allow rule allows a Workflow", async () => {
    const spec = { deny: ["Read(./secrets/**)"], allow: ["Workflow"] }
    expect(await decide(spec, "Workflow", { scriptPath: `${CWD}/secrets/k` })).toBe("deny")
    expect(await decide(spec, "Workflow", { scriptPath: 7 })).toBe("deny")
    expect(await decide(spec, "Workflow", { script: "export const meta = {}" })).toBe("allow")
    expect(await decide({ allow: ["Read"] }, "Workflow", { scriptPath: `${CWD}/w.js` })).toBe("fallback")
  })

  it("Bash covers Monitor, whose command the CLI runs as a Bash command", async () => {
    expect(await decide({ allow: ["Bash(echo:*)"] }, "Monitor", { command: "echo hi", description: "m" }))
      .toBe("allow")
    expect(await decide({ allow: ["Bash(echo:*)"] }, "Monitor", { command: "echo hi; rm -rf x" })).toBe("fallback")
    expect(await decide({ deny: ["Bash(rm:*)"], allow: ["Monitor"] }, "Monitor", { command: "ls && rm -rf x" }))
      .toBe("deny")
    expect(await decide({ deny: ["Bash"] }, "Monitor", { ws: { url: "ws://x" } })).toBe("deny")
  })

  it("every member of the table belongs to one family and names its path fields", () => {
    const families = new Map<string, Array<string>>()
    for (const [tool, member] of MEMBERS) families.set(member.family, [...(families.get(member.family) ?? []), tool])
    expect(Object.fromEntries(families)).toEqual({
      Read: ["Read", "NotebookRead", "Grep", "Glob", "LS"],
      Edit: ["Edit", "MultiEdit", "Write", "NotebookEdit"],
      Bash: ["Bash", "Monitor"],
      Script: ["Workflow"]
    })
  })
})

describe("rules on searches (Grep, Glob, LS)", () => {
  const withTree = (body: (cwd: string) => Promise<void>) => async () => {
    const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "eca-families-")))
    try {
      for (const dir of ["secrets/sub", "src/deep", "docs"]) fs.mkdirSync(path.join(cwd, dir), { recursive: true })
      await body(cwd)
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true })
    }
  }
  const deny = { deny: ["Read(./secrets/**)"] }

  it(
    "a deny rule refuses a search that could reach what it covers: the cwd, an ancestor, the tree itself",
    withTree(async (cwd) => {
      expect(await decide(deny, "Grep", { pattern: "x" }, cwd)).toBe("deny")
      expect(await decide(deny, "Grep", { pattern: "x", path: cwd }, cwd)).toBe("deny")
      expect(await decide(deny, "Grep", { pattern: "x", path: "secrets/sub" }, cwd)).toBe("deny")
      expect(await decide(deny, "Grep", { pattern: "x", path: "/" }, cwd)).toBe("deny")
      expect(await decide(deny, "Grep", { pattern: "x", path: "src" }, cwd)).toBe("fallback")
      expect(await decide(deny, "LS", { path: cwd }, cwd)).toBe("deny")
      expect(await decide(deny, "LS", { path: `${cwd}/docs` }, cwd)).toBe("fallback")
    })
  )

  it(
    "Glob: the pattern's leading directories are part of the search; a `..` after a glob could leave it",
    withTree(async (cwd) => {
      expect(await decide(deny, "Glob", { pattern: "secrets/*" }, cwd)).toBe("deny")
      expect(await decide(deny, "Glob", { pattern: "**/*.ts" }, cwd)).toBe("deny")
      expect(await decide(deny, "Glob", { pattern: "src/**/*.ts" }, cwd)).toBe("fallback")
      expect(await decide(deny, "Glob", { pattern: "*.ts", path: "src" }, cwd)).toBe("fallback")
      expect(await decide(deny, "Glob", { pattern: "../*/secrets/*", path: "src" }, cwd)).toBe("deny")
      expect(await decide(deny, "Glob", { pattern: "src/*/../../secrets/*" }, cwd)).toBe("deny")
      expect(await decide(deny, "Glob", { pattern: `${cwd}/secrets/*`, path: "src" }, cwd)).toBe("deny")
      expect(await decide(deny, "Glob", { pattern: "~/x/*" }, cwd)).toBe("deny")
    })
  )

  it(
    "a deny glob that can match at any depth refuses every search above such a path",
    withTree(async (cwd) => {
      const env = { deny: ["Read(**/.env)"] }
      expect(await decide(env, "Grep", { pattern: "x", path: "src" }, cwd)).toBe("deny")
      const oneLevel = { deny: ["Read(./*/secret.txt)"] }
      expect(await decide(oneLevel, "Grep", { pattern: "x", path: "src" }, cwd)).toBe("deny")
      expect(await decide(oneLevel, "Grep", { pattern: "x", path: "src/deep" }, cwd)).toBe("fallback")
    })
  )

  it(
    "an allow rule allows a search only when it covers everything under the searched directory",
    withTree(async (cwd) => {
      expect(await decide({ allow: ["Read(./src/**)"] }, "Grep", { pattern: "x", path: "src" }, cwd)).toBe("allow")
      expect(await decide({ allow: ["Read(./src/**)"] }, "Grep", { pattern: "x", path: "src/deep" }, cwd))
        .toBe("allow")
      expect(await decide({ allow: ["Read(./src/**)"] }, "Grep", { pattern: "x" }, cwd)).toBe("fallback")
      expect(await decide({ allow: ["Read(./src/*.ts)"] }, "Grep", { pattern: "x", path: "src" }, cwd))
        .toBe("fallback")
      expect(await decide({ allow: ["Read(./src/**)"] }, "Glob", { pattern: "src/**/*.ts" }, cwd)).toBe("allow")
      expect(await decide({ allow: ["Read(./src/**)"] }, "Glob", { pattern: "*.ts" }, cwd)).toBe("fallback")
      expect(await decide({ allow: ["Read"] }, "Grep", { pattern: "x" }, cwd)).toBe("allow")
    })
  )
})

describe("the rules handed to the CLI's settings", () => {
  const home = os.homedir()

  it("deny rules checked before any allow or ask rule become deny rules; other deny and ask rules ask rules", () => {
    const object = Permissions.rules({
      allow: ["Read", "Bash(npm test:*)"],
      deny: ["Read(./secrets/**)", "Bash(rm:*)"],
      ask: ["WebFetch(domain:example.com)"]
    })
    expect(cliPermissions(object.rules ?? [], CWD)).toEqual({
      deny: [`Read(//work/repo/secrets/**)`, "Bash(rm:*)"],
      ask: ["WebFetch(domain:example.com)"]
    })
    const list = Permissions.rules([
      { behavior: "deny", rule: "Edit(./.git/**)" },
      { behavior: "allow", rule: "Read(./secrets/public/**)" },
      { behavior: "deny", rule: "Read(./secrets/**)" },
      { behavior: "ask", rule: "Bash(git push:*)" }
    ])
    expect(cliPermissions(list.rules ?? [], CWD)).toEqual({
      deny: ["Edit(//work/repo/.git/**)"],
      ask: ["Read(//work/repo/secrets/**)", "Bash(git push:*)"]
    })
  })

  it("a family rule without content stands for each member; Write(path) becomes Edit(path) (the CLI's form)", () => {
    const rules = (deny: ReadonlyArray<string>) => cliPermissions(deny.map((rule) => ({ behavior: "deny", rule })), CWD)
    expect(rules(["Read"]).deny).toEqual(["Read", "NotebookRead", "Grep", "Glob", "LS"])
    expect(rules(["Write"]).deny).toEqual(["Edit", "MultiEdit", "Write", "NotebookEdit"])
    expect(rules(["Bash", "Bash(*)"]).deny).toEqual(["Bash", "Monitor"])
    expect(rules(["Write(./out/**)", "Edit(./out/**)"]).deny).toEqual(["Edit(//work/repo/out/**)"])
    expect(rules(["mcp__calc", "mcp__calc__add", "WebSearch", "PowerShell(Remove-Item:*)"]).deny)
      .toEqual(["mcp__calc", "mcp__calc__add", "WebSearch", "PowerShell(Remove-Item:*)"])
  })

  it("paths are written absolute, with the literal part escaped; what the CLI cannot say is left to the hook", () => {
    const rules = (deny: ReadonlyArray<string>, cwd = CWD) =>
      cliPermissions(deny.map((rule) => ({ behavior: "deny", rule })), cwd).deny
    expect(rules(["Read(/etc/**)", "Read(//etc/ssh/*)", "Read(~/.ssh/**)", "Read(../other/*.key)"])).toEqual([
      "Read(//etc/**)",
      "Read(//etc/ssh/*)",
      `Read(/${home}/.ssh/**)`,
      "Read(//work/other/*.key)"
    ])
    expect(rules(["Read(./x/[a]{b}\\c/**)"], "/srv/it's [v1]*")).toEqual([
      "Read(//srv/it's \\[v1\\]\\*/x/\\[a\\]\\{b\\}\\\\c/**)"
    ])
    expect(rules(["Re*", "mcp__*", "Grep(./src/**)", "NotebookEdit(./nb/**)", "Task(x)", "WebFetch(x)"])).toEqual([])
  })

  it("merged into the caller's settings after their own rules; a settings file path cannot take them", () => {
    const cliPermissions = { deny: ["Read(//r/secrets/**)"], ask: ["Bash(git push:*)"] }
    const launch = (options: AgentOptions.Options) =>
      Effect.runSync(Effect.either(AgentOptions.toLaunch(options, { cliPermissions })))
    const settingsOf = (result: ReturnType<typeof launch>) => {
      const args = Either.getOrThrow(result).args
      return JSON.parse(args[args.indexOf("--settings") + 1]!)
    }
    expect(settingsOf(launch({}))).toEqual({ permissions: cliPermissions })
    expect(settingsOf(launch({
      settings: { model: "m", permissions: { deny: ["WebSearch"], allow: ["Read"], defaultMode: "plan" } }
    }))).toEqual({
      model: "m",
      permissions: {
        deny: ["WebSearch", "Read(//r/secrets/**)"],
        allow: ["Read"],
        ask: ["Bash(git push:*)"],
        defaultMode: "plan"
      }
    })
    expect(settingsOf(launch({ settings: "{\"permissions\":{\"ask\":[\"Edit\"]}}" })).permissions.ask)
      .toEqual(["Edit", "Bash(git push:*)"])
    const file = launch({ settings: "/etc/claude/settings.json" })
    expect(Either.isLeft(file) && file.left.message).toMatch(/settings.*file path/)
    // nothing to hand over: a settings file is passed as it is
    expect(
      Either.getOrThrow(
        AgentOptions.toLaunch({ settings: "/s.json" }, { cliPermissions: { deny: [], ask: [] } })
          .pipe(Effect.either, Effect.runSync)
      ).args
    ).toEqual(["--settings", "/s.json"])
  })
})

describe("the PreToolUse hook of a rule set", () => {
  const preToolUse = (tool_name: string, tool_input: unknown, cwd = CWD) => ({
    session_id: "s",
    transcript_path: "/t.jsonl",
    cwd,
    hook_event_name: "PreToolUse",
    tool_name,
    tool_input,
    tool_use_id: "toolu_1"
  })

  /** A session under `policy` whose scripted CLI calls the PreToolUse hook with each input. */
  const run = (policy: Permissions.Policy, inputs: ReadonlyArray<unknown>) =>
    Effect.gen(function*() {
      const result = yield* Deferred.make<{ init: Record<string, unknown>; answers: ReadonlyArray<unknown> }>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const init = yield* cli.initialize
          const hooks = init["hooks"] as
            | Record<string, ReadonlyArray<{ hookCallbackIds: ReadonlyArray<string> }>>
            | undefined
          const id = hooks?.["PreToolUse"]?.[0]?.hookCallbackIds[0]
          const answers: Array<unknown> = []
          // without the hook there is nothing to call
          for (const input of id === undefined ? [] : inputs) {
            answers.push(yield* cli.requestRaw("hook_callback", { callback_id: id, input, tool_use_id: "toolu_1" }))
          }
          yield* Deferred.succeed(result, { init, answers })
        }), { stepTimeout: "1 hour" })
      const fiber = yield* ClaudeAgent.session({ cwd: CWD }).pipe(
        Effect.zipRight(Deferred.await(result)),
        Effect.provide(layer),
        Effect.provide(Permissions.layer(policy)),
        Effect.fork
      )
      return yield* Fiber.join(fiber)
    })

  const decision = (answer: unknown) => {
    const output = (answer as { response?: { hookSpecificOutput?: Record<string, unknown> } }).response
    return output?.hookSpecificOutput?.["permissionDecision"] ?? "none"
  }

  it.scoped("denies what a deny rule matches first, asks what an ask rule matches first, says nothing otherwise", () =>
    Effect.gen(function*() {
      const policy = Permissions.rules([
        { behavior: "allow", rule: "Read(./secrets/public/**)" },
        { behavior: "deny", rule: "Read(./secrets/**)", message: "closed" },
        { behavior: "ask", rule: "Bash(git push:*)" },
        { behavior: "allow", rule: "Bash" }
      ])
      const { answers } = yield* run(policy, [
        preToolUse("Read", { file_path: `${CWD}/secrets/k` }),
        preToolUse("Read", { file_path: `${CWD}/secrets/public/p` }),
        preToolUse("Edit", { file_path: `${CWD}/secrets/k`, old_string: "a", new_string: "b" }),
        preToolUse("Bash", { command: "git push origin main" }),
        preToolUse("Bash", { command: "git status" }),
        preToolUse("Read", { file_path: `${CWD}/README.md` })
      ])
      expect(answers.map(decision)).toEqual(["deny", "none", "deny", "ask", "none", "none"])
      expect(answers[0]).toMatchObject({
        response: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecisionReason: "closed" } }
      })
    }))

  it.scoped("a tool's relative path is judged from the directory the CLI reports for the call", () =>
    Effect.gen(function*() {
      const policy = Permissions.rules({ deny: ["Read(./secrets/**)"] })
      const { answers } = yield* run(policy, [
        preToolUse("Read", { file_path: "k" }, `${CWD}/secrets`),
        preToolUse("Read", { file_path: "k" }, CWD),
        preToolUse("Grep", { pattern: "x" }, `${CWD}/secrets`),
        preToolUse("Grep", { pattern: "x" }, `${CWD}/src`),
        preToolUse("Read", "not an object")
      ])
      expect(answers.map(decision)).toEqual(["deny", "none", "deny", "none", "deny"])
    }))

  it.scoped("registered only for a rule set with a deny or ask rule, and never for a policy of one's own", () =>
    Effect.gen(function*() {
      const input = preToolUse("Read", { file_path: `${CWD}/a` })
      const allowOnly = yield* run(Permissions.rules({ allow: ["Read"] }), [input])
      expect(allowOnly.init["hooks"]).toBeUndefined()
      const own = yield* run((request) => Permissions.rules({ deny: ["Read"] })(request), [input])
      expect(own.init["hooks"]).toBeUndefined()
    }))
})
