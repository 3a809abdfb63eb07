// A differential fuzzer for the Bash permission rules: random commands from a grammar of the shell's constructs, each
// decided by `Permissions.rules`, and every command the rules let through run by a real bash in a fresh sandbox. The
// judge is bash, not our parser: the sandbox is compared before and after (what was written, removed, linked), a
// DEBUG trap (inherited by functions, substitutions and subshells with `set -T`, installed in every nested bash through
// BASH_ENV) records every simple command bash ran, and a loopback TCP and UDP listener records every connection. A
// command the rules allowed (or did not deny) that did anything its rule set forbids is a bypass.
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as dgram from "node:dgram"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { decide, type Spec } from "./rules.js"

// ---------------------------------------------------------------------------------------------------------------------
// random numbers
// ---------------------------------------------------------------------------------------------------------------------

/** A seeded generator (mulberry32): the same seed gives the same commands. */
export interface Rng {
  readonly int: (n: number) => number
  readonly chance: (p: number) => boolean
  readonly pick: <A>(items: ReadonlyArray<A>) => A
}

export const rng = (seed: number): Rng => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return { int, chance: (p) => next() < p, pick: (items) => items[int(items.length)]! }
}

// ---------------------------------------------------------------------------------------------------------------------
// the grammar
// ---------------------------------------------------------------------------------------------------------------------

/** Where the sandbox listens: `/dev/tcp/…` and `/dev/udp/…` redirections name these ports. */
export interface Ports {
  readonly tcp: number
  readonly udp: number
}

/** What a generated command does when it does harm: each leaves a trace in the sandbox. */
const PAYLOADS: ReadonlyArray<string> = [
  "touch X",
  "rm -f victim",
  "mkdir D",
  "cp secrets/k out/copy",
  "ln -s ../../outside out/l",
  "ln secrets/k out/h",
  "evil/git",
  "git status",
  "cat secrets/k"
]

/** Words that are plain, that name the sandbox's files, or that turn a builtin into one that runs code. */
const PLAIN_WORDS: ReadonlyArray<string> = [
  "a",
  "hi",
  "x",
  ".",
  "--",
  "-n",
  "-l",
  "-c",
  "-r",
  "-e",
  "-v",
  "-x",
  "-p",
  "-W",
  "-C",
  "-u",

  "data.txt",
  "out/f",
  "secrets/k",
  "secrets",
  "victim",
  "sub",
  "out/l/f",
  "X",
  "%s"
]

/** Redirection targets, as written: literal, split into several nodes, or not known before bash expands them. */
const TARGETS: ReadonlyArray<string> = [
  "out/f",
  "out/g.txt",
  "out/sub/../f",
  "X",
  "out/../X",
  "../outside/x",
  "secrets/k",
  "secrets/new",
  "'out/.'\\./X",
  "'out/'..'/X'",
  "\"out\"/../X",
  "'s'\\ecrets/k",
  "\"secr\"ets/k",
  "$PWD/secrets/k",
  "${PWD}/X",
  "secre?s/k",
  "secret[s]/k",
  "~+/secrets/k",
  "~+/X",
  "~/X",
  "out/$X",
  "out/l/f",
  "out/h",
  "sub/out/f",
  "victim",
  "/dev/null",
  "out/{a,b}"
]

const READ_TARGETS: ReadonlyArray<string> = [
  "data.txt",
  "secrets/k",
  "'secrets'/k",
  "secre?s/k",
  "$PWD/secrets/k",
  "~+/secrets/k",
  "out/l/k",
  "l/k",
  "k"
]

/** Simple commands the rule sets name, with arguments that keep them harmless (their harm is what the grammar adds). */
const NAMED: ReadonlyArray<string> = [
  "echo",
  "cat",
  "printf",
  "ls",
  "wc",
  "head",
  "grep",
  "sort",
  "true",
  "pwd",
  "test",
  "[",
  "cd",
  "git status",
  "git diff",
  "find .",
  "make",
  "read",
  "hash",
  "jobs",
  "compgen",
  "mapfile",
  "type",
  "command -v",
  "trap",
  "set",
  "shopt",
  "exec",
  "wait",
  "let",
  "unset",
  "getopts",

  "umask",
  "alias",
  "enable",
  "fc",
  "bind",
  "complete",
  "ulimit"
]

/** Programs and builtins that run the command in their arguments. */
const WRAPPERS: ReadonlyArray<string> = [
  "env",
  "env -i",
  "env X=1",
  "command",
  "builtin",
  "nice",
  "nice -n 1",
  "timeout 5",
  "nohup",
  "time",
  "exec",
  "stdbuf -o0",
  "xargs",
  "setsid",
  "jobs -x",
  "find . -maxdepth 0 -exec",
  "sudo -n"
]

/** Arguments that make a builtin or a program run code or rebind a name, whatever its rule says. */
const REENTRY_FORMS: ReadonlyArray<string> = [
  "printf -v 'a[$(touch X)]' x",
  "printf -v PATH evil",
  "read 'a[$(touch X)]' <<< x",
  "read PATH <<< evil",
  "test -v 'a[$(touch X)]'",
  "[ -v 'a[$(touch X)]' ]",
  "compgen -W '$(touch X)' x",
  "compgen -C 'touch X' x",
  "mapfile -C 'touch X' -c 1 a <<< x",
  "jobs -x touch X",
  "hash -p evil/git git",
  "hash -p /usr/bin/touch ls",
  "trap 'touch X' EXIT",
  "let 'a[$(touch X)]=1'",
  "unset 'a[$(touch X)]'",
  "alias ls='touch X'",
  "shopt -s expand_aliases",
  "enable -n echo",
  "set -k",
  "exec touch X",
  "type -p touch",
  "command -v touch",
  "git diff 2>/dev/null --no-index --output=X data.txt data.txt",
  "find . 2>/dev/null -exec touch X \\;",
  "make 2>/dev/null --eval='x:=$(shell touch X)'",
  "make --eval='x:=$(shell touch X)' 2>/dev/null",
  "cat < /dev/tcp/127.0.0.1/TCP",
  "echo hi > /dev/udp/127.0.0.1/UDP",
  "echo hi 2>/dev/null > /dev/tcp/127.0.0.1/TCP",
  "git commit -m \"$(cat <<'EOF'\nmsg $(touch X)\nEOF\n)\"",
  "git commit -m \"$(cat <<EOF\nmsg $(touch X)\nEOF\n)\"",
  "git commit -m \"$(cat <<'EOF'\nmsg\nEOFX\ntouch X\nEOF\n)\"",
  "git commit -m \"$(cat <<'EOF'\n EOF\n$(touch X)\nEOF\n)\"",
  "echo 'touch X' | bash",
  "printf '%s\\n' 'rm -f victim' | sh",
  "bash <<< 'touch X'",
  "cd sub && echo hi > out/f",
  "cd .. ; echo hi > work/out/f",
  "cd secrets; cat k",
  "cd out && cat ../secrets/k",
  "grep -r SECRET .",
  "xargs cat <<< secrets/k",
  "cd secrets",
  "cd ..",
  "cd sub",
  "ln -s ../../outside out/l",
  "ln -s secrets l",
  "ln secrets/k out/h",
  "ln -s .. out/up",
  "cp -s secrets/k out/s",
  "mv out/l out/m"
]

/** `s` quoted one of the ways bash accepts. */
const quote = (r: Rng, s: string): string => {
  switch (r.int(7)) {
    case 0:
      return `'${s.replace(/'/g, "'\\''")}'`
    case 1:
      return `"${s.replace(/["\\$`]/g, "\\$&")}"`
    case 2:
      return s.replace(/[^A-Za-z0-9_/.-]/g, "\\$&").replace(/^([A-Za-z])/, "\\$1")
    case 3:
      return `$'${s.replace(/[\\']/g, "\\$&")}'`
    case 4: {
      const cut = r.int(s.length + 1)
      return `'${s.slice(0, cut).replace(/'/g, "'\\''")}'"${s.slice(cut).replace(/["\\$`]/g, "\\$&")}"`
    }
    default:
      return /^[A-Za-z0-9_/.%=+-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`
  }
}

interface Gen {
  readonly r: Rng
  readonly ports: Ports
  /** Heredoc bodies waiting for the end of the current line. */
  readonly pending: Array<string>
}

const fill = (g: Gen, s: string) => s.replace(/TCP/g, String(g.ports.tcp)).replace(/UDP/g, String(g.ports.udp))

/** A word: mostly plain or quoted; sometimes expanded, substituted or an array subscript. */
const word = (g: Gen, depth: number): string => {
  const { r } = g
  const roll = r.int(20)
  if (roll < 12) return r.pick(PLAIN_WORDS)
  if (roll < 15) return quote(r, r.pick(PLAIN_WORDS))
  if (roll < 17) {
    return r.pick(["$PWD", "~+", "$HOME", "${PWD}", "$X", "*", "secre?s/k", "{a,b}", "~", "$((1+1))", "$1"])
  }
  if (roll === 17) return r.pick(["'a[$(touch X)]'", "\"a[\\$(touch X)]\"", "a\\[\\$\\(touch\\ X\\)\\]"])
  if (roll === 18) return depth > 0 ? `$(${list(g, depth - 1, false)})` : "$(touch X)"
  return r.pick(["`touch X`", "\"${x:-$(touch X)}\"", "\"$(cat secrets/k)\"", "<(touch X)"])
}

/** A redirection, at any position of a simple command. */
const redirect = (g: Gen, depth: number): string => {
  const { r } = g
  const roll = r.int(20)
  if (roll < 6) {
    return `${r.pick([">", ">>", "2>", "&>", ">|", "1>", "<>", "&>>", ">&"])}${r.pick(["", " "])}${r.pick(TARGETS)}`
  }
  if (roll < 11) {
    return r.pick(["2>/dev/null", ">/dev/null", "2>&1", ">&2", "2>&-", "</dev/null", "> out/f", "2> out/g.txt"])
  }
  if (roll < 14) return `<${r.pick(["", " "])}${r.pick(READ_TARGETS)}`
  if (roll === 14) {
    return fill(g, r.pick(["< /dev/tcp/127.0.0.1/TCP", "> /dev/udp/127.0.0.1/UDP", "<> /dev/tcp/127.0.0.1/TCP"]))
  }
  if (roll === 15) return `<<< ${word(g, depth)}`
  const delimiter = r.pick(["EOF", "'EOF'", "\"EOF\"", "E"])
  const dash = r.chance(0.2)
  const bare = delimiter.replace(/['"]/g, "")
  // lines a parser might end the heredoc at, where bash does not
  const decoy = r.chance(0.3) ? `${r.pick([" ", "\t", "", "x"])}${bare}${r.pick(["", " ", "X", ")"])}\n` : ""
  const body = r.pick(["hi", "$(touch X)", "`touch X`", "$HOME", "touch X", "secrets/k", "rm -f victim"])
  g.pending.push(`${decoy}${dash ? "\t" : ""}${body}\n${dash ? "\t" : ""}${bare}`)
  return `<<${dash ? "-" : ""}${delimiter}`
}

/** A simple command: a name (maybe behind wrappers and assignments), words and redirections in any order. */
const simple = (g: Gen, depth: number): string => {
  const { r } = g
  const parts: Array<string> = []
  if (r.chance(0.05)) parts.push(r.pick(["X=1", "PATH=evil:$PATH", "a=$(touch X)", "BASH_ENV=x"]))
  const kind = r.int(40)
  if (kind < 5) {
    parts.push(fill(g, r.pick(REENTRY_FORMS)))
  } else if (kind < 8) {
    parts.push(r.pick(PAYLOADS))
  } else if (kind < 12 && depth > 0) {
    parts.push(r.pick(WRAPPERS), simple(g, depth - 1).replace(/\n[\s\S]*$/, ""))
  } else if (kind < 15 && depth > 0) {
    const inner = list(g, depth - 1, true)
    parts.push(r.pick(["eval", "bash -c", "sh -c", "eval --", "bash -c --", "command eval", "source /dev/stdin <<<"]))
    parts.push(quote(r, inner))
  } else {
    parts.push(r.chance(0.05) ? quote(r, r.pick(NAMED)) : r.pick(NAMED))
  }
  const extra = r.int(4)
  for (let i = 0; i < extra; i++) parts.push(word(g, depth))
  // redirections before the name, between the words, after them
  while (r.chance(0.35)) parts.splice(r.int(parts.length + 1), 0, redirect(g, depth))
  return parts.join(" ")
}

const SEPARATORS = [" ; ", " && ", " || ", " | ", "\n", ";", " && ", " | ", " & ", " |& "]

/** Simple commands joined by operators and newlines, sometimes inside a compound command. */
const list = (g: Gen, depth: number, flushHeredocs: boolean): string => {
  const { r } = g
  const count = 1 + r.int(3)
  let out = ""
  for (let i = 0; i < count; i++) {
    if (i > 0) {
      const separator = r.pick(SEPARATORS)
      if (separator === "\n" && g.pending.length > 0) out += "\n" + g.pending.splice(0).join("\n")
      out += separator
    }
    let part = simple(g, depth)
    if (depth > 0 && r.chance(0.08)) {
      part = r.pick([
        `(${part})`,
        `{ ${part}; }`,
        `if true; then ${part}; fi`,
        `f() { ${part}; }; f`,
        `for i in 1; do ${part}; done`,
        `! ${part}`,
        `${part} &`
      ])
    }
    out += part
  }
  if (flushHeredocs && g.pending.length > 0) out += "\n" + g.pending.splice(0).join("\n")
  return out
}

/** One random command. */
export const command = (r: Rng, ports: Ports): string => {
  const g: Gen = { r, ports, pending: [] }
  const depth = r.int(3)
  const text = list(g, depth, true)
  return r.chance(0.1) ? text + "\n" : text
}

// ---------------------------------------------------------------------------------------------------------------------
// rule sets
// ---------------------------------------------------------------------------------------------------------------------

/** A rule set and what a command it lets through must not do. */
export interface RuleSet {
  readonly name: string
  readonly spec: Spec
  /** `allowlist`: only the named commands may run, writing only under `out/`; `denylist`: everything but the denied. */
  readonly kind: "allowlist" | "denylist"
}

const DENY: ReadonlyArray<string> = ["Bash(rm:*)", "Write(./secrets/**)", "Read(./secrets/**)"]

/** Names a user would allow without meaning "run anything". */
export const ALLOWLIST: RuleSet = {
  name: "allowlist",
  kind: "allowlist",
  spec: {
    deny: DENY,
    allow: [
      "Bash(echo:*)",
      "Bash(cat:*)",
      "Bash(printf:*)",
      "Bash(ls:*)",
      "Bash(wc:*)",
      "Bash(head:*)",
      "Bash(grep:*)",
      "Bash(sort:*)",
      "Bash(true)",
      "Bash(pwd)",
      "Bash(test:*)",
      "Bash([:*)",
      "Bash(cd:*)",
      "Bash(git status)",
      "Bash(git diff)",
      "Bash(find .)",
      "Bash(make)",
      "Bash(git commit:*)",
      "Bash(read:*)",
      "Bash(hash:*)",
      "Bash(jobs:*)",
      "Bash(compgen:*)",
      "Bash(mapfile:*)",
      "Bash(type:*)",
      "Bash(command -v:*)",
      "Bash(trap:*)",
      "Bash(set:*)",
      "Bash(shopt:*)",
      "Bash(wait:*)",
      "Bash(let:*)",
      "Bash(unset:*)",
      "Bash(getopts:*)",
      "Bash(umask:*)",
      "Bash(alias:*)",
      "Bash(enable:*)",
      "Write(./out/**)"
    ]
  }
}

/** Everything is allowed but what the deny rules name. */
export const DENYLIST: RuleSet = { name: "denylist", kind: "denylist", spec: { deny: DENY, allow: ["Bash"] } }

// ---------------------------------------------------------------------------------------------------------------------
// the sandbox and its judge
// ---------------------------------------------------------------------------------------------------------------------

interface Entry {
  readonly type: "file" | "dir" | "link" | "other"
  readonly digest: string
  readonly ino: number
}

const snapshot = (root: string): Map<string, Entry> => {
  const out = new Map<string, Entry>()
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir)) {
      const full = path.join(dir, name)
      const rel = path.relative(root, full)
      if (rel === "trace" || rel === "trap.sh") continue
      const stat = fs.lstatSync(full)
      const ino = stat.ino
      if (stat.isSymbolicLink()) out.set(rel, { type: "link", digest: fs.readlinkSync(full), ino })
      else if (stat.isDirectory()) {
        out.set(rel, { type: "dir", digest: "", ino })
        walk(full)
      } else if (stat.isFile()) {
        const content = stat.size > 1 << 20 ? `${stat.size}` : fs.readFileSync(full, "latin1")
        out.set(rel, { type: "file", digest: content, ino })
      } else out.set(rel, { type: "other", digest: "", ino })
    }
  }
  walk(root)
  return out
}

/** A fresh sandbox: `root/work` is the cwd; `root/outside` is what no write may reach. */
const sandbox = (secret: string): { readonly root: string; readonly work: string } => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bashfuzz-")))
  const work = path.join(root, "work")
  for (const dir of ["outside", "home", "work/out", "work/secrets", "work/sub/out", "work/evil"]) {
    fs.mkdirSync(path.join(root, dir), { recursive: true })
  }
  fs.writeFileSync(path.join(root, "outside", "target"), "outside\n")
  fs.writeFileSync(path.join(work, "secrets", "k"), `${secret}\n`)
  fs.writeFileSync(path.join(work, "victim"), "victim\n")
  fs.writeFileSync(path.join(work, "data.txt"), "data\n")
  // a program named like the allowed ones: running it is running what no rule names
  for (const name of ["git", "ls", "cat", "echo", "printf", "wc"]) {
    fs.writeFileSync(path.join(work, "evil", name), `#!/bin/sh\n: > "${root}/EVIL-${name}"\n`, { mode: 0o755 })
  }
  // every bash (nested ones too) records each simple command it runs
  fs.writeFileSync(
    path.join(root, "trap.sh"),
    "set -T\ntrap 'printf \"%s\\0\" \"$BASH_COMMAND\" >> \"$FUZZ_TRACE\"' DEBUG\n"
  )
  return { root, work }
}

/** What bash did with one command. */
export interface Run {
  readonly changes: ReadonlyArray<string>
  /** Files created or changed outside `work/secrets` that hold the secret and are not a link to it. */
  readonly copies: ReadonlyArray<string>
  readonly trace: ReadonlyArray<string>
  readonly output: string
  readonly connections: number
}

/** Whether no live process (zombies waiting for init do not count) is left in the process group `pgid`. */
const processGone = (pgid: number): boolean =>
  !fs.readdirSync("/proc").some((entry) => {
    if (!/^[0-9]+$/.test(entry)) return false
    try {
      // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return Number(fields[2]) === pgid && fields[0] !== "Z"
    } catch {
      return false
    }
  })

const runBash = (command: string, root: string, work: string, listeners: Listeners): Promise<Run> => {
  const before = snapshot(root)
  const connections = listeners.count()
  return new Promise<Run>((resolve) => {
    const child = spawn("bash", ["-c", command], {
      cwd: work,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: path.join(root, "home"),
        BASH_ENV: path.join(root, "trap.sh"),
        FUZZ_TRACE: path.join(root, "trace"),
        LC_ALL: "C"
      }
    })
    let output = ""
    const collect = (chunk: Buffer) => {
      if (output.length < 1 << 16) output += chunk.toString("latin1")
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    const pid = child.pid!
    const killer = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL")
      } catch {
        // already gone
      }
    }, 5000)
    child.on("exit", () => {
      clearTimeout(killer)
      // what it started in the background belongs to the run: wait for its process group to end (bounded)
      const deadline = Date.now() + 2000
      const settle = () => {
        if (!processGone(pid) && Date.now() < deadline) {
          setTimeout(settle, 20)
          return
        }
        try {
          process.kill(-pid, "SIGKILL")
        } catch {
          // gone
        }
        const after = snapshot(root)
        const changes: Array<string> = []
        for (const [rel, entry] of after) {
          const old = before.get(rel)
          if (old === undefined) changes.push(`created ${entry.type} ${rel}`)
          else if (old.type !== entry.type || old.digest !== entry.digest) changes.push(`changed ${entry.type} ${rel}`)
        }
        for (const rel of before.keys()) if (!after.has(rel)) changes.push(`removed ${rel}`)
        const secretFile = before.get("work/secrets/k")
        const copies = [...after].filter(([rel, entry]) =>
          entry.type === "file" && !rel.startsWith("work/secrets/") && entry.ino !== secretFile?.ino &&
          before.get(rel)?.digest !== entry.digest && secretFile !== undefined &&
          entry.digest.includes(secretFile.digest.trim())
        ).map(([rel]) => rel)
        const tracePath = path.join(root, "trace")
        const trace = fs.existsSync(tracePath)
          ? fs.readFileSync(tracePath, "utf8").split("\0").filter((t) => t.length > 0)
          : []
        // loopback packets and connections are counted on their own event loop turn
        setTimeout(() => resolve({ changes, copies, trace, output, connections: listeners.count() - connections }), 5)
      }
      settle()
    })
  })
}

/** Loopback listeners that count every TCP connection and UDP datagram. */
interface Listeners {
  readonly ports: Ports
  readonly count: () => number
  readonly close: () => Promise<void>
}

export const listen = async (): Promise<Listeners> => {
  let count = 0
  const server = net.createServer((socket) => {
    count++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const udp = dgram.createSocket("udp4")
  udp.on("message", () => {
    count++
  })
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve))
  const tcpAddress = server.address()
  const ports = {
    tcp: typeof tcpAddress === "object" && tcpAddress !== null ? tcpAddress.port : 0,
    udp: udp.address().port
  }
  return {
    ports,
    count: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        udp.close()
        server.close(() => resolve())
      })
  }
}

/** The first word of a traced command as bash would read it, when it is plain enough to tell. */
const traceName = (text: string): string | undefined => {
  const words = text.trim().split(/\s+/)
  const first = words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w))
  return first !== undefined && /^[A-Za-z0-9_./[-]+$/.test(first) ? first : undefined
}

/** The names an allow list lets run: the first word of every `Bash(…)` allow rule. */
const allowedNames = (spec: Spec): ReadonlySet<string> =>
  new Set(
    (spec.allow ?? []).flatMap((rule) => {
      const m = /^Bash\((.+)\)$/.exec(rule)
      return m === null ? [] : [m[1]!.replace(/:\*$/, "").split(/\s+/)[0]!]
    })
  )

/** Why what bash did breaks the rule set (empty when it does not). */
export const violations = (set: RuleSet, run: Run, secret: string): Array<string> => {
  const found: Array<string> = []
  // a bare `Bash` allow rule lets any program connect anywhere; an allow list must not
  if (set.kind === "allowlist" && run.connections > 0) found.push(`${run.connections} network connection(s)`)
  if (run.output.includes(secret)) found.push("read secrets/k (its content reached the output)")
  for (const copy of run.copies) found.push(`read secrets/k (its content reached ${copy})`)
  if (set.kind === "denylist") {
    for (const change of run.changes) {
      if (/ work\/secrets(\/|$)/.test(change) && !/^created file work\/secrets\/?$/.test(change)) found.push(change)
      if (change === "removed work/victim") found.push(change)
    }
    return found
  }
  const names = allowedNames(set.spec)
  for (const change of run.changes) {
    const outside = !/^(created|changed) file work\/out\/[^/]+$/.test(change) &&
      !/^(created|changed) file work\/out\/sub\/?/.test(change)
    if (outside) found.push(change)
  }
  for (const text of run.trace) {
    const name = traceName(text)
    if (name !== undefined && !names.has(name)) found.push(`ran ${JSON.stringify(text)}`)
  }
  return found
}

/** The outcome of a fuzzing run. */
export interface Report {
  readonly tried: number
  readonly allowed: number
  readonly denied: number
  readonly fallback: number
  readonly bypasses: ReadonlyArray<
    { readonly set: string; readonly command: string; readonly why: ReadonlyArray<string> }
  >
  /** Per rule set: decisions allowed (and run in bash), denied, fallen back. */
  readonly bySet: Readonly<
    Record<string, { readonly allowed: number; readonly denied: number; readonly fallback: number }>
  >
  /** Milliseconds spent deciding and running in bash. */
  readonly timing: { readonly decide: number; readonly run: number }
}

/** Decides `count` random commands under each rule set and runs in bash every one a set lets through. */
export const fuzz = async (
  options: { readonly seed: number; readonly count: number; readonly sets?: ReadonlyArray<RuleSet> }
): Promise<Report> => {
  const r = rng(options.seed)
  const listeners = await listen()
  const sets = options.sets ?? [ALLOWLIST, DENYLIST]
  let allowed = 0
  let denied = 0
  let fallback = 0
  const bypasses: Array<Report["bypasses"][number]> = []
  const timing = { decide: 0, run: 0 }
  const bySet: Record<string, { allowed: number; denied: number; fallback: number }> = {}
  for (const set of sets) bySet[set.name] = { allowed: 0, denied: 0, fallback: 0 }
  try {
    for (let i = 0; i < options.count; i++) {
      const text = command(r, listeners.ports)
      for (const set of sets) {
        const secret = `SECRET-${crypto.randomBytes(6).toString("hex")}`
        const { root, work } = sandbox(secret)
        try {
          const t0 = performance.now()
          const decision = await decide(set.spec, "Bash", { command: text }, work)
          timing.decide += performance.now() - t0
          if (decision === "allow") allowed++
          else if (decision === "deny") denied++
          else fallback++
          const counts = bySet[set.name]!
          if (decision === "allow") counts.allowed++
          else if (decision === "deny") counts.denied++
          else counts.fallback++
          if (decision !== "allow") continue
          const t1 = performance.now()
          const run = await runBash(text, root, work, listeners)
          timing.run += performance.now() - t1
          const why = violations(set, run, secret)
          if (why.length > 0) bypasses.push({ set: set.name, command: text, why })
        } finally {
          fs.rmSync(root, { recursive: true, force: true })
        }
      }
    }
  } finally {
    await listeners.close()
  }
  return { tried: options.count * sets.length, allowed, denied, fallback, bypasses, bySet, timing }
}
