/**
 * Every error the service answers with, as RFC 9457 problem classes (one per status), and the one
 * factory that turns a problem into its answer. Each body is
 * `{ type, title, status, detail, code, request_id, errors?, hcc_cost: 0 }` plus the extension
 * members of its status (docs/errors.md). The classes declare `type` as `about:blank` (the status
 * says what kind of problem it is); an answer's `type` points at its `code`'s entry in the errors
 * guide (`/docs/errors#<code>`, a URI reference resolved against the request's URI, RFC 9457
 * §3.1.1), set by {@link problemAnswer} as the body is built.
 */
import * as Schema from "effect/Schema"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiError from "effect/http-api/HttpApiError"
import { ReadinessCheckState } from "../catalog/CatalogSchema.ts"
import { problemType, STATUS_TITLES } from "./errorCatalog.ts"

/** Maximum request body, in bytes (docs/api.md, "Requests"). */
export const MAX_BODY_BYTES = 1_048_576

/** The media type of every problem answer (RFC 9457 §3). */
export const PROBLEM_JSON = "application/problem+json"

/** One located problem in a request body: a JSON pointer (RFC 6901) and what is wrong there. */
export const FieldIssue = Schema.Struct({
  path: Schema.String.annotate({ description: "JSON pointer into the request body, e.g. /patient_axes/PO/3" }),
  message: Schema.String
})
/** Type of {@link FieldIssue}. */
export type FieldIssue = typeof FieldIssue.Type

const common = {
  detail: Schema.String,
  request_id: Schema.String.annotate({ description: "Echo of the X-Request-Id header; quote it when reporting a problem" }),
  hcc_cost: Schema.Literal(0).annotate({ description: "Errors are never charged" })
}
const titleOf = (status: number): string => STATUS_TITLES[status] ?? "Error"
const blank = <S extends number>(status: S) => ({ type: "about:blank", status, title: titleOf(status) }) as const

/** 400: the body is not valid JSON or does not match the schema. */
export class BadRequest extends HttpApiError.Problem<BadRequest>()("BadRequest", blank(400), {
  ...common,
  code: Schema.String.annotate({ description: "invalid_request | malformed_json | unknown_field, or a plugin's declared 400 code" }),
  errors: Schema.optionalKey(Schema.Array(FieldIssue))
}) {}

/** 401: no token, or a token that is malformed, unknown, revoked or expired. */
export class Unauthorized extends HttpApiError.Problem<Unauthorized>()("Unauthorized", blank(401), {
  ...common,
  code: Schema.Literals(["missing_token", "invalid_token"])
}) {}

/** 404: no endpoint at this path. */
export class NotFound extends HttpApiError.Problem<NotFound>()("NotFound", blank(404), {
  ...common,
  code: Schema.Literal("not_found")
}) {}

/** 405: the path exists with other methods (listed in `Allow`). */
export class MethodNotAllowed extends HttpApiError.Problem<MethodNotAllowed>()("MethodNotAllowed", blank(405), {
  ...common,
  code: Schema.Literal("method_not_allowed"),
  allow: Schema.Array(Schema.String)
}) {}

/** 409: a request with this Idempotency-Key is still being answered. */
export class Conflict extends HttpApiError.Problem<Conflict>()("Conflict", blank(409), {
  ...common,
  code: Schema.Literal("idempotency_key_in_use")
}) {}

/** 413: the body is over the limit. */
export class PayloadTooLarge extends HttpApiError.Problem<PayloadTooLarge>()("PayloadTooLarge", blank(413), {
  ...common,
  code: Schema.Literal("payload_too_large"),
  limit_bytes: Schema.Int
}) {}

/** 415: the body is not declared as JSON. */
export class UnsupportedMediaType extends HttpApiError.Problem<UnsupportedMediaType>()("UnsupportedMediaType", blank(415), {
  ...common,
  code: Schema.Literal("unsupported_media_type")
}) {}

/** 422: well-formed but unanswerable (unknown vocabulary item, cohort too small, …). */
export class Unprocessable extends HttpApiError.Problem<Unprocessable>()("Unprocessable", blank(422), {
  ...common,
  code: Schema.String.annotate({ description: "cohort_too_small | unknown_drug | unknown_device | unknown_condition | unknown_species | unknown_region | idempotency_key_reused, or a plugin's declared 422 code" }),
  suggestions: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "Closest known names" })),
  context: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "Numbers behind the refusal, e.g. cohort_size and required" }))
}) {}

/** 429: a daily or burst limit is used up. */
export class TooManyRequests extends HttpApiError.Problem<TooManyRequests>()("TooManyRequests", blank(429), {
  ...common,
  code: Schema.Literal("rate_limited"),
  limit: Schema.Literals(["daily", "burst"]),
  retry_after_seconds: Schema.Int
}) {}

/** 500: a defect; the body never carries internals. */
export class InternalError extends HttpApiError.Problem<InternalError>()("InternalError", blank(500), {
  ...common,
  code: Schema.Literal("internal_error")
}) {}

/** 503 from GET /readyz: every check's state, so a probe (or a person) sees what is missing. */
export class NotReady extends HttpApiError.Problem<NotReady>()("NotReady", blank(503), {
  ...common,
  code: Schema.Literal("unavailable"),
  checks: Schema.Record(Schema.String, ReadinessCheckState).annotate({ description: "Check name → its state; the failing ones say why" })
}) {}

/** 503: not ready, shutting down, or a dependency is unavailable. */
export class Unavailable extends HttpApiError.Problem<Unavailable>()("Unavailable", blank(503), {
  ...common,
  code: Schema.String.annotate({ description: "unavailable, or a plugin's declared 503 code" })
}) {}

/** Any of the problems above: its members as the class holds them. */
export interface AnyProblem {
  readonly status: number
  readonly title: string
  readonly code: string
  readonly detail?: string | undefined
  readonly limit?: string | undefined
}

/** Whether a value is one of the problems above (not a platform error that also renders itself). */
export const isProblem = (value: unknown): value is AnyProblem =>
  typeof value === "object" && value !== null && typeof (value as AnyProblem).code === "string" && typeof (value as AnyProblem).status === "number" &&
  (value as { type?: unknown }).type === "about:blank"

/** The body of a problem: `type` first (its code's guide entry), then the class's members. */
export const problemBody = (problem: AnyProblem): string => {
  const { type: _blank, status, title, ...members } = problem as AnyProblem & { readonly type: string }
  return JSON.stringify({ type: problemType(problem.code), title, status, ...members })
}

/** A problem's answer (headers beside the content type, e.g. `Allow` on a 405, given by the caller). */
export const problemAnswer = (problem: AnyProblem, headers?: Record<string, string>): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(problemBody(problem), { status: problem.status, contentType: PROBLEM_JSON, ...(headers === undefined ? {} : { headers }) })

/**
 * A problem written straight to a socket or an HTTP/1.1 response, for answers the app cannot
 * give: what Node refuses before a request reaches it.
 */
export const problemText = (status: number, code: string, detail: string, requestId: string): string =>
  JSON.stringify({ type: problemType(code), title: STATUS_TITLES[status] ?? "Error", status, detail, code, request_id: requestId, hcc_cost: 0 })

/** The 413 for a body over the limit. */
export const payloadTooLarge = (requestId: string) =>
  new PayloadTooLarge({ request_id: requestId, hcc_cost: 0, code: "payload_too_large", detail: `The body exceeds ${MAX_BODY_BYTES} bytes.`, limit_bytes: MAX_BODY_BYTES })
