/** @internal */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { InvalidOptions } from "../../AgentError.js"

const SHAPE = "a string or a user message ({ type: \"user\", message: { role: \"user\", content } })"

const show = (u: unknown): string => {
  if (u === null || u === undefined) return String(u)
  if (typeof u === "string") return JSON.stringify(u.length > 40 ? `${u.slice(0, 40)}…` : u)
  if (typeof u === "object") return Array.isArray(u) ? "an array" : "an object"
  if (typeof u === "function") return "a function"
  return typeof u === "symbol" ? u.toString() : String(u)
}

const isObject = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null

/** What is wrong with `item` as a prompt, if anything (blocks are only required to be objects with a `type`). */
const problem = (item: unknown): string | undefined => {
  if (typeof item === "string") return undefined
  if (!isObject(item) || Array.isArray(item)) return `is ${show(item)}, not ${SHAPE}`
  if (item.type !== "user") return `has type ${show(item.type)}, not "user": only user messages can be sent`
  const message = item.message
  if (!isObject(message) || Array.isArray(message)) return `has message ${show(message)}, not { role: "user", content }`
  if (message.role !== "user") return `has message.role ${show(message.role)}, not "user"`
  const content = message.content
  if (typeof content === "string") return undefined
  if (!Array.isArray(content)) {
    return `has message.content ${show(content)}, not a string or an array of content blocks`
  }
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (!isObject(block) || typeof block.type !== "string") {
      return `has message.content[${i}] ${show(block)}, not a content block (an object with a string type)`
    }
  }
  return undefined
}

/**
 * `InvalidOptions { option: "prompt" }` when item `index` (0-based) of a streamed prompt is not a string or a user
 * message, saying what is wrong; `undefined` when it can be sent.
 *
 * @internal
 */
export const invalidItem = (item: unknown, index: number): InvalidOptions | undefined => {
  const wrong = problem(item)
  return wrong === undefined
    ? undefined
    : new InvalidOptions({ option: "prompt", description: `item ${index} ${wrong}` })
}

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) return cause.message.length > 0 ? `${cause.name}: ${cause.message}` : cause.name
  try {
    return String(cause)
  } catch {
    return "an unprintable value"
  }
}

/**
 * The prompt source failed (`what` says how): `InvalidOptions { option: "prompt" }` carrying `cause`.
 *
 * @internal
 */
export const failed = (what: string, cause: unknown): InvalidOptions =>
  new InvalidOptions({ option: "prompt", description: `${what}: ${describeCause(cause)}`, cause })

/**
 * A prompt stream that died: `InvalidOptions { option: "prompt" }` carrying the defect (as it was thrown, without the
 * span Effect attaches to it).
 *
 * @internal
 */
export const died = (cause: Cause.Cause<unknown>): InvalidOptions =>
  failed("the prompt stream died", Cause.originalError(Cause.squash(cause)))

/**
 * Gives up an iterator that was not read to its end: its `return()` is called and not awaited (an async generator
 * suspended at an `await` settles it only once it resumes, which may be never); a rejection or a throw is dropped,
 * as nothing waits for it.
 */
const abandon = (iterator: AsyncIterator<unknown>): void => {
  try {
    if (typeof iterator.return !== "function") return
    const returned: unknown = iterator.return()
    if (isObject(returned) && typeof returned.then === "function") {
      Promise.resolve(returned).then(undefined, () => undefined)
    }
  } catch {
    // nothing waits for the iterator any more
  }
}

/**
 * An async iterable as a Stream that can always be abandoned: interrupting a pull returns at once (a `next()` still
 * pending is left to settle on its own), and the release calls `return()` without waiting for it. Reading it fails
 * with `InvalidOptions { option: "prompt", cause }` when `[Symbol.asyncIterator]()` or `next()` throws, `next()`
 * rejects, or resolves to something that is not an iterator result.
 *
 * `Stream.fromAsyncIterable` awaits `return()` in its release, so a generator suspended at an `await` (the multi-turn
 * pattern: yield a message, wait for the user's next input) held up closing the query forever.
 *
 * @internal
 */
export const fromAsyncIterable = <A>(iterable: AsyncIterable<A>): Stream.Stream<A, InvalidOptions> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const iterator = yield* Effect.try({
      try: () => iterable[Symbol.asyncIterator](),
      catch: (cause) => failed("its [Symbol.asyncIterator]() threw", cause)
    })
    if (!isObject(iterator) || typeof iterator.next !== "function") {
      return yield* Effect.fail(
        new InvalidOptions({
          option: "prompt",
          description: `its [Symbol.asyncIterator]() returned ${show(iterator)}, not an iterator`
        })
      )
    }
    // `return()` is for an iterator given up before its end; one that ended or failed is done already
    let finished = false
    yield* Effect.addFinalizer(() => Effect.sync(() => finished || abandon(iterator)))
    const end = (error: Option.Option<InvalidOptions>) => {
      finished = true
      return Effect.fail(error)
    }
    const next = Effect.async<A, Option.Option<InvalidOptions>>((resume) => {
      const settle = (result: unknown) => {
        try {
          if (!isObject(result)) {
            return resume(end(Option.some(
              new InvalidOptions({
                option: "prompt",
                description: `its next() resolved to ${show(result)}, not an iterator result ({ done, value })`
              })
            )))
          }
          if (result.done) return resume(end(Option.none()))
          resume(Effect.succeed(result.value as A))
        } catch (cause) {
          resume(end(Option.some(failed("its iterator result could not be read", cause))))
        }
      }
      try {
        Promise.resolve(iterator.next()).then(
          settle,
          (cause: unknown) => resume(end(Option.some(failed("its next() rejected", cause))))
        )
      } catch (cause) {
        resume(end(Option.some(failed("its next() threw", cause))))
      }
    })
    return Stream.repeatEffectOption(next)
  }))
