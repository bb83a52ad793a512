/** The drug-outcomes domain's contract: path, schemas, cost, errors and examples, without its code (what a typed client imports). */
import { defineContract, withAnswers } from "../../src/plugin/contract.ts"
import answers from "./example-answers.json" with { type: "json" }
import { networkView, view } from "./view.ts"
import { DrugOutcomesPartial, DrugOutcomesRequest, DrugOutcomesResponse, DrugOutcomesViewData, OUTCOME_TYPES, TRENDS } from "./schema.ts"

export const contract = withAnswers(answers, defineContract({
  name: "drug-outcomes",
  version: "1.0.0",
  engine: "^2.13.0",
  path: "/v1/drug-outcomes",
  summary: "Outcomes of patients on a drug: standardized effect on the target axes, adverse-event rate, per-axis correlation with adherence and trend",
  description:
    "The cohort is the patients with a course of the drug in the data window (restricted by outcome_type). efficacy_score is the " +
    "mean over the target axes of the standardized difference between the cohort's scores while on the drug and those of " +
    "unexposed patients of the same indication, age band and sex (direct standardization), in units of the axis's reference SD " +
    "(patients' whole-window means within age band × sex; the same for every drug). adverse_event_rate counts the " +
    "drug's adverse events per cohort patient in the window. See docs/analytics.md.",
  request: DrugOutcomesRequest,
  response: DrugOutcomesResponse,
  hcc_cost: 3.0,
  errors: [
    { code: "unknown_drug", status: 422, description: "The drug is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "cohort_too_small", status: 422, description: "The cohort is smaller than the minimum cell size (`context.minimum`) or than population_size (`context.required`), or no comparable unexposed patients exist." },
    { code: "adherence_unknown", status: 422, description: "outcome_type adherence, but no course of the drug has a known adherence: the dataset has no dispensing records for it (imported data); ask for efficacy or adverse_events." }
  ],
  vocabularies: { outcome_type: OUTCOME_TYPES, trend: TRENDS },
  disclosure: {
    cohort: "/cohort_size",
    counts: [
      "/view_data/effects/*/exposed",
      "/view_data/effects/*/comparators",
      "/partial/events",
      ...["exposed", "comparators", "pairs", "slopes"].map((f) => `/partial/axes/*/${f}`)
    ],
    statistics: [
      "/efficacy_score",
      "/adverse_event_rate",
      "/axis_breakdown/*/correlation",
      "/axis_breakdown/*/trend",
      "/view_data/effects/*/d",
      "/view_data/effects/*/ci_low",
      "/view_data/effects/*/ci_high",
      ...["d", "se", "sum_x", "sum_y", "sum_xx", "sum_yy", "sum_xy", "slope_sum", "slope_squares"].map((f) => `/partial/axes/*/${f}`)
    ]
  },
  view,
  networkView,
  viewData: DrugOutcomesViewData,
  partial: DrugOutcomesPartial,
  examples: [
    {
      name: "sample",
      summary: "Metformin efficacy over NM and PO in a cohort of at least 500",
      request: { drug: "metformin", outcome_type: "efficacy", axes_filter: ["NM", "PO"], population_size: "minimum_500" },
      expect: { drug: "metformin", outcome_type: "efficacy" }
    }
  ]
}))
