/** @internal */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { createRequire } from "node:module"
import type { McpSdkServerConfig } from "../AgentOptions.js"
import * as SdkMcp from "../SdkMcp.js"

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

let zod: ZodModule | undefined
const loadZod = (): ZodModule => {
  if (zod !== undefined) return zod
  const loaded: unknown = createRequire(import.meta.url)("zod")
  if (!isZodModule(loaded)) throw new Error("tool(): zod 4 is needed for zod schemas (npm install zod@4)")
  zod = loaded
  return loaded
}

/** `true` for a zod raw shape (`{ a: z.string(), … }`): an object whose values are zod 4 schemas. @internal */
export const isZodRawShape = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Schema.isSchema(u) &&
  Object.values(u).every((v) => typeof v === "object" && v !== null && "_zod" in v)

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
  if (!isZodRawShape(inputSchema)) {
    throw new TypeError(`tool(${name}): inputSchema must be a zod raw shape or an Effect Schema`)
  }
  const z = loadZod()
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
