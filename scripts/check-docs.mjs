// Checks that the API reference (docs/api, written by `npm run docs`) covers every entry of package.json's `exports`:
// each entry module has its page, and every name the module exports (values and types, read by the TypeScript
// compiler from src/<entry>.ts) is linked from that page. An entry or a name left out of TypeDoc's entry points fails
// here, whatever typedoc.config.mjs says. A name an entry re-exports from another counts when its page lists it.
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const root = path.resolve(process.argv[2] ?? ".")
const api = path.join(root, "docs", "api")
const { exports } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))

/** The entry modules: the `./dist/<name>.js` each `exports` key points at (data files are not modules). */
const modules = Object.entries(exports).flatMap(([key, target]) => {
  const name = /"\.\/dist\/([^"]+)\.js"/.exec(JSON.stringify(target))?.[1]
  return name === undefined ? [] : [{ key, name, source: path.join(root, "src", `${name}.ts`) }]
})

const config = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.build.json"), {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
    throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
  }
})
if (config === undefined) throw new Error("tsconfig.build.json could not be read")
const program = ts.createProgram(modules.map((m) => m.source), config.options)
const checker = program.getTypeChecker()

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const problems = []
let names = 0
for (const { key, name, source } of modules) {
  const page = path.join(api, "modules", `${name}.html`)
  if (!fs.existsSync(page)) {
    problems.push(`exports["${key}"] (src/${name}.ts) has no page in docs/api (docs/api/modules/${name}.html)`)
    continue
  }
  const html = fs.readFileSync(page, "utf8")
  const file = program.getSourceFile(source)
  const symbol = file === undefined ? undefined : checker.getSymbolAtLocation(file)
  if (symbol === undefined) {
    problems.push(`src/${name}.ts is not a module`)
    continue
  }
  for (const exported of checker.getExportsOfModule(symbol)) {
    names++
    // its own page, or (a name re-exported from another entry) a reference on the entry's page
    const ownPage = new RegExp(`href="[^"]*\\b${escape(name)}\\.${escape(exported.name)}\\.html"`)
    const reference = new RegExp(
      `id="${escape(exported.name.toLowerCase())}"><span[^>]*>.*?<span>${escape(exported.name)}</span>`
    )
    if (!ownPage.test(html) && !reference.test(html)) {
      problems.push(`${exported.name}, exported by exports["${key}"], is not in docs/api/modules/${name}.html`)
    }
  }
}
if (problems.length > 0) {
  console.error(`the API reference misses what the package exports:\n  ${problems.join("\n  ")}`)
  process.exit(1)
}
console.log(`the API reference covers ${modules.length} entries and their ${names} exported names`)
