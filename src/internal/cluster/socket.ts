/**
 * The client side of the runners' TCP transport (@effect/platform-node's cluster socket protocol), its failed writes
 * typed.
 *
 * @effect/rpc's socket protocol dies when a write fails (`RpcClient.makeProtocolSocket`'s `send` is
 * `Effect.orDie(write(encoded))`): a write to a runner that has just died (`write ECONNRESET`, `EPIPE`, or NodeSocket's
 * `TypeError … reading 'write'` once its connection is gone) is a defect, where the same runner found closed a moment
 * later is an `RpcClientError`. @effect/cluster turns that error into `RunnerUnavailable` and sends the message again
 * to the shard's owner (or, for a persisted one, leaves it to the store), but lets the defect through: a request
 * that is not persisted (`close`, `state`, the setters) is answered with it, and a persisted turn's acknowledgement
 * or notification dies with it. Failing the write with the error the closed connection gives makes both cases one.
 *
 * @internal
 */
import * as Runners from "@effect/cluster/Runners"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type * as RpcClient from "@effect/rpc/RpcClient"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import type * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Socket from "@effect/platform/Socket"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * The protocol with the defects of its writes that a dead connection causes (a `SocketError`; NodeSocket's
 * `TypeError` once its connection is gone) failed as an `RpcClientError`. Any other defect stays one: @effect/cluster
 * sends a message failed this way again (without a limit for a request that is not persisted), which only a runner
 * that comes back or a shard that moves can end. A request the protocol cannot encode still throws from `send`
 * itself, before any write: a defect of ours, not of the runner.
 *
 * @internal
 */
export const typedWrites = (protocol: RpcClient.Protocol["Type"]): RpcClient.Protocol["Type"] => ({
  ...protocol,
  send: (request, transferables) =>
    Effect.catchSomeDefect(
      protocol.send(request, transferables),
      (defect) =>
        Socket.isSocketError(defect) || defect instanceof TypeError
          ? Option.some(
            Effect.fail(
              new RpcClientError({ reason: "Protocol", message: "Error writing to the runner", cause: defect })
            )
          )
          : Option.none()
    )
})

/**
 * `NodeClusterSocket.layerClientProtocol` with {@link typedWrites}.
 *
 * @internal
 */
export const layerClientProtocol: Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization> =
  Layer.effect(
    Runners.RpcClientProtocol,
    Effect.map(
      Runners.RpcClientProtocol,
      (connect) => (address) => Effect.map(connect(address), typedWrites)
    )
  ).pipe(Layer.provide(NodeClusterSocket.layerClientProtocol))
