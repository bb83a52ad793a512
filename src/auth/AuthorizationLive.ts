/**
 * The Authorization middleware: resolves the bearer token (RFC 6750 answers), takes a burst slot,
 * and provides `CurrentPrincipal` (the guard adds the RateLimit headers once the response is known).
 */
import { Effect, Layer, Redacted } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { Authorization } from "../http/Api.ts"
import { InternalError, Unauthorized } from "../http/Problems.ts"
import { RequestContext } from "../http/RequestContext.ts"
import { limitsUnavailable, rateLimited } from "../http/respond.ts"
import { Metering } from "../metering/Metering.ts"
import { Accounts, type AuthFailureReason } from "./Accounts.ts"
import { CurrentPrincipal } from "./CurrentPrincipal.ts"

const DETAILS: Readonly<Record<AuthFailureReason, string>> = {
  missing: "Send Authorization: Bearer <HCC token>.",
  malformed: "The token is not a well-formed HCC token (wrong shape or checksum).",
  unknown: "The token is not known to this service.",
  revoked: "The token has been revoked.",
  expired: "The token has expired.",
  disabled: "The account of this token is disabled; ask the operator."
}

/** Implementation of {@link Authorization}. */
export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const metering = yield* Metering

    const refuse = (reason: AuthFailureReason) =>
      Effect.gen(function*() {
        const info = yield* RequestContext
        const challenge = reason === "missing" ? `Bearer realm="hcc"` : `Bearer realm="hcc", error="invalid_token"`
        yield* HttpEffect.appendPreResponseHandler((_req, res) =>
          Effect.succeed(HttpServerResponse.setHeader(res, "www-authenticate", challenge)))
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
    return Authorization.of({
      bearer: (httpEffect, { credential }) =>
        Effect.flatMap(RequestContext, (info) =>
          accounts.authenticate(Redacted.value(credential)).pipe(
            Effect.catchTags({ AuthFailure: (e) => refuse(e.reason), SqlError: lookupFailed }),
            Effect.flatMap((principal) => {
              // The guard reads this to log the account and to put the RateLimit headers on the response.
              info.principal = principal
              return metering.admit(principal).pipe(
                Effect.catchTags({ LimitExceeded: rateLimited, SqlError: limitsUnavailable }),
                Effect.andThen(Effect.provideService(httpEffect, CurrentPrincipal, principal))
              )
            })
          ))
    })
  })
)
