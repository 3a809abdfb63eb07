import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { ClaudeAgent, Permissions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"
import { sleeping } from "./support/clock.js"

const req = (toolName: string, input: Record<string, unknown>, cwd = "/work/repo") => ({ toolName, input, cwd })

describe("Permissions.matches", () => {
  const matches = (rule: string, request: ReturnType<typeof req>) =>
    Effect.runPromise(Permissions.matches(rule, request))

  it("tool names, MCP servers and wildcards", async () => {
    expect(await matches("Read", req("Read", { file_path: "/x" }))).toBe(true)
    expect(await matches("Read", req("Write", { file_path: "/x" }))).toBe(false)
    expect(await matches("mcp__calc", req("mcp__calc__add", {}))).toBe(true)
    expect(await matches("mcp__calc", req("mcp__calculator__add", {}))).toBe(false)
    expect(await matches("mcp__calc__*", req("mcp__calc__sub", {}))).toBe(true)
    expect(await matches("mcp__calc__add", req("mcp__calc__add", {}))).toBe(true)
  })

  it("Bash prefixes, exact commands and wildcards", async () => {
    expect(await matches("Bash(npm test:*)", req("Bash", { command: "npm test" }))).toBe(true)
    expect(await matches("Bash(npm test:*)", req("Bash", { command: "npm test -- --watch" }))).toBe(true)
    expect(await matches("Bash(npm test:*)", req("Bash", { command: "npm testing" }))).toBe(false)
    expect(await matches("Bash(git status)", req("Bash", { command: "git status" }))).toBe(true)
    expect(await matches("Bash(git status)", req("Bash", { command: "git status -s" }))).toBe(false)
    expect(await matches("Bash(git * --dry-run)", req("Bash", { command: "git push --dry-run" }))).toBe(true)
    expect(await matches("Bash", req("Bash", { command: "anything" }))).toBe(true)
  })

  it("an allow rule must match every part of a compound command", async () => {
    const rule = "Bash(npm test:*)"
    expect(await matches(rule, req("Bash", { command: "npm test && rm -rf /" }))).toBe(false)
    expect(await matches(rule, req("Bash", { command: "npm test && npm test -- -u" }))).toBe(true)
    expect(await matches(rule, req("Bash", { command: "npm test | tee out; rm x" }))).toBe(false)
    // separators inside quotes do not split
    expect(await matches("Bash(echo:*)", req("Bash", { command: "echo 'a && b' \"c; d\"" }))).toBe(true)
  })

  it("a deny rule matches when any part of a compound command does", async () => {
    const policy = Permissions.rules({ deny: ["Bash(rm:*)"], allow: ["Bash(npm test:*)"] })
    const decide = (command: string) =>
      Effect.runPromise(policy({ ...req("Bash", { command }) } as Permissions.PermissionRequest))
    expect((await decide("npm test && rm -rf /")).behavior).toBe("deny")
    expect((await decide("npm test")).behavior).toBe("allow")
  })

  it("path globs are relative to the session's cwd, absolute or home based", async () => {
    expect(await matches("Edit(./src/**)", req("Edit", { file_path: "/work/repo/src/a/b.ts" }))).toBe(true)
    expect(await matches("Edit(./src/**)", req("Edit", { file_path: "/work/repo/test/b.ts" }))).toBe(false)
    expect(await matches("Edit(src/*.ts)", req("Edit", { file_path: "src/a.ts" }))).toBe(true)
    expect(await matches("Edit(src/*.ts)", req("Edit", { file_path: "src/deep/a.ts" }))).toBe(false)
    expect(await matches("Read(/etc/**)", req("Read", { file_path: "/etc/passwd" }))).toBe(true)
    expect(await matches("Read(**/*.md)", req("Read", { file_path: "/work/repo/docs/x.md" }))).toBe(true)
    expect(await matches("Glob(./src/**)", req("Glob", { pattern: "*.ts", path: "/work/repo/src" }))).toBe(true)
  })

  it("WebFetch domains", async () => {
    expect(await matches("WebFetch(domain:example.com)", req("WebFetch", { url: "https://docs.example.com/x" })))
      .toBe(true)
    expect(await matches("WebFetch(domain:example.com)", req("WebFetch", { url: "https://example.org/x" })))
      .toBe(false)
  })
})

describe("Permissions.rules", () => {
  const decide = (policy: Permissions.Policy, toolName: string, input: Record<string, unknown>) =>
    Effect.runPromise(policy({ ...req(toolName, input) } as Permissions.PermissionRequest))

  it("object form: deny, then ask (fallback), then allow; no match goes to the fallback", async () => {
    const asked: Array<string> = []
    const policy = Permissions.rules({
      allow: ["Bash", "Read"],
      deny: ["Bash(rm:*)"],
      ask: ["Bash(git push:*)"],
      fallback: (r) => Effect.sync(() => (asked.push(r.toolName), Permissions.deny("asked and refused")))
    })
    expect(await decide(policy, "Bash", { command: "rm -rf x" })).toMatchObject({ behavior: "deny" })
    expect(await decide(policy, "Bash", { command: "git push origin" })).toEqual(Permissions.deny("asked and refused"))
    expect(await decide(policy, "Bash", { command: "ls" })).toEqual({ behavior: "allow" })
    expect(await decide(policy, "WebFetch", { url: "https://x" })).toEqual(Permissions.deny("asked and refused"))
    expect(asked).toEqual(["Bash", "WebFetch"])
  })

  it("list form: the first matching rule wins", async () => {
    const policy = Permissions.rules([
      { behavior: "allow", rule: "Bash(ls:*)" },
      { behavior: "deny", rule: "Bash", message: "no other Bash" }
    ])
    expect(await decide(policy, "Bash", { command: "ls -la" })).toEqual({ behavior: "allow" })
    expect(await decide(policy, "Bash", { command: "cat x" })).toEqual({ behavior: "deny", message: "no other Bash" })
    expect(await decide(policy, "Read", { file_path: "/x" })).toMatchObject({ behavior: "deny" })
  })
})

/** A scripted CLI that asks `canUseTool` for each request in `asks` and hands the answers back. */
const asking = (asks: ReadonlyArray<readonly [string, Record<string, unknown>, Record<string, unknown>?]>) =>
  Effect.gen(function*() {
    const answers = yield* Deferred.make<ReadonlyArray<unknown>>()
    const args = yield* Deferred.make<ReadonlyArray<string>>()
    const layer = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(args, cli.spec.args)
        const out: Array<unknown> = []
        for (const [tool, input, extra] of asks) out.push(yield* cli.canUseTool(tool, input, extra))
        yield* Deferred.succeed(answers, out)
      }), { stepTimeout: "1 hour" })
    return { layer, answers: Deferred.await(answers), args: Deferred.await(args) }
  })

const withSession = <A, E>(
  layer: Layer.Layer<import("effect-claude-agent").Transport.Transport>,
  body: Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    yield* ClaudeAgent.session().pipe(Effect.provide(layer))
    return yield* body
  })

describe("Permissions in a session", () => {
  it.scoped("allowAll answers allow with the original input and the toolUseID; --permission-prompt-tool=stdio is passed", () =>
    Effect.gen(function*() {
      const { layer, answers, args } = yield* asking([["Bash", { command: "touch x" }]])
      const [answer] = yield* withSession(layer, answers).pipe(Effect.provide(Permissions.allowAll))
      expect(answer).toEqual({ behavior: "allow", updatedInput: { command: "touch x" }, toolUseID: "toolu_scripted_1" })
      expect(yield* args).toContain("--permission-prompt-tool=stdio")
    }))

  it.scoped("denyAll answers deny with a message", () =>
    Effect.gen(function*() {
      const { layer, answers } = yield* asking([["Write", { file_path: "/x", content: "" }]])
      const [answer] = yield* withSession(layer, answers).pipe(Effect.provide(Permissions.denyAll))
      expect(answer).toMatchObject({ behavior: "deny", message: "Permission to use Write was denied" })
    }))

  it.scoped("without a Permissions service no permission prompt tool is passed and can_use_tool is unsupported", () =>
    Effect.gen(function*() {
      const answered = yield* Deferred.make<unknown>()
      const args = yield* Deferred.make<ReadonlyArray<string>>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* Deferred.succeed(args, cli.spec.args)
          yield* Deferred.succeed(answered, yield* cli.requestRaw("can_use_tool", { tool_name: "Bash", input: {} }))
        })
      )
      yield* ClaudeAgent.session().pipe(Effect.provide(layer))
      expect(yield* args).not.toContain("--permission-prompt-tool=stdio")
      expect(yield* Deferred.await(answered)).toMatchObject({ subtype: "error" })
    }))

  it.scoped("a callback's updatedInput and updatedPermissions go on the wire; its context is complete", () =>
    Effect.gen(function*() {
      const seen = yield* Deferred.make<Permissions.PermissionRequest>()
      const suggestion = {
        type: "addRules",
        rules: [{ toolName: "Bash", ruleContent: "touch x" }],
        behavior: "allow",
        destination: "localSettings"
      } as const
      const { layer, answers } = yield* asking([["Bash", { command: "touch x" }, {
        permission_suggestions: [suggestion],
        blocked_path: "/repo/x",
        decision_reason: "writes a file",
        agent_id: "agent-1",
        title: "Run touch?"
      }]])
      const PermissionsLive = Permissions.layer((request) =>
        Effect.as(
          Deferred.succeed(seen, request),
          Permissions.allow({
            updatedInput: { command: "touch y" },
            updatedPermissions: request.suggestions
          })
        )
      )
      const [answer] = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive))
      expect(answer).toEqual({
        behavior: "allow",
        updatedInput: { command: "touch y" },
        updatedPermissions: [suggestion],
        toolUseID: "toolu_scripted_1"
      })
      const request = yield* Deferred.await(seen)
      expect(request).toMatchObject({
        toolName: "Bash",
        suggestions: [suggestion],
        blockedPath: "/repo/x",
        decisionReason: "writes a file",
        agentId: "agent-1",
        title: "Run touch?"
      })
      expect(request.signal.aborted).toBe(false)
    }))

  it.scoped("a request's signal is an own enumerable property, built on read through one getter for all requests", () =>
    Effect.gen(function*() {
      const requests: Array<Permissions.PermissionRequest> = []
      const { layer, answers } = yield* asking([["Bash", { command: "ls" }], ["Read", { file_path: "/x" }]])
      const PermissionsLive = Permissions.layer((request) =>
        Effect.sync(() => {
          requests.push(request)
          return Permissions.allow()
        })
      )
      yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive))
      expect(requests).toHaveLength(2)
      const [first, second] = requests.map((r) => Object.getOwnPropertyDescriptor(r, "signal"))
      expect(first?.enumerable).toBe(true)
      expect(typeof first?.get).toBe("function")
      // one getter for every request: a getter per object leaves each in V8's slow dictionary mode
      expect(second?.get).toBe(first?.get)
      expect({ ...requests[0]! }.signal).toBe(requests[0]!.signal)
      expect(requests[0]!.signal.aborted).toBe(false)
    }))

  it.scoped("a decision that times out is a deny, and the next request is still decided by the policy", () =>
    Effect.gen(function*() {
      let calls = 0
      const called = yield* Deferred.make<void>()
      const PermissionsLive = Permissions.layer(
        () => (++calls === 1
          ? Effect.zipRight(Deferred.succeed(called, undefined), Effect.never)
          : Effect.succeed(Permissions.allow())),
        { timeout: "30 seconds" }
      )
      const { layer, answers } = yield* asking([["Bash", { command: "touch a" }], ["Bash", { command: "touch b" }]])
      const fiber = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive), Effect.fork)
      yield* Deferred.await(called)
      yield* sleeping("30 seconds")
      yield* TestClock.adjust("30 seconds")
      const [first, second] = yield* Fiber.join(fiber)
      expect(first).toMatchObject({
        behavior: "deny",
        message: "Permission denied (fail closed): no decision within 30s"
      })
      expect(second).toMatchObject({ behavior: "allow" })
      expect(calls).toBe(2)
    }))

  it.scoped("a timeout that is not a duration fails the session with InvalidOptions before anything is spawned", () =>
    Effect.gen(function*() {
      let spawned = false
      const layer = ScriptedCli.layer(() => Effect.sync(() => void (spawned = true)))
      // from plain JavaScript, or through a cast
      const timeout: unknown = "soon"
      const PermissionsLive = Permissions.layer(() => Effect.succeed(Permissions.allow()), {
        timeout: timeout as Duration.DurationInput
      })
      const error = yield* ClaudeAgent.session().pipe(Effect.provide([layer, PermissionsLive]), Effect.flip)
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "Permissions timeout" })
      expect(spawned).toBe(false)
    }))

  it.scoped("a failing or dying policy is a deny, never an error response", () =>
    Effect.gen(function*() {
      let calls = 0
      const PermissionsLive = Permissions.layer(() => {
        calls++
        return calls === 1 ? Effect.fail("database down") : Effect.die(new Error("boom"))
      })
      const { layer, answers } = yield* asking([["Bash", { command: "touch a" }], ["Bash", { command: "touch b" }]])
      const [first, second] = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive))
      expect(first).toMatchObject({ behavior: "deny", message: expect.stringContaining("database down") })
      expect(second).toMatchObject({ behavior: "deny", message: expect.stringContaining("boom") })
    }))

  it.scoped("accepted 'always allow' suggestions are remembered for the session", () =>
    Effect.gen(function*() {
      let calls = 0
      const suggestion = {
        type: "addRules",
        rules: [{ toolName: "Bash", ruleContent: "npm test:*" }],
        behavior: "allow",
        destination: "session"
      } as const
      const PermissionsLive = Permissions.layer((request) =>
        Effect.sync(() => {
          calls++
          return Permissions.allow({ updatedPermissions: request.suggestions })
        })
      )
      const { layer, answers } = yield* asking([
        ["Bash", { command: "npm test" }, { permission_suggestions: [suggestion] }],
        ["Bash", { command: "npm test -- -u" }],
        ["Bash", { command: "rm -rf /" }]
      ])
      const [a, b, c] = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive))
      expect([a, b, c].map((x) => (x as { behavior: string }).behavior)).toEqual(["allow", "allow", "allow"])
      // the second call matched the remembered rule, the third asked the policy again
      expect(calls).toBe(2)
    }))

  it.scoped("the session's permission store: mode deny overrides the policy", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const answer = yield* Deferred.make<unknown>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* Deferred.await(gate)
          yield* Deferred.succeed(answer, yield* cli.canUseTool("Bash", { command: "touch x" }))
        }), { stepTimeout: "1 hour" })
      const session = yield* ClaudeAgent.session().pipe(Effect.provide(layer), Effect.provide(Permissions.allowAll))
      session.permissions.setMode("deny")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Deferred.await(answer)).toMatchObject({
        behavior: "deny",
        message: "Denied: this session's permission mode is deny"
      })
    }))

  it.scoped("askUserQuestion hands the questions to user code and answers with updatedInput.answers", () =>
    Effect.gen(function*() {
      const input = {
        questions: [{
          question: "Which color do you prefer?",
          header: "Color",
          options: [{ label: "Red", description: "The color red" }, { label: "Blue", description: "The color blue" }],
          multiSelect: false
        }]
      }
      const PermissionsLive = Permissions.layer(
        Permissions.askUserQuestion((questions) =>
          Effect.succeed({ [questions[0]!.question]: questions[0]!.options[1]!.label })
        )
      )
      const { layer, answers } = yield* asking([
        ["AskUserQuestion", input, { requires_user_interaction: true }],
        ["Bash", { command: "touch x" }]
      ])
      const [answer, other] = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive))
      expect(answer).toMatchObject({
        behavior: "allow",
        updatedInput: { ...input, answers: { "Which color do you prefer?": "Blue" } }
      })
      expect(other).toMatchObject({ behavior: "deny" })
    }))

  it.scoped("shadowing warnings (bypassPermissions, bare allowedTools) are logged", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => {
        logs.push(String(message))
      })
      const layer = ScriptedCli.layer((cli) => cli.stall)
      yield* ClaudeAgent.session({
        permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true,
        allowedTools: ["Read", "Bash(npm test:*)"]
      }).pipe(
        Effect.provide(layer),
        Effect.provide(Permissions.allowAll),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(logs.some((l) => l.includes("CLAUDE_SDK_CAN_USE_TOOL_SHADOWED") && l.includes("bypassPermissions")))
        .toBe(true)
      expect(logs.some((l) => l.includes("allowedTools Read approve"))).toBe(true)
    }))

  it.scoped("works with query and a string prompt too", () =>
    Effect.gen(function*() {
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          yield* cli.expectUser
          const answer = yield* cli.canUseTool("Bash", { command: "touch x" })
          yield* cli.turn(JSON.stringify(answer))
        })
      )
      const messages = yield* ClaudeAgent.query("go").pipe(
        Stream.runCollect,
        Effect.provide(layer),
        Effect.provide(Permissions.allowAll)
      )
      expect(Chunk.unsafeLast(messages)).toMatchObject({ result: expect.stringContaining("\"behavior\":\"allow\"") })
    }))
})

describe("Permissions: interruption and cancellation", () => {
  it.scoped("a decision that is interrupted is a deny, and the next request is still decided by the policy", () =>
    Effect.gen(function*() {
      let calls = 0
      const PermissionsLive = Permissions.layer(() => {
        calls++
        if (calls === 1) return Effect.interrupt
        if (calls === 2) {
          // waits on a fiber (a UI prompt, say) that something else interrupts 10 seconds later
          return Effect.gen(function*() {
            const prompt = yield* Effect.fork(Effect.never)
            yield* Effect.fork(Effect.delay(Fiber.interrupt(prompt), "10 seconds"))
            return yield* Fiber.join(prompt)
          })
        }
        return Effect.succeed(Permissions.allow())
      })
      const { layer, answers } = yield* asking([
        ["Bash", { command: "touch a" }],
        ["Bash", { command: "touch b" }],
        ["Bash", { command: "touch c" }]
      ])
      const fiber = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive), Effect.fork)
      yield* sleeping("10 seconds")
      expect(calls).toBe(2)
      yield* TestClock.adjust("10 seconds")
      const [first, second, third] = yield* Fiber.join(fiber)
      const interrupted = "Permission denied (fail closed): the permission handler was interrupted"
      expect(first).toEqual({ behavior: "deny", message: interrupted, toolUseID: "toolu_scripted_1" })
      expect(second).toEqual({ behavior: "deny", message: interrupted, toolUseID: "toolu_scripted_2" })
      expect(third).toEqual({ behavior: "allow", updatedInput: { command: "touch c" }, toolUseID: "toolu_scripted_3" })
      expect(calls).toBe(3)
    }))

  it.scoped("control_cancel_request interrupts the decision and aborts its signal; no answer is sent for it", () =>
    Effect.gen(function*() {
      const first = yield* Deferred.make<Permissions.PermissionRequest>()
      let calls = 0
      let abortEvents = 0
      let interrupted = false
      const PermissionsLive = Permissions.fromCallback((request) => {
        if (++calls > 1) return Effect.succeed(Permissions.allow())
        request.signal.addEventListener("abort", () => abortEvents++)
        return Deferred.succeed(first, request).pipe(
          Effect.zipRight(Effect.never),
          Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))
        )
      })
      const outcome = yield* Deferred.make<{
        readonly abortedBeforeCancel: boolean
        readonly next: unknown
        readonly answeredCancelled: boolean
      }>()
      const layer = ScriptedCli.layer((cli) =>
        Effect.gen(function*() {
          const pending = yield* Effect.fork(cli.canUseTool("Bash", { command: "touch slow" }))
          const request = yield* Deferred.await(first)
          const abortedBeforeCancel = request.signal.aborted
          yield* cli.cancel(request.requestId)
          // frames are handled in order: once the next request is answered, the cancel has been handled
          const next = yield* cli.canUseTool("Bash", { command: "touch next" })
          const answeredCancelled = (yield* cli.received).some((frame) =>
            frame.type === "control_response" && frame.response.request_id === request.requestId
          )
          yield* Fiber.interrupt(pending)
          yield* Deferred.succeed(outcome, { abortedBeforeCancel, next, answeredCancelled })
        }), { stepTimeout: "1 hour" })
      const result = yield* withSession(layer, Deferred.await(outcome)).pipe(Effect.provide(PermissionsLive))
      expect(result.abortedBeforeCancel).toBe(false)
      expect(interrupted).toBe(true)
      expect((yield* Deferred.await(first)).signal.aborted).toBe(true)
      expect(abortEvents).toBe(1)
      expect(result.answeredCancelled).toBe(false)
      expect(result.next).toMatchObject({ behavior: "allow", updatedInput: { command: "touch next" } })
      expect(calls).toBe(2)
    }))

  it.scoped("a decision that times out aborts its signal; a decided one leaves it alone", () =>
    Effect.gen(function*() {
      const signals: Array<AbortSignal> = []
      const called = yield* Deferred.make<void>()
      const PermissionsLive = Permissions.fromCallback((request) => {
        signals.push(request.signal)
        return signals.length === 1
          ? Effect.zipRight(Deferred.succeed(called, undefined), Effect.never)
          : Effect.succeed(Permissions.allow())
      }, { timeout: "30 seconds" })
      const { layer, answers } = yield* asking([["Bash", { command: "touch a" }], ["Bash", { command: "touch b" }]])
      const fiber = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive), Effect.fork)
      yield* Deferred.await(called)
      yield* sleeping("30 seconds")
      expect(signals[0]?.aborted).toBe(false)
      yield* TestClock.adjust("30 seconds")
      const [first, second] = yield* Fiber.join(fiber)
      expect(first).toMatchObject({
        behavior: "deny",
        message: "Permission denied (fail closed): no decision within 30s"
      })
      expect(second).toMatchObject({ behavior: "allow" })
      expect(signals.map((s) => s.aborted)).toEqual([true, false])
    }))
})

describe("Permissions.fromCallback", () => {
  class Allowed extends Context.Tag("test/Allowed")<Allowed, ReadonlyArray<string>>() {}

  it.scoped("is a policy layer: the callback decides, its requirements are captured, the timeout is kept", () =>
    Effect.gen(function*() {
      const PermissionsLive = Permissions.fromCallback(
        (request) =>
          Effect.map(Allowed, (allowed) =>
            allowed.includes(request.toolName)
              ? Permissions.allow()
              : Permissions.deny(`${request.toolName} is not on the list`)),
        { timeout: "10 seconds" }
      ).pipe(Layer.provide(Layer.succeed(Allowed, ["Read"])))
      const service = yield* Effect.provide(Permissions.Permissions, PermissionsLive)
      expect(service.timeout).toBe("10 seconds")
      const { layer, answers } = yield* asking([
        ["Read", { file_path: "/x" }],
        ["Write", { file_path: "/x", content: "" }]
      ])
      const [read, write] = yield* withSession(layer, answers).pipe(Effect.provide(PermissionsLive))
      expect(read).toEqual({ behavior: "allow", updatedInput: { file_path: "/x" }, toolUseID: "toolu_scripted_1" })
      expect(write).toEqual({ behavior: "deny", message: "Write is not on the list", toolUseID: "toolu_scripted_2" })
      // without a timeout it uses the default, like `layer`
      const plain = yield* Effect.provide(
        Permissions.Permissions,
        Permissions.fromCallback(() => Effect.succeed(Permissions.allow()))
      )
      expect(plain.timeout).toBe(Permissions.DEFAULT_TIMEOUT)
    }))
})
