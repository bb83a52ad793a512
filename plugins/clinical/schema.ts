/** Request and response of POST /v1/clinical. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AXES, AxisCode, distinctNonEmpty, QueryType, TimeRange } from "../../src/plugin/contract.ts"

/** Directions a query may state. */
export const DIRECTIONS = ["declining", "improving", "stable"] as const

/** The request body. */
export const ClinicalRequest = Schema.Struct({
  query: Schema.String.check(
    Schema.makeFilter((s: string) => (s.trim().length >= 1 && [...s].length <= 2000) || "Expected 1–2000 characters of text", {
      // Characters are code points, as JSON Schema counts them; at least one that is not whitespace.
      toJsonSchema: () => ({ minLength: 1, maxLength: 2000, pattern: "\\S" })
    })
  ).annotate({ description: "The clinical question in plain English: drugs (generic or brand), conditions, axes (codes in capitals or names), a direction (declining, improving, stable), a duration" }),
  axes: distinctNonEmpty(AxisCode).pipe(Schema.withDecodingDefaultKey(Effect.succeed([...AXES]))).annotate({
    description: "Axes whose correlations are reported in contributing_data.axis_correlations (default all 8)"
  }),
  time_range: Schema.optionalKey(TimeRange).annotate({
    description: "Months of evidence counted back from as_of. Default: a duration stated in the query, else all"
  }),
  response_format: QueryType.pipe(Schema.withDecodingDefaultKey(Effect.succeed("structured" as const))).annotate({
    description: "How reasoning_chain is written: structured (label: values), natural_language (sentences) or sql_like (the SQL over the dataset that produced each number). Default structured"
  })
})

/** The response body (the platform adds hcc_cost). */
export const ClinicalResponse = Schema.Struct({
  reasoning_chain: Schema.Array(Schema.String).annotate({ description: "Ordered steps, each stating a fact computed from the data or the interaction knowledge base" }),
  suggestions: Schema.Array(Schema.String).annotate({ description: "Suggestions of the documented rules keyed on those facts" }),
  confidence: Schema.Finite.annotate({ description: "understanding × n / (n + 50) × (0.5 + 0.5 × agreement), 2 decimals (docs/analytics.md#clinical)" }),
  contributing_data: Schema.Struct({
    encounters: Schema.NullOr(Schema.Int).annotate({
      description: "Encounters of the similar patients that started in the evidence window; null when fewer than the minimum cell size but some (listed in `suppressed`)"
    }),
    axis_correlations: Schema.Record(Schema.String, Schema.NullOr(Schema.Finite)).annotate({
      description: "`<axis>_<axis>` (canonical order) → Pearson r across the patients' mean scores in the window, 3 decimals; null when those patients are fewer than the minimum cell size (listed in `suppressed`)"
    })
  })
})
