/** @internal */
import { LineTooLong, MalformedLine } from "../../AgentError.js"
import * as Message from "../../Message.js"

const NEWLINE = 0x0a
const CR = 0x0d
const HEAD_BYTES = 1024
const MAX_MALFORMED_CHARS = 4096

/** @internal */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

/**
 * Splits a byte stream into lines on `\n` (0x0A) only, decoding UTF-8 after framing, so multi-byte characters split
 * across chunks and U+2028/U+2029 inside strings are preserved. A trailing `\r` is dropped (CRLF). Memory is bounded
 * by `maxLineBytes`: a longer line is skipped and reported as {@link LineTooLong}.
 *
 * @internal
 */
export interface LineFramer {
  readonly push: (chunk: Uint8Array, out: Array<Message.Frame>) => void
  readonly end: (out: Array<Message.Frame>) => void
}

/** @internal */
export const toBuffer = (chunk: Uint8Array): Buffer =>
  Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)

/** @internal */
export const parseLine = (line: string): Message.Frame | undefined => {
  if (line.length === 0) return undefined
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (e) {
    if (line.trim().length === 0) return undefined
    return {
      type: "transport_error",
      error: new MalformedLine({
        line: line.slice(0, MAX_MALFORMED_CHARS),
        reason: "InvalidJson",
        description: e instanceof Error ? e.message : "invalid JSON"
      })
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      type: "transport_error",
      error: new MalformedLine({
        line: line.slice(0, MAX_MALFORMED_CHARS),
        reason: "NotAnObject",
        description: "not a JSON object"
      })
    }
  }
  return Message.decode(value)
}

/**
 * Splits bytes into lines on `\n` (0x0A) only, with any trailing `\r` dropped. Memory is bounded by `maxLineBytes`: the
 * bytes of a longer line are counted and dropped, keeping only its first KiB for `onTooLong`. `onLine` gets the line's
 * bytes as a range of a buffer (decode them there: UTF-8 is decoded per complete line, so characters split across
 * chunks survive).
 *
 * @internal
 */
export const makeSplitter = <A>(
  maxLineBytes: number,
  onLine: (buf: Buffer, start: number, end: number, out: Array<A>) => void,
  onTooLong: (bytes: number, head: string, out: Array<A>) => void
): { readonly push: (chunk: Uint8Array, out: Array<A>) => void; readonly end: (out: Array<A>) => void } => {
  let pending: Array<Buffer> = []
  let pendingBytes = 0
  // while skipping an oversized line: its first bytes and its size so far
  let skipping = false
  let skipHead: Buffer = Buffer.alloc(0)
  let skippedBytes = 0

  const emitLine = (buf: Buffer, start: number, end: number, out: Array<A>) =>
    onLine(buf, start, end > start && buf[end - 1] === CR ? end - 1 : end, out)

  const emitTooLong = (out: Array<A>) => {
    onTooLong(skippedBytes, skipHead.toString("utf8").replace(/\uFFFD+$/, ""), out)
    skipping = false
    skipHead = Buffer.alloc(0)
    skippedBytes = 0
  }

  const startSkipping = (extra: Buffer) => {
    const all = pending.length === 0 ? extra : Buffer.concat([...pending, extra])
    skipping = true
    skipHead = Buffer.from(all.subarray(0, HEAD_BYTES))
    skippedBytes = all.length
    pending = []
    pendingBytes = 0
  }

  const push = (chunk: Uint8Array, out: Array<A>) => {
    const buf = toBuffer(chunk)
    let start = 0
    while (start < buf.length) {
      const nl = buf.indexOf(NEWLINE, start)
      if (nl === -1) {
        const rest = buf.subarray(start)
        if (skipping) skippedBytes += rest.length
        else if (pendingBytes + rest.length > maxLineBytes) startSkipping(rest)
        else {
          // copy: the producer may reuse its buffer
          pending.push(Buffer.from(rest))
          pendingBytes += rest.length
        }
        return
      }
      if (skipping) {
        skippedBytes += nl - start
        emitTooLong(out)
      } else if (pendingBytes + (nl - start) > maxLineBytes) {
        startSkipping(buf.subarray(start, nl))
        emitTooLong(out)
      } else if (pendingBytes === 0) {
        emitLine(buf, start, nl, out)
      } else {
        pending.push(buf.subarray(start, nl))
        const line = Buffer.concat(pending, pendingBytes + (nl - start))
        pending = []
        pendingBytes = 0
        emitLine(line, 0, line.length, out)
      }
      start = nl + 1
    }
  }

  const end = (out: Array<A>) => {
    if (skipping) emitTooLong(out)
    else if (pendingBytes > 0) {
      const line = Buffer.concat(pending, pendingBytes)
      pending = []
      pendingBytes = 0
      emitLine(line, 0, line.length, out)
    }
  }

  return { push, end }
}

/** @internal */
export const makeLineFramer = (maxLineBytes: number = DEFAULT_MAX_LINE_BYTES): LineFramer =>
  makeSplitter<Message.Frame>(
    maxLineBytes,
    (buf, start, end, out) => {
      const frame = parseLine(buf.toString("utf8", start, end))
      if (frame !== undefined) out.push(frame)
    },
    (bytes, head, out) => {
      out.push({ type: "transport_error", error: new LineTooLong({ bytes, limit: maxLineBytes, head }) })
    }
  )
