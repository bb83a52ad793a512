/**
 * The fast lane (src/http/FastLane.ts) answers exactly as the Effect router does: the same
 * requests — charged calls and every early refusal, the catalog with its ETag and compression,
 * the probe — are sent to a server with the lane and to one with HCC_FAST_LANE=off, on one
 * database, and their status, headers and bodies compared (ids, trace and remaining-quota values
 * aside). The lane's counter shows which server answered through it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, fixturePlugin, newAccount, startServer, type TestServer, waitForLog, waitReady } from "../support/server.ts"

const ORIGIN = "https://app.example.com"
const env = { HCC_PLUGINS: fixturePlugin("series-stats"), HCC_CORS_ORIGINS: ORIGIN, HCC_METRICS_PORT: "0" }
const VALUES = { values: [1.5, 2.5, 4, 3.25] }

let lane: TestServer
let router: TestServer
let token: string
beforeAll(async () => {
  lane = await startServer({ env })
  await waitReady(lane)
  router = await startServer({ env: { ...env, HCC_FAST_LANE: "off" }, dataDir: lane.dataDir })
  await waitReady(router)
  // Enterprise: a daily cap (so calls reserve a unit) and a burst limit these requests stay under.
  token = newAccount(lane, { tier: "enterprise" }).token
})
afterAll(async () => {
  await Promise.all([lane?.stop(), router?.stop()])
})

/** Status, headers and body of an answer, with what differs per request (ids, trace, remaining quota) set aside. */
const shape = async (res: Response) => {
  const headers: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    if (!["x-request-id", "traceparent", "date", "ratelimit", "keep-alive", "connection"].includes(name)) headers[name] = value
  })
  const text = await res.text()
  let body: unknown = text
  if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") {
    const parsed = JSON.parse(text) as Record<string, unknown>
    if (typeof parsed.request_id === "string") parsed.request_id = "<request id>"
    body = parsed
  }
  return { status: res.status, headers, body, requestId: res.headers.get("x-request-id"), ratelimit: res.headers.get("ratelimit") }
}

/** The requests both servers get, by name; `key` makes Idempotency-Keys unique per server. */
const requests = (key: string): ReadonlyArray<readonly [string, Parameters<typeof call>[2] & { readonly path: string }]> => [
  ["charged call", { path: "/v1/series-stats", body: VALUES }],
  ["charged call, query string, caller's request id, CORS origin", { path: "/v1/series-stats?x=1", body: VALUES, headers: { "x-request-id": "caller-id-1", origin: ORIGIN } }],
  ["no token", { path: "/v1/series-stats", body: VALUES, token: null }],
  ["unknown token", { path: "/v1/series-stats", body: VALUES, token: "hcc_live_0000000000000000000000000000000000000000" }],
  ["lower-case scheme", { path: "/v1/series-stats", body: VALUES, headers: { authorization: `bearer   ${token}` }, token: null }],
  ["text/plain", { path: "/v1/series-stats", body: VALUES, headers: { "content-type": "text/plain" } }],
  ["bad Idempotency-Key", { path: "/v1/series-stats", body: VALUES, headers: { "idempotency-key": "has space" } }],
  ["malformed JSON", { path: "/v1/series-stats", body: "{not json" }],
  ["empty body", { path: "/v1/series-stats", body: "" , headers: { "content-type": "application/json" } }],
  ["unknown field", { path: "/v1/series-stats", body: { ...VALUES, extra: 1 } }],
  ["schema error", { path: "/v1/series-stats", body: { values: "x" } }],
  ["domain error", { path: "/v1/series-stats", body: { values: [] } }],
  ["first with a key", { path: "/v1/series-stats", body: VALUES, headers: { "idempotency-key": `key-${key}` } }],
  ["replayed", { path: "/v1/series-stats", body: VALUES, headers: { "idempotency-key": `key-${key}` } }],
  ["key reused for another body", { path: "/v1/series-stats", body: { values: [9] }, headers: { "idempotency-key": `key-${key}` } }],
  ["catalog", { path: "/v1/catalog" }],
  ["catalog, br", { path: "/v1/catalog", headers: { "accept-encoding": "br" } }],
  ["catalog, no token", { path: "/v1/catalog", token: null }],
  ["healthz", { path: "/healthz", token: null }]
]

describe("the fast lane", () => {
  it("answers every request as the Effect router does, and counts what it took", async () => {
    const scrape = async (server: TestServer) => {
      const line = await waitForLog(server, (l) => l.msg === "metrics listening", 30_000)
      const text = await (await fetch(`http://127.0.0.1:${String(line.port)}/metrics`)).text()
      return Number(/^hcc_http_fast_lane_requests_total(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? 0)
    }
    const before = { lane: await scrape(lane), router: await scrape(router) }
    const viaLane = requests("lane")
    const viaRouter = requests("router")
    for (let i = 0; i < viaLane.length; i++) {
      const [name, { path, ...init }] = viaLane[i]!
      const a = await shape(await call(lane, path, { token, ...init }))
      const b = await shape(await call(router, viaRouter[i]![1].path, { token, ...viaRouter[i]![1] }))
      expect({ name, ...a, requestId: undefined, ratelimit: undefined }).toEqual({ name, ...b, requestId: undefined, ratelimit: undefined })
      // The parts set aside are there on both, well formed.
      expect(a.requestId).toMatch(init.headers?.["x-request-id"] ?? /^[0-9a-f-]{36}$/)
      expect(b.requestId).toMatch(init.headers?.["x-request-id"] ?? /^[0-9a-f-]{36}$/)
      expect(a.ratelimit === null).toBe(b.ratelimit === null)
    }
    // An ETag from either server is current on both: 304 with no body.
    const etag = (await call(lane, "/v1/catalog", { token })).headers.get("etag")!
    const [a, b] = await Promise.all([lane, router].map(async (s) => shape(await call(s, "/v1/catalog", { token, headers: { "if-none-match": etag } }))))
    expect(a!.status).toBe(304)
    expect({ ...a, requestId: undefined, ratelimit: undefined }).toEqual({ ...b, requestId: undefined, ratelimit: undefined })

    const after = { lane: await scrape(lane), router: await scrape(router) }
    expect(after.lane - before.lane).toBe(viaLane.length + 2)
    expect(after.router - before.router).toBe(0)
  })

  it("leaves to the router what it does not take: HEAD, OPTIONS, other paths, chunked bodies", async () => {
    const scrape = async () => {
      const line = await waitForLog(lane, (l) => l.msg === "metrics listening", 30_000)
      const text = await (await fetch(`http://127.0.0.1:${String(line.port)}/metrics`)).text()
      return Number(/^hcc_http_fast_lane_requests_total(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? 0)
    }
    const before = await scrape()
    expect((await call(lane, "/v1/catalog", { token, method: "HEAD" })).status).toBe(200)
    expect((await call(lane, "/v1/series-stats", { token, method: "OPTIONS" })).status).toBe(204)
    expect((await call(lane, "/v1/usage", { token })).status).toBe(200)
    expect((await call(lane, "/v1/catalog", { token, method: "DELETE" })).status).toBe(405)
    // A streamed body has no Content-Length: Node frames it chunked.
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify(VALUES)))
        controller.close()
      }
    })
    const res = await fetch(`${lane.url}/v1/series-stats`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: stream,
      duplex: "half"
    } as RequestInit)
    expect(res.status).toBe(200)
    expect(await scrape()).toBe(before)
  })
})

describe("the lane's writer", () => {
  it("answers a 500 problem, not a hung request, when Node refuses a header of the answer", async () => {
    const { createServer } = await import("node:http")
    const { HttpServerResponse } = await import("effect/http")
    const { writeAnswer } = await import("../../src/http/FastLane.ts")
    const server = createServer((req, res) =>
      writeAnswer(req, res, HttpServerResponse.text("{}", { contentType: "application/json", headers: { "hcc-dataset-as-of": "2026\nx" } }), "req-1"))
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    try {
      const address = server.address() as { port: number }
      const res = await fetch(`http://127.0.0.1:${address.port}/`)
      expect(res.status).toBe(500)
      expect(res.headers.get("x-request-id")).toBe("req-1")
      expect(await res.json()).toMatchObject({ code: "internal_error", request_id: "req-1", hcc_cost: 0 })
    } finally {
      server.close()
    }
  })
})
