/** @internal */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * Takes messages in chunks (`takeAll`: the chunk and whether the source is done) but hands them out one by one, so a
 * reader that stops after any message (e.g. a turn's result) leaves the rest for the next reader. Fails with `None`
 * once the source is done and everything was handed out.
 *
 * @internal
 */
export const oneByOne = <A, E>(
  takeAll: Effect.Effect<readonly [Chunk.Chunk<A>, boolean], E>
): Effect.Effect<A, Option.Option<E>> => {
  let buffered: ReadonlyArray<A> = []
  let position = 0
  let done = false
  const next: Effect.Effect<A, Option.Option<E>> = Effect.suspend(() => {
    if (position < buffered.length) return Effect.succeed(buffered[position++]!)
    if (done) return Effect.fail(Option.none())
    return takeAll.pipe(
      Effect.mapError(Option.some),
      Effect.flatMap(([chunk, isDone]) => {
        buffered = Chunk.toReadonlyArray(chunk)
        position = 0
        done = isDone
        return next
      })
    )
  })
  return next
}
