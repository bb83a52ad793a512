/**
 * The one door every request comes through (docs/api.md, "Requests"). At start the HttpApi value
 * is compiled into a route table: per path and method one pipeline — the caller's bearer token
 * and burst slot where the endpoint's group declares the `Authorization` middleware, then the
 * endpoint's implementation — beside the pages served next to the API (OpenAPI document, docs
 * page, guides). An endpoint of the API without an implementation stops the start.
 *
 * Each request is one fiber: the guard's start (id, trace), then the route's pipeline or the
 * door's own answer (404; 405 with `Allow`; OPTIONS with `Allow` and CORS grants; HEAD as GET;
 * a 413 for an announced body over the limit, before a byte of it is read), then the guard's
 * finish (headers, ETag and compression, metrics, log line). Node's server hands the door its
 * requests (`HttpServer.serve`), makes the server span when OpenTelemetry export is on, and
 * interrupts the fiber of a request whose caller hangs up.
 */
import { ByteSize, Clock, Context, Effect, Layer, Tracer } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import type { Principal } from "../auth/Accounts.ts"
import { makeAuthorize } from "../auth/authorize.ts"
import { Accounts } from "../auth/Accounts.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { ProbeLogEnabled, RequestLogEnabled } from "../log/JsonLogger.ts"
import { Metering } from "../metering/Metering.ts"
import { Authorization } from "./Api.ts"
import { MAX_BODY_BYTES } from "./DomainHandlers.ts"
import { answerProblem, makeRequestGuard, payloadTooLarge } from "./Guard.ts"
import { optionsResponse } from "./Hygiene.ts"
import { MethodNotAllowed, NotFound } from "./Problems.ts"
import { attachRequestInfo, type RequestInfo } from "./RequestContext.ts"

/** The body limit for every request, as a server-wide setting (give to the server's layer). */
export const MaxBodyLive = Layer.succeed(HttpServerRequest.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))

/** What answers one endpoint: the request, its record, and the caller (for an endpoint behind `Authorization`). */
export type Answer<R> = (
  request: HttpServerRequest.HttpServerRequest,
  info: RequestInfo,
  principal: Principal
) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>

/** Implementations by endpoint, keyed `<group>.<endpoint>` as the HttpApi names them. */
export type Implementations<R> = Readonly<Record<string, Answer<R>>>

/** A pipeline compiled for one route. */
type Pipeline<R> = (request: HttpServerRequest.HttpServerRequest, info: RequestInfo) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>

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
 * group declares; then `pages`, served beside the API without a token.
 */
export const compileRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint, R>(
  api: HttpApi.HttpApi<Id, Groups>,
  implementations: Implementations<R>,
  pages: ReadonlyArray<readonly [string, Effect.Effect<HttpServerResponse.HttpServerResponse>]>,
  authorize: ReturnType<typeof makeAuthorize>
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
  return table
}

/** The methods a path answers, as `Allow` lists them (HEAD with GET; OPTIONS always). */
const allowOf = (methods: ReadonlyMap<string, unknown>): Array<string> => [...methods.keys(), ...(methods.has("GET") ? ["HEAD"] : []), "OPTIONS"]

/**
 * The door for a route table, as the app the HTTP server serves. Written with plain flatMaps: it
 * runs on every request.
 */
export const makeDoor = <R>(routes: RouteTable<R>) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const guard = makeRequestGuard(new Set(routes.keys()), yield* Metering, yield* RequestLogEnabled, config.corsOrigins, yield* ProbeLogEnabled)
    const allowed = new Map([...routes].map(([path, methods]) => [path, allowOf(methods)] as const))
    return Effect.withFiber((fiber) => {
      const req = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const clock = fiber.getRef(Clock.Clock)
      const g = guard.start(req, clock.currentTimeNanosUnsafe(), Context.getOrUndefined(fiber.context, Tracer.ParentSpan))
      const { info, path } = g
      attachRequestInfo(req, info)
      const finish = (response: HttpServerResponse.HttpServerResponse) => guard.finish(g, response, clock.currentTimeNanosUnsafe())
      const common = { request_id: info.requestId, hcc_cost: 0 as const }
      const methods = routes.get(path)
      if (methods === undefined) {
        return Effect.succeed(finish(answerProblem(new NotFound({ ...common, code: "not_found", detail: `No endpoint at ${path}; see /docs or GET /v1/catalog.` }), info)))
      }
      const pipeline = methods.get(req.method) ?? (req.method === "HEAD" ? methods.get("GET") : undefined)
      if (pipeline === undefined) {
        if (req.method === "OPTIONS") return Effect.succeed(finish(optionsResponse([...methods.keys()], req.headers["origin"], config.corsOrigins)))
        const allow = allowed.get(path)!
        return Effect.succeed(finish(answerProblem(
          new MethodNotAllowed({ ...common, code: "method_not_allowed", allow, detail: `${path} accepts ${allow.join(", ")}, not ${req.method}.` }),
          info,
          { allow: allow.join(", ") }
        )))
      }
      if (Number(req.headers["content-length"] ?? "0") > MAX_BODY_BYTES) return Effect.succeed(finish(answerProblem(payloadTooLarge(info.requestId), info)))
      // The server runs each request uninterruptibly; only the route may be stopped (its caller hung
      // up, or the shutdown's grace ran out), and the request is still answered (a 503 then).
      return Effect.matchCauseEffect(Effect.interruptible(pipeline(req, info)), {
        onSuccess: (response) => Effect.succeed(finish(response)),
        onFailure: (cause) => Effect.map(guard.failed(cause, info), finish)
      })
    })
  })
