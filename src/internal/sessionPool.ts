/** @internal */
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Options } from "../AgentOptions.js"
import type { Prompt, SessionError } from "../ClaudeAgent.js"
import type * as Message from "../Message.js"
import type { Config, Service, Stats } from "../SessionPool.js"
import { Transport } from "../Transport.js"
import * as session from "./session.js"

interface Entry {
  readonly internal: session.SessionInternal
  readonly scope: Scope.CloseableScope
}

const mergeOptions = (base: Options | undefined, extra: Options | undefined): Options => {
  if (extra === undefined) return base ?? {}
  if (base === undefined) return extra
  return { ...base, ...extra, env: { ...base.env, ...extra.env } }
}

const isDefault = (options: Options | undefined) => options === undefined || Object.keys(options).length === 0

/** @internal */
export const make = (config: Config): Effect.Effect<Service, never, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    if (!(Number.isInteger(config.maxConcurrent) && config.maxConcurrent > 0)) {
      return yield* Effect.dieMessage("SessionPool: maxConcurrent must be a positive integer")
    }
    const transport = yield* Transport
    const poolScope = yield* Effect.scope
    const semaphore = yield* Effect.makeSemaphore(config.maxConcurrent)
    const warmTarget = Math.min(config.warm ?? 0, config.maxConcurrent)
    const ready = yield* Queue.unbounded<Entry>()
    const stats = { active: 0, live: 0, waiting: 0 }

    /** Creates a session in its own scope (a child of the pool's), holding one permit until that scope closes. */
    const open = (options: Options): Effect.Effect<Entry, SessionError> =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(poolScope, ExecutionStrategy.sequential)
        return yield* Effect.gen(function*() {
          stats.waiting++
          yield* Effect.acquireRelease(
            Effect.ensuring(semaphore.take(1), Effect.sync(() => stats.waiting--)),
            () => semaphore.release(1)
          )
          yield* Effect.acquireRelease(Effect.sync(() => stats.live++), () => Effect.sync(() => stats.live--))
          let effective = options
          if (config.isolateConfigDir === true) {
            const dir = yield* Effect.acquireRelease(
              Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eca-config-"))),
              (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
            )
            effective = { ...options, env: { ...options.env, CLAUDE_CONFIG_DIR: dir } }
          }
          const internal = yield* session.make(effective).pipe(Effect.provideService(Transport, transport))
          return { internal, scope }
        }).pipe(
          Scope.extend(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
      })

    /** Keeps `warmTarget` initialized sessions ready (in the background, retrying failed spawns). */
    const refill: Effect.Effect<void> = open(config.options ?? {}).pipe(
      Effect.tap((entry) => entry.internal.session.initializationResult),
      Effect.tapErrorCause((cause) => Effect.logWarning("SessionPool: a warm session failed to start", cause)),
      Effect.retry(Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("30 seconds")))),
      Effect.flatMap((entry) => ready.offer(entry)),
      Effect.ignore
    )
    for (let i = 0; i < warmTarget; i++) yield* Effect.forkIn(refill, poolScope)

    /** A warm session cannot be used by a borrower that needs other options: free its slot instead. */
    const evictWarm = Effect.flatMap(Queue.poll(ready), (entry) =>
      Option.isSome(entry)
        ? Effect.zipRight(
          Scope.close(entry.value.scope, Exit.void),
          Effect.forkIn(refill, poolScope)
        )
        : Effect.void)

    const borrow = (options?: Options): Effect.Effect<Entry, SessionError, Scope.Scope> =>
      Effect.gen(function*() {
        let entry: Entry | undefined
        if (isDefault(options) && warmTarget > 0) {
          const warm = yield* Queue.poll(ready)
          if (Option.isSome(warm)) {
            entry = warm.value
            yield* Effect.forkIn(refill, poolScope)
          }
        }
        if (entry === undefined) {
          if (stats.live >= config.maxConcurrent) yield* evictWarm
          entry = yield* open(mergeOptions(config.options, options))
        }
        const borrowed = entry
        stats.active++
        yield* Effect.addFinalizer(() =>
          Effect.zipRight(
            Scope.close(borrowed.scope, Exit.void),
            Effect.sync(() => {
              stats.active--
            })
          )
        )
        return borrowed
      })

    const service: Service = {
      session: (options) => Effect.map(borrow(options), (entry) => entry.internal.session),
      query: <E = never, R = never>(
        prompt: string | Stream.Stream<Prompt, E, R>,
        options?: Options
      ): Stream.Stream<Message.SdkMessage, SessionError | E, R> =>
        Stream.unwrapScoped(Effect.flatMap(borrow(options), (entry) => session.drive(entry.internal, prompt))),
      stats: Effect.flatMap(ready.size, (warm) =>
        Effect.succeed<Stats>({ active: stats.active, warm, live: stats.live, waiting: stats.waiting }))
    }
    return service
  })
