/** Request and response of POST /v1/one-health. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Code } from "../../src/plugin/contract.ts"

/** What the endpoint answers (documented in docs/analytics.md). */
export const ONE_HEALTH_QUERY_TYPES = ["cross_species_correlation"] as const
/** Alert levels, lowest first. */
export const ALERT_LEVELS = ["low", "moderate", "high", "critical"] as const
/** Zoonotic risk levels, lowest first. */
export const RISK_LEVELS = ["low", "moderate", "high"] as const

/** The request body. */
export const OneHealthRequest = Schema.Struct({
  query_type: Schema.Literals(ONE_HEALTH_QUERY_TYPES).pipe(Schema.withDecodingDefaultKey(Effect.succeed("cross_species_correlation" as const))).annotate({
    description: "cross_species_correlation (default): does the animal series lead the human one, by how many days"
  }),
  human_condition: Code.annotate({ description: "Zoonotic condition code (catalog vocabulary `zoonotic_condition`), or its standard code, e.g. icd10cm:A69.2" }),
  animal_species: Code.annotate({ description: "Species code (catalog vocabulary `species`)" }),
  geographic_scope: Code.annotate({ description: "Region code (catalog vocabulary `region`)" })
})

/** The response body (the platform adds hcc_cost). */
export const OneHealthResponse = Schema.Struct({
  correlation_found: Schema.Boolean.annotate({ description: "The animal series leads the human one: the largest lagged correlation (0–56 days) of the prewhitened log-scale series is positive and its max-statistic permutation p-value (999 permutations, the lag search included) is below 0.05" }),
  correlation_strength: Schema.Finite.annotate({ description: "Pearson r of the prewhitened log(1 + count) series at the best lag (3 decimals)" }),
  temporal_lag: Schema.String.annotate({ description: "Best lag, `<n>_days` (multiples of 7, 0–56)" }),
  alert_level: Schema.Literals(ALERT_LEVELS),
  zoonotic_risk: Schema.Literals(RISK_LEVELS),
  recommendation: Schema.String
})

/**
 * The view representation's `view_data` (src/plugin/viewData.ts): both weekly series on one time
 * axis, and the correlation the lead search saw at each lag with the permutation test's threshold.
 */
export const OneHealthViewData = Schema.Struct({
  lag_weeks: Schema.NullOr(Schema.Int).annotate({ description: "The best lag in weeks (null when no lag could be computed)" }),
  weeks: Schema.Array(Schema.Struct({
    week: Schema.String.annotate({ description: "The week's Monday, YYYY-MM-DD" }),
    animal: Schema.NullOr(Schema.Finite).annotate({ description: "Animal cases (null: no report that week)" }),
    human: Schema.NullOr(Schema.Finite).annotate({ description: "Human cases (null: no report, or a small cell)" })
  })),
  correlation: Schema.Array(Schema.Struct({
    lag_days: Schema.Int,
    r: Schema.NullOr(Schema.Finite).annotate({ description: "Pearson r of the prewhitened log(1 + count) series at this lag (3 decimals)" }),
    pairs: Schema.Int.annotate({ description: "Weeks with both series present at this lag" })
  })),
  threshold: Schema.NullOr(Schema.Finite).annotate({
    description: "The smallest largest-correlation the permutation test calls a lead at α = 0.05 (3 decimals; null when untested)"
  })
})
