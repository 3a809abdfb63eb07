// @ts-check
/**
 * The fake `claude` program of the testing kit (see `FakeCli`). It runs as its own Node process and imports only
 * Node built-ins and `cliFrames.js` (the frames it writes like `ScriptedCli`, itself plain JavaScript importing only
 * Node built-ins), so that it starts fast. It is plain JavaScript (typed by JSDoc, checked by `tsc`) so that it runs
 * as it is, from this repository's sources and from the published package alike, with no TypeScript loader.
 *
 * @internal
 */
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as frames from "./cliFrames.js"
/** @import { Answer, JsonObject, LogEntry, Scenario, Step } from "../../FakeCli.js" */

// keep in sync with `fakeCli.ts`
const SCENARIO_ENV = "EFFECT_CLAUDE_AGENT_FAKE_CLI"
const DEFAULT_SESSION_ID = "5c6f6e3a-0000-4000-8000-00000000fa6e"
const MODEL = "claude-fake"
const LOG_ENV = ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SDK_READS_SESSION_STATE", "NODE_OPTIONS", "PATH"]
const PIECE = 1024 * 1024

class ScriptFailure extends Error {}

/** @typedef {{ readonly [key: string]: unknown }} Frame */

/** @type {(u: unknown) => u is Frame} */
const isRecord = (u) => typeof u === "object" && u !== null && !Array.isArray(u)

/** @type {(stream: NodeJS.WriteStream, data: string | Uint8Array) => Promise<void>} */
const writeTo = (stream, data) =>
  new Promise((resolve, reject) => {
    stream.write(data, (error) => (error ? reject(error) : resolve()))
  })
/** @type {(data: string | Uint8Array) => Promise<void>} */
const write = (data) => writeTo(process.stdout, data)
/** @type {(data: string) => Promise<void>} */
const writeErr = (data) => writeTo(process.stderr, data)
/** @type {(ms: number) => Promise<void>} */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** @type {(code: number, message: string) => never} */
const die = (code, message) => {
  process.stderr.write(message)
  process.exit(code)
}

/** @type {(u: unknown) => u is Scenario} */
const isScenario = (u) => isRecord(u) && Array.isArray(u["steps"])

/** @type {() => Scenario} */
const loadScenario = () => {
  const value = process.env[SCENARIO_ENV]
  if (value === undefined) return die(2, `fake CLI: ${SCENARIO_ENV} is not set\n`)
  try {
    const text = value.startsWith("@") ? fs.readFileSync(value.slice(1), "utf8") : value
    /** @type {unknown} */
    const parsed = JSON.parse(text)
    return isScenario(parsed) ? parsed : die(2, "fake CLI: the scenario has no steps\n")
  } catch (error) {
    return die(2, `fake CLI: cannot read the scenario: ${String(error)}\n`)
  }
}

/**
 * A queue whose reader waits; `close` makes every read (now and later) return `undefined`.
 *
 * @template A
 */
class Inbox {
  /** @type {Array<A>} */
  #items = []
  /** @type {Array<(a: A | undefined) => void>} */
  #waiters = []
  #closed = false
  /** @param {A} a */
  push(a) {
    const waiter = this.#waiters.shift()
    if (waiter !== undefined) waiter(a)
    else this.#items.push(a)
  }
  close() {
    this.#closed = true
    for (const waiter of this.#waiters) waiter(undefined)
    this.#waiters = []
  }
  /** @returns {Promise<A | undefined>} */
  next() {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift())
    if (this.#closed) return Promise.resolve(undefined)
    return new Promise((resolve) => this.#waiters.push(resolve))
  }
}

const argv = process.argv.slice(2)
// the SDK's version probe runs `<cli> --version` without the session's environment
if (argv.includes("--version")) {
  process.stdout.write(`${frames.CLI_VERSION} (Claude Code)\n`)
  process.exit(0)
}
const scenario = loadScenario()
/** @type {(name: string) => string | undefined} */
const flagValue = (name) => {
  for (const [i, arg] of argv.entries()) {
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3)
    if (arg === `--${name}`) return argv[i + 1]
  }
  return undefined
}
const sessionId = scenario.sessionId ?? flagValue("session-id") ?? flagValue("resume") ?? DEFAULT_SESSION_ID

/** @type {(entry: LogEntry) => void} */
const log = (entry) => {
  if (scenario.log !== undefined) fs.appendFileSync(scenario.log, `${JSON.stringify(entry)}\n`)
}

log({
  event: "start",
  argv,
  cwd: process.cwd(),
  pid: process.pid,
  env: Object.fromEntries(
    [...new Set([...LOG_ENV, ...(scenario.logEnv ?? [])])].map((name) => [name, process.env[name] ?? null])
  )
})

// -------------------------------------------------------------------------------------------------
// frames
// -------------------------------------------------------------------------------------------------

/** Who the frames say wrote them. */
const identity = { cwd: process.cwd(), sessionId, model: MODEL }
let messageCounter = 0

/** @type {(frame: Frame, eol?: string) => Promise<void>} */
const emit = (frame, eol = "\n") => write(JSON.stringify(frame) + eol)

/** @type {(fields?: JsonObject) => Frame} */
const initFrame = (fields) => frames.initFrame(identity, fields)

/** @type {(text: string) => Frame} */
const assistantFrame = (text) => frames.assistantFrame(identity, `msg_fake_${++messageCounter}`, { type: "text", text })

/** @type {(text: string, fields?: JsonObject) => Frame} */
const resultFrame = (text, fields) => frames.resultFrame(identity, text, fields)

/** @type {() => Frame} */
const idleFrame = () => frames.idleFrame(identity)

/** @type {(user: Frame) => string} */
const textOf = (user) => {
  const message = user["message"]
  const content = isRecord(message) ? message["content"] : undefined
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((block) => (isRecord(block) && typeof block["text"] === "string" ? block["text"] : ""))
    .join("")
}

// -------------------------------------------------------------------------------------------------
// stdin
// -------------------------------------------------------------------------------------------------

/** @type {Inbox<Frame>} */
const users = new Inbox()
/** @type {Map<string, Inbox<Frame>>} */
const controls = new Map()
/** @type {(subtype: string) => Inbox<Frame>} */
const controlInbox = (subtype) => {
  let inbox = controls.get(subtype)
  if (inbox === undefined) {
    inbox = new Inbox()
    controls.set(subtype, inbox)
  }
  return inbox
}
/** @type {Map<string, (response: Frame | undefined) => void>} */
const pending = new Map()
let inputEnded = false
/** @type {() => void} */
let resolveInputEnded = () => {}
/** @type {Promise<void>} */
const inputEndedPromise = new Promise((resolve) => {
  resolveInputEnded = resolve
})

/** @type {(request: Frame) => Answer | undefined} */
const defaultAnswer = (request) => {
  const subtype = typeof request["subtype"] === "string" ? request["subtype"] : ""
  if (subtype === "initialize") {
    return { response: { ...frames.initializeResponse(MODEL), pid: process.pid, ...scenario.initializeResponse } }
  }
  const answer = Object.hasOwn(frames.defaultAnswers, subtype) ? frames.defaultAnswers[subtype] : undefined
  return answer === undefined ? undefined : { response: answer(request) }
}

/** @type {(requestId: string, request: Frame) => void} */
const answerRequest = (requestId, request) => {
  const subtype = typeof request["subtype"] === "string" ? request["subtype"] : ""
  const answer = scenario.answers?.[subtype] ?? defaultAnswer(request)
  if (answer !== undefined && "never" in answer) return
  const body = answer === undefined
    ? frames.unsupported(requestId, subtype)
    : "error" in answer
    ? {
      subtype: "error",
      request_id: requestId,
      error: answer.error,
      ...(answer.errorCode === undefined ? {} : { error_code: answer.errorCode })
    }
    : { subtype: "success", request_id: requestId, response: answer.response }
  const send = () => {
    if (!process.stdout.writable) return
    void emit({ type: "control_response", response: body }).catch(() => {})
  }
  const delay = answer === undefined ? undefined : answer.delayMs
  if (delay === undefined || delay <= 0) send()
  else setTimeout(send, delay)
}

/** @type {(frame: Frame) => void} */
const onFrame = (frame) => {
  log({ event: "stdin", frame })
  switch (frame["type"]) {
    case "user":
      users.push(frame)
      break
    case "control_request": {
      const request = isRecord(frame["request"]) ? frame["request"] : {}
      const requestId = typeof frame["request_id"] === "string" ? frame["request_id"] : ""
      controlInbox(typeof request["subtype"] === "string" ? request["subtype"] : "").push(request)
      answerRequest(requestId, request)
      break
    }
    case "control_response": {
      const response = isRecord(frame["response"]) ? frame["response"] : {}
      const requestId = typeof response["request_id"] === "string" ? response["request_id"] : ""
      const resolve = pending.get(requestId)
      pending.delete(requestId)
      resolve?.(response)
      break
    }
  }
}

let buffered = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (/** @type {string} */ chunk) => {
  buffered += chunk
  let newline = buffered.indexOf("\n")
  while (newline !== -1) {
    const line = buffered.slice(0, newline).trim()
    buffered = buffered.slice(newline + 1)
    if (line.length > 0) {
      try {
        /** @type {unknown} */
        const parsed = JSON.parse(line)
        if (isRecord(parsed)) onFrame(parsed)
      } catch {
        // the real CLI ignores what it cannot parse, too
      }
    }
    newline = buffered.indexOf("\n")
  }
})
process.stdin.on("end", () => {
  inputEnded = true
  users.close()
  for (const inbox of controls.values()) inbox.close()
  for (const resolve of pending.values()) resolve(undefined)
  pending.clear()
  resolveInputEnded()
})

// -------------------------------------------------------------------------------------------------
// steps
// -------------------------------------------------------------------------------------------------

let lastPrompt = ""
let requestCounter = 0
/** @type {(text: string) => string} */
const withPrompt = (text) => text.replaceAll("{prompt}", lastPrompt)
/** @type {() => Promise<never>} */
const forever = () =>
  new Promise(() => {
    // keeps the process alive (a pending promise alone does not)
    setInterval(() => {}, 1 << 30)
  })

/** @type {(text: string) => Promise<void>} */
const turn = async (text) => {
  await emit(initFrame())
  await emit(assistantFrame(text))
  await emit(resultFrame(text))
  await emit(idleFrame())
}

/** @type {(what: string) => Promise<Frame>} */
const nextUser = async (what) => {
  const user = await users.next()
  if (user === undefined) throw new ScriptFailure(`expected ${what}, but stdin closed`)
  lastPrompt = textOf(user)
  return user
}

/** @type {(step: Step) => Promise<void>} */
const run = async (step) => {
  switch (step.op) {
    case "expectUser": {
      await nextUser("a user message")
      if (step.contains !== undefined && !lastPrompt.includes(step.contains)) {
        const expected = JSON.stringify(step.contains)
        throw new ScriptFailure(`expected a prompt containing ${expected}, got ${JSON.stringify(lastPrompt)}`)
      }
      return
    }
    case "echo": {
      while (true) {
        const user = await users.next()
        if (user === undefined) return
        lastPrompt = textOf(user)
        await turn(`echo: ${lastPrompt}`)
      }
    }
    case "turn":
      return turn(withPrompt(step.text))
    case "init":
      return emit(initFrame(step.fields))
    case "assistant":
      return emit(assistantFrame(withPrompt(step.text)), step.eol)
    case "result":
      return emit(resultFrame(withPrompt(step.text), step.fields), step.eol)
    case "emit":
      return emit(step.frame, step.eol)
    case "raw":
      return write(step.text)
    case "giantLine": {
      const [prefix, suffix] = JSON.stringify(assistantFrame("")).split("\"text\":\"\"")
      await write(`${prefix}"text":"`)
      const piece = "x".repeat(PIECE)
      for (let left = step.bytes; left > 0; left -= PIECE) await write(left >= PIECE ? piece : piece.slice(0, left))
      return write(`"${suffix}\n`)
    }
    case "splitUtf8": {
      const line = Buffer.from(`${JSON.stringify(assistantFrame(step.text))}\n`, "utf8")
      const multiByte = line.findIndex((byte) => byte >= 0x80)
      const at = multiByte === -1 ? Math.floor(line.length / 2) : multiByte + 1
      await write(line.subarray(0, at))
      await sleep(step.pauseMs ?? 50)
      return write(line.subarray(at))
    }
    case "stderr": {
      for (let i = 0; i < (step.repeat ?? 1); i++) await writeErr(step.text)
      return
    }
    case "sleep":
      return sleep(step.ms)
    case "stall":
      return forever()
    case "exit": {
      if (step.stderr !== undefined) await writeErr(step.stderr)
      return process.exit(step.code)
    }
    case "kill": {
      process.kill(process.pid, step.signal)
      return forever()
    }
    case "ignoreSigterm": {
      process.on("SIGTERM", () => {})
      return
    }
    case "spawnGrandchild": {
      const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 300000)"], { stdio: "ignore" })
      return emit({
        type: "system",
        subtype: "status",
        status: null,
        grandchild_pid: child.pid,
        session_id: sessionId,
        uuid: randomUUID()
      })
    }
    case "spawnToolProcess": {
      // like the real CLI's Bash tool: a session and process group of its own; `ready` once SIGTERM is handled
      const trap = step.ignoreSigterm === true ? "trap '' TERM; " : ""
      const child = spawn("/bin/sh", ["-c", `${trap}echo ready; exec sleep 300`], {
        detached: true,
        stdio: ["ignore", "pipe", "ignore"],
        ...(step.clearEnv === true ? { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" } } : {})
      })
      await /** @type {Promise<void>} */ (new Promise((resolve, reject) => {
        child.once("error", reject)
        child.stdout.once("data", () => resolve())
      }))
      child.stdout.destroy()
      child.unref()
      return emit({
        type: "system",
        subtype: "status",
        status: null,
        tool_pid: child.pid,
        session_id: sessionId,
        uuid: randomUUID()
      })
    }
    case "request": {
      const requestId = `fake_${++requestCounter}`
      if (inputEnded) throw new ScriptFailure(`cannot send ${step.subtype}: stdin is closed`)
      /** @type {Promise<Frame | undefined>} */
      const answered = new Promise((resolve) => pending.set(requestId, resolve))
      const toolUseId = step.subtype === "can_use_tool" ? { tool_use_id: `toolu_fake_${requestCounter}` } : {}
      await emit({
        type: "control_request",
        request_id: requestId,
        request: { ...toolUseId, ...step.body, subtype: step.subtype }
      })
      const timeoutMs = step.timeoutMs ?? 10_000
      /** @type {NodeJS.Timeout | undefined} */
      let timer
      /** @type {Promise<"timeout">} */
      const timedOut = new Promise((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs)
      })
      const response = await Promise.race([answered, timedOut])
      clearTimeout(timer)
      if (response === "timeout") {
        throw new ScriptFailure(`no answer to ${step.subtype} (${requestId}) within ${timeoutMs} ms`)
      }
      if (response === undefined) throw new ScriptFailure(`stdin closed before the answer to ${step.subtype}`)
      log({ event: "answer", subtype: step.subtype, requestId, response })
      return
    }
    case "expectControl": {
      const request = await controlInbox(step.subtype).next()
      if (request === undefined) throw new ScriptFailure(`expected a ${step.subtype} control request, but stdin closed`)
      return
    }
    case "expectEndInput":
      return inputEndedPromise
  }
}

const main = async () => {
  for (const step of scenario.steps) await run(step)
  // like the real CLI when idle: exit once stdin closes
  await inputEndedPromise
  process.exit(0)
}

main().catch((/** @type {unknown} */ error) => {
  const message = error instanceof ScriptFailure ? error.message : error instanceof Error ? error.stack : String(error)
  die(error instanceof ScriptFailure ? 70 : 71, `fake CLI: ${message}\n`)
})
