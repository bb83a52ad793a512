/**
 * Every error the service answers with, as RFC 9457 problem classes (one per status). Each body is
 * `{ type, title, status, detail, code, request_id, errors?, hcc_cost: 0 }` plus the extension
 * members of its status (docs/errors.md). `type` is `about:blank`: the status says what kind of
 * problem it is and `code` (catalogued in errorCatalog.ts and docs/errors.md) says exactly which.
 */
import { Schema } from "effect"
import { HttpApiError } from "effect/http-api"
import { ReadinessCheckState } from "../catalog/CatalogSchema.ts"
import { STATUS_TITLES } from "./errorCatalog.ts"

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
