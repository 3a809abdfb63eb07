/** @internal */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type CliNotFound, InputClosed, ProcessExited, SpawnFailed, type VersionIncompatible } from "../AgentError.js"
import type * as Message from "../Message.js"
import type { Connection, ExitStatus, LaunchSpec } from "../Transport.js"
import { resolveCli } from "./cliPath.js"
import { buildEnv } from "./env.js"
import { DEFAULT_MAX_LINE_BYTES, makeLineFramer } from "./framing.js"
import { liveTimeout } from "./liveTimer.js"
import { makeStderrTail } from "./stderrTail.js"
import { checkVersion, SUPPORTED_CLI_VERSIONS } from "./version.js"

/** @internal */
export const BASE_ARGS: ReadonlyArray<string> = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json"
]

/** @internal */
export const DEFAULT_CLOSE_GRACE_MILLIS = 250
/** @internal */
export const DEFAULT_KILL_GRACE_MILLIS = 2000
/** @internal */
export const DEFAULT_STDERR_TAIL_BYTES = 64 * 1024
const REAP_TIMEOUT_MILLIS = 5000
const STDERR_DRAIN_MILLIS = 1000

const errorText = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const description = "description" in error ? error.description : undefined
    if (typeof description === "string" && description.length > 0) return description
    const message = "message" in error ? error.message : undefined
    if (typeof message === "string") return message
  }
  return String(error)
}

/** Sends a signal to the process group (the CLI and everything it started), falling back to the process. */
const signal = (pid: number, sig: NodeJS.Signals) =>
  Effect.sync(() => {
    try {
      process.kill(-pid, sig)
    } catch {
      try {
        process.kill(pid, sig)
      } catch {
        // already gone
      }
    }
  })

/** @internal */
export const make = Effect.gen(function*() {
  const executor = yield* CommandExecutor.CommandExecutor

  const open = (
    spec: LaunchSpec
  ): Effect.Effect<Connection, CliNotFound | SpawnFailed | VersionIncompatible, Scope.Scope> =>
    Effect.gen(function*() {
      const env = buildEnv({ parent: process.env, env: spec.env, mode: spec.envMode })
      const cli = yield* resolveCli({
        explicit: spec.executable,
        env: { ...process.env, ...spec.env },
        executableArgs: spec.executableArgs
      })
      yield* checkVersion(cli, spec.cliVersions ?? SUPPORTED_CLI_VERSIONS)
      const args = [...cli.prefixArgs, ...BASE_ARGS, ...spec.args]
      let command = Command.make(cli.command, ...args).pipe(Command.env(env, { extendEnv: false }))
      if (spec.cwd !== undefined) command = Command.workingDirectory(command, spec.cwd)

      const proc = yield* executor.start(command).pipe(
        Effect.mapError((error) => new SpawnFailed({ command: cli.command, reason: errorText(error), cause: error }))
      )
      const pid = proc.pid

      const stderr = makeStderrTail(spec.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES, spec.onStderr)
      const exited = yield* Deferred.make<ExitStatus>()
      let status: ExitStatus | undefined
      let inputEnded = false
      const input = yield* Mailbox.make<Uint8Array>()

      const processExited = (s: ExitStatus) =>
        new ProcessExited({ code: s.code, signal: s.signal, stderrTail: stderr.tail() })

      yield* Mailbox.toStream(input).pipe(
        Stream.run(proc.stdin),
        Effect.ignore,
        Effect.forkScoped
      )
      const stderrFiber = yield* proc.stderr.pipe(
        Stream.runForEach((chunk) => Effect.sync(() => stderr.push(chunk))),
        Effect.ignore,
        Effect.forkScoped
      )
      yield* proc.exitCode.pipe(
        Effect.map((code): ExitStatus => ({ code, signal: null })),
        Effect.catchAll((error) => {
          const match = /signal:?\s*(SIG[A-Z0-9]+)/.exec(errorText(error))
          return Effect.succeed<ExitStatus>({ code: null, signal: match?.[1] ?? "unknown" })
        }),
        Effect.tap((s) =>
          Effect.sync(() => {
            status = s
          })
        ),
        Effect.flatMap((s) => Deferred.succeed(exited, s)),
        Effect.forkScoped
      )

      const terminate = Effect.gen(function*() {
        yield* signal(pid, "SIGTERM")
        const terminated = yield* liveTimeout(
          Effect.interruptible(Deferred.await(exited)),
          spec.killGraceMillis ?? DEFAULT_KILL_GRACE_MILLIS
        )
        if (Option.isNone(terminated)) {
          yield* Effect.logWarning("CLI ignored SIGTERM: SIGKILL").pipe(Effect.annotateLogs({ pid }))
          yield* signal(pid, "SIGKILL")
          yield* liveTimeout(Effect.interruptible(Deferred.await(exited)), REAP_TIMEOUT_MILLIS)
        }
      })

      // Registered after everything else in this scope, so it runs first when the scope closes.
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          inputEnded = true
          yield* input.end
          if (status === undefined) {
            const graceful = yield* liveTimeout(
              Effect.interruptible(Deferred.await(exited)),
              spec.closeGraceMillis ?? DEFAULT_CLOSE_GRACE_MILLIS
            )
            if (Option.isNone(graceful)) {
              yield* Effect.logDebug("CLI still running after stdin closed: SIGTERM").pipe(Effect.annotateLogs({ pid }))
              yield* terminate
            }
          }
          // whatever the CLI left behind in its process group (tool subprocesses)
          yield* signal(pid, "SIGKILL")
        }).pipe(Effect.uninterruptible)
      )

      const afterStdout = Effect.gen(function*() {
        const s = yield* Deferred.await(exited)
        yield* liveTimeout(Fiber.await(stderrFiber), STDERR_DRAIN_MILLIS)
        if (s.code !== 0) return yield* Effect.fail(processExited(s))
      })

      const messages: Stream.Stream<Message.Frame, ProcessExited> = Stream.suspend(() => {
        const framer = makeLineFramer(spec.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES)
        return proc.stdout.pipe(
          Stream.catchAll(() => Stream.empty),
          Stream.mapChunks((chunks) => {
            const out: Array<Message.Frame> = []
            for (const chunk of chunks) framer.push(chunk, out)
            return Chunk.unsafeFromArray(out)
          }),
          Stream.concat(Stream.suspend(() => {
            const out: Array<Message.Frame> = []
            framer.end(out)
            return Stream.fromIterable(out)
          })),
          Stream.concat(Stream.drain(Stream.fromEffect(afterStdout)))
        )
      })

      const connection: Connection = {
        pid: Option.some(pid),
        command: [cli.command, ...args],
        messages,
        send: (message) =>
          Effect.suspend((): Effect.Effect<void, ProcessExited | InputClosed> => {
            if (status !== undefined) return Effect.fail(processExited(status))
            if (inputEnded) return Effect.fail(new InputClosed({ reason: "endInput" }))
            input.unsafeOffer(Buffer.from(JSON.stringify(message) + "\n", "utf8"))
            return Effect.void
          }),
        endInput: Effect.suspend(() => {
          inputEnded = true
          return Effect.asVoid(input.end)
        }),
        awaitExit: Deferred.await(exited),
        exitStatus: Effect.sync(() => Option.fromNullable(status)),
        stderrTail: Effect.sync(() => stderr.tail()),
        kill: Effect.suspend(() => (status !== undefined ? Effect.void : terminate)).pipe(Effect.uninterruptible)
      }
      return connection
    })

  return { open }
})
