// TypeDoc's options. The entry points are every module entry of package.json's `exports` (the source of its
// ./dist/x.js, src/x.ts), so that an entry added there is in the API reference with nothing to change here.
import * as fs from "node:fs"

const { exports } = JSON.parse(fs.readFileSync(new URL("package.json", import.meta.url), "utf8"))

/** @type {ReadonlyArray<string>} */
const entryPoints = Object.values(exports).flatMap((target) => {
  // data files (package.json, the Bash grammar) are not modules
  const module = /"\.\/dist\/([^"]+)\.js"/.exec(JSON.stringify(target))?.[1]
  return module === undefined ? [] : [`src/${module}.ts`]
})

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  name: "effect-claude-agent",
  entryPoints,
  tsconfig: "tsconfig.build.json",
  out: "docs/api",
  readme: "README.md",
  excludePrivate: true,
  excludeInternal: true,
  excludeExternals: true,
  treatWarningsAsErrors: true,
  validation: { notExported: false, invalidLink: true, notDocumented: true },
  disableSources: true,
  requiredToBeDocumented: ["Enum", "Variable", "Function", "Class", "Interface", "TypeAlias"]
}
