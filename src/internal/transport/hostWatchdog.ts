/**
 * The host watchdog: ends the CLIs of a host that died without running its finalizers (SIGKILL, the OOM killer), and
 * their tool processes. Node cannot ask the kernel to signal a child when its parent dies (`PR_SET_PDEATHSIG`), and
 * a CLI whose stdin closes still finishes the turn it is in, tools included.
 *
 * One small reaper per Transport layer (per host, not per session), started at the first session the layer opens, and
 * living as long as the layer or a session that uses it, whichever is last (a session kept in a longer scope than the
 * layer that made it stays watched): a POSIX shell loop that reads registrations from a pipe only the host holds (the pipe is close-on-exec, so no CLI
 * inherits it). The host writes `+ <pgid> <marker>` when it has started a CLI (the CLI leads a process group of its
 * own) and `- <pgid>` once that CLI and its tools have been reaped. When the pipe reaches end of file (the host is
 * gone, or the layer and every session it watched closed) the reaper SIGKILLs every registered process group whose leader is still the
 * process that was registered (same start time) or is gone (a group id is not reused while the group has members),
 * then removes the host's private argument files (the settings and MCP config `argv.ts` writes, secrets included),
 * then, rounds until none is left, SIGKILLs every process whose environment carries a registered marker (the tool
 * processes the CLI started in process groups of their own), and exits.
 *
 * The reaper detaches from the host: its shell starts the loop in the background and exits, so the loop is neither
 * the host's child nor in its process group or session. A signal to the host's group (Ctrl-C) does not reach it, a
 * supervisor that ends the host's process tree leaves it to do its work, and the host never has a child to wait
 * for. Linux only (it reads `/proc`), like the tool-process reaper.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as cp from "node:child_process"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { hostDirPrefix } from "./argv.js"
import { MARKER_PREFIX, supported } from "./reaper.js"

/**
 * What the Transport asks of the watchdog.
 *
 * @internal
 */
export interface HostWatchdog {
  /**
   * Registers a started CLI (the leader of process group `pid`, its descendants carrying the marker variable
   * `markerName` when there is one) for the scope: it is unregistered when the scope closes, so register it before
   * the finalizer that reaps the CLI.
   */
  readonly watch: (pid: number, markerName: string | undefined) => Effect.Effect<void, never, Scope.Scope>
}

/** A watchdog that watches nothing (switched off, or a platform without `/proc`). @internal */
export const disabled: HostWatchdog = { watch: () => Effect.void }

/**
 * The reaper (POSIX sh; dash, bash and busybox ash run it). Registrations are kept in `$g` as `pgid:start:marker`
 * words; `$s` is set by `st` to field 22 of `/proc/<pid>/stat` (the start time), empty when the process is gone.
 * Processes are found by marker with `grep -l` over `/proc/<pid>/environ`: a marker is 128 random bits, so only the
 * processes that inherited it match. A `q` line is the host's own close: what follows it (the end of the input) is
 * not the host's death, so its private files are left to their owners (sessions of other layers of the same host
 * may still use them). Without it, the end of the input is the host's death: after the CLIs' groups are killed, the
 * directories named `$ECA_HOST_DIRS*` (this host's private argument files, see `argv.ts`) that are plain
 * directories of this user are removed, before the slower search by marker.
 */
const SCRIPT = `(
trap '' HUP INT TERM PIPE
st() { s=; l=; { read -r l < /proc/$1/stat; } 2>/dev/null || return 0; set -- \${l##*) }; s=\${20}; }
g=
while IFS=' ' read -r op p m; do
  case "$op" in
    +) st "$p"; [ -n "$s" ] && g="$g $p:$s:$m" ;;
    -) n=; for e in $g; do case "$e" in "$p":*) ;; *) n="$n $e" ;; esac; done; g=$n ;;
    q) exit 0 ;;
  esac
done
set --
for e in $g; do
  p=\${e%%:*}; r=\${e#*:}; t=\${r%%:*}; m=\${r#*:}
  st "$p"
  if [ -z "$s" ] || [ "$s" = "$t" ]; then kill -s KILL -- "-$p" 2>/dev/null; fi
  [ "$m" != - ] && set -- "$@" -e "$m="
done
case "$ECA_HOST_DIRS" in
  /*/eca-args-[0-9]*-*-)
    for d in "$ECA_HOST_DIRS"*; do
      [ -d "$d" ] && [ ! -h "$d" ] && [ -O "$d" ] && rm -rf -- "$d"
    done ;;
esac
[ $# -eq 0 ] && exit 0
i=0
while [ $i -lt 20 ]; do
  f=0
  for x in $(grep -alsF "$@" /proc/[0-9]*/environ); do
    x=\${x#/proc/}; x=\${x%/environ}
    [ "$x" != $$ ] && kill -s KILL "$x" 2>/dev/null && f=1
  done
  [ $f -eq 0 ] && exit 0
  i=$((i+1))
done
) <&3 3<&- >/dev/null 2>&1 &
`

/**
 * The reaper's whole environment: a fixed search path for `grep` (it does not depend on the host's environment), and
 * the pid of the host it serves, for operators and tests.
 *
 * @internal
 */
export const REAPER_ENV_NAME = "ECA_HOST_WATCHDOG"

const reaperEnv = () => ({
  PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
  [REAPER_ENV_NAME]: String(process.pid),
  // the prefix of this host's private argument directories (absolute, as `protectArgs` makes them)
  ECA_HOST_DIRS: path.join(path.resolve(os.tmpdir()), hostDirPrefix())
})

/** A marker name as `Reaper.makeMarker` makes it: nothing else reaches the reaper's command language. */
const MARKER = new RegExp(`^${MARKER_PREFIX}[0-9a-f]{32}$`)

/** Starts a reaper: the pipe to it, or `undefined` when it could not start (an error costs the watch, never the host). */
const start = (): net.Socket | undefined => {
  try {
    // the pipe is the child's fd 3, not its stdin: Node destroys a child's stdin when the child exits, and the
    // shell Node starts exits at once, leaving the loop in the background
    const child = cp.spawn("/bin/sh", ["-c", SCRIPT], {
      stdio: ["ignore", "ignore", "ignore", "pipe"],
      detached: true,
      // it pins no directory of the host's
      cwd: "/",
      env: reaperEnv()
    })
    child.on("error", () => {})
    child.unref()
    const pipe = child.stdio[3]
    if (!(pipe instanceof net.Socket)) return undefined
    pipe.on("error", () => {})
    // the pipe never keeps the host alive: when the host exits, the reaper ends what it left
    pipe.unref()
    return pipe
  } catch {
    return undefined
  }
}

/**
 * A watchdog for the scope. It is used by the scope (the layer that made it, while it is open) and by every CLI
 * registered and not yet unregistered; the reaper starts at the first `watch` that finds none running, and its input
 * ends when the last user leaves: then it ends what is still registered (nothing, on a clean close) and exits. So a
 * session kept in a scope longer than the layer's is watched until its own close, and a session opened after the
 * layer closed starts a reaper of its own, ended by its close. Without `/proc` it is {@link disabled}.
 *
 * @internal
 */
export const make: Effect.Effect<HostWatchdog, never, Scope.Scope> = Effect.gen(function*() {
  if (!supported) return disabled
  // the layer's scope while it is open, plus the registered CLIs
  let users = 1
  // the pipe to the running reaper; `undefined` while none runs (or its start failed: the sessions run unwatched)
  let input: net.Socket | undefined
  const write = (line: string) => {
    if (input !== undefined && input.writable) input.write(line)
  }
  const leave = () => {
    users--
    if (users > 0) return
    // a close, not the host's death: the reaper leaves the host's private files alone
    write("q\n")
    input?.end()
    input = undefined
  }
  yield* Effect.addFinalizer(() => Effect.sync(leave))
  return {
    watch: (pid, markerName) => {
      const marker = markerName !== undefined && MARKER.test(markerName) ? markerName : "-"
      // registered and its finalizer added with no interruption between them
      return Effect.uninterruptible(Effect.flatMap(Effect.scope, (scope) => {
        users++
        if (input === undefined) input = start()
        write(`+ ${pid} ${marker}\n`)
        return Scope.addFinalizer(
          scope,
          Effect.sync(() => {
            write(`- ${pid}\n`)
            leave()
          })
        )
      }))
    }
  }
})
