/** @internal */
import { StringDecoder } from "node:string_decoder"

/** @internal */
export interface StderrTail {
  readonly push: (chunk: Uint8Array) => void
  readonly tail: () => string
}

/**
 * Keeps the last `limit` bytes of a byte stream (a ring of chunks, never more than about `limit` bytes in memory)
 * and forwards decoded text to an optional callback.
 *
 * @internal
 */
export const makeStderrTail = (limit: number, onText?: ((text: string) => void) | undefined): StderrTail => {
  let chunks: Array<Buffer> = []
  let size = 0
  const decoder = onText === undefined ? undefined : new StringDecoder("utf8")
  return {
    push: (chunk) => {
      const buf = Buffer.from(chunk)
      if (decoder !== undefined && onText !== undefined) {
        const text = decoder.write(buf)
        if (text.length > 0) {
          try {
            onText(text)
          } catch {
            // a user callback must never break the transport
          }
        }
      }
      if (buf.length >= limit) {
        chunks = [buf.subarray(buf.length - limit)]
        size = limit
        return
      }
      chunks.push(buf)
      size += buf.length
      while (size - (chunks[0]?.length ?? 0) >= limit) {
        size -= chunks[0]?.length ?? 0
        chunks.shift()
      }
    },
    tail: () => {
      let all = Buffer.concat(chunks, size)
      if (all.length > limit) all = all.subarray(all.length - limit)
      // drop a partial UTF-8 sequence at the start
      let start = 0
      while (start < all.length && start < 4 && ((all[start] ?? 0) & 0xc0) === 0x80) start++
      return all.toString("utf8", start)
    }
  }
}
