/**
 * Per-request facts the outer guard creates and inner layers fill in (for the log line, problem
 * bodies, RateLimit and other response headers). On the Effect HTTP path it is kept beside the
 * request (keyed by its underlying Node request) rather than in the fiber context, because
 * providing a service per request copies the context: measurably slower on every call. The fast
 * lane (FastLane.ts) builds each request's context itself, so there it is a service of that context.
 */
import { Context, Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import type { Principal } from "../auth/Accounts.ts"

/** Mutable per-request record; one object per request, never shared. */
export interface RequestInfo {
  readonly requestId: string
  /** Set by the Authorization middleware once the caller is known (for the log line and RateLimit headers). */
  principal: Principal | undefined
  /** HCC credits the call was charged (set when its ledger row is committed). */
  hccCost?: number
  /** Headers the answer must carry whatever it turns out to be (`Retry-After`, `WWW-Authenticate`); the guard adds them. */
  responseHeaders?: Record<string, string>
}

/** The request's record in a context the fast lane built (FastLane.ts). */
export class CurrentRequestInfo extends Context.Service<CurrentRequestInfo, RequestInfo>()("hcc/CurrentRequestInfo") {}

const infos = new WeakMap<object, RequestInfo>()
const keyOf = (req: HttpServerRequest.HttpServerRequest): object => (typeof req.source === "object" && req.source !== null ? req.source : req)

/** Attaches the record to a request (the guard, first thing). */
export const attachRequestInfo = (req: HttpServerRequest.HttpServerRequest, info: RequestInfo): void => {
  infos.set(keyOf(req), info)
}

const UNASSIGNED = (): RequestInfo => ({ requestId: "unassigned", principal: undefined })

/** The current request's {@link RequestInfo}, on either path. */
export const RequestContext: Effect.Effect<RequestInfo> = Effect.withFiber((fiber) => {
  const own = Context.getOrUndefined(fiber.context, CurrentRequestInfo)
  if (own !== undefined) return Effect.succeed(own)
  const req = Context.getOrUndefined(fiber.context, HttpServerRequest.HttpServerRequest)
  return Effect.succeed(req === undefined ? UNASSIGNED() : infos.get(keyOf(req)) ?? UNASSIGNED())
})

/** Sets a header on the current request's answer, whatever the answer turns out to be. */
export const setResponseHeader = (name: string, value: string): Effect.Effect<void> =>
  Effect.map(RequestContext, (info) => {
    ;(info.responseHeaders ??= {})[name] = value
  })
