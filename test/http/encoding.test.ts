/**
 * Compression by Accept-Encoding (br preferred, gzip, none) for bodies over 1 KiB, and ETag /
 * Cache-Control / 304 on the catalog, the OpenAPI document and /docs — over raw HTTP, so the bytes
 * on the wire are what is checked.
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { request as httpRequest } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ANSWER_CHUNK_BYTES, encodeResponse } from "../../src/http/Encoding.ts"
import { startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
  await waitReady(server)
})
afterAll(async () => {
  await server.stop()
})

/** A GET with the given headers; the raw (still encoded) body. */
const get = (path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: Number(new URL(server.url).port), path, method: "GET", headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on("error", reject)
    req.end()
  })

const auth = () => ({ authorization: `Bearer ${server.demoToken}` })

describe("compression", () => {
  it("br when accepted (preferred over gzip), gzip when only it is, identity otherwise; the same bytes once decoded", async () => {
    const plain = await get("/docs")
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(plain.body.byteLength).toBeGreaterThan(1_000_000)
    const br = await get("/docs", { "accept-encoding": "gzip, deflate, br" })
    expect(br.headers["content-encoding"]).toBe("br")
    expect(br.headers.vary).toContain("Accept-Encoding")
    expect(Number(br.headers["content-length"])).toBe(br.body.byteLength)
    expect(br.body.byteLength).toBeLessThan(plain.body.byteLength / 3)
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true)
    const gzip = await get("/v1/openapi.json", { "accept-encoding": "gzip" })
    expect(gzip.headers["content-encoding"]).toBe("gzip")
    expect(JSON.parse(gunzipSync(gzip.body).toString("utf8")).openapi).toMatch(/^3\.1/)
    const refused = await get("/v1/openapi.json", { "accept-encoding": "br;q=0, gzip;q=0" })
    expect(refused.headers["content-encoding"]).toBeUndefined()
  })

  it("an authenticated answer over 1 KiB is compressed too; a small one is not", async () => {
    const catalog = await get("/v1/catalog", { ...auth(), "accept-encoding": "gzip" })
    expect(catalog.status).toBe(200)
    expect(catalog.headers["content-encoding"]).toBe("gzip")
    expect(JSON.parse(gunzipSync(catalog.body).toString("utf8")).domains.length).toBeGreaterThan(0)
    const health = await get("/healthz", { "accept-encoding": "br, gzip" })
    expect(health.headers["content-encoding"]).toBeUndefined()
    expect(JSON.parse(health.body.toString("utf8")).status).toBeDefined()
  })
})

describe("ETag and 304", () => {
  it.each([
    ["/v1/openapi.json", "public, max-age=300", false],
    ["/docs", "public, max-age=300", false],
    ["/v1/catalog", "private, no-cache", true]
  ])("%s: a strong ETag and %s; If-None-Match with it is 304 without a body", async (path, cacheControl, withToken) => {
    const headers = withToken ? auth() : {}
    const first = await get(path, headers)
    const etag = String(first.headers.etag)
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{20,}"$/)
    expect(first.headers["cache-control"]).toBe(cacheControl)
    const again = await get(path, { ...headers, "if-none-match": etag })
    expect(again.status).toBe(304)
    expect(again.body.byteLength).toBe(0)
    expect(again.headers.etag).toBe(etag)
    const stale = await get(path, { ...headers, "if-none-match": '"something-else"' })
    expect(stale.status).toBe(200)
    expect(stale.body.equals(first.body)).toBe(true)
  })
})

describe("a per-request answer's compressed bytes", () => {
  // Answers the size of cold population and clinical answers (1.6-1.8 KB), and one of many pieces.
  const answer = (n: number, salt: number) => JSON.stringify({ months: Array.from({ length: n }, (_, i) => ({ month: `2026-${i}`, mean: (i + salt) / 7, n: i * 13 })), hcc_cost: 2 })
  const decoders = { gzip: gunzipSync, br: brotliDecompressSync } as const
  const encode = (text: string, coding: "gzip" | "br") => {
    const encoded = encodeResponse(HttpServerResponse.text(text, { contentType: "application/json" }), { method: "POST", path: "/v1/population", headers: { "accept-encoding": coding } })
    expect(encoded.headers["content-encoding"]).toBe(coding)
    const body = encoded.body as { readonly _tag: string; readonly body: Uint8Array }
    expect(body._tag).toBe("Uint8Array")
    return body.body
  }

  it.each(["gzip", "br"] as const)("%s: 32 small answers take a few KiB each of Node's shared buffer pool, not zlib's 16 KiB piece each", (coding) => {
    // Each answer's bytes are a slice of the pool slab zlib wrote them into. With zlib's 16 KiB
    // pieces, 32 answers fill 11-12 slabs of 64 KiB (3-4 with ANSWER_CHUNK_BYTES), which V8 counts
    // as external memory until a GC.
    // (Decoded only afterwards: decoding takes pool space too.)
    const texts = Array.from({ length: 32 }, (_, i) => answer(40, i))
    const bytes = texts.map((text) => encode(text, coding))
    expect(Buffer.poolSize).toBeGreaterThanOrEqual(32 * ANSWER_CHUNK_BYTES)
    expect(new Set(bytes.map((b) => b.buffer)).size).toBeLessThanOrEqual(5)
    bytes.forEach((b, i) => expect(decoders[coding](b).toString("utf8")).toBe(texts[i]))
  })

  it.each(["gzip", "br"] as const)("%s: an answer larger than one piece is joined whole", (coding) => {
    const text = answer(4000, 1)
    const bytes = encode(text, coding)
    expect(bytes.byteLength).toBeGreaterThan(ANSWER_CHUNK_BYTES)
    expect(decoders[coding](bytes).toString("utf8")).toBe(text)
  })
})
