/**
 * Compression by Accept-Encoding (br preferred, gzip, none) for bodies over 1 KiB, and ETag /
 * Cache-Control / 304 on the catalog, the OpenAPI document and /docs — over raw HTTP, so the bytes
 * on the wire are what is checked.
 */
import { request as httpRequest } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
