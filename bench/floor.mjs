// The physical floor: a bare Node reader with the official `query()` shape. It spawns the CLI, writes `initialize`
// and the prompt, splits stdout on "\n", `JSON.parse`s every line, answers `can_use_tool` (allow) and `initialize`
// bookkeeping, and closes stdin after the first result. Reading is pull-based (the async iterator of the stdout
// stream), so a slow consumer holds the CLI back instead of buffering. `startup()` spawns and initializes ahead of
// the prompt, as the official one does.
import { spawn } from "node:child_process"

const NL = 0x0a

/** The CLI's arguments for `options` (shared with bench/effect-floor.mjs). */
export const cliArgs = (options) => [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
  ...(options.canUseTool ? ["--permission-prompt-tool=stdio"] : []),
  ...(options.includePartialMessages ? ["--include-partial-messages"] : [])
]

const launch = (options) => {
  const args = cliArgs(options)
  const exe = options.pathToClaudeCodeExecutable
  const script = /\.(?:m|c)?js$/.test(exe)
  const child = spawn(script ? process.execPath : exe, script ? [exe, ...args] : args, {
    stdio: ["pipe", "pipe", "ignore"],
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd })
  })
  const send = (frame) => child.stdin.write(JSON.stringify(frame) + "\n")
  send({ type: "control_request", request_id: "floor_1", request: { subtype: "initialize", hooks: null } })
  const exited = new Promise((resolve) => child.once("exit", resolve))

  // the parsed lines of each stdout read
  async function* batches() {
    let rest = null
    for await (const chunk of child.stdout) {
      const buf = rest === null ? chunk : Buffer.concat([rest, chunk])
      let start = 0
      let nl = buf.indexOf(NL, start)
      const batch = []
      while (nl !== -1) {
        if (nl > start) batch.push(JSON.parse(buf.toString("utf8", start, nl)))
        start = nl + 1
        nl = buf.indexOf(NL, start)
      }
      rest = start < buf.length ? buf.subarray(start) : null
      yield batch
    }
  }
  return { child, send, exited, batches: batches() }
}

const prompted = (launched, prompt, options, first = []) => {
  const { child, send, exited, batches } = launched
  send({ type: "user", session_id: "", message: { role: "user", content: prompt }, parent_tool_use_id: null })
  async function* all() {
    yield first
    yield* batches
  }
  async function* messages() {
    try {
      for await (const batch of all()) {
        for (const m of batch) {
          if (m.type === "control_request") {
            if (m.request.subtype === "can_use_tool") {
              const r = await options.canUseTool(m.request.tool_name, m.request.input, {})
              send({
                type: "control_response",
                response: {
                  subtype: "success",
                  request_id: m.request_id,
                  response: { ...r, toolUseID: m.request.tool_use_id }
                }
              })
            } else {
              send({
                type: "control_response",
                response: { subtype: "success", request_id: m.request_id, response: {} }
              })
            }
            continue
          }
          if (m.type === "control_response" || m.type === "keep_alive") continue
          if (m.type === "system" && m.sdk_host_only === true) continue
          if (m.type === "result") child.stdin.end()
          yield m
        }
      }
      await exited
    } finally {
      if (child.exitCode === null) child.kill("SIGTERM")
    }
  }
  return messages()
}

export const query = ({ prompt, options = {} }) => prompted(launch(options), prompt, options)

export const startup = async ({ options = {} } = {}) => {
  const launched = launch(options)
  // what the CLI wrote after its answer to `initialize`, for the query
  let first
  while (first === undefined) {
    const { value: batch, done } = await launched.batches.next()
    if (done) throw new Error("the CLI exited before answering initialize")
    const at = batch.findIndex((m) => m.type === "control_response")
    if (at !== -1) first = batch.slice(at + 1)
  }
  return {
    query: (prompt) => prompted(launched, prompt, options, first),
    close: () => {
      if (launched.child.exitCode === null) launched.child.kill("SIGTERM")
    }
  }
}
