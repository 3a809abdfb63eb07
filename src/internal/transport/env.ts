/** @internal */
import type { Carrier } from "./traceContext.js"

/**
 * Variables the SDK removes from the CLI's environment, wherever they come from (the parent's environment, `env`
 * in either mode, a spread of `process.env`), unless `keepEnv` names them. @internal
 */
export const STRIPPED_ENV = ["CLAUDECODE", "NODE_OPTIONS"] as const

/** Variables the SDK sets unless the caller sets them explicitly. @internal */
export const SDK_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_ENTRYPOINT: "sdk-ts",
  CLAUDE_CODE_SDK_READS_SESSION_STATE: "1",
  BUN_ENABLE_CRASH_REPORTING: "0"
}

/** @internal */
export interface EnvInput {
  readonly parent: Readonly<Record<string, string | undefined>>
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly mode?: "overlay" | "replace" | undefined
  /** Stripped variables ({@link STRIPPED_ENV}) to pass on as the parent or `env` gives them. */
  readonly keep?: ReadonlyArray<string> | undefined
  /**
   * The caller's trace context: `TRACEPARENT`, and `TRACESTATE` or none (one inherited from the parent belongs to
   * another trace), each unless `env` names the variable (`undefined` there: not passed at all).
   */
  readonly trace?: Carrier | undefined
}

/** The trace variables the child gets (`undefined`: removed), those `env` names left out. */
const traceVars = (options: EnvInput): ReadonlyArray<readonly [string, string | undefined]> => {
  const { env, trace } = options
  if (trace === undefined) return []
  const vars: ReadonlyArray<readonly [string, string | undefined]> = [
    ["TRACEPARENT", trace.traceparent],
    ["TRACESTATE", trace.tracestate]
  ]
  return env === undefined ? vars : vars.filter(([name]) => !(name in env))
}

const stripped = (options: EnvInput): ReadonlyArray<string> =>
  options.keep === undefined || options.keep.length === 0
    ? STRIPPED_ENV
    : STRIPPED_ENV.filter((k) => !options.keep!.includes(k))

/**
 * Builds the child's environment: the parent's (or nothing, in `replace` mode), plus the SDK's variables and the trace
 * context, plus the caller's overlay (`undefined` deletes a variable), minus the stripped variables not kept.
 *
 * @internal
 */
export const buildEnv = (options: EnvInput): Record<string, string> => {
  const out: Record<string, string> = {}
  if (options.mode !== "replace") {
    for (const [k, v] of Object.entries(options.parent)) if (v !== undefined) out[k] = v
  }
  Object.assign(out, SDK_ENV)
  for (const [k, v] of traceVars(options)) {
    if (v === undefined) delete out[k]
    else out[k] = v
  }
  if (options.env !== undefined) {
    for (const [k, v] of Object.entries(options.env)) {
      if (v === undefined) delete out[k]
      else out[k] = v
    }
  }
  for (const k of stripped(options)) delete out[k]
  return out
}

/**
 * The child's environment as the platform's `Command` takes it. Usually it is the parent's plus additions: then only
 * the additions are returned, with `extend: true`, and the executor adds them to `process.env` at spawn. Copying
 * `process.env` here as well (each variable is read through Node's environment interceptor) cost a session ~100 µs.
 * When something must be removed (a stripped variable the parent has, a variable the caller set to `undefined`, the
 * parent's `TRACESTATE` when the trace context has none)
 * or in `replace` mode, the whole environment from {@link buildEnv}, with `extend: false`.
 *
 * @internal
 */
export const commandEnv = (options: EnvInput): { readonly env: Record<string, string>; readonly extend: boolean } => {
  const given = options.env
  const strip = stripped(options)
  const trace = traceVars(options)
  const removes = options.mode === "replace" ||
    strip.some((k) => options.parent[k] !== undefined) ||
    trace.some(([k, v]) => v === undefined && options.parent[k] !== undefined) ||
    (given !== undefined && Object.entries(given).some(([k, v]) => v === undefined && options.parent[k] !== undefined))
  if (removes) return { env: buildEnv(options), extend: false }
  const env: Record<string, string> = { ...SDK_ENV }
  for (const [k, v] of trace) if (v !== undefined) env[k] = v
  if (given !== undefined) { for (const [k, v] of Object.entries(given)) if (v !== undefined) env[k] = v }
  for (const k of strip) delete env[k]
  return { env, extend: true }
}
