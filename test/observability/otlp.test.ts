/**
 * OpenTelemetry export over OTLP/HTTP to a receiver run by the test: the request's server span
 * carries the caller's trace id and is the span the answer's `traceparent` names; the metrics
 * arrive too; nothing exported carries the token or the body. Off when no endpoint is set.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { otlpEnabled } from "../../src/observability/Otel.ts"
import { call, fixturePlugin, startServer, type TestServer, waitForLog, waitReady } from "../support/server.ts"

interface Received {
  readonly path: string
  readonly contentType: string
  readonly text: string
}

const startReceiver = async () => {
  const received: Array<Received> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks)
      const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw
      received.push({ path: req.url ?? "", contentType: req.headers["content-type"] ?? "", text: body.toString("utf8") })
      res.writeHead(200, { "content-type": "application/json" })
      res.end("{}")
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => new Promise<void>((r) => server.close(() => r())) }
}

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

const spansOf = (received: ReadonlyArray<Received>): Array<OtlpSpan> =>
  received.filter((r) => r.path === "/v1/traces").flatMap((r) =>
    (JSON.parse(r.text) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<OtlpSpan> }> }> }).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))
  )

const until = async <A>(read: () => A | undefined, timeoutMs = 15_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("timed out")
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe("OTLP/HTTP export", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let server: TestServer
  beforeAll(async () => {
    receiver = await startReceiver()
    server = await startServer({
      env: {
        HCC_PLUGINS: fixturePlugin("series-stats"),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_METRIC_EXPORT_INTERVAL: "300",
        OTEL_SERVICE_NAME: "hcc-under-test"
      }
    })
    await waitReady(server)
  })
  afterAll(async () => {
    await server.stop()
    await receiver.close()
  })

  it("exports the request's server span under the caller's trace, the one its traceparent and log line name", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const parent = "00f067aa0ba902b7"
    const res = await call(server, "/v1/series-stats", { body: { values: [3, 1, 4, 1, 5] }, headers: { traceparent: `00-${traceId}-${parent}-01` } })
    expect(res.status).toBe(200)
    const answered = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(res.headers.get("traceparent") ?? "")
    expect(answered?.[1]).toBe(traceId)
    const span = await until(() => spansOf(receiver.received).find((s) => s.traceId === traceId && s.kind === 2))
    expect(span.spanId).toBe(answered?.[2])
    expect(span.parentSpanId).toBe(parent)
    const status = span.attributes.find((a) => a.key === "http.response.status_code")?.value
    expect(Number(Object.values(status ?? {})[0])).toBe(200)
    const line = await waitForLog(server, (l) => l.msg === "request" && l.trace_id === traceId)
    expect(line.status).toBe(200)
    // The resource names the service as configured.
    const traces = receiver.received.find((r) => r.path === "/v1/traces")!
    expect(traces.text).toContain("hcc-under-test")
    expect(traces.text).toContain("process.pid")
  })

  it("a request without traceparent gets a new trace, the same in the answer and the exported span", async () => {
    const res = await call(server, "/v1/catalog")
    const answered = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(res.headers.get("traceparent") ?? "")!
    const span = await until(() => spansOf(receiver.received).find((s) => s.traceId === answered[1] && s.kind === 2))
    expect(span.spanId).toBe(answered[2])
    expect(span.parentSpanId ?? "").toBe("")
    // The work inside the request (token look-up, SQL) is exported as its children.
    const children = await until(() => {
      const found = spansOf(receiver.received).filter((s) => s.traceId === answered[1] && s.kind !== 2)
      return found.length > 0 ? found : undefined
    })
    expect(children.every((c) => c.parentSpanId !== undefined && c.parentSpanId !== "")).toBe(true)
  })

  it("exports the service's metrics", async () => {
    const metrics = await until(() => receiver.received.find((r) => r.path === "/v1/metrics" && r.text.includes("hcc_http_requests_total")))
    expect(metrics.contentType).toContain("application/json")
  })

  it("never exports the token or a request body", async () => {
    await call(server, "/v1/series-stats", { body: { values: [271828, 314159] } })
    // Until the call's own spans have been exported.
    await until(() => (receiver.received.some((r) => r.path === "/v1/traces" && r.text.includes("/v1/series-stats")) ? true : undefined))
    const all = receiver.received.map((r) => r.text).join("\n")
    expect(all).not.toContain(server.demoToken)
    expect(all).not.toContain("271828")
    expect(all.toLowerCase()).not.toContain("authorization")
  })
})

describe("OTLP settings", () => {
  it("export is on only when an endpoint is set and the SDK is not disabled", () => {
    expect(otlpEnabled({})).toBe(false)
    expect(otlpEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true)
    expect(otlpEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true)
    expect(otlpEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toBe(false)
  })

  it("without an endpoint the server exports nothing and still answers traceparent", async () => {
    const receiver = await startReceiver()
    const server = await startServer({ env: { OTEL_BSP_SCHEDULE_DELAY: "100" } })
    try {
      const res = await fetch(`${server.url}/healthz`)
      expect(res.headers.get("traceparent")).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    } finally {
      await server.stop()
      await receiver.close()
    }
    // Once the server has stopped (exporters flush at shutdown), nothing can arrive any more.
    expect(receiver.received).toHaveLength(0)
  })
})
