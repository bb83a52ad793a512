/**
 * The one catalogue of error codes the service answers with. docs/errors.md holds the
 * same table for readers; a test keeps the two in step in both directions.
 */

/** Where a problem `type` points: the code's row in the errors guide (served at /docs/errors). */
export const problemType = (code: string) => `/docs/errors#${code}`

/** One catalogued error. */
export interface CatalogedError {
  readonly code: string
  readonly status: number
  /** Whose fault: the caller's request, the platform, or a plugin/downstream. */
  readonly fault: "caller" | "service"
  readonly meaning: string
  readonly action: string
  /** A code outside 422 that an endpoint's handler may raise too (a network endpoint's `no_member_answered`). */
  readonly raisedByPlugins?: true
}

/** Every code, grouped by status. */
export const ERROR_CATALOG: ReadonlyArray<CatalogedError> = [
  { code: "invalid_request", status: 400, fault: "caller", meaning: "The body is JSON but does not match the endpoint's schema (wrong type, missing field, value out of range or not in a vocabulary).", action: "Fix the fields named in `errors` (JSON pointers into your body)." },
  { code: "malformed_json", status: 400, fault: "caller", meaning: "The body is not valid JSON.", action: "Send a syntactically valid JSON document." },
  { code: "unknown_field", status: 400, fault: "caller", meaning: "The body has a field the endpoint does not define (often a typo).", action: "Remove or correct the fields named in `errors`." },
  { code: "missing_token", status: 401, fault: "caller", meaning: "No `Authorization: Bearer` token was sent.", action: "Send `Authorization: Bearer <HCC token>`." },
  { code: "invalid_token", status: 401, fault: "caller", meaning: "The token is malformed, unknown, revoked or expired, or its account is disabled.", action: "Check the token, or issue a new one with `hcc tokens issue`; a disabled account is enabled again by the operator (`hcc accounts enable`)." },
  { code: "not_found", status: 404, fault: "caller", meaning: "No endpoint has this path.", action: "See GET /v1/catalog or /docs for the paths." },
  { code: "method_not_allowed", status: 405, fault: "caller", meaning: "The path exists but not with this method.", action: "Use a method from the `Allow` header." },
  { code: "request_timeout", status: 408, fault: "caller", meaning: "The request (headers within `HCC_HEADERS_TIMEOUT_SECONDS`, the whole request within `HCC_REQUEST_TIMEOUT_SECONDS`) did not arrive in time; the connection is closed.", action: "Send the request promptly; retry on a new connection." },
  { code: "idempotency_key_in_use", status: 409, fault: "caller", meaning: "A request with this `Idempotency-Key` is still being answered.", action: "Wait `Retry-After` seconds and retry with the same key and body: you will get its answer." },
  { code: "payload_too_large", status: 413, fault: "caller", meaning: "The body is larger than 1 MiB.", action: "Send a smaller body." },
  { code: "unsupported_media_type", status: 415, fault: "caller", meaning: "The body is not declared as `application/json`.", action: "Send `Content-Type: application/json`." },
  { code: "cohort_too_small", status: 422, fault: "caller", meaning: "The answer would rest on fewer patients than the minimum cell size (`context.minimum`; the count itself is never given), or the cohort is smaller than the requested `population_size`.", action: "Widen the cohort, the period or the question, or lower `population_size`." },
  { code: "unknown_drug", status: 422, fault: "caller", meaning: "The drug is not in the dataset's vocabulary.", action: "Use one of the `suggestions` or a name from the catalog." },
  { code: "unknown_device", status: 422, fault: "caller", meaning: "The device category is not in the dataset's vocabulary.", action: "Use one of the `suggestions` or a name from the catalog." },
  { code: "unknown_condition", status: 422, fault: "caller", meaning: "The condition is not in the dataset's vocabulary.", action: "Use one of the `suggestions` or a name from the catalog." },
  { code: "unknown_species", status: 422, fault: "caller", meaning: "The animal species is not in the dataset's vocabulary.", action: "Use one of the `suggestions` or a name from the catalog." },
  { code: "unknown_region", status: 422, fault: "caller", meaning: "The region is not in the dataset's vocabulary.", action: "Use one of the `suggestions` or a name from the catalog." },
  { code: "idempotency_key_reused", status: 422, fault: "caller", meaning: "This `Idempotency-Key` was used in the last 24 hours with a different method, path or body.", action: "Use a new key for a new request." },
  { code: "rate_limited", status: 429, fault: "caller", meaning: "A daily or burst limit of the account's tier is used up; `limit` says which.", action: "Wait `Retry-After` seconds, or move to a higher tier." },
  { code: "headers_too_large", status: 431, fault: "caller", meaning: "The request headers exceed 16 KiB; the connection is closed.", action: "Send fewer or shorter headers." },
  { code: "internal_error", status: 500, fault: "service", meaning: "A defect in the service or a plugin; details are in the server log under the request id.", action: "Retry later and report the `request_id` if it persists." },
  { code: "no_member_answered", status: 503, fault: "service", meaning: "A network question (`/v1/network/…`): no site of the network answered; the detail names each site and why (down, refused, failed, past the deadline).", action: "Retry later; ask the sites' operators about the ones that keep failing.", raisedByPlugins: true },
  { code: "unavailable", status: 503, fault: "service", meaning: "The service is starting, shutting down, or a dependency is not ready or did not answer in time (the dataset is loading; the database is locked or down).", action: "Retry after `Retry-After` seconds (or a short wait); nothing was charged." }
]

/** Looks a code up. */
export const catalogedError = (code: string): CatalogedError | undefined => ERROR_CATALOG.find((e) => e.code === code)

/** Standard reason phrases, used as the problem `title`. */
export const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable"
}
