import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClaudeAgent, SessionHistory, TranscriptStore } from "effect-claude-agent"
import { TranscriptStoreSql } from "effect-claude-agent/sql"
import { ScriptedCli } from "effect-claude-agent/testing"
import { keyOfFile, mirrorFrame } from "../src/internal/transcript/mirror.js"
import { makePgStore, pgUrl } from "./transcriptStorePg.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-transcripts-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const platform = Layer.merge(NodeFileSystem.layer, NodePath.layer)

/** Every implementation, built in the test's scope (files and databases removed after). */
const implementations: ReadonlyArray<
  readonly [string, Effect.Effect<TranscriptStore.Service, unknown, Scope.Scope>]
> = [
  ["memory", TranscriptStore.makeMemory],
  [
    "file system",
    Effect.flatMap(tempDir, (directory) => TranscriptStore.makeFileSystem({ directory })).pipe(Effect.provide(platform))
  ],
  [
    "SQLite",
    Effect.flatMap(
      tempDir,
      (dir) =>
        Effect.flatMap(
          Layer.build(TranscriptStoreSql.layerSqlite({ filename: path.join(dir, "t.db") })),
          (ctx) => Effect.succeed(Context.get(ctx, TranscriptStore.TranscriptStore))
        )
    )
  ],
  ...(pgUrl === undefined ? [] : [
    [
      "PostgreSQL",
      makePgStore(pgUrl)
    ] as const
  ]),
  [
    "official shape (round trip)",
    Effect.flatMap(
      TranscriptStore.makeMemory,
      (memory) =>
        Effect.succeed(TranscriptStore.fromSessionStore(TranscriptStore.toSessionStore(memory, Effect.runPromise)))
    )
  ]
]

const key = { projectKey: "-tmp-project", sessionId: "11111111-1111-4111-8111-111111111111" }
const entry = (type: string, uuid?: string, extra: Record<string, unknown> = {}): TranscriptStore.Entry =>
  uuid === undefined ? { type, ...extra } : { type, uuid, ...extra }

describe.each(implementations)("TranscriptStore contract: %s", (_name, make) => {
  it.scoped("append keeps order, skips a uuid seen before, appends entries without uuid every time", () =>
    Effect.gen(function*() {
      const store = yield* make
      expect(yield* store.load(key)).toEqual(Option.none())
      yield* store.append(key, [entry("user", "a", { message: { content: "ü€ \n" } }), entry("last-prompt")])
      yield* store.append(key, [entry("user", "a"), entry("assistant", "b"), entry("last-prompt")])
      const loaded = Option.getOrThrow(yield* store.load(key))
      expect(loaded).toEqual([
        entry("user", "a", { message: { content: "ü€ \n" } }),
        entry("last-prompt"),
        entry("assistant", "b"),
        entry("last-prompt")
      ])
    }))

  it.scoped("list has the main transcripts of a project; listSubkeys the subpaths; delete removes them", () =>
    Effect.gen(function*() {
      const store = yield* make
      const other = { ...key, sessionId: "22222222-2222-4222-8222-222222222222" }
      yield* store.append(key, [entry("user", "a")])
      yield* store.append({ ...key, subpath: "subagents/agent-x" }, [entry("user", "s")])
      yield* store.append(other, [entry("user", "b")])
      yield* store.append({ ...key, projectKey: "-elsewhere" }, [entry("user", "c")])
      const listed = yield* store.list(key.projectKey)
      expect(listed.map((l) => l.sessionId).sort()).toEqual([key.sessionId, other.sessionId])
      expect(listed.every((l) => Number.isInteger(l.mtime) && l.mtime >= 0)).toBe(true)
      expect(yield* store.listSubkeys(key)).toEqual(["subagents/agent-x"])
      expect(Option.getOrThrow(yield* store.load({ ...key, subpath: "subagents/agent-x" }))).toEqual([
        entry("user", "s")
      ])
      yield* store.delete({ ...key, subpath: "subagents/agent-x" })
      expect(yield* store.listSubkeys(key)).toEqual([])
      expect(Option.isSome(yield* store.load(key))).toBe(true)
      yield* store.append({ ...key, subpath: "subagents/agent-y" }, [entry("user", "t")])
      yield* store.delete(key)
      expect(yield* store.load(key)).toEqual(Option.none())
      expect(yield* store.listSubkeys(key)).toEqual([])
      expect((yield* store.list(key.projectKey)).map((l) => l.sessionId)).toEqual([other.sessionId])
      yield* store.delete(key)
    }))

  it.scoped("bad keys and entries are typed errors", () =>
    Effect.gen(function*() {
      const store = yield* make
      for (
        const bad of [{ ...key, projectKey: ".." }, { ...key, sessionId: "a/b" }, { ...key, subpath: "" }, {
          ...key,
          subpath: "subagents/../x"
        }]
      ) {
        const error = yield* Effect.flip(store.append(bad, [entry("user", "a")]))
        expect(error).toMatchObject({ _tag: "TranscriptStoreError", reason: "InvalidKey", method: "append" })
      }
      const notAnEntry: ReadonlyArray<TranscriptStore.Entry> = JSON.parse("[{\"uuid\":\"x\"}]")
      expect(yield* Effect.flip(store.append(key, notAnEntry))).toMatchObject({ reason: "InvalidEntry" })
      expect(yield* store.load(key)).toEqual(Option.none())
    }))
})

describe("transcript_mirror frames", () => {
  const projects = "/home/me/.claude/projects"
  it("keys come from the file the CLI names", () => {
    expect(keyOfFile(projects, `${projects}/-tmp-x/abc.jsonl`)).toEqual({ projectKey: "-tmp-x", sessionId: "abc" })
    expect(keyOfFile(projects, `${projects}/-tmp-x/abc/subagents/agent-1.jsonl`)).toEqual({
      projectKey: "-tmp-x",
      sessionId: "abc",
      subpath: "subagents/agent-1"
    })
    // a config dir seen through another path: the last `projects` directory
    expect(keyOfFile(projects, "/private/cfg/projects/-p/abc.jsonl")).toEqual({ projectKey: "-p", sessionId: "abc" })
    expect(keyOfFile(projects, `${projects}/abc.jsonl`)).toBeUndefined()
    expect(keyOfFile(projects, `${projects}/-p/abc.txt`)).toBeUndefined()
  })

  it("a frame is recognised among unknown messages; anything else passes", () => {
    const raw = { type: "transcript_mirror", filePath: `${projects}/-p/abc.jsonl`, entries: [{ type: "user" }] }
    expect(mirrorFrame(projects, { type: "unknown", reason: "unknown_type", raw })).toEqual({
      key: { projectKey: "-p", sessionId: "abc" },
      entries: [{ type: "user" }]
    })
    expect(mirrorFrame(projects, { type: "unknown", reason: "unknown_type", raw: { ...raw, entries: [1] } })).toEqual({
      key: { projectKey: "-p", sessionId: "abc" },
      entries: [],
      invalid: 1
    })
    expect(mirrorFrame(projects, { type: "unknown", reason: "unknown_type", raw: { ...raw, filePath: 1 } })).toBe(
      "invalid"
    )
    expect(mirrorFrame(projects, { type: "unknown", reason: "unknown_type", raw: { type: "other" } })).toBe("other")
  })
})

describe("sessions with a store", () => {
  it.live("loadTimeout bounds the load before the spawn: StartupFailed with the store's Timeout as its cause", () =>
    Effect.gen(function*() {
      const hanging: TranscriptStore.Service = {
        ...(yield* TranscriptStore.makeMemory),
        load: () => Effect.never
      }
      const error = yield* ClaudeAgent.session({ resume: key.sessionId, env: { CLAUDE_CONFIG_DIR: os.tmpdir() } }).pipe(
        Effect.scoped,
        Effect.flip,
        Effect.provide(ScriptedCli.echo),
        Effect.provideService(TranscriptStore.TranscriptStore, hanging),
        Effect.provideService(TranscriptStore.Mirror, {
          flush: "batched",
          loadTimeout: "100 millis",
          closeTimeout: "1 second"
        })
      )
      expect(error).toMatchObject({ _tag: "StartupFailed", reason: "Spawn" })
      expect(error._tag === "StartupFailed" ? error.cause : undefined).toMatchObject({
        _tag: "TranscriptStoreError",
        reason: "Timeout",
        method: "load"
      })
    }))

  it.live("persistSession: false with a store is InvalidOptions", () =>
    Effect.gen(function*() {
      const error = yield* ClaudeAgent.session({ persistSession: false }).pipe(
        Effect.scoped,
        Effect.flip,
        Effect.provide(ScriptedCli.echo),
        Effect.provide(TranscriptStore.layerMemory)
      )
      expect(error).toMatchObject({ _tag: "InvalidOptions", option: "persistSession" })
    }))
})

describe("a store that names paths", () => {
  it.scopedLive("a subpath leaving the session directory fails the resume; nothing is written outside", () =>
    Effect.gen(function*() {
      const configDir = yield* tempDir
      const memory = yield* TranscriptStore.makeMemory
      const cwd = yield* tempDir
      const projectKey = SessionHistory.encodeCwd(fs.realpathSync(cwd))
      yield* memory.append({ ...key, projectKey }, [entry("user", "a")])
      const hostile: TranscriptStore.Service = {
        ...memory,
        listSubkeys: () => Effect.succeed(["../../../escaped"]),
        load: () => Effect.succeed(Option.some([entry("user", "x")]))
      }
      const error = yield* ClaudeAgent.session({ cwd, resume: key.sessionId, env: { CLAUDE_CONFIG_DIR: configDir } })
        .pipe(
          Effect.scoped,
          Effect.flip,
          Effect.provide(ScriptedCli.echo),
          Effect.provideService(TranscriptStore.TranscriptStore, hostile)
        )
      expect(error).toMatchObject({ _tag: "StartupFailed", cause: { reason: "InvalidKey" } })
      expect(fs.existsSync(path.join(configDir, "escaped.jsonl"))).toBe(false)
      expect(fs.readdirSync(configDir)).toEqual(["projects"])
    }))
})
