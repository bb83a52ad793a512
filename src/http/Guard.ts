/**
 * The outermost wrapper of every request (a global router middleware, so it sees every route,
 * unmatched paths included, and its response is the one sent):
 * request id, 404 / 405 with `Allow`, the early 413, the body-size limit, problem+json for every
 * failure that escapes the routes (defects become a 500 without internals), `X-Request-Id` on
 * every response, and one JSON log line per request.
 */
import { ByteSize, Cause, Clock, Context, Effect, Layer, Tracer, type Types } from "effect"
import { HttpBody, HttpRouter, HttpServerError, HttpServerRequest, HttpServerRespondable, HttpServerResponse } from "effect/http"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { randomFillSync, randomUUID } from "node:crypto"
import { MAX_BODY_BYTES } from "./DomainHandlers.ts"
import { STATUS_TITLES } from "./errorCatalog.ts"
import { InternalError, MethodNotAllowed, NotFound, PayloadTooLarge, Unavailable } from "./Problems.ts"
import { ProbeLogEnabled, RequestLogEnabled } from "../log/JsonLogger.ts"
import { writeLine } from "../log/LogSink.ts"
import { Metering, rateLimitHeaders } from "../metering/Metering.ts"
import { attachRequestInfo, type RequestInfo } from "./RequestContext.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { encodeResponse } from "./Encoding.ts"
import { isDraining } from "./NodeServer.ts"
import { problemType } from "./Guides.ts"
import { corsHeaders, optionsResponse, securityHeaders } from "./Hygiene.ts"
import { recordRequest } from "../observability/Metrics.ts"

/**
 * A problem answer's `type` points at its code's entry in the errors guide (`/docs/errors#<code>`,
 * a URI reference resolved against the request's URI, RFC 9457 §3.1.1); the problem classes build
 * it as about:blank, which links nowhere.
 */
const withProblemType = (res: HttpServerResponse.HttpServerResponse): {
  readonly res: HttpServerResponse.HttpServerResponse
  readonly code: string | undefined
  /** Which limit refused a 429 (daily or burst), for the metrics. */
  readonly limit: string | undefined
} => {
  if (res.body._tag !== "Uint8Array" || !(res.headers["content-type"] ?? "").startsWith(PROBLEM_JSON)) return { res, code: undefined, limit: undefined }
  const problem = JSON.parse(res.body.text ?? new TextDecoder().decode(res.body.body)) as Record<string, unknown>
  const code = typeof problem.code === "string" ? problem.code : undefined
  const limit = typeof problem.limit === "string" ? problem.limit : undefined
  if (problem.type !== "about:blank" || code === undefined) return { res, code, limit }
  return { res: HttpServerResponse.setBody(res, HttpBody.text(JSON.stringify({ ...problem, type: problemType(code) }), PROBLEM_JSON)), code, limit }
}

/** Probe paths: their log lines only at debug level (a probe every few seconds would fill the log). */
const PROBES = new Set(["/healthz", "/readyz"])

/**
 * The W3C trace context of a request: a valid incoming `traceparent` keeps its trace id and flags,
 * anything else starts a new trace. The answer's `traceparent` carries the trace id with this
 * server's own span id; the log line carries the trace id.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * Random ids as hex, from a pool of cryptographically random bytes refilled 4 KiB at a time: one
 * `randomFillSync` per ~170 requests instead of two per request (those two were ~7 % of the request
 * path's CPU in a profile of bench:http). Never all zeros (W3C trace context forbids it).
 */
const RANDOM_POOL = Buffer.alloc(4096)
let randomAt = RANDOM_POOL.length
export const randomHex = (bytes: number): string => {
  for (;;) {
    if (randomAt + bytes > RANDOM_POOL.length) {
      randomFillSync(RANDOM_POOL)
      randomAt = 0
    }
    const hex = RANDOM_POOL.toString("hex", randomAt, randomAt + bytes)
    randomAt += bytes
    if (!/^0+$/.test(hex)) return hex
  }
}
export const traceOf = (header: string | undefined): { readonly traceId: string; readonly flags: string } => {
  const m = header === undefined ? null : TRACEPARENT.exec(header.trim())
  if (m !== null && !/^0+$/.test(m[1]!) && !/^0+$/.test(m[2]!)) return { traceId: m[1]!, flags: m[3]! }
  return { traceId: randomHex(16), flags: "01" }
}

/** Path of the docs page (its own Content-Security-Policy). */
const DOCS_PATH = "/docs"

const PROBLEM_JSON = "application/problem+json"
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The body limit for every request, as a server-wide setting (give to the server's layer). */
export const MaxBodyLive = Layer.succeed(HttpServerRequest.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))

/** Path → allowed methods, for 404 and 405 (every route of this service is a static path). */
export type RouteTable = ReadonlyMap<string, ReadonlyArray<string>>

/** The route table of an API plus extra routes served beside it (OpenAPI document, docs page). */
export const routeTable = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>, extra: ReadonlyArray<readonly [string, string]>): RouteTable => {
  const table = new Map<string, Array<string>>()
  const add = (method: string, path: string) => {
    const list = table.get(path) ?? []
    if (!list.includes(method)) list.push(method)
    table.set(path, list)
  }
  HttpApi.reflect(api, { onGroup: () => {}, onEndpoint: ({ endpoint }) => add(endpoint.method, endpoint.path) })
  for (const [method, path] of extra) add(method, path)
  return table
}

/** Renders a problem instance to its response. */
const render = (problem: HttpServerRespondable.Respondable): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  HttpServerRespondable.toResponse(problem)

/** Turns a response that is an error but not yet a problem (e.g. a framework default) into one. */
const ensureProblem = (res: HttpServerResponse.HttpServerResponse, info: RequestInfo) =>
  res.status < 400 || (res.headers["content-type"] ?? "").startsWith(PROBLEM_JSON)
    ? Effect.succeed(res)
    : Effect.succeed(HttpServerResponse.jsonUnsafe({
      type: "about:blank",
      title: STATUS_TITLES[res.status] ?? "Error",
      status: res.status,
      detail: STATUS_TITLES[res.status] ?? "Error",
      code: res.status === 415 ? "unsupported_media_type" : res.status === 413 ? "payload_too_large" : res.status >= 500 ? "internal_error" : "invalid_request",
      request_id: info.requestId,
      hcc_cost: 0
    }, { status: res.status, contentType: PROBLEM_JSON, headers: res.headers }))

/** The response for a failure that escaped the routes. */
const fromCause = (cause: Cause.Cause<unknown>, info: RequestInfo) =>
  Effect.gen(function*() {
    const common = { request_id: info.requestId, hcc_cost: 0 as const }
    const err = Cause.findErrorOption(cause)
    if (err._tag === "Some" && HttpServerError.isHttpServerError(err.value)) {
      const reason = err.value.reason
      if (reason._tag === "RequestParseError" && reason.reason === "BodyTooLarge") {
        return yield* render(new PayloadTooLarge({ ...common, code: "payload_too_large", detail: `The body exceeds ${MAX_BODY_BYTES} bytes.`, limit_bytes: MAX_BODY_BYTES }))
      }
    }
    if (Cause.hasInterruptsOnly(cause)) {
      return yield* render(new Unavailable({ ...common, code: "unavailable", detail: "The service is shutting down; retry shortly." }))
    }
    yield* Effect.logError("request failed", cause).pipe(Effect.annotateLogs({ request_id: info.requestId }))
    return yield* render(new InternalError({ ...common, code: "internal_error", detail: "An internal error occurred; it has been logged under this request id." }))
  })

/** The guard for a route table, as a global router middleware (it also sees unmatched routes). */
export const guardLayer = (routes: RouteTable) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const metering = yield* Metering
      const logRequests = yield* RequestLogEnabled
      const logProbes = yield* ProbeLogEnabled
      const config = yield* AppConfig
      return makeGuard(routes, metering, logRequests, config.corsOrigins, logProbes)
    }),
    { global: true }
  )

/** The RateLimit headers for an authenticated caller: what this process decided for its request. */
const rateLimit = (metering: Metering["Service"], info: RequestInfo): Record<string, string> => {
  if (info.principal === undefined) return {}
  const h = rateLimitHeaders(metering.snapshotAt(info.principal))
  return { "ratelimit-policy": h.policy, ratelimit: h.current }
}

/** What the guard keeps of one request between its start and its answer. */
export interface GuardedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly info: RequestInfo
  readonly trace: { readonly traceId: string; readonly spanId: string; readonly flags: string }
  /** Wall-clock nanoseconds when it arrived. */
  readonly started: bigint
}

/**
 * The guard's work before and after a request as plain functions, shared by the Effect HTTP path
 * (the middleware below) and the fast lane (FastLane.ts): `start` gives the request its id and
 * trace, `finish` gives the answer every header the guard adds, its problem `type`, ETag and
 * compression, and records the metrics and the log line.
 */
export const makeRequestGuard = (routes: RouteTable, metering: Metering["Service"], logRequests: boolean, corsOrigins: ReadonlyArray<string> = [], logProbes = false) => {
  const start = (
    req: { readonly method: string; readonly url: string; readonly headers: Readonly<Record<string, string | undefined>> },
    started: bigint,
    span: Tracer.AnySpan | undefined
  ): GuardedRequest => {
    const offered = req.headers["x-request-id"]
    const info: RequestInfo = {
      requestId: offered !== undefined && REQUEST_ID.test(offered) ? offered : randomUUID(),
      principal: undefined
    }
    // With OpenTelemetry export on, the request's server span (parented by an incoming
    // traceparent) is the trace; otherwise the header's trace id is kept, or a new one started.
    const trace = span?._tag === "Span"
      ? { traceId: span.traceId, spanId: span.spanId, flags: span.sampled ? "01" : "00" }
      : { ...traceOf(req.headers["traceparent"]), spanId: randomHex(8) }
    return { method: req.method, path: req.url.split("?", 1)[0]!, headers: req.headers, info, trace, started }
  }

  const finish = (g: GuardedRequest, response: HttpServerResponse.HttpServerResponse, finished: bigint): HttpServerResponse.HttpServerResponse => {
    const { info, path, trace } = g
    const authenticated = info.principal !== undefined || g.headers["authorization"] !== undefined
    // Every header of the guard in one copy of the response's headers (this runs on every request).
    const headers: Record<string, string> = {
      "x-request-id": info.requestId,
      ...rateLimit(metering, info),
      ...securityHeaders(response, path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`) ? path : undefined, authenticated),
      ...corsHeaders(response, g.headers["origin"], corsOrigins),
      traceparent: `00-${trace.traceId}-${trace.spanId}-${trace.flags}`,
      ...info.responseHeaders,
      // Shutting down: every answer closes its connection, whenever its request arrived.
      ...(isDraining() ? { connection: "close" } : {})
    }
    const typed = withProblemType(HttpServerResponse.setHeaders(response, headers))
    const res = encodeResponse(typed.res, g)
    recordRequest(routes.has(path) ? path : "unmatched", g.method, res.status, Number(finished - g.started) / 1e9, info.hccCost ?? 0, typed.limit)
    if (logRequests && (logProbes || !PROBES.has(path))) {
      writeLine(JSON.stringify({
        time: new Date(Number(finished / 1_000_000n)).toISOString(),
        level: "info",
        msg: "request",
        method: g.method,
        path,
        status: res.status,
        duration_ms: Math.round(Number(finished - g.started) / 1000) / 1000,
        request_id: info.requestId,
        trace_id: trace.traceId,
        account_id: info.principal?.account.id ?? null,
        token_id: info.principal?.tokenId ?? null,
        code: typed.code ?? null,
        hcc_cost: info.hccCost ?? 0,
        // Which process answered, when several serve one port (--workers) or one database.
        pid: process.pid
      }))
    }
    return res
  }

  /** The answer for a request that ended in a failure: a problem it raised, else what escaped (fromCause). */
  const failed = (cause: Cause.Cause<unknown>, info: RequestInfo): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const err = Cause.findErrorOption(cause)
    return err._tag === "Some" && HttpServerRespondable.isRespondable(err.value) && !HttpServerError.isHttpServerError(err.value)
      ? render(err.value)
      : fromCause(cause, info)
  }

  return { start, finish, failed, ensureProblem }
}

/** The 413 for a request that announces a body over the limit: refused before a byte of it is read. */
export const announcedOversize = (g: GuardedRequest): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined =>
  Number(g.headers["content-length"] ?? "0") > MAX_BODY_BYTES
    ? render(new PayloadTooLarge({ request_id: g.info.requestId, hcc_cost: 0, code: "payload_too_large", detail: `The body exceeds ${MAX_BODY_BYTES} bytes.`, limit_bytes: MAX_BODY_BYTES }))
    : undefined

/** Builds the guard function. Written with plain flatMaps: it runs on every request. */
export const makeGuard = (routes: RouteTable, metering: Metering["Service"], logRequests: boolean, corsOrigins: ReadonlyArray<string> = [], logProbes = false) => {
  const guard = makeRequestGuard(routes, metering, logRequests, corsOrigins, logProbes)
  return (
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest> =>
    Effect.withFiber((fiber) => {
      const req = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const clock = fiber.getRef(Clock.Clock)
      const g = guard.start(req, clock.currentTimeNanosUnsafe(), Context.getOrUndefined(fiber.context, Tracer.ParentSpan))
      const { info, path } = g
      attachRequestInfo(req, info)
      const finish = (response: HttpServerResponse.HttpServerResponse) => guard.finish(g, response, clock.currentTimeNanosUnsafe())
      const common = { request_id: info.requestId, hcc_cost: 0 as const }
      const allowed = routes.get(path)
      if (allowed === undefined) {
        return Effect.map(render(new NotFound({ ...common, code: "not_found", detail: `No endpoint at ${path}; see /docs or GET /v1/catalog.` })), finish)
      }
      if (req.method === "OPTIONS") return Effect.succeed(finish(optionsResponse(allowed, req.headers["origin"], corsOrigins)))
      if (!allowed.includes(req.method) && !(req.method === "HEAD" && allowed.includes("GET"))) {
        const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : []), "OPTIONS"]
        return Effect.map(
          render(new MethodNotAllowed({ ...common, code: "method_not_allowed", allow, detail: `${path} accepts ${allow.join(", ")}, not ${req.method}.` })),
          (res) => finish(HttpServerResponse.setHeader(res, "allow", allow.join(", ")))
        )
      }
      const oversize = announcedOversize(g)
      if (oversize !== undefined) return Effect.map(oversize, finish)
      return Effect.matchCauseEffect(app, {
        onSuccess: (res) => Effect.map(ensureProblem(res, info), finish),
        onFailure: (cause) => Effect.map(fromCause(cause, info), finish)
      })
    })
  }
