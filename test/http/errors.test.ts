/**
 * Every row of the error catalogue (docs/errors.md) over real HTTP: status, problem+json body with code, request_id and
 * hcc_cost 0, and the headers each row promises — on each engine, and with OpenTelemetry export on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CONTRACT_RUNS, startRun } from "../support/engines.ts"
import { call, fixturePlugin, newAccount, startServer, type TestServer, waitForLog } from "../support/server.ts"

describe.each(CONTRACT_RUNS)("on %s", (run) => {
let server: TestServer

beforeAll(async () => {
  server = await startRun(run, {
    env: { HCC_PLUGINS: [fixturePlugin("series-stats"), fixturePlugin("defect"), fixturePlugin("slow-echo")].join(",") }
  })
})
afterAll(async () => {
  await server.stop()
})

/** Asserts the common problem shape and returns the body. */
const problem = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
  const body = (await res.json()) as Record<string, unknown>
  expect(body).toMatchObject({ type: `/docs/errors#${code}`, status, code, hcc_cost: 0 })
  expect(typeof body.title).toBe("string")
  expect(typeof body.detail).toBe("string")
  expect(body.request_id).toBe(res.headers.get("x-request-id"))
  return body
}

describe("400", () => {
  it("malformed_json for a body that is not JSON", async () => {
    await problem(await call(server, "/v1/series-stats", { body: '{"values": [1,' }), 400, "malformed_json")
  })
  it("malformed_json for an empty body", async () => {
    await problem(await call(server, "/v1/series-stats", { body: "" , headers: { "content-type": "application/json" }, method: "POST" }), 400, "malformed_json")
  })
  it("unknown_field names the JSON pointer of each unknown field", async () => {
    const body = await problem(await call(server, "/v1/series-stats", { body: { values: [1], lable: "x", extra: { a: 1 } } }), 400, "unknown_field")
    expect(body.errors).toEqual(expect.arrayContaining([
      { path: "/lable", message: expect.stringContaining("Unknown field") },
      { path: "/extra", message: expect.stringContaining("Unknown field") }
    ]))
  })
  it("invalid_request lists every problem with its path", async () => {
    const body = await problem(await call(server, "/v1/series-stats", { body: { values: [1, "two", 3], label: 7 } }), 400, "invalid_request")
    const paths = (body.errors as Array<{ path: string }>).map((e) => e.path).sort()
    expect(paths).toEqual(["/label", "/values/1"])
  })
  it("invalid_request for a missing required field", async () => {
    const body = await problem(await call(server, "/v1/series-stats", { body: {} }), 400, "invalid_request")
    expect(body.errors).toEqual([{ path: "/values", message: expect.any(String) }])
  })
})

describe("401", () => {
  it("missing_token with the RFC 6750 challenge", async () => {
    const res = await call(server, "/v1/catalog", { token: null })
    await problem(res, 401, "missing_token")
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="hcc"')
  })
  it("invalid_token with error=invalid_token", async () => {
    const res = await call(server, "/v1/catalog", { token: "hcc_notarealtoken" })
    await problem(res, 401, "invalid_token")
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="hcc", error="invalid_token"')
  })
  it("a non-Bearer scheme is a missing token", async () => {
    const res = await fetch(`${server.url}/v1/catalog`, { headers: { authorization: `Basic ${btoa("a:b")}` } })
    await problem(res, 401, "missing_token")
  })
})

describe("404 and 405", () => {
  it("not_found for an unknown path, with or without a token", async () => {
    await problem(await call(server, "/v1/nothing-here"), 404, "not_found")
    await problem(await call(server, "/v2/catalog", { token: null }), 404, "not_found")
  })
  it("method_not_allowed with Allow for a known path", async () => {
    const res = await call(server, "/v1/catalog", { method: "DELETE" })
    const body = await problem(res, 405, "method_not_allowed")
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS")
    expect(body.allow).toEqual(["GET", "HEAD", "OPTIONS"])
    const post = await call(server, "/v1/series-stats", { method: "GET" })
    await problem(post, 405, "method_not_allowed")
    expect(post.headers.get("allow")).toBe("POST, OPTIONS")
  })
})

/** POSTs a JSON body as a stream of these pieces: no Content-Length, so it goes chunked. */
const postChunked = (path: string, pieces: ReadonlyArray<string>) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.demoToken}`, "content-type": "application/json" },
    body: new ReadableStream({
      start(c) {
        for (const piece of pieces) c.enqueue(new TextEncoder().encode(piece))
        c.close()
      }
    }),
    duplex: "half"
  } as RequestInit)

describe("413 and 415", () => {
  it("payload_too_large for a body over 1 MiB, announced or chunked", async () => {
    const big = JSON.stringify({ values: Array.from({ length: 200_000 }, (_, i) => i) })
    expect(big.length).toBeGreaterThan(1_048_576)
    const body = await problem(await call(server, "/v1/series-stats", { body: big }), 413, "payload_too_large")
    expect(body.limit_bytes).toBe(1_048_576)
    await problem(await postChunked("/v1/series-stats", [big]), 413, "payload_too_large")
  })
  it("a body sent without a length (chunked) is read whole and answered", async () => {
    const res = await postChunked("/v1/series-stats", ['{"values":[1.5,', "2.5]}"])
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ count: 2, mean: 2 })
  })
  it("a body of exactly 1 MiB is accepted", async () => {
    const prefix = '{"values":[1],"label":"'
    const label = "x".repeat(1_048_576 - prefix.length - 2)
    const res = await call(server, "/v1/series-stats", { body: `${prefix}${label}"}` })
    // The label is over the schema's 100 characters, so the body is read and validated (not refused as too large).
    await problem(res, 400, "invalid_request")
  })
  it("unsupported_media_type for a non-JSON or missing content type", async () => {
    await problem(await call(server, "/v1/series-stats", { body: "{}", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type")
    const noType = await fetch(`${server.url}/v1/series-stats`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.demoToken}` },
      body: new Uint8Array([123, 125])
    })
    await problem(noType, 415, "unsupported_media_type")
  })
  it("application/json with a charset parameter is accepted", async () => {
    const res = await call(server, "/v1/series-stats", { body: { values: [1, 2] }, headers: { "content-type": "application/json; charset=utf-8" } })
    expect(res.status).toBe(200)
  })
})

describe("422", () => {
  it("a declared domain error carries its code, detail and context", async () => {
    const body = await problem(await call(server, "/v1/series-stats", { body: { values: [3, 3], label: "must-vary" } }), 422, "constant_required")
    expect(body.context).toEqual({ count: 2, value: 3 })
  })
})

describe("429", () => {
  it("rate_limited says which limit and sets Retry-After", async () => {
    const { token } = newAccount(server, { tier: "starter", burstLimit: 1 })
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    const res = await call(server, "/v1/catalog", { token })
    const body = await problem(res, 429, "rate_limited")
    expect(body.limit).toBe("burst")
    const retry = Number(res.headers.get("retry-after"))
    expect(retry).toBeGreaterThanOrEqual(1)
    // Per-second buckets: a slot frees when its whole second has left the 60 s window (≤ 61 s).
    expect(retry).toBeLessThanOrEqual(61)
    expect(body.retry_after_seconds).toBe(retry)
  })
})

describe("500", () => {
  it("internal_error without internals; the plugin's failure is logged under the request id, its code and a redacted message", async () => {
    const res = await call(server, "/v1/defect", { body: { patient: "Jane Roe 1961-04-02" } })
    const body = await problem(res, 500, "internal_error")
    const text = JSON.stringify(body)
    expect(text).not.toContain("secret internal detail")
    expect(text).not.toMatch(/at .*\.ts:\d+/)
    const logged = await waitForLog(server, (l) => l.level === "error" && l.request_id === body.request_id)
    expect(logged).toMatchObject({ msg: "plugin failed", plugin: "defect", code: "internal_error", error: "Error" })
    // The message keeps its words, loses the request's value and every number.
    expect(logged.message).toBe("cannot score patient «redacted» (score «redacted»); secret internal detail: /etc/hcc/key at line «redacted»")
    expect(logged.frames).toEqual(expect.arrayContaining([expect.stringMatching(/defect\.ts:\d+/)]))
    const everything = server.stdout()
    expect(everything).not.toContain("Jane Roe")
    expect(everything).not.toContain("1961-04-02")
    // One line: the failure is not logged a second time by the request guard.
    expect(server.logLines().filter((l) => l.level === "error" && l.request_id === body.request_id)).toHaveLength(1)
  })
})

describe("X-Request-Id", () => {
  it("echoes a valid caller id and replaces an invalid one", async () => {
    const mine = await call(server, "/v1/catalog", { headers: { "x-request-id": "trace-123.abc" } })
    expect(mine.headers.get("x-request-id")).toBe("trace-123.abc")
    const bad = await call(server, "/v1/catalog", { headers: { "x-request-id": "no spaces allowed" } })
    expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })
  it("is on every kind of response", async () => {
    for (const res of [
      await call(server, "/healthz", { token: null }),
      await call(server, "/v1/openapi.json", { token: null }),
      await call(server, "/docs", { token: null }),
      await call(server, "/v1/catalog"),
      await call(server, "/nope")
    ]) expect(res.headers.get("x-request-id")).toBeTruthy()
  })
})
})

describe("503 (shutdown)", () => {
  it("unavailable for a request still running when the shutdown grace runs out", async () => {
    const s = await startServer({ env: { HCC_PLUGINS: fixturePlugin("slow-echo"), HCC_SHUTDOWN_GRACE_SECONDS: "1" } })
    const pending = call(s, "/v1/slow-echo", { body: { tag: "late", ms: 10_000 } })
    await waitForLog(s, (l) => l.msg === "slow-echo waiting")
    const exit = s.stop("SIGTERM")
    const res = await pending
    expect(res.status).toBe(503)
    expect(await exit).toBe(0)
  })
})
