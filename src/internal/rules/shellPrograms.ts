/**
 * What the builtins and programs a Bash command names do, as far as permission rules care: which of them run code
 * or rebind names (re-entry), which run the command in their arguments (wrappers, and how far their options go),
 * which files they read and write, which change the shell's directory, which make links. The lists are derived in
 * SECURITY.md ("The Bash rule matcher"): every builtin of bash 5.2 (`compgen -b`, `compgen -k`) is classified there.
 *
 * @internal
 */

/** A word of a simple command, as `shellRules.ts` reads it. @internal */
export interface Word {
  /** The value bash passes, when no expansion can change it (no parameter, glob, brace, tilde or `$'…'`). */
  readonly literal: string | undefined
  /** The same with expansions left as written: for deny rules, which err on the side of matching. */
  readonly loose: string
  /**
   * When the only expansions of the word are pathname globs (`*`, `?`, `[…]`): the pattern, with every character
   * that is quoted in the word escaped by a backslash.
   */
  readonly glob?: string | undefined
}

/** @internal */
export const basename = (s: string): string => s.slice(s.lastIndexOf("/") + 1)

// ---------------------------------------------------------------------------------------------------------------------
// re-entry: builtins and keywords that run code or rebind names
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Builtins that run code or rebind what a name means in every form: `.`/`source` (a file), `eval` (a string), `trap`
 * (a string, later), `bind` (`-x`), `fc` (re-runs history, starts an editor), `compgen`/`complete` (`-C`, `-F`, `-W`
 * expands), `alias`/`unalias` (what a name runs), `enable` (`-n` hides a builtin, `-f` loads one), `let` (arithmetic:
 * array subscripts run `$(…)`), `unset` (subscripts; `-f` removes a function), `read`/`mapfile`/`readarray`/`getopts`
 * (assign the variables they name: subscripts, PATH, IFS, BASH_ENV…), the declaration builtins, `coproc`.
 */
const ALWAYS_REENTRY: ReadonlySet<string> = new Set([
  ".",
  "source",
  "eval",
  "trap",
  "bind",
  "fc",
  "compgen",
  "complete",
  "alias",
  "unalias",
  "enable",
  "let",
  "unset",
  "read",
  "mapfile",
  "readarray",
  "getopts",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "coproc",
  "select"
])

/** Builtins harmless alone that run code or rebind names with an argument: `hash` (`-p`), `history` (files), … */
const REENTRY_WITH_ARGUMENTS: ReadonlySet<string> = new Set(["hash", "history", "shopt"])

/** `set` options that change nothing a later command's words or names mean. */
const SAFE_SET_LETTERS = /^[-+][euxvfCEbhnPaBT]+$/
const SAFE_SET_NAMES: ReadonlySet<string> = new Set([
  "pipefail",
  "errexit",
  "nounset",
  "xtrace",
  "verbose",
  "noclobber",
  "noglob",
  "errtrace",
  "functrace",
  "physical",
  "allexport",
  "braceexpand",
  "hashall",
  "notify",
  "noexec"
])

const optionCluster = (w: string | undefined, letter: string): boolean =>
  w !== undefined && /^-[A-Za-z]+$/.test(w) && w.includes(letter)

/** Whether a builtin named `name` with arguments `args` runs code or rebinds a name. */
const builtinReentry = (name: string, args: ReadonlyArray<string | undefined>): boolean => {
  if (ALWAYS_REENTRY.has(name)) return true
  if (REENTRY_WITH_ARGUMENTS.has(name)) return args.length > 0 && !(name === "shopt" && shoptQuery(args))
  switch (name) {
    case "printf":
      // `-v name` assigns (subscripts are evaluated); options come first
      return args.some((a, i) => a === undefined || (optionCluster(a, "v") && args.slice(0, i).every(isOption)))
    case "test":
    case "[":
      // `-v name` / `-R name` evaluate the subscript of the name
      return args.some((a) => a === undefined || a === "-v" || a === "-R")
    case "wait":
      return args.some((a) => a === undefined || optionCluster(a, "p"))
    case "jobs":
      return args.some((a) => a === undefined || optionCluster(a, "x"))
    case "set":
      return !setIsSafe(args)
    default:
      return false
  }
}

const isOption = (a: string | undefined): boolean => a !== undefined && a.startsWith("-")

/** `shopt`, `shopt -p [names]`, `shopt -q names`, `shopt names`: queries that set nothing. */
const shoptQuery = (args: ReadonlyArray<string | undefined>): boolean =>
  args.every((a) => a !== undefined && !/^-[A-Za-z]*[su]/.test(a) && !a.startsWith("-o"))

/** `set -e`, `set -euo pipefail`, `set -- a b`…: options that change nothing later words or names mean. */
const setIsSafe = (args: ReadonlyArray<string | undefined>): boolean => {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === undefined) return false
    if (a === "--" || a === "-") return true
    if (a === "-o" || a === "+o") {
      const name = args[++i]
      if (name === undefined || !SAFE_SET_NAMES.has(name)) return false
      continue
    }
    if (/^[-+][A-Za-z]*o$/.test(a)) {
      if (!SAFE_SET_LETTERS.test(a.slice(0, -1)) && a.length > 2) return false
      const name = args[++i]
      if (name === undefined || !SAFE_SET_NAMES.has(name)) return false
      continue
    }
    if (!SAFE_SET_LETTERS.test(a)) return false
  }
  return true
}

// ---------------------------------------------------------------------------------------------------------------------
// wrappers: programs and builtins that run the command in their arguments
// ---------------------------------------------------------------------------------------------------------------------

/**
 * How far a wrapper's own words go: the index of the command it runs, or `undefined` when that cannot be told from
 * the words (an option this parser does not know, a word not known before it runs, a command read from elsewhere).
 */
type WrapperSyntax = (args: ReadonlyArray<string | undefined>) => number | undefined

/** Options without arguments from `flags`, options with one argument from `valued` (also as `--name=value`). */
const options = (
  flags: ReadonlyArray<string>,
  valued: ReadonlyArray<string> = [],
  operands = 0
): WrapperSyntax =>
(args) => {
  let i = 0
  while (i < args.length) {
    const a = args[i]
    if (a === undefined) return undefined
    if (a === "--") {
      i++
      break
    }
    if (!a.startsWith("-") || a === "-") break
    if (flags.includes(a)) i++
    else if (valued.includes(a)) i += 2
    else if (valued.some((v) => v.startsWith("--") && a.startsWith(`${v}=`))) i++
    else return undefined
  }
  for (let n = 0; n < operands; n++) {
    if (i >= args.length || args[i] === undefined) return undefined
    i++
  }
  return i < args.length && args.slice(i).every((a) => a !== undefined) ? i : undefined
}

/** `env [-i] [-u NAME] [NAME=VALUE]… command`. */
const envSyntax: WrapperSyntax = (args) => {
  let i = 0
  while (i < args.length) {
    const a = args[i]
    if (a === undefined) return undefined
    if (a === "-i" || a === "--ignore-environment" || a === "-" || a === "-0" || a === "--null") i++
    else if (a === "-u" || a === "--unset") i += 2
    else if (a.startsWith("--unset=")) i++
    else if (a === "--") i++
    else if (a.startsWith("-")) return undefined
    else if (/^[^=]+=/.test(a)) i++
    else break
  }
  return i < args.length ? i : undefined
}

/** Wrappers whose options are known exactly. */
const WRAPPER_SYNTAX: Readonly<Record<string, WrapperSyntax>> = {
  command: options(["-p"]),
  builtin: options([]),
  exec: options(["-c", "-l", "-cl", "-lc"], ["-a"]),
  time: options(["-p"]),
  nohup: options([]),
  nice: options([], ["-n", "--adjustment"]),
  timeout: options(
    ["--preserve-status", "--foreground", "-v", "--verbose"],
    ["-k", "--kill-after", "-s", "--signal"],
    1
  ),
  stdbuf: options([], ["-i", "-o", "-e", "--input", "--output", "--error"]),
  setsid: options(["-c", "-f", "-w", "--ctty", "--fork", "--wait"]),
  ionice: options(["-t", "--ignore"], ["-c", "-n", "--class", "--classdata"]),
  env: envSyntax
}

/**
 * Programs (and `jobs -x`) that run a command taken from their arguments in a way this matcher does not parse:
 * privilege and sandbox changers, tracers, schedulers, remote shells, `xargs` (arguments read from stdin), `watch`
 * (a string run by `sh -c`), `find -exec`, shells and interpreters of their own command language.
 */
const OPAQUE_WRAPPERS: ReadonlySet<string> = new Set([
  "sudo",
  "doas",
  "su",
  "runuser",
  "pkexec",
  "sg",
  "chroot",
  "unshare",
  "nsenter",
  "setpriv",
  "flock",
  "watch",
  "strace",
  "ltrace",
  "valgrind",
  "gdb",
  "script",
  "parallel",
  "xargs",
  "fakeroot",
  "firejail",
  "bwrap",
  "proot",
  "systemd-run",
  "xvfb-run",
  "dbus-run-session",
  "eatmydata",
  "faketime",
  "catchsegv",
  "chrt",
  "taskset",
  "numactl",
  "prlimit",
  "cgexec",
  "torsocks",
  "proxychains",
  "proxychains4",
  "rlwrap",
  "entr",
  "ssh",
  "busybox",
  "jobs",
  "coproc"
])

/** Shells: what they run comes from a string, a file or stdin. */
export const SHELLS: ReadonlySet<string> = new Set([
  "bash",
  "sh",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "busybox",
  "fish",
  "csh",
  "tcsh",
  "ash",
  "rbash"
])

/**
 * Every command that runs the command in its arguments: deny rules look at each suffix of their words.
 *
 * @internal
 */
export const WRAPPERS: ReadonlySet<string> = new Set([...Object.keys(WRAPPER_SYNTAX), ...OPAQUE_WRAPPERS])

const EXEC_FLAGS: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"])

/**
 * How many leading words an allow rule must name for a simple command to be allowed by it (`Infinity`: only a rule
 * that names every word, without wildcards). An ordinary command needs its name; a wrapper needs its own words and
 * what the wrapped command needs (`Bash(timeout 5 npm test:*)` allows `timeout 5 npm test -x`, `Bash(timeout:*)` does
 * not); a builtin that runs code or rebinds a name, a wrapper whose words cannot be told apart, a shell, and
 * `find … -exec` need every word.
 *
 * @internal
 */
export const allowReach = (words: ReadonlyArray<string | undefined>): number => {
  const first = words[0]
  if (first === undefined) return Infinity
  const name = basename(first)
  const args = words.slice(1)
  if (name === "command" && args.some((a) => a === "-v" || a === "-V")) return 1
  const syntax = WRAPPER_SYNTAX[name]
  if (syntax !== undefined) {
    const inner = syntax(args)
    return inner === undefined ? Infinity : 1 + inner + allowReach(args.slice(inner))
  }
  if (OPAQUE_WRAPPERS.has(name) && !(name === "jobs" && !args.some((a) => optionCluster(a, "x")))) return Infinity
  if (SHELLS.has(name) || builtinReentry(name, args)) return Infinity
  // an option whose value is a command (`sort --compress-program=bash`, `git -c alias.x=!…`), or a word that may
  // expand to one (`$X`, a glob matching a file named like it), before a `--`: every word
  const code = CODE_OPTIONS[name]
  const end = args.indexOf("--")
  const options = end < 0 ? args : args.slice(0, end)
  if (code !== undefined && options.some((a) => a === undefined || optionTest(code, a))) return Infinity
  if (name === "find" && args.some((a) => a === undefined || EXEC_FLAGS.has(a))) return Infinity
  return 1
}

/**
 * The commands a deny rule is compared with for one reading of a command's words: the words, the same with the
 * command's basename, and every suffix after a wrapper or a `find -exec` (wrappers behind `-exec` too), each also with
 * its words split at blanks (`env -S 'rm x'`); `hash -p /bin/rm ls` also as `rm` (the name it binds runs that).
 *
 * @internal
 */
export const denyCandidates = (words: ReadonlyArray<string>, maxRun: number): Array<ReadonlyArray<string>> => {
  if (words.length === 0) return []
  const name = basename(words[0]!)
  const candidates: Array<ReadonlyArray<string>> = [words, [name, ...words.slice(1)]]
  let runs = WRAPPERS.has(name) || name === "find"
  words.forEach((w, i) => {
    if (i > 0 && EXEC_FLAGS.has(words[i - 1]!)) runs = true
    if (i > 0 && runs) {
      const rest = [basename(w), ...words.slice(i + 1, i + maxRun)]
      candidates.push(rest, rest.flatMap((r) => r.split(/\s+/).filter((t) => t.length > 0)))
    }
    if (name === "hash" && i > 0 && words[i - 1] === "-p") candidates.push([basename(w)])
    if (name === "fc" && i > 0 && words[i - 1] === "-e") candidates.push([basename(w)])
  })
  return candidates
}

/** Whether the word at `i` is the command a simple command runs: the first word, or any word behind a wrapper. */
const runsAt = (words: ReadonlyArray<string | undefined>, i: number): boolean =>
  i === 0 || WRAPPERS.has(basename(words[0] ?? ""))

/** Names whose arguments may hold shell code (see {@link scripts}). */
const SCRIPT_RUNNERS: ReadonlySet<string> = new Set([
  "eval",
  ...SHELLS,
  "trap",
  "compgen",
  "complete",
  "mapfile",
  "readarray",
  "bind",
  "alias"
])

/**
 * Wrappers that run a string of theirs with a shell, always (`sg GROUP CMD`, `watch CMD`, `ssh HOST CMD`) or with an
 * option (`flock LOCK -c CMD`, `script -c CMD`, `su -c CMD`, `runuser -c`, `entr -s CMD`, `sudo -s CMD`, `doas -s`):
 * each of their operands, and all of them joined, are judged as scripts (which errs on the side of matching: a lock
 * file's name is parsed as a command too).
 */
const SHELL_STRING_WRAPPERS: Readonly<Record<string, RegExp | true>> = {
  flock: /^(-[A-Za-z]*c$|--command)/,
  script: /^(-[A-Za-z]*c[A-Za-z]*$|--command)/,
  su: /^(-[A-Za-z]*c|--command|--session-command)/,
  runuser: /^(-[A-Za-z]*c|--command|--session-command)/,
  entr: /^-[A-Za-z]*s/,
  sudo: /^(-[A-Za-z]*[si]|--shell|--login)$/,
  doas: /^-[A-Za-z]*s$/,
  sg: true,
  watch: true,
  ssh: true
}

/**
 * Options whose value is a command the program runs with a shell: `git -c alias.x='!CMD'` (and any `-c` value:
 * `core.pager`, `core.sshCommand`), `zip -TT CMD`, `rsync -e CMD`, `tar --to-command=CMD`, `ssh -o ProxyCommand=CMD`.
 */
const CODE_OPTIONS: Readonly<Record<string, RegExp>> = {
  git: /^(-c|--config-env)$/,
  zip: /^(-TT|--unzip-command)/,
  rsync: /^(-[A-Za-z]*e|--rsh)/,
  tar: /^(--to-command|--checkpoint-action|--use-compress-program|-I|--info-script|--new-volume-script|-F)/,
  ssh: /^-[A-Za-z]*o/,
  scp: /^-[A-Za-z]*o/,
  sftp: /^-[A-Za-z]*o/,
  sort: /^--compress-program/,
  kubectl: /^(--kubeconfig|--exec-)/,
  helm: /^(--kubeconfig|--post-renderer)/,
  npm: new RegExp(
    "^(--script-shell|--prefix|-C|--userconfig|--globalconfig|--node-options|--logs-dir|--cache|--workspace|" +
      "--workspaces|-w|-ws|--include-workspace-root|--call|-c|--shell|--init-module|--onload-script|--editor|" +
      "--browser|--viewer|--git|--dir)"
  ),
  npx: /^(--script-shell|--prefix|--userconfig|--globalconfig|--node-options|--call|-c|--shell|--package|-p)/,
  pnpm: /^(-C|--dir|--filter|-F|-r|--recursive|--workspace-root|-w|--shell-emulator|--script-shell|--config\.)/,
  yarn: /^(--cwd|--script-shell|--rc-filename|--use-yarnrc)/,
  bun: /^(--cwd|--filter|-F|--shell|--preload|-r|--config|-c)/
}

/**
 * Variables whose value is a command a program runs with a shell (`PROMPT_COMMAND`, `GIT_SSH_COMMAND`, pagers,
 * editors, `LESSOPEN`, `GIT_CONFIG_PARAMETERS`' aliases).
 */
const CODE_VARIABLES = new RegExp(
  "^(PROMPT_COMMAND|GIT_SSH_COMMAND|GIT_PAGER|PAGER|MANPAGER|EDITOR|VISUAL|GIT_EDITOR|SUDO_EDITOR|LESSOPEN|LESSCLOSE|" +
    "GIT_EXTERNAL_DIFF|GIT_CONFIG_PARAMETERS|GIT_ASKPASS|SSH_ASKPASS|BROWSER|FCEDIT|RSYNC_RSH|TAR_OPTIONS)="
)

/** The values of an option that may hold a command: the next word, after its `=`, without git's leading `!`. */
const codeValues = (rest: ReadonlyArray<string>, rule: RegExp): Array<string> =>
  rest.flatMap((a, j) => {
    if (!optionTest(rule, a)) return []
    const values = [
      a.includes("=") ? a.slice(a.indexOf("=") + 1) : a.replace(/^-[A-Za-z]*?[oe]/, ""),
      rest[j + 1] ?? ""
    ]
    return values.flatMap((v) => [v, v.slice(v.search(/[= ]/) + 1)]).map((v) => v.replace(/^'?!/, ""))
  }).filter((v) => v.length > 0)

/**
 * A string holding an array subscript with a substitution (`a[$(…)]`): wherever bash evaluates it as arithmetic
 * (`(( x ))`, `[[ $x -eq 1 ]]`, `${a[x]}`, `test -v`), the substitution runs.
 */
const SUBSCRIPT_CODE = /\[[^\]]*(\$\(|`)/

/**
 * The strings a command's assignments run as code: values of {@link CODE_VARIABLES}, and values holding a subscript
 * with a substitution (see {@link SUBSCRIPT_CODE}). For deny rules.
 *
 * @internal
 */
export const assignedScripts = (words: ReadonlyArray<string>): Array<string> =>
  words.flatMap((w) => {
    const eq = w.indexOf("=")
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(w)) return SUBSCRIPT_CODE.test(w) ? [w] : []
    const value = w.slice(eq + 1)
    if (!CODE_VARIABLES.test(w) && !SUBSCRIPT_CODE.test(value)) return []
    // `GIT_CONFIG_PARAMETERS="'alias.x=!CMD'"`: the command after a `!` too
    const bang = value.indexOf("!")
    return [value, ...(bang < 0 ? [] : [value.slice(bang + 1).replace(/'$/, "")])]
  })

/**
 * Variables that name a file a program loads or options that do (`BASH_ENV`, `ENV`, `PYTHONSTARTUP`,
 * `NODE_OPTIONS=--require f`, `LD_PRELOAD`, …): the words of their values are files read. For deny rules.
 *
 * @internal
 */
export const LOADING_VARIABLES =
  /^(BASH_ENV|ENV|PYTHONSTARTUP|NODE_OPTIONS|LD_PRELOAD|LD_AUDIT|PERL5OPT|RUBYOPT|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|CURL_HOME|WGETRC|INPUTRC|HISTFILE|NPM_CONFIG_USERCONFIG)=/

/**
 * The files a command's assignments make a program load (see {@link LOADING_VARIABLES}), wherever they stand (a
 * prefix, `env NAME=…`, `export NAME=…`): each word of the value, an option's value too.
 *
 * @internal
 */
export const loadedFiles = (words: ReadonlyArray<Word>): Array<Word> =>
  words.flatMap((w) => {
    const text = w.literal ?? w.loose
    if (!LOADING_VARIABLES.test(text)) return []
    const value = text.slice(text.indexOf("=") + 1)
    return value.split(/\s+/).filter((v) => v.length > 0).flatMap((v) =>
      candidatesOf("", { literal: w.literal === undefined ? undefined : v, loose: v })
    )
  })

/** Builtins whose arguments are read for substitutions when they stand first. */
const REENTRY_BUILTINS: ReadonlySet<string> = new Set([
  ...ALWAYS_REENTRY,
  ...REENTRY_WITH_ARGUMENTS,
  "printf",
  "test",
  "[",
  "wait",
  "jobs",
  "set"
])

/**
 * The strings a simple command runs as shell code, wherever the shell or builtin stands in it (behind `env`,
 * `exec`, `xargs`, `find -exec`, …): `eval`'s arguments, a shell's `-c` string, `trap`'s action, `compgen`/`complete`
 * `-C`/`-W` and `mapfile -C` strings, `bind -x`'s command, `alias` values; and every argument of a builtin that runs
 * code or rebinds a name that holds a substitution (`read 'a[$(…)]'`, `printf -v 'a[$(…)]'`, `let`, `unset`,
 * `test -v`). For deny rules, so it errs on the side of finding one.
 *
 * @internal
 */
export const scripts = (words: ReadonlyArray<string>): Array<string> => {
  const found: Array<string> = []
  words.forEach((w, i) => {
    const name = basename(w)
    if (name === "env" && runsAt(words, i)) {
      found.push(...envStrings(words.slice(i + 1)))
      return
    }
    const codeOption = CODE_OPTIONS[name]
    if (codeOption !== undefined && runsAt(words, i)) {
      found.push(...codeValues(words.slice(i + 1), codeOption))
    }
    const shellString = SHELL_STRING_WRAPPERS[name]
    if (shellString !== undefined && runsAt(words, i)) {
      const rest = words.slice(i + 1)
      if (shellString === true || rest.some((a) => optionTest(shellString, a))) {
        const operands = rest.filter((a) => !a.startsWith("-"))
        const values = rest.flatMap((a) => (a.startsWith("--") && a.includes("=") ? [a.slice(a.indexOf("=") + 1)] : []))
        // `ssh -o ProxyCommand=CMD`, `ProxyCommand CMD`: the command after an option's name
        const named = operands.flatMap((a) => (/^[A-Za-z]+[= ]/.test(a) ? [a.slice(a.search(/[= ]/) + 1)] : []))
        found.push(...operands, ...values, ...named, operands.join(" "))
      }
      return
    }
    // `command test -v …`, `builtin printf -v …` run the builtin itself
    const first = i === 0 || (REENTRY_BUILTINS.has(name) && behindBuiltinRunners(words, i))
    if (!SCRIPT_RUNNERS.has(name) && !(first && REENTRY_BUILTINS.has(name))) return
    const rest = words.slice(i + 1)
    if (name === "eval") {
      found.push((rest[0] === "--" ? rest.slice(1) : rest).join(" "))
    } else if (SHELLS.has(name)) {
      const flag = words.findIndex((f, j) => j > i && /^-[a-zA-Z]*c/.test(f))
      if (flag > 0) {
        const script = words[flag + 1] === "--" ? words[flag + 2] : words[flag + 1]
        if (script !== undefined) found.push(script)
      }
    } else if (name === "trap") {
      const action = rest.find((a) => !a.startsWith("-"))
      if (action !== undefined) found.push(action)
    } else if (CALLBACK_OPTIONS[name] !== undefined) {
      found.push(...callbacks(CALLBACK_OPTIONS[name]!, rest))
    } else if (name === "bind") {
      for (const a of rest) if (a.includes(":")) found.push(a.slice(a.indexOf(":") + 1))
    } else if (name === "alias") {
      for (const a of rest) if (a.includes("=")) found.push(a.slice(a.indexOf("=") + 1))
    }
    if (first && (builtinReentry(name, rest) || name === "printf" || name === "test" || name === "[")) {
      for (const a of rest) if (/\$[([]|`/.test(a)) found.push(a)
    }
  })
  return found
}

/**
 * Builtins whose options take a value, and which of those values run: `mapfile`/`readarray -C CALLBACK` (run with the
 * index and the line read appended), `compgen`/`complete -C COMMAND` and `-F FUNCTION` (run with the command's name,
 * the word and the previous word), `-W WORDLIST` (expanded). A `-C`/`-F` value runs with arguments the shell supplies
 * from data: its words are not all its arguments.
 */
interface CallbackOptions {
  /** Letters whose option takes a value (in the rest of the cluster or the next word). */
  readonly valued: string
  /** Letters whose value is run as a command with arguments appended. */
  readonly called: string
  /** Letters whose value is expanded (run as a script for its substitutions). */
  readonly expanded: string
}

const COMPLETION: CallbackOptions = { valued: "oAGWFCXPS", called: "CF", expanded: "W" }

const CALLBACK_OPTIONS: Readonly<Record<string, CallbackOptions>> = {
  mapfile: { valued: "dnOsuCc", called: "C", expanded: "" },
  readarray: { valued: "dnOsuCc", called: "C", expanded: "" },
  compgen: COMPLETION,
  complete: COMPLETION
}

/**
 * The strings a builtin's options run (see {@link CALLBACK_OPTIONS}), its option clusters read as bash's getopt reads
 * them (`-tCcat`, `-C cat`), in every word (a word after an operand too, which errs on the side of finding one). A
 * callback gets `"$@"` appended: arguments not known, so a program that reads or writes its operands is judged as
 * reading or writing files not known, and an allow rule must allow it with any argument.
 */
const callbacks = (spec: CallbackOptions, args: ReadonlyArray<string>): Array<string> => {
  const found: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (!/^-[^-]/.test(a)) continue
    for (let k = 1; k < a.length; k++) {
      const letter = a[k]!
      if (!spec.valued.includes(letter)) continue
      const value = k + 1 < a.length ? a.slice(k + 1) : args[++i]
      if (value !== undefined && spec.called.includes(letter)) found.push(`${value} "$@"`)
      if (value !== undefined && spec.expanded.includes(letter)) found.push(value)
      break
    }
  }
  return found
}

/** Whether the words before `i` are only `command` / `builtin` and their options. */
const behindBuiltinRunners = (words: ReadonlyArray<string>, i: number): boolean => {
  for (let j = 0; j < i; j++) {
    const p = words[j]!
    if (p !== "command" && p !== "builtin" && !p.startsWith("-")) return false
  }
  return true
}

/**
 * What `env -S STRING` (also `-vS…`, `-SSTRING`, `--split-string=STRING`) splits into a command: the string and the
 * words after it, judged as a script (env's own quoting is close to the shell's; it errs on the side of matching).
 */
const envStrings = (args: ReadonlyArray<string>): Array<string> => {
  const found: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === "--" || !a.startsWith("-")) break
    const long = a.startsWith("--") ? a.slice(2).split("=")[0]! : undefined
    const split = long !== undefined && long.length > 0 && "split-string".startsWith(long)
      ? a.includes("=") ? a.slice(a.indexOf("=") + 1) : ""
      : long === undefined && /^-[A-Za-z0-9]*S/.test(a)
      ? a.slice(a.indexOf("S") + 1)
      : undefined
    if (split === undefined) {
      // the options whose value is the next word: `-u NAME`, `-C DIR` (also as the last of a cluster), `--unset`, …
      const valued = long === undefined
        ? /^-[A-Za-z0-9]*[uC]$/.test(a)
        : !a.includes("=") && long.length > 0 && ["unset", "chdir"].some((n) => n.startsWith(long))
      if (valued) i++
      continue
    }
    const value = split === "" ? args[i + 1] ?? "" : split
    found.push([value, ...args.slice(split === "" ? i + 2 : i + 1)].join(" "))
    break
  }
  return found
}

/**
 * Whether a simple command runs shell code it reads on its input (a shell, `source` or `.`, anywhere in its words):
 * then a heredoc, a here-string or what a pipe gives it is a script.
 *
 * @internal
 */
export const runsInput = (words: ReadonlyArray<string>): boolean =>
  words.some((w) => SHELLS.has(basename(w)) || w === "source" || w === ".")

// ---------------------------------------------------------------------------------------------------------------------
// files: what a program reads and writes
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Programs that read the content of the files their operands name (every argument word is taken for a path, which
 * errs on the side of matching: a pattern or a script that names a denied path counts too).
 */
const READERS: ReadonlySet<string> = new Set([
  "cat",
  "tac",
  "nl",
  "head",
  "tail",
  "less",
  "more",
  "most",
  "view",
  "bat",
  "batcat",
  "grep",
  "egrep",
  "fgrep",
  "zgrep",
  "zcat",
  "bzcat",
  "xzcat",
  "zstdcat",
  "zless",
  "zmore",
  "rg",
  "ag",
  "ack",
  "ack-grep",
  "sed",
  "awk",
  "gawk",
  "mawk",
  "nawk",
  "sort",
  "uniq",
  "wc",
  "cut",
  "paste",
  "join",
  "comm",
  "diff",
  "diff3",
  "sdiff",
  "cmp",
  "od",
  "hexdump",
  "xxd",
  "strings",
  "base64",
  "base32",
  "basenc",
  "md5sum",
  "sha1sum",
  "sha224sum",
  "sha256sum",
  "sha384sum",
  "sha512sum",
  "b2sum",
  "cksum",
  "sum",
  "fold",
  "fmt",
  "pr",
  "expand",
  "unexpand",
  "column",
  "jq",
  "yq",
  "xmllint",
  "iconv",
  "split",
  "csplit",
  "look",
  "rev",
  "shuf",
  "tsort",
  "ptx",
  "file",
  "dd",
  "cp",
  "mv",
  "install",
  "rsync",
  "scp",
  "tar",
  "bsdtar",
  "zip",
  "gzip",
  "gunzip",
  "bzip2",
  "bunzip2",
  "xz",
  "unxz",
  "zstd",
  "cpio",
  "source",
  ".",
  "vi",
  "vim",
  "nvim",
  "nano",
  "emacs",
  "ed",
  "ex",
  "patch",
  "openssl",
  "gpg",
  "curl",
  "wget",
  "ts-node"
])

/** Options that make a program read (or change) whole trees: always (`true`) or with an option that matches. */
const RECURSIVE_READ: Readonly<Record<string, RegExp | true>> = {
  grep: /^(-[A-Za-z]*[rR][A-Za-z]*|--recursive|--dereference-recursive|--directories=recurse|-[A-Za-z]*d=?recurse)$/,
  egrep: /^(-[A-Za-z]*[rR][A-Za-z]*|--recursive|--dereference-recursive)$/,
  fgrep: /^(-[A-Za-z]*[rR][A-Za-z]*|--recursive|--dereference-recursive)$/,
  zgrep: /^(-[A-Za-z]*[rR][A-Za-z]*|--recursive)$/,
  rg: true,
  ag: true,
  ack: true,
  "ack-grep": true,
  diff: /^(-[A-Za-z]*r[A-Za-z]*|--recursive)$/,
  cp: /^(-[A-Za-z]*[rRa][A-Za-z]*|--recursive|--archive)$/,
  scp: /^-[A-Za-z]*r[A-Za-z]*$/,
  rsync: /^(-[A-Za-z]*[ra][A-Za-z]*|--recursive|--archive)$/,
  zip: /^(-[A-Za-z]*r[A-Za-z]*|--recurse-paths)$/,
  tar: true,
  bsdtar: true,
  mv: true,
  find: /^(-exec|-execdir|-ok|-okdir)$/
}

const RECURSIVE_WRITE: Readonly<Record<string, RegExp | true>> = {
  rm: /^(-[A-Za-z]*[rR][A-Za-z]*|--recursive)$/,
  chmod: /^(-[A-Za-z]*R[A-Za-z]*|--recursive)$/,
  chown: /^(-[A-Za-z]*R[A-Za-z]*|--recursive)$/,
  chgrp: /^(-[A-Za-z]*R[A-Za-z]*|--recursive)$/,
  cp: /^(-[A-Za-z]*[rRa][A-Za-z]*|--recursive|--archive)$/,
  scp: /^-[A-Za-z]*r[A-Za-z]*$/,
  rsync: /^(-[A-Za-z]*[ra][A-Za-z]*|--recursive|--archive)$/,
  mv: true,
  find: /^(-delete|-exec|-execdir|-ok|-okdir|-fprint|-fprint0|-fprintf|-fls)$/
}

/** Programs that search (or write into) their working directory when no path is given. */
const WORKS_IN_CWD: ReadonlySet<string> = new Set([
  "grep",
  "egrep",
  "fgrep",
  "zgrep",
  "rg",
  "ag",
  "ack",
  "ack-grep",
  "find",
  "tar",
  "bsdtar",
  "unzip",
  "cpio"
])

/** Programs that write, create, remove or change the files their operands name. */
const WRITERS: ReadonlySet<string> = new Set([
  "tee",
  "touch",
  "rm",
  "rmdir",
  "unlink",
  "shred",
  "truncate",
  "mkdir",
  "mkfifo",
  "mknod",
  "mv",
  "cp",
  "install",
  "ln",
  "link",
  "dd",
  "chmod",
  "chown",
  "chgrp",
  "chattr",
  "setfacl",
  "split",
  "csplit",
  "patch",
  "gzip",
  "gunzip",
  "bzip2",
  "bunzip2",
  "xz",
  "unxz",
  "zstd",
  "uniq",
  "zip",
  "rsync",
  "scp",
  "vi",
  "vim",
  "nvim",
  "nano",
  "emacs",
  "ed",
  "ex",
  "curl",
  "wget"
])

/** Programs that write files only with an option: `sed -i`, `perl -i`, `sort -o`, `find -delete`. */
const WRITES_WITH: Readonly<Record<string, RegExp>> = {
  sed: /^(-[A-Za-z]*i|--in-place)/,
  perl: /^-[A-Za-z]*i/,
  sort: /^(-[A-Za-z]*o|--output)/,
  awk: /^-[A-Za-z]*i/,
  gawk: /^-[A-Za-z]*i/
}

/**
 * Options that make a program read the names of the files it reads from a file or its input: `--files0-from`,
 * `tar -T`, `zip -@`, `cpio -o` / `-p`, `rsync --files-from`, a checksum's `-c`.
 */
const NAMES_FROM: Readonly<Record<string, RegExp>> = {
  sort: /^--files0-from/,
  wc: /^--files0-from/,
  du: /^--files0-from/,
  find: /^-files0-from/,
  tar: /^(-[A-Za-z]*T|--files-from)/,
  bsdtar: /^(-[A-Za-z]*T|--files-from)/,
  zip: /^-[A-Za-z]*@|^--names-stdin/,
  cpio: /^(-[A-Za-z]*[op]|--create|--pass-through)/,
  rsync: /^--files-from/,
  ...Object.fromEntries(
    ["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"].map((n) => [
      n,
      /^(-[A-Za-z]*c|--check)/
    ])
  )
}

/**
 * Options whose value is a file a program writes though it is allowed as a reader (`sort -o F`, `git diff
 * --output=F`, `git format-patch -o DIR`), and options that make it edit its file operands in place (`sed -i`).
 */
const WRITE_VALUES: Readonly<Record<string, RegExp>> = {
  sort: /^(-[A-Za-z]*?o|--output)/,
  git: /^(-o|--output|--output-directory)/,
  curl: new RegExp(
    "^(-[A-Za-z]*?[ocD]|(--output|--output-dir|--stderr|--trace|--trace-ascii|--libcurl|--cookie-jar|--dump-header|" +
      "--hsts|--alt-svc|--etag-save)$)"
  ),
  tsc: /^(--outFile|--outDir|--declarationDir|--generateTrace|--tsBuildInfoFile|--out)$/
}

/**
 * Options that make a program write files whose names the words do not give (`curl -O` names them after the URL,
 * `--next` starts another transfer, `-K` reads more options; `tsc -p` / `--build` write where a tsconfig says): on
 * the allow side such a command writes somewhere not known.
 */
const UNKNOWN_WRITES: Readonly<Record<string, RegExp>> = {
  curl: /^(-[A-Za-z]*[OJK]|--remote-name|--remote-name-all|--remote-header-name|--next|-:|--config)/,
  tsc: /^(-p|--project|-b|--build)$/
}

/** The program `npx` runs (after its own options), for the tables above. */
const runBy = (
  name: string,
  args: ReadonlyArray<Word>
): { readonly name: string; readonly args: ReadonlyArray<Word> } => {
  if (name !== "npx") return { name, args }
  const at = args.findIndex((w) => !(w.literal ?? w.loose).startsWith("-"))
  return at < 0 ? { name, args } : { name: basename(args[at]!.literal ?? args[at]!.loose), args: args.slice(at + 1) }
}

const IN_PLACE: Readonly<Record<string, RegExp>> = {
  sed: /^(-[A-Za-z]*i|--in-place)/,
  perl: /^-[A-Za-z]*i/,
  awk: /^-[A-Za-z]*i$/,
  gawk: /^-[A-Za-z]*i$/
}

/**
 * The files a simple command writes through its program's options, with the words as written: the value of a write
 * option (see {@link WRITE_VALUES}), or every operand of an in-place edit. On the allow side each must be a file a
 * Write or Edit allow rule allows, as a redirection's target must (an allow rule naming the program does not widen
 * where it may write); on the deny side they are writes.
 *
 * @internal
 */
export const optionWrites = (commandWords: ReadonlyArray<Word>): ReadonlyArray<Word> => {
  const words = unwrap(commandWords)
  const first = words[0]
  if (first === undefined) return []
  const { name, args } = runBy(basename(first.literal ?? first.loose), words.slice(1))
  const valued = WRITE_VALUES[name]
  const inPlace = IN_PLACE[name]
  const texts = args.map((w) => w.literal ?? w.loose)
  if (inPlace !== undefined && optionMatches(inPlace, texts)) return operandsOf(name, args)
  // a file not named by the words: a word with no literal value, which no allow rule allows
  const unknown = UNKNOWN_WRITES[name]
  if (unknown !== undefined && texts.some((t) => optionTest(unknown, t))) return [{ literal: undefined, loose: "?" }]
  if (valued === undefined) return []
  return args.flatMap((w, i) => {
    const text = w.literal ?? w.loose
    if (!text.startsWith("-") || !optionTest(valued, text.split("=")[0]!)) return []
    const value = text.includes("=") ? tail(w, text, text.indexOf("=") + 1) : undefined
    const attached = !text.startsWith("--") && !text.includes("=") && text.length > 2
      ? tail(w, text, valued.exec(text)?.[0].length ?? text.length)
      : undefined
    const next = args[i + 1]
    return [value ?? attached ?? next].filter((v): v is Word => v !== undefined && (v.literal ?? v.loose) !== "")
  })
}

/** Programs that unpack into their working directory (or `-C` / `-d`): they write the whole tree there. */
const UNPACKERS: ReadonlySet<string> = new Set(["tar", "bsdtar", "unzip", "cpio", "7z", "7za"])

/**
 * Programs whose operands are not files they read or write (or whose reads are of names, not content): their
 * operands are not judged against path rules. Any program in none of these lists has its operands judged as files
 * or directories it may read and write (see `FileOperands.guesses`).
 */
const NO_FILE_OPERANDS: ReadonlySet<string> = new Set([
  "echo",
  "printf",
  "true",
  "false",
  ":",
  "pwd",
  "cd",
  "pushd",
  "popd",
  "dirs",
  "test",
  "[",
  "ls",
  "dir",
  "tree",
  "du",
  "df",
  "stat",
  "realpath",
  "readlink",
  "basename",
  "dirname",
  "which",
  "type",
  "command",
  "hash",
  "kill",
  "sleep",
  "whoami",
  "id",
  "uname",
  "hostname",
  "seq",
  "yes",
  "exit",
  "return",
  "set",
  "shopt",
  "wait",
  "umask",
  "ulimit",
  "times",
  "help",
  "jobs",
  "fg",
  "bg",
  "disown",
  "shift",
  "break",
  "continue",
  "expr",
  "tput",
  "nproc",
  "env",
  "printenv",
  "ps",
  "pgrep",
  "find"
])

/**
 * The paths a simple command may read or write through its programs' operands, for deny rules (its redirections are
 * judged apart).
 *
 * @internal
 */
export interface FileOperands {
  /** Files whose content may be read. */
  readonly reads: ReadonlyArray<Word>
  /** Directories whose whole tree may be read. */
  readonly readTrees: ReadonlyArray<Word>
  /** Files that may be written, created, removed or changed. */
  readonly writes: ReadonlyArray<Word>
  /** Directories whose whole tree may be written, removed or changed. */
  readonly writeTrees: ReadonlyArray<Word>
  /** The command reads files it names elsewhere (`xargs cat` reads the files named on its input). */
  readonly readsUnknown?: boolean
  /** The command writes files it names elsewhere (`xargs rm`). */
  readonly writesUnknown?: boolean
  /**
   * Operands of a program none of the lists knows (and a script's arguments): each may name a file or a directory it
   * reads or writes, so they are judged only where the shell's directory is known.
   */
  readonly guesses: ReadonlyArray<Word>
}

const NONE: FileOperands = { reads: [], readTrees: [], writes: [], writeTrees: [], guesses: [] }

/**
 * Interpreters that read a script file named by their first operand (unless given their code inline): the options
 * that take their value in the next word, and the options that give the code inline (then no operand is a script).
 * The script, and the values of options (`--env-file=x`, `--rcfile x`, `-r mod`), are files they read; the words
 * after the script are its arguments (guesses).
 */
interface Interpreter {
  readonly valued: RegExp
  readonly inline: RegExp
}

const SHELL_INTERPRETER: Interpreter = {
  valued: /^([-+][A-Za-z]*[oO]|--rcfile|--init-file)$/,
  inline: /^-[A-Za-z]*c[A-Za-z]*$/
}

const PYTHON: Interpreter = { valued: /^-[A-Za-z]*[WX]$/, inline: /^-[A-Za-z]*[cm]$/ }

const NODE: Interpreter = {
  valued: /^(-[rC]|--require|--import|--loader|--experimental-loader|--conditions|--input-type|--env-file)$/,
  inline: /^(-[A-Za-z]*[ep]|--eval|--print)$/
}

const INTERPRETERS: Readonly<Record<string, Interpreter>> = {
  ...Object.fromEntries([...SHELLS].filter((s) => s !== "busybox").map((s) => [s, SHELL_INTERPRETER])),
  ...Object.fromEntries(["python", "python2", "python3", "pypy3"].map((n) => [n, PYTHON])),
  node: NODE,
  nodejs: NODE,
  perl: { valued: /^-[IMm]$/, inline: /^-[A-Za-z]*[eE]$/ },
  ruby: { valued: /^-[Irx]$/, inline: /^-[A-Za-z]*e$/ },
  php: { valued: /^-[cdfz]$/, inline: /^-[A-Za-z]*[rBRE]$/ },
  lua: { valued: /^-[lW]$/, inline: /^-[A-Za-z]*e$/ },
  tclsh: { valued: /^-encoding$/, inline: /^$/ }
}

/**
 * Characters by which a word's loose text shows an expansion whose value is not known (a parameter, a substitution,
 * a brace, a tilde, a glob, an extglob or a process substitution), or a NUL (bash ends an `$'…'` value there).
 */
const NOT_STATIC = /[$`(){}*?[\]~\0]/

/**
 * The operands of a program these lists do not know, each of which may name a path: literals and globs (judged by
 * the paths they name); a word with no literal whose value is still computed (`$'secrets'`, `"sec"$'rets'`: quoting
 * only) as that value; any other word (`$X`, `"$PWD/k"`, `s{e,}crets`) as it is, a path not known (deny rules match).
 */
const guessable = (words: ReadonlyArray<Word>): ReadonlyArray<Word> =>
  words.map((w) =>
    w.literal !== undefined || w.glob !== undefined || NOT_STATIC.test(w.loose)
      ? w
      : { literal: w.loose, loose: w.loose }
  )

/** The files an interpreter reads (its script and its options' values) and its script's arguments. */
const interpreterOperands = (interpreter: Interpreter, args: ReadonlyArray<Word>): FileOperands => {
  const reads: Array<Word> = []
  let inline = false
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!
    const text = w.literal ?? w.loose
    if (text === "--" || text === "-") {
      // `bash -- script`: the next word is the script; `-`: the script is stdin
      if (text === "--" && !inline && args[i + 1] !== undefined) reads.push(args[i + 1]!)
      return { ...NONE, reads, guesses: guessable(args.slice(i + 2)) }
    }
    if (text.startsWith("-") || text.startsWith("+")) {
      if (interpreter.inline.test(text)) inline = true
      const eq = text.indexOf("=")
      if (eq > 0) reads.push(...operandsOf("", [w]))
      else if (interpreter.valued.test(text) && args[i + 1] !== undefined) reads.push(args[++i]!)
      continue
    }
    // the first operand: the script (or, with inline code, its first argument)
    if (!inline) reads.push(w)
    if (!inline || interpreter !== SHELL_INTERPRETER) {
      return { ...NONE, reads, guesses: guessable(inline ? args.slice(i) : args.slice(i + 1)) }
    }
    // a shell's inline script is parsed apart, and judges its own `$1`: a positional parameter whose value is not
    // known is left to it (one that looks like a path is still guessed)
    const positional = args.slice(i + 1).filter((p) =>
      p.literal !== undefined || p.glob !== undefined || /[/.~{]/.test(p.loose)
    )
    return { ...NONE, reads, guesses: guessable([w, ...positional]) }
  }
  return { ...NONE, reads }
}

/** Programs whose first operand is a pattern, unless one is given with `-e` / `-f`. */
const PATTERN_FIRST: ReadonlySet<string> = new Set(["grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "ack-grep"])

/** Wrappers that add operands read from their input to the command they run. */
const ARGUMENTS_FROM_INPUT: ReadonlySet<string> = new Set(["xargs", "parallel"])

const CWD: Word = { literal: ".", loose: "." }

/** The part of a word from `at` on (its glob too, when the cut leaves the glob's escapes whole). */
const tail = (w: Word, text: string, at: number): Word => {
  const value = text.slice(at)
  const shift = w.glob === undefined ? -1 : w.glob.length - text.length
  const glob = w.glob !== undefined && shift >= 0 && !w.glob.slice(0, at + shift).endsWith("\\")
    ? w.glob.slice(at + shift)
    : undefined
  return { literal: w.literal === undefined ? undefined : value, loose: value, ...(glob === undefined ? {} : { glob }) }
}

/** How many characters of a short-option cluster (`-qosecrets/x`) may be flags before its attached value. */
const MAX_CLUSTER = 32

/**
 * The paths a word may name for the program it is given to: the word; after an `=` the value (`--file=x`, `if=x`);
 * for a short-option cluster each place its attached value may start (`-osecrets/x`, `-qosecrets/x`: which letters
 * take a value is the program's); after an `@` or a `<` a file whose content is read (`curl -d @f`, `-F k=@f`,
 * `-F k=<f`, `7z a x @list`); and a `file:` URL's path. An option alone is no path.
 */
const candidatesOf = (name: string, w: Word): Array<Word> => {
  const text = w.literal ?? w.loose
  if (text === "--" || text === "-") return []
  const out: Array<Word> = []
  const eq = text.indexOf("=")
  const option = text.startsWith("-")
  if (!option && !(name === "dd" && eq > 0)) out.push(w)
  if (eq > 0) out.push(tail(w, text, eq + 1))
  if (option && !text.startsWith("--")) {
    const end = Math.min(text.length, MAX_CLUSTER, eq > 0 ? eq : text.length)
    for (let at = 2; at < end; at++) out.push(tail(w, text, at))
  }
  for (const match of text.matchAll(/(?:^|=)[@<]/g)) out.push(tail(w, text, match.index + match[0].length))
  // `REV:path` (git's `HEAD:secrets/k`, `:path` in the index), `host:path`: the path after the colon
  const colon = text.indexOf(":")
  if (colon >= 0 && !text.startsWith("-") && text[colon + 1] !== "/" && colon + 1 < text.length) {
    out.push(tail(w, text, colon + 1))
  }
  const url = /^(?:[A-Za-z-]+=)?file:(?:\/\/[^/]*)?(\/[^?#]*)/i.exec(text)
  if (url !== null) {
    let decoded = url[1]!
    try {
      decoded = decodeURIComponent(decoded)
    } catch {
      // a malformed escape: curl passes it through as written
    }
    out.push({ literal: w.literal === undefined ? undefined : decoded, loose: decoded })
  }
  return out
}

const operandsOf = (name: string, args: ReadonlyArray<Word>): Array<Word> => args.flatMap((w) => candidatesOf(name, w))

/** The command a wrapper runs (its words), for reads and writes; the words themselves when there is none. */
const unwrap = (words: ReadonlyArray<Word>): ReadonlyArray<Word> => {
  const first = words[0]
  if (first === undefined) return words
  const name = basename(first.literal ?? first.loose)
  const syntax = WRAPPER_SYNTAX[name]
  if (syntax === undefined) return words
  const inner = syntax(words.slice(1).map((w) => w.literal ?? w.loose))
  return inner === undefined ? words : unwrap(words.slice(1 + inner))
}

/**
 * Whether an option word matches `rule`, as GNU getopt reads it: a long option may be any prefix of its name
 * (`--recur` is `--recursive`; an ambiguous prefix counts too, which errs on matching), its value after `=` or in the
 * next word (`texts` holds both forms, see {@link withValues}).
 */
const optionTest = (rule: RegExp, text: string): boolean => {
  if (rule.test(text)) return true
  if (!text.startsWith("--") || text.length < 3) return false
  const eq = text.indexOf("=")
  const typed = text.slice(2, eq < 0 ? undefined : eq)
  const value = eq < 0 ? "" : text.slice(eq)
  for (const [, name] of rule.source.matchAll(/--([a-z0-9][a-z0-9-]*)/g)) {
    if (name !== typed && name!.startsWith(typed) && rule.test(`--${name}${value}`)) return true
  }
  return false
}

/** The words, and each option joined to the word after it (`-d recurse` also as `-d=recurse`). */
const withValues = (texts: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...texts,
  ...texts.flatMap((t, i) =>
    t.startsWith("-") && !t.includes("=") && texts[i + 1] !== undefined ? [`${t}=${texts[i + 1]}`] : []
  )
]

const optionMatches = (rule: RegExp | true | undefined, texts: ReadonlyArray<string>): boolean =>
  rule === true || (rule !== undefined && withValues(texts).some((t) => optionTest(rule, t)))

/** `xargs`'s options whose value is the next word (`-n 1`, `-I {}`, `-0a FILE`). */
const XARGS_VALUED = /^-[A-Za-z0-9]*[adEILnPs]$/

/**
 * Whether the program a command that adds operands read from its input runs (after the last `xargs` / `parallel`
 * among `words`, past its options) is one whose operands are not files (`xargs -n 1 echo`; `xargs` alone runs
 * `echo`): every other, unknown to the lists, may read or write whatever files its input names.
 */
const inputProgramKnown = (words: ReadonlyArray<Word>): boolean => {
  let at = -1
  words.forEach((w, i) => {
    if (ARGUMENTS_FROM_INPUT.has(basename(w.literal ?? w.loose))) at = i
  })
  for (let i = at + 1; i < words.length; i++) {
    const text = words[i]!.literal
    if (text === undefined) return false
    if (text === "--") return words[i + 1] === undefined || NO_FILE_OPERANDS.has(basename(words[i + 1]!.literal ?? ""))
    if (!text.startsWith("-")) return NO_FILE_OPERANDS.has(basename(text))
    if (XARGS_VALUED.test(text)) i++
  }
  return true
}

/**
 * The files a simple command's programs read and write, from their operands (every operand of a program that reads
 * or writes files, which errs on the side of matching: a pattern or a script that names a denied path counts too).
 * `commandWords` are the command's words without leading assignments; a wrapper's command is judged.
 *
 * @internal
 */
export const fileOperands = (commandWords: ReadonlyArray<Word>): FileOperands => {
  const words = unwrap(commandWords)
  const first = words[0]
  if (first === undefined) return NONE
  const name = basename(first.literal ?? first.loose)
  const args = words.slice(1)
  const texts = args.map((w) => w.literal ?? w.loose)
  // a wrapper left by `unwrap` has options it does not know (`env -S`, `timeout --x`): opaque
  if (OPAQUE_WRAPPERS.has(name) || WRAPPER_SYNTAX[name] !== undefined) {
    // the command it runs starts at the first word that names a program this module knows (errs on matching)
    const inner = args.findIndex((w) => {
      const n = basename(w.literal ?? w.loose)
      return READERS.has(n) || WRITERS.has(n) || WRITES_WITH[n] !== undefined || RECURSIVE_READ[n] !== undefined ||
        INTERPRETERS[n] !== undefined
    })
    // every word before that command may be the program the wrapper runs (`stdbuf -o0 xargs cat`: `-o0` is not
    // parsed, so `xargs` is not known to be an option's value or the program): each is judged
    const runners = [name, ...(inner === -1 ? args : args.slice(0, inner)).map((w) => basename(w.literal ?? w.loose))]
    const fromInput = runners.some((n) => ARGUMENTS_FROM_INPUT.has(n))
    // the file `xargs -a FILE` / `parallel -a FILE` (or `:::: FILE`) reads its arguments from
    const argumentFiles = fromInput
      ? args.flatMap((w, i) => {
        const text = w.literal ?? w.loose
        if (/^(-a|--arg-file|::::)$/.test(text)) return args[i + 1] === undefined ? [] : [args[i + 1]!]
        if (/^(-[A-Za-z0-9]*a.|--arg-file=)/.test(text)) return candidatesOf(name, w)
        return []
      })
      : []
    // a program it does not know: every operand (its own too) may be a path
    if (inner === -1) {
      // `xargs git diff`: a program the lists do not know, given operands read from the input, which may name any file
      const unknown = fromInput && !inputProgramKnown(words)
      return {
        ...NONE,
        reads: argumentFiles,
        guesses: guessable(operandsOf(name, args)),
        ...(unknown ? { readsUnknown: true, writesUnknown: true } : {})
      }
    }
    const operands = fileOperands(args.slice(inner))
    if (!fromInput) return operands
    const innerName = basename(args[inner]!.literal ?? args[inner]!.loose)
    return {
      ...operands,
      reads: [...operands.reads, ...argumentFiles],
      readsUnknown: operands.reads.length + operands.readTrees.length > 0 || READERS.has(innerName) ||
        INTERPRETERS[innerName] !== undefined,
      writesUnknown: operands.writes.length + operands.writeTrees.length > 0 || WRITERS.has(innerName)
    }
  }
  const interpreter = INTERPRETERS[name]
  if (interpreter !== undefined) return interpreterOperands(interpreter, args)
  const all = operandsOf(name, args)
  const patternGiven = texts.some((t) => /^(-[A-Za-z]*[ef]|--regexp|--file)/.test(t))
  const positional = args.filter((w, i) =>
    !(w.literal ?? w.loose).startsWith("-") &&
    !(PATTERN_FIRST.has(name) && i > 0 && /^-[A-Za-z]*[ABCDdefm]$/.test(args[i - 1]!.literal ?? args[i - 1]!.loose))
  )
  // the pattern of `grep PATTERN FILE…` is kept among the reads (it errs on matching), not among the trees
  const pattern = PATTERN_FIRST.has(name) && !patternGiven ? positional[0] : undefined
  const operands = pattern === undefined ? all : operandsOf(name, args.filter((w) => w !== pattern))
  // curl expands `{a,b}` and `[a-z]` in its URLs and upload names itself (unless `-g`), and reads URLs from `-K` files
  const curlGlobs = name === "curl" &&
    ((!optionMatches(/^(-[A-Za-z]*g[A-Za-z]*|--globoff)$/, texts) && texts.some((t) => /[{[]/.test(t))) ||
      optionMatches(/^(-[A-Za-z]*K|--config)/, texts))
  const namesFrom = optionMatches(NAMES_FROM[name], texts)
  const reader = READERS.has(name)
  const writer = WRITERS.has(name) || optionMatches(WRITES_WITH[name], texts)
  const readsTree = optionMatches(RECURSIVE_READ[name], texts)
  const writesTree = optionMatches(RECURSIVE_WRITE[name], texts) || UNPACKERS.has(name)
  // with no path operand, a search (`grep -r --include=k KEY`) reads its working directory
  const trees = (positional.length === (pattern === undefined ? 0 : 1) && WORKS_IN_CWD.has(name)) ||
      UNPACKERS.has(name)
    ? [...operands, CWD]
    : operands
  if (reader || writer || readsTree || writesTree) {
    return {
      reads: reader ? all : [],
      readTrees: readsTree ? trees : [],
      writes: writer ? operands : [],
      writeTrees: writesTree ? trees : [],
      readsUnknown: namesFrom || curlGlobs,
      writesUnknown: curlGlobs,
      guesses: []
    }
  }
  if (namesFrom) return { ...NONE, readsUnknown: true }
  if (NO_FILE_OPERANDS.has(name) || ALWAYS_REENTRY.has(name)) return NONE
  // a program these lists do not know: each operand may be a file or a directory it reads or writes
  return { ...NONE, guesses: guessable(operands) }
}

// ---------------------------------------------------------------------------------------------------------------------
// where paths lead: directory changes and links
// ---------------------------------------------------------------------------------------------------------------------

const DIRECTORY_CHANGES: ReadonlySet<string> = new Set(["cd", "pushd", "popd"])

/**
 * Programs that make symbolic or hard links (or move them, or restore trees that may hold them): `ln`, `link`, `cp`
 * (`-s`, `-l`, and links copied as links), `mv`, `install`, archive and sync tools, `patch`, `stow`; and, with the
 * subcommands that write the work tree or a package tree, version control and package managers (which link
 * `node_modules/.bin`).
 */
const LINK_MAKERS: ReadonlySet<string> = new Set([
  "ln",
  "link",
  "cp",
  "mv",
  "install",
  "tar",
  "bsdtar",
  "cpio",
  "pax",
  "unzip",
  "7z",
  "7za",
  "rsync",
  "patch",
  "stow"
])

const LINKING_SUBCOMMANDS: Readonly<Record<string, ReadonlySet<string>>> = {
  git: new Set([
    "checkout",
    "switch",
    "restore",
    "reset",
    "clone",
    "pull",
    "merge",
    "rebase",
    "stash",
    "am",
    "apply",
    "cherry-pick",
    "revert",
    "worktree",
    "submodule",
    "checkout-index",
    "read-tree"
  ]),
  hg: new Set(["update", "up", "checkout", "co", "clone", "pull", "revert", "import", "unshelve", "merge"]),
  svn: new Set(["checkout", "co", "update", "up", "export", "switch", "merge", "patch", "revert"]),
  npm: new Set([
    "install",
    "i",
    "ci",
    "add",
    "link",
    "ln",
    "update",
    "up",
    "upgrade",
    "rebuild",
    "uninstall",
    "remove",
    "rm",
    "dedupe",
    "prune"
  ]),
  pnpm: new Set([
    "install",
    "i",
    "add",
    "link",
    "ln",
    "update",
    "up",
    "upgrade",
    "rebuild",
    "remove",
    "rm",
    "uninstall",
    "dedupe",
    "prune",
    "import"
  ]),
  yarn: new Set(["install", "add", "link", "upgrade", "up", "remove", "import"]),
  bun: new Set(["install", "i", "add", "link", "update", "remove", "rm"])
}

/**
 * Whether a simple command changes the shell's directory (`cd`, `pushd`, `popd`, also behind a wrapper).
 *
 * @internal
 */
export const changesDirectory = (words: ReadonlyArray<string>): boolean =>
  words.some((w, i) => DIRECTORY_CHANGES.has(basename(w)) && runsAt(words, i))

/**
 * Programs that load configuration or code from the directory they run in (`.git/config`'s `core.fsmonitor`,
 * `package.json`'s scripts, a `Makefile`, a `tsconfig.json`): an allow rule naming them trusts the session's
 * directory, not one the command moved to.
 *
 * @internal
 */
export const LOADS_FROM_DIRECTORY: ReadonlySet<string> = new Set([
  "git",
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "bun",
  "make",
  "cargo",
  "tsc",
  "go",
  "mvn",
  "gradle",
  "pip",
  "poetry",
  "uv",
  "docker",
  "docker-compose",
  "kubectl",
  "helm",
  "terraform"
])

/**
 * Wrappers' options that run their command in another directory (or root): `env -C DIR`, `unshare --wd=DIR`,
 * `nsenter -w`, `sudo -D`, `systemd-run --working-directory`, `chroot`, … (also clustered: `env -iCdir`).
 */
const ELSEWHERE: Readonly<Record<string, RegExp | true>> = {
  env: /^(-[A-Za-z0-9]*C|--chdir)/,
  unshare: /^(-[A-Za-z]*w|--wd|-[A-Za-z]*R|--root)/,
  nsenter: /^(-[A-Za-z]*[wWrR]|--wd|--root)/,
  sudo: /^(-[A-Za-z]*[DR]|--chdir|--chroot)/,
  "systemd-run": /^(--working-directory|-[A-Za-z]*p|--property|--same-dir)/,
  firejail: /^--(private|chroot|overlay)/,
  bwrap: /^--(chdir|bind|ro-bind|symlink)/,
  proot: true,
  chroot: true,
  git: /^-C/,
  make: /^(-[A-Za-z]*C|--directory)/,
  ninja: /^-C/,
  npm: /^(--prefix|-C)/,
  pnpm: /^(-C|--dir)/,
  yarn: /^--cwd/,
  cargo: /^-C/
}

/**
 * Whether a simple command runs its command in another directory than the shell's, through a wrapper's option (see
 * {@link ELSEWHERE}): the paths of that command are then not known.
 *
 * @internal
 */
export const runsElsewhere = (words: ReadonlyArray<string>): boolean => elsewhere(words) !== undefined

/**
 * Where a command runs its command when a wrapper's option says (see {@link ELSEWHERE}): `{ dir }` with the one
 * literal directory it names (relative to the shell's), `{ dir: undefined }` when that is not known (a root change,
 * several options, a value not literal), `undefined` when it runs in the shell's directory.
 *
 * @internal
 */
export const elsewhere = (
  words: ReadonlyArray<string | undefined>
): { readonly dir: string | undefined } | undefined => {
  const dirs: Array<string | undefined> = []
  words.forEach((w, i) => {
    if (w === undefined || !runsAt(words, i)) return
    const rule = ELSEWHERE[basename(w)]
    if (rule === true) dirs.push(undefined)
    if (rule === undefined || rule === true) return
    words.slice(i + 1).forEach((a, j) => {
      if (a === undefined || !optionTest(rule, a)) return
      const attached = a.startsWith("--")
        ? a.slice(a.indexOf("=") + 1 || a.length)
        : a.slice(rule.exec(a)?.[0].length ?? a.length)
      dirs.push(attached !== "" ? attached.replace(/^=/, "") : words[i + 2 + j])
    })
  })
  if (dirs.length === 0) return undefined
  return { dir: dirs.length === 1 ? dirs[0] : undefined }
}

/**
 * Whether a simple command may make a link (also behind a wrapper or `find -exec`).
 *
 * @internal
 */
export const makesLinks = (words: ReadonlyArray<string>): boolean =>
  words.some((w, i) => {
    if (i > 0 && !WRAPPERS.has(basename(words[0]!)) && basename(words[0]!) !== "find") return false
    const name = basename(w)
    const subcommands = LINKING_SUBCOMMANDS[name]
    // a version control tool's global options come before its subcommand: each later word may be it
    return LINK_MAKERS.has(name) || (subcommands !== undefined && words.slice(i + 1).some((s) => subcommands.has(s)))
  })
