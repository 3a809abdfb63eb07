/** @internal */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Inspectable from "effect/Inspectable"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

/** The level of a log line of the Promise API. @internal */
export type Level = "trace" | "debug" | "info" | "warning" | "error" | "fatal"

/** Where the Promise API's log lines go (`Options.logger`). @internal */
export type LogFunction = (
  level: Level,
  message: string,
  annotations: Readonly<Record<string, unknown>>
) => void

/** The lowest level written (`Options.logLevel`); `"none"` writes nothing. @internal */
export type MinimumLevel = Level | "none"

const levels: Readonly<Record<MinimumLevel, LogLevel.LogLevel>> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

const levelOf = (level: LogLevel.LogLevel): Level =>
  level._tag === "Trace" || level._tag === "All"
    ? "trace"
    : level._tag === "Debug"
    ? "debug"
    : level._tag === "Info"
    ? "info"
    : level._tag === "Warning"
    ? "warning"
    : level._tag === "Error"
    ? "error"
    : "fatal"

/** The `logLevel` values (the options schema checks against them). @internal */
export const minimumLevels: ReadonlyArray<MinimumLevel> = Object.keys(levels) as Array<MinimumLevel>

const part = (value: unknown): string =>
  typeof value === "string"
    ? value
    : Cause.isCause(value)
    ? Cause.pretty(value)
    : value instanceof Error
    ? value.message
    : Inspectable.toStringUnknown(value, 0)

/** One line's text: the message's parts, then the cause's rendering when there is one. */
const text = (message: unknown, cause: Cause.Cause<unknown>): string => {
  const parts = (Array.isArray(message) ? message : [message]).map(part)
  if (!Cause.isEmpty(cause)) parts.push(Cause.pretty(cause))
  return parts.join(" ")
}

/** The default destination: one line on stderr, `effect-claude-agent WARN message key=value …`. @internal */
export const toStderr: LogFunction = (level, message, annotations) => {
  const fields = Object.entries(annotations).map(([key, value]) => ` ${key}=${part(value)}`).join("")
  process.stderr.write(`effect-claude-agent ${level.toUpperCase()} ${message}${fields}\n`)
}

/** A `LogFunction` as an Effect logger; one that throws loses its line, never the query. */
const asLogger = (log: LogFunction): Logger.Logger<unknown, void> =>
  Logger.make(({ annotations, cause, logLevel, message }) => {
    try {
      log(levelOf(logLevel), text(message, cause), Object.fromEntries(HashMap.toEntries(annotations)))
    } catch {
      // a log line is not worth a failed query
    }
  })

/**
 * Runs effects of the Promise API with its logging: Effect's default logger (console, i.e. stdout) replaced by
 * `log` (default: stderr), from `level` on (default: `"info"`, as Effect's default). Fibers forked inside inherit it;
 * finalizers run by a fiber that closes a scope log with that fiber's logger, so every call into the runtime of a
 * query goes through this. @internal
 */
export const withLogging = (options: {
  readonly logger?: LogFunction | undefined
  readonly logLevel?: MinimumLevel | undefined
}) => {
  const logger = asLogger(options.logger ?? toStderr)
  const given = options.logLevel
  // an invalid level fails the query (validation) before anything logs
  const minimum = given !== undefined && Object.hasOwn(levels, given) ? levels[given] : LogLevel.Info
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.locallyWith(FiberRef.currentLoggers, (loggers) =>
        HashSet.add(HashSet.remove(loggers, Logger.defaultLogger), logger)),
      Effect.locally(FiberRef.currentMinimumLogLevel, minimum)
    )
}
