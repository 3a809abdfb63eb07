// The Effect API installs no logger: its log lines go to the Logger the caller's program provides.
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"
import { vi } from "vitest"
import { ClaudeAgent, Permissions } from "effect-claude-agent"
import { ScriptedCli } from "effect-claude-agent/testing"

it.effect("a permission denied because the policy failed is logged with the caller's Logger, nothing on stdout", () =>
  Effect.gen(function*() {
    const stdout = vi.spyOn(process.stdout, "write")
    const lines: Array<string> = []
    const captured = Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
    const cli = ScriptedCli.layer((cli) =>
      Effect.gen(function*() {
        yield* cli.expectUser
        yield* cli.turn(JSON.stringify(yield* cli.canUseTool("Bash", { command: "x" })))
      })
    )
    yield* ClaudeAgent.query("go").pipe(
      Stream.runDrain,
      Effect.provide(cli),
      Effect.provide(Permissions.layer(() => Effect.fail("policy store unreachable"))),
      Effect.provide(Logger.replace(Logger.defaultLogger, captured))
    )
    expect(lines.filter((l) => l.includes("Permission for Bash denied"))).toHaveLength(1)
    expect(lines.find((l) => l.includes("Permission for Bash denied"))).toMatch(/^WARN /)
    expect(stdout.mock.calls.filter(([chunk]) => String(chunk).includes("Permission"))).toEqual([])
    stdout.mockRestore()
  }))
