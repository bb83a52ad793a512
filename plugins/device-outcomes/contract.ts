/** The device-outcomes domain's contract: path, schemas, cost, errors and examples, without its code (what a typed client imports). */
import { defineContract, withAnswers } from "../../src/plugin/contract.ts"
import answers from "./example-answers.json" with { type: "json" }
import { view } from "./view.ts"
import { DeviceOutcomesPartial, DeviceOutcomesRequest, DeviceOutcomesResponse, DeviceOutcomesViewData } from "./schema.ts"

export const contract = withAnswers(answers, defineContract({
  name: "device-outcomes",
  version: "1.0.0",
  engine: "^2.13.0",
  path: "/v1/device-outcomes",
  summary: "Outcomes of a device category pooled across studies (random effects: binomial-normal for rates, DerSimonian–Laird for scores)",
  description:
    "Takes the implants of the device placed in the last `time_period` months up to the dataset's as_of date, estimates each " +
    "requested metric per study (events among implants for `*_rate` metrics, mean score with its variance otherwise), and " +
    "pools the studies by random effects: a rate by the binomial-normal (logistic random-effects) model fitted by maximum " +
    "likelihood, reported as the median study's rate; a mean score by DerSimonian–Laird. See docs/analytics.md.",
  request: DeviceOutcomesRequest,
  response: DeviceOutcomesResponse,
  hcc_cost: 3.0,
  errors: [
    { code: "unknown_metric", status: 400, description: "An outcome metric is not in the dataset's vocabulary; `errors` names each one and the known metrics." },
    { code: "unknown_device", status: 422, description: "The device category is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "cohort_too_small", status: 422, description: "Fewer implants of the device in the period than the minimum cell size (`context.minimum`), or too few to estimate; widen time_period." }
  ],
  disclosure: {
    cohort: "/sample_size",
    counts: ["/view_data/forest/*/n", "/partial/studies/*/implants", "/partial/sums/*/n"],
    statistics: [
      "/outcomes/*",
      ...["estimate", "ci_low", "ci_high", "tau2", "i2", "q", "q_p", "pi_low", "pi_high", "weight"].map((f) => `/view_data/forest/*/${f}`),
      "/partial/sums/*/sum",
      "/partial/sums/*/squares"
    ]
  },
  view,
  viewData: DeviceOutcomesViewData,
  partial: DeviceOutcomesPartial,
  examples: [
    {
      // Satisfaction first, over the five years the data holds: each study's score rests on all its
      // implants, so every study's row shows; a rate's studies hold too few events each to publish
      // (the small-cell rule), its pooled row rests on them all.
      name: "knee",
      summary: "Knee implants of the last five years: patient satisfaction and the complication rate, per study and pooled",
      request: { device_category: "knee_implant", outcome_metrics: ["patient_satisfaction", "complication_rate"], time_period: "60_months" },
      expect: { device_category: "knee_implant" }
    }
  ]
}))
