/** Request and response of POST /v1/device-outcomes. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Code, distinctNonEmpty, Months } from "../../src/plugin/contract.ts"

/** The request body. */
export const DeviceOutcomesRequest = Schema.Struct({
  device_category: Code.annotate({ description: "Device category code (catalog vocabulary `device`), e.g. knee_implant, or a standard code of an implant procedure or device type, e.g. snomed:609588000" }),
  outcome_metrics: distinctNonEmpty(Code).annotate({
    description: "Metric codes (catalog vocabulary `device_metric`); `*_rate` metrics are proportions of implants with the event"
  }),
  time_period: Months.pipe(Schema.withDecodingDefaultKey(Effect.succeed("12_months"))).annotate({
    description: "Implants placed in the last <n> calendar months up to the dataset's as_of date (default 12_months)"
  })
})

/** The response body (the platform adds hcc_cost). */
export const DeviceOutcomesResponse = Schema.Struct({
  device_category: Schema.String,
  studies_analyzed: Schema.Int.annotate({ description: "Studies with at least one implant of the device in the period" }),
  outcomes: Schema.Record(Schema.String, Schema.NullOr(Schema.Finite)).annotate({
    description: "Each requested metric → its random-effects pooled estimate across studies (4 decimals); null when it would rest on fewer implants, " +
      "events or non-events than the minimum cell size (listed in `suppressed`)"
  }),
  sample_size: Schema.Int.annotate({ description: "Implants of the device placed in the period (rounded when the service rounds counts)" })
})

const Estimate = Schema.NullOr(Schema.Finite)

/** One row of the forest: a study, or the pooled estimate of its metric (last of the metric's rows). */
export const ForestRow = Schema.Struct({
  metric: Schema.String,
  kind: Schema.Literals(["study", "pooled"]),
  /** The study's id, or "pooled". */
  label: Schema.String,
  n: Schema.NullOr(Schema.Int).annotate({ description: "Implants behind the row (null when it would be a small cell)" }),
  estimate: Estimate,
  ci_low: Estimate,
  ci_high: Estimate,
  tau2: Estimate.annotate({ description: "Between-study variance (pooled rows; a rate's on the logit scale)" }),
  i2: Estimate.annotate({ description: "Share of the variation across studies beyond chance, 0–1 (pooled rows)" }),
  q: Estimate.annotate({ description: "Cochran's Q (pooled rows; a rate's on the logit scale)" }),
  q_p: Estimate.annotate({ description: "Q's p-value, χ² with k − 1 degrees of freedom (pooled rows of 2 studies or more)" }),
  pi_low: Estimate.annotate({ description: "95 % prediction interval of a new study's true value, low end (pooled rows of 3 studies or more)" }),
  pi_high: Estimate.annotate({ description: "95 % prediction interval, high end" }),
  weight: Estimate.annotate({ description: "The study's share of the random-effects weights, 0–1 (1 on pooled rows)" }),
  k: Schema.NullOr(Schema.Int).annotate({ description: "Studies pooled (pooled rows)" })
})

/** The view representation's `view_data` (src/plugin/viewData.ts): the forest plot's rows (forest.ts). */
export const DeviceOutcomesViewData = Schema.Struct({
  forest: Schema.Array(ForestRow).annotate({ description: "Per metric: each study, then the pooled estimate" })
})

/**
 * The partial representation's `partial` (src/plugin/viewData.ts): what a network coordinator
 * pools (docs/network.md). Each study's implants in the period, and per metric and study the
 * values' count, sum and sum of squares: the sites' sums per study are the union's, so the network
 * pools the same study estimates one service would.
 */
export const DeviceOutcomesPartial = Schema.Struct({
  studies: Schema.Array(Schema.Struct({ study: Schema.String, implants: Schema.NullOr(Schema.Int) })),
  sums: Schema.Array(Schema.Struct({
    metric: Schema.String,
    study: Schema.String,
    n: Schema.NullOr(Schema.Int).annotate({ description: "Implants with a value of the metric" }),
    sum: Schema.NullOr(Schema.Finite).annotate({ description: "Their sum (for a rate: the implants with the event)" }),
    squares: Schema.NullOr(Schema.Finite)
  }))
})
