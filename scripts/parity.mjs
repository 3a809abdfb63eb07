#!/usr/bin/env node
// npm run parity: lists the official SDK's public surface (its `sdk.d.ts`, the devDependency) next to what this SDK
// does with each item, from the table in docs/PARITY.md, and exits non-zero when the two disagree:
//   - the official surface has something the table does not mention (a new option, hook event, message, …);
//   - the table names something the official surface no longer has;
//   - the table says something the code contradicts (an option called supported that the Promise API rejects or does
//     not declare, a function called supported that `effect-claude-agent/promise` does not export, a hook event
//     called supported that the Hooks module does not list, …).
// Bumping `@anthropic-ai/claude-agent-sdk` then shows exactly what to add.
//
//   npm run parity                                        the listing and the problems, if any
//   node scripts/parity.mjs --dts <sdk.d.ts> --table <PARITY.md>   another declaration file or table (tests)
//   node scripts/parity.mjs --quiet                       only the problems
//
// The official surface is read with the TypeScript compiler API (declarations only, nothing is executed); this SDK's
// side is read from its sources the same way (src/promise.ts, src/Hooks.ts, src/Message.ts and the Promise API's
// list of rejected options).
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))

/** The kinds of items, in the order they are listed, with their headings. */
export const KINDS = {
  function: "Exported functions",
  option: "Options fields",
  query: "Query methods",
  message: "SDK message types (SDKMessage)",
  hook: "Hook events",
  control: "Control request subtypes"
}

export const STATUSES = ["supported", "unsupported", "not-applicable"]

const parse = (file) => ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)

const isExported = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true

const memberName = (member) =>
  member.name === undefined
    ? undefined
    : ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)
    ? member.name.text
    : undefined

/** The string literals a type node stands for (`'a'`, `'a' | 'b'`); none for anything else. */
const literals = (node) => {
  if (node === undefined) return []
  if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) return [node.literal.text]
  if (ts.isUnionTypeNode(node)) return node.types.flatMap(literals)
  if (ts.isParenthesizedTypeNode(node)) return literals(node.type)
  return []
}

/**
 * The official surface declared in `dts`: exported functions, the `Options` fields, the `Query` interface's own
 * methods, the members of the `SDKMessage` union (with their `type` / `subtype`), the hook events (`HOOK_EVENTS`) and
 * the subtypes of the control requests (`SDKControlRequestInner`).
 */
export const officialSurface = (dts) => {
  const source = parse(dts)
  /** Every type alias and interface of the file, exported or not, by name. */
  const types = new Map()
  const functions = new Set()
  let hookEvents = []
  for (const statement of source.statements) {
    if (ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement)) {
      types.set(statement.name.text, statement)
    } else if (ts.isFunctionDeclaration(statement) && isExported(statement) && statement.name !== undefined) {
      functions.add(statement.name.text)
    } else if (ts.isVariableStatement(statement) && isExported(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (!ts.isIdentifier(declaration.name)) continue
        if (declaration.name.text === "HOOK_EVENTS") {
          const type = declaration.type
          const tuple = type !== undefined && ts.isTypeOperatorNode(type) ? type.type : type
          if (tuple !== undefined && ts.isTupleTypeNode(tuple)) hookEvents = tuple.elements.flatMap(literals)
        }
      }
    }
  }
  /** The members of a type alias or interface: its type literal's, an intersection's parts', a referenced type's. */
  const membersOf = (node, seen = new Set()) => {
    if (node === undefined) return []
    if (ts.isInterfaceDeclaration(node)) return [...node.members]
    if (ts.isTypeAliasDeclaration(node)) return membersOf(node.type, seen)
    if (ts.isTypeLiteralNode(node)) return [...node.members]
    if (ts.isIntersectionTypeNode(node)) return node.types.flatMap((t) => membersOf(t, seen))
    if (ts.isParenthesizedTypeNode(node)) return membersOf(node.type, seen)
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
      const name = node.typeName.text
      if (seen.has(name)) return []
      seen.add(name)
      return membersOf(types.get(name), seen)
    }
    return []
  }
  const property = (node, name) => membersOf(node).find((m) => memberName(m) === name)
  const unionMembers = (name) => {
    const alias = types.get(name)
    if (alias === undefined || !ts.isTypeAliasDeclaration(alias)) return []
    const type = alias.type
    return (ts.isUnionTypeNode(type) ? type.types : [type])
      .filter((t) => ts.isTypeReferenceNode(t) && ts.isIdentifier(t.typeName))
      .map((t) => t.typeName.text)
  }
  const names = (members) => [...new Set(members.map(memberName).filter((n) => n !== undefined))]

  /** A message type's `type` / `subtype` literals (those of each member, for a union such as SDKResultMessage). */
  const shape = (name) => {
    const parts = unionMembers(name)
    if (parts.length > 1) {
      const shapes = parts.map(shape)
      const merge = (field) => [...new Set(shapes.flatMap((s) => s[field]))]
      return { name, type: merge("type"), subtype: merge("subtype") }
    }
    return {
      name,
      type: literals(property(types.get(name), "type")?.type),
      subtype: literals(property(types.get(name), "subtype")?.type)
    }
  }
  const messages = unionMembers("SDKMessage").map(shape)
  const controls = unionMembers("SDKControlRequestInner").flatMap((name) =>
    literals(property(types.get(name), "subtype")?.type)
  )
  const query = types.get("Query")
  return {
    function: [...functions].sort(),
    option: names(membersOf(types.get("Options"))).sort(),
    query: query !== undefined && ts.isInterfaceDeclaration(query) ? names([...query.members]).sort() : [],
    message: messages.map((m) => m.name),
    hook: [...hookEvents],
    control: [...new Set(controls)],
    /** What each message type is on the wire. */
    messageShapes: new Map(messages.map((m) => [m.name, m]))
  }
}

/** The string keys of the object literal initialising the top-level `const name` of `file`. */
const objectKeys = (file, name) => {
  for (const statement of parse(file).statements) {
    if (!ts.isVariableStatement(statement)) continue
    for (const declaration of statement.declarationList.declarations) {
      if (!ts.isIdentifier(declaration.name) || declaration.name.text !== name) continue
      let init = declaration.initializer
      while (init !== undefined && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init))) init = init.expression
      if (init !== undefined && ts.isObjectLiteralExpression(init)) return init.properties.map(memberName)
      if (init !== undefined && ts.isArrayLiteralExpression(init)) {
        return init.elements.filter(ts.isStringLiteral).map((e) => e.text)
      }
    }
  }
  throw new Error(`${path.relative(root, file)}: no top-level const ${name} initialised with a literal`)
}

/** The keys of `const name` in whichever file of `dir` declares it (the Promise API's modules may move). */
const declaredIn = (dir, name) => {
  const declaring = tsFiles(dir).filter((file) => new RegExp(`\\bconst ${name}\\b`).test(fs.readFileSync(file, "utf8")))
  if (declaring.length !== 1) {
    throw new Error(`expected one file under ${path.relative(root, dir)} to declare ${name}, found ${declaring.length}`)
  }
  return objectKeys(declaring[0], name)
}

/** Every string literal written in `file` (e.g. the message types and subtypes the schemas of Message.ts name). */
const stringLiterals = (files) => {
  const out = new Set()
  for (const file of files) {
    const visit = (node) => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.add(node.text)
      ts.forEachChild(node, visit)
    }
    visit(parse(file))
  }
  return out
}

const tsFiles = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? tsFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** `entry` and the files of this repository it imports, directly or not (relative imports only). */
const localClosure = (entry) => {
  const seen = new Set()
  const visit = (file) => {
    if (seen.has(file) || !fs.existsSync(file)) return
    seen.add(file)
    for (const { fileName } of ts.preProcessFile(fs.readFileSync(file, "utf8"), true, false).importedFiles) {
      if (fileName.startsWith(".")) visit(path.resolve(path.dirname(file), fileName.replace(/\.js$/, ".ts")))
    }
  }
  visit(entry)
  return [...seen]
}

/**
 * What this SDK has, read from its sources: the names `effect-claude-agent/promise` exports, the fields of its
 * `Options` and `Query` (through the type checker, inherited fields included), the official options the Promise
 * API rejects by name, the Hooks module's event list, the literals of Message.ts and of the whole of src/.
 */
export const ourSurface = (src = path.join(root, "src")) => {
  const entry = path.join(src, "promise.ts")
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })
  // this SDK's own files the entry reaches, without node_modules: the names and fields needed are all declared in
  // src/ (a field whose type comes from a package is still listed), and the program is a few times faster to build
  const program = ts.createProgram(localClosure(entry), { ...config.options, noEmit: true, noResolve: true, types: [] })
  const checker = program.getTypeChecker()
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry))
  const exports = checker.getExportsOfModule(module)
  const propertiesOf = (name) => {
    const exported = exports.find((s) => s.name === name)
    if (exported === undefined) throw new Error(`src/promise.ts exports no ${name}`)
    // a re-export (`export { Options } from "./internal/…"`) is an alias of the declaration
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    return new Set(checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)).map((p) => p.name))
  }
  return {
    promiseExports: new Set(exports.map((s) => s.name)),
    promiseOptions: propertiesOf("Options"),
    promiseQuery: propertiesOf("Query"),
    rejectedOptions: new Set(declaredIn(path.join(src, "internal", "promise"), "unsupportedOptions")),
    hookEvents: new Set(objectKeys(path.join(src, "Hooks.ts"), "HOOK_EVENTS")),
    messageLiterals: stringLiterals([path.join(src, "Message.ts")]),
    srcLiterals: stringLiterals(tsFiles(src))
  }
}

const ROW = /^\|\s*(function|option|query|message|hook|control)\s*\|\s*`?([^`|]+?)`?\s*\|\s*([a-z-]+)\s*\|(.*)\|\s*$/

/**
 * The rows of the table: the lines of `file` that look like `| kind | name | status | notes |` (the kind one of
 * {@link KINDS}); other lines (prose, headings, the header rows) are ignored. Malformed statuses, rows without a reason
 * where one is needed and duplicate rows are problems.
 */
export const readTable = (file) => {
  const rows = new Map()
  const problems = []
  fs.readFileSync(file, "utf8").split("\n").forEach((line, index) => {
    const match = ROW.exec(line)
    if (match === null) return
    const [, kind, name, status, notes] = match
    const where = `${path.basename(file)}:${index + 1}`
    const key = `${kind}:${name}`
    if (!STATUSES.includes(status)) {
      problems.push(`${where}: ${kind} ${name}: status "${status}" is not one of ${STATUSES}`)
    } else if (status !== "supported" && notes.trim().length === 0) {
      problems.push(`${where}: ${kind} ${name}: ${status} needs a reason`)
    }
    if (rows.has(key)) problems.push(`${where}: ${kind} ${name} is listed twice`)
    rows.set(key, { kind, name, status, notes: notes.trim(), where })
  })
  return { rows, problems }
}

/** Why the code contradicts a row, if it does. */
const contradiction = (row, ours, official) => {
  const { kind, name, status } = row
  switch (kind) {
    case "function":
      if (status === "supported" && !ours.promiseExports.has(name)) {
        return "called supported, but effect-claude-agent/promise does not export it"
      }
      if (status !== "supported" && ours.promiseExports.has(name)) {
        return `called ${status}, but effect-claude-agent/promise exports it`
      }
      return undefined
    case "option":
      if (status === "supported" && ours.rejectedOptions.has(name)) {
        return "called supported, but the Promise API rejects it (unsupportedOptions in src/internal/promise/)"
      }
      if (status === "supported" && !ours.promiseOptions.has(name)) {
        return "called supported, but the Promise API's Options type has no such field"
      }
      if (status !== "unsupported" && ours.rejectedOptions.has(name)) {
        return "the Promise API rejects it (unsupportedOptions): the table must call it unsupported, with why"
      }
      if (status !== "supported" && ours.promiseOptions.has(name) && !ours.rejectedOptions.has(name)) {
        return `called ${status}, but the Promise API's Options has it and does not reject it`
      }
      return undefined
    case "query":
      if (status === "supported" && !ours.promiseQuery.has(name)) {
        return "called supported, but the Promise API's Query has no such method"
      }
      if (status !== "supported" && ours.promiseQuery.has(name)) {
        return `called ${status}, but the Promise API's Query has it`
      }
      return undefined
    case "hook":
      if (status === "supported" && !ours.hookEvents.has(name)) {
        return "called supported, but the Hooks module's HOOK_EVENTS does not list it"
      }
      if (status !== "supported" && ours.hookEvents.has(name)) {
        return `called ${status}, but the Hooks module's HOOK_EVENTS lists it`
      }
      return undefined
    case "message": {
      const shape = official.messageShapes.get(name)
      const missing = shape === undefined || status !== "supported"
        ? []
        : [...shape.type, ...shape.subtype].filter((literal) => !ours.messageLiterals.has(literal))
      return missing.length > 0
        ? `called supported, but src/Message.ts never names ${missing.map((l) => JSON.stringify(l)).join(", ")}`
        : undefined
    }
    case "control":
      if (status === "supported" && !ours.srcLiterals.has(name)) {
        return "called supported, but no source file under src/ names this subtype"
      }
      return undefined
  }
  return undefined
}

/** Compares the official surface, the table and the code: the listing (lines to print) and the problems. */
export const check = ({ official, ours, table }) => {
  const problems = [...table.problems]
  const listing = []
  const mentioned = new Set()
  for (const [kind, heading] of Object.entries(KINDS)) {
    const names = official[kind]
    const counts = { supported: 0, unsupported: 0, "not-applicable": 0, missing: 0 }
    const lines = []
    for (const name of names) {
      const key = `${kind}:${name}`
      mentioned.add(key)
      const row = table.rows.get(key)
      const shape = kind === "message" ? official.messageShapes.get(name) : undefined
      const wire = shape === undefined
        ? ""
        : ` (${[shape.type.join("|"), shape.subtype.join("|")].filter((s) => s.length > 0).join("/")})`
      if (row === undefined) {
        counts.missing++
        lines.push(`  ✘ ${name}${wire}: not in the table`)
        problems.push(`${kind} ${name}: the official SDK has it, the table does not mention it`)
        continue
      }
      counts[row.status] = (counts[row.status] ?? 0) + 1
      const mark = row.status === "supported" ? "✔" : row.status === "unsupported" ? "✗" : "–"
      lines.push(`  ${mark} ${name}${wire}: ${row.status}${row.notes.length > 0 ? ` (${row.notes})` : ""}`)
      const why = contradiction(row, ours, official)
      if (why !== undefined) problems.push(`${row.where}: ${kind} ${name}: ${why}`)
    }
    const summary = Object.entries(counts).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(", ")
    listing.push(`${heading}: ${names.length} (${summary})`, ...lines, "")
  }
  for (const [key, row] of table.rows) {
    if (!mentioned.has(key)) {
      problems.push(`${row.where}: ${row.kind} ${row.name}: the official SDK no longer has it (remove the row)`)
    }
  }
  // every option the Promise API rejects is named in the table (so the table is the one list of what is missing)
  for (const option of ours.rejectedOptions) {
    if (!table.rows.has(`option:${option}`)) {
      problems.push(`option ${option}: the Promise API rejects it, the table does not say why`)
    }
  }
  return { listing, problems }
}

const arg = (name) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dts = arg("--dts") ?? path.join(root, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.d.ts")
  const tableFile = arg("--table") ?? path.join(root, "docs", "PARITY.md")
  const manifest = path.join(path.dirname(dts), "package.json")
  const version = fs.existsSync(manifest) ? JSON.parse(fs.readFileSync(manifest, "utf8")).version : undefined
  const official = officialSurface(dts)
  const { listing, problems } = check({ official, ours: ourSurface(), table: readTable(tableFile) })
  if (!process.argv.includes("--quiet")) {
    console.log(
      `The official SDK ${version ?? "(unknown version)"} (${path.relative(root, dts)}) against ${
        path.relative(root, tableFile)
      }:\n`
    )
    console.log(listing.join("\n"))
  }
  if (problems.length > 0) {
    console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join("\n")}`)
    process.exit(1)
  }
  console.log("parity table: up to date with the official surface and the code")
}
