// The process Transport on a Windows host (the platform injected, the fake CLI run on this system): a command line
// longer than Windows starts a program with fails with InvalidOptions before anything is spawned, the version probe
// included; one that fits starts as before.
import { expect, it } from "@effect/vitest"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AgentError, CliResolver, Transport } from "effect-claude-agent"
import { FakeCli } from "effect-claude-agent/testing"
import { HostPlatform } from "../src/internal/transport/cliPath.js"
import { makeWith } from "../src/internal/transport/cliResolver.js"

it.scoped(
  "Windows: a command line over 32,767 characters fails before the probe and the CLI; one that fits starts",
  () =>
    Effect.gen(function*() {
      let probes = 0
      const resolver = yield* makeWith(undefined, () => Effect.sync(() => (probes++, { version: "2.1.332" })))
      const transport = yield* Layer.build(Transport.layerProcess).pipe(
        Effect.provide(Layer.succeed(CliResolver.CliResolver, resolver)),
        Effect.provide(NodeCommandExecutor.layer),
        Effect.provide(NodeFileSystem.layer),
        Effect.provideService(HostPlatform, "win32"),
        Effect.map(Context.get(Transport.Transport))
      )
      const launch = (prompt: string) =>
        FakeCli.launch(FakeCli.echoScenario, { args: ["--append-system-prompt", prompt] })

      const error = yield* Effect.flip(transport.open(launch("x".repeat(40_000))))
      expect(error).toBeInstanceOf(AgentError.InvalidOptions)
      expect(error).toMatchObject({ option: "--append-system-prompt" })
      expect(error.message).toContain("--append-system-prompt-file")
      expect(probes).toBe(0)

      const connection = yield* transport.open(launch("short"))
      expect(Option.isSome(connection.pid)).toBe(true)
      expect(probes).toBe(1)
    }),
  30_000
)
