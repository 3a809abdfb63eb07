/** @internal */
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import type * as M from "../../Message.js"

type Raw = { readonly [key: string]: unknown }
type Check = (u: unknown) => boolean
/** Compiles one AST node, memoized per compiler (see {@link makeCompiler}). */
type Compile = (ast: AST.AST) => Check

// ---------------------------------------------------------------------------------------------------------------------
// A fast `Schema.is`: compiles a schema's type-side AST into a plain predicate that allocates nothing.
//
// `Schema.is` runs the general parser, which builds an output copy of every struct and an `Either` per property; on
// the stdout hot path that doubled the allocations of `JSON.parse` itself. The compiled predicate answers exactly what
// `Schema.is(schema)` answers (`exact: true`, excess properties ignored) for the AST nodes the wire schemas use
// (structs, records, arrays, tuples, unions, literals, keywords); any other node (refinements, declarations, template
// literals, …) is delegated to the general parser for that node, so the semantics cannot drift.
// ---------------------------------------------------------------------------------------------------------------------

const hasOwn = Object.prototype.hasOwnProperty
const always: Check = () => true
const never: Check = () => false

/** Delegates one node to the general parser (the reference semantics). */
const slow = (ast: AST.AST): Check => {
  const is = ParseResult.is({ ast } as Parameters<typeof ParseResult.is>[0])
  return (u) => is(u)
}

const isRecordLike = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The literal values a required property must have for `ast` to match, if it is a literal discriminator. */
const literalsOf = (ast: AST.AST): ReadonlyArray<AST.LiteralValue> | undefined => {
  if (ast._tag === "Literal") return [ast.literal]
  if (ast._tag === "Union") {
    const out: Array<AST.LiteralValue> = []
    for (const member of ast.types) {
      if (member._tag !== "Literal") return undefined
      out.push(member.literal)
    }
    return out
  }
  return undefined
}

const compileTypeLiteral = (ast: AST.TypeLiteral, compile: Compile): Check => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return (u) => u !== null && u !== undefined
  }
  const names = ast.propertySignatures.map((ps) => ps.name)
  const optional = ast.propertySignatures.map((ps) => ps.isOptional)
  const types = ast.propertySignatures.map((ps) => compile(ps.type))
  const count = names.length
  const indexes = ast.indexSignatures.map((is) => {
    let parameter: AST.AST = is.parameter
    while (parameter._tag === "Refinement") parameter = parameter.from
    const symbols = parameter._tag === "SymbolKeyword"
    const key = compile(is.parameter)
    const value = compile(is.type)
    const trivialValue = is.type._tag === "UnknownKeyword" || is.type._tag === "AnyKeyword"
    return { symbols, key, value, trivialValue }
  })
  const checkIndexes = indexes.length === 0 ? undefined : (u: { readonly [key: string]: unknown }): boolean => {
    for (const index of indexes) {
      if (index.trivialValue) continue
      const keys: ReadonlyArray<PropertyKey> = index.symbols ? Object.getOwnPropertySymbols(u) : Object.keys(u)
      for (const key of keys) {
        if (index.key(key) && !index.value((u as Record<PropertyKey, unknown>)[key])) return false
      }
    }
    return true
  }
  return (u) => {
    if (!isRecordLike(u)) return false
    for (let i = 0; i < count; i++) {
      const name = names[i]!
      if (!hasOwn.call(u, name)) {
        if (optional[i]) continue
        return false
      }
      if (!types[i]!((u as Record<PropertyKey, unknown>)[name])) return false
    }
    return checkIndexes === undefined || checkIndexes(u)
  }
}

interface UnionPlan {
  /** The discriminating property. */
  readonly key: PropertyKey
  /** For each literal value of the key: the members that may match, in union order. */
  readonly buckets: ReadonlyMap<AST.LiteralValue, ReadonlyArray<number>>
  /** The members that do not require the key to hold a literal (they may match anything). */
  readonly others: ReadonlyArray<number>
}

/**
 * How to dispatch a union on a literal discriminator (`type`, `subtype`, …): a struct member that requires an own
 * property with literal values can only match an input whose property holds one of them. `undefined` when no
 * property narrows anything.
 */
const unionPlan = (ast: AST.Union): UnionPlan | undefined => {
  const keys = new Set<PropertyKey>()
  for (const member of ast.types) {
    if (member._tag !== "TypeLiteral") continue
    for (const ps of member.propertySignatures) {
      if (!ps.isOptional && literalsOf(ps.type) !== undefined) keys.add(ps.name)
    }
  }
  let best: UnionPlan | undefined
  for (const key of keys) {
    const buckets = new Map<AST.LiteralValue, Array<number>>()
    const others: Array<number> = []
    ast.types.forEach((member, i) => {
      const ps = member._tag === "TypeLiteral" ? member.propertySignatures.find((p) => p.name === key) : undefined
      const literals = ps !== undefined && !ps.isOptional ? literalsOf(ps.type) : undefined
      if (literals === undefined) others.push(i)
      else {
        for (const literal of literals) {
          const bucket = buckets.get(literal)
          if (bucket === undefined) buckets.set(literal, [i])
          else if (!bucket.includes(i)) bucket.push(i)
        }
      }
    })
    if (best === undefined || others.length < best.others.length) {
      // keep the union's order: the answer does not depend on it, but the work done does
      for (const [literal, indexes] of buckets) buckets.set(literal, [...indexes, ...others].sort((a, b) => a - b))
      best = { key, buckets, others }
    }
  }
  return best === undefined || best.others.length === ast.types.length ? undefined : best
}

const compileUnion = (ast: AST.Union, compile: Compile): Check => {
  const members = ast.types.map(compile)
  if (members.length === 1) return members[0]!
  const plan = unionPlan(ast)
  if (plan === undefined) {
    return (u) => {
      for (const member of members) if (member(u)) return true
      return false
    }
  }
  const key = plan.key
  const buckets = new Map<unknown, ReadonlyArray<Check>>()
  for (const [literal, indexes] of plan.buckets) buckets.set(literal, indexes.map((i) => members[i]!))
  const fallback = plan.others.map((i) => members[i]!)
  return (u) => {
    const list = typeof u === "object" && u !== null
      ? buckets.get((u as Record<PropertyKey, unknown>)[key]) ?? fallback
      : fallback
    for (const member of list) if (member(u)) return true
    return false
  }
}

const compileTuple = (ast: AST.TupleType, compile: Compile): Check => {
  const elements = ast.elements.map((e) => compile(e.type))
  const optional = ast.elements.map((e) => e.isOptional)
  const rest = ast.rest.map((r) => compile(r.type))
  let requiredLen = ast.elements.filter((e) => !e.isOptional).length
  if (rest.length > 0) requiredLen += rest.length - 1
  const head = rest[0]
  const tail = rest.slice(1)
  // the common case, `Schema.Array(item)`
  if (elements.length === 0 && head !== undefined && tail.length === 0) {
    return (u) => {
      if (!Array.isArray(u)) return false
      for (let i = 0; i < u.length; i++) if (!head(u[i])) return false
      return true
    }
  }
  return (u) => {
    if (!Array.isArray(u)) return false
    const len = u.length
    if (len < requiredLen) return false
    if (head === undefined && len > elements.length) return false
    let i = 0
    for (; i < elements.length; i++) {
      if (len < i + 1) {
        if (optional[i]) continue
      } else if (!elements[i]!(u[i])) return false
    }
    if (head !== undefined) {
      for (; i < len - tail.length; i++) if (!head(u[i])) return false
      for (let j = 0; j < tail.length; j++) {
        const index = i + j
        if (len < index + 1) continue
        if (!tail[j]!(u[index])) return false
      }
    }
    return true
  }
}

const buildClosure = (ast: AST.AST, compile: Compile): Check => {
  switch (ast._tag) {
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
      return always
    case "NeverKeyword":
      return never
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "BigIntKeyword":
      return (u) => typeof u === "bigint"
    case "SymbolKeyword":
      return (u) => typeof u === "symbol"
    case "ObjectKeyword":
      return (u) => (typeof u === "object" && u !== null) || typeof u === "function"
    case "TypeLiteral":
      return compileTypeLiteral(ast, compile)
    case "Union":
      return compileUnion(ast, compile)
    case "TupleType":
      return compileTuple(ast, compile)
    case "Suspend": {
      let inner: Check | undefined
      return (u) => (inner ??= compile(ast.f()))(u)
    }
    default:
      return slow(ast)
  }
}

// Structs, unions and arrays are also compiled to JavaScript source when the platform allows it (`new Function`):
// property names and literals become constants, nested keyword and literal checks are inlined, and every access site
// is monomorphic, which makes the checks several times faster than the closures above (the closures stay the
// fallback, and the reference for what the generated code must do).

/** An inline JavaScript condition on `v` for simple nodes (literals, keywords and unions of them). */
const inlineCondition = (ast: AST.AST, v: string): string | undefined => {
  switch (ast._tag) {
    case "Literal": {
      const literal = ast.literal
      if (literal === null) return `${v} === null`
      if (typeof literal === "string") return `${v} === ${JSON.stringify(literal)}`
      if (typeof literal === "number" && Number.isFinite(literal)) return `${v} === ${String(literal)}`
      if (typeof literal === "boolean") return `${v} === ${String(literal)}`
      return undefined
    }
    case "UndefinedKeyword":
      return `${v} === undefined`
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
      return "true"
    case "NeverKeyword":
      return "false"
    case "StringKeyword":
      return `typeof ${v} === "string"`
    case "NumberKeyword":
      return `typeof ${v} === "number"`
    case "BooleanKeyword":
      return `typeof ${v} === "boolean"`
    case "BigIntKeyword":
      return `typeof ${v} === "bigint"`
    case "SymbolKeyword":
      return `typeof ${v} === "symbol"`
    case "Union": {
      const parts: Array<string> = []
      for (const member of ast.types) {
        const part = inlineCondition(member, v)
        if (part === undefined) return undefined
        parts.push(`(${part})`)
      }
      return parts.length === 0 ? "false" : parts.join(" || ")
    }
    default:
      return undefined
  }
}

interface Generator {
  readonly deps: Array<Check>
  /** A condition on `v`: inline when simple, else a call to the compiled check of the node. */
  readonly condition: (ast: AST.AST, v: string) => string
}

const makeGenerator = (compile: Compile): Generator => {
  const deps: Array<Check> = []
  return {
    deps,
    condition: (ast, v) => {
      const inline = inlineCondition(ast, v)
      if (inline !== undefined) return inline
      deps.push(compile(ast))
      return `d[${deps.length - 1}](${v})`
    }
  }
}

const finish = (g: Generator, body: string): Check | undefined => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    return new Function("d", "h", `"use strict"; return function check(u) {\n${body}\n}`)(g.deps, hasOwn) as Check
  } catch {
    return undefined
  }
}

const propertyKey = (
  name: PropertyKey
): string | undefined => (typeof name === "string" ? JSON.stringify(name) : undefined)

const generateTypeLiteral = (ast: AST.TypeLiteral, compile: Compile): Check | undefined => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) return undefined
  // index signatures with a value to check are left to the closure version
  for (const is of ast.indexSignatures) {
    if (is.type._tag !== "UnknownKeyword" && is.type._tag !== "AnyKeyword") return undefined
  }
  const g = makeGenerator(compile)
  const lines = ["if (typeof u !== \"object\" || u === null || Array.isArray(u)) return false", "var v"]
  for (const ps of ast.propertySignatures) {
    const key = propertyKey(ps.name)
    if (key === undefined) return undefined
    const condition = g.condition(ps.type, "v")
    if (ps.isOptional) {
      if (condition !== "true") {
        lines.push(`if (h.call(u, ${key})) { v = u[${key}]; if (!(${condition})) return false }`)
      }
    } else {
      lines.push(`if (!h.call(u, ${key})) return false`)
      if (condition !== "true") lines.push(`v = u[${key}]`, `if (!(${condition})) return false`)
    }
  }
  lines.push("return true")
  return finish(g, lines.join("\n"))
}

const generateUnion = (ast: AST.Union, compile: Compile): Check | undefined => {
  const inline = inlineCondition(ast, "u")
  const g = makeGenerator(compile)
  if (inline !== undefined) return finish(g, `return ${inline}`)
  const plan = unionPlan(ast)
  if (plan === undefined) {
    return finish(
      g,
      ast.types.map((member) => `if (${g.condition(member, "u")}) return true`).concat("return false").join("\n")
    )
  }
  const key = propertyKey(plan.key)
  if (key === undefined) return undefined
  const anyOf = (indexes: ReadonlyArray<number>) =>
    indexes.length === 0 ? "return false" : `return ${indexes.map((i) => g.condition(ast.types[i]!, "u")).join(" || ")}`
  const cases: Array<string> = []
  for (const [literal, indexes] of plan.buckets) {
    const label = inlineCondition(new AST.Literal(literal), "")
    if (label === undefined) return undefined
    cases.push(`case ${label.slice(" === ".length)}: ${anyOf(indexes)}`)
  }
  return finish(
    g,
    [
      "if (typeof u === \"object\" && u !== null) switch (u[" + key + "]) {",
      ...cases,
      "}",
      anyOf(plan.others)
    ].join("\n")
  )
}

const generateArray = (ast: AST.TupleType, compile: Compile): Check | undefined => {
  if (ast.elements.length !== 0 || ast.rest.length !== 1) return undefined
  const g = makeGenerator(compile)
  const condition = g.condition(ast.rest[0]!.type, "v")
  return finish(
    g,
    `if (!Array.isArray(u)) return false\nfor (var i = 0; i < u.length; i++) { var v = u[i]; if (!(${condition})) return false }\nreturn true`
  )
}

const build = (ast: AST.AST, compile: Compile): Check => {
  switch (ast._tag) {
    case "TypeLiteral":
      return generateTypeLiteral(ast, compile) ?? compileTypeLiteral(ast, compile)
    case "Union":
      return generateUnion(ast, compile) ?? compileUnion(ast, compile)
    case "TupleType":
      return generateArray(ast, compile) ?? compileTuple(ast, compile)
    default:
      return buildClosure(ast, compile)
  }
}

/**
 * A compiler of type-side predicates. Its memo table belongs to it: a node shared by several schemas (or reached
 * again through a `Suspend`) is compiled once per compiler, and the table goes away with the compiler.
 */
const makeCompiler = (): Compile => {
  const memo = new Map<AST.AST, Check>()
  const compile: Compile = (ast) => {
    let check = memo.get(ast)
    if (check === undefined) {
      check = build(ast, compile)
      memo.set(ast, check)
    }
    return check
  }
  return compile
}

/**
 * The compiled equivalent of `Schema.is(schema)`. Each call compiles: compile once where the schema is known and
 * keep the result.
 *
 * @internal
 */
export const compiledIs = (schema: { readonly ast: AST.AST }): Check => makeCompiler()(AST.typeAST(schema.ast))

/** {@link compiledIs} as the type guard `Schema.is` is (decode.validate.test holds the two to the same answers). @internal */
export const compiledGuard = <A, I, R>(schema: Schema.Schema<A, I, R>): (u: unknown) => u is A => {
  const check = compiledIs(schema)
  return (u: unknown): u is A => check(u)
}

// ---------------------------------------------------------------------------------------------------------------------
// decoding
// ---------------------------------------------------------------------------------------------------------------------

/**
 * The schemas a decoder checks stdout messages against. They are handed in by Message.ts, which defines them (this
 * module only knows their types).
 *
 * @internal
 */
export interface Schemas {
  /** The schema of each `type` other than `system` and `result`. */
  readonly byType: ReadonlyArray<readonly [type: string, schema: Schema.Schema.Any]>
  /** The `system` messages, each a struct with a literal `subtype`. */
  readonly system: ReadonlyArray<Schema.Schema.Any>
  readonly resultSuccess: Schema.Schema.Any
  readonly resultError: Schema.Schema.Any
  /** The `subtype`s that {@link Schemas.resultError} accepts. */
  readonly resultErrorSubtypes: ReadonlyArray<string>
  readonly streamEvent: Schema.Schema.Any
  readonly contentBlock: Schema.Schema.Any
}

/** The `event.type`s of a `stream_event` this SDK knows; another one is an `unknown_subtype`. */
const STREAM_EVENT_TYPES: ReadonlySet<string> = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop"
])

interface Validators {
  readonly schemas: Schemas
  readonly byType: ReadonlyMap<string, Schema.Schema.Any>
  readonly system: ReadonlyMap<string, Schema.Schema.Any>
  readonly resultErrorSubtypes: ReadonlySet<string>
  /** The compiled check of a schema, compiled on its first use. */
  readonly checkOf: (schema: Schema.Schema.Any) => Check
  readonly block: Check
}

const makeValidators = (schemas: Schemas): Validators => {
  const system = new Map<string, Schema.Schema.Any>()
  for (const s of schemas.system) {
    const ast = s.ast
    if (ast._tag === "TypeLiteral") {
      const sub = ast.propertySignatures.find((p) => p.name === "subtype")
      if (sub && sub.type._tag === "Literal" && typeof sub.type.literal === "string") system.set(sub.type.literal, s)
    }
  }
  const compile = makeCompiler()
  // keyed by schema: `typeAST` may build a new node on every call
  const checks = new Map<Schema.Schema.Any, Check>()
  const checkOf = (schema: Schema.Schema.Any): Check => {
    let check = checks.get(schema)
    if (check === undefined) checks.set(schema, check = compile(AST.typeAST(schema.ast)))
    return check
  }
  let block: Check | undefined
  return {
    schemas,
    byType: new Map(schemas.byType),
    system,
    resultErrorSubtypes: new Set(schemas.resultErrorSubtypes),
    checkOf,
    block: (u) => (block ??= checkOf(schemas.contentBlock))(u)
  }
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
      if (v.checkOf(schema)(copy)) return copy as M.StdoutMessage
    }
  }
  return unknown(raw, "invalid", describe(schema, raw))
}

const decodeStreamEvent = (v: Validators, raw: Raw): M.StdoutMessage => {
  const schema = v.schemas.streamEvent
  const event = raw["event"]
  if (!isRecord(event) || typeof event["type"] !== "string") {
    return unknown(raw, "invalid", describe(schema, raw))
  }
  if (!STREAM_EVENT_TYPES.has(event["type"])) return unknown(raw, "unknown_subtype")
  if (event["type"] === "content_block_start" && isRecord(event["content_block"])) {
    const block = event["content_block"]
    if (!v.block(block)) {
      const copy = { ...raw, event: { ...event, content_block: { type: "unknown", raw: block } } }
      if (v.checkOf(schema)(copy)) return copy as M.StdoutMessage
    }
  }
  return unknown(raw, "invalid", describe(schema, raw))
}

const decodeWith = (v: Validators, input: unknown): M.StdoutMessage => {
  if (!isRecord(input)) return unknown({ value: input }, "invalid", "not a JSON object")
  const raw = input
  const type = raw["type"]
  if (typeof type !== "string") return unknown(raw, "invalid", "missing string field `type`")
  let schema: Schema.Schema.Any | undefined
  if (type === "system") {
    const subtype = raw["subtype"]
    schema = typeof subtype === "string" ? v.system.get(subtype) : undefined
    if (schema === undefined) return unknown(raw, "unknown_subtype")
  } else if (type === "result") {
    const subtype = raw["subtype"]
    if (subtype === "success") schema = v.schemas.resultSuccess
    else if (typeof subtype === "string" && v.resultErrorSubtypes.has(subtype)) schema = v.schemas.resultError
    else return unknown(raw, "unknown_subtype")
  } else {
    schema = v.byType.get(type)
    if (schema === undefined) return unknown(raw, "unknown_type")
  }
  if (v.checkOf(schema)(raw)) return raw as M.StdoutMessage
  if (type === "assistant" || type === "user") return withNormalizedContent(v, schema, raw)
  if (type === "stream_event") return decodeStreamEvent(v, raw)
  return unknown(raw, "invalid", describe(schema, raw))
}

/**
 * A decoder of parsed stdout values against `schemas` (see `Message.decode`). It compiles each schema's check on
 * first use and keeps it.
 *
 * @internal
 */
export const makeDecoder = (schemas: Schemas): (input: unknown) => M.StdoutMessage => {
  const v = makeValidators(schemas)
  return (input) => decodeWith(v, input)
}
