import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { expect } from "vitest"

const text = (message: unknown): string =>
  (Array.isArray(message) ? message : [message]).map((part) => (typeof part === "string" ? part : String(part)))
    .join(" ")

/**
 * Runs `self` with its log lines captured instead of printed (a green run prints no warnings), then checks the
 * warnings and errors: each matches one of `expected`, and each of `expected` matched one. A line reads
 * `<LEVEL> <message>`, e.g. `WARN MCP server "up" disconnected: …`.
 */
export const expectLogs =
  (expected: ReadonlyArray<RegExp>) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const lines: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) lines.push(`${logLevel.label} ${text(message)}`)
      })
      return self.pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Effect.tap(() =>
          Effect.sync(() => {
            for (const line of lines) {
              expect(expected.some((p) => p.test(line)), `unexpected log line: ${line}`).toBe(true)
            }
            for (const p of expected) expect(lines.some((line) => p.test(line)), `no log line matches ${p}`).toBe(true)
          })
        )
      )
    })

/** One line the Promise API logged through `options.logger`. */
export interface PromiseLogLine {
  readonly level: "trace" | "debug" | "info" | "warning" | "error" | "fatal"
  readonly message: string
}

/**
 * The Promise API's counterpart of `expectLogs`: `logger` (pass it as `options.logger`) captures the lines instead of
 * writing them to stderr; `check()` then checks the warnings and errors as `expectLogs` does, a line reading
 * `<level> <message>`, e.g. `warning Permission for Bash denied: …`.
 */
export const capturePromiseLogs = (expected: ReadonlyArray<RegExp>) => {
  const lines: Array<PromiseLogLine> = []
  const logger = (level: PromiseLogLine["level"], message: string): void => {
    lines.push({ level, message })
  }
  const check = (): void => {
    const warnings = lines.filter((l) => l.level === "warning" || l.level === "error" || l.level === "fatal")
      .map((l) => `${l.level} ${l.message}`)
    for (const line of warnings) {
      expect(expected.some((p) => p.test(line)), `unexpected log line: ${line}`).toBe(true)
    }
    for (const p of expected) expect(warnings.some((line) => p.test(line)), `no log line matches ${p}`).toBe(true)
  }
  return { lines, logger, check }
}
