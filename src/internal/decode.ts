/** @internal */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as M from "../Message.js"

type Raw = { readonly [key: string]: unknown }
type Check = (u: unknown) => boolean

interface Validators {
  readonly byType: ReadonlyMap<string, Schema.Schema.Any>
  readonly system: ReadonlyMap<string, Schema.Schema.Any>
  readonly checks: Map<Schema.Schema.Any, Check>
  readonly block: Check
  readonly streamEventTypes: ReadonlySet<string>
  readonly resultErrorSubtypes: ReadonlySet<string>
}

let validators: Validators | undefined

// Built lazily: this module and Message.ts import each other.
const get = (): Validators => {
  if (validators !== undefined) return validators
  const systemSchemas: ReadonlyArray<Schema.Schema.Any> = M.SystemMessage.members
  const system = new Map<string, Schema.Schema.Any>()
  for (const s of systemSchemas) {
    const ast = s.ast
    if (ast._tag === "TypeLiteral") {
      const sub = ast.propertySignatures.find((p) => p.name === "subtype")
      if (sub && sub.type._tag === "Literal" && typeof sub.type.literal === "string") system.set(sub.type.literal, s)
    }
  }
  validators = {
    byType: new Map<string, Schema.Schema.Any>([
      ["assistant", M.AssistantMessage],
      ["user", M.UserMessage],
      ["stream_event", M.StreamEventMessage],
      ["rate_limit_event", M.RateLimitEvent],
      ["tool_progress", M.ToolProgressMessage],
      ["auth_status", M.AuthStatusMessage],
      ["tool_use_summary", M.ToolUseSummaryMessage],
      ["prompt_suggestion", M.PromptSuggestionMessage],
      ["conversation_reset", M.ConversationResetMessage],
      ["control_request", M.ControlRequest],
      ["control_response", M.ControlResponse],
      ["control_cancel_request", M.ControlCancelRequest],
      ["keep_alive", M.KeepAlive]
    ]),
    system,
    checks: new Map(),
    block: Schema.is(M.ContentBlock),
    streamEventTypes: new Set([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ]),
    resultErrorSubtypes: new Set(M.ResultError.fields.subtype.literals)
  }
  return validators
}

const checkOf = (v: Validators, schema: Schema.Schema.Any): Check => {
  let check = v.checks.get(schema)
  if (check === undefined) {
    check = Schema.is(schema)
    v.checks.set(schema, check)
  }
  return check
}

const unknown = (raw: Raw, reason: M.UnknownMessage["reason"], issue?: string): M.UnknownMessage =>
  issue === undefined ? { type: "unknown", reason, raw } : { type: "unknown", reason, raw, issue }

const describe = (schema: Schema.Schema.Any, raw: unknown): string => {
  const result = ParseResult.validateEither(schema as Schema.Schema<unknown>)(raw)
  return result._tag === "Left" ? ParseResult.TreeFormatter.formatIssueSync(result.left) : "unknown mismatch"
}

const isRecord = (u: unknown): u is Raw => typeof u === "object" && u !== null && !Array.isArray(u)

const normalizeBlocks = (v: Validators, content: unknown): unknown => {
  if (!Array.isArray(content)) return content
  let changed = false
  const out = content.map((block: unknown) => {
    if (v.block(block)) return block
    changed = true
    return { type: "unknown", raw: block }
  })
  return changed ? out : content
}

/** Re-validates a message after replacing content blocks this SDK does not know with `unknown` blocks. */
const withNormalizedContent = (v: Validators, schema: Schema.Schema.Any, raw: Raw): M.StdoutMessage => {
  const inner = raw["message"]
  if (isRecord(inner)) {
    const content = normalizeBlocks(v, inner["content"])
    if (content !== inner["content"]) {
      const copy = { ...raw, message: { ...inner, content } }
      if (checkOf(v, schema)(copy)) return copy as M.StdoutMessage
    }
  }
  return unknown(raw, "invalid", describe(schema, raw))
}

const decodeStreamEvent = (v: Validators, raw: Raw): M.StdoutMessage => {
  const event = raw["event"]
  if (!isRecord(event) || typeof event["type"] !== "string") {
    return unknown(raw, "invalid", describe(M.StreamEventMessage, raw))
  }
  if (!v.streamEventTypes.has(event["type"])) return unknown(raw, "unknown_subtype")
  if (event["type"] === "content_block_start" && isRecord(event["content_block"])) {
    const block = event["content_block"]
    if (!v.block(block)) {
      const copy = { ...raw, event: { ...event, content_block: { type: "unknown", raw: block } } }
      if (checkOf(v, M.StreamEventMessage)(copy)) return copy as M.StdoutMessage
    }
  }
  return unknown(raw, "invalid", describe(M.StreamEventMessage, raw))
}

/** @internal */
export const decode = (input: unknown): M.StdoutMessage => {
  if (!isRecord(input)) return unknown({ value: input }, "invalid", "not a JSON object")
  const raw = input
  const type = raw["type"]
  if (typeof type !== "string") return unknown(raw, "invalid", "missing string field `type`")
  const v = get()
  let schema: Schema.Schema.Any | undefined
  if (type === "system") {
    const subtype = raw["subtype"]
    schema = typeof subtype === "string" ? v.system.get(subtype) : undefined
    if (schema === undefined) return unknown(raw, "unknown_subtype")
  } else if (type === "result") {
    const subtype = raw["subtype"]
    if (subtype === "success") schema = M.ResultSuccess
    else if (typeof subtype === "string" && v.resultErrorSubtypes.has(subtype)) schema = M.ResultError
    else return unknown(raw, "unknown_subtype")
  } else {
    schema = v.byType.get(type)
    if (schema === undefined) return unknown(raw, "unknown_type")
  }
  if (checkOf(v, schema)(raw)) return raw as M.StdoutMessage
  if (type === "assistant" || type === "user") return withNormalizedContent(v, schema, raw)
  if (type === "stream_event") return decodeStreamEvent(v, raw)
  return unknown(raw, "invalid", describe(schema, raw))
}
