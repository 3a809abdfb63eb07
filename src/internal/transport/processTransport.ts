/** @internal */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import type * as Sink from "effect/Sink"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type CliNotFound, InvalidOptions, ProcessExited, SpawnFailed, VersionIncompatible } from "../../AgentError.js"
import {
  type CliRequirement,
  CliResolver,
  type ResolvedCli,
  type Service as CliResolverService
} from "../../CliResolver.js"
import type * as Message from "../../Message.js"
import type { Connection, ExitStatus, FramePull, LaunchSpec } from "../../Transport.js"
import { removeStaleDirs } from "./argv.js"
import { commandLineTooLong, HostPlatform } from "./cliPath.js"
import { commandEnv } from "./env.js"
import * as Conn from "./connection.js"
import { refusal } from "../message/refusal.js"
import { DEFAULT_MAX_LINE_BYTES, makeLineFramer } from "./framing.js"
import * as HostWatchdog from "./hostWatchdog.js"
import { liveAwaitBounded, liveTimeout } from "./liveTimer.js"
import * as Reaper from "./reaper.js"
import * as TraceContext from "./traceContext.js"
import { makeStderrTail, type StderrTail } from "./stderrTail.js"
import { SUPPORTED_CLI_VERSIONS } from "./version.js"

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
// how long the exit waits for the rest of stderr: a pipe still open past it is held by a descendant (a machine so busy
// that the reader runs a second late still gets the tail)
const STDERR_DRAIN_MILLIS = 2000

const errorText = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const description = "description" in error ? error.description : undefined
    if (typeof description === "string" && description.length > 0) return description
    const message = "message" in error ? error.message : undefined
    if (typeof message === "string") return message
  }
  return String(error)
}

/**
 * Sends a signal to the process group (the CLI and the processes it started that stayed in its group), falling back
 * to the process while it has not been reaped (once it has, its pid may belong to another process).
 */
const signalGroup = (pid: number) => (sig: NodeJS.Signals, reaped: boolean) =>
  Effect.sync(() => {
    try {
      process.kill(-pid, sig)
    } catch {
      if (reaped) return
      try {
        process.kill(pid, sig)
      } catch {
        // already gone
      }
    }
  })

/** A working directory that does not exist is the caller's mistake, told before anything is spawned. */
const checkCwd = (fs: FileSystem.FileSystem, cwd: string): Effect.Effect<void, InvalidOptions> =>
  fs.stat(cwd).pipe(
    Effect.mapError((error) =>
      new InvalidOptions({
        option: "cwd",
        description: error._tag === "SystemError" && error.reason === "NotFound"
          ? `${cwd} does not exist`
          : `${cwd} cannot be used: ${error.message}`
      })
    ),
    Effect.flatMap((info) =>
      info.type === "Directory"
        ? Effect.void
        : Effect.fail(new InvalidOptions({ option: "cwd", description: `${cwd} is not a directory` }))
    )
  )

type Marker = Reaper.Marker

/**
 * A started CLI: its process, its command line, the marker its descendants inherit (when they are reaped), and, when
 * its version was not known at the spawn, the verdict on it (`--version` runs while the CLI starts).
 */
interface Launched {
  readonly proc: CommandExecutor.Process
  readonly command: ReadonlyArray<string>
  readonly marker: Marker | undefined
  readonly accepted: Effect.Effect<void, VersionIncompatible> | undefined
}

/**
 * Starts the CLI `spec` describes, in the scope: its environment (with the reaper's marker), the executable the
 * resolver finds, its arguments and working directory. Its version is checked while it starts: `accepted` must
 * succeed before anything is written to it.
 */
const launch = (
  executor: CommandExecutor.CommandExecutor,
  resolver: CliResolverService,
  spec: LaunchSpec,
  platform: NodeJS.Platform,
  scans: Reaper.Scans
): Effect.Effect<Launched, CliNotFound | SpawnFailed | VersionIncompatible | InvalidOptions, Scope.Scope> =>
  Effect.gen(function*() {
    const trace = yield* TraceContext.current
    const base = commandEnv({ parent: process.env, env: spec.env, mode: spec.envMode, keep: spec.keepEnv, trace })
    // every process the CLI starts inherits the marker, which finds it at close wherever it went
    const reaps = Reaper.supported && spec.reapToolProcesses !== false
    const name = reaps ? Reaper.makeMarker() : undefined
    const env = name === undefined ? base.env : { ...base.env, [name.name]: name.value }
    // the variables the lookup reads, as the caller's overlay on the parent's environment would give them (no
    // copy of the whole of `process.env`: docs/PERFORMANCE.md, P3)
    const lookup = (name: string) => spec.env !== undefined && name in spec.env ? spec.env[name] : process.env[name]
    const cli = yield* resolver.resolve({
      explicit: spec.executable,
      env: { CLAUDE_CLI_PATH: lookup("CLAUDE_CLI_PATH"), PATH: lookup("PATH"), PATHEXT: lookup("PATHEXT") },
      executableArgs: spec.executableArgs,
      runtime: spec.runtime
    })
    const args = [...cli.prefixArgs, ...BASE_ARGS, ...spec.args]
    // before anything is spawned, the version probe included
    const tooLong = commandLineTooLong(platform, cli.command, args)
    if (tooLong !== undefined) return yield* Effect.fail(tooLong)
    const verdict = yield* Effect.fork(Effect.zipRight(
      resolver.checkVersion(cli, spec.cliVersions ?? SUPPORTED_CLI_VERSIONS),
      Effect.forEach(spec.requirements ?? [], (requirement) => checkRequirement(resolver, cli, requirement), {
        discard: true
      })
    ))
    // a version known already (the npm package's, or found before) is judged before anything is spawned
    yield* Effect.yieldNow()
    const known = yield* Fiber.poll(verdict)
    if (Option.isSome(known)) yield* known.value
    let command = Command.make(cli.command, ...args).pipe(Command.env(env, { extendEnv: base.extend }))
    if (spec.cwd !== undefined) command = Command.workingDirectory(command, spec.cwd)

    // where the pid counter stands just before the spawn: the CLI's descendants have later pids
    const marker = name === undefined ? undefined : { ...name, origin: Reaper.origin(scans.pidMax) }
    const proc = yield* executor.start(command).pipe(
      Effect.mapError((error) => new SpawnFailed({ command: cli.command, description: errorText(error), cause: error }))
    )
    return {
      proc,
      command: [cli.command, ...args],
      marker,
      accepted: Option.isSome(known) ? undefined : Fiber.join(verdict)
    }
  })

/**
 * Fails when the CLI's version is known and outside what an option needs; an unknown version passes (the CLI then
 * reports what it cannot take, and `initialize` is checked for it).
 */
const checkRequirement = (
  resolver: CliResolverService,
  cli: ResolvedCli,
  requirement: CliRequirement
): Effect.Effect<void, VersionIncompatible> =>
  resolver.checkVersion(cli, requirement.versions).pipe(
    Effect.catchIf((error) => error.reason === "Unknown", () => Effect.void),
    Effect.mapError((error) =>
      new VersionIncompatible({
        found: error.found,
        supported: error.supported,
        reason: error.reason,
        ...(error.executable === undefined ? {} : { executable: error.executable }),
        description: `${requirement.option} needs it; use an up-to-date CLI (the bundled one qualifies) or ` +
          `${requirement.option.replace(/"initialize"/, "\"argv\"")}`
      })
    )
  )

/** How the CLI exited: its exit code, or the signal that ended it (as the executor's error names it). */
const exitStatusOf = (proc: CommandExecutor.Process): Effect.Effect<ExitStatus> =>
  proc.exitCode.pipe(
    Effect.map((code): ExitStatus => ({ code, signal: null })),
    Effect.catchAll((error) => {
      const match = /signal:?\s*(SIG[A-Z0-9]+)/.exec(errorText(error))
      return Effect.succeed<ExitStatus>({ code: null, signal: match?.[1] ?? "unknown" })
    })
  )

/**
 * Forks the reader of stderr into `stderr`: pulled chunk by chunk, as stdout is (docs/PERFORMANCE.md, P4); a stderr
 * that fails just ends.
 */
const drainStderr = (
  source: Stream.Stream<Uint8Array, unknown>,
  stderr: StderrTail
): Effect.Effect<Fiber.RuntimeFiber<void>, never, Scope.Scope> =>
  Stream.toPull(source).pipe(
    Effect.flatMap((pull) => {
      const loop: Effect.Effect<void> = Effect.matchEffect(pull, {
        onFailure: () => Effect.void,
        onSuccess: (chunk) => {
          for (const piece of chunk) stderr.push(piece)
          return loop
        }
      })
      return loop
    }),
    Effect.scoped,
    Effect.forkScoped
  )

/**
 * The connection's `pull`: frames are parsed by whoever pulls them, one stdout read at a time, so parsed objects never
 * wait inside stream machinery (see docs/PERFORMANCE.md, P1). Once stdout has ended and its last line is out, the
 * pull ends as `afterStdout` says (a failure for a CLI that exited with an error).
 */
const makeFramePull = (
  stdout: Stream.Stream<Uint8Array, unknown>,
  maxLineBytes: number,
  afterStdout: Effect.Effect<void, ProcessExited>
): Effect.Effect<FramePull, never, Scope.Scope> =>
  Effect.map(
    Stream.toPull(stdout.pipe(Stream.catchAll(() => Stream.empty))),
    (raw): FramePull => {
      const framer = makeLineFramer(maxLineBytes)
      const finish: FramePull = Effect.zipRight(
        Effect.mapError(afterStdout, Option.some),
        Effect.fail(Option.none())
      )
      let ended = false
      const onEnd = (): FramePull => {
        ended = true
        const out: Array<Message.Frame> = []
        framer.end(out)
        return out.length > 0 ? Effect.succeed(Chunk.unsafeFromArray(out)) : finish
      }
      const onChunk = (chunk: Chunk.Chunk<Uint8Array>): FramePull => {
        const out: Array<Message.Frame> = []
        for (const piece of chunk) framer.push(piece, out)
        return out.length > 0 ? Effect.succeed(Chunk.unsafeFromArray(out)) : next
      }
      const read: FramePull = Effect.matchEffect(raw, { onFailure: onEnd, onSuccess: onChunk })
      const next: FramePull = Effect.suspend(() => (ended ? finish : read))
      return next
    }
  )

/** A started CLI as `makeShutdown` sees it; `status` and `exitNumber` stay `undefined` until it has exited. */
interface Child {
  /** For logs and for the descendants snapshot (only with a marker). */
  readonly pid: number | undefined
  /** Sends a signal to the process and its group where it has one; `exited`: the process has exited already. */
  readonly signal: (sig: NodeJS.Signals, exited: boolean) => Effect.Effect<void>
  readonly marker: Marker | undefined
  readonly exited: Deferred.Deferred<ExitStatus>
  readonly status: () => ExitStatus | undefined
  /** Which exit of this Transport's CLIs it was (see `Reaper.Scans`). */
  readonly exitNumber: () => number | undefined
  readonly endInput: Effect.Effect<void>
}

/**
 * Ending the CLI. `terminate` sends SIGTERM to it and its tool processes, then SIGKILL once the kill grace has passed.
 * `close` is the scope's finalizer: it ends stdin, gives the CLI the close grace to exit by itself, terminates it if
 * it did not, then kills what it left behind, in its process group and (by marker) outside it.
 */
const makeShutdown = (
  child: Child,
  scans: Reaper.Scans,
  spec: LaunchSpec
): { readonly terminate: Effect.Effect<void>; readonly close: Effect.Effect<void> } => {
  const { exited, marker, pid, signal } = child
  const killGraceMillis = spec.killGraceMillis ?? DEFAULT_KILL_GRACE_MILLIS
  // the CLI's descendants when the SDK had to signal it (those that cleared their environment have no marker);
  // a CLI that exits by itself had the chance to end its own tools
  let tools: ReadonlyArray<Reaper.Proc> = []
  // whether the tool processes were sent SIGTERM a whole kill grace ago already
  let toolsHadGrace = false
  const snapshotTools = Effect.sync(() => {
    if (marker !== undefined && pid !== undefined && child.status() === undefined) {
      tools = Reaper.union(tools, Reaper.descendants(pid))
    }
  })

  const terminate = Effect.gen(function*() {
    yield* snapshotTools
    yield* signal("SIGTERM", false)
    // tool processes outside the CLI's group get their SIGTERM at the same time
    if (marker !== undefined) {
      yield* Effect.sync(() => {
        tools = Reaper.union(tools, Reaper.marked(marker))
        Reaper.send(tools, "SIGTERM")
      })
    }
    const terminated = yield* liveTimeout(Effect.interruptible(Deferred.await(exited)), killGraceMillis)
    if (Option.isNone(terminated)) {
      toolsHadGrace = true
      yield* Effect.logWarning("CLI ignored SIGTERM: SIGKILL").pipe(Effect.annotateLogs({ pid }))
      yield* signal("SIGKILL", false)
      yield* liveTimeout(Effect.interruptible(Deferred.await(exited)), REAP_TIMEOUT_MILLIS)
    }
  })

  const close = Effect.gen(function*() {
    yield* child.endInput
    if (child.status() === undefined) {
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
    yield* signal("SIGKILL", child.status() !== undefined)
    // and outside it (own process groups, re-parented to init)
    if (marker !== undefined) {
      const exitNumber = child.exitNumber()
      yield* Reaper.reap({
        marker,
        found: exitNumber === undefined ? Reaper.marked(marker) : scans.markedSince(marker, exitNumber),
        known: tools,
        graceMillis: toolsHadGrace ? 0 : killGraceMillis
      })
    }
  }).pipe(Effect.uninterruptible)

  return { terminate, close }
}

/**
 * A started process as the connection sees it, whoever started it: this SDK through the `CommandExecutor`, or the
 * caller's spawn function (`Transport.layerSpawn`). @internal
 */
export interface Started {
  readonly pid: number | undefined
  readonly command: ReadonlyArray<string>
  /** The reaper's marker in the process's environment, when its tool processes are reaped. */
  readonly marker: Marker | undefined
  readonly stdin: Sink.Sink<void, Uint8Array, never, unknown>
  readonly stdout: Stream.Stream<Uint8Array, unknown>
  readonly stderr: Stream.Stream<Uint8Array, unknown>
  /** Completes when the process exits, with how. */
  readonly exitStatus: Effect.Effect<ExitStatus>
  /** Sends a signal to the process (and its group, where it has one); `exited`: the process has exited already. */
  readonly signal: (sig: NodeJS.Signals, exited: boolean) => Effect.Effect<void>
}

/**
 * The connection to a started process, in the scope: the single stdin writer, the stderr tail, the exit watcher,
 * the frame reader, and the shutdown (closing the scope ends the process, see `makeShutdown`). @internal
 */
export const connect = (
  started: Started,
  spec: LaunchSpec,
  scans: Reaper.Scans
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { command, marker, pid } = started

    const stderr = makeStderrTail(spec.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES, spec.onStderr)
    const exited = yield* Deferred.make<ExitStatus>()
    let status: ExitStatus | undefined
    // which exit of this Transport's CLIs it was (see `Reaper.Scans`)
    let exitNumber: number | undefined
    let inputEnded = false
    const input = yield* Mailbox.make<Uint8Array>()
    const endInput = Effect.suspend(() => {
      inputEnded = true
      return Effect.asVoid(input.end)
    })

    const processExited = (s: ExitStatus) =>
      new ProcessExited({ code: s.code, signal: s.signal, stderrTail: stderr.tail() })

    // the one writer of stdin
    yield* Mailbox.toStream(input).pipe(
      Stream.run(started.stdin),
      Effect.ignore,
      Effect.forkScoped
    )
    const stderrFiber = yield* drainStderr(started.stderr, stderr)
    yield* started.exitStatus.pipe(
      Effect.tap((s) =>
        Effect.sync(() => {
          status = s
          if (marker !== undefined) exitNumber = scans.exited()
        })
      ),
      Effect.flatMap((s) => Deferred.succeed(exited, s)),
      Effect.forkScoped
    )

    const { close, terminate } = makeShutdown(
      {
        pid,
        signal: started.signal,
        marker,
        exited,
        status: () => status,
        exitNumber: () => exitNumber,
        endInput
      },
      scans,
      spec
    )
    // Registered after everything else in this scope, so it runs first when the scope closes.
    yield* Effect.addFinalizer(() => close)

    const afterStdout = Effect.gen(function*() {
      const s = yield* Deferred.await(exited)
      yield* liveAwaitBounded(stderrFiber, STDERR_DRAIN_MILLIS)
      if (s.code !== 0) return yield* Effect.fail(processExited(s))
    })

    const connection: Connection = Conn.make({
      pid: Option.fromNullable(pid),
      command,
      pull: makeFramePull(started.stdout, spec.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, afterStdout),
      unsafeSend: (message) => {
        const exited = status
        const refused = refusal(inputEnded, exited === undefined ? undefined : () => processExited(exited))
        if (refused !== undefined) return refused
        input.unsafeOffer(Buffer.from(JSON.stringify(message) + "\n", "utf8"))
        return undefined
      },
      endInput,
      awaitExit: Deferred.await(exited),
      exitStatus: Effect.sync(() => Option.fromNullable(status)),
      stderrTail: Effect.sync(() => stderr.tail()),
      kill: Effect.suspend(() => (status !== undefined ? Effect.void : terminate)).pipe(Effect.uninterruptible)
    })
    return connection
  })

/**
 * The connection with its reader started now, in the scope: a process that exits before anyone reads its stdout keeps
 * its output (Node discards the output of a child that has exited with nobody reading it). The first pull gets what
 * the started read returns.
 */
const readingNow = (connection: Connection): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const pull = yield* connection.pull
    const first = yield* Effect.forkScoped(pull)
    let started = true
    const primed: FramePull = Effect.suspend(() => {
      if (!started) return pull
      started = false
      return Fiber.join(first)
    })
    return Conn.make({ ...connection, pull: Effect.succeed(primed) })
  })

/** @internal */
export interface ProcessOptions {
  /** Whether a host watchdog ends this host's CLIs and their tool processes if the host dies. Defaults to `true`. */
  readonly hostWatchdog?: boolean | undefined
}

/** @internal */
export const make = (options: ProcessOptions = {}) =>
  Effect.gen(function*() {
    const executor = yield* CommandExecutor.CommandExecutor
    const resolver = yield* CliResolver
    const platform = yield* HostPlatform
    // private argument files left by hosts of this user that died without their finalizers: removed at the first open
    const removeStale = yield* Effect.once(Effect.asVoid(removeStaleDirs()))
    const scans = Reaper.makeScans()
    const fs = yield* FileSystem.FileSystem
    const watchdog = options.hostWatchdog === false ? HostWatchdog.disabled : yield* HostWatchdog.make

    const open = (
      spec: LaunchSpec
    ): Effect.Effect<Connection, CliNotFound | SpawnFailed | VersionIncompatible | InvalidOptions, Scope.Scope> =>
      Effect.gen(function*() {
        if (spec.cwd !== undefined) yield* checkCwd(fs, spec.cwd)
        const { accepted, command, marker, proc } = yield* launch(executor, resolver, spec, platform, scans)
        // unregistered after the connection's close has reaped the CLI and its tools (finalizers run in reverse)
        yield* watchdog.watch(proc.pid, marker?.name)
        // while the CLI starts
        yield* removeStale
        const connection = yield* connect(
          {
            pid: proc.pid,
            command,
            marker,
            stdin: proc.stdin,
            stdout: proc.stdout,
            stderr: proc.stderr,
            exitStatus: exitStatusOf(proc),
            signal: signalGroup(proc.pid)
          },
          spec,
          scans
        )
        if (accepted === undefined) return connection
        // its version is still being checked: its output is read meanwhile, nothing is written to it, and a CLI of a
        // version that cannot be used is killed at once (the connection's close, when the scope closes, reaps what
        // it may have started)
        const reading = yield* readingNow(connection)
        yield* Effect.tapError(accepted, () => signalGroup(proc.pid)("SIGKILL", false))
        return reading
      })

    return { open }
  })
