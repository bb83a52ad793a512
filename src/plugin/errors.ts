/**
 * The failure a plugin's handler raises for a well-formed but unanswerable request (part of the
 * plugin contract, Plugin.ts).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** Values a problem body may carry in `context` (e.g. `{ cohort_size: 312, required: 500 }`). */
export type ContextValue = string | number | boolean | ReadonlyArray<string | number>

/**
 * The failure a handler raises for a caller-caused, well-formed but unanswerable request.
 * Its `code` must be one of the plugin's declared `errors`; the platform renders it as
 * `application/problem+json` with the declared status, the request id and `hcc_cost: 0`.
 */
export class DomainError extends Schema.TaggedError<DomainError>()("DomainError", {
  code: Schema.String,
  detail: Schema.String,
  suggestions: Schema.optionalKey(Schema.Array(Schema.String)),
  context: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  /** For a 400: which request values are wrong (JSON pointer + message), as schema errors are reported. */
  errors: Schema.optionalKey(Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })))
}) {}

/** Fails with a {@link DomainError}: `fail("unknown_drug", "No drug named 'metfromin'.", { suggestions: ["metformin"] })`. */
export const fail = (
  code: string,
  detail: string,
  extra?: {
    readonly suggestions?: ReadonlyArray<string>
    readonly context?: Readonly<Record<string, ContextValue>>
    readonly errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
  }
): Effect.Effect<never, DomainError> =>
  Effect.fail(
    new DomainError({
      code,
      detail,
      ...(extra?.suggestions === undefined ? {} : { suggestions: extra.suggestions }),
      ...(extra?.context === undefined ? {} : { context: extra.context }),
      ...(extra?.errors === undefined ? {} : { errors: extra.errors })
    })
  )
