/**
 * The outermost wrapper of every request (a global router middleware, so it sees every route,
 * unmatched paths included, and its response is the one sent):
 * request id, 404 / 405 with `Allow`, the early 413, the body-size limit, problem+json for every
 * failure that escapes the routes (defects become a 500 without internals), `X-Request-Id` on
 * every response, and one JSON log line per request.
 */
import { ByteSize, Cause, Clock, Effect, Exit, type Types } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerRespondable, HttpServerResponse } from "effect/http"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { randomUUID } from "node:crypto"
import { MAX_BODY_BYTES } from "./DomainHandlers.ts"
import { STATUS_TITLES } from "./errorCatalog.ts"
import { InternalError, MethodNotAllowed, NotFound, PayloadTooLarge, Unavailable } from "./Problems.ts"
import { RequestContext, type RequestInfo } from "./RequestContext.ts"

const PROBLEM_JSON = "application/problem+json"
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

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
export const guardLayer = (routes: RouteTable) => HttpRouter.middleware(makeGuard(routes), { global: true })

/** Builds the guard function for a route table. */
export const makeGuard = (routes: RouteTable) =>
(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>
): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const req = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeNanos
    const offered = req.headers["x-request-id"]
    const info: RequestInfo = {
      requestId: offered !== undefined && REQUEST_ID.test(offered) ? offered : randomUUID(),
      accountId: undefined
    }
    const path = req.url.split("?", 1)[0]!
    const common = { request_id: info.requestId, hcc_cost: 0 as const }
    const allowed = routes.get(path)
    const declared = Number(req.headers["content-length"] ?? "0")

    let res: HttpServerResponse.HttpServerResponse
    if (allowed === undefined) {
      res = yield* render(new NotFound({ ...common, code: "not_found", detail: `No endpoint at ${path}; see /docs or GET /v1/catalog.` }))
    } else if (!allowed.includes(req.method)) {
      res = HttpServerResponse.setHeader(
        yield* render(new MethodNotAllowed({ ...common, code: "method_not_allowed", allow: allowed, detail: `${path} accepts ${allowed.join(", ")}, not ${req.method}.` })),
        "allow",
        allowed.join(", ")
      )
    } else if (declared > MAX_BODY_BYTES) {
      // Refuse before reading a byte of an announced oversize body.
      res = yield* render(new PayloadTooLarge({ ...common, code: "payload_too_large", detail: `The body exceeds ${MAX_BODY_BYTES} bytes.`, limit_bytes: MAX_BODY_BYTES }))
    } else {
      const exit = yield* app.pipe(
        Effect.provideService(RequestContext, info),
        Effect.provideService(HttpServerRequest.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES)),
        Effect.exit
      )
      res = Exit.isSuccess(exit) ? yield* ensureProblem(exit.value, info) : yield* fromCause(exit.cause, info)
    }
    res = HttpServerResponse.setHeader(res, "x-request-id", info.requestId)
    const durationMs = Number((yield* Clock.currentTimeNanos) - started) / 1e6
    yield* Effect.logInfo("request").pipe(
      Effect.annotateLogs({
        method: req.method,
        path,
        status: res.status,
        duration_ms: Math.round(durationMs * 1000) / 1000,
        request_id: info.requestId,
        account_id: info.accountId ?? null
      })
    )
    return res
  })
