/**
 * Finds and ends the processes a CLI started, also those that left its process group or were re-parented to init
 * (the CLI starts its Bash tool in a session of its own; a backgrounded command outlives the shell that started it).
 *
 * Two ways to recognise them, both read from Linux procfs without privileges:
 * - a marker in the environment: the CLI is started with `ECA_SESSION_<128-bit random hex>` set, which every
 *   descendant inherits unless it scrubs its environment; `/proc/<pid>/environ` (readable for the host's own
 *   processes) shows the environment a process was started with;
 * - parentage: when the SDK has to signal the CLI, its process tree at that moment (`ppid` in `/proc/<pid>/stat`),
 *   which also holds descendants that cleared their environment.
 *
 * A process is identified by its pid and start time, so a pid reused by another process is never signalled.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"

/** The prefix of the marker variable; the full name ends with the session's random hex. @internal */
export const MARKER_PREFIX = "ECA_SESSION_"

/** Whether this platform lets the reaper see processes by environment and parentage (Linux procfs). @internal */
export const supported: boolean = process.platform === "linux"

/** A process as seen by one scan: its pid and its start time (clock ticks after boot). @internal */
export interface Proc {
  readonly pid: number
  readonly start: string
}

/**
 * Where the kernel's pid counter stood at a moment: the last pid it gave out (`/proc/loadavg`, field 5, in this
 * pid namespace), how many tasks it had started since boot (`/proc/stat`, `processes`: every namespace, threads
 * included), how many tasks existed (`/proc/loadavg`, field 4) and the counter's bound (`/proc/sys/kernel/pid_max`).
 *
 * A process started later has a pid above `lastPid`, unless the counter wrapped since. To wrap, it must run from
 * `lastPid` up to `pidMax` giving out every pid that was free at the start: at least `pidMax − 1 − lastPid − tasks`
 * new tasks (pids in use are skipped, and there were at most `tasks` of them; a pid freed meanwhile and given out
 * again is a new task too). So while fewer tasks than that have been started, no pid at or below `lastPid` can
 * belong to a process started later. After one wrap the counter starts again low (at 300, the kernel's
 * `RESERVED_PIDS`) and gives out pids up to where it stands now; to give out one between there and `lastPid` it must
 * wrap a second time. See {@link windowSince}.
 *
 * @internal
 */
export interface Origin {
  readonly lastPid: number
  readonly forks: number
  readonly tasks: number
  readonly pidMax: number
}

/** The variable every process a CLI starts inherits, and the pid counter before that CLI started. @internal */
export interface Marker {
  readonly name: string
  readonly value: string
  readonly origin: Origin | undefined
}

/**
 * A fresh marker: the name and value of the variable to put in the CLI's environment, and where the pid counter
 * stood before the CLI was started (`origin`), which bounds the pids its descendants can have: take it just before
 * the spawn. @internal
 */
export const makeMarker = (origin?: Origin | undefined): Marker => ({
  name: `${MARKER_PREFIX}${randomBytes(16).toString("hex")}`,
  value: String(process.pid),
  origin
})

interface Stat {
  readonly state: string
  readonly ppid: number
  readonly start: string
}

/**
 * Reads a procfs file into `buffer` (one open, one read, one close: `readFileSync` also stats and reads to EOF, which
 * made a scan slower); the bytes read, or -1 when the file cannot be read. A file larger than `buffer` fills it.
 */
const readInto = (file: string, buffer: Buffer): number => {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, "r")
    return fs.readSync(fd, buffer, 0, buffer.length, 0)
  } catch {
    return -1
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

const STAT_BYTES = 4096
const ENVIRON_BYTES = 64 * 1024

const readStat = (pid: string | number, buffer: Buffer = Buffer.allocUnsafe(STAT_BYTES)): Stat | undefined => {
  const length = readInto(`/proc/${pid}/stat`, buffer)
  if (length <= 0) return undefined
  const text = buffer.toString("latin1", 0, length)
  // the command name (field 2) may hold spaces and parentheses: fields are counted from the last ")"
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { state: fields[0] ?? "", ppid: Number(fields[1]), start: fields[19] ?? "" }
}

/** Reads a small procfs file as text; `undefined` when it cannot be read. */
const readText = (file: string, buffer: Buffer): string | undefined => {
  const length = readInto(file, buffer)
  return length <= 0 ? undefined : buffer.toString("latin1", 0, length)
}

const LOADAVG = /^\S+ \S+ \S+ \d+\/(\d+) (\d+)/
const PROCESSES = /^processes (\d+)$/m

/** The pid counter now (see {@link Origin}), or `undefined` where procfs does not tell (the scans then read all). */
const counter = (pidMax: number): Origin | undefined => {
  const load = LOADAVG.exec(readText("/proc/loadavg", Buffer.allocUnsafe(STAT_BYTES)) ?? "")
  if (load === null) return undefined
  // `/proc/stat` holds a line per CPU before `processes`: read it whole
  let stat: string
  try {
    stat = fs.readFileSync("/proc/stat", "latin1")
  } catch {
    return undefined
  }
  const forks = PROCESSES.exec(stat)
  if (forks === null) return undefined
  return { lastPid: Number(load[2]), forks: Number(forks[1]), tasks: Number(load[1]), pidMax }
}

/** The pid counter's bound, read once per Transport; `undefined` where procfs does not tell. @internal */
export const pidMax = (): number | undefined => {
  const text = readText("/proc/sys/kernel/pid_max", Buffer.allocUnsafe(64))
  const value = text === undefined ? NaN : Number(text.trim())
  return Number.isSafeInteger(value) && value > 0 ? value : undefined
}

/** Where the pid counter stands now (see {@link Origin}); `undefined` without procfs or its bound. @internal */
export const origin = (max: number | undefined): Origin | undefined => max === undefined ? undefined : counter(max)

/**
 * The pids a scan reads: those above `above`, and those at or below `upTo` (the pids given out after the counter
 * wrapped once; 0 when it did not). With `above` 0, every pid.
 *
 * @internal
 */
export interface Window {
  readonly above: number
  readonly upTo: number
}

/** Every pid. @internal */
export const EVERY_PID: Window = { above: 0, upTo: 0 }

/**
 * The lowest pid the counter gives out after it wraps (the kernel's `RESERVED_PIDS`, in every pid namespace once its
 * counter has passed it).
 */
const WRAP_START = 300

/**
 * The pids a process started after `since` can have, given the counter `now` (see {@link Origin}). Pure.
 * - The counter still at or above where it stood: the pids above `since.lastPid`, while too few tasks were started
 *   for it to have wrapped (`pidMax − 1 − lastPid − tasks`).
 * - The counter below where it stood: it wrapped. The pids above `since.lastPid` (given out before the wrap) and
 *   those up to `now.lastPid` (after it), while too few tasks were started for a second wrap: that takes a whole
 *   round from {@link WRAP_START} to `pidMax` giving out every pid not in use, in use being at most the `tasks` of
 *   the origin and the tasks started since, so at least `pidMax − WRAP_START − tasks` tasks in all.
 * - Otherwise (or when either counter is unknown, or the bound changed): {@link EVERY_PID}.
 *
 * @internal
 */
export const windowSince = (since: Origin | undefined, now: Origin | undefined): Window => {
  if (since === undefined || now === undefined || now.pidMax !== since.pidMax) return EVERY_PID
  const started = now.forks - since.forks
  if (started < 0) return EVERY_PID
  if (now.lastPid >= since.lastPid) {
    return started < since.pidMax - 1 - since.lastPid - since.tasks ? { above: since.lastPid, upTo: 0 } : EVERY_PID
  }
  return started < since.pidMax - WRAP_START - since.tasks ? { above: since.lastPid, upTo: now.lastPid } : EVERY_PID
}

/** Whether a scan of `outer` read every pid a scan of `inner` reads. @internal */
export const covers = (outer: Window, inner: Window): boolean =>
  outer.above === 0 || (inner.above !== 0 && outer.above <= inner.above && outer.upTo >= inner.upTo)

/**
 * The start time of a process in clock ticks since boot (`/proc/<pid>/stat` field 22), which tells a process from a
 * later one that reuses its pid; `undefined` without `/proc` or when the process is gone.
 *
 * @internal
 */
export const startTime = (pid: number | "self"): string | undefined => {
  const start = readStat(pid)?.start
  return start !== undefined && /^\d+$/.test(start) ? start : undefined
}

const running = (stat: Stat | undefined): stat is Stat =>
  stat !== undefined && stat.state !== "Z" && stat.state !== "X" && stat.state !== "x"

/** The pids listed in `/proc` within `window`. */
const pidEntries = (window: Window = EVERY_PID): ReadonlyArray<string> => {
  const { above, upTo } = window
  try {
    return fs.readdirSync("/proc").filter((entry) => {
      const first = entry.charCodeAt(0)
      if (first < 48 || first > 57) return false
      if (above === 0) return true
      const pid = Number(entry)
      return pid > above || pid <= upTo
    })
  } catch {
    return []
  }
}

/** `true` while `proc` runs (not a zombie, and its pid was not reused). @internal */
export const isRunning = (proc: Proc): boolean => {
  const stat = readStat(proc.pid)
  return running(stat) && stat.start === proc.start
}

const PREFIX = Buffer.from(MARKER_PREFIX, "latin1")
const NAME_BYTES = MARKER_PREFIX.length + 32
const EQUALS = 0x3d

/** The marker variables set in an environment block (`NAME=value\0…`). */
const markerNames = (environ: Buffer): Array<string> => {
  const names: Array<string> = []
  for (let at = environ.indexOf(PREFIX); at !== -1; at = environ.indexOf(PREFIX, at + 1)) {
    if ((at === 0 || environ[at - 1] === 0) && environ[at + NAME_BYTES] === EQUALS) {
      names.push(environ.toString("latin1", at, at + NAME_BYTES))
    }
  }
  return names
}

/**
 * Every running process (other than the host) with a pid in `window` whose initial environment holds a marker
 * variable, by variable name (a process started under nested sessions holds several). Processes the host may not
 * read (other users', unless it runs as root) are skipped. A process inherits a marker only from the CLI that was
 * started with it, so a scan for the markers of CLIs started after a counter {@link Origin} reads only the pids of
 * {@link windowSince}: the processes started since, not every process of the machine.
 *
 * @internal
 */
export const scan = (window: Window = EVERY_PID): Map<string, Array<Proc>> => {
  const self = String(process.pid)
  const environ = Buffer.allocUnsafe(ENVIRON_BYTES)
  const stat = Buffer.allocUnsafe(STAT_BYTES)
  const out = new Map<string, Array<Proc>>()
  for (const entry of pidEntries(window)) {
    if (entry === self) continue
    const file = `/proc/${entry}/environ`
    const length = readInto(file, environ)
    if (length <= 0) continue
    let block = environ.subarray(0, length)
    if (length === environ.length) {
      // an environment larger than the buffer: read it whole
      try {
        block = fs.readFileSync(file)
      } catch {
        continue
      }
    }
    const names = markerNames(block)
    if (names.length === 0) continue
    const status = readStat(entry, stat)
    if (!running(status)) continue
    const proc = { pid: Number(entry), start: status.start }
    for (const name of names) {
      const procs = out.get(name)
      if (procs === undefined) out.set(name, [proc])
      else procs.push(proc)
    }
  }
  return out
}

/**
 * The pids a scan for `marker` must read (see {@link windowSince}). The counter's bound is read again: lowered since
 * the origin (by root), the counter may have wrapped below pids the window would leave out, and every pid is read.
 */
const windowOf = (marker: Marker): Window =>
  marker.origin === undefined ? EVERY_PID : windowSince(marker.origin, origin(pidMax()))

/** The running processes that carry `marker`'s variable (see {@link scan}). @internal */
export const marked = (marker: Marker): Array<Proc> => scan(windowOf(marker)).get(marker.name) ?? []

/**
 * Scans shared by the sessions of one Transport. A session whose CLI has exited may use any scan that started after
 * that exit and read every pid its marker's processes can have: from then on only marked processes can start marked
 * processes, so a scan that found none for its marker stays true. Many sessions closing together (their CLIs exit in
 * the same tick) then pay for one pass over `/proc`.
 *
 * @internal
 */
export interface Scans {
  /** The bound of the pid counter on this machine, read once (see {@link Origin}). */
  readonly pidMax: number | undefined
  /** Call when a CLI has exited; pass the result to {@link Scans.markedSince}. */
  readonly exited: () => number
  /** The processes carrying `marker`, from a scan that started after exit number `exit` (a new one if needed). */
  readonly markedSince: (marker: Marker, exit: number) => ReadonlyArray<Proc>
}

/** @internal */
export const makeScans = (): Scans => {
  let exits = 0
  let last: { readonly after: number; readonly window: Window; readonly found: Map<string, Array<Proc>> } | undefined
  return {
    pidMax: supported ? pidMax() : undefined,
    exited: () => ++exits,
    markedSince: (marker, exit) => {
      const window = windowOf(marker)
      if (last === undefined || last.after < exit || !covers(last.window, window)) {
        last = { after: exits, window, found: scan(window) }
      }
      return last.found.get(marker.name) ?? []
    }
  }
}

/** The running descendants of `root` (children, grandchildren, …), from the parent pid of every process. @internal */
export const descendants = (root: number): Array<Proc> => {
  const children = new Map<number, Array<Proc>>()
  const buffer = Buffer.allocUnsafe(STAT_BYTES)
  for (const entry of pidEntries()) {
    const stat = readStat(entry, buffer)
    if (!running(stat)) continue
    const proc = { pid: Number(entry), start: stat.start }
    const siblings = children.get(stat.ppid)
    if (siblings === undefined) children.set(stat.ppid, [proc])
    else siblings.push(proc)
  }
  const out: Array<Proc> = []
  const pending = [root]
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    for (const child of children.get(pid) ?? []) {
      out.push(child)
      pending.push(child.pid)
    }
  }
  return out
}

/** Both lists, without duplicates (by pid and start time). @internal */
export const union = (a: ReadonlyArray<Proc>, b: ReadonlyArray<Proc>): Array<Proc> => {
  const seen = new Set(a.map((p) => `${p.pid}:${p.start}`))
  return [...a, ...b.filter((p) => !seen.has(`${p.pid}:${p.start}`))]
}

/** Signals every process of `procs` that still runs as the same process. @internal */
export const send = (procs: ReadonlyArray<Proc>, signal: NodeJS.Signals): void => {
  for (const proc of procs) {
    if (proc.pid === process.pid || !isRunning(proc)) continue
    try {
      process.kill(proc.pid, signal)
    } catch {
      // gone meanwhile, or not ours to signal
    }
  }
}

const POLL_MILLIS = 20
const KILL_ROUNDS = 25

/** Polls until the last look found no process; its output is that look. */
const untilNone: Schedule.Schedule<ReadonlyArray<Proc>, ReadonlyArray<Proc>> = Schedule.spaced(POLL_MILLIS).pipe(
  Schedule.passthrough<number, ReadonlyArray<Proc>, never>,
  Schedule.whileInput((procs: ReadonlyArray<Proc>) => procs.length > 0)
)

/** Waits on the wall clock even under a `TestClock`: a finalizer must not hang on a test's clock. */
const wallClock = Clock.make()

/**
 * Ends the marked processes and those of `known` that still run: SIGTERM, up to `graceMillis` for them to exit
 * (polled), then SIGKILL — repeated, with a fresh scan each time, until no marked process is left (bounded: a
 * process that forks faster than it is killed is reported with a warning). With `graceMillis` 0 (they had their
 * SIGTERM already) it goes straight to SIGKILL.
 *
 * @internal
 */
export const reap = (options: {
  readonly marker: Marker
  /** The marked processes found by the latest scan. */
  readonly found: ReadonlyArray<Proc>
  readonly known: ReadonlyArray<Proc>
  readonly graceMillis: number
}): Effect.Effect<void> =>
  Effect.suspend(() => {
    // nothing left, the common close: no step more
    const running = union(options.found, options.known).filter(isRunning)
    return running.length === 0 ? Effect.void : reapRunning(running, options)
  })

/** {@link reap} of the processes of `running`, which still ran. */
const reapRunning = (running: ReadonlyArray<Proc>, options: {
  readonly marker: Marker
  readonly graceMillis: number
}): Effect.Effect<void> =>
  Effect.gen(function*() {
    let left = running
    yield* Effect.logDebug("tool processes left by the CLI").pipe(
      Effect.annotateLogs({ pids: left.map((p) => p.pid).join(",") })
    )
    if (options.graceMillis > 0) {
      send(left, "SIGTERM")
      left = yield* Effect.sync(() => left.filter(isRunning)).pipe(
        Effect.repeat(untilNone.pipe(Schedule.upTo(options.graceMillis)))
      )
    }
    // SIGKILL whatever still runs, and what was started meanwhile, until a scan finds nothing
    const known = left
    left = yield* Effect.sync(() => {
      const now = union(marked(options.marker), known.filter(isRunning))
      send(now, "SIGKILL")
      return now
    }).pipe(
      Effect.repeat(untilNone.pipe(Schedule.intersect(Schedule.recurs(KILL_ROUNDS)), Schedule.map(([last]) => last)))
    )
    if (left.length > 0) {
      yield* Effect.logWarning("tool processes still running after SIGKILL").pipe(
        Effect.annotateLogs({ pids: left.map((p) => p.pid).join(",") })
      )
    }
  }).pipe(Effect.withClock(wallClock))
