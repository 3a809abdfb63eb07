import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import { Message } from "effect-claude-agent"

const dir = path.join(import.meta.dirname, "fixtures", "transcripts")
const transcripts = fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl") && !f.startsWith("fake-anthropic"))

interface Entry {
  readonly dir: string
  readonly msg: unknown
}
const entries = (file: string): Array<Entry> =>
  fs.readFileSync(path.join(dir, file), "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

const isStdoutFrame = (e: Entry) => e.dir === "out" && typeof e.msg === "object" && e.msg !== null

describe("Message.decode", () => {
  it("G9 decodes every stdout frame of every recorded transcript to a known member, unchanged", () => {
    let count = 0
    const types = new Set<string>()
    for (const file of transcripts.filter((f) => !f.endsWith(".sdk.jsonl"))) {
      for (const e of entries(file).filter(isStdoutFrame)) {
        const decoded = Message.decode(e.msg)
        expect(decoded.type, `${file}: ${JSON.stringify(e.msg).slice(0, 300)}`).not.toBe("unknown")
        // no transformation: the decoded value is the parsed object itself
        expect(decoded).toBe(e.msg)
        types.add(decoded.type === "system" ? `system/${decoded.subtype}` : decoded.type)
        count++
      }
    }
    expect(count).toBeGreaterThan(700)
    expect([...types].sort()).toEqual([
      "assistant",
      "control_cancel_request",
      "control_request",
      "control_response",
      "result",
      "stream_event",
      "system/api_retry",
      "system/init",
      "system/permission_denied",
      "system/session_state_changed",
      "system/session_title_changed",
      "system/status",
      "tool_progress",
      "user"
    ])
  })

  it("decodes what the official SDK yielded (sdk.jsonl) to known members", () => {
    for (const file of transcripts.filter((f) => f.endsWith(".sdk.jsonl"))) {
      for (const line of fs.readFileSync(path.join(dir, file), "utf8").split("\n").filter((l) => l.length > 0)) {
        const entry = JSON.parse(line)
        const msg = entry.msg ?? entry
        if (typeof msg !== "object" || msg === null || typeof msg.type !== "string") continue
        expect(Message.decode(msg).type, `${file}: ${line.slice(0, 200)}`).not.toBe("unknown")
      }
    }
  })

  it("every frame we wrote in the recordings is a valid StdinMessage", () => {
    const isStdin = Schema.is(Message.StdinMessage)
    let checked = 0
    for (const file of transcripts.filter((f) => !f.endsWith(".sdk.jsonl"))) {
      for (const e of entries(file)) {
        if (e.dir !== "in" || typeof e.msg !== "object" || e.msg === null) continue
        const type = (e.msg as { type?: unknown }).type
        if (type === "definitely_unknown_type" || type === undefined) continue
        expect(isStdin(e.msg), JSON.stringify(e.msg).slice(0, 300)).toBe(true)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(100)
  })

  it("keeps extra fields", () => {
    const raw = {
      type: "system",
      subtype: "status",
      status: "requesting",
      session_id: "s",
      uuid: "u",
      brand_new_field: { nested: [1, 2] }
    }
    const decoded = Message.decode(raw)
    expect(decoded).toStrictEqual(raw)
    expect((decoded as { brand_new_field?: unknown }).brand_new_field).toEqual({ nested: [1, 2] })
  })

  it("rate_limit_event and auth_status (the official shapes) decode to their typed members", () => {
    const rateLimit = {
      type: "rate_limit_event",
      rate_limit_info: {
        status: "allowed_warning",
        resetsAt: 1764100000,
        rateLimitType: "five_hour",
        utilization: 0.91,
        overageStatus: "allowed",
        isUsingOverage: false
      },
      session_id: "s",
      uuid: "u"
    }
    expect(Message.decode(rateLimit)).toStrictEqual(rateLimit)
    const auth = {
      type: "auth_status",
      isAuthenticating: true,
      output: ["Opening browser…"],
      session_id: "s",
      uuid: "u"
    }
    expect(Message.decode(auth)).toStrictEqual(auth)
    const failed = { ...auth, isAuthenticating: false, error: "token expired" }
    expect(Message.decode(failed)).toStrictEqual(failed)
    // a shape that breaks the schema is kept as an UnknownMessage, not thrown away
    const broken = { type: "rate_limit_event", rate_limit_info: { utilization: "high" } }
    expect(Message.decode(broken)).toMatchObject({ type: "unknown", raw: broken })
  })

  it("G9 an unknown type becomes an UnknownMessage carrying the raw object", () => {
    const raw = { type: "hologram", payload: 42 }
    expect(Message.decode(raw)).toStrictEqual({ type: "unknown", reason: "unknown_type", raw })
  })

  it("an unknown system or result subtype becomes an UnknownMessage", () => {
    const sys = { type: "system", subtype: "post_turn_summary", session_id: "s", uuid: "u" }
    expect(Message.decode(sys)).toStrictEqual({ type: "unknown", reason: "unknown_subtype", raw: sys })
    const res = { type: "result", subtype: "error_new_kind", session_id: "s" }
    expect(Message.decode(res)).toStrictEqual({ type: "unknown", reason: "unknown_subtype", raw: res })
  })

  it("a known frame with wrong fields becomes an invalid UnknownMessage with a readable issue", () => {
    const raw = { type: "tool_progress", tool_use_id: 7 }
    const decoded = Message.decode(raw)
    expect(decoded.type).toBe("unknown")
    if (decoded.type !== "unknown") return
    expect(decoded.reason).toBe("invalid")
    expect(decoded.raw).toBe(raw)
    expect(decoded.issue).toContain("tool_use_id")
  })

  it("non-objects are wrapped", () => {
    expect(Message.decode([1, 2])).toMatchObject({ type: "unknown", reason: "invalid", raw: { value: [1, 2] } })
    expect(Message.decode("x")).toMatchObject({ type: "unknown", reason: "invalid" })
  })

  it("an unknown content block becomes an UnknownBlock and the message stays typed", () => {
    const block = { type: "hologram_block", data: "x" }
    const raw = {
      type: "assistant",
      message: {
        id: "m",
        role: "assistant",
        model: "claude",
        content: [{ type: "text", text: "hi " }, block, { type: "text", text: "there" }]
      },
      parent_tool_use_id: null,
      session_id: "s",
      uuid: "u",
      extra: true
    }
    const decoded = Message.decode(raw)
    expect(decoded.type).toBe("assistant")
    if (decoded.type !== "assistant") return
    expect(decoded.message.content[1]).toStrictEqual({ type: "unknown", raw: block })
    expect(Message.text(decoded)).toBe("hi there")
    expect((decoded as { extra?: unknown }).extra).toBe(true)
  })

  it("an unknown block in content_block_start is normalized, an unknown event type is unknown_subtype", () => {
    const base = { type: "stream_event", parent_tool_use_id: null, session_id: "s", uuid: "u" }
    const start = { ...base, event: { type: "content_block_start", index: 0, content_block: { type: "novel" } } }
    const decoded = Message.decode(start)
    expect(decoded.type).toBe("stream_event")
    if (decoded.type === "stream_event" && decoded.event.type === "content_block_start") {
      expect(decoded.event.content_block).toStrictEqual({ type: "unknown", raw: { type: "novel" } })
    }
    const ping = { ...base, event: { type: "ping" } }
    expect(Message.decode(ping)).toStrictEqual({ type: "unknown", reason: "unknown_subtype", raw: ping })
  })
})

describe("Message helpers", () => {
  const assistant = Message.decode({
    type: "assistant",
    message: {
      id: "m",
      role: "assistant",
      model: "claude",
      content: [
        { type: "text", text: "Calling Bash." },
        { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }
      ]
    },
    parent_tool_use_id: null,
    session_id: "s",
    uuid: "u"
  })

  it("text and toolUses", () => {
    if (!Message.isAssistantMessage(assistant)) throw new Error("expected assistant")
    expect(Message.text(assistant)).toBe("Calling Bash.")
    expect(Message.toolUses(assistant)).toEqual([{
      type: "tool_use",
      id: "t1",
      name: "Bash",
      input: { command: "ls" }
    }])
  })

  it("toolResults and toolResultText", () => {
    const user = Message.decode({
      type: "user",
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: [{ type: "text", text: "a" }, { type: "text", text: "b" }]
          }
        ]
      },
      parent_tool_use_id: null,
      session_id: "s"
    })
    if (!Message.isUserMessage(user)) throw new Error("expected user")
    const [result] = Message.toolResults(user)
    expect(result && Message.toolResultText(result)).toBe("ab")
  })

  it("formatCost and totalTokens", () => {
    expect(Message.formatCost(0.020932)).toBe("$0.0209")
    expect(Message.formatCost(1.234)).toBe("$1.23")
    expect(Message.totalTokens({ input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2 })).toBe(17)
  })

  it("userMessage builds the frame the official SDK writes", () => {
    expect(Message.userMessage("SAY hi")).toStrictEqual({
      type: "user",
      session_id: "",
      message: { role: "user", content: [{ type: "text", text: "SAY hi" }] },
      parent_tool_use_id: null
    })
  })

  it("isSuccess distinguishes API errors reported as success", () => {
    const result = (is_error: boolean) =>
      Message.decode({
        type: "result",
        subtype: "success",
        is_error,
        result: "x",
        duration_ms: 1,
        duration_api_ms: 1,
        num_turns: 1,
        session_id: "s",
        uuid: "u",
        total_cost_usd: 0,
        usage: {},
        modelUsage: {},
        permission_denials: []
      })
    const ok = result(false)
    const failed = result(true)
    if (!Message.isResultMessage(ok) || !Message.isResultMessage(failed)) throw new Error("expected results")
    expect(Message.isSuccess(ok)).toBe(true)
    expect(Message.isSuccess(failed)).toBe(false)
  })
})
