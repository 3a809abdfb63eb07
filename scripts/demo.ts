/**
 * npm run demo — one real agent session with the real Claude Code CLI: a custom tool (in-process MCP), a tool call
 * that asks for permission, hooks, and a readable transcript of what happened.
 *
 * With ANTHROPIC_API_KEY set it talks to the real API; without it, it runs offline against the bundled scripted
 * model server (the same one the tests use), which plays the model's part.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClaudeAgent, Hooks, Message, NodeClaudeAgent, Permissions, SdkMcp } from "effect-claude-agent"
import { ScriptedModelServer } from "effect-claude-agent/testing"

const color = (code: number) => (text: string) => (process.stdout.isTTY ? `\x1b[${code}m${text}\x1b[0m` : text)
const dim = color(2)
const bold = color(1)
const green = color(32)
const red = color(31)
const yellow = color(33)
const cyan = color(36)
const magenta = color(35)

const online = (process.env["ANTHROPIC_API_KEY"] ?? "") !== ""

const PROMPT = "Look up the forecast for Lisbon with the weather tool, then save it to forecast.txt with Bash."

/** What the scripted model does offline: call our MCP tool, then Bash, then answer. */
const script = (cwd: string): ReadonlyArray<ScriptedModelServer.Reply> => [
  ScriptedModelServer.reply(
    ScriptedModelServer.text("I'll look up the forecast first."),
    ScriptedModelServer.toolUse("mcp__weather__forecast", { city: "Lisbon" })
  ),
  ScriptedModelServer.reply(
    ScriptedModelServer.text("Now I'll save it."),
    ScriptedModelServer.toolUse("Bash", {
      command: `echo 'Lisbon: sunny, 24°C' > ${path.join(cwd, "forecast.txt")}`,
      description: "Save the forecast"
    })
  ),
  ScriptedModelServer.reply(ScriptedModelServer.text("Saved: Lisbon will be sunny, 24°C. The file is forecast.txt."))
]

const weather = SdkMcp.createSdkMcpServer({
  name: "weather",
  tools: [
    SdkMcp.tool(
      "forecast",
      "Tomorrow's forecast for a city",
      Schema.Struct({ city: Schema.String.annotations({ description: "City name" }) }),
      ({ city }) =>
        Effect.as(
          Console.log(`    ${magenta("⚙ tool")} weather.forecast(${JSON.stringify(city)}) runs in this process`),
          `${city}: sunny, 24°C`
        )
    )
  ]
})

/** Permission callback: every tool call that needs approval comes here (our MCP tool and Bash do). */
const permissions = Permissions.layer((request) =>
  Effect.gen(function*() {
    const allowed = request.toolName.startsWith("mcp__weather__") ||
      (request.toolName === "Bash" && String(request.input["command"]).includes("forecast.txt"))
    yield* Console.log(
      `    ${yellow("? permission")} ${request.toolName} ${
        dim(JSON.stringify(request.input["command"] ?? request.input))
      }` +
        ` → ${allowed ? green("allow") : red("deny")}`
    )
    return allowed ? Permissions.allow() : Permissions.deny("Only writing forecast.txt is allowed in this demo")
  })
)

/** Hooks: an audit trail of tool calls, and a guard against destructive commands. */
const hooks = Hooks.layer({
  PreToolUse: [{
    hooks: [
      (input) => Effect.as(Console.log(`    ${cyan("↪ hook")} PreToolUse ${input.tool_name}`), {}),
      Hooks.validate(
        (input) => !JSON.stringify(input.tool_input).includes("rm -rf"),
        "Destructive commands are blocked"
      )
    ]
  }],
  PostToolUse: [{
    hooks: [(input) => Effect.as(Console.log(`    ${cyan("↩ hook")} PostToolUse ${input.tool_name}`), {})]
  }]
})

const show = (message: Message.SdkMessage): Effect.Effect<void> => {
  switch (message.type) {
    case "system":
      return message.subtype === "init"
        ? Console.log(
          `${dim("system/init")} model ${message.model}, ${message.tools.length} tools, MCP: ${
            message.mcp_servers.map((s) => `${s.name} (${s.status})`).join(", ")
          }`
        )
        : Console.log(dim(`system/${message.subtype}`))
    case "assistant":
      return Effect.forEach(message.message.content, (block) => {
        if (block.type === "text") return Console.log(`${bold("assistant")} ${block.text}`)
        if (block.type === "tool_use") {
          return Console.log(`${bold("assistant")} calls ${cyan(block.name)} ${dim(JSON.stringify(block.input))}`)
        }
        return Effect.void
      }, { discard: true })
    case "user":
      return Effect.forEach(
        Message.toolResults(message),
        (r) =>
          Console.log(
            `${dim("tool result")} ${r.is_error === true ? red(Message.toolResultText(r)) : Message.toolResultText(r)}`
          ),
        {
          discard: true
        }
      )
    case "result":
      return Console.log(
        `${
          bold(
            message.subtype === "success" && !message.is_error
              ? green("result: success")
              : red(`result: ${message.subtype}`)
          )
        }` +
          ` — ${message.num_turns} turns, ${message.duration_ms} ms, ${Message.formatCost(message.total_cost_usd)}, ` +
          `${Message.totalTokens(message.usage)} tokens, denied: ${message.permission_denials.length}`
      )
    default:
      return Effect.void
  }
}

const program = Effect.gen(function*() {
  const cwd = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-demo-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  let env: Record<string, string> = {}
  if (online) {
    yield* Console.log(bold("Mode: online — talking to the Anthropic API (ANTHROPIC_API_KEY is set)."))
  } else {
    const server = yield* ScriptedModelServer.make({ replies: script(cwd) })
    env = server.env()
    yield* Console.log(bold("Mode: offline — the real claude CLI talks to a scripted model on " + server.url + "."))
    yield* Console.log(dim("(Set ANTHROPIC_API_KEY to run the same session against the real API.)"))
  }
  yield* Console.log(`${bold("prompt")} ${PROMPT}\n`)
  const mcp = yield* weather
  yield* ClaudeAgent.query(PROMPT, {
    cwd,
    env,
    mcpServers: { weather: mcp },
    maxTurns: 6
  }).pipe(
    Stream.runForEach(show),
    Effect.provide(Layer.mergeAll(permissions, hooks))
  )
  const saved = path.join(cwd, "forecast.txt")
  yield* Console.log(
    fs.existsSync(saved)
      ? `\n${green("✓")} forecast.txt: ${fs.readFileSync(saved, "utf8").trim()}`
      : `\n${yellow("!")} forecast.txt was not written`
  )
  yield* Console.log(dim("The CLI process has been reaped; nothing is left running."))
})

program.pipe(Effect.scoped, Effect.provide(NodeClaudeAgent.layer), NodeRuntime.runMain)
