/** Request and response of POST /v1/temporal. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AXES, AxisScore } from "../../src/plugin/contract.ts"

/** Accepted sampling intervals and their length in days (used for the urgency horizon). */
export const INTERVAL_DAYS = { daily: 1, weekly: 7, monthly: 30.4375, quarterly: 91.3125, yearly: 365.25 } as const
/** Interval names. */
export const INTERVALS = Object.keys(INTERVAL_DAYS) as ReadonlyArray<keyof typeof INTERVAL_DAYS>

/** Urgency levels, least to most urgent. */
export const URGENCY_LEVELS = ["low", "moderate", "high", "critical"] as const

/** One axis's series: 3–1000 scores in [0, 10], oldest first. */
const Series = Schema.Array(AxisScore).check(Schema.isMinLength(3), Schema.isMaxLength(1000)).annotate({
  description: "3 to 1000 scores in [0, 10], oldest first; the last value is the most recent interval"
})

const axisFields = Object.fromEntries(AXES.map((a) => [a, Schema.optionalKey(Series)])) as {
  readonly [K in (typeof AXES)[number]]: Schema.optionalKey<typeof Series>
}

/** The request body. */
export const TemporalRequest = Schema.Struct({
  patient_axes: Schema.Struct(axisFields).check(
    Schema.makeFilter((axes: Record<string, unknown>) => Object.keys(axes).length >= 1 || "Expected at least one axis series", { toJsonSchema: () => ({ minProperties: 1 }), arbitraryConstraint: { minProperties: 1 } })
  ).annotate({ description: "Axis code → series (1 to 8 axes). Series of different lengths are aligned on their most recent value." }),
  interval: Schema.Literals(INTERVALS).pipe(Schema.withDecodingDefaultKey(Effect.succeed("monthly" as const))).annotate({
    description: "Sampling interval of the series (default monthly); sets how many predicted steps fall within the 90-day urgency horizon"
  }),
  predict_ahead: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 60 })).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(6))
  ).annotate({ description: "Intervals to predict, 1–60 (default 6)" })
})

/** The response body (the platform adds hcc_cost). */
export const TemporalResponse = Schema.Struct({
  decay_model: Schema.Literals(["stable", "linear", "exponential_decay", "exponential_plateau", "logistic"]),
  predicted_trajectory: Schema.Record(Schema.String, Schema.Array(Schema.Finite)),
  intervention_urgency: Schema.Literals(URGENCY_LEVELS),
  decay_rules_triggered: Schema.Array(Schema.String)
})

/**
 * The view representation's `view_data` (src/plugin/viewData.ts): each prediction's 95 % interval,
 * ŷ ± 1.96·σ·√(1 + 1/m + (t − t̄)²/Sxx) (docs/temporal.md; exact for the linear model, linearised
 * for the others), clamped to the score range like the predictions.
 */
export const TemporalViewData = Schema.Struct({
  band: Schema.Array(Schema.Struct({
    axis: Schema.String,
    index: Schema.Int.annotate({ description: "Step ahead, from 0 (the first prediction)" }),
    lo: Schema.Finite,
    hi: Schema.Finite
  }))
})
