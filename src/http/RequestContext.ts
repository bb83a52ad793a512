/**
 * Per-request facts the door (Door.ts) creates and the routes fill in (for the log line, problem
 * bodies, RateLimit and other response headers): a service of the context each request's fiber
 * starts with.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
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

/** The current request's record. */
export class CurrentRequestInfo extends Context.Service<CurrentRequestInfo, RequestInfo>()("hcc/CurrentRequestInfo") {}

const UNASSIGNED = (): RequestInfo => ({ requestId: "unassigned", principal: undefined })

/** The current request's {@link RequestInfo} (a fresh unassigned one outside a request). */
export const RequestContext: Effect.Effect<RequestInfo> = Effect.withFiber((fiber) =>
  Effect.succeed(Context.getOrUndefined(fiber.context, CurrentRequestInfo) ?? UNASSIGNED())
)

/** Sets a header on the current request's answer, whatever the answer turns out to be. */
export const setResponseHeader = (name: string, value: string): Effect.Effect<void> =>
  Effect.map(RequestContext, (info) => {
    ;(info.responseHeaders ??= {})[name] = value
  })
