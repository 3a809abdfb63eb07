/** @internal */
import * as Headers from "@effect/platform/Headers"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Api from "../../UIMessageStream.js"
import * as chunks from "./chunks.js"

/** @internal */
export const headers: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no"
}

/** @internal */
export const DEFAULT_ERROR_TEXT = "The agent failed."

/** The `error` chunk of a failure: the caller's text, or the fixed default (a throwing `onError` gives it too). */
export const errorChunk = (options: Api.Options | undefined, error: unknown): Api.UIMessageChunk => {
  let errorText = DEFAULT_ERROR_TEXT
  if (options?.onError !== undefined) {
    try {
      errorText = options.onError(error)
    } catch {
      // the default text stands
    }
  }
  return { type: "error", errorText }
}

/** @internal */
export const fromMessages = <E, R>(
  self: Stream.Stream<Api.Input, E, R>,
  options?: Api.Options
): Stream.Stream<Api.UIMessageChunk, never, R> =>
  Stream.suspend(() => {
    let state = chunks.initial
    let failed = false
    const body = self.pipe(
      Stream.mapChunks((inputs) => {
        const out: Array<Api.UIMessageChunk> = []
        for (const input of inputs) {
          const [next, produced] = chunks.step(state, input, options)
          state = next
          for (const chunk of produced) out.push(chunk)
        }
        return Chunk.unsafeFromArray(out)
      }),
      Stream.catchAllCause((cause) => {
        failed = true
        return Stream.fromEffect(
          Effect.logError("UIMessageStream: the input failed", cause).pipe(
            Effect.as(errorChunk(options, cause))
          )
        )
      })
    )
    // after a failure the stream ends with its `error` chunk (as the AI SDK's own streams do)
    return Stream.concat(
      body,
      Stream.suspend(() => failed ? Stream.empty : Stream.fromIterable(chunks.flush(state, options)))
    )
  })

const encoder = new TextEncoder()
const DONE = encoder.encode("data: [DONE]\n\n")
const KEEP_ALIVE = encoder.encode(": keep-alive\n\n")

/** One SSE event per chunk, all of a batch in one buffer. */
const frame = (batch: Chunk.Chunk<Api.UIMessageChunk>): Uint8Array => {
  let text = ""
  for (const chunk of batch) text += `data: ${JSON.stringify(chunk)}\n\n`
  return encoder.encode(text)
}

/** @internal */
export const encode = <E, R>(
  self: Stream.Stream<Api.UIMessageChunk, E, R>,
  options?: Api.EncodeOptions
): Stream.Stream<Uint8Array, E, R> => {
  const events = Stream.concat(
    Stream.mapChunks(self, (batch) => Chunk.size(batch) === 0 ? Chunk.empty() : Chunk.of(frame(batch))),
    Stream.succeed(DONE)
  )
  const keepAliveMs = options?.keepAliveMs
  if (keepAliveMs === undefined) return events
  // a comment whenever nothing went out for keepAliveMs
  return Stream.merge(
    events,
    Stream.repeatEffect(Effect.as(Effect.sleep(Duration.millis(keepAliveMs)), KEEP_ALIVE)),
    { haltStrategy: "left" }
  )
}

/** @internal */
export const toHttpServerResponse = (
  self: Stream.Stream<Api.UIMessageChunk>,
  options?: Api.EncodeOptions
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(encode(self, options), {
    contentType: "text/event-stream",
    headers: Headers.fromInput(headers)
  })

/** @internal */
export const toResponse = (
  messages: AsyncIterable<Api.Input>,
  options: Api.Options & Api.EncodeOptions & {
    readonly status?: number
    readonly headers?: Record<string, string>
  } = {}
): Response => {
  const iterator = messages[Symbol.asyncIterator]()
  let state = chunks.initial
  let done = false
  let keepAlive: ReturnType<typeof setInterval> | undefined
  let lastWrite = Date.now()
  const stop = () => {
    done = true
    if (keepAlive !== undefined) clearInterval(keepAlive)
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const keepAliveMs = options.keepAliveMs
      if (keepAliveMs === undefined) return
      keepAlive = setInterval(() => {
        if (done || Date.now() - lastWrite < keepAliveMs) return
        lastWrite = Date.now()
        controller.enqueue(KEEP_ALIVE)
      }, keepAliveMs)
    },
    async pull(controller) {
      const write = (produced: ReadonlyArray<Api.UIMessageChunk>) => {
        if (produced.length === 0) return false
        lastWrite = Date.now()
        controller.enqueue(frame(Chunk.unsafeFromArray(produced)))
        return true
      }
      const end = (produced: ReadonlyArray<Api.UIMessageChunk>) => {
        write(produced)
        controller.enqueue(DONE)
        stop()
        controller.close()
      }
      // a pull that enqueues nothing is not called again: read until a chunk goes out
      while (!done) {
        let next: IteratorResult<Api.Input>
        try {
          next = await iterator.next()
        } catch (error) {
          return end([errorChunk(options, error)])
        }
        if (next.done === true) return end(chunks.flush(state, options))
        const [nextState, produced] = chunks.step(state, next.value, options)
        state = nextState
        if (write(produced)) return
      }
    },
    async cancel() {
      stop()
      await iterator.return?.()
    }
  })
  return new Response(body, {
    status: options.status ?? 200,
    headers: { ...headers, ...options.headers }
  })
}
