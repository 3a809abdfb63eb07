// The AgentSession entity built on an uninterruptible fiber, as @effect/cluster 0.60.2 rebuilds an entity after a
// defect (on a fiber forked from its RPC server's uninterruptible request fiber): its stop, which interrupts the fibers
// its build forked, hung (a runner slow to stop, SIGKILLed: docs/GUARANTEES.md, "The cluster under Jepsen-style
// faults").
import * as Entity from "@effect/cluster/Entity"
import * as EntityAddress from "@effect/cluster/EntityAddress"
import * as EntityId from "@effect/cluster/EntityId"
import * as EntityType from "@effect/cluster/EntityType"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as ShardId from "@effect/cluster/ShardId"
import * as Sharding from "@effect/cluster/Sharding"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { ScriptedCli } from "effect-claude-agent/testing"
import { layerMemory } from "../src/internal/cluster/directory.js"
import { layer } from "../src/internal/cluster/entity.js"

/** The entity's build as the layer registers it, with the context it was registered in. */
interface Registered {
  readonly build: Effect.Effect<unknown, never, never>
  readonly context: Context.Context<never>
}

describe("the AgentSession entity", () => {
  it.scopedLive(
    "built on an uninterruptible fiber (a restart after a defect), it still stops",
    () =>
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
        // a CLI that answers its initialize and then waits on its input
        const cli = ScriptedCli.layer((cli) => Effect.asVoid(cli.nextUser))
        yield* Layer.build(
          layer().pipe(Layer.provide(Layer.succeed(Sharding.Sharding, sharding)), Layer.provide(layerMemory))
        ).pipe(Effect.provide(cli))
        const { build, context } = registered!
        const scope = yield* Scope.make()
        const address = EntityAddress.make({
          shardId: ShardId.make("default", 1),
          entityType: EntityType.EntityType.make("effect-claude-agent/AgentSession"),
          entityId: EntityId.make("s1")
        })
        yield* Effect.uninterruptible(build).pipe(
          Effect.provide(
            context.pipe(
              Context.add(Entity.CurrentAddress, address),
              Context.add(Entity.CurrentRunnerAddress, new RunnerAddress.RunnerAddress({ host: "localhost", port: 1 })),
              Context.add(Scope.Scope, scope)
            )
          )
        )
        // a stop that hangs is left behind (a daemon), not waited for by the test's own end
        const stopping = yield* Effect.forkDaemon(Scope.close(scope, Exit.void))
        const stopped = yield* Fiber.join(stopping).pipe(Effect.timeout("5 seconds"), Effect.option)
        expect(Option.isSome(stopped)).toBe(true)
      }),
    20_000
  )
})
