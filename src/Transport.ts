/**
 * The Transport owns a Claude Code process: it starts the CLI, yields everything it writes on stdout as decoded
 * {@link Message.Frame}s, writes our frames to its stdin through a single writer, keeps a bounded tail of its stderr,
 * and always cleans up: closing the scope ends stdin, waits a short grace, sends SIGTERM to the process group, then
 * SIGKILL, and reaps it, and ends the tool processes the CLI started outside its group (see
 * {@link LaunchSpec.reapToolProcesses}).
 *
 * `Transport` is a factory (one CLI process per session). Provide {@link layerProcess} (real processes, started with
 * Node's `child_process`) or {@link layerMemory} (a scripted peer, no process) — the code that uses it does not
 * change.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Cause from "effect/Cause"
import type * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Readable, Writable } from "node:stream"
import type {
  CliNotFound,
  InputClosed,
  InvalidOptions,
  ProcessExited,
  SpawnFailed,
  VersionIncompatible
} from "./AgentError.js"
import type { CliRequirement, CliResolver, JavaScriptRuntime } from "./CliResolver.js"
import * as memory from "./internal/transport/memoryTransport.js"
import * as proc from "./internal/transport/processTransport.js"
import * as requiredService from "./internal/transport/required.js"
import * as spawnTransport from "./internal/transport/spawnTransport.js"
import * as traceContext from "./internal/transport/traceContext.js"
import * as version from "./internal/transport/version.js"
import type * as Message from "./Message.js"

/**
 * How to start the CLI.
 *
 * @since 0.1.0
 * @category models
 */
export interface LaunchSpec {
  /**
   * Option flags, appended after the base flags `--output-format stream-json --verbose --input-format stream-json`.
   * Never put unbounded user content (prompts, system prompts) here: those travel over stdin.
   */
  readonly args: ReadonlyArray<string>
  /**
   * Path of the CLI. Leave `undefined` to search: `CLAUDE_CLI_PATH`, the bundled `@anthropic-ai/claude-code`
   * binary, `PATH`, then common install directories. A `.js`/`.mjs`/`.cjs` file is run by `runtime`.
   */
  readonly executable?: string | undefined
  /** Arguments of the runtime when `executable` is a JavaScript file. */
  readonly executableArgs?: ReadonlyArray<string> | undefined
  /**
   * The runtime of a JavaScript CLI: the current Node (`"node"`, the default), or the `bun` / `deno` on `PATH`
   * (`InvalidOptions` before anything is spawned when there is none). Ignored for a native binary.
   */
  readonly runtime?: JavaScriptRuntime | undefined
  /** Working directory of the CLI. Defaults to the current directory. */
  readonly cwd?: string | undefined
  /**
   * Environment variables. By default they overlay the parent's environment (`undefined` removes a variable);
   * with `envMode: "replace"` they are the whole environment. `CLAUDECODE` and `NODE_OPTIONS` are removed, even when
   * set here, unless `keepEnv` names them; `CLAUDE_CODE_ENTRYPOINT=sdk-ts`, `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`
   * and `BUN_ENABLE_CRASH_REPORTING=0` are added unless set here.
   */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** `"overlay"` (default) or `"replace"`. */
  readonly envMode?: "overlay" | "replace" | undefined
  /**
   * Of the variables removed by default (`CLAUDECODE`, `NODE_OPTIONS`), those to pass on as `env` or the parent
   * give them.
   */
  readonly keepEnv?: ReadonlyArray<string> | undefined
  /** Longest stdout line accepted, in bytes. Longer lines are skipped with an in-band `LineTooLong`. Default 64 MiB. */
  readonly maxLineBytes?: number | undefined
  /** How much of stderr to keep for error messages, in bytes. Default 64 KiB. */
  readonly stderrTailBytes?: number | undefined
  /** Called with every chunk the CLI writes to stderr (decoded UTF-8). Exceptions it throws are ignored. */
  readonly onStderr?: ((chunk: string) => void) | undefined
  /** After stdin is closed, how long to wait for the CLI to exit on its own before SIGTERM. Default 250 ms. */
  readonly closeGraceMillis?: number | undefined
  /** After SIGTERM, how long to wait before SIGKILL. Default 2000 ms. */
  readonly killGraceMillis?: number | undefined
  /**
   * Whether closing also ends the processes the CLI started outside its process group: its Bash tool runs in a
   * process group of its own, and a command it backgrounds outlives the tool, re-parented to init. On Linux the
   * CLI's environment carries a random marker (`ECA_SESSION_<hex>`) that its descendants inherit; when the scope
   * closes, every running process carrying it (and every descendant the CLI had while it ran) gets SIGTERM, then
   * SIGKILL after `killGraceMillis`. Elsewhere only the process group is signalled. Set `false` to leave such
   * processes running (e.g. a server the agent started on purpose). Defaults to `true`.
   */
  readonly reapToolProcesses?: boolean | undefined
  /**
   * The CLI versions to accept (`>=2.1.100 <2.2.0`-style comparators; `"*"` accepts any). The version is read once
   * per executable: from the `package.json` of the npm package that installed the binary found by the default
   * lookup, otherwise with `--version`. Defaults to {@link SUPPORTED_CLI_VERSIONS}.
   */
  readonly cliVersions?: string | undefined
  /**
   * What the options need of the CLI beyond `cliVersions` (`AgentOptions.toLaunch` gives them): the process transport
   * fails with `VersionIncompatible` naming the option when the CLI's version is known and outside one of them. (A
   * transport over a spawn function does not know the version: the CLI there reports what it cannot take.)
   */
  readonly requirements?: ReadonlyArray<CliRequirement> | undefined
}

/**
 * How the process ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * A reader of a connection's stdout: each pull returns the frames parsed from the next stdout read (never an empty
 * chunk); it fails with `None` once stdout ended and the process exited with code 0, with `Some(ProcessExited)`
 * otherwise. The shape of `Stream.toPull`'s pull.
 *
 * @since 0.1.0
 * @category models
 */
export type FramePull = Effect.Effect<Chunk.Chunk<Message.Frame>, Option.Option<ProcessExited>>

/**
 * Why a frame cannot be written: the caller ended stdin (`InputClosed`, also once the process exited since), or the
 * process exited (`ProcessExited`).
 *
 * @since 0.1.0
 * @category models
 */
export type SendError = ProcessExited | InputClosed

/**
 * One running CLI process: a batch reader of its stdout (`pull`) and its Effect form (`messages`), a writer of its
 * stdin (`send`), its exit, its stderr tail, and `kill`. Wrap one with a transport of yours by passing its members
 * through: the SDK reads and writes only through them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  /** The operating-system process id (`None` for in-memory transports). */
  readonly pid: Option.Option<number>
  /** The resolved command line, for diagnostics. */
  readonly command: ReadonlyArray<string>
  /**
   * Opens the reader of stdout, frame batch by frame batch (one batch per stdout read): a consumer that handles a
   * batch synchronously pays per read, not per frame. Single consumer: open it once; closing its scope stops reading.
   */
  readonly pull: Effect.Effect<FramePull, never, Scope.Scope>
  /**
   * Every stdout frame, in order: {@link Connection.pull} as a Stream. Ends when the process exits with code 0; fails
   * with `ProcessExited` otherwise. Single consumer: run it once (and do not also open `pull`).
   */
  readonly messages: Stream.Stream<Message.Frame, ProcessExited>
  /**
   * Writes one frame to stdin (queued for the single writer), or fails with why it cannot: `InputClosed` after
   * `endInput` (also when the process exited since), else `ProcessExited` after the process exited.
   */
  readonly send: (message: Message.StdinMessage) => Effect.Effect<void, SendError>
  /**
   * `send` as a synchronous call for the control protocol's answers (no fiber per answer).
   *
   * @internal
   */
  readonly unsafeSend: (message: Message.StdinMessage) => SendError | undefined
  /** Closes stdin after everything already sent was written. Idempotent. */
  readonly endInput: Effect.Effect<void>
  /** Waits for the process to exit. */
  readonly awaitExit: Effect.Effect<ExitStatus>
  /** The exit status, once the process exited. */
  readonly exitStatus: Effect.Effect<Option.Option<ExitStatus>>
  /** The last bytes written to stderr, decoded. */
  readonly stderrTail: Effect.Effect<string>
  /**
   * Terminates the process now (SIGTERM to its process group and, see {@link LaunchSpec.reapToolProcesses}, to its
   * tool processes; SIGKILL to the group after the kill grace) and waits (bounded) for it to exit, without closing
   * the scope; tool processes still running are ended when the scope closes. The reader then fails with
   * `ProcessExited`.
   */
  readonly kill: Effect.Effect<void>
}

/**
 * Starts CLI processes. The process belongs to the scope passed to `open`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Transport extends Context.Tag("effect-claude-agent/Transport")<Transport, {
  /**
   * Starts a CLI process for `spec`; closing the scope ends it (stdin EOF, then SIGTERM after `closeGraceMillis`).
   * Fails with `InvalidOptions` (option `cwd`) before anything is spawned when `cwd` is not an existing directory.
   */
  readonly open: (
    spec: LaunchSpec
  ) => Effect.Effect<Connection, CliNotFound | SpawnFailed | VersionIncompatible | InvalidOptions, Scope.Scope>
}>() {}

/**
 * The `Transport` service of the context. The type requires it, so typed code cannot run without one; a program that
 * runs anyway (plain JavaScript, a cast) dies saying to provide `NodeClaudeAgent.layer` or a transport of the testing
 * kit, instead of Effect's bare "Service not found". Sessions, the pool and the `@effect/ai` model get their
 * Transport through it.
 *
 * @since 0.1.0
 * @category accessors
 */
export const required: Effect.Effect<Context.Tag.Service<Transport>, never, Transport> = requiredService.required(
  Transport
)

/**
 * The CLI versions this SDK is tested with: the pinned 2.1.332 and 2.1.100 run the real-CLI conformance suite;
 * later 2.1.x releases are accepted as compatible.
 *
 * @since 0.1.0
 * @category constants
 */
export const SUPPORTED_CLI_VERSIONS: string = version.SUPPORTED_CLI_VERSIONS

/**
 * The base flags every session passes: stream-json in both directions (`--verbose` is mandatory with stream-json
 * output).
 *
 * @since 0.1.0
 * @category constants
 */
export const BASE_ARGS: ReadonlyArray<string> = proc.BASE_ARGS

/**
 * Starts real processes with Node's `child_process` (each CLI leads a process group of its own), finding the CLI and
 * checking its version through the `CliResolver` (provide `NodeFileSystem.layer` and `CliResolver.layer()`, or use
 * `NodeClaudeAgent.layer` which includes them). Its pipes are read and written with Node's own stream calls, with no
 * fiber per pipe (docs/PERFORMANCE.md, "The process's pipes"). With the host watchdog ({@link ProcessOptions.hostWatchdog}):
 * on Linux, the CLIs it started are ended if the host dies without closing them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerProcess: Layer.Layer<Transport, never, FileSystem.FileSystem | CliResolver> = Layer.scoped(
  Transport,
  proc.make()
)

/**
 * Options of {@link layerProcessWith}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessOptions {
  /**
   * Whether the host's CLIs are ended if the host dies without running its finalizers (SIGKILL, the OOM killer). On
   * Linux, the first session started through the layer starts one small reaper process (a shell loop, detached from
   * the host) that the host tells about each CLI it starts and reaps; when the host is gone, the reaper SIGKILLs the
   * process groups of the CLIs still running and the tool processes carrying their markers (see
   * {@link LaunchSpec.reapToolProcesses}), within a second. The reaper lives as long as the layer or a session
   * that uses it, whichever is last: a session kept in a scope longer than the layer's stays watched until it closes.
   * Elsewhere it does nothing. Defaults to `true`.
   */
  readonly hostWatchdog?: boolean | undefined
}

/**
 * {@link layerProcess} with options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerProcessWith = (
  options: ProcessOptions
): Layer.Layer<Transport, never, FileSystem.FileSystem | CliResolver> => Layer.scoped(Transport, proc.make(options))

/**
 * What a spawn function is asked to run (the official SDK's `SpawnOptions`): the command and its arguments, the
 * working directory, the whole environment, and a signal that aborts when the SDK signals the process (after stdin
 * EOF and the close grace), or when the scope closes: passing it to `child_process.spawn` or a VM API is safe.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpawnOptions {
  readonly command: string
  readonly args: Array<string>
  readonly cwd?: string
  readonly env: { [name: string]: string | undefined }
  readonly signal: AbortSignal
}

/**
 * A process a spawn function started (the official SDK's `SpawnedProcess`; a Node `ChildProcess` is one): its stdin
 * and stdout, its exit status, `kill`, and its `exit` / `error` events. A `stderr` Readable, when it has one, feeds
 * the stderr tail; a numeric `pid`, when it has one, is the connection's.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpawnedProcess {
  readonly stdin: Writable
  readonly stdout: Readable
  readonly killed: boolean
  readonly exitCode: number | null
  readonly signalCode?: NodeJS.Signals | null
  /** Sends the process a signal; `false` when it could not. */
  kill(signal: NodeJS.Signals): boolean
  /** Called once the process has exited, with its exit code or the signal that ended it. */
  on(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void
  /** Called when the process could not be started, signalled or written to. */
  on(event: "error", listener: (error: Error) => void): void
  /** `on("exit")`, called at most once. */
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void
  /** `on("error")`, called at most once. */
  once(event: "error", listener: (error: Error) => void): void
  /** Removes an `exit` listener. */
  off(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void
  /** Removes an `error` listener. */
  off(event: "error", listener: (error: Error) => void): void
}

/**
 * Starts the CLI somewhere (a container, a VM, over SSH, or locally): the official SDK's `spawnClaudeCodeProcess`.
 *
 * @since 0.1.0
 * @category models
 */
export type SpawnFunction = (options: SpawnOptions) => SpawnedProcess

/**
 * A Transport whose processes `spawn` starts: the official SDK's `spawnClaudeCodeProcess`, to run the CLI in a
 * container, over SSH or in a VM. The connection is the process transport's: the same framing, stderr tail (from the
 * process's `stderr` when it has one; a process that emitted `error` has its message there), exit status and close
 * (stdin EOF, the close grace, then `kill("SIGTERM")`, `kill("SIGKILL")` after the kill grace; closing always ends
 * what `spawn` returned, and aborts {@link SpawnOptions.signal}).
 *
 * `spawn` gets the command this machine would run: the CLI the `CliResolver` finds (a JavaScript one through its
 * runtime), else `LaunchSpec.executable`, else `claude`. Nothing is checked on this machine: not the working
 * directory, nor the CLI's version (the process may run elsewhere). What this SDK cannot do for a process it did
 * not start: signal its process group, or end the tool processes it started outside it
 * ({@link LaunchSpec.reapToolProcesses} does not apply): ending those is the spawn function's (e.g. a container
 * that is removed with its process). A `spawn` that throws, or returns something that is not a process, fails
 * `open` with `SpawnFailed`; a process that exits at once fails the session with `ProcessExited`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSpawn = (spawn: SpawnFunction): Layer.Layer<Transport, never, CliResolver> =>
  Layer.effect(Transport, spawnTransport.make(spawn))

/**
 * The peer side of an in-memory connection: what a scripted fake CLI sees.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryPeer {
  /** The spec the SDK asked to launch (argv, env, cwd), for assertions. */
  readonly spec: LaunchSpec
  /** Writes one stdout frame (any JSON object); it goes through the same decoding as real output. */
  readonly emit: (frame: object) => Effect.Effect<void>
  /** Writes raw stdout bytes or text, framed exactly like a real process's output (split lines, bad JSON…). */
  readonly emitRaw: (chunk: string | Uint8Array) => Effect.Effect<void>
  /** Writes to stderr. */
  readonly emitStderr: (text: string) => Effect.Effect<void>
  /** The next frame the SDK wrote to stdin; fails with `NoSuchElementException` once stdin is closed and drained. */
  readonly take: Effect.Effect<Message.StdinMessage, Cause.NoSuchElementException>
  /** Everything the SDK wrote so far, in order. */
  readonly sent: Effect.Effect<ReadonlyArray<Message.StdinMessage>>
  /** Completes when the SDK closed stdin. */
  readonly inputEnded: Effect.Effect<void>
  /** Ends the fake process with this status (code 0 ends the SDK's stream, anything else fails it). */
  readonly exit: (status: ExitStatus) => Effect.Effect<void>
}

/**
 * An in-memory Transport for tests: every `open` runs `script` with a fresh {@link MemoryPeer} on a fiber that
 * lives as long as the connection. When the script returns, the fake process exits with code 0 (unless the script
 * already called `exit`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (script: (peer: MemoryPeer) => Effect.Effect<void>): Layer.Layer<Transport> =>
  Layer.succeed(Transport, Transport.of({ open: (spec) => memory.open(spec, script) }))

/**
 * Creates one in-memory connection and its peer directly, without a layer (for tests of lower layers).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemoryConnection: (
  spec?: LaunchSpec
) => Effect.Effect<{ readonly connection: Connection; readonly peer: MemoryPeer }, never, Scope.Scope> =
  memory.makeConnection

/**
 * Runs `effect` with the OpenTelemetry trace context active now, when it is called, as the one CLIs started within it
 * inherit (`TRACEPARENT` / `TRACESTATE`): for a caller outside Effect (the Promise API), whose fibers run later,
 * outside its async context. Without it, a CLI inherits the current Effect span's context. Reads the context only
 * when the app registered OpenTelemetry globals.
 *
 * @since 0.1.0
 * @category tracing
 */
export const withActiveOpenTelemetry: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> =
  traceContext.withActiveOpenTelemetry
