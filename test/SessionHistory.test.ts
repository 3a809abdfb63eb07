import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent } from "effect-claude-agent"
import * as SessionHistory from "../src/SessionHistory.js"
import { NodeClaudeAgent, noClaudeLeft, realCli, tempDir } from "./support/cli.js"

const NodePlatform = Layer.merge(NodeFileSystem.layer, NodePath.layer)

const withStore = <A, E, R>(
  configDir: string,
  f: (store: SessionHistory.Service) => Effect.Effect<A, E, R>,
  options: Omit<SessionHistory.Options, "configDir"> = {}
) =>
  SessionHistory.make({ configDir, ...options }).pipe(
    Effect.flatMap(f),
    Effect.provide(NodePlatform)
  )

// ---------------------------------------------------------------------------------------------------------------------
// fixture builders, modelled on the lines the CLI 2.1.332 writes
// ---------------------------------------------------------------------------------------------------------------------

const sid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`

interface Ctx {
  readonly sessionId: string
  readonly cwd: string
  n: number
  parent: string | null
  clock: number
}

const ctx = (sessionId: string, cwd: string, start = Date.parse("2026-01-01T10:00:00.000Z")): Ctx => ({
  sessionId,
  cwd,
  n: 0,
  parent: null,
  clock: start
})

const chain = (c: Ctx, type: string, fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const uuid = `${c.sessionId.slice(0, 8)}-uuid-${++c.n}`
  const line = {
    parentUuid: c.parent,
    isSidechain: false,
    type,
    ...fields,
    uuid,
    timestamp: new Date(c.clock += 1000).toISOString(),
    userType: "external",
    entrypoint: "sdk-ts",
    cwd: c.cwd,
    sessionId: c.sessionId,
    version: "2.1.332",
    gitBranch: "main",
    ...extra
  }
  c.parent = uuid
  return JSON.stringify(line)
}

const user = (c: Ctx, content: unknown, extra: Record<string, unknown> = {}) =>
  chain(c, "user", { message: { role: "user", content } }, extra)

const prompt = (c: Ctx, text: string) => user(c, [{ type: "text", text }], { promptId: "p" })

const assistant = (c: Ctx, id: string, block: unknown, extra: Record<string, unknown> = {}) =>
  chain(c, "assistant", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [block],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 }
    },
    requestId: "req_1"
  }, extra)

const meta = (sessionId: string, type: string, fields: Record<string, unknown>) =>
  JSON.stringify({ type, ...fields, sessionId })

const queue = (c: Ctx, operation: string) =>
  JSON.stringify({
    type: "queue-operation",
    operation,
    timestamp: new Date(c.clock).toISOString(),
    sessionId: c.sessionId
  })

const writeSession = (projectDir: string, sessionId: string, lines: ReadonlyArray<string>, mtime?: Date) => {
  fs.mkdirSync(projectDir, { recursive: true })
  const file = path.join(projectDir, `${sessionId}.jsonl`)
  fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(""))
  if (mtime !== undefined) fs.utimesSync(file, mtime, mtime)
  return file
}

/** A config dir with three sessions of one cwd (and noise that must be ignored). */
const fixtureTree = Effect.gen(function*() {
  const root = yield* tempDir("eca-store-")
  const configDir = path.join(root, "config")
  const cwd = path.join(root, "work", "my_app.v2")
  fs.mkdirSync(cwd, { recursive: true })
  const projectDir = path.join(configDir, "projects", SessionHistory.encodeCwd(cwd))

  // oldest: a tool round trip, a reply of three blocks (one API message), a custom title then a newer one
  const a = ctx(sid(1), cwd)
  writeSession(projectDir, sid(1), [
    meta(sid(1), "custom-title", { customTitle: "first title" }),
    queue(a, "enqueue"),
    queue(a, "dequeue"),
    prompt(a, "list the files\nplease"),
    chain(a, "attachment", { attachment: { type: "date", date: "2026-01-01" } }),
    assistant(a, "msg_a1", { type: "thinking", thinking: "hmm", signature: "sig" }),
    assistant(a, "msg_a1", { type: "text", text: "Listing " }),
    assistant(a, "msg_a1", { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }),
    user(a, [{ tool_use_id: "toolu_1", type: "tool_result", content: "a.txt", is_error: false }], {
      toolUseResult: { stdout: "a.txt", stderr: "" }
    }),
    assistant(a, "msg_a2", { type: "text", text: "There is a.txt." }),
    meta(sid(1), "last-prompt", { lastPrompt: "list the files please", leafUuid: "x" }),
    meta(sid(1), "custom-title", { customTitle: "Files" }),
    JSON.stringify({ type: "summary", summary: "Listed files", leafUuid: "x" })
  ], new Date("2026-01-01T12:00:00Z"))

  // newest: noise before the first prompt (meta caveat, a slash command, an interrupt marker), a malformed line,
  // unknown entry types, an unknown content block, a tag, an AI title, a synthetic API error reply
  const b = ctx(sid(2), cwd, Date.parse("2026-01-03T08:00:00.000Z"))
  writeSession(projectDir, sid(2), [
    queue(b, "enqueue"),
    user(b, "<local-command-caveat>Caveat: …</local-command-caveat>", { isMeta: true }),
    user(b, "<command-name>/model</command-name>\n<command-message>model</command-message>"),
    user(b, "<local-command-stdout>Set model</local-command-stdout>"),
    user(b, [{ type: "text", text: "[Request interrupted by user]" }]),
    prompt(b, "  What is 2 + 2?  "),
    "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_b1\", TRUNCATED BY A CRASH",
    JSON.stringify({ type: "api-request", sessionId: sid(2), id: "r1" }),
    assistant(b, "msg_b1", { type: "text", text: "4" }),
    assistant(b, "msg_b1", { type: "fancy_new_block", payload: 1 }),
    "[1, 2, 3]",
    "",
    meta(sid(2), "ai-title", { aiTitle: "Arithmetic" }),
    meta(sid(2), "tag", { tag: "math" }),
    prompt(b, "and 3 + 3?"),
    assistant(b, "0b8e8f0e-4c1b-4d6e-9f5e-1f2a3b4c5d6e", { type: "text", text: "API Error: 529 overloaded" }, {
      isApiErrorMessage: true,
      error: "server_error"
    }),
    JSON.stringify({ type: "user", uuid: "u-bad", sessionId: sid(2), timestamp: "2026-01-03T08:10:00.000Z" })
  ], new Date("2026-01-03T12:00:00Z"))

  // middle: a single prompt, no reply yet
  const c = ctx(sid(3), cwd, Date.parse("2026-01-02T08:00:00.000Z"))
  writeSession(projectDir, sid(3), [queue(c, "enqueue"), prompt(c, "hello")], new Date("2026-01-02T12:00:00Z"))

  // ignored: not a session id, a subagent directory, another project
  fs.writeFileSync(path.join(projectDir, "notes.jsonl"), "{}\n")
  fs.mkdirSync(path.join(projectDir, sid(1), "subagents"), { recursive: true })
  fs.writeFileSync(path.join(projectDir, sid(1), "subagents", "agent-1.jsonl"), prompt(ctx(sid(9), cwd), "sub"))
  writeSession(path.join(configDir, "projects", "-elsewhere"), sid(4), [prompt(ctx(sid(4), "/elsewhere"), "x")])

  return { root, configDir, cwd, projectDir }
})

// ---------------------------------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------------------------------

describe("SessionHistory.encodeCwd", () => {
  it("matches the directory names the CLI 2.1.332 created (recorded)", () => {
    // every name below was created by the real CLI for a session run in that cwd
    const base = "/tmp/eca-explore-trvE1v"
    expect(SessionHistory.encodeCwd(`${base}/plain`)).toBe("-tmp-eca-explore-trvE1v-plain")
    expect(SessionHistory.encodeCwd(`${base}/under_score.dot space`)).toBe(
      "-tmp-eca-explore-trvE1v-under-score-dot-space"
    )
    expect(SessionHistory.encodeCwd(`${base}/UPPER.Case-01`)).toBe("-tmp-eca-explore-trvE1v-UPPER-Case-01")
    // per UTF-16 code unit: ü, ï, 日, 本 give one dash each, the emoji (a surrogate pair) two
    expect(SessionHistory.encodeCwd(`${base}/uni-ünï-日本-😀`)).toBe("-tmp-eca-explore-trvE1v-uni--n-------")
    expect(SessionHistory.encodeCwd(`${base}/x:y@z+w=%~#!(q)[r]{s}'t"u,v;`)).toBe(
      "-tmp-eca-explore-trvE1v-x-y-z-w------q--r--s--t-u-v-"
    )
    // longer than 200: cut to 200, then "-" and the base-36 hash of the original path
    const long = `${base}/${"a".repeat(120)}/${"b".repeat(120)}`
    const encoded = SessionHistory.encodeCwd(long)
    expect(encoded).toBe(`-tmp-eca-explore-trvE1v-${"a".repeat(120)}-${"b".repeat(55)}-524c71`)
    expect(encoded).toHaveLength(207)
  })
})

describe("SessionHistory on a fixture tree", () => {
  it.scoped("list: the sessions of a cwd, newest first, with counts, prompts and titles", () =>
    Effect.gen(function*() {
      const { configDir, cwd, projectDir } = yield* fixtureTree
      const sessions = yield* withStore(configDir, (store) => store.list(cwd))
      expect(sessions.map((s) => s.sessionId)).toEqual([sid(2), sid(3), sid(1)])
      const [b, c, a] = sessions
      expect(a).toEqual({
        sessionId: sid(1),
        path: path.join(projectDir, `${sid(1)}.jsonl`),
        cwd,
        lastModified: new Date("2026-01-01T12:00:00Z"),
        fileSize: fs.statSync(path.join(projectDir, `${sid(1)}.jsonl`)).size,
        // 2 user entries (prompt, tool result) + 2 API messages (msg_a1 written as 3 lines, msg_a2)
        messageCount: 4,
        firstPrompt: "list the files please",
        lastPrompt: "list the files please",
        title: "Files",
        customTitle: "Files",
        aiTitle: undefined,
        summary: "Listed files",
        tag: undefined,
        // the first timestamp: the queue-operation entry
        createdAt: new Date("2026-01-01T10:00:00.000Z"),
        gitBranch: "main"
      })
      expect(b).toMatchObject({
        // the command, its output and the interrupt marker count; the isMeta caveat and the invalid line do not
        messageCount: 8,
        firstPrompt: "What is 2 + 2?",
        title: "Arithmetic",
        aiTitle: "Arithmetic",
        customTitle: undefined,
        tag: "math"
      })
      expect(c).toMatchObject({ messageCount: 1, firstPrompt: "hello", title: undefined })

      const page = yield* withStore(configDir, (store) => store.list(cwd, { offset: 1, limit: 1 }))
      expect(page.map((s) => s.sessionId)).toEqual([sid(3)])
    }))

  it.scoped("list: an unknown cwd has no sessions", () =>
    Effect.gen(function*() {
      const { configDir, root } = yield* fixtureTree
      expect(yield* withStore(configDir, (store) => store.list(path.join(root, "nowhere")))).toEqual([])
    }))

  it.scoped("info: exact, and fast (head + tail) agrees except for the count", () =>
    Effect.gen(function*() {
      const { configDir, cwd } = yield* fixtureTree
      const exact = yield* withStore(configDir, (store) => store.info(sid(1), cwd))
      const fast = yield* withStore(configDir, (store) => store.info(sid(1), cwd, { fast: true }))
      // a small file is read whole even when fast: everything is exact
      expect(fast).toEqual(exact)
    }))

  it.scoped("entries: typed entries, unknown kinds and malformed lines in-band, in file order", () =>
    Effect.gen(function*() {
      const { configDir, cwd } = yield* fixtureTree
      const items = Chunk.toReadonlyArray(
        yield* withStore(configDir, (store) => Stream.runCollect(store.entries(sid(2), cwd)))
      )
      expect(items.map((i) => i.type)).toEqual([
        "queue-operation",
        "user",
        "user",
        "user",
        "user",
        "user",
        "malformed",
        "unknown",
        "assistant",
        "assistant",
        "malformed",
        "ai-title",
        "tag",
        "user",
        "assistant",
        "unknown"
      ])
      expect(items[6]).toMatchObject({ type: "malformed", reason: "invalid_json", lineNumber: 7 })
      expect(items[7]).toMatchObject({ type: "unknown", reason: "unknown_type", entryType: "api-request" })
      // an unknown content block inside a known entry becomes an unknown block
      expect(items[9]).toMatchObject({
        type: "assistant",
        message: { content: [{ type: "unknown", raw: { type: "fancy_new_block", payload: 1 } }] }
      })
      expect(items[10]).toMatchObject({ type: "malformed", reason: "not_an_object", lineNumber: 11 })
      // a known kind with missing fields is kept as unknown/invalid with the reason
      const invalid = items[15]
      expect(invalid).toMatchObject({ type: "unknown", reason: "invalid", entryType: "user", lineNumber: 17 })
      expect(invalid?.type === "unknown" && invalid.issue).toContain("message")
      // decoded entries are the parsed objects, extra fields kept
      expect(items[1]).toMatchObject({ userType: "external", entrypoint: "sdk-ts", version: "2.1.332" })
    }))

  it.scoped("messages: prompts and merged replies", () =>
    Effect.gen(function*() {
      const { configDir, cwd } = yield* fixtureTree
      const [a, b] = yield* withStore(configDir, (store) =>
        Effect.all([
          Stream.runCollect(store.messages(sid(1), cwd)),
          Stream.runCollect(store.messages(sid(2), cwd))
        ]))
      const simple = (m: SessionHistory.ConversationMessage) => [m.role, m.text]
      expect(Chunk.toReadonlyArray(a).map(simple)).toEqual([
        ["user", "list the files\nplease"],
        ["assistant", "Listing "],
        ["assistant", "There is a.txt."]
      ])
      const reply = Chunk.toReadonlyArray(a)[1]
      expect(reply?.role === "assistant" && reply.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use"])
      expect(reply).toMatchObject({ messageId: "msg_a1", model: "claude-opus-5-5", isApiError: false })
      expect(Chunk.toReadonlyArray(b).map(simple)).toEqual([
        ["user", "  What is 2 + 2?  "],
        ["assistant", "4"],
        ["user", "and 3 + 3?"],
        ["assistant", "API Error: 529 overloaded"]
      ])
      expect(Chunk.toReadonlyArray(b)[3]).toMatchObject({ isApiError: true })
    }))

  it.scoped("errors: a missing session, an invalid id", () =>
    Effect.gen(function*() {
      const { configDir, cwd, projectDir } = yield* fixtureTree
      const missing = yield* withStore(configDir, (store) => store.info(sid(99), cwd)).pipe(Effect.flip)
      expect(missing).toMatchObject({
        _tag: "SessionHistoryError",
        reason: "SessionNotFound",
        sessionId: sid(99),
        path: path.join(projectDir, `${sid(99)}.jsonl`)
      })
      expect(SessionHistory.isSessionHistoryError(missing)).toBe(true)
      expect(missing.message).toContain(sid(99))
      const exit = yield* withStore(configDir, (store) => Stream.runCollect(store.entries("../../etc/passwd", cwd)))
        .pipe(Effect.exit)
      expect(exit).toStrictEqual(
        Exit.fail(new SessionHistory.SessionHistoryError({ reason: "InvalidSessionId", sessionId: "../../etc/passwd" }))
      )
      const notFound = yield* withStore(configDir, (store) => Stream.runCollect(store.messages(sid(98), cwd)))
        .pipe(Effect.flip)
      expect(notFound).toMatchObject({ _tag: "SessionHistoryError", reason: "SessionNotFound" })
    }))

  it.scoped("projectDir: a symlinked cwd is resolved like the CLI does", () =>
    Effect.gen(function*() {
      const { configDir, cwd, root, projectDir } = yield* fixtureTree
      const link = path.join(root, "link-to-app")
      fs.symlinkSync(cwd, link)
      expect(yield* withStore(configDir, (store) => store.projectDir(link))).toBe(projectDir)
      const viaLink = yield* withStore(configDir, (store) => store.list(link))
      expect(viaLink).toHaveLength(3)
    }))

  it.scoped("projectDir: a long cwd falls back to a directory with the same prefix and another hash", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("eca-store-")
      const cwd = path.join(root, "x".repeat(150), "y".repeat(100))
      const encoded = SessionHistory.encodeCwd(cwd)
      const other = `${encoded.slice(0, 200)}-otherhash`
      fs.mkdirSync(path.join(root, "projects", other), { recursive: true })
      expect(yield* withStore(root, (store) => store.projectDir(cwd))).toBe(path.join(root, "projects", other))
      fs.mkdirSync(path.join(root, "projects", encoded))
      expect(yield* withStore(root, (store) => store.projectDir(cwd))).toBe(path.join(root, "projects", encoded))
    }))

  it.scoped("config dir: options, else CLAUDE_CONFIG_DIR, else HOME/.claude, else a ConfigError", () =>
    Effect.gen(function*() {
      const configDirOf = (env: Record<string, string>) =>
        Effect.gen(function*() {
          const store = yield* SessionHistory.SessionHistory
          return store.configDir
        }).pipe(
          Effect.provide(SessionHistory.layer()),
          Effect.provide(NodePlatform),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      expect(yield* configDirOf({ CLAUDE_CONFIG_DIR: "/cfg", HOME: "/home/me" })).toBe("/cfg")
      expect(yield* configDirOf({ CLAUDE_CONFIG_DIR: "", HOME: "/home/me" })).toBe("/home/me/.claude")
      expect(yield* configDirOf({ HOME: "/home/me" })).toBe("/home/me/.claude")
      const error = yield* Effect.flip(configDirOf({}))
      expect(error._tag).toBe("ConfigError")
      const store = yield* withStore("/explicit", (s) => Effect.succeed(s))
      expect(store.projectsDir).toBe("/explicit/projects")
    }))
})

describe("SessionHistory on real CLI transcripts (recorded)", () => {
  const fixtures = path.join(import.meta.dirname, "fixtures", "sessions")
  const copy = (configDir: string, cwd: string, file: string, sessionId: string) =>
    fs.copyFileSync(
      path.join(fixtures, file),
      path.join(configDir, "projects", SessionHistory.encodeCwd(cwd), `${sessionId}.jsonl`)
    )

  it.scoped("every line decodes to a modelled entry or a known bookkeeping kind; fast info matches exact", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("eca-store-")
      const cwd = path.join(root, "proj")
      fs.mkdirSync(path.join(root, "projects", SessionHistory.encodeCwd(cwd)), { recursive: true })
      copy(root, cwd, "real-tools-interrupt.jsonl", sid(1))
      copy(root, cwd, "real-compact-api-error.jsonl", sid(2))
      const [items1, items2, infos, fast] = yield* withStore(root, (store) =>
        Effect.all([
          Stream.runCollect(store.entries(sid(1), cwd)),
          Stream.runCollect(store.entries(sid(2), cwd)),
          store.list(cwd),
          store.list(cwd, { fast: true })
        ]))
      const all = [...Chunk.toReadonlyArray(items1), ...Chunk.toReadonlyArray(items2)]
      expect(all.filter((i) => i.type === "malformed" || (i.type === "unknown" && i.reason === "invalid"))).toEqual([])
      const unknownKinds = new Set(all.flatMap((i) => i.type === "unknown" ? [i.entryType] : []))
      expect([...unknownKinds].sort()).toEqual([
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "cost-state",
        "tools-used"
      ])
      expect(new Set(all.map((i) => i.type))).toEqual(
        new Set([
          "custom-title",
          "queue-operation",
          "user",
          "attachment",
          "assistant",
          "last-prompt",
          "system",
          "unknown"
        ])
      )
      const [s1] = infos.filter((i) => i.sessionId === sid(1))
      // users: 3 prompts, a tool result, an interrupt marker; replies: msg_sms_0 (3 lines), msg_sms_1, msg_sms_3
      expect(s1).toMatchObject({ messageCount: 8, firstPrompt: "run the tool please", title: "My titled session" })
      const [s2] = infos.filter((i) => i.sessionId === sid(2))
      expect(s2).toMatchObject({ firstPrompt: "first fails", lastPrompt: "SAY after compact", gitBranch: "HEAD" })
      // both files are larger than the 64 KiB windows
      expect(infos.every((i) => i.fileSize > 64 * 1024)).toBe(true)
      expect(fast).toEqual(infos.map((i) => ({ ...i, messageCount: undefined })))

      const conversation = yield* withStore(root, (store) => Stream.runCollect(store.messages(sid(1), cwd)))
      expect(Chunk.toReadonlyArray(conversation).map((m) => [m.role, m.text])).toEqual([
        ["user", "run the tool please"],
        ["assistant", "I will run a command."],
        ["assistant", "The command said hi."],
        ["user", "this one hangs"],
        ["user", "SAY after"],
        ["assistant", "after"]
      ])
    }))
})

describe("SessionHistory with large transcripts", () => {
  const LINE_TEXT = "x".repeat(900)

  /** Writes a transcript of about `megabytes` MB; returns its number of lines. */
  const writeLarge = (file: string, megabytes: number, options: { readonly firstPromptBytes?: number } = {}) => {
    const c = ctx(sid(7), "/big")
    const fd = fs.openSync(file, "w")
    let bytes = 0
    let lines = 0
    const write = (line: string) => {
      fs.writeSync(fd, `${line}\n`)
      bytes += line.length + 1
      lines++
    }
    write(queue(c, "enqueue"))
    write(prompt(c, `first ${"p".repeat(options.firstPromptBytes ?? 10)}`))
    let batch: Array<string> = []
    let n = 0
    while (bytes < megabytes * 1024 * 1024) {
      const line = assistant(c, `msg_${n++}`, { type: "text", text: LINE_TEXT })
      batch.push(line)
      bytes += line.length + 1
      lines++
      if (batch.length === 1000) {
        fs.writeSync(fd, batch.join("\n") + "\n")
        batch = []
      }
    }
    if (batch.length > 0) fs.writeSync(fd, batch.join("\n") + "\n")
    write(meta(sid(7), "custom-title", { customTitle: "Big one" }))
    fs.closeSync(fd)
    return lines
  }

  it.scoped("a 50 MB transcript streams with bounded memory", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("eca-store-")
      const dir = path.join(root, "projects", SessionHistory.encodeCwd("/big"))
      fs.mkdirSync(dir, { recursive: true })
      const lines = writeLarge(path.join(dir, `${sid(7)}.jsonl`), 50)
      const before = process.memoryUsage().heapUsed
      let peak = 0
      const count = yield* withStore(root, (store) =>
        store.entries(sid(7), "/big").pipe(
          Stream.runFold(0, (n, item) => {
            if (n % 2000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed - before)
            return item.type === "unknown" || item.type === "malformed" ? -1e9 : n + 1
          })
        ))
      expect(count).toBe(lines)
      // the whole file as a string alone would be 50 MB, its entries several times that
      expect(peak).toBeLessThan(40 * 1024 * 1024)
    }), 60_000)

  it.scoped("entries are produced while the file is read, not after", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("eca-store-")
      const dir = path.join(root, "projects", SessionHistory.encodeCwd("/big"))
      fs.mkdirSync(dir, { recursive: true })
      writeLarge(path.join(dir, `${sid(7)}.jsonl`), 20)
      // a FileSystem that counts the bytes it has streamed
      let bytesRead = 0
      const Counting = Layer.effect(
        FileSystem.FileSystem,
        Effect.map(FileSystem.FileSystem, (fileSystem) =>
          FileSystem.FileSystem.of({
            ...fileSystem,
            stream: (p, o) =>
              fileSystem.stream(p, o).pipe(Stream.tap((chunk) => Effect.sync(() => (bytesRead += chunk.length))))
          }))
      ).pipe(Layer.provide(NodeFileSystem.layer))
      const readAtItem: Array<number> = []
      const first = yield* SessionHistory.make({ configDir: root }).pipe(
        Effect.flatMap((store) =>
          store.entries(sid(7), "/big").pipe(
            Stream.tap(() => Effect.sync(() => readAtItem.push(bytesRead))),
            Stream.take(3),
            Stream.runCollect
          )
        ),
        Effect.provide(Layer.merge(Counting, NodePath.layer))
      )
      expect(Chunk.size(first)).toBe(3)
      // three entries needed the first chunk(s), not the 20 MB
      expect(bytesRead).toBeLessThan(1024 * 1024)
      expect(readAtItem[2]).toBeLessThan(1024 * 1024)
    }), 60_000)

  it.scoped("info: fast reads the ends only; a first prompt longer than the head window is still found", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("eca-store-")
      const dir = path.join(root, "projects", SessionHistory.encodeCwd("/big"))
      fs.mkdirSync(dir, { recursive: true })
      writeLarge(path.join(dir, `${sid(7)}.jsonl`), 2, { firstPromptBytes: 100 * 1024 })
      const [exact, fast] = yield* withStore(
        root,
        (store) => Effect.all([store.info(sid(7), "/big"), store.info(sid(7), "/big", { fast: true })])
      )
      expect(exact.messageCount).toBeGreaterThan(1000)
      expect(exact.firstPrompt).toBe(`first ${"p".repeat(194)}\u2026`)
      expect(exact.title).toBe("Big one")
      expect(fast).toEqual({ ...exact, messageCount: undefined })
    }))

  it.scoped("a line over maxLineBytes is reported and skipped; the next lines are read", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("eca-store-")
      const dir = path.join(root, "projects", SessionHistory.encodeCwd("/big"))
      const c = ctx(sid(8), "/big")
      writeSession(dir, sid(8), [prompt(c, "short"), prompt(c, "y".repeat(10_000)), prompt(c, "after")])
      const items = yield* withStore(
        root,
        (store) => Stream.runCollect(store.entries(sid(8), "/big")),
        { maxLineBytes: 4096 }
      )
      const [one, two, three] = Chunk.toReadonlyArray(items)
      expect(one?.type).toBe("user")
      expect(two).toMatchObject({ type: "malformed", reason: "too_long", lineNumber: 2 })
      expect(two?.type === "malformed" && two.bytes).toBeGreaterThan(10_000)
      expect(two?.type === "malformed" && two.head.length).toBe(1024)
      expect(three?.type === "user" && SessionHistory.entryText(three)).toBe("after")
    }))
})

// ---------------------------------------------------------------------------------------------------------------------
// real CLI
// ---------------------------------------------------------------------------------------------------------------------

describe("SessionHistory against the real CLI", () => {
  it.live(
    "a 2-turn session in a cwd that needs encoding is listed and read back",
    () =>
      noClaudeLeft(Effect.scoped(Effect.gen(function*() {
        const { cwd: base, options } = yield* realCli()
        const cwd = path.join(base, "my project_v1.2 (ünï) 😀")
        const long = path.join(base, "l".repeat(120), "m".repeat(120))
        fs.mkdirSync(cwd)
        fs.mkdirSync(long, { recursive: true })
        const env = options().env ?? {}
        const configDir = env["CLAUDE_CONFIG_DIR"]
        if (configDir === undefined) return yield* Effect.die("no CLAUDE_CONFIG_DIR")

        const sessionId = yield* Effect.scoped(Effect.gen(function*() {
          const session = yield* ClaudeAgent.session(options({ cwd }))
          yield* Stream.runDrain(session.turn("SAY first reply"))
          yield* Stream.runDrain(session.turn("HISTORY"))
          return yield* session.sessionId
        }))
        yield* ClaudeAgent.query("SAY from a long path", options({ cwd: long })).pipe(Stream.runDrain)

        yield* withStore(configDir, (store) =>
          Effect.gen(function*() {
            // the CLI created exactly the directories we compute
            const projects = fs.readdirSync(path.join(configDir, "projects")).sort()
            expect(projects).toEqual([SessionHistory.encodeCwd(long), SessionHistory.encodeCwd(cwd)].sort())
            expect(SessionHistory.encodeCwd(long)).toMatch(/^.{200}-[0-9a-z]+$/)
            expect(yield* store.projectDir(cwd)).toBe(path.join(configDir, "projects", SessionHistory.encodeCwd(cwd)))

            const sessions = yield* store.list(cwd)
            expect(sessions).toHaveLength(1)
            expect(sessions[0]).toMatchObject({
              sessionId,
              cwd,
              messageCount: 4,
              firstPrompt: "SAY first reply",
              lastPrompt: "HISTORY"
            })
            expect(yield* store.info(sessionId, cwd, { fast: true })).toMatchObject({
              sessionId,
              firstPrompt: "SAY first reply",
              lastPrompt: "HISTORY"
            })
            const conversation = Chunk.toReadonlyArray(yield* Stream.runCollect(store.messages(sessionId, cwd)))
            expect(conversation.filter((m) => m.role === "user").map((m) => m.text)).toEqual([
              "SAY first reply",
              "HISTORY"
            ])
            const replies = conversation.filter((m) => m.role === "assistant").map((m) => m.text)
            expect(replies).toHaveLength(2)
            expect(replies[0]).toBe("first reply")
            expect(replies[1]).toContain("user prompts: SAY first reply | HISTORY")

            const items = Chunk.toReadonlyArray(yield* Stream.runCollect(store.entries(sessionId, cwd)))
            expect(items.some((i) => i.type === "malformed" || (i.type === "unknown" && i.reason === "invalid")))
              .toBe(false)

            const [longSession] = yield* store.list(long)
            expect(longSession).toMatchObject({ cwd: long, firstPrompt: "SAY from a long path", messageCount: 2 })
          }))
      }))).pipe(Effect.provide(NodeClaudeAgent.layer)),
    90_000
  )
})

describe("SessionStore, the deprecated name of SessionHistory", () => {
  it("is the same service, error and functions under the old names", async () => {
    const Deprecated = await import("../src/SessionStore.js")
    expect(Deprecated.SessionStore).toBe(SessionHistory.SessionHistory)
    expect(Deprecated.SessionStoreError).toBe(SessionHistory.SessionHistoryError)
    expect(Deprecated.isSessionStoreError(new SessionHistory.SessionHistoryError({ reason: "InvalidSessionId" })))
      .toBe(true)
    expect(Deprecated.encodeCwd).toBe(SessionHistory.encodeCwd)
    expect(Deprecated.layer).toBe(SessionHistory.layer)
  })
})
