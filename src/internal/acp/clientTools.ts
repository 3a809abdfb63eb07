/**
 * The client's file system and terminals as Claude Code's tools. When the client offers `fs.readTextFile` and
 * `fs.writeTextFile`, `Read`, `Write` and `Edit` go through it (so the model reads the editor's unsaved buffers and
 * its edits land in the editor, which can review and undo them); when it offers `terminal`, `Bash` runs in a
 * terminal of the client (shown live in the tool call). They are served as the in-process MCP server `acp`
 * (`mcp__acp__Read`, …) in place of the built-in tools, which the session disallows; the permission policy judges
 * them under the built-in names, so the same rules apply.
 *
 * A command's terminal is killed and released when the call ends for any reason: done, timed out, cancelled
 * (`session/cancel` interrupts the call), or the client gone.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as path from "node:path"
import type * as AgentOptions from "../../AgentOptions.js"
import * as Permissions from "../../Permissions.js"
import * as SdkMcp from "../../SdkMcp.js"
import { type Connection, decodeParams, type RpcError } from "./jsonRpc.js"
import {
  CreateTerminalResponse,
  ReadTextFileResponse,
  type SessionUpdate,
  TerminalOutputResponse,
  WaitForTerminalExitResponse
} from "./schema.js"

/** What the client offers, from its `initialize`. @internal */
export interface ClientOffers {
  readonly fs: boolean
  readonly terminal: boolean
}

/** What the client offers: file reads and writes only both together (an edit needs both). @internal */
export const offersOf = (capabilities: unknown): ClientOffers => {
  const record = (u: unknown): Readonly<Record<string, unknown>> | undefined =>
    typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Readonly<Record<string, unknown>>) : undefined
  const caps = record(capabilities)
  const fs = record(caps?.["fs"])
  return {
    fs: fs?.["readTextFile"] === true && fs["writeTextFile"] === true,
    terminal: caps?.["terminal"] === true
  }
}

/** How long a call's clean-up (its terminal killed and released) may take. @internal */
export const CLEAN_UP_BOUND: Duration.DurationInput = "5 seconds"

/** The name of the MCP server the client's tools are served as. @internal */
export const SERVER_NAME = "acp"

/** @internal */
export interface ClientToolsContext {
  readonly connection: Connection
  readonly sessionId: () => string
  readonly cwd: string
  readonly notify: (update: SessionUpdate) => Effect.Effect<void>
  /** Records the terminal of a tool call (its updates show it). */
  readonly terminalOf: (toolUseId: string, terminalId: string) => void
  /**
   * The deny rules, judged again when a call runs: Claude Code does not ask about any call in `bypassPermissions`
   * mode, and its own deny settings name the built-in tools, not these.
   */
  readonly deny: ReadonlyArray<string>
}

/** The context of the tools themselves: the client's, and the count of calls in flight. */
interface ToolsContext extends ClientToolsContext {
  /** Runs a call, counted as in flight until it ended, its clean-up (a terminal killed and released) included. */
  readonly track: <A>(call: Effect.Effect<A>) => Effect.Effect<A>
}

/** The deny rule a call of the built-in tool `toolName` matches, if any. */
const denied = (ctx: ClientToolsContext, toolName: string, input: Readonly<Record<string, unknown>>) =>
  Effect.findFirst(ctx.deny, (rule) => Permissions.matches(rule, { toolName, input, cwd: ctx.cwd }))

/** Runs `run` unless a deny rule matches the call (then an error result naming the rule). */
const guarded = (
  ctx: ToolsContext,
  toolName: string,
  input: Readonly<Record<string, unknown>>,
  run: Effect.Effect<SdkMcp.ToolResult>
): Effect.Effect<SdkMcp.ToolResult> =>
  ctx.track(Effect.flatMap(
    denied(ctx, toolName, input),
    (rule) =>
      rule._tag === "Some"
        ? Effect.succeed(SdkMcp.errorResult(`Denied by permission rule ${rule.value} (judged as the call ran)`))
        : run
  ))

/** The options that serve the client's tools, or none when the client offers neither. @internal */
export interface ClientTools {
  readonly server: AgentOptions.McpServerConfig
  /** The built-in tools they replace. */
  readonly replaced: ReadonlyArray<string>
  /**
   * Succeeds once no call of these tools is in flight (at once when none is): a cancelled prompt is answered after
   * the calls it interrupted have cleaned up, as ACP asks (every operation aborted before the `cancelled` answer).
   */
  readonly settled: Effect.Effect<void>
}

const absolute = (cwd: string, p: string) => (path.isAbsolute(p) ? path.normalize(p) : path.resolve(cwd, p))

const failure = (what: string) => (error: RpcError | { readonly message: string }) =>
  Effect.succeed(SdkMcp.errorResult(`${what}: ${error.message}`))

/** The longest line of a file shown to the model; longer lines are cut. */
const MAX_LINE = 2000
/** The lines of a file read when the model gives no limit. */
const DEFAULT_LIMIT = 2000

const numbered = (content: string, first: number): string =>
  content.split("\n").map((line, i) =>
    `${String(first + i).padStart(6)}\t${line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line}`
  ).join("\n")

const ReadInput = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path of the file to read" }),
  offset: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({ description: "The line to start from (1-based)" })
  ),
  limit: Schema.optional(Schema.Int.pipe(Schema.positive()).annotations({ description: "How many lines to read" }))
})

const WriteInput = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path of the file to write" }),
  content: Schema.String.annotations({ description: "The whole new content of the file" })
})

const EditInput = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path of the file to edit" }),
  old_string: Schema.String.annotations({ description: "The exact text to replace" }),
  new_string: Schema.String.annotations({ description: "The text to replace it with" }),
  replace_all: Schema.optional(
    Schema.Boolean.annotations({ description: "Replace every occurrence (default: exactly one must exist)" })
  )
})

const BashInput = Schema.Struct({
  command: Schema.String.annotations({ description: "The command to run (bash)" }),
  description: Schema.optional(Schema.String.annotations({ description: "What the command does, in a few words" })),
  timeout: Schema.optional(
    Schema.Int.pipe(Schema.between(1, 600_000)).annotations({ description: "Milliseconds (default 120000)" })
  )
})

/** The longest output of a command kept for the model, in bytes. */
const OUTPUT_LIMIT = 256 * 1024
const DEFAULT_COMMAND_TIMEOUT = 120_000

const fsTools = (ctx: ToolsContext) => {
  const read = (file: string, line?: number, limit?: number) =>
    ctx.connection.request("fs/read_text_file", {
      sessionId: ctx.sessionId(),
      path: file,
      ...(line === undefined ? {} : { line }),
      ...(limit === undefined ? {} : { limit })
    }).pipe(Effect.flatMap(decodeParams(ReadTextFileResponse)), Effect.map((r) => r.content))
  const write = (file: string, content: string) =>
    ctx.connection.request("fs/write_text_file", { sessionId: ctx.sessionId(), path: file, content })

  return [
    SdkMcp.tool(
      "Read",
      "Reads a text file as the editor has it (unsaved changes included), with line numbers. Use offset and limit " +
        "for a part of a long file.",
      ReadInput,
      (input) => {
        const file = absolute(ctx.cwd, input.file_path)
        const first = input.offset ?? 1
        return guarded(
          ctx,
          "Read",
          input,
          read(file, first, input.limit ?? DEFAULT_LIMIT).pipe(
            Effect.map((content) => (content.length === 0 ? "(the file is empty)" : numbered(content, first))),
            Effect.catchAll(failure(`Could not read ${file}`))
          )
        )
      }
    ),
    SdkMcp.tool(
      "Write",
      "Writes a whole file through the editor (creating it, or replacing its content). Prefer Edit for changes to " +
        "an existing file.",
      WriteInput,
      (input) => {
        const file = absolute(ctx.cwd, input.file_path)
        return guarded(
          ctx,
          "Write",
          input,
          write(file, input.content).pipe(
            Effect.as(`Wrote ${file}`),
            Effect.catchAll(failure(`Could not write ${file}`))
          )
        )
      }
    ),
    SdkMcp.tool(
      "Edit",
      "Replaces text in a file through the editor: old_string must occur exactly once (or set replace_all). Read the " +
        "file first.",
      EditInput,
      (input) => {
        const file = absolute(ctx.cwd, input.file_path)
        return guarded(
          ctx,
          "Edit",
          input,
          Effect.gen(function*() {
            const content = yield* read(file)
            if (input.old_string.length === 0) return SdkMcp.errorResult("old_string is empty")
            const count = content.split(input.old_string).length - 1
            if (count === 0) return SdkMcp.errorResult(`old_string was not found in ${file}`)
            if (count > 1 && input.replace_all !== true) {
              return SdkMcp.errorResult(
                `old_string occurs ${count} times in ${file}: give more context, or set replace_all`
              )
            }
            const updated = input.replace_all === true
              ? content.split(input.old_string).join(input.new_string)
              : content.replace(input.old_string, () => input.new_string)
            yield* write(file, updated)
            return `Edited ${file}`
          }).pipe(Effect.catchAll(failure(`Could not edit ${file}`)))
        )
      }
    )
  ]
}

const bashTool = (ctx: ToolsContext) =>
  SdkMcp.tool(
    "Bash",
    "Runs a bash command in a terminal of the editor (the user sees it live) and returns its output and exit code. " +
      "The working directory is the project's.",
    BashInput,
    (input, extra) => {
      const request = (method: string, params: Readonly<Record<string, unknown>>) =>
        ctx.connection.request(method, { sessionId: ctx.sessionId(), ...params })
      const timeout = Duration.millis(input.timeout ?? DEFAULT_COMMAND_TIMEOUT)
      const terminal = Effect.acquireRelease(
        request("terminal/create", {
          command: "bash",
          args: ["-c", input.command],
          cwd: ctx.cwd,
          outputByteLimit: OUTPUT_LIMIT
        }).pipe(Effect.flatMap(decodeParams(CreateTerminalResponse)), Effect.map((r) => r.terminalId)),
        // the command never outlives its call: killed (a no-op once it exited) and released, bounded
        (terminalId) =>
          request("terminal/kill", { terminalId }).pipe(
            Effect.ignore,
            Effect.zipRight(Effect.ignore(request("terminal/release", { terminalId }))),
            Effect.timeout(CLEAN_UP_BOUND),
            Effect.ignore
          )
      )
      return guarded(
        ctx,
        "Bash",
        input,
        Effect.scoped(Effect.gen(function*() {
          const terminalId = yield* terminal
          if (extra.toolUseId !== undefined) {
            ctx.terminalOf(extra.toolUseId, terminalId)
            yield* ctx.notify({
              sessionUpdate: "tool_call_update",
              toolCallId: extra.toolUseId,
              status: "in_progress",
              content: [{ type: "terminal", terminalId }]
            })
          }
          const exit = yield* request("terminal/wait_for_exit", { terminalId }).pipe(
            Effect.flatMap(decodeParams(WaitForTerminalExitResponse)),
            Effect.timeout(timeout),
            Effect.option
          )
          if (exit._tag === "None") yield* Effect.ignore(request("terminal/kill", { terminalId }))
          const output = yield* request("terminal/output", { terminalId }).pipe(
            Effect.flatMap(decodeParams(TerminalOutputResponse))
          )
          const status = exit._tag === "None"
            ? `\n(timed out after ${Duration.format(timeout)}; killed)`
            : typeof exit.value.signal === "string"
            ? `\n(killed by ${exit.value.signal})`
            : typeof exit.value.exitCode === "number" && exit.value.exitCode !== 0
            ? `\nExit code ${exit.value.exitCode}`
            : ""
          const text = `${output.truncated ? "(output truncated)\n" : ""}${output.output}${status}`
          // a command that failed, was killed or timed out is an error result, as the built-in Bash reports it
          return status.length > 0 ? SdkMcp.errorResult(text) : text
        })).pipe(Effect.catchAll(failure("The command could not run in the editor's terminal")))
      )
    },
    { timeout: Duration.sum(Duration.millis(600_000), Duration.seconds(30)) }
  )

/** The tools the client's capabilities make possible; none when it offers neither. @internal */
export const makeClientTools = (
  ctx: ClientToolsContext,
  offers: ClientOffers
): Effect.Effect<ClientTools | undefined> => {
  if (!offers.fs && !offers.terminal) return Effect.succeed(undefined)
  return Effect.gen(function*() {
    const inFlight = yield* SubscriptionRef.make(0)
    const tracked: ToolsContext = {
      ...ctx,
      track: (call) =>
        Effect.acquireUseRelease(
          SubscriptionRef.update(inFlight, (n) => n + 1),
          () => call,
          () => SubscriptionRef.update(inFlight, (n) => n - 1)
        )
    }
    const tools = [...(offers.fs ? fsTools(tracked) : []), ...(offers.terminal ? [bashTool(tracked)] : [])]
    const server = yield* SdkMcp.createSdkMcpServer({
      name: SERVER_NAME,
      tools,
      alwaysLoad: true,
      toolTimeout: Duration.minutes(2)
    }).pipe(Effect.orDie)
    return {
      server,
      replaced: [...(offers.fs ? ["Read", "Write", "Edit", "MultiEdit"] : []), ...(offers.terminal ? ["Bash"] : [])],
      settled: inFlight.changes.pipe(Stream.takeUntil((n) => n === 0), Stream.runDrain)
    }
  })
}
