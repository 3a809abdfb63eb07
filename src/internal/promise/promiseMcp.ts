/** @internal */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { createRequire } from "node:module"
import { InvalidOptions } from "../../AgentError.js"
import type { McpSdkServerConfig } from "../../AgentOptions.js"
import * as SdkMcp from "../../SdkMcp.js"

/** The parts of zod 4 this module uses (zod is an optional peer dependency, loaded only for zod shapes). */
interface ZodSafeParse {
  readonly success: boolean
  readonly data?: unknown
  readonly error?: unknown
}
interface ZodModule {
  readonly object: (shape: Readonly<Record<string, unknown>>) => { readonly safeParse: (u: unknown) => ZodSafeParse }
  readonly toJSONSchema: (schema: unknown) => Readonly<Record<string, unknown>>
  readonly prettifyError?: (error: unknown) => string
}

const isZodModule = (u: unknown): u is ZodModule =>
  typeof u === "object" && u !== null && "object" in u && typeof u.object === "function" && "toJSONSchema" in u &&
  typeof u.toJSONSchema === "function"

const invalidSchema = (name: string, reason: string) =>
  new InvalidOptions({ option: "inputSchema", description: `tool ${name}: ${reason}` })

/**
 * zod 4's API, from the `zod/v4` entry (as the official SDK imports it): zod 4 has it, next to its main entry.
 * Loaded on use (Node's `require` keeps it after the first), so that zod stays an optional peer dependency.
 */
const loadZod = (name: string): ZodModule => {
  let loaded: unknown
  try {
    loaded = createRequire(import.meta.url)("zod/v4")
  } catch (cause) {
    throw invalidSchema(
      name,
      `zod schemas need the zod package, an optional peer dependency (npm install zod@4): ${String(cause)}`
    )
  }
  if (!isZodModule(loaded)) throw invalidSchema(name, "the installed zod has no zod 4 API (npm install zod@4)")
  return loaded
}

const isObject = (u: unknown): u is object => typeof u === "object" && u !== null

/** A zod 4 schema (classic or mini) carries its internals in `_zod`. */
const isZod4Schema = (u: unknown): boolean => isObject(u) && "_zod" in u

/** A zod 3 schema (zod@3, or `zod/v3` of zod 4) has `_def` and `safeParse`, but no `_zod`. */
const isZod3Schema = (u: unknown): boolean =>
  isObject(u) && !("_zod" in u) && "_def" in u && "safeParse" in u && typeof u.safeParse === "function"

/** `true` for a zod raw shape (`{ a: z.string(), … }`): an object whose values are zod 4 schemas. @internal */
export const isZodRawShape = (u: unknown): u is Readonly<Record<string, unknown>> =>
  isObject(u) && !Schema.isSchema(u) && Object.values(u).every(isZod4Schema)

/** Why `inputSchema` is neither a zod 4 raw shape nor an Effect Schema. */
const notASchema = (name: string, inputSchema: unknown): InvalidOptions => {
  if (!isObject(inputSchema)) {
    return invalidSchema(name, "inputSchema must be a zod 4 raw shape ({ a: z.string() }) or an Effect Schema")
  }
  for (const [key, value] of Object.entries(inputSchema)) {
    if (isZod4Schema(value)) continue
    if (isZod3Schema(value)) {
      return invalidSchema(
        name,
        `field ${JSON.stringify(key)} is a zod 3 schema; only zod 4 schemas are supported (zod@^4, as in the ` +
          `official SDK)`
      )
    }
    if (Schema.isSchema(value)) {
      return invalidSchema(
        name,
        `field ${JSON.stringify(key)} is an Effect Schema: pass Schema.Struct({ ... }), not its fields`
      )
    }
    return invalidSchema(name, `field ${JSON.stringify(key)} is not a zod 4 schema`)
  }
  return invalidSchema(name, "inputSchema must be a zod 4 raw shape ({ a: z.string() }) or an Effect Schema")
}

const squash = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined

/** @internal */
export const tool = (
  name: string,
  description: string,
  inputSchema: Readonly<Record<string, unknown>> | Schema.Schema.Any,
  handler: (args: never, extra: SdkMcp.ToolExtra) => Promise<SdkMcp.ToolResult>,
  options: SdkMcp.ToolOptions = {}
): SdkMcp.SdkMcpTool => {
  const run = (args: unknown, extra: SdkMcp.ToolExtra) =>
    Effect.tryPromise({
      try: () => (handler as (args: unknown, extra: SdkMcp.ToolExtra) => Promise<SdkMcp.ToolResult>)(args, extra),
      catch: (error) => error
    })
  if (Schema.isSchema(inputSchema)) {
    return SdkMcp.tool(name, description, inputSchema as Schema.Schema<unknown>, run, options)
  }
  if (!isZodRawShape(inputSchema)) throw notASchema(name, inputSchema)
  const z = loadZod(name)
  const object = z.object(inputSchema)
  const { $schema: _drop, ...jsonSchema } = z.toJSONSchema(object)
  return SdkMcp.toolFromJsonSchema(
    name,
    description,
    jsonSchema,
    (args) => {
      const parsed = object.safeParse(args)
      if (parsed.success) return Either.right(parsed.data)
      const message = z.prettifyError?.(parsed.error) ?? String(parsed.error)
      return Either.left(message)
    },
    run,
    options
  )
}

/** @internal */
export const createSdkMcpServer = (options: {
  readonly name: string
  readonly version?: string | undefined
  readonly tools?: ReadonlyArray<SdkMcp.SdkMcpTool> | undefined
  readonly instructions?: string | undefined
  readonly alwaysLoad?: boolean | undefined
  readonly timeout?: number | undefined
}): McpSdkServerConfig => {
  const exit = Effect.runSyncExit(SdkMcp.createSdkMcpServer({
    name: options.name,
    tools: options.tools ?? [],
    ...(options.version !== undefined ? { version: options.version } : {}),
    ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    ...(options.alwaysLoad !== undefined ? { alwaysLoad: options.alwaysLoad } : {}),
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {})
  }))
  if (Exit.isFailure(exit)) throw squash(exit)
  return exit.value
}
