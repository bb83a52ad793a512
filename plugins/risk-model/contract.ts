/** The risk-model domain's contract: path, schemas, cost, errors and examples, without its code (what a typed client imports). */
import { defineContract, withAnswers } from "../../src/plugin/contract.ts"
import answers from "./example-answers.json" with { type: "json" }
import { view } from "./view.ts"
import { RISK_TYPES, RiskModelRequest, RiskModelResponse, RiskModelViewData } from "./schema.ts"

export const contract = withAnswers(answers, defineContract({
  name: "risk-model",
  version: "1.0.0",
  engine: "^2.5.0",
  path: "/v1/risk-model",
  summary: "Probability of hospitalization, readmission or health decline within a horizon for a patient profile, with its largest contributing factors",
  description:
    "One model per risk type, fitted on the population when the dataset loads (never per request): a Poisson model of " +
    "admissions per year for hospitalization, logistic models for 30-day readmission and for health decline. Features: age, " +
    "conditions and the eight axis means. The horizon turns the model's rate or probability into a probability over that many " +
    "days under a constant hazard (for health_decline a heuristic: the model gives a probability over its fitted interval, not a " +
    "hazard). Coefficient standard errors are cluster-robust by patient. Held-out AUC, calibration and Brier score are in docs/analytics.md.",
  request: RiskModelRequest,
  response: RiskModelResponse,
  hcc_cost: 5.0,
  errors: [
    { code: "unknown_condition", status: 422, description: "A condition is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "model_unavailable", status: 422, description: "The dataset cannot support this risk type's model (health_decline needs at least 12 months of axis scores)." }
  ],
  vocabularies: { risk_type: RISK_TYPES },
  disclosure: { statistics: ["/probability", "/contributing_factors/*/weight", "/view_data/probability_low", "/view_data/probability_high"] },
  view,
  viewData: RiskModelViewData,
  examples: [
    {
      name: "sample",
      summary: "Hospitalization within 90 days for a 55–64-year-old with type 2 diabetes and hypertension",
      request: {
        patient_profile: { axes_snapshot: { PO: 6.2, NM: 4.1, ER: 7.8 }, age_range: "55-64", conditions: ["type_2_diabetes", "hypertension"] },
        risk_type: "hospitalization",
        horizon: "90_days"
      },
      expect: { risk_type: "hospitalization" }
    }
  ]
}))
