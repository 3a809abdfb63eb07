/**
 * Claude Code sessions as @effect/cluster entities: an `AgentSession` entity per session id, its CLI started in the
 * entity's scope and resumed by the entity's next incarnation (after an idle stop, a rebalance, a runner restart).
 * `AgentCluster.session(id)` behaves like a local `ClaudeAgent.Session` (turn, send, interrupt, setters), so an app
 * moves from `SessionPool` to a cluster by swapping a Layer.
 *
 * A turn is a persisted message whose primary key is its turn id: sending the same turn again (a retry) does not run
 * it twice; a turn cut off by the death of its runner ends with a `session_restarted` message (`interruptedTurn:
 * true`), never silently. Permissions, hooks and in-process MCP servers are services provided to the runner's layer,
 * as to a local session.
 *
 * The conversation lives in the cluster's SQL database: every runner's sessions mirror their transcripts to a
 * `TranscriptStore` (the SQL one on the cluster's `SqlClient`, unless the runner's layer is given another), and an
 * entity that starts on a runner loads its session from the store into that runner's CLI config dir before resuming
 * it. So runners on different machines carry each other's sessions.
 *
 * This entry point needs the optional peers `@effect/cluster`, `@effect/rpc`, `@effect/sql` (and
 * `@effect/sql-sqlite-node` for {@link layerSqlite}); `effect-claude-agent` itself never loads them.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { NodeClaudeAgent } from "effect-claude-agent"
 * import { AgentCluster } from "effect-claude-agent/cluster"
 *
 * const Cluster = AgentCluster.layerSqlite({ filename: "agents.db" }).pipe(Layer.provide(NodeClaudeAgent.layer))
 *
 * const program = Effect.gen(function*() {
 *   const session = yield* AgentCluster.session("user-42")
 *   yield* session.turn("Hello").pipe(Stream.runDrain)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(Cluster)))
 * ```
 *
 * @since 0.1.0
 */
import type * as Sharding from "@effect/cluster/Sharding"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Duration from "effect/Duration"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { AgentError } from "./AgentError.js"
import type { Options, PermissionMode } from "./AgentOptions.js"
import type { Prompt, SessionOrigin, SessionState } from "./ClaudeAgent.js"
import type { ClusterError } from "./ClusterError.js"
import * as internal from "./internal/cluster/client.js"
import type * as Message from "./Message.js"
import type { Transport } from "./Transport.js"

/**
 * What a turn may be told: its id. Give the same id to a retry of the same turn: the cluster runs a turn id once
 * (a retry of a finished turn yields no messages again; one of a running turn follows it).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnOptions {
  /** Defaults to a new random id (every call is a new turn). */
  readonly turnId?: string | undefined
}

/**
 * A session of the cluster, as a caller sees it: the same verbs as a local `ClaudeAgent.Session`, sent to the
 * entity that runs it wherever it runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClusterSession {
  /** The entity id (the session's name in the cluster, not the CLI's session id). */
  readonly id: string
  /** Sends a prompt and yields the messages of its turn, up to and including the `result`. */
  readonly turn: (
    prompt: Prompt,
    options?: TurnOptions
  ) => Stream.Stream<Message.SdkMessage, AgentError | ClusterError>
  /** Sends a prompt and returns once the cluster has stored it; the turn runs without a reader. */
  readonly send: (prompt: Prompt, options?: TurnOptions) => Effect.Effect<void, ClusterError>
  /** Stops the current turn; it ends with a `result` of subtype `error_during_execution`. */
  readonly interrupt: Effect.Effect<Message.InterruptResponse, AgentError | ClusterError>
  /** Changes the model (`undefined`: the session default); kept by the entity's later incarnations. */
  readonly setModel: (model?: string) => Effect.Effect<void, AgentError | ClusterError>
  /** Changes the permission mode; kept by the entity's later incarnations. */
  readonly setPermissionMode: (
    mode: PermissionMode
  ) => Effect.Effect<Option.Option<string>, AgentError | ClusterError>
  /** Sets the thinking budget (`null` clears it); kept by the entity's later incarnations. */
  readonly setMaxThinkingTokens: (
    maxThinkingTokens: number | null,
    display?: "summarized" | "omitted" | "highlights"
  ) => Effect.Effect<void, AgentError | ClusterError>
  /** Ends the session: its CLI finishes and exits, and later turns fail with `InputClosed`. */
  readonly close: Effect.Effect<void, AgentError | ClusterError>
  /** The same as {@link ClusterSession.close}, under the local session's name. */
  readonly endInput: Effect.Effect<void, AgentError | ClusterError>
  /** The CLI's session id: the conversation's, the same in every incarnation of the entity. */
  readonly sessionId: Effect.Effect<string, AgentError | ClusterError>
  /** Where the entity's session is right now (`exited` once closed, or when its CLI could not start). */
  readonly state: Effect.Effect<SessionState, AgentError | ClusterError>
  /**
   * How the current incarnation started: `new` for the entity's first CLI, `resume` for every later one (after an
   * idle stop, a rebalance, the death of a runner). An effect, not a value: the entity may move between two reads.
   */
  readonly origin: Effect.Effect<SessionOrigin, AgentError | ClusterError>
  /** The answer to `initialize` of the current incarnation's CLI. */
  readonly initializationResult: Effect.Effect<Message.InitializeResponse, AgentError | ClusterError>
  /** The status of every MCP server of the current incarnation's CLI. */
  readonly mcpServerStatus: Effect.Effect<ReadonlyArray<Message.McpServerStatus>, AgentError | ClusterError>
  /** How the context window is used (`detail: "full"` adds per-category breakdowns). */
  readonly getContextUsage: (
    options?: { readonly detail?: "summary" | "full" | undefined }
  ) => Effect.Effect<Message.ContextUsage, AgentError | ClusterError>
  /** Stops a background task (a `task_notification` with status `stopped` follows in the turn that reads it). */
  readonly stopTask: (taskId: string) => Effect.Effect<void, AgentError | ClusterError>
  /**
   * Sends any other control request to the session's CLI and returns its raw response (escape hatch; the payload
   * and the response cross the cluster as JSON).
   */
  readonly request: (
    subtype: string,
    payload?: Readonly<Record<string, unknown>>,
    options?: { readonly timeout?: Duration.DurationInput | undefined }
  ) => Effect.Effect<unknown, AgentError | ClusterError>
}

/**
 * Settings applied when the session is obtained (each is a setter call to the entity).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionOptions {
  readonly model?: string | undefined
  readonly permissionMode?: PermissionMode | undefined
  readonly maxThinkingTokens?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The session named `id` (created by its first message). */
  readonly session: (
    id: string,
    options?: SessionOptions
  ) => Effect.Effect<ClusterSession, AgentError | ClusterError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class AgentCluster extends Context.Tag("effect-claude-agent/AgentCluster")<AgentCluster, Service>() {}

/**
 * The session named `id`, from the {@link AgentCluster} in the environment.
 *
 * @since 0.1.0
 * @category accessors
 */
export const session = (
  id: string,
  options?: SessionOptions
): Effect.Effect<ClusterSession, AgentError | ClusterError, AgentCluster> =>
  Effect.flatMap(AgentCluster, (cluster) => cluster.session(id, options))

/**
 * What a runner gives its entities.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunnerOptions {
  /**
   * The options of every session's CLI (its `resume` / `sessionId` / `continue` / `forkSession` are decided by the
   * entity). Permissions, hooks and in-process MCP servers are services provided to the runner's layer.
   */
  readonly options?: Options | undefined
  /** How long an entity without messages keeps its CLI. Defaults to the cluster's `entityMaxIdleTime` (1 minute). */
  readonly maxIdleTime?: Duration.DurationInput | undefined
  /** The prefix of the cluster's tables. Defaults to `"cluster"`. */
  readonly prefix?: string | undefined
  /** Passed to @effect/cluster's `ShardingConfig.layer`. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
  /**
   * When the sessions' transcript entries reach the store (`TranscriptStore.Mirror`'s `flush`). Defaults to
   * `"eager"`: each entry the CLI writes is appended as it comes, so a runner killed mid-turn loses only the entries
   * still on their way to the database. `"batched"` appends at the end of each turn (fewer writes; a runner killed
   * mid-turn loses what the cut-off turn had written, and the next turn resumes from the turn before it).
   */
  readonly transcriptFlush?: "eager" | "batched" | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions extends RunnerOptions {
  /** The SQLite database file of the cluster (created if missing). */
  readonly filename: string
}

/**
 * A runner that other processes reach over TCP (`@effect/cluster`'s socket runner), its shard locks, messages and
 * session records in the SQL database shared by every runner.
 *
 * @since 0.1.0
 * @category models
 */
export interface SocketOptions extends RunnerOptions {
  /** The address the other runners and the clients reach this one at (a client-only node gives its own name). */
  readonly address: { readonly host: string; readonly port: number }
  /** Where the runner listens, when not on `address` (e.g. `0.0.0.0` in a container). */
  readonly listenAddress?: { readonly host: string; readonly port: number } | undefined
}

/**
 * A node that only sends to a socket cluster.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /** The prefix of the cluster's tables. Defaults to `"cluster"`. */
  readonly prefix?: string | undefined
  /** Passed to @effect/cluster's `ShardingConfig.layer`; give it the runners' `shardsPerGroup` and shard groups. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, Sharding.Sharding> = internal.make

/**
 * The client, on the `Sharding` of a runner (or a client-only node) of the cluster.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient: Layer.Layer<AgentCluster, never, Sharding.Sharding> = Layer.effect(AgentCluster, make)

/**
 * Registers the `AgentSession` entity on a runner's `Sharding`; its session records and (unless a `TranscriptStore`
 * is provided to it) its sessions' transcripts live in the cluster's SQL database. Provide it the services its
 * sessions use (Permissions, Hooks, …) and a `Transport`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRunner: (options?: RunnerOptions) => Layer.Layer<never, never, internal.RunnerContext> =
  internal.layerRunner

/**
 * A runner of the cluster, with its storage and the client, on the `SqlClient` in the environment (e.g. `PgClient`
 * for a database shared by several runners).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql = (
  options: RunnerOptions = {}
): Layer.Layer<AgentCluster | Sharding.Sharding, never, Transport | SqlClient.SqlClient> =>
  Layer.provideMerge(layerClient, internal.layerSql(options))

/**
 * A whole cluster on one machine with no server: one runner on an SQLite file (shard locks, messages, session
 * records and transcripts in it), the entity registered, and the client. A runner started again on the same file resumes the
 * sessions it holds. Needs `@effect/sql-sqlite-node`, loaded when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<AgentCluster | Sharding.Sharding, never, Transport> =>
  Layer.provideMerge(layerClient, internal.layerSqlite(options))

/**
 * A runner of a cluster over several processes or machines: it listens on `address`, runs the entities of the
 * shards it holds, and shares the SQL database in the environment (e.g. `PgClient`) with the other runners. When a
 * runner dies, the others take its shards (once its shard locks expire or its pings fail), and its sessions
 * continue there: each resumes the CLI session its record names, loaded from the transcript store in the shared
 * database into this runner's CLI config dir, and a turn the dead runner had started ends with a
 * `session_restarted` message. Give every runner the same `options.cwd` path: transcripts are keyed by it.
 *
 * A runner killed outright runs no finalizer: its CLIs see their stdin close, but would finish the turn they are in
 * (tools included) before they exit. On Linux the process Transport's host watchdog (on by default, see
 * `Transport.layerProcessWith`) SIGKILLs them and their tool processes within a second of the runner's death
 * (SECURITY.md, "the host being killed"); elsewhere, run runners under a supervisor that kills the process tree.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSocket = (
  options: SocketOptions
): Layer.Layer<AgentCluster | Sharding.Sharding, never, Transport | SqlClient.SqlClient> =>
  Layer.provideMerge(layerClient, internal.layerSocket(options))

/**
 * A client of a socket cluster that runs no entity: it stores its messages in the shared SQL database and sends
 * them to the runners holding their shards.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSocketClient = (
  options: ClientOptions = {}
): Layer.Layer<AgentCluster | Sharding.Sharding, never, SqlClient.SqlClient> =>
  Layer.provideMerge(layerClient, internal.layerSocketClient(options))
