// The CliResolver against the pinned CLI: it finds the bundled binary, knows its version from the npm package and
// from the binary's own `--version`, and a session runs on what it found.
import { expect, it } from "@effect/vitest"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeAgent, CliResolver, Message, Transport } from "effect-claude-agent"
import { noClaudeLeft, realCli } from "./support/cli.js"

it.live(
  "the resolver finds the bundled CLI and its version; a query runs on the CLI it found",
  () =>
    noClaudeLeft(Effect.scoped(Effect.gen(function*() {
      const resolver = yield* CliResolver.make()
      // no PATH, no CLAUDE_CLI_PATH: only the bundled lookup can find it
      const cli = yield* resolver.resolve({ env: {} })
      expect(cli.path.split(path.sep)).toContain("@anthropic-ai")
      expect(cli.packageJson).toBeDefined()
      const manifest: { readonly version: string } = JSON.parse(fs.readFileSync(cli.packageJson!, "utf8"))
      expect(yield* resolver.version(cli)).toEqual({ version: manifest.version })
      yield* resolver.checkVersion(cli, Transport.SUPPORTED_CLI_VERSIONS)
      // the binary's own `--version` agrees (a new resolver that has no package.json to read)
      const probing = yield* CliResolver.make()
      expect(yield* probing.version({ command: cli.command, prefixArgs: cli.prefixArgs, path: cli.path })).toEqual({
        version: manifest.version
      })

      const { options } = yield* realCli()
      const TransportLive = Transport.layerProcess.pipe(
        Layer.provide(Layer.succeed(CliResolver.CliResolver, resolver)),
        Layer.provide(NodeCommandExecutor.layer),
        Layer.provide(NodeFileSystem.layer)
      )
      const messages = yield* ClaudeAgent.query("SAY found", options()).pipe(
        Stream.runCollect,
        Effect.provide(TransportLive)
      )
      const result = Chunk.toReadonlyArray(messages).find(Message.isResultMessage)
      expect(result).toMatchObject({ subtype: "success", result: "found" })
    }))),
  60_000
)
