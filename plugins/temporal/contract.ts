/** The temporal domain's contract: path, schemas, cost, errors and examples, without its code (what a typed client imports). */
import { defineContract, MODEL_NAMES, RULE_NAMES, withAnswers } from "../../src/plugin/contract.ts"
import answers from "./example-answers.json" with { type: "json" }
import { view } from "./view.ts"
import { INTERVALS, TemporalRequest, TemporalResponse, TemporalViewData, URGENCY_LEVELS } from "./schema.ts"

export const contract = withAnswers(answers, defineContract({
  name: "temporal",
  version: "1.0.0",
  engine: "^2.5.0",
  path: "/v1/temporal",
  summary: "How health behaviour decays over time: the 28 decay rules, the best-fitting trajectory model and its prediction",
  description:
    "Fits stable, linear, exponential-decay, exponential-plateau and logistic models to each axis series, selects by AICc, " +
    "predicts `predict_ahead` intervals (clamped to [0, 10], rounded to 3 decimals), evaluates the 28 decay rules and derives " +
    "an intervention urgency. See docs/temporal.md for every rule, model and level.",
  request: TemporalRequest,
  response: TemporalResponse,
  hcc_cost: 7.5,
  vocabularies: {
    interval: INTERVALS,
    intervention_urgency: URGENCY_LEVELS,
    decay_model: MODEL_NAMES,
    decay_rule: RULE_NAMES
  },
  view,
  viewData: TemporalViewData,
  examples: [
    {
      name: "plateau",
      summary: "A nutritional axis settling towards a plateau, with a physical axis in slow decline",
      request: {
        patient_axes: {
          PO: [7.2, 7.1, 7.0, 6.8, 6.7, 6.6, 6.4, 6.3, 6.2, 6.0, 5.9, 5.8],
          NM: [8, 6.988, 6.215, 5.624, 5.171, 4.825, 4.56, 4.358, 4.203, 4.085, 3.994, 3.925]
        },
        interval: "monthly",
        predict_ahead: 6
      },
      expect: { decay_model: "exponential_plateau" }
    }
  ]
}))
