/** The clinical domain's contract: path, schemas, cost, errors and examples, without its code (what a typed client imports). */
import { defineContract, withAnswers } from "../../src/plugin/contract.ts"
import answers from "./example-answers.json" with { type: "json" }
import { view } from "./view.ts"
import { ClinicalRequest, ClinicalResponse, DIRECTIONS } from "./schema.ts"

export const contract = withAnswers(answers, defineContract({
  name: "clinical",
  version: "1.0.0",
  engine: "^2.4.0",
  path: "/v1/clinical",
  summary: "A clinical question in plain English answered with a reasoning chain of computed facts: similar patients, axis trends, drug interactions",
  description:
    "The query is read for drugs (generic or brand names), conditions, axes, a direction and a duration. The evidence: patients " +
    "with every named drug and condition, their encounters, each named axis's level and within-patient trend against all " +
    "patients, interactions of the named drugs from a curated knowledge base citing the prescribing information, the drugs' " +
    "adverse events, and the correlations of the requested axes (WASM). response_format chooses how the chain is written: " +
    "structured, natural_language or sql_like (the SQL that produced each number). A query with nothing recognisable is 422 " +
    "query_not_understood; a partly understood one says so and lowers confidence. See docs/analytics.md#clinical.",
  request: ClinicalRequest,
  response: ClinicalResponse,
  hcc_cost: 2.5,
  errors: [
    { code: "query_not_understood", status: 422, description: "The query names no drug, condition, axis or direction the dataset knows; suggestions name near misses." }
  ],
  vocabularies: { direction: DIRECTIONS },
  disclosure: { counts: ["/contributing_data/encounters"], statistics: ["/contributing_data/axis_correlations/*"] },
  view,
  examples: [
    {
      name: "sample",
      summary: "The spec's sample: a patient on metformin and lisinopril with a declining NM axis",
      request: {
        query: "Patient on metformin + lisinopril with declining NM axis. Suggest intervention.",
        axes: ["PO", "NM", "ER"],
        time_range: "6_months",
        response_format: "structured"
      }
    }
  ]
}))
