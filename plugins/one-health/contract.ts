/** The one-health domain's contract: path, schemas, cost, errors and examples, without its code (what a typed client imports). */
import { defineContract, withAnswers } from "../../src/plugin/contract.ts"
import answers from "./example-answers.json" with { type: "json" }
import { view } from "./view.ts"
import { ALERT_LEVELS, ONE_HEALTH_QUERY_TYPES, OneHealthRequest, OneHealthResponse, OneHealthViewData, RISK_LEVELS } from "./schema.ts"

export const contract = withAnswers(answers, defineContract({
  name: "one-health",
  version: "1.0.0",
  engine: "^2.5.0",
  path: "/v1/one-health",
  summary: "Zoonotic signals: whether animal cases lead human cases, by how many days, with an alert level, a risk level and a recommendation",
  description:
    "Puts the weekly animal and human counts on the log(1 + count) scale, prewhitens both with the animal series' AR(p) filter " +
    "(p ≤ 6 by AIC), cross-correlates them at lags of 0–56 days (animal leading), and reports a lead when the largest " +
    "correlation is positive and its max-statistic permutation p-value (999 permutations) is below 0.05. The alert level " +
    "combines that finding with recent animal activity; the zoonotic risk combines it with the host's documented potential " +
    "(plugins/one-health/zoonotic-potential.json). See docs/analytics.md.",
  request: OneHealthRequest,
  response: OneHealthResponse,
  hcc_cost: 5.0,
  errors: [
    { code: "unknown_species", status: 422, description: "The species is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "unknown_condition", status: 422, description: "The condition is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "unknown_region", status: 422, description: "The region is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "series_not_found", status: 422, description: "The dataset has no surveillance series for this species, condition and region; suggestions lists the species that have one." },
    { code: "cohort_too_small", status: 422, description: "The human series holds fewer cases than the minimum cell size (`context.minimum`): nothing about it is published." }
  ],
  vocabularies: { one_health_query_type: ONE_HEALTH_QUERY_TYPES, alert_level: ALERT_LEVELS, zoonotic_risk: RISK_LEVELS },
  // Only the human cases are people; the answer publishes no count of them.
  // Weekly human counts are counts of people: a week with 1 to 10 cases is withheld.
  disclosure: { counts: ["/view_data/weeks/*/human"] },
  view,
  viewData: OneHealthViewData,
  examples: [
    {
      name: "sample",
      summary: "Poultry and human avian influenza in South-east Asia",
      request: { query_type: "cross_species_correlation", human_condition: "avian_influenza", animal_species: "poultry", geographic_scope: "southeast_asia" },
      expect: { correlation_found: true, temporal_lag: "14_days" }
    }
  ]
}))
