// No behaviour chosen by members a type does not declare: a value's form (Effect or Promise, ours or wrapped) is never
// detected by looking for a member (`"promisePolicy" in service`) or by a member attached to a function
// (`Object.assign(fn, { promiseHook })`). A wrapper would silently take the other path. What a value can do is in its
// type: a member it declares, or a case of a union discriminated where it is made.
import { expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const SRC = path.join(import.meta.dirname, "..", "src")

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : /\.(?:ts|js|mjs)$/.test(entry.name) ? [full] : []
  })

/** `"x" in <a service, callback, handler, hook, policy, layer or connection>` (any name containing one of those). */
const MEMBER_CHECK = /["'`][\w$]+["'`]\s+in\s+[\w$.]*(?:service|callback|handler|hook|policy|layer|connection)[\w$]*/gi

/** A function given members of its own: `Object.assign((…) => …, { … })`, `Object.assign(function …`. */
const ATTACHED_MEMBER = /Object\.assign\(\s*(?:\(|async\b|function\b)/g

/** `file:line: text` of every match of `pattern` in `file` (a match may span lines). */
const matches = (file: string, pattern: RegExp): Array<string> => {
  const relative = path.relative(SRC, file).split(path.sep).join("/")
  const text = fs.readFileSync(file, "utf8")
  return [...text.matchAll(pattern)].map((m) => {
    const line = text.slice(0, m.index).split("\n").length
    return `${relative}:${line}: ${m[0].replace(/\s+/g, " ")}`
  })
}

it("no `\"x\" in service|callback|handler|hook|policy|layer|connection` selects a code path in src/", () => {
  expect(sourceFiles(SRC).flatMap((file) => matches(file, MEMBER_CHECK))).toEqual([])
})

it("no function gets members attached with Object.assign in src/", () => {
  expect(sourceFiles(SRC).flatMap((file) => matches(file, ATTACHED_MEMBER))).toEqual([])
})
