/** Questions the equality tests ask two servers: each one new to both (cold), and some that fail. */
export const COLD: ReadonlyArray<readonly [string, unknown]> = [
  ["/v1/population", { analysis_type: "trend" }],
  ["/v1/population", { cohort_definition: { age_range: "20-44", sex: "female" }, analysis_type: "trend", granularity: "monthly", axes: ["NM", "ER"] }],
  ["/v1/population", { cohort_definition: { conditions: ["copd"], axes_threshold: { RS: { max: 6 } } }, analysis_type: "distribution" }],
  ["/v1/population", { cohort_definition: { conditions: ["no_such_condition"] }, analysis_type: "trend" }],
  ["/v1/drug-outcomes", { drug: "lisinopril" }],
  ["/v1/drug-outcomes", { drug: "atorvastatin", outcome_type: "safety" }],
  ["/v1/drug-outcomes", { drug: "metfromin" }],
  ["/v1/clinical", { query: "Patient on sertraline and warfarin with depression, ER declining?", axes: ["ER", "NM"], time_range: "1_year" }],
  ["/v1/clinical", { query: "amlodipine with hypertension", axes: ["PO"], time_range: "90_days", response_format: "sql_like" }],
  ["/v1/risk-model", { patient_profile: { axes_snapshot: { PO: 3.1, NM: 4.4, ER: 5.0 }, age_range: "75-84", conditions: ["heart_failure", "copd"] }, risk_type: "readmission", horizon: "30_days" }],
  ["/v1/device-outcomes", { device_category: "cardiac_pacemaker", outcome_metrics: ["complication_rate", "revision_rate"] }],
  ["/v1/one-health", { query_type: "cross_species_correlation", human_condition: "avian_influenza", animal_species: "poultry", geographic_scope: "europe" }]
]
