// The Promise API never waits for the caller's prompt: a generator suspended at an `await` (the multi-turn pattern:
// yield a message, wait for the user's next input) does not hold up close(), abort, break or return(); a prompt that
// throws, rejects, or yields something that is not a user message fails the query with a typed error; and start-up
// (the `--version` probe included) stops at once on abort.
import { afterEach, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import {
  AbortError,
  InputClosed,
  InvalidOptions,
  type Options,
  type Query,
  query,
  type SDKMessage,
  type SDKUserMessage
} from "effect-claude-agent/promise"
import { FakeCli, ScriptedCli } from "effect-claude-agent/testing"
import { descendants, isAlive } from "./support/process.js"
import { leftAfterKill, probeRunning, slowVersionCli } from "./support/slowVersion.js"

/** How long a settle may take before the test calls it a hang (the measured settle is tens of milliseconds). */
const HANG_MS = 2_000

const user = (content: string): SDKUserMessage => ({
  type: "user",
  message: { role: "user", content },
  parent_tool_use_id: null,
  session_id: ""
})

/** A value a plain JavaScript caller might put in the prompt, typed as what the signature asks for. */
const smuggle = (value: unknown): SDKUserMessage => value as SDKUserMessage

/** The standard multi-turn prompt whose user never types again: one message, then an `await` that never resolves. */
async function* suspended(): AsyncGenerator<SDKUserMessage> {
  yield user("hi")
  await new Promise<never>(() => {})
}

/** `promise`, or a rejection saying it did not settle within `HANG_MS`. */
const settles = <A>(promise: Promise<A>): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${HANG_MS} ms`)), HANG_MS)
  })
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer))
}

/** Reads the query until its first `result`. */
const untilResult = async (q: Query): Promise<ReadonlyArray<SDKMessage>> => {
  const out: Array<SDKMessage> = []
  while (true) {
    const next = await settles(q.next())
    if (next.done === true) throw new Error(`the query ended before a result: ${JSON.stringify(out)}`)
    out.push(next.value)
    if (next.value.type === "result") return out
  }
}

/** An echoing scripted CLI that records whether its script still runs (it ends when the session is reaped). */
const echoing = () => {
  const state = { ended: false }
  let resolve: (cli: ScriptedCli.ScriptedCli) => void = () => {}
  const cli = new Promise<ScriptedCli.ScriptedCli>((r) => (resolve = r))
  const transport = ScriptedCli.layer(
    (c) =>
      Effect.gen(function*() {
        resolve(c)
        while (true) {
          const next = yield* Effect.either(c.expectUser)
          if (next._tag === "Left") return
          const content = next.right.message.content
          yield* c.turn(`echo: ${typeof content === "string" ? content : "blocks"}`)
        }
      }).pipe(Effect.ensuring(Effect.sync(() => (state.ended = true)))),
    { stepTimeout: "365 days" }
  )
  return { transport, cli, state }
}

/** The user messages the SDK wrote to a scripted CLI. */
const usersWritten = async (cli: Promise<ScriptedCli.ScriptedCli>) =>
  (await Effect.runPromise((await cli).received)).filter((frame) => frame.type === "user")

type Way = "close" | "abort" | "break" | "return"
const ways: ReadonlyArray<Way> = ["close", "abort", "break", "return"]

/** Runs a query on `suspended()` to its first result, then gives it up the given way (each bounded by `HANG_MS`). */
const abandon = async (way: Way, options: Options): Promise<{ readonly pid: number | undefined }> => {
  const abortController = new AbortController()
  const q = query({ prompt: suspended(), options: { ...options, abortController } })
  if (way === "break") {
    let pid: number | undefined
    await settles((async () => {
      for await (const message of q) {
        pid ??= await q.pid()
        if (message.type === "result") break
      }
    })())
    return { pid }
  }
  expect((await untilResult(q)).at(-1)).toMatchObject({ type: "result", result: "echo: hi" })
  const pid = await q.pid()
  if (way === "close") await settles(q.close())
  if (way === "return") expect(await settles(q.return())).toEqual({ done: true, value: undefined })
  if (way === "abort") {
    // the pending next() waits for the next turn, which never comes
    const pending = q.next()
    abortController.abort()
    await expect(settles(pending)).rejects.toBeInstanceOf(AbortError)
    await expect(settles(q.next())).rejects.toBeInstanceOf(AbortError)
    return { pid }
  }
  // done from now on
  expect(await settles(q.next())).toEqual({ done: true, value: undefined })
  return { pid }
}

describe("promise API: a prompt generator suspended at an await never holds the query up (scripted CLI)", () => {
  it.each(ways)("%s settles and the CLI is reaped", async (way) => {
    const { transport, state } = echoing()
    await abandon(way, { transport })
    expect(state.ended).toBe(true)
  })
})

describe("promise API: a suspended prompt generator with a fake CLI process", () => {
  const before = new Set(descendants(process.pid))
  afterEach(() => {
    expect(descendants(process.pid).filter((p) => !before.has(p))).toEqual([])
  })
  const fake = (): Options => {
    const program = FakeCli.executable()
    return {
      pathToClaudeCodeExecutable: program.executable,
      executableArgs: [...program.executableArgs],
      env: FakeCli.env(FakeCli.echoScenario)
    }
  }
  it.each(ways)("%s settles and the process is gone", async (way) => {
    const { pid } = await abandon(way, fake())
    expect(pid).toBeTypeOf("number")
    expect(isAlive(pid!)).toBe(false)
  })
})

describe("promise API: a prompt that fails fails the query with InvalidOptions { option: \"prompt\" }", () => {
  it("an iterator factory that throws", async () => {
    const { transport, state } = echoing()
    const cause = new Error("no input today")
    const prompt: AsyncIterable<SDKUserMessage> = {
      [Symbol.asyncIterator]() {
        throw cause
      }
    }
    const q = query({ prompt, options: { transport } })
    const error = await settles(q.next()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidOptions)
    expect(error).toMatchObject({ option: "prompt", cause })
    expect((error as InvalidOptions).description).toContain("no input today")
    expect(state.ended).toBe(true)
    expect(await q.next()).toEqual({ done: true, value: undefined })
  })

  it("a next() that rejects, after a first turn", async () => {
    const { transport, state } = echoing()
    const cause = new Error("input broke")
    let turned: () => void = () => {}
    const firstTurn = new Promise<void>((resolve) => (turned = resolve))
    async function* prompt(): AsyncGenerator<SDKUserMessage> {
      yield user("hi")
      await firstTurn
      throw cause
    }
    const q = query({ prompt: prompt(), options: { transport } })
    expect((await untilResult(q)).at(-1)).toMatchObject({ type: "result", result: "echo: hi" })
    turned()
    const error = await settles(q.next()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidOptions)
    expect(error).toMatchObject({ option: "prompt", cause })
    expect(state.ended).toBe(true)
  })

  it("a next() that throws synchronously", async () => {
    const { transport, state } = echoing()
    const cause = new TypeError("not today")
    const prompt: AsyncIterable<SDKUserMessage> = {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          throw cause
        }
      })
    }
    const error = await settles(query({ prompt, options: { transport } }).next()).catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InvalidOptions", option: "prompt", cause })
    expect(state.ended).toBe(true)
  })

  it.each([["a number", 42], ["undefined", undefined], ["null", null]])(
    "a next() that resolves to %s, not an iterator result",
    async (_, value: unknown) => {
      const { transport, cli, state } = echoing()
      const result = value as IteratorResult<SDKUserMessage>
      const prompt: AsyncIterable<SDKUserMessage> = {
        [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve(result) })
      }
      const error = await settles(query({ prompt, options: { transport } }).next()).catch((e: unknown) => e)
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "prompt" })
      expect((error as InvalidOptions).description).toContain(String(value))
      expect(state.ended).toBe(true)
      expect(await usersWritten(cli)).toEqual([])
    }
  )
})

describe("promise API: prompt items that are not user messages are InvalidOptions, and never written", () => {
  const invalid: ReadonlyArray<readonly [string, unknown, string]> = [
    ["an assistant message", { type: "assistant", message: { role: "assistant", content: "hi" } }, "type"],
    ["a user message whose role is not user", { type: "user", message: { role: "assistant", content: "x" } }, "role"],
    ["content that is a number", { type: "user", message: { role: "user", content: 42 } }, "content"],
    ["content blocks without a type", { type: "user", message: { role: "user", content: [{ text: "x" }] } }, "type"],
    ["no message", { type: "user" }, "message"],
    ["null", null, "null"],
    ["a number", 7, "7"]
  ]
  it.each(invalid)("%s, as the first item: nothing is sent", async (_, item, named) => {
    const { transport, cli, state } = echoing()
    async function* prompt(): AsyncGenerator<SDKUserMessage> {
      yield smuggle(item)
    }
    const error = await settles(query({ prompt: prompt(), options: { transport } }).next()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidOptions)
    expect(error).toMatchObject({ option: "prompt" })
    expect((error as InvalidOptions).description).toContain("item 0")
    expect((error as InvalidOptions).description).toContain(named)
    expect(await usersWritten(cli)).toEqual([])
    expect(state.ended).toBe(true)
  })

  it("as the second item: the first is answered, the second never written", async () => {
    const { transport, cli, state } = echoing()
    let turned: () => void = () => {}
    const firstTurn = new Promise<void>((resolve) => (turned = resolve))
    async function* prompt(): AsyncGenerator<SDKUserMessage> {
      yield user("first")
      await firstTurn
      yield smuggle({ type: "system", subtype: "init" })
    }
    const q = query({ prompt: prompt(), options: { transport } })
    expect((await untilResult(q)).at(-1)).toMatchObject({ type: "result", result: "echo: first" })
    turned()
    const error = await settles(q.next()).catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InvalidOptions", option: "prompt" })
    expect((error as InvalidOptions).description).toContain("item 1")
    expect((await usersWritten(cli)).length).toBe(1)
    expect(state.ended).toBe(true)
  })
})

describe("promise API: abort or close() during the --version probe", () => {
  it("stops waiting at once and kills the probe process", async () => {
    const cli = slowVersionCli()
    try {
      const abortController = new AbortController()
      const q = query({ prompt: "hi", options: { pathToClaudeCodeExecutable: cli.executable, abortController } })
      const pending = q.next()
      const probe = await probeRunning()
      const started = performance.now()
      abortController.abort()
      await expect(settles(pending)).rejects.toBeInstanceOf(AbortError)
      await settles(q.close())
      expect(performance.now() - started).toBeLessThan(HANG_MS)
      expect(await leftAfterKill(probe)).toEqual([])
    } finally {
      cli.remove()
    }
  })

  it("close(): settles at once, next() is done, methods reject with InputClosed, the probe is killed", async () => {
    const cli = slowVersionCli()
    try {
      const q = query({ prompt: "hi", options: { pathToClaudeCodeExecutable: cli.executable } })
      const pending = q.next()
      const probe = await probeRunning()
      await settles(q.close())
      expect(await settles(pending)).toEqual({ done: true, value: undefined })
      await expect(q.sessionId()).rejects.toBeInstanceOf(InputClosed)
      expect(await leftAfterKill(probe)).toEqual([])
    } finally {
      cli.remove()
    }
  })
})
