/** Request and response of POST /v1/drug-outcomes. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AXES, AxisCode, Code, distinctNonEmpty, Minimum } from "../../src/plugin/contract.ts"

/** Which exposed patients form the cohort (docs/analytics.md). */
export const OUTCOME_TYPES = ["efficacy", "adverse_events", "adherence"] as const
/** Direction of an axis while on the drug; `no_data` when no cohort patient has the scores to say. */
export const TRENDS = ["positive", "stable", "negative", "no_data"] as const

/** The request body. */
export const DrugOutcomesRequest = Schema.Struct({
  drug: Code.annotate({ description: "Drug code (catalog vocabulary `drug`), e.g. metformin, or its standard code, e.g. rxnorm:6809" }),
  outcome_type: Schema.Literals(OUTCOME_TYPES).pipe(Schema.withDecodingDefaultKey(Effect.succeed("efficacy" as const))).annotate({
    description: "efficacy (default): every exposed patient; adherence: patients whose courses cover ≥ 80 % of days; adverse_events: exposed patients with an adverse event of the drug"
  }),
  axes_filter: distinctNonEmpty(AxisCode).pipe(Schema.withDecodingDefaultKey(Effect.succeed([...AXES]))).annotate({
    description: "Target axes of the efficacy score and of axis_breakdown (default all 8)"
  }),
  population_size: Minimum.pipe(Schema.withDecodingDefaultKey(Effect.succeed("minimum_1"))).annotate({
    description: "Smallest cohort to report (default minimum_1; one under the service's minimum cell size is raised to it); a smaller one is 422 cohort_too_small"
  })
})

const AxisOutcome = Schema.Struct({
  correlation: Schema.NullOr(Schema.Finite).annotate({ description: "Pearson r between adherence (PDC) and the axis change from before to during the drug (3 decimals); null when fewer than 3 patients have a known adherence (dispensing records) and scores before and during, or when fewer than the minimum cell size do (listed in `suppressed`)" }),
  trend: Schema.NullOr(Schema.Literals(TRENDS)).annotate({ description: "Direction of the cohort's within-patient slopes while on the drug; no_data when no cohort patient has 3 scores of the axis on the drug (e.g. an imported dataset without an instrument for the axis); null when fewer patients than the minimum cell size do (listed in `suppressed`)" })
})

/** The response body (the platform adds hcc_cost). */
export const DrugOutcomesResponse = Schema.Struct({
  drug: Schema.String,
  outcome_type: Schema.String,
  cohort_size: Schema.Int.annotate({ description: "Patients in the cohort (rounded when the service rounds counts)" }),
  efficacy_score: Schema.NullOr(Schema.Finite).annotate({ description: "Mean over the target axes of Cohen's d: the stratified difference (exposed − comparable unexposed) in points divided by the axis's reference SD, the same for every drug (3 decimals); null when its exposed or comparator patients on some axis are fewer than the minimum cell size (listed in `suppressed`)" }),
  adverse_event_rate: Schema.NullOr(Schema.Finite).annotate({ description: "Adverse events of the drug per cohort patient in the data window (4 decimals); null when the events are fewer than the minimum cell size (but not zero; listed in `suppressed`)" }),
  axis_breakdown: Schema.Record(Schema.String, AxisOutcome).annotate({ description: "Per target axis, canonical order" })
})

/**
 * The view representation's `view_data` (src/plugin/viewData.ts): per target axis, the
 * standardized effect (Cohen's d) the efficacy score averages, with its 95 % interval.
 */
export const DrugOutcomesViewData = Schema.Struct({
  effects: Schema.Array(Schema.Struct({
    axis: Schema.String,
    d: Schema.NullOr(Schema.Finite).annotate({ description: "The axis's Cohen's d, exposed − comparable unexposed (3 decimals; null when a small cell)" }),
    ci_low: Schema.NullOr(Schema.Finite).annotate({ description: "d − 1.96 × its standard error (the stratified difference's, over the dataset's reference SD)" }),
    ci_high: Schema.NullOr(Schema.Finite),
    exposed: Schema.NullOr(Schema.Int).annotate({ description: "Cohort patients compared on the axis" }),
    comparators: Schema.NullOr(Schema.Int).annotate({ description: "Comparable unexposed patients" })
  })),
  network: Schema.optionalKey(Schema.suspend(() => DrugNetworkEffects)).annotate({ description: "Across a network of sites only: each axis's sites and pooled effects (docs/network.md)" }),
  sites: Schema.optionalKey(Schema.suspend(() => ForestRows)).annotate({ description: "Across a network of sites only: the forest plot's rows, per axis each site then the pooled estimate" })
})

const Figure = Schema.NullOr(Schema.Finite)
const Count = Schema.NullOr(Schema.Int)

/**
 * The partial representation's `partial` (src/plugin/viewData.ts): what a network coordinator pools
 * (docs/network.md). The cohort's adverse events; per target axis the site's Cohen's d and its
 * standard error (pooled by meta-analysis: each site stratifies against its own comparators), and
 * the sums the correlation and the trend test are exactly pooled from. Unrounded.
 */
export const DrugOutcomesPartial = Schema.Struct({
  events: Count.annotate({ description: "Adverse events of the drug in the cohort" }),
  axes: Schema.Array(Schema.Struct({
    axis: AxisCode,
    d: Figure.annotate({ description: "Cohen's d (null without comparators)" }),
    se: Figure.annotate({ description: "Its standard error" }),
    exposed: Count,
    comparators: Count,
    pairs: Count.annotate({ description: "Patients behind the correlation" }),
    sum_x: Figure,
    sum_y: Figure,
    sum_xx: Figure,
    sum_yy: Figure,
    sum_xy: Figure,
    slopes: Count.annotate({ description: "Patients with a slope on the drug" }),
    slope_sum: Figure,
    slope_squares: Figure
  })).annotate({ description: "Per target axis, canonical order; x the adherence (PDC), y the axis change" })
})

/** A pooled effect with its interval, as a forest plot's row gives it. */
const Pooled = Schema.Struct({ d: Schema.Finite, ci_low: Schema.Finite, ci_high: Schema.Finite })

/**
 * Across a network of sites, per target axis: each site's d and the pooled ones (fixed effect;
 * DerSimonian–Laird; REML with the Hartung–Knapp interval, the answer's), τ², I², Q and its p, the
 * prediction interval (docs/network.md). In the network answer's view representation only.
 */
export const DrugNetworkEffects = Schema.Array(Schema.Struct({
  axis: Schema.String,
  sites: Schema.Array(Schema.Struct({
    site: Schema.String,
    d: Schema.Finite,
    ci_low: Schema.Finite,
    ci_high: Schema.Finite,
    weight: Schema.Finite.annotate({ description: "The site's share of the REML random-effects weights" })
  })),
  fixed: Pooled,
  dersimonian_laird: Pooled,
  reml_hartung_knapp: Pooled,
  tau2_dl: Schema.Finite,
  tau2_reml: Schema.Finite,
  i2: Schema.Finite,
  q: Schema.Finite,
  q_p: Schema.NullOr(Schema.Finite),
  prediction_low: Schema.NullOr(Schema.Finite),
  prediction_high: Schema.NullOr(Schema.Finite)
}))

/** The network forest plot's rows: per axis each site's d, then the pooled REML estimate with its Hartung–Knapp interval. */
export const ForestRows = Schema.Array(Schema.Struct({
  axis: Schema.String,
  site: Schema.String.annotate({ description: "The site, or \"pooled\" for the random-effects row" }),
  d: Schema.Finite,
  ci_low: Schema.Finite,
  ci_high: Schema.Finite,
  weight: Schema.NullOr(Schema.Finite).annotate({ description: "The site's share of the random-effects weights; null on the pooled row" })
}))
