/** @internal */

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
}

const stripped = (options: EnvInput): ReadonlyArray<string> =>
  options.keep === undefined || options.keep.length === 0
    ? STRIPPED_ENV
    : STRIPPED_ENV.filter((k) => !options.keep!.includes(k))

/**
 * Builds the child's environment: the parent's (or nothing, in `replace` mode), plus the SDK's variables, plus the
 * caller's overlay (`undefined` deletes a variable), minus the stripped variables not kept.
 *
 * @internal
 */
export const buildEnv = (options: EnvInput): Record<string, string> => {
  const out: Record<string, string> = {}
  if (options.mode !== "replace") {
    for (const [k, v] of Object.entries(options.parent)) if (v !== undefined) out[k] = v
  }
  Object.assign(out, SDK_ENV)
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
 * When something must be removed (a stripped variable the parent has, a variable the caller set to `undefined`)
 * or in `replace` mode, the whole environment from {@link buildEnv}, with `extend: false`.
 *
 * @internal
 */
export const commandEnv = (options: EnvInput): { readonly env: Record<string, string>; readonly extend: boolean } => {
  const given = options.env
  const strip = stripped(options)
  const removes = options.mode === "replace" ||
    strip.some((k) => options.parent[k] !== undefined) ||
    (given !== undefined && Object.entries(given).some(([k, v]) => v === undefined && options.parent[k] !== undefined))
  if (removes) return { env: buildEnv(options), extend: false }
  const env: Record<string, string> = { ...SDK_ENV }
  if (given !== undefined) { for (const [k, v] of Object.entries(given)) if (v !== undefined) env[k] = v }
  for (const k of strip) delete env[k]
  return { env, extend: true }
}
