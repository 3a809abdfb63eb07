// A write of the cluster's socket client to a runner that has just died. The runner's connection is reset (what the
// kernel does for a runner SIGKILLed with unread input) right before the client writes to it: the write fails with
// `write ECONNRESET`, as in the runner-kill stress test, where @effect/rpc's socket protocol made it a defect that
// @effect/cluster's runners client (`Runners.makeRpc`, the judge of the first two tests) let through to the caller of
// `close` and of a turn. Through the cluster's client protocol it is the runner unavailable instead, which
// @effect/cluster answers by sending the message again (the last test, through `AgentCluster`).
import * as EntityAddress from "@effect/cluster/EntityAddress"
import * as EntityId from "@effect/cluster/EntityId"
import * as EntityType from "@effect/cluster/EntityType"
import * as Envelope from "@effect/cluster/Envelope"
import * as Message from "@effect/cluster/Message"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import type * as Reply from "@effect/cluster/Reply"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as Runners from "@effect/cluster/Runners"
import * as ShardId from "@effect/cluster/ShardId"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as Headers from "@effect/platform/Headers"
import * as PlatformSocket from "@effect/platform/Socket"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { AgentCluster } from "effect-claude-agent/cluster"
import { ScriptedCli } from "effect-claude-agent/testing"
import * as net from "node:net"
import * as path from "node:path"
import { clusterTiming, freePort } from "../scripts/demo-cluster-processes.js"
import { Close, Turn } from "../src/internal/cluster/entity.js"
import * as Socket from "../src/internal/cluster/socket.js"
import { tempDir } from "./support/cli.js"
import { sqlLayer } from "./support/clusterBackends.js"

const address = EntityAddress.make({
  shardId: ShardId.make("default", 1),
  entityType: EntityType.EntityType.make("effect-claude-agent/AgentSession"),
  entityId: EntityId.make("s1")
})

/**
 * A runner on loopback that accepts one connection and reads from it; `reset` resets that connection (RST), once
 * the client has written to it.
 */
const deadRunner = Effect.gen(function*() {
  const received = yield* Deferred.make<net.Socket>()
  const server = yield* Effect.acquireRelease(
    Effect.async<net.Server>((resume) => {
      const server = net.createServer((socket) => {
        socket.on("error", () => {
          // reset by us
        })
        socket.once("data", () => Deferred.unsafeDone(received, Exit.succeed(socket)))
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )
  const listening = server.address()
  return {
    address: RunnerAddress.make("127.0.0.1", typeof listening === "object" && listening !== null ? listening.port : 0),
    reset: Effect.map(Deferred.await(received), (socket) => socket.resetAndDestroy())
  }
})

/** @effect/cluster's runners client over the cluster's socket client protocol. */
const runners = Layer.build(
  Runners.layerRpc.pipe(
    Layer.provide(Socket.layerClientProtocol),
    Layer.provide(RpcSerialization.layerMsgPack),
    Layer.provide(MessageStorage.layerNoop),
    Layer.provide(ShardingConfig.layer())
  )
).pipe(Effect.map(Context.get(Runners.Runners)))

/**
 * Opens the client's connection to the runner (a ping the runner never answers), then, in the same turn of the event
 * loop as the runner's reset, so before the client has read it, runs `write`.
 */
const writeAfterReset = <A, E>(
  runner: { readonly address: RunnerAddress.RunnerAddress; readonly reset: Effect.Effect<void> },
  client: Runners.Runners["Type"],
  write: Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    yield* Effect.forkScoped(client.ping(runner.address))
    yield* runner.reset
    return yield* Effect.exit(write)
  })

describe("the cluster's socket client, writing to a runner that has just died", () => {
  it.scopedLive("a request that is not persisted (close): the runner unavailable, not a defect for its caller", () =>
    Effect.gen(function*() {
      const runner = yield* deadRunner
      const client = yield* runners
      const replies: Array<Reply.Reply<typeof Close>> = []
      const message = new Message.OutgoingRequest<typeof Close>({
        envelope: Envelope.makeRequest<typeof Close>({
          requestId: Snowflake.Snowflake(BigInt(1)),
          address,
          tag: "Close",
          payload: undefined,
          headers: Headers.empty
        }),
        context: Context.empty(),
        lastReceivedReply: Option.none(),
        rpc: Close,
        respond: (reply) => Effect.sync(() => replies.push(reply))
      })
      const exit = yield* writeAfterReset(runner, client, client.send({ address: runner.address, message }))
      // @effect/cluster sends a message again when its runner is unavailable (Sharding's `sendOutgoing`); a reply is
      // the caller's answer: without the typed write it was `Exit.die(SocketError)`
      expect(replies).toEqual([])
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({ _tag: "RunnerUnavailable" })
    }))

  it.scopedLive("a persisted turn's acknowledgement: left to the store, not a defect for the turn", () =>
    Effect.gen(function*() {
      const runner = yield* deadRunner
      const client = yield* runners
      const ack = new Message.OutgoingEnvelope({
        envelope: new Envelope.AckChunk({
          id: Snowflake.Snowflake(BigInt(2)),
          address,
          requestId: Snowflake.Snowflake(BigInt(1)),
          replyId: Snowflake.Snowflake(BigInt(3))
        }),
        rpc: Turn
      })
      const exit = yield* writeAfterReset(
        runner,
        client,
        client.notify({ address: Option.some(runner.address), message: ack, discard: false })
      )
      expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "done").toBe("done")
    }))
})

/**
 * A TCP proxy on loopback to `port`; `reset` resets the connections it has accepted (RST to their clients) and ends
 * their upstream ones, and it goes on accepting new ones.
 */
const proxyTo = (port: number) =>
  Effect.gen(function*() {
    const accepted = new Set<readonly [net.Socket, net.Socket]>()
    const server = yield* Effect.acquireRelease(
      Effect.async<net.Server>((resume) => {
        const server = net.createServer((client) => {
          const upstream = net.connect({ host: "127.0.0.1", port })
          const pair = [client, upstream] as const
          accepted.add(pair)
          for (const socket of pair) {
            socket.on("error", () => {
              // reset by us, or its peer was
            })
            socket.on("close", () => {
              accepted.delete(pair)
              client.destroy()
              upstream.destroy()
            })
          }
          client.pipe(upstream)
          upstream.pipe(client)
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          for (const [client, upstream] of accepted) {
            client.destroy()
            upstream.destroy()
          }
          server.close(() => resume(Effect.void))
        })
    )
    const listening = server.address()
    return {
      port: typeof listening === "object" && listening !== null ? listening.port : 0,
      reset: Effect.sync(() => {
        for (const [client, upstream] of accepted) {
          client.resetAndDestroy()
          upstream.destroy()
        }
      })
    }
  })

describe("the cluster's client protocol: which defects of a write it types", () => {
  const request = { _tag: "Ping" } as const
  const dying = (defect: unknown) =>
    Socket.typedWrites({
      run: () => Effect.never,
      send: () => Effect.die(defect),
      supportsAck: true,
      supportsTransferables: false
    })

  it.effect("a socket's error, or NodeSocket's TypeError once its connection is gone: an RpcClientError", () =>
    Effect.gen(function*() {
      for (
        const defect of [
          new PlatformSocket.SocketGenericError({ reason: "Write", cause: "ECONNRESET" }),
          new TypeError("x")
        ]
      ) {
        const exit = yield* Effect.exit(dying(defect).send(request, []))
        expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toEqual(
          Option.some(expect.objectContaining({ _tag: "RpcClientError" }))
        )
      }
    }))

  it.effect("any other defect stays a defect (the cluster would send it again without end)", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(dying(new Error("a bug of ours")).send(request, []))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }))
})

describe("AgentCluster over sockets, a runner's connection reset just before the client writes", () => {
  // the runner-kill stress test's failure: the cleanup's `close` of a session on the killed runner died with
  // `SocketError` (`write ECONNRESET`), through its `Effect.ignore`
  it.scopedLive(
    "close is sent again once the runner is reachable: no defect, the session is closed",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("eca-cluster-socket-")
        const storage = { sqlite: path.join(dir, "cluster.db") }
        const prefix = "socket"
        const listen = yield* freePort
        const proxy = yield* proxyTo(listen)
        // the runner is reached through the proxy
        yield* Layer.build(
          AgentCluster.layerSocket({
            address: { host: "127.0.0.1", port: proxy.port },
            listenAddress: { host: "127.0.0.1", port: listen },
            prefix,
            shardingConfig: clusterTiming
          }).pipe(Layer.provide(ScriptedCli.echo), Layer.provide(sqlLayer(storage)))
        )
        const client = yield* Layer.build(
          AgentCluster.layerSocketClient({ prefix, shardingConfig: clusterTiming }).pipe(
            Layer.provide(sqlLayer(storage))
          )
        )
        const session = yield* Effect.provide(AgentCluster.session("s1"), client)
        const first = yield* Stream.runCollect(session.turn("hello"))
        expect(Chunk.toReadonlyArray(first).at(-1)).toMatchObject({ type: "result", result: "echo: hello" })

        yield* proxy.reset
        const closed = yield* Effect.exit(session.close.pipe(Effect.timeout("30 seconds")))
        expect(Exit.isFailure(closed) ? Cause.pretty(closed.cause) : "closed").toBe("closed")
        expect(yield* session.state).toBe("exited")
      }),
    120_000
  )
})
