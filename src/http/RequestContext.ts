/**
 * Per-request facts the outer guard creates and inner layers fill in (for the log line, problem
 * bodies and RateLimit headers). Kept beside the request (keyed by its underlying Node request)
 * rather than in the fiber context, because providing a service per request copies the context:
 * measurably slower on every call.
 */
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import type { Principal } from "../auth/Accounts.ts"

/** Mutable per-request record; one object per request, never shared. */
export interface RequestInfo {
  readonly requestId: string
  /** Set by the Authorization middleware once the caller is known (for the log line and RateLimit headers). */
  principal: Principal | undefined
  /** HCC credits the call was charged (set when its ledger row is committed). */
  hccCost?: number
}

const infos = new WeakMap<object, RequestInfo>()
const keyOf = (req: HttpServerRequest.HttpServerRequest): object => (typeof req.source === "object" && req.source !== null ? req.source : req)

/** Attaches the record to a request (the guard, first thing). */
export const attachRequestInfo = (req: HttpServerRequest.HttpServerRequest, info: RequestInfo): void => {
  infos.set(keyOf(req), info)
}

/** The current request's {@link RequestInfo}. */
export const RequestContext: Effect.Effect<RequestInfo, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (req) => infos.get(keyOf(req)) ?? { requestId: "unassigned", principal: undefined }
)
