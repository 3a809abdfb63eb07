/**
 * Finds the Claude Code CLI and learns its version: the one piece of the process Transport that reads this machine
 * (the file system, `node_modules`, `PATH`) and runs a probe process. `NodeClaudeAgent.layer` provides it; a
 * Transport built by hand from `Transport.layerProcess` needs {@link layer}.
 *
 * What it learns it keeps for as long as the service is referenced: where the bundled binary is, whether the C library
 * is musl, and every version found (by executable path and modification time, so a CLI upgraded in place is asked
 * again). Sessions that start together while a version is unknown share one `--version` run, which lives as long as
 * one of them waits for it: the service itself needs no scope, so no composition of layers can close it early.
 *
 * @example
 * ```ts
 * import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
 * import * as Layer from "effect/Layer"
 * import { CliResolver, Transport } from "effect-claude-agent"
 *
 * // what NodeClaudeAgent.layer does, with a shorter bound on `--version`
 * const TransportLive = Transport.layerProcess.pipe(
 *   Layer.provide(CliResolver.layer({ probeTimeout: "3 seconds" })),
 *   Layer.provide(NodeFileSystem.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type { CliNotFound, InvalidOptions, VersionIncompatible } from "./AgentError.js"
import * as internal from "./internal/transport/cliResolver.js"

/**
 * How to run a resolved CLI: the command and the arguments that go before ours.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedCli {
  /** The program to spawn: the CLI itself, or the runtime (the current Node by default) of a `.js`/`.mjs`/`.cjs` CLI. */
  readonly command: string
  /** Arguments before the SDK's own (Node's `executableArgs` and the script, for a JavaScript CLI). */
  readonly prefixArgs: ReadonlyArray<string>
  /** The CLI's file, absolute. */
  readonly path: string
  /**
   * The `package.json` of the npm package that installed this binary (the bundled lookup only): its version is the
   * binary's, so the version check needs no `--version` run.
   */
  readonly packageJson?: string
}

/**
 * The JavaScript runtime that runs a JavaScript CLI entry (`cli.js`): `"node"` is the current Node executable; `"bun"`
 * and `"deno"` are found on `PATH`. A native binary is run by itself whatever the runtime.
 *
 * @since 0.1.0
 * @category models
 */
export type JavaScriptRuntime = "node" | "bun" | "deno"

/**
 * An option that needs a newer CLI than the SDK's supported range: the process transport fails with
 * `VersionIncompatible` naming it, before spawning, when the version of the CLI it found is outside `versions`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CliRequirement {
  /** The option, with its value (`mcpServersDelivery: "initialize"`). */
  readonly option: string
  /** The CLI versions that take it (`">=2.1.261"`). */
  readonly versions: string
}

/**
 * Where to look for the CLI.
 *
 * @since 0.1.0
 * @category models
 */
export interface LookupRequest {
  /** The caller's `pathToClaudeCodeExecutable`: when set, the only place looked at. */
  readonly explicit?: string | undefined
  /** The environment the lookup reads: `CLAUDE_CLI_PATH`, `PATH` and, on Windows, `PATHEXT`. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Arguments of the runtime, before the file, for a JavaScript CLI. */
  readonly executableArgs?: ReadonlyArray<string> | undefined
  /** The runtime of a JavaScript CLI. Defaults to `"node"` (this Node). */
  readonly runtime?: JavaScriptRuntime | undefined
}

/**
 * What `--version` told: the version, or why there is none (it could not run, exited non-zero, printed no `x.y.z`,
 * or did not answer in time).
 *
 * @since 0.1.0
 * @category models
 */
export type VersionProbe = { readonly version: string } | { readonly reason: string }

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Finds the CLI: `explicit` > `CLAUDE_CLI_PATH` > the bundled `@anthropic-ai/claude-code` binary > `PATH` > common
   * install directories. A JavaScript file is run with `runtime` (the current Node by default). On Windows `claude.exe` anywhere on `PATH`
   * wins over a shim (`claude.cmd`, … in `PATHEXT` order) earlier on it, and a shim is never run: the npm package's
   * `claude.exe` it stands for is. Fails with `CliNotFound` listing every place searched, in order (a shim passed
   * over with the reason), and with `InvalidOptions` (`executable`) when a JavaScript CLI is to run with a `runtime`
   * (`bun`, `deno`) that is not on `PATH`. Whether the file is there is checked on every call.
   */
  readonly resolve: (request: LookupRequest) => Effect.Effect<ResolvedCli, CliNotFound | InvalidOptions>
  /**
   * The CLI's version: for a binary an npm package installed, its `package.json`'s; otherwise `<cli> --version`. A
   * version found is kept by path and modification time. Callers asking while the same probe runs wait for it; one
   * that is interrupted stops waiting at once, and when the last one leaves, the probe's process group is killed. A
   * probe that does not answer within `probeTimeout` is killed and its answer is a reason; answers without a version
   * are not kept (the next caller probes again).
   */
  readonly version: (cli: ResolvedCli) => Effect.Effect<VersionProbe>
  /**
   * Fails with `VersionIncompatible` when the CLI's {@link Service.version} is outside `range`, or unknown
   * (`found: "unknown"`, with the reason). The range `"*"` accepts any CLI without asking its version.
   */
  readonly checkVersion: (cli: ResolvedCli, range: string) => Effect.Effect<void, VersionIncompatible>
  /**
   * What {@link Service.checkVersion} would answer, when it needs no `--version` run: `Some` with the verdict when the
   * CLI's version is known (found before, or its npm package's) or `range` is `"*"`; `None` when only a probe can
   * tell. The process transport judges a known version before it spawns the CLI, and checks an unknown one while the
   * CLI starts. Optional, for resolvers written before it: without it, the transport runs `checkVersion` beside the
   * spawn and judges before spawning only a verdict that is ready once the check has had one turn to run.
   *
   * @since 0.1.0
   */
  readonly knownVerdict?: (cli: ResolvedCli, range: string) => Option.Option<Either.Either<void, VersionIncompatible>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class CliResolver extends Context.Tag("effect-claude-agent/CliResolver")<CliResolver, Service>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How long `--version` may take before its process group is killed and the version is unknown. Defaults to 10 s. */
  readonly probeTimeout?: Duration.DurationInput | undefined
}

/**
 * Builds the service. It holds no resource that needs closing: its caches are values, and a running probe belongs to
 * the callers waiting for it (the last one to leave kills it). So the service keeps working however the layer that
 * holds it was composed, also when it was built in a scope that has closed since (`Layer.build(...)` followed by
 * `Effect.provide(NodeClaudeAgent.layer)`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<Service> = internal.make

/**
 * The resolver on this machine's file system and processes (Node's `fs`, `child_process`, `require.resolve`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<CliResolver> => Layer.effect(CliResolver, make(options))
