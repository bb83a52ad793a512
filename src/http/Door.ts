/**
 * The one door every request comes through (docs/api.md, "How a request is answered"). At start
 * the HttpApi value is compiled into a route table: per path and method one pipeline — the
 * caller's bearer token and burst slot where the endpoint's group declares the `Authorization`
 * middleware, then the endpoint's implementation — beside the pages served next to the API
 * (OpenAPI document, docs page, guides). An endpoint of the API without an implementation stops
 * the start.
 *
 * The door is the server's `request` listener. Each request is one fiber: the guard's start (id,
 * trace), then the route's pipeline or the door's own answer (404; 405 with `Allow`; OPTIONS with
 * `Allow` and CORS grants; HEAD as GET without the body; a 413 for a body announced over the limit,
 * before a byte of it is read), then the guard's finish (headers, ETag and compression, metrics,
 * log line), written with one `writeHead` and one `end`. Only the route is interruptible: a caller
 * that hangs up stops it, and a request the shutdown stops is still answered (503). With
 * OpenTelemetry export on, each request runs inside the platform's server span (HttpMiddleware.tracer).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Principal } from "../auth/Accounts.ts"
import type { makeAuthorize } from "../auth/authorize.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { LogLineWriter, ProbeLogEnabled, RequestLogEnabled } from "../log/JsonLogger.ts"
import { Metering } from "../metering/Metering.ts"
import { otlpEnabled } from "../observability/Otel.ts"
import { Authorization } from "./ApiContract.ts"
import { answerProblem, makeRequestGuard } from "./Guard.ts"
import { optionsResponse } from "./Hygiene.ts"
import { isDraining, NodeServer } from "./NodeServer.ts"
import { BadRequest, MAX_BODY_BYTES, MethodNotAllowed, NotFound, type PayloadTooLarge, payloadTooLarge, PROBLEM_JSON, problemText } from "./Problems.ts"
import { CurrentRequestInfo, type RequestInfo } from "./RequestContext.ts"

/** What answers one endpoint: the request, its record, and the caller (for an endpoint behind `Authorization`). */
export type Answer<R> = (request: IncomingMessage, info: RequestInfo, principal: Principal) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>

/** Implementations by endpoint, keyed `<group>.<endpoint>` as the HttpApi names them. */
export type Implementations<R> = Readonly<Record<string, Answer<R>>>

/** A pipeline compiled for one route. */
export type Pipeline<R> = (request: IncomingMessage, info: RequestInfo) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>

/** Path → method → pipeline (every route of this service is a static path). */
export type RouteTable<R> = ReadonlyMap<string, ReadonlyMap<string, Pipeline<R>>>

/** The bearer credential of an `Authorization` header (RFC 9110 §11.1: scheme case-insensitive, then spaces), or "". */
export const bearerCredential = (header: string | undefined): string => {
  if (header === undefined || header.length <= 6 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== "bearer") return ""
  let at = 7
  while (header.charCodeAt(at) === 32) at++
  return header.slice(at)
}

/**
 * Compiles the route table of an API: each endpoint's implementation, behind the authorization its
 * group declares; then `pages`, served beside the API without a token; then `routes` of any method
 * that answer for themselves (the account portal's, behind its own session).
 */
export const compileRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint, R>(
  api: HttpApi.HttpApi<Id, Groups>,
  implementations: Implementations<R>,
  pages: ReadonlyArray<readonly [string, Effect.Effect<HttpServerResponse.HttpServerResponse>]>,
  authorize: ReturnType<typeof makeAuthorize>,
  routes: ReadonlyArray<readonly [method: string, path: string, Pipeline<R>]> = []
): RouteTable<R> => {
  const table = new Map<string, Map<string, Pipeline<R>>>()
  const add = (method: string, path: string, pipeline: Pipeline<R>) => {
    const methods = table.get(path) ?? new Map<string, Pipeline<R>>()
    if (methods.has(method)) throw new Error(`two routes for ${method} ${path}`)
    table.set(path, methods.set(method, pipeline))
  }
  const unimplemented: Array<string> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, middleware }) => {
      const name = `${group.identifier}.${endpoint.identifier}`
      const answer = implementations[name]
      if (answer === undefined) return void unimplemented.push(name)
      add(
        endpoint.method,
        endpoint.path,
        (middleware as ReadonlySet<unknown>).has(Authorization)
          ? (request, info) => Effect.flatMap(authorize(bearerCredential(request.headers.authorization)), (principal) => answer(request, info, principal))
          : (request, info) => answer(request, info, undefined as never)
      )
    }
  })
  if (unimplemented.length > 0) throw new Error(`endpoints without an implementation: ${unimplemented.join(", ")}`)
  for (const [path, page] of pages) add("GET", path, () => page)
  for (const [method, path, pipeline] of routes) add(method, path, pipeline)
  return table
}

/**
 * The whole body of a request as text, at most MAX_BODY_BYTES: a longer one fails with the 413
 * (and its connection closes after the answer rather than reading the rest).
 */
export const readBody = (req: IncomingMessage, info: RequestInfo): Effect.Effect<string, PayloadTooLarge | BadRequest> =>
  Effect.callback<string, PayloadTooLarge | BadRequest>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk)
      stop()
      ;(info.responseHeaders ??= {})["connection"] = "close"
      resume(Effect.fail(payloadTooLarge(info.requestId)))
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks, size).toString("utf8")))
    }
    const onError = () => {
      stop()
      resume(Effect.fail(new BadRequest({ code: "malformed_json", detail: "The request body could not be read.", request_id: info.requestId, hcc_cost: 0 })))
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    return Effect.sync(stop)
  })

/** Bodies at least this long are written as bytes (kept on a reused response, e.g. the catalog's), shorter ones as text. */
const BYTES_FROM = 1024

/**
 * Writes an answer: one `writeHead`, one `end` (a refusal given before the request's body was read
 * writes its bytes first and ends once the body is drained). A short text body leaves in one write
 * with the headers; a longer body is written as its bytes, so a body served again and again (the
 * catalog, compressed forms) is never encoded again. HEAD, 204 and 304 carry no body.
 */
export const writeAnswer = (req: IncomingMessage, res: ServerResponse, response: HttpServerResponse.HttpServerResponse, requestId: string): void => {
  if (res.destroyed || res.writableEnded) return
  try {
    res.writeHead(response.status, response.headers)
  } catch {
    // Node refused a header (a value it cannot send, e.g. from a dataset's description).
    return writeInternalError(res, requestId)
  }
  const body = response.body
  const payload = req.method === "HEAD" || HttpServerResponse.omitsBody(response) || body._tag !== "Uint8Array"
    ? undefined
    : body.text !== undefined && body.contentLength < BYTES_FROM
    ? body.text
    : body.body
  if (req.complete || response.headers["connection"] === "close") {
    res.end(payload)
    return
  }
  // An answer given before the body was read (a refusal): its bytes leave now, the rest of the body
  // is read and dropped, and only then does the answer end. Node closes a connection whose client
  // asked for that (`Connection: close`, as Python's urllib always does) as soon as the answer
  // ends; closing while the body still arrives resets the connection, and a client still sending
  // would see the reset instead of the answer.
  if (payload !== undefined) res.write(payload)
  req.once("close", () => res.end())
  req.resume()
}

/** The 500 the door writes itself, when no answer of the guard can be sent: no internals, the request id. */
const writeInternalError = (res: ServerResponse, requestId: string): void => {
  if (res.destroyed || res.writableEnded) return
  const problem = problemText(500, "internal_error", "An internal error occurred; it has been logged under this request id.", requestId)
  if (!res.headersSent) {
    res.writeHead(500, { "content-type": PROBLEM_JSON, "content-length": Buffer.byteLength(problem), "x-request-id": requestId, "x-content-type-options": "nosniff", "cache-control": "no-store" })
  }
  res.end(problem)
}

/** The largest announced body over the limit that is still read (and dropped) after its 413. */
const DISCARD_MAX_BYTES = 16 * MAX_BODY_BYTES

/** Wall-clock nanoseconds. */
const nowNanos = (): bigint => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6))

/** The methods a path answers, as `Allow` lists them (HEAD with GET; OPTIONS always). */
const allowOf = (methods: ReadonlyMap<string, unknown>): Array<string> => [...methods.keys(), ...(methods.has("GET") ? ["HEAD"] : []), "OPTIONS"]

/**
 * Serves a route table on the process's Node server: the door becomes its `request` listener; when
 * the server stops, it stops listening, waits (within the shutdown grace) for the requests it is
 * answering, then interrupts the rest, which are answered 503.
 */
export const doorLayer = <R>(routes: RouteTable<R>) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* NodeServer
    const config = yield* AppConfig
    const guard = makeRequestGuard(new Set(routes.keys()), yield* Metering, {
      logRequests: yield* RequestLogEnabled,
      logProbes: yield* ProbeLogEnabled,
      corsOrigins: config.corsOrigins,
      draining: () => isDraining(server),
      writeLine: yield* LogLineWriter
    })
    // A coordinator serves only its network's endpoints; a domain path says where they are.
    const notFoundDetail = (path: string) =>
      config.network !== undefined && path.startsWith("/v1/") && !path.startsWith("/v1/network/")
        ? `No endpoint at ${path}: this service coordinates a network of sites and holds no patient data; its questions are under /v1/network/ (GET /v1/catalog lists them).`
        : `No endpoint at ${path}; see /docs or GET /v1/catalog.`
    const allowed = new Map([...routes].map(([path, methods]) => [path, allowOf(methods)] as const))
    const traced = otlpEnabled(process.env)
    const context = yield* Effect.context<R>()

    /**
     * The answer to one request, written by `write` (never fails: a failure is its problem answer).
     * The write is inside the uninterruptible region, so an interrupted route is still answered.
     */
    const answer = (req: IncomingMessage, span: Tracer.AnySpan | undefined, write: (response: HttpServerResponse.HttpServerResponse) => void) => {
      const g = guard.start({ method: req.method!, url: req.url ?? "/", headers: req.headers as Record<string, string | undefined> }, nowNanos(), span)
      const { info, path } = g
      const finish = (response: HttpServerResponse.HttpServerResponse) => {
        const finished = guard.finish(g, response, nowNanos())
        write(finished)
        return finished
      }
      const common = { request_id: info.requestId, hcc_cost: 0 as const }
      const methods = routes.get(path)
      const immediate = (response: HttpServerResponse.HttpServerResponse) => ({ g, answer: Effect.sync(() => finish(response)) })
      if (methods === undefined) {
        return immediate(answerProblem(new NotFound({ ...common, code: "not_found", detail: notFoundDetail(path) }), info))
      }
      const pipeline = methods.get(req.method!) ?? (req.method === "HEAD" ? methods.get("GET") : undefined)
      if (pipeline === undefined) {
        const allow = allowed.get(path)!
        // The account portal's routes are never shared with another origin (its session is a cookie).
        if (req.method === "OPTIONS") return immediate(optionsResponse(allow, req.headers.origin, path.startsWith("/portal") ? [] : config.corsOrigins))
        return immediate(answerProblem(
          new MethodNotAllowed({ ...common, code: "method_not_allowed", allow, detail: `${path} accepts ${allow.join(", ")}, not ${req.method}.` }),
          info,
          { allow: allow.join(", ") }
        ))
      }
      const announced = Number(req.headers["content-length"] ?? "0")
      if (announced > MAX_BODY_BYTES) {
        // Refused before a byte is read. A client that sends its whole body before reading the
        // answer must be able to, so a body up to DISCARD_MAX_BYTES is read and dropped after the
        // answer (the connection stays usable); a larger one closes the connection instead.
        if (announced > DISCARD_MAX_BYTES) (info.responseHeaders ??= {})["connection"] = "close"
        return immediate(answerProblem(payloadTooLarge(info.requestId), info))
      }
      return {
        g,
        answer: Effect.uninterruptibleMask((restore) =>
          Effect.map(
            Effect.matchCauseEffect(restore(pipeline(req, info)), {
              onSuccess: Effect.succeed,
              onFailure: (cause) => guard.failed(cause, info)
            }),
            finish
          )
        )
      }
    }

    const inflight = new Set<Fiber.Fiber<unknown, unknown>>()
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      let requestId = "unassigned"
      const written = (response: HttpServerResponse.HttpServerResponse) => writeAnswer(req, res, response, requestId)
      // A defect of the door itself: a 500 without internals rather than a request left hanging.
      const failed = () => Effect.sync(() => writeInternalError(res, requestId))
      let fiber: Fiber.Fiber<unknown, unknown>
      if (!traced) {
        // The request's record joins the context the fiber starts with (no copy of it per step).
        const a = answer(req, undefined, written)
        requestId = a.g.info.requestId
        fiber = Effect.runForkWith(Context.add(context, CurrentRequestInfo, a.g.info))(Effect.catchDefect(a.answer, failed))
      } else {
        // Inside the platform's server span, which needs the request as the platform describes it.
        const traceable = HttpServerRequest.fromWeb(new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { method: WEB_METHODS.has(req.method!) ? req.method! : "GET", headers: webHeaders(req) }))
        const run = HttpMiddleware.tracer(Effect.withFiber((fiber) => {
          const a = answer(req, Context.getOrUndefined(fiber.context, Tracer.ParentSpan), written)
          requestId = a.g.info.requestId
          return Effect.provideService(a.answer, CurrentRequestInfo, a.g.info)
        }))
        fiber = Effect.runForkWith(Context.add(context, HttpServerRequest.HttpServerRequest, traceable))(Effect.catchDefect(run, failed))
      }
      if (fiber.pollUnsafe() === undefined) {
        inflight.add(fiber)
        fiber.addObserver(() => inflight.delete(fiber))
        // A caller that hangs up stops its request (a reservation is released, nothing is charged).
        res.once("close", () => {
          if (!res.writableEnded) fiber.interruptUnsafe()
        })
      }
    }
    server.on("request", onRequest)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        // Stop listening first (requests on open connections are still served, NodeServer.ts), let
        // the requests in flight finish within the grace, then wait (within the grace again) for
        // the connections to close, so every answer has left before the process exits.
        const closed = new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))
        const grace = `${config.shutdownGraceSeconds} seconds` as const
        const answering = [...inflight]
        if (answering.length > 0) {
          const done = yield* Fiber.awaitAll(answering).pipe(Effect.timeoutOption(grace))
          if (done._tag === "None") yield* Fiber.interruptAll(answering)
        }
        yield* Effect.promise(() => closed).pipe(Effect.timeoutOption(grace))
      })
    )
  }))

/** The methods a web `Request` may carry (the span of any other is named as a GET's). */
const WEB_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"])

/** A request's headers for a web `Request` (the platform's span reads them); repeated ones joined. */
const webHeaders = (req: IncomingMessage): Array<[string, string]> => {
  const out: Array<[string, string]> = []
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":")) continue
    out.push([name, Array.isArray(value) ? value.join(", ") : value])
  }
  return out
}
