/** @internal */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as STM from "effect/STM"
import * as Stream from "effect/Stream"
import * as TRef from "effect/TRef"
import * as TSemaphore from "effect/TSemaphore"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Options } from "../../AgentOptions.js"
import { InputClosed, type SessionError } from "../../AgentError.js"
import type * as Message from "../../Message.js"
import type { Config, Service } from "../../SessionPool.js"
import { required as requiredTransport, Transport } from "../../Transport.js"
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

/** A warm session owned by the pool (not borrowed yet): starting until it has answered `initialize`, then ready. */
interface Warm {
  readonly entry: Entry
  readonly ready: TRef.TRef<boolean>
}

/** What a borrower gets from one atomic look at the pool. */
type Decision =
  | { readonly _tag: "Claim"; readonly warm: Warm }
  | { readonly _tag: "Permit" }
  | { readonly _tag: "Evict"; readonly warm: Warm }
  | { readonly _tag: "Closed" }

const WARM_RETRY_MIN_MILLIS = 200
const WARM_RETRY_MAX_MILLIS = 30_000

/**
 * Whether starting a warm session again could go otherwise: `false` for a configuration the next start meets
 * unchanged (no CLI found, options rejected, a CLI version outside the range), a defect, and an interruption the
 * warm-up did not ask for (a service the Transport uses has shut down under it). Crashes, timeouts and a version
 * probe without an answer may pass.
 */
const retryable = (cause: Cause.Cause<SessionError>): boolean => {
  if (Cause.isDie(cause)) return false
  const failures = Cause.failures(cause)
  let failed = false
  for (const error of failures) {
    failed = true
    if (error._tag === "CliNotFound" || error._tag === "InvalidOptions") return false
    if (error._tag === "VersionIncompatible" && error.reason === "OutOfRange") return false
  }
  return failed
}

/**
 * Every live CLI process holds one permit of a `TSemaphore` of `maxConcurrent`, taken before it is spawned and
 * given back once its scope has closed (the process reaped): the cap can never be overshot. Warm sessions hold
 * permits too, so a borrower that finds none free takes a warm session (ready or still starting) or, when it needs
 * other options, evicts one; every decision is one STM transaction, and a borrower that finds nothing waits for
 * the pool to change (a permit released, a warm session registered) rather than on the permits alone. Refills take
 * a permit only while no borrower waits, so they never compete with borrowers.
 *
 * @internal
 */
export const make = (config: Config): Effect.Effect<Service, never, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    if (!(Number.isInteger(config.maxConcurrent) && config.maxConcurrent > 0)) {
      return yield* Effect.dieMessage("SessionPool: maxConcurrent must be a positive integer")
    }
    const transport = yield* requiredTransport
    const poolScope = yield* Effect.scope
    const permits = yield* STM.commit(TSemaphore.make(config.maxConcurrent))
    const warmTarget = Math.min(config.warm ?? 0, config.maxConcurrent)
    // warm sessions not borrowed yet, oldest first
    const warm = yield* STM.commit(TRef.make<ReadonlyArray<Warm>>([]))
    // borrowers that have not got a session yet
    const waiting = yield* STM.commit(TRef.make(0))
    // set as the pool's scope starts closing: borrowers (waiting ones included) then fail before anything is started
    const closed = yield* STM.commit(TRef.make(false))
    let active = 0

    const without = (list: ReadonlyArray<Warm>, w: Warm) => list.filter((x) => x !== w)

    /**
     * Opens a session on a permit the caller has just taken (with interruption masked): the permit is given back
     * when the session's scope closes. Only `restore`d parts can be interrupted.
     */
    const openOnPermit = (
      options: Options,
      restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ): Effect.Effect<Entry, SessionError> =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(poolScope, ExecutionStrategy.sequential)
        // added first, so it runs last: after the process is reaped
        yield* Scope.addFinalizer(scope, STM.commit(TSemaphore.release(permits)))
        const start = Effect.gen(function*() {
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
        })
        return yield* restore(Scope.extend(start, scope)).pipe(
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
      })

    const decide = (useWarm: boolean): STM.STM<Decision> =>
      STM.gen(function*() {
        if (yield* TRef.get(closed)) return { _tag: "Closed" } as const
        const list = yield* TRef.get(warm)
        if (useWarm) {
          for (const w of list) {
            if (yield* TRef.get(w.ready)) {
              yield* TRef.set(warm, without(list, w))
              return { _tag: "Claim", warm: w } as const
            }
          }
        }
        if ((yield* TSemaphore.available(permits)) > 0) {
          yield* TSemaphore.acquire(permits)
          return { _tag: "Permit" } as const
        }
        // every permit is held: a warm session (even one still starting) gives way, the oldest first
        const oldest = list[0]
        if (oldest === undefined) return yield* STM.retry
        yield* TRef.set(warm, list.slice(1))
        return useWarm ? { _tag: "Claim", warm: oldest } as const : { _tag: "Evict", warm: oldest } as const
      })

    /** Gets a session for a borrower (a warm one, or a new one on a permit) and ties it to the borrower's scope. */
    const borrow = (options?: Options): Effect.Effect<Entry, SessionError, Scope.Scope> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const useWarm = isDefault(options) && warmTarget > 0
          const effective = mergeOptions(config.options, options)
          yield* STM.commit(TRef.update(waiting, (n) => n + 1))
          let isWaiting = true
          const stopWaiting = Effect.suspend(() => {
            if (!isWaiting) return Effect.void
            isWaiting = false
            return STM.commit(TRef.update(waiting, (n) => n - 1))
          })
          const served = Effect.gen(function*() {
            while (true) {
              const decision = yield* restore(STM.commit(decide(useWarm)))
              if (decision._tag === "Closed") return yield* new InputClosed({ reason: "PoolClosed" })
              if (decision._tag === "Evict") {
                // kills its CLI and gives its permit back; the next decision (still waiting) can take it
                yield* Scope.close(decision.warm.entry.scope, Exit.void)
                continue
              }
              yield* stopWaiting
              return decision._tag === "Claim" ? decision.warm.entry : yield* openOnPermit(effective, restore)
            }
          })
          const borrowed = yield* Effect.ensuring(served, stopWaiting)
          active++
          yield* Effect.addFinalizer(() =>
            Effect.zipRight(
              Scope.close(borrowed.scope, Exit.void),
              Effect.sync(() => {
                active--
              })
            )
          )
          return borrowed
        })
      )

    /** Taken by a refill: a free permit, and only while no borrower waits (borrowers come first). */
    const permitForWarm: STM.STM<void> = STM.flatMap(
      TRef.get(waiting),
      (n) => (n > 0 ? STM.retry : TSemaphore.acquire(permits))
    )
    /** Completes once a warm session has left the pool (borrowed or evicted). */
    const gone = (w: Warm): Effect.Effect<void> =>
      STM.commit(STM.flatMap(TRef.get(warm), (list) => (list.includes(w) ? STM.retry : STM.void)))
    const backoff = (failures: number) =>
      Effect.sleep(Duration.millis(Math.min(WARM_RETRY_MIN_MILLIS * 2 ** (failures - 1), WARM_RETRY_MAX_MILLIS)))

    // completed by the first warm-up that meets a failure no retry can fix: every warm-up stops, and it is logged
    // once; borrowers start their own sessions and get their own (typed) error
    const halted = yield* Deferred.make<void>()
    /** After a warm session failed to start: waits before the next try (`true`), or ends the warm-up (`false`). */
    const afterFailure = (cause: Cause.Cause<SessionError>, failures: number): Effect.Effect<boolean> =>
      retryable(cause)
        ? Effect.as(
          Effect.zipRight(Effect.logWarning("SessionPool: a warm session failed to start", cause), backoff(failures)),
          true
        )
        : Effect.flatMap(Deferred.succeed(halted, undefined), (first) =>
          first
            ? Effect.as(
              Effect.logError(
                "SessionPool: warm sessions stopped: starting one failed in a way retrying cannot fix; each " +
                  "borrower now starts its own session and gets the error",
                cause
              ),
              false
            )
            : Effect.succeed(false))

    /** Keeps one warm session in the pool: starts one, waits until it is taken, starts the next. */
    const keepWarm: Effect.Effect<void> = Effect.gen(function*() {
      let failures = 0
      while (!(yield* Deferred.isDone(halted))) {
        const opened = yield* Effect.uninterruptibleMask((restore) =>
          Effect.zipRight(restore(STM.commit(permitForWarm)), Effect.exit(openOnPermit(config.options ?? {}, restore)))
        )
        if (opened._tag === "Failure") {
          if (yield* afterFailure(opened.cause, ++failures)) continue
          return
        }
        const w: Warm = { entry: opened.value, ready: yield* STM.commit(TRef.make(false)) }
        yield* STM.commit(TRef.update(warm, (list) => [...list, w]))
        const initialized = yield* Effect.raceFirst(
          Effect.map(Effect.exit(w.entry.internal.session.initializationResult), Option.some),
          Effect.as(gone(w), Option.none())
        )
        if (Option.isSome(initialized)) {
          const failed = initialized.value._tag === "Failure"
          const ours = yield* STM.commit(STM.gen(function*() {
            const list = yield* TRef.get(warm)
            if (!list.includes(w)) return false
            if (failed) yield* TRef.set(warm, without(list, w))
            else yield* TRef.set(w.ready, true)
            return true
          }))
          if (ours && initialized.value._tag === "Failure") {
            yield* Scope.close(w.entry.scope, Exit.void)
            if (yield* afterFailure(initialized.value.cause, ++failures)) continue
            return
          }
          if (!failed) failures = 0
        }
        yield* gone(w)
      }
    })
    for (let i = 0; i < warmTarget; i++) yield* Effect.forkIn(keepWarm, poolScope)
    // added last, so it runs first when the pool closes
    yield* Effect.addFinalizer(() => STM.commit(TRef.set(closed, true)))

    const service: Service = {
      session: (options) => Effect.map(borrow(options), (entry) => entry.internal.session),
      query: <E = never, R = never>(
        prompt: string | Stream.Stream<Message.Prompt, E, R>,
        options?: Options
      ): Stream.Stream<Message.SdkMessage, SessionError | E, R> =>
        Stream.unwrapScoped(Effect.flatMap(borrow(options), (entry) => session.drive(entry.internal, prompt))),
      stats: STM.commit(STM.gen(function*() {
        let ready = 0
        for (const w of yield* TRef.get(warm)) if (yield* TRef.get(w.ready)) ready++
        const free = yield* TSemaphore.available(permits)
        return { active, warm: ready, live: config.maxConcurrent - free, waiting: yield* TRef.get(waiting) }
      }))
    }
    return service
  })
