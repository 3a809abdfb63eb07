import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import { Message } from "effect-claude-agent"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import { compiledIs } from "../src/internal/message/decode.js"
import { checkDecision, Decision } from "../src/internal/rules/outputs.js"

// The compiled validator of the decode hot path must answer exactly what `Schema.is` answers, for every wire schema
// and any value: recorded frames, every value nested in them, and many deterministic mutations of both.

const dir = path.join(import.meta.dirname, "fixtures", "transcripts")
const frames: Array<unknown> = []
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl") && !f.startsWith("fake-anthropic"))) {
  for (const line of fs.readFileSync(path.join(dir, file), "utf8").split("\n")) {
    if (line.length === 0) continue
    const entry = JSON.parse(line)
    frames.push(entry.msg ?? entry)
  }
}

const schemas: Array<readonly [string, Schema.Schema<unknown, unknown>]> = []
for (const [name, value] of Object.entries(Message) as Array<[string, unknown]>) {
  if (Schema.isSchema(value)) schemas.push([name, value as Schema.Schema<unknown, unknown>])
}

let seed = 42
const random = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}
const pick = <A>(as: ReadonlyArray<A>): A => as[Math.floor(random() * as.length)]!
const replacements: ReadonlyArray<unknown> = [null, undefined, 0, -1.5, "", "text", true, false, [], {}, [1], {
  type: "x"
}]

const nested = (value: unknown, out: Array<unknown>) => {
  out.push(value)
  if (Array.isArray(value)) { for (const v of value) nested(v, out) }
  else if (typeof value === "object" && value !== null) { for (const v of Object.values(value)) nested(v, out) }
}

/** A copy of `value` with one random change somewhere inside (a key removed, or a value replaced). */
const mutate = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    if (value.length === 0 || random() < 0.2) return [...value, pick(replacements)]
    const i = Math.floor(random() * value.length)
    const copy = [...value]
    copy[i] = random() < 0.5 ? mutate(copy[i]) : pick(replacements)
    return copy
  }
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value)
    if (keys.length === 0) return { extra: 1 }
    const key = pick(keys)
    const copy: Record<string, unknown> = { ...value }
    const r = random()
    if (r < 0.3) delete copy[key]
    else if (r < 0.6) copy[key] = pick(replacements)
    else copy[key] = mutate(copy[key])
    return copy
  }
  return pick(replacements)
}

describe("compiledIs", () => {
  it("agrees with Schema.is on every wire schema, for recorded frames, their parts and mutations", () => {
    const corpus: Array<unknown> = []
    for (const frame of frames) nested(frame, corpus)
    for (const frame of frames) for (let i = 0; i < 12; i++) corpus.push(mutate(frame))
    corpus.push(...replacements, [[]], Object.create(null), { __proto__: { type: "assistant" } })
    let agreed = 0
    let matched = 0
    for (const [name, schema] of schemas) {
      const reference = Schema.is(schema)
      const fast = compiledIs(schema)
      for (const value of corpus) {
        const expected = reference(value)
        if (fast(value) !== expected) {
          expect.fail(`${name} disagrees on ${JSON.stringify(value)?.slice(0, 400)}: Schema.is says ${expected}`)
        }
        agreed++
        if (expected) matched++
      }
    }
    expect(schemas.length).toBeGreaterThan(80)
    expect(agreed).toBeGreaterThan(100_000)
    expect(matched).toBeGreaterThan(1000)
  })

  it("agrees with Schema.is on the control responses the session checks with schemas of its own", () => {
    // as in src/internal/session/session.ts (set_permission_mode, mcp_status)
    const own: ReadonlyArray<Schema.Schema<unknown, unknown>> = [
      Schema.UndefinedOr(Schema.Struct({ mode: Schema.optional(Schema.String) })) as Schema.Schema<unknown, unknown>,
      Schema.Struct({ mcpServers: Schema.Array(Message.McpServerStatus) }) as Schema.Schema<unknown, unknown>
    ]
    const corpus: Array<unknown> = [
      undefined,
      {},
      { mode: "plan" },
      { mode: 1 },
      { mode: undefined },
      { mcpServers: [] },
      { mcpServers: [{ name: "calc", status: "connected" }] },
      { mcpServers: [{ name: "calc" }] },
      { mcpServers: {} },
      ...replacements
    ]
    for (const value of [...corpus]) for (let i = 0; i < 20; i++) corpus.push(mutate(value))
    for (const schema of own) {
      const reference = Schema.is(schema)
      const fast = compiledIs(schema)
      for (const value of corpus) expect(fast(value), JSON.stringify(value)).toBe(reference(value))
    }
  })

  it("agrees with the decoder on permission decisions, and checkDecision accepts only what the decoder accepts", () => {
    // checkDecision judges a decision with the compiled check first: it must never accept what decoding rejects
    const update = (type: string) => ({ type, rules: [{ toolName: "Bash", ruleContent: "ls" }], behavior: "allow" })
    const corpus: Array<unknown> = [
      { behavior: "allow" },
      { behavior: "allow", updatedInput: { command: "ls", nested: { deep: [1, "two", null] } } },
      { behavior: "allow", updatedInput: undefined, toolUseID: "toolu_1", decisionClassification: "user_temporary" },
      {
        behavior: "allow",
        updatedPermissions: [
          { ...update("addRules"), destination: "session" },
          { ...update("replaceRules"), destination: "localSettings" },
          { ...update("removeRules"), destination: "userSettings" },
          { type: "setMode", mode: "acceptEdits", destination: "session" },
          { type: "addDirectories", directories: ["/tmp"], destination: "projectSettings" },
          { type: "removeDirectories", directories: [], destination: "cliArg" },
          { type: "newerKind", destination: "session", extra: 1 }
        ]
      },
      { behavior: "allow", updatedPermissions: [{ type: "addRules", destination: "session" }] },
      { behavior: "allow", updatedPermissions: [{ type: "setMode", destination: "session" }] },
      { behavior: "deny", message: "no" },
      { behavior: "deny", message: "no", interrupt: true, decisionClassification: "user_reject" },
      { behavior: "deny" },
      { behavior: "ask" },
      { behavior: "allow", updatedInput: ["not", "an", "object"] },
      { behavior: "allow", decisionClassification: "sometimes" },
      ...replacements
    ]
    for (const value of [...corpus]) for (let i = 0; i < 40; i++) corpus.push(mutate(value))
    const decode = ParseResult.decodeUnknownEither(Decision)
    const fast = compiledIs(Decision)
    let accepted = 0
    for (const value of corpus) {
      const expected = Either.isRight(decode(value))
      expect(fast(value), JSON.stringify(value)).toBe(expected)
      expect(Either.isRight(checkDecision(value)), JSON.stringify(value)).toBe(expected)
      if (expected) accepted++
    }
    expect(accepted).toBeGreaterThan(50)
    expect(corpus.length - accepted).toBeGreaterThan(200)
  })
})
