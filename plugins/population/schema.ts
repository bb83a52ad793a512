/** Request and response of POST /v1/population. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgeRange, AXES, AxisCode, AxisScore, Code, distinctNonEmpty, SEXES } from "../../src/plugin/contract.ts"

/** Analyses this endpoint runs. */
export const ANALYSIS_TYPES = ["trend"] as const
/** Period sizes and the key each period carries. */
export const GRANULARITY_KEYS = { monthly: "month", quarterly: "quarter", yearly: "year" } as const
/** Granularity names. */
export const GRANULARITIES = Object.keys(GRANULARITY_KEYS) as ReadonlyArray<keyof typeof GRANULARITY_KEYS>

/** Bounds on an axis: at least one of min and max, min ≤ max. */
const Bounds = Schema.Struct({
  min: Schema.optionalKey(AxisScore),
  max: Schema.optionalKey(AxisScore)
}).check(
  Schema.makeFilter((b: { readonly min?: number; readonly max?: number }) => b.min !== undefined || b.max !== undefined || "Expected min, max or both", {
    toJsonSchema: () => ({ minProperties: 1 }),
    arbitraryConstraint: { minProperties: 1 }
  }),
  // min ≤ max: no JSON Schema keyword compares two properties; said in the description instead.
  Schema.makeFilter((b: { readonly min?: number; readonly max?: number }) => b.min === undefined || b.max === undefined || b.min <= b.max || "Expected min ≤ max", {
    toJsonSchema: () => [{}, true]
  })
).annotate({ description: "Inclusive bounds on the patient's mean score of the axis over the data window" })

const thresholdFields = Object.fromEntries(AXES.map((a) => [a, Schema.optionalKey(Bounds)])) as {
  readonly [K in (typeof AXES)[number]]: Schema.optionalKey<typeof Bounds>
}

/**
 * Smallest cohort reported whatever the service's minimum cell size (CMS cell-size suppression
 * policy: no cell of 1–10 beneficiaries); a larger minimum cell size raises it.
 */
export const MIN_COHORT = 11

/** Who is in the cohort; every part optional, parts combine with AND; {} is everyone. */
export const CohortDefinition = Schema.Struct({
  age_range: Schema.optionalKey(AgeRange),
  axes_threshold: Schema.optionalKey(Schema.Struct(thresholdFields).annotate({ description: "Axis code → { min?, max? } on the patient's mean score over the data window" })),
  conditions: Schema.optionalKey(distinctNonEmpty(Code).annotate({ description: "Condition codes (catalog vocabulary `condition`) or standard codes, e.g. snomed:44054006, icd10cm:E11.9; a patient must have all of them" })),
  drugs: Schema.optionalKey(distinctNonEmpty(Code).annotate({ description: "Drug codes (catalog vocabulary `drug`) or standard codes, e.g. rxnorm:6809; a patient must have a course of each within the data window" })),
  regions: Schema.optionalKey(distinctNonEmpty(Code).annotate({ description: "Region codes (catalog vocabulary `region`); a patient must live in one of them" })),
  sex: Schema.optionalKey(Schema.Literals(SEXES).annotate({ description: "Sex recorded at registration (FHIR AdministrativeGender): female, male, other or unknown" }))
})

/** The request body. */
export const PopulationRequest = Schema.Struct({
  cohort_definition: CohortDefinition.pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))).annotate({ description: "Who is in the cohort (default {}: everyone)" }),
  analysis_type: Schema.Literals(ANALYSIS_TYPES).annotate({ description: "trend: per-period axis averages and the significance of the trend over time" }),
  granularity: Schema.Literals(GRANULARITIES).pipe(Schema.withDecodingDefaultKey(Effect.succeed("quarterly" as const))).annotate({
    description: "Period size (default quarterly): periods carry `month` (YYYY-MM), `quarter` (Q<n>_<year>) or `year` (YYYY)"
  }),
  axes: Schema.optionalKey(distinctNonEmpty(AxisCode).annotate({ description: "Axes to report (default all 8), listed in canonical order" }))
})

const Average = Schema.NullOr(Schema.Finite).annotate({
  description: "Mean of the cohort's scores in the period (3 decimals); null when none was recorded, or when fewer patients than the minimum cell size were scored (listed in `suppressed`)"
})
const periodFields = {
  month: Schema.optionalKey(Schema.String),
  quarter: Schema.optionalKey(Schema.String),
  year: Schema.optionalKey(Schema.String),
  ...(Object.fromEntries(AXES.map((a) => [`avg_${a}`, Schema.optionalKey(Average)])) as {
    readonly [K in (typeof AXES)[number] as `avg_${K}`]: Schema.optionalKey<typeof Average>
  })
}

/** The response body (the platform adds hcc_cost). */
export const PopulationResponse = Schema.Struct({
  cohort_size: Schema.Int.annotate({ description: "Patients in the cohort (rounded when the service rounds counts)" }),
  analysis_type: Schema.String,
  periods: Schema.Array(Schema.Struct(periodFields)),
  statistical_significance: Schema.NullOr(Schema.Finite).annotate({
    description: "Bonferroni-adjusted p-value of the strongest axis trend (one-sample t-test of per-patient slopes, × the number of axes, capped at 1): an upper bound on the probability of so clear a trend on some axis were none trending; docs/analytics.md. " +
      "null when the patients with a slope on some reported axis are fewer than the minimum cell size (listed in `suppressed`)"
  })
})

const Patients = Schema.NullOr(Schema.Int).annotate({
  description: "Patients with a score of the axis in the period (rounded when the service rounds counts); null when fewer than the minimum cell size (listed in `view_data.suppressed`)"
})
const Low = Schema.NullOr(Schema.Finite).annotate({ description: "Lower end of the mean's 95 % interval (patients as clusters; docs/analytics.md; 3 decimals); null with the mean, or with fewer than 2 patients" })
const High = Schema.NullOr(Schema.Finite).annotate({ description: "Upper end of the mean's 95 % interval (3 decimals); null with the mean, or with fewer than 2 patients" })
const intervalFields = {
  period: Schema.String.annotate({ description: "The period, as the answer's period key writes it (YYYY-MM, Q<n>_<year> or YYYY)" }),
  ...(Object.fromEntries(AXES.flatMap((a) => [[`n_${a}`, Schema.optionalKey(Patients)], [`low_${a}`, Schema.optionalKey(Low)], [`high_${a}`, Schema.optionalKey(High)]])) as {
    readonly [K in (typeof AXES)[number] as `n_${K}` | `low_${K}` | `high_${K}`]: Schema.optionalKey<typeof Patients>
  })
}

/**
 * The view representation's `view_data` (src/plugin/viewData.ts): each reported period mean's
 * patients and 95 % interval, for the chart's bands and tooltips.
 */
export const PopulationViewData = Schema.Struct({
  periods: Schema.Array(Schema.Struct(intervalFields)).annotate({
    description: "One entry per period of the answer, in its order: per reported axis with a recorded score, `n_<axis>`, `low_<axis>` and `high_<axis>`"
  })
})

/** The partial's per-period fields that rest on the period's patients (its `patients_<axis>` is a count). */
export const PARTIAL_STATISTICS = ["scores", "sum", "sum_squares", "sum_counts", "count_squares"] as const

const Figure = Schema.NullOr(Schema.Finite)
const partialFields = {
  period: Schema.String.annotate({ description: "The period, as the answer's period key writes it" }),
  ...(Object.fromEntries(AXES.flatMap((a) => [
    [`patients_${a}`, Schema.optionalKey(Schema.NullOr(Schema.Int))],
    ...PARTIAL_STATISTICS.map((f) => [`${f}_${a}`, Schema.optionalKey(Figure)])
  ])) as {
    readonly [K in (typeof AXES)[number] as `${"patients" | (typeof PARTIAL_STATISTICS)[number]}_${K}`]: Schema.optionalKey<typeof Figure>
  })
}

/**
 * The partial representation's `partial` (src/plugin/viewData.ts): the aggregates a network
 * coordinator pools exactly (docs/network.md). Per period and reported axis: the patients scored
 * (a count), the scores and their sum (the mean is sum ÷ scores), and Σ Sᵢ², Σ Sᵢnᵢ, Σ nᵢ² of the
 * patients' sums Sᵢ and counts nᵢ (the interval's moments); per axis, the patients with a slope, Σ
 * slope and Σ slope² (the trend's t-test). Unrounded: the coordinator rounds what it pools.
 */
export const PopulationPartial = Schema.Struct({
  periods: Schema.Array(Schema.Struct(partialFields)).annotate({ description: "One entry per period of the answer, in its order" }),
  slopes: Schema.Array(Schema.Struct({
    axis: AxisCode,
    n: Schema.NullOr(Schema.Int).annotate({ description: "Patients with a slope (at least 3 scores over more than one month); null when a small cell" }),
    sum: Figure.annotate({ description: "Σ of their slopes (points per month)" }),
    sum_squares: Figure.annotate({ description: "Σ of their squared slopes" })
  })).annotate({ description: "Per reported axis, in canonical order" })
})
