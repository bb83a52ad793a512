/**
 * Compression and validation caching of answers (docs/api.md, "Compression and caching"):
 * - a body over 1 KiB is sent with `Content-Encoding: br` or `gzip` when the request's
 *   `Accept-Encoding` allows it (br preferred), with `Vary: Accept-Encoding`;
 * - the catalog, the OpenAPI document, the /docs pages and the explorer's assets carry a strong `ETag` and a
 *   `Cache-Control`, and `If-None-Match` with that tag is answered 304 without a body.
 * The static bodies (served as the same bytes every time) keep their tag and compressed forms
 * beside them, so each is hashed and compressed once per process.
 */
import * as HttpBody from "effect/http/HttpBody"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash } from "node:crypto"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { EXPLORE_ASSETS, EXPLORE_PATH } from "./Explorer.ts"
import { GUIDES, guidePath } from "./Guides.ts"

/** Bodies smaller than this go as they are. */
export const COMPRESS_MIN_BYTES = 1024

/** The paths whose GET answers carry an ETag, and their Cache-Control. */
export const CACHEABLE: ReadonlyMap<string, string> = new Map([
  // Authenticated: the client may keep it but must ask each time (a 304 costs no body).
  ["/v1/catalog", "private, no-cache"],
  ["/v1/openapi.json", "public, max-age=300"],
  ["/docs", "public, max-age=300"],
  ...GUIDES.map((g) => [guidePath(g.page), "public, max-age=300"] as const),
  // The explorer and its bundle: kept, asked again after five minutes (a rebuild changes the tag).
  [EXPLORE_PATH, "public, max-age=300"],
  ...EXPLORE_ASSETS.map(([path]) => [path, "public, max-age=300"] as const)
])

interface Derived {
  etag?: string
  br?: Uint8Array
  gzip?: Uint8Array
}
const derivedOf = new WeakMap<Uint8Array, Derived>()
/** Static bodies built from a kept string each time (the catalog): keyed by that string; a handful at most. */
const derivedOfText = new Map<string, Derived>()
/** What is kept for a body: by its text when it has one (reading `body` would encode it), else by its bytes. */
const derived = (body: HttpBody.Uint8Array): Derived => {
  const text = body.text
  if (text !== undefined) {
    let d = derivedOfText.get(text)
    if (d === undefined) {
      if (derivedOfText.size >= 16) derivedOfText.clear()
      derivedOfText.set(text, d = {})
    }
    return d
  }
  let d = derivedOf.get(body.body)
  if (d === undefined) derivedOf.set(body.body, d = {})
  return d
}

const etagOf = (body: HttpBody.Uint8Array): string =>
  (derived(body).etag ??= `"${createHash("sha256").update(body.body).digest("base64url").slice(0, 27)}"`)

/** The coding the client accepts that we prefer: br, else gzip, else none (q=0 refuses). */
export const negotiate = (acceptEncoding: string | undefined): "br" | "gzip" | undefined => {
  if (acceptEncoding === undefined) return undefined
  const accepted = new Map<string, number>()
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined)
    accepted.set(name!, q === undefined ? 1 : Number(q))
  }
  const star = accepted.get("*")
  const weight = (coding: string) => accepted.get(coding) ?? star ?? 0
  if (weight("br") > 0 && weight("br") >= weight("gzip")) return "br"
  if (weight("gzip") > 0) return "gzip"
  return undefined
}

/**
 * The output piece zlib writes a per-request answer into. Node's default piece is 16 KiB, cut
 * from its shared 64 KiB buffer pool, for answers that compress to a few hundred bytes: under
 * load that uses up pool slabs quickly, which V8 counts as external memory until a GC frees them,
 * and makes V8 start full collections of the HTTP thread's heap. A 2 KiB piece takes what a small
 * answer needs; a larger answer takes several pieces, joined once.
 */
export const ANSWER_CHUNK_BYTES = 2048

const compress = (body: HttpBody.Uint8Array, coding: "br" | "gzip", cache: boolean): Uint8Array => {
  const d: Derived = cache ? derived(body) : {}
  const bytes = body.body
  // Static bodies (compressed once per process) keep zlib's default piece.
  const chunkSize = cache ? undefined : ANSWER_CHUNK_BYTES
  if (coding === "br") {
    // Static bodies once at the best ratio; per-request answers at a fast level.
    return (d.br ??= brotliCompressSync(bytes, {
      chunkSize,
      params: { [constants.BROTLI_PARAM_QUALITY]: cache ? 9 : 4, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength }
    }))
  }
  return (d.gzip ??= gzipSync(bytes, { level: cache ? 9 : 6, chunkSize }))
}

const addVary = (res: HttpServerResponse.HttpServerResponse, value: string) => {
  const current = res.headers["vary"]
  if (current !== undefined && current.toLowerCase().split(/\s*,\s*/).includes(value.toLowerCase())) return res
  return HttpServerResponse.setHeader(res, "vary", current === undefined ? value : `${current}, ${value}`)
}

/** ETag / 304 and compression for one answer. */
export const encodeResponse = (
  res: HttpServerResponse.HttpServerResponse,
  request: { readonly method: string; readonly path: string; readonly headers: Readonly<Record<string, string | undefined>> }
): HttpServerResponse.HttpServerResponse => {
  const body = res.body
  if (body._tag !== "Uint8Array" || res.headers["content-encoding"] !== undefined) return res
  // A text body is not encoded to bytes here unless it is hashed or compressed (its length is known).
  const cacheControl = res.status === 200 && (request.method === "GET" || request.method === "HEAD") ? CACHEABLE.get(request.path) : undefined
  let out = res
  if (cacheControl !== undefined) {
    const etag = etagOf(body)
    out = HttpServerResponse.setHeaders(out, { etag, "cache-control": cacheControl })
    const match = request.headers["if-none-match"]
    if (match !== undefined && (match.trim() === "*" || match.split(",").map((t) => t.trim().replace(/^W\//, "")).includes(etag))) {
      return HttpServerResponse.setBody(HttpServerResponse.setStatus(out, 304), HttpBody.empty)
    }
  }
  if (body.contentLength < COMPRESS_MIN_BYTES) return out
  out = addVary(out, "Accept-Encoding")
  const coding = negotiate(request.headers["accept-encoding"])
  if (coding === undefined) return out
  const compressed = compress(body, coding, cacheControl !== undefined)
  return HttpServerResponse.setHeader(HttpServerResponse.setBody(out, HttpBody.uint8Array(compressed, body.contentType)), "content-encoding", coding)
}
