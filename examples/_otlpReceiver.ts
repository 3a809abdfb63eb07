/**
 * A tiny OTLP/HTTP trace receiver on 127.0.0.1 (JSON encoding, `POST /v1/traces`), standing in for a collector
 * (Jaeger, Tempo, Honeycomb, the OpenTelemetry Collector…) so that the tracing example and its test run offline. It
 * keeps the spans it received; the server closes with the scope.
 */
import * as Effect from "effect/Effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** A span as the receiver got it. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
  readonly attributes: Readonly<Record<string, unknown>>
}

/** A running receiver: the base URL to export to, and what it received so far. */
export interface OtlpReceiver {
  readonly url: string
  readonly spans: () => ReadonlyArray<ReceivedSpan>
}

interface KeyValue {
  readonly key: string
  readonly value: Readonly<Record<string, unknown>>
}

interface TracesData {
  readonly resourceSpans?: ReadonlyArray<{
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<
        Omit<ReceivedSpan, "attributes"> & { readonly attributes?: ReadonlyArray<KeyValue> }
      >
    }>
  }>
}

const spansOf = (body: string): ReadonlyArray<ReceivedSpan> => {
  const data: TracesData = JSON.parse(body)
  return (data.resourceSpans ?? []).flatMap((r) =>
    (r.scopeSpans ?? []).flatMap((s) =>
      (s.spans ?? []).map((span) => ({
        ...span,
        // OTLP/JSON leaves the parent out (or empty) for a root span
        parentSpanId: span.parentSpanId === "" ? undefined : span.parentSpanId,
        attributes: Object.fromEntries((span.attributes ?? []).map((kv) => [kv.key, Object.values(kv.value)[0]]))
      }))
    )
  )
}

const portOf = (address: AddressInfo | string | null): number =>
  typeof address === "object" && address !== null ? address.port : 0

/** Starts a receiver on a free port of 127.0.0.1, closed with the scope. */
export const start = Effect.acquireRelease(
  Effect.async<{ readonly server: http.Server; readonly received: Array<ReceivedSpan> }>((resume) => {
    const received: Array<ReceivedSpan> = []
    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/traces") {
          try {
            received.push(...spansOf(Buffer.concat(chunks).toString("utf8")))
          } catch {
            response.writeHead(400).end()
            return
          }
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        } else {
          response.writeHead(404).end()
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      resume(Effect.succeed({ server, received }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ received, server }): OtlpReceiver => ({
  url: `http://127.0.0.1:${portOf(server.address())}`,
  spans: () => [...received]
})))

/** The spans as an indented tree (children under their parent, in start order), one line each. */
export const tree = (spans: ReadonlyArray<ReceivedSpan>): string => {
  const ids = new Set(spans.map((s) => s.spanId))
  const byStart = (a: ReceivedSpan, b: ReceivedSpan) =>
    Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano))
  const lines: Array<string> = []
  const walk = (span: ReceivedSpan, depth: number) => {
    const ms = (Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6).toFixed(1)
    lines.push(`${"  ".repeat(depth)}${span.name.padEnd(40 - 2 * depth)} ${ms.padStart(8)} ms  span ${span.spanId}`)
    spans.filter((s) => s.parentSpanId === span.spanId).sort(byStart).forEach((child) => walk(child, depth + 1))
  }
  spans.filter((s) => s.parentSpanId === undefined || !ids.has(s.parentSpanId)).sort(byStart).forEach((root) =>
    walk(root, 0)
  )
  return lines.join("\n")
}
