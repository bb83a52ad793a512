/**
 * The `Authorization` middleware of the HTTP contract (src/http/Api.ts), as the door runs it for
 * every endpoint behind it: resolves the bearer token (RFC 6750 answers) and takes a burst slot
 * (the guard adds the RateLimit headers once the response is known).
 */
import * as Effect from "effect/Effect"
import { InternalError, type TooManyRequests, Unauthorized, type Unavailable } from "../http/Problems.ts"
import { RequestContext, setResponseHeader } from "../http/RequestContext.ts"
import { limitsUnavailable, rateLimited } from "../http/respond.ts"
import { Metering } from "../metering/Metering.ts"
import { Accounts, type AuthFailureReason, type Principal } from "./Accounts.ts"

const DETAILS: Readonly<Record<AuthFailureReason, string>> = {
  missing: "Send Authorization: Bearer <HCC token>.",
  malformed: "The token is not a well-formed HCC token (wrong shape or checksum).",
  unknown: "The token is not known to this service.",
  revoked: "The token has been revoked.",
  expired: "The token has expired.",
  disabled: "The account of this token is disabled; ask the operator."
}

/**
 * The caller of a request from its bearer credential: the token resolved (RFC 6750 answers) and a
 * burst slot taken; the principal is also recorded on the request (log line, RateLimit headers).
 */
export const makeAuthorize = (accounts: Accounts["Service"], metering: Metering["Service"]) => {
  const refuse = (reason: AuthFailureReason) =>
    Effect.gen(function*() {
      const info = yield* RequestContext
      yield* setResponseHeader("www-authenticate", reason === "missing" ? `Bearer realm="hcc"` : `Bearer realm="hcc", error="invalid_token"`)
      return yield* new Unauthorized({
        code: reason === "missing" ? "missing_token" : "invalid_token",
        detail: DETAILS[reason],
        request_id: info.requestId,
        hcc_cost: 0
      })
    })

  const lookupFailed = (e: unknown) =>
    Effect.flatMap(RequestContext, (info) =>
      Effect.andThen(
        Effect.logError("token look-up failed", e),
        new InternalError({ code: "internal_error", detail: "The token could not be checked.", request_id: info.requestId, hcc_cost: 0 })
      ))

  // The success path is a short chain of flatMaps: it runs on every authenticated request.
  return (credential: string): Effect.Effect<Principal, Unauthorized | InternalError | TooManyRequests | Unavailable> =>
    Effect.flatMap(RequestContext, (info) =>
      accounts.authenticate(credential).pipe(
        Effect.catchTags({ AuthFailure: (e) => refuse(e.reason), SqlError: lookupFailed }),
        Effect.flatMap((principal) => {
          // The guard reads this to log the account and to put the RateLimit headers on the response.
          info.principal = principal
          return metering.admit(principal).pipe(
            Effect.catchTags({ LimitExceeded: rateLimited, SqlError: limitsUnavailable }),
            Effect.as(principal)
          )
        })
      ))
}
