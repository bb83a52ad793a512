/** Small helpers shared by the handlers and middleware for turning failures into problems. */
import * as Effect from "effect/Effect"
import type { LimitExceeded } from "../metering/Metering.ts"
import type { DomainError } from "../plugin/errors.ts"
import type { Plugin } from "../plugin/spec.ts"
import { BadRequest, Conflict, TooManyRequests, Unavailable, Unprocessable } from "./Problems.ts"
import { RequestContext, setResponseHeader } from "./RequestContext.ts"

/** True for `application/json` with or without parameters (`; charset=utf-8`). */
export const isJsonContentType = (value: string | undefined): boolean => {
  if (value === undefined) return false
  const media = value.split(";")[0]!.trim().toLowerCase()
  return media === "application/json"
}

/** Sets `Retry-After` (seconds) on the response that will carry the current request's answer. */
const retryAfter = (seconds: number) => setResponseHeader("retry-after", String(seconds))

/** Fails with a 429 problem and sets `Retry-After` on the response that carries it. */
export const rateLimited = (e: LimitExceeded): Effect.Effect<never, TooManyRequests> =>
  Effect.gen(function*() {
    const info = yield* RequestContext
    yield* retryAfter(e.retryAfter)
    return yield* new TooManyRequests({
      code: "rate_limited",
      limit: e.limit,
      retry_after_seconds: e.retryAfter,
      detail: e.limit === "burst"
        ? `Burst limit reached: ${e.quota} requests in any 60 seconds. Retry in ${e.retryAfter} s.`
        : `Daily limit reached: ${e.quota} charged queries per UTC day. It resets in ${e.retryAfter} s.`,
      request_id: info.requestId,
      hcc_cost: 0
    })
  })

/**
 * A 503 for a limit that could not be decided because the database did not answer in time (it is
 * locked or down): nothing was charged and the caller may retry.
 */
export const limitsUnavailable = (e: unknown): Effect.Effect<never, Unavailable> =>
  Effect.gen(function*() {
    const info = yield* RequestContext
    yield* Effect.logError("limit check failed", e)
    yield* retryAfter(1)
    return yield* new Unavailable({
      code: "unavailable",
      detail: "The usage limits could not be checked just now; nothing was charged. Retry shortly.",
      request_id: info.requestId,
      hcc_cost: 0
    })
  })

/** 409: the Idempotency-Key is held by a request still running; retry in a second. */
export const keyInUse: Effect.Effect<never, Conflict> = Effect.gen(function*() {
  const info = yield* RequestContext
  yield* retryAfter(1)
  return yield* new Conflict({
    code: "idempotency_key_in_use",
    detail: "A request with this Idempotency-Key is still being answered; retry with the same key and body to get its answer.",
    request_id: info.requestId,
    hcc_cost: 0
  })
})

/** 422: the Idempotency-Key was used for a different request. */
export const keyReused: Effect.Effect<never, Unprocessable> = Effect.gen(function*() {
  const info = yield* RequestContext
  return yield* new Unprocessable({
    code: "idempotency_key_reused",
    detail: "This Idempotency-Key was used in the last 24 hours for a different request (path or body); use a new key.",
    request_id: info.requestId,
    hcc_cost: 0
  })
})

/** The code platform services (HealthData) fail with while they cannot answer yet; plugins need not declare it. */
export const PLATFORM_UNAVAILABLE = "unavailable"

/** The problem for a plugin's declared domain error; an undeclared code is the plugin's defect. */
/** The platform's code for an answer that would rest on too few patients. */
const COHORT_TOO_SMALL = "cohort_too_small"

export const domainProblem = (
  plugin: Plugin,
  e: DomainError
): Effect.Effect<never, BadRequest | Unprocessable | Unavailable> =>
  Effect.gen(function*() {
    const info = yield* RequestContext
    if (e.code === PLATFORM_UNAVAILABLE) {
      // A platform service (the health data) is not ready: any plugin may pass this on.
      const seconds = e.context?.["retry_after_seconds"]
      if (typeof seconds === "number") yield* retryAfter(seconds)
      return yield* new Unavailable({ code: e.code, detail: e.detail, request_id: info.requestId, hcc_cost: 0 })
    }
    // The platform's small-cell rule may hold any plugin's answer back (src/plugin/invoke.ts).
    const declared = plugin.errors?.find((d) => d.code === e.code) ?? (e.code === COHORT_TOO_SMALL ? { status: 422 as const } : undefined)
    if (declared === undefined) {
      return yield* Effect.die(new Error(`plugin "${plugin.name}" raised undeclared error code "${e.code}"`))
    }
    const common = { code: e.code, detail: e.detail, request_id: info.requestId, hcc_cost: 0 as const }
    switch (declared.status) {
      case 400:
        return yield* new BadRequest({ ...common, ...(e.errors === undefined ? {} : { errors: e.errors }) })
      case 503:
        return yield* new Unavailable(common)
      case 422:
        return yield* new Unprocessable({
          ...common,
          ...(e.suggestions === undefined ? {} : { suggestions: e.suggestions }),
          ...(e.context === undefined ? {} : { context: e.context })
        })
    }
  })
