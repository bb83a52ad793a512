/**
 * The guard: what the door (Door.ts) does for every request before and after its route, as plain
 * functions. `start` gives the request its id and trace; `finish` gives the answer every header
 * the service adds (request id, RateLimit, security and CORS headers, traceparent, `Connection:
 * close` while draining), its ETag and compression, and records the metrics and the log line;
 * `failed` turns whatever a route failed with into its problem answer (a defect becomes a 500
 * without internals, an interruption by the shutdown a 503).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { randomFillSync, randomUUID } from "node:crypto"
import { type AnyProblem, InternalError, isProblem, problemAnswer, Unavailable } from "./Problems.ts"
import { Metering, rateLimitHeaders } from "../metering/Metering.ts"
import type { RequestInfo } from "./RequestContext.ts"
import { encodeResponse } from "./Encoding.ts"
import { corsHeaders, securityHeaders } from "./Hygiene.ts"
import { recordRequest } from "../observability/Metrics.ts"

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
 * `randomFillSync` per ~170 requests instead of two per request (a visible share of the request
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
/** The account portal (its page states its own policy; nothing of it is shared with another origin). */
const PORTAL_PATH = "/portal"

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

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

/** The answer to a problem, with its code (and which limit refused a 429) kept for the log line and metrics. */
export const answerProblem = (problem: AnyProblem, info: RequestInfo, headers?: Record<string, string>): HttpServerResponse.HttpServerResponse => {
  info.problem = { code: problem.code, limit: problem.limit }
  return problemAnswer(problem, headers)
}

/** How a guard logs and what it asks of its server. */
export interface GuardOptions {
  /** Whether each answered request gets a log line (Info). */
  readonly logRequests: boolean
  /** Whether probe requests (/healthz, /readyz) get one too. */
  readonly logProbes?: boolean
  readonly corsOrigins?: ReadonlyArray<string>
  /** Whether the server is shutting down (every answer then closes its connection). */
  readonly draining: () => boolean
  /** Where request lines go (the server's log stream). */
  readonly writeLine: (line: string) => void
}

/**
 * The guard for a set of known paths (the rest are counted as `unmatched` in the metrics).
 */
export const makeRequestGuard = (known: ReadonlySet<string>, metering: Metering["Service"], options: GuardOptions) => {
  const { logRequests, logProbes = false, corsOrigins = [], draining, writeLine } = options
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
    const query = req.url.indexOf("?")
    return { method: req.method, path: query === -1 ? req.url : req.url.slice(0, query), headers: req.headers, info, trace, started }
  }

  const finish = (g: GuardedRequest, response: HttpServerResponse.HttpServerResponse, finished: bigint): HttpServerResponse.HttpServerResponse => {
    const { info, path, trace } = g
    const authenticated = info.principal !== undefined || g.headers["authorization"] !== undefined
    // Every header of the guard in one copy of the response's headers (this runs on every request).
    const headers: Record<string, string> = {
      "x-request-id": info.requestId,
      ...rateLimit(metering, info),
      ...securityHeaders(response, path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`) || path === PORTAL_PATH ? path : undefined, authenticated),
      // The portal is never shared with another origin (its session is a cookie).
      ...(path.startsWith(PORTAL_PATH) ? {} : corsHeaders(response, g.headers["origin"], corsOrigins)),
      traceparent: `00-${trace.traceId}-${trace.spanId}-${trace.flags}`,
      ...info.responseHeaders,
      // Shutting down: every answer closes its connection, whenever its request arrived.
      ...(draining() ? { connection: "close" } : {})
    }
    const res = encodeResponse(HttpServerResponse.setHeaders(response, headers), g)
    if (res.status === 429 && info.principal !== undefined) metering.refused(info.principal.account.id, path)
    const code = info.problem?.code
    recordRequest(known.has(path) ? path : "unmatched", g.method, res.status, Number(finished - g.started) / 1e9, info.hccCost ?? 0, info.problem?.limit)
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
        code: code ?? null,
        hcc_cost: info.hccCost ?? 0,
        // Which process answered, when several serve one port (--workers) or one database.
        pid: process.pid
      }))
    }
    return res
  }

  /**
   * The answer for a request that ended in a failure: the problem it raised; an interruption (the
   * shutdown) a 503; anything else a 500 without internals, logged under the request id.
   */
  const failed = (cause: Cause.Cause<unknown>, info: RequestInfo): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const common = { request_id: info.requestId, hcc_cost: 0 as const }
    const err = Cause.findErrorOption(cause)
    if (err._tag === "Some") {
      if (isProblem(err.value)) return Effect.succeed(answerProblem(err.value, info))
    }
    if (Cause.hasInterruptsOnly(cause)) {
      return Effect.succeed(answerProblem(new Unavailable({ ...common, code: "unavailable", detail: "The service is shutting down; retry shortly." }), info))
    }
    return Effect.as(
      Effect.logError("request failed", cause).pipe(Effect.annotateLogs({ request_id: info.requestId })),
      answerProblem(new InternalError({ ...common, code: "internal_error", detail: "An internal error occurred; it has been logged under this request id." }), info)
    )
  }

  return { start, finish, failed }
}
