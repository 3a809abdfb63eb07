/**
 * Start-up of a session: its time limits read from the options, the CLI spawned within the start-up bound, and
 * `initialize` written first and answered within what is left of that bound.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { InvalidOptions, type ProcessExited, ProtocolViolation, StartupFailed } from "../../AgentError.js"
import type { Launch, Options } from "../../AgentOptions.js"
import type { SessionError } from "../../ClaudeAgent.js"
import type * as ControlProtocol from "../../ControlProtocol.js"
import type * as ProtocolInternal from "../protocol/controlProtocol.js"
import * as Message from "../../Message.js"
import { required as requiredTransport, type Transport } from "../../Transport.js"
import type * as TransportApi from "../../Transport.js"
import { protectArgs } from "../transport/argv.js"
import { compiledGuard } from "../message/decode.js"
import { awaitUntil, type Expiry } from "../protocol/awaitWithin.js"
import type { SessionExtensions } from "./extensions.js"
import type { IdleLimits } from "./state.js"

/**
 * Checks a control response against its schema. The guard is compiled when this is called (docs/PERFORMANCE.md,
 * "Session state and the idle watchdog"): keep the result where a response is checked on every session.
 *
 * @internal
 */
export const decodeResponse = <A, I>(schema: Schema.Schema<A, I>, subtype: string) => {
  const is = compiledGuard(schema)
  return (u: unknown): Effect.Effect<A, ProtocolViolation> =>
    is(u) ? Effect.succeed(u) : Effect.fail(
      new ProtocolViolation({ description: `unexpected response to ${subtype}: ${JSON.stringify(u)?.slice(0, 500)}` })
    )
}

/** Every session checks its `initialize` answer: one compiled guard for all of them. */
const decodeInitializeResponse = decodeResponse(Message.InitializeResponse, "initialize")

/** A timeout option: a `Duration` input, or `"infinity"` (no timeout). Anything else is `InvalidOptions`. */
const decodeTimeout = (
  option: string,
  input: Duration.DurationInput | "infinity" | undefined,
  fallback: Duration.Duration
): Effect.Effect<Duration.Duration, InvalidOptions> => {
  if (input === undefined) return Effect.succeed(fallback)
  if (input === "infinity") return Effect.succeed(Duration.infinity)
  return Effect.try({
    try: () => Duration.decode(input),
    catch: () => new InvalidOptions({ option, description: `not a duration: ${String(input)}` })
  })
}

/**
 * A session's time limits.
 *
 * @internal
 */
export interface Limits extends IdleLimits {
  /** From the spawn to the answer to `initialize`. */
  readonly startup: Duration.Duration
  /** The default timeout of control requests. */
  readonly control: Duration.Duration
}

/**
 * The time limits of `options`, with their defaults; `InvalidOptions` for one that is not a duration.
 *
 * @internal
 */
export const limitsOf = (options: Options): Effect.Effect<Limits, InvalidOptions> =>
  Effect.all({
    startup: decodeTimeout("initializeTimeout", options.initializeTimeout, Duration.seconds(60)),
    control: decodeTimeout("controlRequestTimeout", options.controlRequestTimeout, Duration.seconds(60)),
    idle: decodeTimeout("idleTimeout", options.idleTimeout, Duration.minutes(10)),
    firstMessage: decodeTimeout("firstMessageTimeout", options.firstMessageTimeout, Duration.seconds(60))
  })

/**
 * The start-up bound (`initializeTimeout`, from the spawn to the answer to `initialize`): its length, and the deadline
 * the waits of start-up register with (the session's timer makes it pass); none when the limit is infinite.
 *
 * @internal
 */
export interface Bound {
  readonly limit: Duration.Duration
  readonly expiry: Expiry | undefined
}

/**
 * Finds, checks and spawns the CLI (start-up phase "spawn"), within the start-up bound.
 *
 * @internal
 */
export const spawn = (
  options: Options,
  launch: Launch,
  bound: Bound
): Effect.Effect<TransportApi.Connection, SessionError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const transport = yield* requiredTransport
    const args = yield* protectArgs(launch.args)
    const open = transport.open({
      args,
      env: launch.env,
      envMode: options.envMode,
      keepEnv: options.keepEnv,
      cwd: options.cwd,
      executable: options.pathToClaudeCodeExecutable,
      executableArgs: options.executableArgs,
      runtime: options.executable,
      onStderr: options.stderr,
      maxLineBytes: options.maxLineBytes,
      closeGraceMillis: options.closeGraceMillis,
      killGraceMillis: options.killGraceMillis,
      reapToolProcesses: options.reapToolProcesses,
      cliVersions: options.cliVersions,
      requirements: launch.requirements
    })
    const { expiry, limit } = bound
    if (expiry === undefined) return yield* open
    // `open` on a fiber of its own that settles `opened`, bounded by the start-up deadline (as `Effect.timeoutFail`
    // would, without its race of two fibers): at the bound, or if the caller is interrupted, the opening is
    // interrupted and waited for
    const opened = yield* Deferred.make<TransportApi.Connection, SessionError>()
    const opening = yield* Effect.forkDaemon(
      Effect.flatMap(Effect.exit(Effect.interruptible(open)), (exit) => Deferred.done(opened, exit))
    )
    return yield* awaitUntil(opened, expiry, () =>
      new StartupFailed({
        reason: "Spawn",
        description:
          `the CLI was not started within ${Duration.toMillis(limit)} ms (finding it, checking its version, ` +
          `spawning it)`,
        stderrTail: ""
      })).pipe(Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Fiber.interrupt(opening)))
  })

/**
 * What the session does with the outcome of `initialize`.
 *
 * @internal
 */
export interface InitializeHooks {
  /** The CLI answered (whatever the answer). */
  readonly answered: Effect.Effect<void>
  /** Explains an exit (`SessionNotFound`, …), as the session's outcome does. */
  readonly explain: (exit: ProcessExited) => SessionError
  /** Whether the CLI wrote any frame yet (the phase of a start-up failure). */
  readonly wroteAnything: () => boolean
}

/**
 * With `"initialize"` delivery, the CLI must say it took the MCP servers and plugins the request carried: a CLI that
 * takes `--await-initialize` but predates the fields answers without them (and never read them), which ends the
 * session naming the option. A plugin that did not load is a warning, as `--plugin-dir` skips it.
 */
const checkDelivery = (
  request: Readonly<Record<string, unknown>>,
  response: Message.InitializeResponse
): Effect.Effect<void, ProtocolViolation> => {
  const unconfirmed = (option: string, field: string, what: string) =>
    Effect.fail(
      new ProtocolViolation({
        description: `${option}: "initialize" sent the ${what} in initialize, and the CLI's answer has no ${field}: ` +
          `it did not read them (a CLI older than 2.1.261, or one started without --await-initialize); use an ` +
          `up-to-date CLI or ${option}: "argv"`
      })
    )
  if (request["mcpServers"] !== undefined && response.mcp_servers_applied !== true) {
    return unconfirmed("mcpServersDelivery", "mcp_servers_applied: true", "MCP servers")
  }
  if (request["plugins"] !== undefined) {
    if (response.plugins_applied === undefined) return unconfirmed("pluginDelivery", "plugins_applied", "plugins")
    if (!response.plugins_applied) {
      return Effect.logWarning("pluginDelivery: the CLI did not load every plugin listed in initialize")
    }
  }
  return Effect.void
}

/**
 * Writes `initialize` now (before anything else the session sends) and returns the effect that waits for its
 * answer, within what is left of the start-up bound at `startedAt`. A CLI gone already cannot be written to: the
 * effect then fails with why. A failure other than `SessionNotFound` is a `StartupFailed` and kills the CLI.
 *
 * @internal
 */
export const initialize = (
  protocol: ProtocolInternal.Owned,
  request: Readonly<Record<string, unknown>>,
  extensions: SessionExtensions,
  timing: { readonly startedAt: number; readonly bound: Bound },
  hooks: InitializeHooks
): Effect.Effect<Effect.Effect<Message.InitializeResponse, SessionError>> =>
  Effect.gen(function*() {
    const { expiry, limit } = timing.bound
    const startupMillis = Duration.toMillis(limit)
    const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const answer = yield* protocol.begin("initialize", request, {
      // what is left of the start-up bound, as its `ControlTimeout` reports it; the deadline is the bound's own
      timeout: Duration.isFinite(limit)
        ? Duration.millis(Math.max(0, startupMillis - (now - timing.startedAt)))
        : Duration.infinity,
      expiry
    }).pipe(
      Effect.catchAll((error) =>
        Effect.succeed<Effect.Effect<unknown, ControlProtocol.RequestError>>(Effect.fail(error))
      )
    )
    const failed = (error: ControlProtocol.RequestError | ProtocolViolation) =>
      Effect.gen(function*() {
        if (error._tag === "ProcessExited") {
          const explained = hooks.explain(error)
          if (explained._tag === "SessionNotFound") return yield* Effect.fail(explained)
        }
        const failure = new StartupFailed({
          reason: hooks.wroteAnything() ? "InitializeAck" : "FirstLine",
          description: error._tag === "ControlTimeout"
            ? `no answer to initialize within ${startupMillis} ms`
            : error._tag === "ProcessExited"
            ? error.summary
            : error.message,
          ...(error._tag === "ProcessExited" ? { exitCode: error.code } : {}),
          stderrTail: yield* protocol.connection.stderrTail,
          cause: error
        })
        yield* protocol.connection.kill
        return yield* Effect.fail(failure)
      })
    return answer.pipe(
      Effect.tap(() => hooks.answered),
      Effect.flatMap(decodeInitializeResponse),
      Effect.tap((response) => checkDelivery(request, response)),
      Effect.catchAll(failed),
      Effect.tap((response) => extensions.onInitialized(response)),
      Effect.withSpan("Session.initialize")
    )
  })
