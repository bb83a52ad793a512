/** The population domain's contract: path, schemas, cost, errors and examples, without its code (what a typed client imports). */
import { AXES, defineContract, withAnswers } from "../../src/plugin/contract.ts"
import answers from "./example-answers.json" with { type: "json" }
import { view } from "./view.ts"
import { ANALYSIS_TYPES, GRANULARITIES, MIN_COHORT, PARTIAL_STATISTICS, PopulationPartial, PopulationRequest, PopulationResponse, PopulationViewData } from "./schema.ts"

export const contract = withAnswers(answers, defineContract({
  name: "population",
  version: "1.0.0",
  engine: "^2.11.0",
  path: "/v1/population",
  summary: "Axis trends of a cohort over time: per-period averages and the significance of the trend",
  description:
    "Selects the cohort (age range at the dataset's as_of date, sex, regions, conditions, drugs, bounds on mean axis scores), " +
    "averages its recorded axis scores per calendar period (`month` YYYY-MM, `quarter` Q<n>_<year>, `year` YYYY; " +
    "periods with no score are left out) and tests the trend: each patient's least-squares slope over the data window, " +
    "a one-sample t-test of their mean per axis, the smallest p-value Bonferroni-adjusted for the number of axes (an upper " +
    "bound on the chance probability: read it as 'at most'). " +
    `Cohorts under ${MIN_COHORT} patients (or the service's minimum cell size, if larger) are not reported (422 cohort_too_small); ` +
    "a period average resting on fewer scored patients than the minimum cell size is null. See docs/analytics.md.",
  request: PopulationRequest,
  response: PopulationResponse,
  viewData: PopulationViewData,
  partial: PopulationPartial,
  hcc_cost: 10.0,
  errors: [
    { code: "cohort_too_small", status: 422, description: `Fewer than ${MIN_COHORT} patients (or the minimum cell size, \`context.minimum\`) match the cohort definition; widen it.` },
    { code: "unknown_condition", status: 422, description: "A condition is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "unknown_drug", status: 422, description: "A drug is not in the dataset's vocabulary; see suggestions and the catalog." },
    { code: "unknown_region", status: 422, description: "A region is not in the dataset's vocabulary; see suggestions and the catalog." }
  ],
  vocabularies: { analysis_type: ANALYSIS_TYPES, granularity: GRANULARITIES },
  disclosure: {
    cohort: "/cohort_size",
    counts: [...AXES.map((axis) => `/view_data/periods/*/n_${axis}`), ...AXES.map((axis) => `/partial/periods/*/patients_${axis}`), "/partial/slopes/*/n"],
    statistics: [
      ...AXES.map((axis) => `/periods/*/avg_${axis}`),
      "/statistical_significance",
      ...AXES.flatMap((axis) => [`/view_data/periods/*/low_${axis}`, `/view_data/periods/*/high_${axis}`]),
      ...AXES.flatMap((axis) => PARTIAL_STATISTICS.map((field) => `/partial/periods/*/${field}_${axis}`)),
      "/partial/slopes/*/sum",
      "/partial/slopes/*/sum_squares"
    ]
  },
  view,
  examples: [
    {
      name: "sample",
      summary: "Quarterly trend of adults 45–65 with type 2 diabetes whose mean PO score is at least 5",
      request: {
        cohort_definition: { age_range: "45-65", axes_threshold: { PO: { min: 5.0 } }, conditions: ["type_2_diabetes"] },
        analysis_type: "trend",
        granularity: "quarterly"
      },
      expect: { analysis_type: "trend" }
    },
    {
      name: "heart_failure_physical",
      summary: "The physical axis of patients with heart failure, yearly",
      request: { cohort_definition: { conditions: ["heart_failure"] }, analysis_type: "trend", granularity: "yearly", axes: ["PO"] },
      expect: { analysis_type: "trend" }
    }
  ]
}))
