/** @internal */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as cp from "node:child_process"
import type { Readable, Writable } from "node:stream"
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
import * as ChildPipes from "./childPipes.js"
import * as Conn from "./connection.js"
import { refusal } from "../message/refusal.js"
import { DEFAULT_MAX_LINE_BYTES, makeLineFramer } from "./framing.js"
import * as HostWatchdog from "./hostWatchdog.js"
import { liveWaitFor, makeWaiters, type Waiters } from "./liveTimer.js"
import * as Reaper from "./reaper.js"
import * as TraceContext from "./traceContext.js"
import { makeStderrTail } from "./stderrTail.js"
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
  readonly proc: Spawned
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
  resolver: CliResolverService,
  spec: LaunchSpec,
  platform: NodeJS.Platform,
  scans: Reaper.Scans
): Effect.Effect<Launched, CliNotFound | SpawnFailed | VersionIncompatible | InvalidOptions, Scope.Scope> =>
  Effect.gen(function*() {
    const trace = yield* TraceContext.current
    const base = commandEnv({ parent: process.env, env: spec.env, mode: spec.envMode, keep: spec.keepEnv, trace })
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
    const range = spec.cliVersions ?? SUPPORTED_CLI_VERSIONS
    const requirements = spec.requirements ?? []
    // a version known already (the npm package's, or found before) is judged before anything is spawned; an unknown
    // one is checked (by the `--version` probe) while the CLI starts
    const known = resolver.knownVerdict === undefined
      ? Option.none()
      : knownVerdict(resolver.knownVerdict, cli, range, requirements)
    let accepted: Effect.Effect<void, VersionIncompatible> | undefined
    if (Option.isSome(known)) yield* known.value
    else {
      const verdict = yield* Effect.fork(Effect.zipRight(
        resolver.checkVersion(cli, range),
        Effect.forEach(requirements, (requirement) => checkRequirement(resolver, cli, requirement), { discard: true })
      ))
      // a resolver that cannot tell a known verdict (one written before `knownVerdict`): a verdict ready after one
      // turn is judged before the spawn
      const ready = resolver.knownVerdict === undefined
        ? yield* Effect.zipRight(Effect.yieldNow(), Fiber.poll(verdict))
        : Option.none()
      if (Option.isSome(ready)) yield* ready.value
      else accepted = Fiber.join(verdict)
    }
    // every process the CLI starts inherits the marker, which finds it at close wherever it went; made just before
    // the spawn, with where the pid counter stands then: the CLI's descendants have later pids
    const marker = Reaper.supported && spec.reapToolProcesses !== false
      ? Reaper.makeMarker(Reaper.origin(scans.pidMax))
      : undefined
    const env = marker === undefined ? base.env : { ...base.env, [marker.name]: marker.value }
    const proc = yield* spawnChild(cli.command, args, base.extend ? { ...process.env, ...env } : env, spec.cwd)
    return {
      proc,
      command: [cli.command, ...args],
      marker,
      accepted
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
  Effect.catchAll(resolver.checkVersion(cli, requirement.versions), requirementVerdict(requirement))

/** The verdict on an option's requirement from the resolver's verdict on its range. */
const requirementVerdict = (requirement: CliRequirement) =>
(
  error: VersionIncompatible
): Either.Either<void, VersionIncompatible> =>
  error.reason === "Unknown" ? Either.void : Either.left(
    new VersionIncompatible({
      found: error.found,
      supported: error.supported,
      reason: error.reason,
      ...(error.executable === undefined ? {} : { executable: error.executable }),
      description: `${requirement.option} needs it; use an up-to-date CLI (the bundled one qualifies) or ` +
        `${requirement.option.replace(/"initialize"/, "\"argv\"")}`
    })
  )

/**
 * The verdict of the version check (`range`, then each requirement, the first failure winning) when the resolver
 * knows it without a probe; `None` when any part needs one.
 */
const knownVerdict = (
  known: NonNullable<CliResolverService["knownVerdict"]>,
  cli: ResolvedCli,
  range: string,
  requirements: ReadonlyArray<CliRequirement>
): Option.Option<Either.Either<void, VersionIncompatible>> => {
  const verdict = known(cli, range)
  if (Option.isNone(verdict) || Either.isLeft(verdict.value)) return verdict
  for (const requirement of requirements) {
    const met = known(cli, requirement.versions)
    if (Option.isNone(met)) return met
    if (Either.isLeft(met.value)) {
      const judged = requirementVerdict(requirement)(met.value.left)
      if (Either.isLeft(judged)) return Option.some(judged)
    }
  }
  return verdict
}

/** A process `spawnChild` started. */
interface Spawned {
  readonly child: cp.ChildProcess
  readonly pid: number
  readonly stdin: Writable
  readonly stdout: Readable
  readonly stderr: Readable | undefined
}

/**
 * Starts `command` in a process group of its own (POSIX), with piped stdio, in the scope: the process once Node has
 * started it (its `spawn` event), or `SpawnFailed` with the system's reason (its `error` event: a missing or
 * non-executable file, a working directory gone since it was checked). Interrupted before it started, or left
 * running when the scope closes (the connection's close normally ends it first), it is SIGKILLed with its group.
 */
const spawnChild = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined>,
  cwd: string | undefined
): Effect.Effect<Spawned, SpawnFailed, Scope.Scope> =>
  Effect.flatMap(Effect.scope, (scope) =>
    Effect.uninterruptible(Effect.tap(
      Effect.async<Spawned, SpawnFailed>((resume) => {
        const failed = (error: unknown) =>
          resume(Effect.fail(new SpawnFailed({ command, description: errorText(error), cause: error })))
        let proc: cp.ChildProcess
        try {
          proc = cp.spawn(command, args, {
            stdio: "pipe",
            env,
            ...(cwd === undefined ? {} : { cwd }),
            detached: process.platform !== "win32"
          })
        } catch (error) {
          failed(error)
          return
        }
        // no event of the process or its pipes is ever unhandled (the connection listens from its start on)
        proc.on("error", noop)
        for (const pipe of [proc.stdin, proc.stdout, proc.stderr]) pipe?.on("error", noop)
        const onError = (error: Error) => {
          proc.off("spawn", onSpawn)
          failed(error)
        }
        const onSpawn = () => {
          proc.off("error", onError)
          const { pid, stderr, stdin, stdout } = proc
          if (pid === undefined || stdin === null || stdout === null) {
            proc.kill("SIGKILL")
            failed(new Error("the process started without a pid or pipes"))
          } else resume(Effect.succeed({ child: proc, pid, stdin, stdout, stderr: stderr ?? undefined }))
        }
        proc.once("error", onError)
        proc.once("spawn", onSpawn)
        return Effect.sync(() => {
          proc.kill("SIGKILL")
        })
      }),
      ({ child, pid }) =>
        Scope.addFinalizer(
          scope,
          Effect.suspend(() => ChildPipes.hasExited(child) ? Effect.void : signalGroup(pid)("SIGKILL", false))
        )
    )))

const noop = () => {}

/**
 * The connection's `pull`: frames are parsed by whoever pulls them, one stdout read at a time, so parsed objects never
 * wait inside stream machinery (see docs/PERFORMANCE.md, P1). Once stdout has ended and its last line is out, the
 * pull ends as `afterStdout` says (a failure for a CLI that exited with an error).
 */
const makeFramePull = (
  read: Effect.Effect<Uint8Array | undefined>,
  maxLineBytes: number,
  afterStdout: Effect.Effect<void, ProcessExited>
): FramePull => {
  const framer = makeLineFramer(maxLineBytes)
  const finish: FramePull = Effect.zipRight(
    Effect.mapError(afterStdout, Option.some),
    Effect.fail(Option.none())
  )
  let ended = false
  const onChunk = (chunk: Uint8Array | undefined): FramePull => {
    const out: Array<Message.Frame> = []
    if (chunk === undefined) {
      ended = true
      framer.end(out)
      return out.length > 0 ? Effect.succeed(Chunk.unsafeFromArray(out)) : finish
    }
    framer.push(chunk, out)
    return out.length > 0 ? Effect.succeed(Chunk.unsafeFromArray(out)) : next
  }
  const next: FramePull = Effect.suspend(() => (ended ? finish : Effect.flatMap(read, onChunk)))
  return next
}

/** A started CLI as `makeShutdown` sees it; `status` and `exitNumber` stay `undefined` until it has exited. */
interface Child {
  /** For logs and for the descendants snapshot (only with a marker). */
  readonly pid: number | undefined
  /** Sends a signal to the process and its group where it has one; `exited`: the process has exited already. */
  readonly signal: (sig: NodeJS.Signals, exited: boolean) => Effect.Effect<void>
  readonly marker: Marker | undefined
  /** Fired when the process has exited (`status` then holds), for the bounded waits of {@link liveWaitFor}. */
  readonly exitWaiters: Waiters
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
  const { marker, pid, signal } = child
  // bounded on the wall clock, with no fiber of its own: whether the CLI exited within `millis`
  const exitWithin = (millis: number) => liveWaitFor(() => child.status() !== undefined, child.exitWaiters, millis)
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
    yield* signal("SIGTERM", child.status() !== undefined)
    // tool processes outside the CLI's group get their SIGTERM at the same time
    if (marker !== undefined) {
      yield* Effect.sync(() => {
        tools = Reaper.union(tools, Reaper.marked(marker))
        Reaper.send(tools, "SIGTERM")
      })
    }
    if (!(yield* exitWithin(killGraceMillis))) {
      toolsHadGrace = true
      yield* Effect.logWarning("CLI ignored SIGTERM: SIGKILL").pipe(Effect.annotateLogs({ pid }))
      yield* signal("SIGKILL", child.status() !== undefined)
      yield* exitWithin(REAP_TIMEOUT_MILLIS)
    }
  })

  const close = Effect.gen(function*() {
    yield* child.endInput
    if (child.status() === undefined) {
      if (!(yield* exitWithin(spec.closeGraceMillis ?? DEFAULT_CLOSE_GRACE_MILLIS))) {
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
 * A started process as the connection sees it, whoever started it: this SDK (`spawnChild`), or the
 * caller's spawn function (`Transport.layerSpawn`). @internal
 */
export interface Started {
  readonly pid: number | undefined
  readonly command: ReadonlyArray<string>
  /** The reaper's marker in the process's environment, when its tool processes are reaped. */
  readonly marker: Marker | undefined
  readonly stdin: Writable
  readonly stdout: Readable
  /** Its stderr, when it has one. */
  readonly stderr: Readable | undefined
  /** Its exit, and its errors (written to the stderr tail after its stderr). */
  readonly process: ChildPipes.Exiting
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
    const stdin = ChildPipes.writer(started.stdin)
    const endInput = Effect.sync(() => {
      inputEnded = true
      stdin.end()
    })

    const processExited = (s: ExitStatus) =>
      new ProcessExited({ code: s.code, signal: s.signal, stderrTail: stderr.tail() })

    // the process's own errors (a spawn function's process that failed to start, a failed kill) follow its stderr
    // in the tail, once it has exited and its stderr has ended
    const errors: Array<Error> = []
    let stderrEnded = false
    const flushErrors = () => {
      if (!stderrEnded || status === undefined) return
      for (const error of errors.splice(0)) stderr.push(Buffer.from(`spawn error: ${error.message}\n`))
    }
    const stdout = ChildPipes.reader(started.stdout)
    // after the close (finalizers run in reverse): what was not read is dropped, and the pipes' descriptors closed
    const scope = yield* Effect.scope
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        started.stdin.destroy()
        started.stdout.destroy()
        started.stderr?.destroy()
      })
    )
    const stderrWaiters = makeWaiters()
    yield* ChildPipes.drain(started.stderr, (chunk) => stderr.push(chunk), () => {
      stderrEnded = true
      flushErrors()
      stderrWaiters.fire()
    })
    const exitWaiters = makeWaiters()
    ChildPipes.watchExit(started.process, (error) => errors.push(error), (s) => {
      status = s
      if (marker !== undefined) exitNumber = scans.exited()
      flushErrors()
      Deferred.unsafeDone(exited, Exit.succeed(s))
      exitWaiters.fire()
    })

    const { close, terminate } = makeShutdown(
      {
        pid,
        signal: started.signal,
        marker,
        exitWaiters,
        status: () => status,
        exitNumber: () => exitNumber,
        endInput
      },
      scans,
      spec
    )
    // Registered after everything else in this scope, so it runs first when the scope closes.
    yield* Scope.addFinalizer(scope, Effect.uninterruptible(close))

    const afterStdout = Effect.gen(function*() {
      const s = yield* Deferred.await(exited)
      yield* liveWaitFor(() => stderrEnded, stderrWaiters, STDERR_DRAIN_MILLIS)
      if (s.code !== 0) return yield* Effect.fail(processExited(s))
    })

    const connection: Connection = Conn.make({
      pid: Option.fromNullable(pid),
      command,
      pull: Effect.succeed(makeFramePull(stdout, spec.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, afterStdout)),
      unsafeSend: (message) => {
        const exited = status
        const refused = refusal(inputEnded, exited === undefined ? undefined : () => processExited(exited))
        if (refused !== undefined) return refused
        stdin.write(Buffer.from(JSON.stringify(message) + "\n", "utf8"))
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
        const { accepted, command, marker, proc } = yield* launch(resolver, spec, platform, scans)
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
            process: proc.child,
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
