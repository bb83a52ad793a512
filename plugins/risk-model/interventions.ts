/**
 * The documented rules that recommend interventions for a profile (docs/analytics.md#risk-model).
 * Each rule reads the computed answer (probability, the profile's contributions), never the
 * request alone: a factor only triggers its intervention when, in this model, it raises this
 * patient's risk by at least FACTOR_THRESHOLD on the log scale (≈ 5 % relative).
 */
import type { Axis } from "../../src/plugin/Plugin.ts"
import type { RiskType } from "./model.ts"

/** A contribution at least this large (log rate or log odds) triggers its factor's intervention. */
export const FACTOR_THRESHOLD = 0.05
/** A probability at least this large within the horizon calls for care coordination. */
export const HIGH_RISK_PROBABILITY = 0.2
/** A readmission probability at least this large calls for an early follow-up visit. */
export const READMISSION_FOLLOW_UP_PROBABILITY = 0.1

/** The intervention for an axis that raises the risk (a score below the population's). */
export const AXIS_INTERVENTIONS: Readonly<Record<Axis, string>> = {
  PO: "physical_activity_program",
  NM: "nutrition_counselling",
  ER: "behavioural_health_support",
  SC: "social_support_program",
  RS: "spiritual_care_referral",
  ES: "home_environment_assessment",
  TA: "digital_health_coaching",
  PV: "social_needs_navigation"
}

/** The intervention for a condition that raises the risk. */
export const CONDITION_INTERVENTIONS: Readonly<Record<string, string>> = {
  heart_failure: "heart_failure_disease_management",
  copd: "pulmonary_rehabilitation",
  type_2_diabetes: "diabetes_self_management_education",
  chronic_kidney_disease: "nephrology_co_management",
  hypertension: "home_blood_pressure_monitoring",
  depression: "behavioural_health_support",
  asthma: "asthma_action_plan",
  obesity: "weight_management_program"
}

/** The distinct interventions the rules recommend, sorted. */
export const recommendedInterventions = (
  riskType: RiskType,
  probability: number,
  contributions: ReadonlyArray<{ readonly factor: string; readonly weight: number }>
): Array<string> => {
  const out = new Set<string>()
  if (probability >= HIGH_RISK_PROBABILITY) out.add("care_coordination")
  if (riskType === "readmission" && probability >= READMISSION_FOLLOW_UP_PROBABILITY) out.add("follow_up_visit_within_7_days")
  for (const { factor, weight } of contributions) {
    if (weight < FACTOR_THRESHOLD) continue
    const intervention = AXIS_INTERVENTIONS[factor as Axis] ?? CONDITION_INTERVENTIONS[factor]
    if (intervention !== undefined) out.add(intervention)
  }
  return [...out].sort()
}
