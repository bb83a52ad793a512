/** The names behind the kernels' codes: the decay rules (a mask's bits) and the trajectory models (a model index). */

/** Stable rule names; bit (n − 1) of a mask is rule n. */
export const RULE_NAMES = [
  "rule_01_sustained_decline",
  "rule_02_sharp_drop",
  "rule_03_below_critical",
  "rule_04_below_baseline",
  "rule_05_accelerating_decline",
  "rule_06_exponential_decay_fit",
  "rule_07_plateau_after_decline",
  "rule_08_volatility_spike",
  "rule_09_recovery_stalled",
  "rule_10_rebound",
  "rule_11_short_half_life",
  "rule_12_projected_critical",
  "rule_13_significant_linear_decline",
  "rule_14_correlated_axis_drag",
  "rule_15_multi_axis_decline",
  "rule_16_somatic_pair_decline",
  "rule_17_resilience_pair_decline",
  "rule_18_step_change",
  "rule_19_oscillation",
  "rule_20_floor_effect",
  "rule_21_ceiling_loss",
  "rule_22_slow_erosion",
  "rule_23_missed_recovery_window",
  "rule_24_variance_collapse",
  "rule_25_outlier_low",
  "rule_26_trend_reversal_down",
  "rule_27_divergence_from_other_axes",
  "rule_28_composite_low"
] as const

/** Model names by code. */
export const MODEL_NAMES = ["stable", "linear", "exponential_decay", "exponential_plateau", "logistic"] as const
