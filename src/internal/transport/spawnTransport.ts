/** @internal */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Readable } from "node:stream"
import { type CliNotFound, type InvalidOptions, SpawnFailed } from "../../AgentError.js"
import { CliResolver, type ResolvedCli } from "../../CliResolver.js"
import type { Connection, LaunchSpec, SpawnedProcess, SpawnFunction } from "../../Transport.js"
import { hasExited } from "./childPipes.js"
import { commandEnv } from "./env.js"
import { BASE_ARGS, connect } from "./processTransport.js"
import * as Reaper from "./reaper.js"
import * as TraceContext from "./traceContext.js"

const errorText = (error: unknown): string => error instanceof Error ? error.message : String(error)

/**
 * The command the spawn function is asked to run: the CLI this machine would run (a JavaScript one through its
 * runtime), else the path the caller gave, else `claude`: the spawn function may run it somewhere this machine cannot
 * see (a container, a VM, over SSH).
 */
const commandOf = (
  resolver: CliResolver["Type"],
  spec: LaunchSpec
): Effect.Effect<ResolvedCli, CliNotFound | InvalidOptions> => {
  const lookup = (name: string) => spec.env !== undefined && name in spec.env ? spec.env[name] : process.env[name]
  return resolver.resolve({
    explicit: spec.executable,
    env: { CLAUDE_CLI_PATH: lookup("CLAUDE_CLI_PATH"), PATH: lookup("PATH"), PATHEXT: lookup("PATHEXT") },
    executableArgs: spec.executableArgs,
    runtime: spec.runtime
  }).pipe(
    Effect.catchTag("CliNotFound", () => {
      const command = spec.executable ?? "claude"
      return Effect.succeed<ResolvedCli>({ command, prefixArgs: [], path: command })
    })
  )
}

/** What the spawn function returned, checked: a value without the streams and methods the contract names fails. */
const checkSpawned = (value: unknown): value is SpawnedProcess =>
  typeof value === "object" && value !== null && "stdin" in value && "stdout" in value &&
  value.stdout instanceof Readable && !value.stdout.readableObjectMode && "kill" in value &&
  typeof value.kill === "function" && "on" in value && typeof value.on === "function" && "off" in value &&
  typeof value.off === "function"

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  (typeof value === "object" || typeof value === "function") && value !== null && "then" in value &&
  typeof value.then === "function"

/**
 * The contract is synchronous. A Promise (an `async` spawn function) is refused, and it is settled here so that its
 * rejection is never unhandled, and a process it resolves to later is killed rather than left running.
 */
const refusePromise = (value: PromiseLike<unknown>): Effect.Effect<void> =>
  Effect.sync(() => {
    value.then(
      (late) => {
        if (typeof late !== "object" || late === null || !("kill" in late) || typeof late.kill !== "function") return
        try {
          late.kill("SIGKILL")
        } catch {
          // a process that cannot be killed is one that is gone already
        }
      },
      () => undefined
    )
  })

/** @internal */
export const make = (spawn: SpawnFunction) =>
  Effect.gen(function*() {
    const resolver = yield* CliResolver
    const scans = Reaper.makeScans()

    const open = (
      spec: LaunchSpec
    ): Effect.Effect<Connection, CliNotFound | SpawnFailed | InvalidOptions, Scope.Scope> =>
      Effect.gen(function*() {
        const cli = yield* commandOf(resolver, spec)
        const trace = yield* TraceContext.current
        const base = commandEnv({ parent: process.env, env: spec.env, mode: spec.envMode, keep: spec.keepEnv, trace })
        const env = base.extend ? { ...process.env, ...base.env } : base.env
        const args = [...cli.prefixArgs, ...BASE_ARGS, ...spec.args]
        // aborted when the SDK signals the process: after stdin EOF and the close grace, as the official SDK does
        const controller = new AbortController()
        yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
        const child = yield* Effect.try({
          try: () =>
            spawn({
              command: cli.command,
              args,
              ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
              env,
              signal: controller.signal
            }),
          catch: (cause) => new SpawnFailed({ command: cli.command, description: errorText(cause), cause })
        })
        if (isThenable(child)) {
          yield* refusePromise(child)
          return yield* new SpawnFailed({
            command: cli.command,
            description: "spawnClaudeCodeProcess returned a Promise: it must return the process synchronously " +
              "(a SpawnedProcess, as child_process.spawn does)"
          })
        }
        if (!checkSpawned(child)) {
          return yield* new SpawnFailed({
            command: cli.command,
            description:
              "spawnClaudeCodeProcess returned no SpawnedProcess (stdin, stdout as a byte stream, kill, on, off)"
          })
        }
        return yield* connect(
          {
            pid: "pid" in child && typeof child.pid === "number" ? child.pid : undefined,
            command: [cli.command, ...args],
            marker: undefined,
            stdin: child.stdin,
            stdout: child.stdout,
            // its stderr when it has one (a ChildProcess does)
            stderr: "stderr" in child && child.stderr instanceof Readable ? child.stderr : undefined,
            process: child,
            signal: (sig, gone) =>
              Effect.sync(() => {
                controller.abort()
                // `gone`: the connection saw its `exit` event (also for a process whose `exitCode` is not kept up to date)
                if (gone || hasExited(child)) return
                try {
                  child.kill(sig)
                } catch {
                  // a kill that throws is a process that is gone, or one this SDK cannot reach
                }
              })
          },
          spec,
          scans
        )
      })

    return { open }
  })
