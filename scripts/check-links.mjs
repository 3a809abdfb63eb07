// Checks the relative links of the Markdown files under a directory: each must name a file that is there, and a
// `#fragment` into a Markdown file must name one of its headings (GitHub's anchors). Run by .ci/pack-check on the
// installed package, so that the README's links work from node_modules (what `files` in package.json ships).
//
//   node scripts/check-links.mjs <dir>          exit 1 and one line per broken link
import * as fs from "node:fs"
import * as path from "node:path"

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`. */
export const anchorOf = (heading) =>
  heading.trim().toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

const headings = (text) =>
  new Set(
    text.replace(/```[\s\S]*?```/g, "").split("\n").flatMap((line) => {
      const match = /^#{1,6}\s+(.*)$/.exec(line)
      return match === null ? [] : [anchorOf(match[1])]
    })
  )

/** The relative links (`[text](target)`) of a Markdown text, code blocks and spans left out. */
export const linksOf = (text) =>
  [...text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))

const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules") return []
    const file = path.join(dir, entry.name)
    return entry.isDirectory() ? walk(file) : [file]
  })

/** Every broken link under `root`, as `file: target (why)`. */
export const brokenLinks = (root) =>
  walk(root).filter((file) => file.endsWith(".md")).flatMap((file) => {
    const text = fs.readFileSync(file, "utf8")
    return linksOf(text).flatMap((target) => {
      const [pathPart, fragment] = target.split("#")
      const resolved = pathPart === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart))
      const where = `${path.relative(root, file)}: ${target}`
      if (!fs.existsSync(resolved)) return [`${where} (no such file)`]
      if (fragment === undefined || fragment === "" || !resolved.endsWith(".md")) return []
      return headings(fs.readFileSync(resolved, "utf8")).has(fragment) ? [] : [`${where} (no such heading)`]
    })
  })

if (process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const root = path.resolve(process.argv[2] ?? ".")
  const broken = brokenLinks(root)
  for (const line of broken) console.error(`broken link: ${line}`)
  if (broken.length > 0) process.exit(1)
  console.log(`every relative link of the Markdown files under ${root} resolves`)
}
