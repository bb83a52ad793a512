/**
 * The fast lane: the hot routes — every plugin's charged POST, `GET /v1/catalog` and
 * `GET /healthz` — answered straight from Node's request event, without the Effect HTTP
 * router, the HttpApi layer or the platform's per-request machinery (a large share of a charged
 * call's CPU). Each request still runs as one Effect fiber over
 * the same code as the Effect path: the guard's start and finish (ids, headers, problem `type`,
 * ETag and compression, metrics, log line: `makeRequestGuard`), bearer authorization and the
 * burst slot (`makeAuthorize`), the charged call (`pluginCall`) and the catalog's answer
 * (`makeCatalogAnswer`). The answer is written with one `writeHead` and one `end`.
 *
 * What the lane does not take goes the Effect way, unchanged: other methods (HEAD, OPTIONS, …),
 * other paths, a body sent chunked or announced over {@link LANE_MAX_BODY_BYTES} (413s and
 * long uploads keep the platform's draining), `Expect: 100-continue`, and every request when
 * OpenTelemetry export is on (the platform makes the server spans).
 */
import { Context, Effect, Fiber, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Accounts, type Principal } from "../auth/Accounts.ts"
import { makeAuthorize } from "../auth/AuthorizationLive.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { ProbeLogEnabled, RequestLogEnabled } from "../log/JsonLogger.ts"
import { Metering } from "../metering/Metering.ts"
import { recordLaneRequest } from "../observability/Metrics.ts"
import { otlpEnabled } from "../observability/Otel.ts"
import type { InvokeServices } from "../plugin/invoke.ts"
import type { Plugin } from "../plugin/spec.ts"
import { callServices, pluginCall, type PluginRequest, unreadable } from "./DomainHandlers.ts"
import { STATUS_TITLES } from "./errorCatalog.ts"
import { makeRequestGuard, type RouteTable } from "./Guard.ts"
import { problemType } from "./Guides.ts"
import { ServerLane } from "./NodeServer.ts"
import { CurrentRequestInfo } from "./RequestContext.ts"

/** The largest announced body the lane reads itself; a bigger one (up to the 1 MiB limit) goes the Effect way. */
export const LANE_MAX_BODY_BYTES = 256 * 1024

/** Wall-clock nanoseconds (what the Effect path's clock gives the guard). */
const nowNanos = (): bigint => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6))

/** The bearer credential of an `Authorization` header (RFC 9110 §11.1: scheme case-insensitive, then spaces), or "". */
export const bearerCredential = (header: string | undefined): string => {
  if (header === undefined || header.length <= 6 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== "bearer") return ""
  let at = 7
  while (header.charCodeAt(at) === 32) at++
  return header.slice(at)
}

/**
 * The body of a lane request as text. Its length is announced and at most LANE_MAX_BODY_BYTES
 * (under the 1 MiB limit), and Node reads no more than the announced length.
 */
const bodyOf = (req: IncomingMessage): PluginRequest["body"] => (requestId) =>
  Effect.callback<string, ReturnType<typeof unreadable>>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks, size).toString("utf8")))
    }
    const onError = () => {
      stop()
      resume(Effect.fail(unreadable(requestId)))
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    return Effect.sync(stop)
  })

/** Bodies at least this long are written as bytes (kept on a reused response, e.g. the catalog's), shorter ones as text. */
const BYTES_FROM = 1024

/**
 * Writes an answer: one `writeHead`, one `end`. A short text body leaves in one write with the
 * headers; a longer body is written as its bytes, so a body served again and again (the catalog,
 * compressed forms) is never encoded again.
 */
export const writeAnswer = (req: IncomingMessage, res: ServerResponse, response: HttpServerResponse.HttpServerResponse, requestId: string): void => {
  if (res.destroyed || res.writableEnded) return
  try {
    res.writeHead(response.status, response.headers)
  } catch {
    // Node refused a header (a plugin's value it cannot send): a 500 without internals, as the router answers.
    const problem = JSON.stringify({ type: problemType("internal_error"), title: STATUS_TITLES[500], status: 500, detail: "An internal error occurred; it has been logged under this request id.", code: "internal_error", request_id: requestId, hcc_cost: 0 })
    res.writeHead(500, { "content-type": "application/problem+json", "content-length": Buffer.byteLength(problem), "x-request-id": requestId })
    res.end(problem)
    return
  }
  const body = response.body
  if (HttpServerResponse.omitsBody(response) || body._tag !== "Uint8Array") res.end()
  else res.end(body.text !== undefined && body.contentLength < BYTES_FROM ? body.text : body.body)
  // An early refusal leaves the body unread; Node reads and discards the rest (at most
  // LANE_MAX_BODY_BYTES) so the connection can carry the next request.
  if (!req.complete) req.resume()
}

/** Whether the lane takes this request (method, path and body aside, see the module's comment). */
const laneBody = (req: IncomingMessage): boolean => {
  if (req.headers["transfer-encoding"] !== undefined || req.headers["expect"] !== undefined) return false
  const length = req.headers["content-length"]
  return length === undefined || Number(length) <= LANE_MAX_BODY_BYTES
}

/**
 * Puts the lane's handler into the server's {@link ServerLane} for the routes of `plugins` and the
 * catalog; takes it out and waits for the requests it is answering when the server stops.
 */
export const fastLaneLayer = (routes: RouteTable, plugins: ReadonlyArray<Plugin>, catalogAnswer: Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const lane = yield* ServerLane
      const config = yield* AppConfig
      // Off by HCC_FAST_LANE=off; and with OpenTelemetry export on, the platform's server span is each request's trace.
      if (!config.fastLane || otlpEnabled(process.env)) return
      const metering = yield* Metering
      const guard = makeRequestGuard(routes, metering, yield* RequestLogEnabled, config.corsOrigins, yield* ProbeLogEnabled)
      const authorize = makeAuthorize(yield* Accounts, metering)
      const services = yield* callServices
      // Everything the plugins' handlers may need, as the Effect path's routes have it.
      const context = yield* Effect.context<InvokeServices>()

      type Route = (req: IncomingMessage) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, InvokeServices>
      const authorized = (answer: (req: IncomingMessage, principal: Principal) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, InvokeServices>): Route => (req) =>
        Effect.flatMap(authorize(bearerCredential(req.headers.authorization)), (principal) => answer(req, principal))
      const posts = new Map<string, Route>(plugins.map((plugin) => {
        const call = pluginCall(plugin, services)
        return [plugin.path, authorized((req, principal) => call({ headers: req.headers as PluginRequest["headers"], body: bodyOf(req) }, principal))] as const
      }))
      const healthz = Effect.succeed(HttpServerResponse.text(JSON.stringify({ status: "ok", hcc_cost: 0 }), { contentType: "application/json" }))
      const gets = new Map<string, Route>([["/v1/catalog", authorized(() => catalogAnswer)], ["/healthz", () => healthz]])

      const inflight = new Set<Fiber.Fiber<void>>()
      lane.handler = (req, res) => {
        const url = req.url ?? "/"
        const query = url.indexOf("?")
        const path = query === -1 ? url : url.slice(0, query)
        const route = req.method === "POST" ? posts.get(path) : req.method === "GET" ? gets.get(path) : undefined
        if (route === undefined || !laneBody(req)) return false
        recordLaneRequest()
        const g = guard.start({ method: req.method!, url, headers: req.headers as Record<string, string | undefined> }, nowNanos(), undefined)
        // Only the route is interruptible: a request stopped by the shutdown is still answered (503).
        const answered = Effect.uninterruptibleMask((restore) =>
          Effect.map(
            Effect.matchCauseEffect(restore(route(req)), {
              onSuccess: (response) => guard.ensureProblem(response, g.info),
              onFailure: (cause) => guard.failed(cause, g.info)
            }),
            (response) => writeAnswer(req, res, guard.finish(g, response, nowNanos()), g.info.requestId)
          )
        )
        const fiber = Effect.runForkWith(Context.add(context, CurrentRequestInfo, g.info))(answered)
        if (fiber.pollUnsafe() === undefined) {
          inflight.add(fiber)
          fiber.addObserver(() => inflight.delete(fiber))
          // A caller that hangs up stops its request (a reservation is released, nothing is charged).
          res.once("close", () => {
            if (!res.writableEnded) fiber.interruptUnsafe()
          })
        }
        return true
      }

      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          lane.handler = undefined
          const answering = [...inflight]
          if (answering.length === 0) return
          const done = yield* Fiber.awaitAll(answering).pipe(Effect.timeoutOption(`${config.shutdownGraceSeconds} seconds`))
          if (done._tag === "None") yield* Fiber.interruptAll(answering)
        })
      )
    })
  )
