/** @internal */
import type * as Deadlines from "./deadlines.js"

/**
 * An `AbortSignal` built only if read (see docs/PERFORMANCE.md, P2): `abort` aborts it, or makes it start aborted.
 *
 * @internal
 */
export const lazySignal = (): { readonly signal: () => AbortSignal; readonly abort: () => void } => {
  let controller: AbortController | undefined
  let aborted = false
  return {
    signal: () => {
      if (controller === undefined) {
        controller = new AbortController()
        if (aborted) controller.abort()
      }
      return controller.signal
    },
    abort: () => {
      aborted = true
      controller?.abort()
    }
  }
}

/**
 * Calls a Promise callback (or one that returns its value directly, as `await` allows) on behalf of a callback
 * handler, and settles once: with its value, its failure (a throw or a rejection), or at its deadline, after
 * `abandon`. Returns what the handler returns: abandon it unless it settled. Nothing it starts can reject
 * unobserved; `onValue` must not throw.
 *
 * @internal
 */
export const settleOnce = <A>(options: {
  readonly call: () => PromiseLike<A> | A
  readonly deadlines: Deadlines.Deadlines | undefined
  readonly abandon: () => void
  readonly onValue: (value: A) => void
  readonly onFailure: (error: unknown) => void
  readonly onTimeout: () => void
}): () => void => {
  let settled = false
  let deadline: Deadlines.Entry | undefined
  const settle = (): boolean => {
    if (settled) return false
    settled = true
    if (deadline !== undefined) options.deadlines?.cancel(deadline)
    return true
  }
  const failed = (error: unknown) => {
    if (settle()) options.onFailure(error)
  }
  try {
    Promise.resolve(options.call()).then((value) => {
      if (settle()) options.onValue(value)
    }, failed).then(undefined, failed)
  } catch (error) {
    failed(error)
  }
  if (!settled && options.deadlines !== undefined) {
    deadline = options.deadlines.start(() => {
      if (!settle()) return
      options.abandon()
      options.onTimeout()
    })
  }
  return () => {
    if (settle()) options.abandon()
  }
}
