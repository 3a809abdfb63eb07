// The Effect floor: bench/floor.mjs's bare reader, written the leanest way an Effect program can own a CLI — one
// fiber and one scope per query (`Effect.runFork` of `Effect.scoped`), the process acquired with
// `Effect.acquireRelease`, stdout's parsed lines offered to a `Mailbox` that the fiber drains, `canUseTool` awaited with
// `Effect.promise`, the exit awaited with `Effect.async`. No validation, no timers, no reaping, no watchdog: what is
// left is what any Effect-native SDK pays per query before it adds a single guarantee. Not a contender of
// `npm run bench`; counted with `node bench/icount.mjs --ours bench/effect-floor.mjs` (docs/PERFORMANCE.md,
// "The Effect floor").
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import { spawn } from "node:child_process"
import { cliArgs as args } from "./floor.mjs"

const NL = 0x0a

/** The CLI in the scope: SIGTERM at close if it still runs. */
const acquire = (options) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const exe = options.pathToClaudeCodeExecutable
      const script = /\.(?:m|c)?js$/.test(exe)
      return spawn(script ? process.execPath : exe, script ? [exe, ...args(options)] : args(options), {
        stdio: ["pipe", "pipe", "ignore"],
        env: options.env ?? process.env,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd })
      })
    }),
    (child) => Effect.sync(() => child.exitCode === null && child.kill("SIGTERM"))
  )

/** Every parsed stdout line offered to `mailbox`, which ends with stdout. */
const readInto = (child, mailbox) => {
  let rest = null
  child.stdout.on("data", (chunk) => {
    const buf = rest === null ? chunk : Buffer.concat([rest, chunk])
    let start = 0
    for (let nl = buf.indexOf(NL); nl !== -1; nl = buf.indexOf(NL, start)) {
      if (nl > start) mailbox.unsafeOffer(JSON.parse(buf.toString("utf8", start, nl)))
      start = nl + 1
    }
    rest = start < buf.length ? buf.subarray(start) : null
  })
  child.stdout.once("end", () => mailbox.unsafeDone(Effect.void))
}

const program = (prompt, options, emit) =>
  Effect.scoped(Effect.gen(function*() {
    const child = yield* acquire(options)
    const send = (frame) => child.stdin.write(JSON.stringify(frame) + "\n")
    const exited = Effect.async((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      child.once("exit", () => resume(Effect.void))
    })
    const mailbox = yield* Mailbox.make()
    readInto(child, mailbox)
    send({ type: "control_request", request_id: "floor_1", request: { subtype: "initialize", hooks: null } })
    send({ type: "user", session_id: "", message: { role: "user", content: prompt }, parent_tool_use_id: null })
    while (true) {
      const [batch, done] = yield* mailbox.takeAll
      for (const m of batch) {
        if (m.type === "control_request") {
          const response = m.request.subtype === "can_use_tool"
            ? {
              ...(yield* Effect.promise(() => options.canUseTool(m.request.tool_name, m.request.input, {}))),
              toolUseID: m.request.tool_use_id
            }
            : {}
          send({ type: "control_response", response: { subtype: "success", request_id: m.request_id, response } })
          continue
        }
        if (m.type === "control_response" || m.type === "keep_alive") continue
        if (m.type === "system" && m.sdk_host_only === true) continue
        if (m.type === "result") child.stdin.end()
        emit(m)
      }
      if (done) break
    }
    yield* exited
  }))

/** `query()` of the official shape: the fiber's messages as an async iterator. */
export const query = ({ prompt, options = {} }) => {
  const buffer = []
  let wake
  let ended = false
  let failure
  const notify = () => {
    const w = wake
    wake = undefined
    w?.()
  }
  const fiber = Effect.runFork(program(prompt, options, (m) => {
    buffer.push(m)
    notify()
  }))
  fiber.addObserver((exit) => {
    ended = true
    if (exit._tag === "Failure") failure = exit.cause
    notify()
  })
  return (async function*() {
    try {
      while (true) {
        if (buffer.length > 0) yield buffer.shift()
        else if (ended) break
        else await new Promise((resolve) => (wake = resolve))
      }
      if (failure !== undefined) throw new Error(String(failure))
    } finally {
      if (!ended) await Effect.runPromise(fiber.interruptAsFork(fiber.id()))
    }
  })()
}
