/**
 * Many sessions on one host, within limits: at most `maxConcurrent` live CLI processes (enforced atomically with a
 * semaphore — a borrower waits for a free slot, it never overshoots), optional warm sessions (spawned and initialized
 * ahead of time, each used once, refilled in the background), and optionally an isolated config directory per
 * session (concurrent CLIs otherwise share `~/.claude.json`).
 *
 * Warm sessions never make a borrower wait: when every slot is taken, a borrower takes a warm session, even one still
 * starting (or, when it needs other options, closes one to free its slot). Refills start only while no borrower
 * waits.
 *
 * The pool adds no process-wide listeners: host memory and listeners stay O(1) in the number of sessions.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { NodeClaudeAgent, SessionPool } from "effect-claude-agent"
 *
 * const Pool = SessionPool.layer({ maxConcurrent: 8, warm: 2 }).pipe(Layer.provide(NodeClaudeAgent.layer))
 *
 * const answer = (prompt: string) =>
 *   Effect.flatMap(SessionPool.SessionPool, (pool) => pool.query(prompt).pipe(Stream.runCollect))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Options } from "./AgentOptions.js"
import type { Prompt, Session, SessionError } from "./ClaudeAgent.js"
import * as internal from "./internal/session/sessionPool.js"
import type * as Message from "./Message.js"
import type { Transport } from "./Transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** The most CLI processes alive at once (warm ones included). */
  readonly maxConcurrent: number
  /**
   * Sessions to keep spawned and initialized ahead of time (used once each, then replaced). Defaults to 0. A warm
   * session that fails to start is tried again after a backoff (200 ms, doubling up to 30 s; a warning each time).
   * A failure no retry can fix (`CliNotFound`, `InvalidOptions`, `VersionIncompatible` `OutOfRange`, a defect, an
   * interruption from a service that shut down) stops the warm-up for the pool's life, logged once as an error;
   * borrowers then start their own sessions and get that error, typed.
   */
  readonly warm?: number | undefined
  /** Options of warm sessions, and defaults merged under every borrower's options. */
  readonly options?: Options | undefined
  /**
   * Give every session its own temporary `CLAUDE_CONFIG_DIR` (removed when the session closes). Use with API-key
   * authentication (`ANTHROPIC_API_KEY`); credentials stored in the user's config dir are not visible there.
   * Defaults to `false`.
   */
  readonly isolateConfigDir?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  /** Sessions borrowed and not yet closed. */
  readonly active: number
  /** Warm sessions ready to be taken. */
  readonly warm: number
  /** Live CLI processes (active + warm + starting). */
  readonly live: number
  /** Borrowers that have not got a session yet (waiting for a slot). */
  readonly waiting: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Borrows a session (a warm one when `options` adds nothing to the pool's, else a fresh one), waiting for a slot
   * when `maxConcurrent` processes are live. With every slot taken, a warm session is used even while it is still
   * starting (or closed to free its slot, when `options` differ). The session is closed, and its slot freed, when the
   * scope closes. Once the pool's own scope has closed, it fails with `InputClosed` (`reason: "PoolClosed"`), and so
   * does a borrower still waiting then; nothing is started.
   */
  readonly session: (options?: Options) => Effect.Effect<Session, SessionError, Scope.Scope>
  /** A one-shot query within the pool's limit. */
  readonly query: <E = never, R = never>(
    prompt: string | Stream.Stream<Prompt, E, R>,
    options?: Options
  ) => Stream.Stream<Message.SdkMessage, SessionError | E, R>
  /** The pool's figures right now (one consistent snapshot). */
  readonly stats: Effect.Effect<Stats>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class SessionPool extends Context.Tag("effect-claude-agent/SessionPool")<SessionPool, Service>() {}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: (config: Config) => Effect.Effect<Service, never, Transport | Scope.Scope> = internal.make

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: Config): Layer.Layer<SessionPool, never, Transport> =>
  Layer.scoped(SessionPool, make(config))
