// The AgentSession entity built on an uninterruptible fiber, as @effect/cluster 0.60.2 rebuilds an entity after a
// defect (on a fiber forked from its RPC server's uninterruptible request fiber, which nothing interrupts when the
// entity stops). Its stop, which interrupts the fibers its build forked, hung: the runner's release of the entity's
// shard waited for it, and a forced release (the shard locks failing while PostgreSQL restarted) of every shard the
// runner held, which kept their locks and ran nothing (docs/GUARANTEES.md, "The cluster under Jepsen-style faults").
// And a rebuild for an entity that had stopped meanwhile went on to claim its session.
import * as Entity from "@effect/cluster/Entity"
import * as Envelope from "@effect/cluster/Envelope"
import * as Reply from "@effect/cluster/Reply"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as Headers from "@effect/platform/Headers"
import * as Rpc from "@effect/rpc/Rpc"
import * as Arr from "effect/Array"
import * as Stream from "effect/Stream"
import * as EntityAddress from "@effect/cluster/EntityAddress"
import * as EntityId from "@effect/cluster/EntityId"
import * as EntityType from "@effect/cluster/EntityType"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as ShardId from "@effect/cluster/ShardId"
import * as Sharding from "@effect/cluster/Sharding"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { ScriptedCli } from "effect-claude-agent/testing"
import type { Message, Transport } from "effect-claude-agent"
import { layerMemory, SessionDirectory } from "../src/internal/cluster/directory.js"
import { type AgentSession, layer, type SetModel, type Turn } from "../src/internal/cluster/entity.js"
import { type Replied, ReplyLog } from "../src/internal/cluster/fence.js"

/** The entity's build as the layer registers it, with the context it was registered in. */
interface Registered {
  readonly build: Effect.Effect<unknown, never, never>
  readonly context: Context.Context<never>
}

const address = EntityAddress.make({
  shardId: ShardId.make("default", 1),
  entityType: EntityType.EntityType.make("effect-claude-agent/AgentSession"),
  entityId: EntityId.make("s1")
})

/**
 * The entity's layer on a fake `Sharding` that keeps what it registers, its directory in memory with its claims
 * counted, each claim first telling `atClaim` it has been reached and waiting for `claimGate` (when given).
 */
const register = (
  claims: Ref.Ref<number>,
  claimGate?: Deferred.Deferred<void>,
  atClaim?: Deferred.Deferred<void>,
  // a CLI that answers its initialize and then waits on its input
  cli: Layer.Layer<Transport.Transport> = ScriptedCli.layer((cli) => Effect.asVoid(cli.nextUser)),
  // what the store holds of each request's replies (none when not given)
  replied?: (requestId: string) => Replied
) =>
  Effect.gen(function*() {
    let registered: Registered | undefined
    const sharding = Sharding.Sharding.of({
      ...({} as Sharding.Sharding["Type"]),
      registerEntity: (_entity, build) =>
        Effect.contextWith((context) => {
          registered = {
            build: build as Effect.Effect<unknown, never, never>,
            context: context as Context.Context<never>
          }
        })
    })
    const counted = Layer.effect(
      SessionDirectory,
      Effect.map(SessionDirectory, (directory) =>
        SessionDirectory.of({
          ...directory,
          claim: (entityId, owner, guard = Effect.void) =>
            Effect.zipRight(
              Effect.zipRight(
                Effect.zipRight(guard, atClaim === undefined ? Effect.void : Deferred.succeed(atClaim, undefined)),
                claimGate === undefined ? Effect.void : Deferred.await(claimGate)
              ),
              Effect.zipRight(Ref.update(claims, (n) => n + 1), directory.claim(entityId, owner))
            )
        }))
    ).pipe(Layer.provide(layerMemory))
    const log = replied === undefined
      ? Layer.empty
      : Layer.succeed(ReplyLog, ReplyLog.of({ replied: (requestId) => Effect.succeed(replied(requestId)) }))
    yield* Layer.build(
      layer().pipe(
        Layer.provide(Layer.succeed(Sharding.Sharding, sharding)),
        Layer.provide(counted),
        Layer.provide(log)
      )
    ).pipe(Effect.provide(cli))
    return registered!
  })

/** Runs the registered build in `scope`, uninterruptibly (as @effect/cluster's rebuild does) unless told. */
const buildIn = ({ build, context }: Registered, scope: Scope.Scope, interruptible = false) =>
  (interruptible ? build : Effect.uninterruptible(build)).pipe(
    Effect.provide(
      context.pipe(
        Context.add(Entity.CurrentAddress, address),
        Context.add(Entity.CurrentRunnerAddress, new RunnerAddress.RunnerAddress({ host: "localhost", port: 1 })),
        Context.add(Scope.Scope, scope)
      )
    )
  )

/** Joins `fiber` within `millis`: its exit, or `None` past it (a hung fiber is left behind, as a daemon). */
const joinWithin = <A, E>(fiber: Fiber.Fiber<A, E>, millis: number) =>
  Fiber.await(fiber).pipe(Effect.timeout(millis), Effect.option)

describe("the AgentSession entity built on an uninterruptible fiber (a restart after a defect)", () => {
  it.scopedLive("it still stops: the fibers its build forked are interrupted", () =>
    Effect.gen(function*() {
      const registered = yield* register(yield* Ref.make(0))
      const scope = yield* Scope.make()
      yield* buildIn(registered, scope)
      const stopping = yield* Effect.forkDaemon(Scope.close(scope, Exit.void))
      expect(Option.isSome(yield* joinWithin(stopping, 5_000))).toBe(true)
    }), 20_000)

  it.scopedLive(
    "for an entity already stopped, it claims nothing and ends (its handlers are discarded)",
    () =>
      Effect.gen(function*() {
        const claims = yield* Ref.make(0)
        const registered = yield* register(claims)
        const scope = yield* Scope.make()
        yield* Scope.close(scope, Exit.void)
        const building = yield* Effect.forkDaemon(buildIn(registered, scope))
        const built = yield* joinWithin(building, 5_000)
        expect(Option.map(built, Exit.isSuccess)).toEqual(Option.some(true))
        expect(yield* Ref.get(claims)).toBe(0)
      }),
    20_000
  )

  it.scopedLive(
    "stopped while it runs, it is cut off there: no claim after the stop, and it ends",
    () =>
      Effect.gen(function*() {
        const claims = yield* Ref.make(0)
        const gate = yield* Deferred.make<void>()
        const atClaim = yield* Deferred.make<void>()
        const registered = yield* register(claims, gate, atClaim)
        const scope = yield* Scope.make()
        // the build waits at its claim (a database slow to answer) when the entity stops
        const building = yield* Effect.forkDaemon(buildIn(registered, scope))
        yield* Deferred.await(atClaim)
        const stopping = yield* Effect.forkDaemon(Scope.close(scope, Exit.void))
        expect(Option.isSome(yield* joinWithin(stopping, 5_000))).toBe(true)
        yield* Deferred.succeed(gate, undefined)
        const built = yield* joinWithin(building, 5_000)
        expect(Option.map(built, Exit.isSuccess)).toEqual(Option.some(true))
        yield* Effect.sleep("200 millis")
        expect(yield* Ref.get(claims)).toBe(0)
      }),
    20_000
  )

  it.scopedLive(
    "on an interruptible fiber (a first build), an interrupted build ends interrupted, as before",
    () =>
      Effect.gen(function*() {
        const claims = yield* Ref.make(0)
        const gate = yield* Deferred.make<void>()
        const atClaim = yield* Deferred.make<void>()
        const registered = yield* register(claims, gate, atClaim)
        const scope = yield* Scope.make()
        const building = yield* Effect.forkDaemon(buildIn(registered, scope, true))
        yield* Deferred.await(atClaim)
        yield* Fiber.interrupt(building)
        const built = yield* joinWithin(building, 5_000)
        expect(Option.map(built, Exit.isInterrupted)).toEqual(Option.some(true))
        yield* Scope.close(scope, Exit.void)
      }),
    20_000
  )
})

/** The handlers of the AgentSession entity, as its build returns them. */
type Handlers = Entity.HandlersFrom<typeof AgentSession extends Entity.Entity<infer _Type, infer R> ? R : never>

/** A request to the entity, as @effect/cluster hands it to a handler. */
const request = <R extends typeof Turn | typeof SetModel>(
  id: number,
  tag: Rpc.Tag<R>,
  payload: Rpc.Payload<R>,
  lastSentChunk: Option.Option<Reply.Chunk<R>> = Option.none()
): Entity.Request<R> =>
  new Entity.Request<R>({
    ...Envelope.makeRequest<R>({
      requestId: Snowflake.Snowflake(BigInt(id)),
      address,
      tag,
      payload,
      headers: Headers.empty
    }),
    lastSentChunk
  })

describe("an AgentSession incarnation that loses its session", () => {
  // @effect/cluster 0.60.2 restarts an entity after a defect, and a restart of an entity stopped meanwhile (its shard
  // moved) leaves its `ResourceRef`'s latch closed: the runner's storage read loop waited on it for ever, and every
  // session of the runner stalled (scenario (a) of test/stress/ClusterJepsen.stress.ts). The loss of the session ends
  // the incarnation instead, and the request runs on a new one: no defect reaches @effect/cluster.
  it.scopedLive(
    "ends it without a defect: the request and the next ones run on a new incarnation",
    () =>
      Effect.gen(function*() {
        const claims = yield* Ref.make(0)
        const launches = yield* Ref.make(0)
        // a CLI that answers every prompt
        const cli = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            yield* Ref.update(launches, (n) => n + 1)
            while (true) {
              const next = yield* cli.nextUser
              if (next._tag === "None") break
              yield* cli.turn(`echo: ${ScriptedCli.textOf(next.value)}`)
            }
          })
        )
        const registered = yield* register(claims, undefined, undefined, cli)
        const directory = Context.unsafeGet(registered.context, SessionDirectory)
        const scope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
        const built = yield* buildIn(registered, scope, true)
        const handlers = built as Handlers
        const turn = (id: number, turnId: string) => {
          const messages = handlers.Turn(request<typeof Turn>(id, "Turn", { turnId, prompt: `p ${turnId}` }))
          if (Effect.isEffect(messages) || Rpc.isWrapper(messages)) return Effect.die("a turn is a stream")
          return Stream.runCollect(messages).pipe(Effect.map((chunk) => Array.from(chunk, (m) => m.type)), Effect.exit)
        }

        const first = yield* turn(1, "t1")
        expect(Exit.isSuccess(first) && first.value.includes("result")).toBe(true)
        expect(yield* Ref.get(claims)).toBe(1)

        // another incarnation claims the session (a runner that took it over): this one's next write is refused
        yield* directory.claim("s1", "elsewhere")
        const setting = handlers.SetModel(request<typeof SetModel>(2, "SetModel", { model: "m" }))
        if (Rpc.isWrapper(setting)) return yield* Effect.die("SetModel is an effect")
        const set = yield* Effect.exit(setting)
        expect(set).toEqual(Exit.void)
        // the request ran again on a new incarnation, which claimed the session again and started a CLI of its own
        expect(yield* Ref.get(claims)).toBe(3)
        expect(yield* Ref.get(launches)).toBe(2)

        const second = yield* turn(3, "t2")
        expect(Exit.isSuccess(second) && second.value.includes("result")).toBe(true)

        // and a turn whose incarnation lost the session before its prompt went to the CLI is run, once, on the next one
        yield* directory.claim("s1", "elsewhere")
        const third = yield* turn(4, "t3")
        expect(third).toEqual(Exit.succeed(["system", "assistant", "result"]))
        expect(yield* Ref.get(claims)).toBe(5)
      }),
    20_000
  )
})

describe("an AgentSession turn delivered again (its runner lost the session mid-turn)", () => {
  // scenario (d) of test/stress/ClusterJepsen.stress.ts: a runner cut off from the database just after it stored a
  // turn's result could not record the turn's end; the session's next owner, running the request again, answered it
  // as cut off after the result its caller had already received
  it.scopedLive(
    "ends without more once its caller has its result; is answered as cut off otherwise",
    () =>
      Effect.gen(function*() {
        const claims = yield* Ref.make(0)
        const cli = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            while (true) {
              const next = yield* cli.nextUser
              if (next._tag === "None") break
              yield* cli.turn(`echo: ${ScriptedCli.textOf(next.value)}`)
            }
          })
        )
        const registered = yield* register(claims, undefined, undefined, cli)
        const scope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
        const handlers = (yield* buildIn(registered, scope, true)) as Handlers
        const turn = (id: number, turnId: string, lastSent: Option.Option<ReadonlyArray<Message.SdkMessage>>) => {
          const chunk = Option.flatMap(lastSent, (values) =>
            Option.map(
              Arr.isNonEmptyReadonlyArray(values) ? Option.some(values) : Option.none(),
              (values) =>
                new Reply.Chunk<typeof Turn>({
                  requestId: Snowflake.Snowflake(BigInt(id)),
                  id: Snowflake.Snowflake(BigInt(id * 10)),
                  sequence: 0,
                  values
                })
            ))
          const messages = handlers.Turn(request<typeof Turn>(id, "Turn", { turnId, prompt: `p ${turnId}` }, chunk))
          if (Effect.isEffect(messages) || Rpc.isWrapper(messages)) return Effect.die("a turn is a stream")
          return Stream.runCollect(messages).pipe(Effect.map((chunk) => Array.from(chunk)))
        }
        const first = yield* turn(1, "t1", Option.none())
        const result = first.filter((m) => m.type === "result")
        expect(result).toHaveLength(1)
        // delivered again with its result as the last chunk sent: nothing more
        expect(yield* turn(1, "t1", Option.some(result))).toEqual([])
        // delivered again with a chunk before its result as the last one sent: cut off
        const before = first.filter((m) => m.type !== "result")
        expect((yield* turn(1, "t1", Option.some(before))).map((m) => m.type)).toEqual(["session_restarted"])
      }),
    20_000
  )

  // the runner's storage read loop delivers a message it read before it was held up (an entity's build waiting for its
  // shard's lease) while another runner held the shard and answered it: seen in (c) disk full, the turn run twice and
  // its stale run waiting for ever for the acknowledgement of its first chunk, the session's next turns behind it
  it.scopedLive(
    "is not run again when the store holds its final reply or its result, and is answered as cut off when it holds chunks of it",
    () =>
      Effect.gen(function*() {
        const claims = yield* Ref.make(0)
        const prompts = yield* Ref.make<ReadonlyArray<string>>([])
        const cli = ScriptedCli.layer((cli) =>
          Effect.gen(function*() {
            while (true) {
              const next = yield* cli.nextUser
              if (next._tag === "None") break
              yield* Ref.update(prompts, (p) => [...p, ScriptedCli.textOf(next.value)])
              yield* cli.turn(`echo: ${ScriptedCli.textOf(next.value)}`)
            }
          })
        )
        const stored: Record<string, Replied> = { "1": "final", "2": "result", "3": "chunks" }
        const registered = yield* register(claims, undefined, undefined, cli, (id) => stored[id] ?? "none")
        const scope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
        const handlers = (yield* buildIn(registered, scope, true)) as Handlers
        const turn = (id: number, turnId: string) => {
          const messages = handlers.Turn(request<typeof Turn>(id, "Turn", { turnId, prompt: `p ${turnId}` }))
          if (Effect.isEffect(messages) || Rpc.isWrapper(messages)) return Effect.die("a turn is a stream")
          return Stream.runCollect(messages).pipe(Effect.map((chunk) => Array.from(chunk, (m) => m.type)))
        }
        expect(yield* turn(1, "t1")).toEqual([])
        expect(yield* turn(2, "t2")).toEqual([])
        expect(yield* turn(3, "t3")).toEqual(["session_restarted"])
        expect(yield* Ref.get(prompts)).toEqual([])
        expect(yield* turn(4, "t4")).toEqual(["system", "assistant", "result"])
        expect(yield* Ref.get(prompts)).toEqual(["p t4"])
      }),
    20_000
  )
})
