/** @internal */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ProcessExited } from "../../AgentError.js"
import type * as Message from "../../Message.js"
import type { Connection, ExitStatus, LaunchSpec, MemoryPeer } from "../../Transport.js"
import * as Conn from "./connection.js"
import { refusal } from "../message/refusal.js"
import { DEFAULT_MAX_LINE_BYTES, makeLineFramer, parseLine } from "./framing.js"
import { makeStderrTail } from "./stderrTail.js"
import { BASE_ARGS, DEFAULT_STDERR_TAIL_BYTES } from "./processTransport.js"

/** @internal */
export const makeConnection = (
  spec: LaunchSpec = { args: [] }
): Effect.Effect<{ readonly connection: Connection; readonly peer: MemoryPeer }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stdout = yield* Mailbox.make<Message.Frame, ProcessExited>()
    const stdin = yield* Mailbox.make<Message.StdinMessage>()
    const exited = yield* Deferred.make<ExitStatus>()
    const inputEnded = yield* Deferred.make<void>()
    const sent: Array<Message.StdinMessage> = []
    const framer = makeLineFramer(spec.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES)
    const stderr = makeStderrTail(spec.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES, spec.onStderr)
    let status: ExitStatus | undefined
    let ended = false

    const processExited = (s: ExitStatus) =>
      new ProcessExited({ code: s.code, signal: s.signal, stderrTail: stderr.tail() })

    const endInput = Effect.suspend(() => {
      ended = true
      return Effect.zipRight(stdin.end, Deferred.succeed(inputEnded, undefined))
    })

    const exit = (s: ExitStatus) =>
      Effect.suspend(() => {
        if (status !== undefined) return Effect.void
        status = s
        const rest: Array<Message.Frame> = []
        framer.end(rest)
        return Effect.all([
          stdout.offerAll(rest),
          s.code === 0 ? stdout.end : stdout.fail(processExited(s)),
          stdin.end,
          Deferred.succeed(exited, s)
        ], { discard: true })
      })

    yield* Effect.addFinalizer(() => Effect.zipRight(endInput, exit({ code: 0, signal: null })))

    const connection: Connection = Conn.make({
      pid: Option.none(),
      command: ["memory", ...BASE_ARGS, ...spec.args],
      pull: Stream.toPull(Mailbox.toStream(stdout)),
      unsafeSend: (message) => {
        const exited = status
        const refused = refusal(ended, exited === undefined ? undefined : () => processExited(exited))
        if (refused !== undefined) return refused
        // a copy through JSON, as a real pipe would make
        const copy = JSON.parse(JSON.stringify(message)) as Message.StdinMessage
        sent.push(copy)
        stdin.unsafeOffer(copy)
        return undefined
      },
      endInput,
      awaitExit: Deferred.await(exited),
      exitStatus: Effect.sync(() => Option.fromNullable(status)),
      stderrTail: Effect.sync(() => stderr.tail()),
      kill: Effect.suspend(() => exit({ code: null, signal: "SIGTERM" }))
    })

    const peer: MemoryPeer = {
      spec,
      emit: (frame) =>
        Effect.suspend(() => {
          if (status !== undefined) return Effect.void
          const parsed = parseLine(JSON.stringify(frame))
          return parsed === undefined ? Effect.void : Effect.asVoid(stdout.offer(parsed))
        }),
      emitRaw: (chunk) =>
        Effect.suspend(() => {
          if (status !== undefined) return Effect.void
          const out: Array<Message.Frame> = []
          framer.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk, out)
          return Effect.asVoid(stdout.offerAll(out))
        }),
      emitStderr: (text) => Effect.sync(() => stderr.push(Buffer.from(text, "utf8"))),
      take: stdin.take,
      sent: Effect.sync(() => [...sent]),
      inputEnded: Deferred.await(inputEnded),
      exit
    }
    return { connection, peer }
  })

/** @internal */
export const open = (
  spec: LaunchSpec,
  script: (peer: MemoryPeer) => Effect.Effect<void>
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { connection, peer } = yield* makeConnection(spec)
    yield* script(peer).pipe(
      Effect.zipRight(peer.exit({ code: 0, signal: null })),
      Effect.forkScoped
    )
    return connection
  })
