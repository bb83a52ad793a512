/**
 * Per-request facts the door (Door.ts) creates and the routes fill in (for the log line, problem
 * bodies, RateLimit and other response headers). It is kept beside the request (keyed by its
 * underlying Node request) rather than in the fiber context, because providing a service per
 * request copies the context: measurably slower on every call.
 */
import { Context, Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import type { Principal } from "../auth/Accounts.ts"

/** Mutable per-request record; one object per request, never shared. */
export interface RequestInfo {
  readonly requestId: string
  /** Set once the caller is known (for the log line and RateLimit headers). */
  principal: Principal | undefined
  /** HCC credits the call was charged (set when its ledger row is committed). */
  hccCost?: number
  /** Headers the answer must carry whatever it turns out to be (`Retry-After`, `WWW-Authenticate`); the guard adds them. */
  responseHeaders?: Record<string, string>
  /** The problem the request was answered with, if any: its code, and which limit refused a 429. */
  problem?: { readonly code: string; readonly limit: string | undefined }
}

const infos = new WeakMap<object, RequestInfo>()
const keyOf = (req: HttpServerRequest.HttpServerRequest): object => (typeof req.source === "object" && req.source !== null ? req.source : req)

/** Attaches the record to a request (the door, first thing). */
export const attachRequestInfo = (req: HttpServerRequest.HttpServerRequest, info: RequestInfo): void => {
  infos.set(keyOf(req), info)
}

const UNASSIGNED = (): RequestInfo => ({ requestId: "unassigned", principal: undefined })

/** The current request's {@link RequestInfo}. */
export const RequestContext: Effect.Effect<RequestInfo> = Effect.withFiber((fiber) => {
  const req = Context.getOrUndefined(fiber.context, HttpServerRequest.HttpServerRequest)
  return Effect.succeed(req === undefined ? UNASSIGNED() : infos.get(keyOf(req)) ?? UNASSIGNED())
})

/** Sets a header on the current request's answer, whatever the answer turns out to be. */
export const setResponseHeader = (name: string, value: string): Effect.Effect<void> =>
  Effect.map(RequestContext, (info) => {
    ;(info.responseHeaders ??= {})[name] = value
  })
