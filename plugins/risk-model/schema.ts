/** Request and response of POST /v1/risk-model. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgeRange, AXES, AxisScore, Code, Days } from "../../src/plugin/contract.ts"

/** The risk types, each its own model. */
export const RISK_TYPES = ["hospitalization", "readmission", "health_decline"] as const
export type RiskType = (typeof RISK_TYPES)[number]

const snapshotFields = Object.fromEntries(AXES.map((a) => [a, Schema.optionalKey(AxisScore)])) as {
  readonly [K in (typeof AXES)[number]]: Schema.optionalKey<typeof AxisScore>
}

/** The patient the question is about. */
export const PatientProfile = Schema.Struct({
  axes_snapshot: Schema.Struct(snapshotFields).check(
    Schema.makeFilter((s: object) => Object.keys(s).length > 0 || "Expected at least one axis score", { toJsonSchema: () => ({ minProperties: 1 }), arbitraryConstraint: { minProperties: 1 } })
  ).annotate({ description: "Axis code → current score (0–10); at least one axis. A missing axis is taken at the population's mean (it contributes nothing)." }),
  age_range: Schema.optionalKey(AgeRange.annotate({ description: "The patient's age band; the model uses its midpoint. Missing: the population's mean age." })),
  conditions: Schema.Array(Code).check(
    Schema.makeFilter((xs: ReadonlyArray<string>) => new Set(xs).size === xs.length || "Expected distinct values", { toJsonSchema: () => ({ uniqueItems: true }), arbitraryConstraint: { uniqueBy: (x: unknown) => x } })
  ).pipe(Schema.withDecodingDefaultKey(Effect.succeed([] as ReadonlyArray<string>))).annotate({
    description: "Condition codes (catalog vocabulary `condition`), default none"
  })
})

/** The request body. */
export const RiskModelRequest = Schema.Struct({
  patient_profile: PatientProfile,
  risk_type: Schema.Literals(RISK_TYPES).annotate({
    description: "hospitalization: an admission (not a readmission); readmission: an admission within 30 days of discharge; health_decline: any axis's mean falling by ≥ 1 point"
  }),
  horizon: Days.pipe(Schema.withDecodingDefaultKey(Effect.succeed("90_days"))).annotate({
    description: "Period the probability covers, `<n>_days` (1–3650, default 90_days); for readmission, days after discharge"
  })
})

const Factor = Schema.Struct({
  factor: Schema.String.annotate({ description: "`age`, a condition code or an axis code" }),
  weight: Schema.NullOr(Schema.Finite).annotate({ description: "The factor's contribution to the model's log rate (hospitalization) or log odds (readmission, health_decline) against a patient at the population's mean, on that scale: +0.1 multiplies the rate or the odds by e^0.1 ≈ 1.105 — not a percentage of risk (3 decimals); null when the condition's patients with or without the outcome are fewer than the minimum cell size (listed in `suppressed`)" })
})

/** The response body (the platform adds hcc_cost). */
export const RiskModelResponse = Schema.Struct({
  risk_type: Schema.String,
  probability: Schema.NullOr(Schema.Finite).annotate({ description: "Probability of the event within the horizon (4 decimals); null when a named condition's patients with or without the outcome are fewer than the minimum cell size (listed in `suppressed`)" }),
  contributing_factors: Schema.Array(Factor).annotate({ description: "This profile's largest contributions (at most 5, non-zero), largest |weight| first" }),
  recommended_interventions: Schema.Int.annotate({ description: "How many interventions the documented rules recommend for this profile (docs/analytics.md)" })
})

/**
 * The view representation's `view_data` (src/plugin/viewData.ts): the probability's 95 % interval
 * and the scale the factors' weights are on.
 */
export const RiskModelViewData = Schema.Struct({
  probability_low: Schema.NullOr(Schema.Finite).annotate({ description: "Lower end of the probability's 95 % interval (the Wald interval of the linear predictor from the cluster-robust covariance, transformed; 4 decimals); null with the probability" }),
  probability_high: Schema.NullOr(Schema.Finite).annotate({ description: "Upper end of the probability's 95 % interval (4 decimals); null with the probability" }),
  scale: Schema.Literals(["log rate", "log odds"]).annotate({ description: "The scale of the factors' weights: log rate (hospitalization's Poisson model) or log odds (the logistic models)" })
})
