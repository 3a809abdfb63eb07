import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Message, Transport } from "effect-claude-agent"
import * as ScriptedModelServer from "../src/ScriptedModelServer.js"
import { noClaudeLeft } from "./support/cli.js"
import { isAlive, NodeExecutor } from "./support/process.js"

const TransportLive = Transport.layerProcess.pipe(Layer.provide(NodeExecutor))

describe("Transport (real CLI)", () => {
  it.live("the pinned claude binary answers one user message: system/init, assistant text, success result", () =>
    noClaudeLeft(Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* ScriptedModelServer.make().pipe(Scope.extend(scope))
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "eca-cli-"))
      const transport = yield* Transport.Transport
      const connection = yield* transport.open({ args: [], cwd, env: server.env() }).pipe(Scope.extend(scope))
      yield* connection.send(Message.userMessage("SAY hello from the transport"))
      // read everything (a reader that stops early closes the CLI's stdout); end input after the result
      const all = yield* connection.messages.pipe(
        Stream.tap((f) => (f.type === "result" ? connection.endInput : Effect.void)),
        Stream.runCollect,
        Effect.fork
      )
      const frames = (yield* Fiber.join(all)).pipe(
        Chunk.toReadonlyArray,
        (a) => a.slice(0, a.findIndex(Message.isResultMessage) + 1)
      )
      const types = [...frames].map((f) => (f.type === "system" ? `system/${f.subtype}` : f.type))
      expect(types).toContain("system/init")
      const init = [...frames].find(Message.isSystemInit)
      expect(init?.claude_code_version).toBe("2.1.332")
      const assistant = [...frames].filter(Message.isAssistantMessage)
      expect(assistant.map(Message.text).join("")).toBe("hello from the transport")
      const result = [...frames].at(-1)
      expect(result).toMatchObject({ type: "result", subtype: "success", is_error: false })
      expect([...frames].some((f) => f.type === "unknown" || f.type === "transport_error")).toBe(false)

      const pid = Option.getOrThrow(connection.pid)
      expect(yield* connection.exitStatus).toEqual(Option.some({ code: 0, signal: null }))
      yield* Scope.close(scope, Exit.void)
      expect(isAlive(pid)).toBe(false)
      fs.rmSync(cwd, { recursive: true, force: true })
    })).pipe(Effect.provide(TransportLive)))
})
