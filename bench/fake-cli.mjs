#!/usr/bin/env node
// A fast fake `claude` for the benchmarks: speaks stream-json (answers `initialize` and the other control requests,
// asks `can_use_tool` itself) and replays a realistic message mix at full speed, honouring stdout backpressure.
// Node built-ins only, one file, so that it starts as fast as Node can. Configured by the BENCH_FAKE environment
// variable (JSON): { mode: "stream" | "rtt" | "hooks" | "short", messages?, requests?, statsFile? }.
import * as fs from "node:fs"

const t0 = performance.timeOrigin + performance.now()
let firstByteAt = 0
const argv = process.argv.slice(2)
if (argv.includes("--version")) {
  process.stdout.write("2.1.332 (Claude Code)\n")
  process.exit(0)
}
const config = JSON.parse(process.env.BENCH_FAKE ?? "{\"mode\":\"short\"}")
const mode = config.mode ?? "short"
const permissions = argv.some((a) => a.startsWith("--permission-prompt-tool"))
const flagValue = (name) => {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith(`--${name}=`)) return argv[i].slice(name.length + 3)
    if (argv[i] === `--${name}`) return argv[i + 1]
  }
  return undefined
}
// like the real CLI: the session id the SDK assigned, or the resumed one
const SESSION = flagValue("session-id") ?? flagValue("resume") ?? "5c6f6e3a-0000-4000-8000-00000000be4c"
const MODEL = "claude-fake-bench"

// ------------------------------------------------------------------------------------------------------------------
// stdout with backpressure
// ------------------------------------------------------------------------------------------------------------------

const out = process.stdout
let drainWaiters = []
out.on("drain", () => {
  const ws = drainWaiters
  drainWaiters = []
  for (const w of ws) w()
})
out.on("error", () => process.exit(0))
const write = (data) => (out.write(data) ? undefined : new Promise((resolve) => drainWaiters.push(resolve)))
const line = (frame) => JSON.stringify(frame) + "\n"

// ------------------------------------------------------------------------------------------------------------------
// stdin: control requests, user messages, responses to our requests
// ------------------------------------------------------------------------------------------------------------------

const pending = new Map()
/** The PreToolUse matchers the SDK registered in `initialize` (`{ matcher?, hookCallbackIds }`). */
let preToolUseHooks = []
let onUser
let users = 0
let onStdinEnd = () => {}
let buffered = ""

const initializeResponse = (requestId) => ({
  type: "control_response",
  response: {
    subtype: "success",
    request_id: requestId,
    response: {
      commands: [{ name: "compact", description: "Clear conversation history but keep a summary", argumentHint: "" }],
      agents: [{ name: "general-purpose", description: "General-purpose agent" }],
      models: [{ value: "default", displayName: "Default", description: "The default model", resolvedModel: MODEL }],
      account: { tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY", apiProvider: "firstParty" },
      output_style: "default",
      available_output_styles: ["default"],
      claude_code_version: "2.1.332",
      current_permission_mode: "default",
      pid: process.pid
    }
  }
})

const onFrame = (frame) => {
  switch (frame.type) {
    case "control_request": {
      const subtype = frame.request?.subtype
      if (subtype === "initialize") preToolUseHooks = frame.request.hooks?.PreToolUse ?? []
      const response = subtype === "initialize"
        ? initializeResponse(frame.request_id)
        : {
          type: "control_response",
          response: {
            subtype: "success",
            request_id: frame.request_id,
            response: subtype === "interrupt" ? { still_queued: [] } : {}
          }
        }
      out.write(line(response))
      break
    }
    case "control_response": {
      const id = frame.response?.request_id
      const resolve = pending.get(id)
      if (resolve !== undefined) {
        pending.delete(id)
        resolve(frame.response)
      }
      break
    }
    case "user":
      users++
      onUser?.(frame)
      break
  }
}

process.stdin.on("data", (chunk) => {
  if (firstByteAt === 0) firstByteAt = performance.timeOrigin + performance.now()
  buffered += chunk.toString("utf8")
  let nl = buffered.indexOf("\n")
  while (nl !== -1) {
    const text = buffered.slice(0, nl)
    buffered = buffered.slice(nl + 1)
    if (text.trim().length > 0) onFrame(JSON.parse(text))
    nl = buffered.indexOf("\n")
  }
})
process.stdin.on("end", () => {
  for (const resolve of pending.values()) resolve(undefined)
  pending.clear()
  onStdinEnd()
})

// ------------------------------------------------------------------------------------------------------------------
// frames
// ------------------------------------------------------------------------------------------------------------------

const usage = {
  input_tokens: 2417,
  output_tokens: 318,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 19873,
  service_tier: "standard"
}
const uuid = (n) =>
  `0b7c${(n % 0xffffffff).toString(16).padStart(8, "0")}-6a3e-4c1d-9f5e-3b2a1c0d${
    (n % 0xffff).toString(16).padStart(4, "0")
  }`
const words = "the quick brown fox jumps over a lazy dog while reading files and running commands in the repo".split(
  " "
)
const prose = (chars, seed) => {
  let s = ""
  let i = seed
  while (s.length < chars) s += words[i++ % words.length] + (i % 13 === 0 ? ". " : " ")
  return s.slice(0, chars)
}

const initFrame = () => ({
  type: "system",
  subtype: "init",
  cwd: process.cwd(),
  session_id: SESSION,
  tools: ["Bash", "Edit", "Glob", "Grep", "Read", "Write", "WebFetch", "TodoWrite"],
  mcp_servers: [],
  model: MODEL,
  permissionMode: "default",
  slash_commands: ["compact", "context", "cost", "review"],
  apiKeySource: "ANTHROPIC_API_KEY",
  claude_code_version: "2.1.332",
  output_style: "default",
  agents: ["general-purpose"],
  skills: [],
  plugins: [],
  uuid: uuid(0)
})

const streamEvent = (n, msgId, event) => ({
  type: "stream_event",
  event,
  session_id: SESSION,
  parent_tool_use_id: null,
  uuid: uuid(n),
  api_message_id: msgId
})

const assistant = (n, msgId, block) => ({
  type: "assistant",
  message: {
    id: msgId,
    type: "message",
    role: "assistant",
    model: MODEL,
    content: [block],
    stop_reason: null,
    stop_sequence: null,
    usage,
    context_management: null
  },
  parent_tool_use_id: null,
  session_id: SESSION,
  uuid: uuid(n),
  timestamp: "2026-11-25T10:00:00.000Z",
  request_id: `req_011CV${msgId.slice(-12)}`
})

/**
 * One API round trip of an agentic turn: 23 messages (stream events with text and tool input deltas, the two
 * assistant blocks, the tool result), about 20 KB. `permission` marks where a `can_use_tool` request goes.
 */
const cycle = (c) => {
  const msgId = `msg_01B${c.toString(36).padStart(17, "0")}`
  const toolId = `toolu_01${c.toString(36).padStart(16, "0")}`
  const text = prose(1400, c)
  const input = { command: `grep -rn "pattern_${c}" src --include=*.ts | head -50`, description: "Search the sources" }
  const result = Array.from(
    { length: 95 },
    (_, i) => `src/module${i}.ts:${i * 7 + 1}:  const pattern_${c} = ${prose(40, i)}`
  ).join("\n")
  let n = c * 100
  const frames = []
  frames.push(streamEvent(++n, msgId, {
    type: "message_start",
    message: { id: msgId, type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, usage },
    ttft_ms: 412
  }))
  frames.push(
    streamEvent(++n, msgId, { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
  )
  for (let i = 0; i < 10; i++) {
    frames.push(streamEvent(++n, msgId, {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: text.slice(i * 140, i * 140 + 140) }
    }))
  }
  frames.push(streamEvent(++n, msgId, { type: "content_block_stop", index: 0 }))
  frames.push(assistant(++n, msgId, { type: "text", text }))
  frames.push(streamEvent(++n, msgId, {
    type: "content_block_start",
    index: 1,
    content_block: { type: "tool_use", id: toolId, name: "Bash", input: {} }
  }))
  const json = JSON.stringify(input)
  for (let i = 0; i < 3; i++) {
    const size = Math.ceil(json.length / 3)
    frames.push(streamEvent(++n, msgId, {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: json.slice(i * size, i * size + size) }
    }))
  }
  frames.push(streamEvent(++n, msgId, { type: "content_block_stop", index: 1 }))
  frames.push(assistant(++n, msgId, { type: "tool_use", id: toolId, name: "Bash", input }))
  const permissionAt = frames.length
  frames.push(streamEvent(++n, msgId, {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 318 }
  }))
  frames.push(streamEvent(++n, msgId, { type: "message_stop" }))
  frames.push({
    type: "user",
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: toolId, content: result, is_error: false }]
    },
    parent_tool_use_id: null,
    session_id: SESSION,
    uuid: uuid(++n),
    timestamp: "2026-11-25T10:00:01.000Z",
    tool_use_result: {
      stdout: result.slice(0, 1800),
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false
    }
  })
  return { lines: frames.map(line), permissionAt, toolId, input }
}

const canUseTool = (id, toolId, input) =>
  line({
    type: "control_request",
    request_id: id,
    request: {
      subtype: "can_use_tool",
      tool_name: "Bash",
      display_name: "Bash",
      input,
      description: "Search the sources",
      permission_suggestions: [
        {
          type: "addRules",
          rules: [{ toolName: "Bash", ruleContent: input.command }],
          behavior: "allow",
          destination: "localSettings"
        },
        { type: "setMode", mode: "acceptEdits", destination: "session" }
      ],
      tool_use_id: toolId
    }
  })

const resultFrame = (turns) => ({
  type: "result",
  subtype: "success",
  is_error: false,
  result: "All done: the pattern appears in 95 files.",
  duration_ms: 1234,
  duration_api_ms: 1000,
  num_turns: turns,
  session_id: SESSION,
  uuid: uuid(7),
  stop_reason: "end_turn",
  total_cost_usd: 0.0123,
  usage,
  modelUsage: { [MODEL]: { inputTokens: 2417, outputTokens: 318, costUSD: 0.0123, contextWindow: 200000 } },
  permission_denials: [],
  terminal_reason: "completed"
})

const idleFrame = () => ({
  type: "system",
  subtype: "session_state_changed",
  state: "idle",
  sdk_host_only: true,
  session_id: SESSION,
  uuid: uuid(8)
})
const runningFrame = () => ({ ...idleFrame(), state: "running", uuid: uuid(9) })

// ------------------------------------------------------------------------------------------------------------------
// modes
// ------------------------------------------------------------------------------------------------------------------

let requestCounter = 0
const request = (text) => {
  const id = `b45b79ad-${(++requestCounter).toString(16).padStart(8, "0")}`
  const answered = new Promise((resolve) => pending.set(id, resolve))
  out.write(text(id))
  return answered
}

const CHUNK = 64 * 1024
const CYCLES = 16

/** Streams `total` messages (system/init + cycles + result), asking can_use_tool per tool call when enabled. */
const stream = async (total) => {
  const cycles = Array.from({ length: CYCLES }, (_, i) => cycle(i))
  const perCycle = cycles[0].lines.length
  let sent = 0
  let pendingText = line(runningFrame()) + line(initFrame())
  sent += 1
  const flush = async () => {
    if (pendingText.length === 0) return
    const p = write(pendingText)
    pendingText = ""
    if (p !== undefined) await p
  }
  let c = 0
  let turns = 0
  while (sent + perCycle + 1 <= total) {
    const { lines, permissionAt, toolId, input } = cycles[c++ % CYCLES]
    turns++
    for (let i = 0; i < lines.length; i++) {
      if (i === permissionAt && permissions) {
        await flush()
        const answer = await request((id) => canUseTool(id, toolId, input))
        if (answer === undefined) return
      }
      pendingText += lines[i]
      if (pendingText.length >= CHUNK) await flush()
    }
    sent += perCycle
  }
  // pad with text deltas to the exact count
  while (sent + 1 < total) {
    pendingText += cycles[0].lines[3]
    sent++
  }
  pendingText += line(resultFrame(turns)) + line(idleFrame())
  await flush()
}

const rtt = async (count) => {
  out.write(line(runningFrame()) + line(initFrame()))
  const input = { command: "touch started.txt && echo ok", description: "Touch a file" }
  const samples = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    const answer = await request((id) => canUseTool(id, `toolu_rtt_${i}`, input))
    samples[i] = (performance.now() - start) * 1000
    if (answer === undefined) break
  }
  const late = samples.slice(Math.floor(count / 2)).sort()
  samples.sort()
  const q = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]
  if (config.statsFile) {
    const stats = {
      p50: q(samples, 0.5),
      p99: q(samples, 0.99),
      mean: samples.reduce((a, b) => a + b, 0) / count,
      // the second half only: after JIT warm-up
      p50Late: q(late, 0.5),
      p99Late: q(late, 0.99)
    }
    fs.appendFileSync(config.statsFile, JSON.stringify(stats) + "\n")
  }
  out.write(line(resultFrame(1)) + line(idleFrame()))
}

/**
 * `count` tool calls, alternating a Read inside the cwd and a read-only Bash command, each preceded by the SDK's
 * PreToolUse hook callbacks (as the CLI calls them for every tool call, asked or not); times each call's callbacks.
 */
const hookRtt = async (count) => {
  out.write(line(runningFrame()) + line(initFrame()))
  const calls = [
    ["Read", { file_path: `${process.cwd()}/src/index.ts` }],
    ["Bash", { command: "cat package.json | grep version", description: "Read the version" }]
  ]
  const samples = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    const [tool_name, tool_input] = calls[i % calls.length]
    const input = {
      session_id: SESSION,
      transcript_path: "/tmp/bench.jsonl",
      cwd: process.cwd(),
      hook_event_name: "PreToolUse",
      tool_name,
      tool_input,
      tool_use_id: `toolu_hook_${i}`
    }
    const start = performance.now()
    for (const { matcher, hookCallbackIds } of preToolUseHooks) {
      if (matcher !== undefined && !new RegExp(`^(?:${matcher})$`).test(tool_name)) continue
      for (const callback_id of hookCallbackIds) {
        const answer = await request((id) =>
          line({
            type: "control_request",
            request_id: id,
            request: { subtype: "hook_callback", callback_id, input, tool_use_id: input.tool_use_id }
          })
        )
        if (answer === undefined) return
      }
    }
    samples[i] = (performance.now() - start) * 1000
  }
  const late = samples.slice(Math.floor(count / 2)).sort()
  samples.sort()
  const q = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]
  if (config.statsFile) {
    fs.appendFileSync(
      config.statsFile,
      JSON.stringify({ p50: q(samples, 0.5), p99: q(samples, 0.99), p50Late: q(late, 0.5), p99Late: q(late, 0.99) }) +
        "\n"
    )
  }
  out.write(line(resultFrame(1)) + line(idleFrame()))
}

const short = async () => {
  const c = cycle(1)
  out.write(
    line(runningFrame()) + line(initFrame()) + c.lines.slice(0, 6).join("") + line(resultFrame(1)) + line(idleFrame())
  )
}

const turn = async () => {
  if (mode === "stream") await stream(config.messages ?? 100_000)
  else if (mode === "rtt") await rtt(config.requests ?? 10_000)
  else if (mode === "hooks") await hookRtt(config.requests ?? 2_000)
  else await short()
}

let queue = Promise.resolve()
onUser = () => {
  if (users === 1 && config.statsFile && mode === "short") {
    fs.appendFileSync(config.statsFile, JSON.stringify({ start: t0, firstByte: firstByteAt }) + "\n")
  }
  queue = queue.then(turn)
}

// like the real CLI: exit once stdin is closed and the work in flight is done
onStdinEnd = () => {
  void queue.then(() => {
    if (out.writableLength === 0) process.exit(0)
    out.once("drain", () => process.exit(0))
  })
}
