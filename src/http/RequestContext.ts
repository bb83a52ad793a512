/** Per-request facts the outer guard creates and inner layers fill in (for the log line and problem bodies). */
import { Context } from "effect"
import type { Principal } from "../auth/Accounts.ts"

/** Mutable per-request record; the guard provides a fresh one to every request. */
export interface RequestInfo {
  readonly requestId: string
  /** Set by the Authorization middleware once the caller is known (for the log line and RateLimit headers). */
  principal: Principal | undefined
}

/**
 * The current request's {@link RequestInfo}. A reference (not a required service) so handlers and
 * middleware can read it without widening their requirements; outside a request it reads as
 * `unassigned`, which only code paths that never run under the guard can see.
 */
export const RequestContext = Context.Reference<RequestInfo>("hcc/RequestContext", {
  defaultValue: () => ({ requestId: "unassigned", principal: undefined })
})
