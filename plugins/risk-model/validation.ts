/**
 * How the risk models are judged and how sure their coefficients are: cluster-robust covariance
 * (clusters = patients), held-out AUC, calibration slope and Brier score (docs/analytics.md#risk-model).
 */
import * as Effect from "effect/Effect"
import type { GlmFamily, KernelsService } from "../../src/plugin/experimental.ts"

/** Held-out performance: fitted on even patient ids, scored on odd ones. */
export interface Validation {
  readonly rows: number
  readonly events: number
  /** Area under the ROC curve of the predicted probability (Mann–Whitney, ties counted half). */
  readonly auc: number
  /** Slope and intercept of the logistic recalibration of the outcome on logit(predicted); 1 and 0 when calibrated. */
  readonly calibrationSlope: number
  readonly calibrationIntercept: number
  /** Mean squared difference between predicted probability and outcome. */
  readonly brier: number
}

/**
 * The cluster-robust (sandwich) covariance of a GLM's coefficients, clusters = patients (Liang &
 * Zeger 1986; the CR1 small-sample factor G/(G − 1) · (n − 1)/(n − p)): B·M·B with B the model
 * covariance (X'WX)⁻¹ and M = Σ_c u_c u_cᵀ, u_c = Σ over the cluster's rows of x_i (y_i − μ_i)
 * (the canonical-link score). Rows of one patient (several readmission rows) are not independent;
 * this is the covariance every standard error of the models comes from.
 */
export const clusterRobustCovariance = (
  family: GlmFamily, x: Float64Array, y: Float64Array, offset: Float64Array, n: number, p: number,
  beta: Float64Array, bread: Float64Array, cluster: Int32Array
): Float64Array => {
  // Each cluster's score u_c, added to M in the order clusters first appear: one at a time when the
  // clusters come in ascending order (the models' rows are in patient order), else all kept to the end.
  let adjacent = true
  for (let i = 1; i < n && adjacent; i++) adjacent = cluster[i]! >= cluster[i - 1]!
  const slot = adjacent ? undefined : new Map<number, number>()
  const scores = new Float64Array(adjacent ? p : n * p)
  const meat = new Float64Array(p * p)
  /** M += u uᵀ, the lower triangle (mirrored below: u_j·u_k = u_k·u_j exactly); zero terms skipped (exact zeros). */
  const addOuter = (u: Float64Array) => {
    for (let j = 0; j < p; j++) {
      const uj = u[j]!
      if (uj === 0) continue
      for (let k = 0; k <= j; k++) meat[j * p + k]! += uj * u[k]!
    }
  }
  let g = 0
  let current = 0
  for (let i = 0; i < n; i++) {
    let eta = offset[i]!
    for (let j = 0; j < p; j++) eta += x[i * p + j]! * beta[j]!
    const mu = family === "poisson" ? Math.exp(eta) : 1 / (1 + Math.exp(-eta))
    const r = y[i]! - mu
    let at: number
    if (slot === undefined) {
      if (i === 0 || cluster[i] !== current) {
        if (i > 0) addOuter(scores)
        scores.fill(0)
        current = cluster[i]!
        g++
      }
      at = 0
    } else {
      let c = slot.get(cluster[i]!)
      if (c === undefined) slot.set(cluster[i]!, c = g++)
      at = c * p
    }
    for (let j = 0; j < p; j++) scores[at + j]! += x[i * p + j]! * r
  }
  if (slot === undefined) {
    if (n > 0) addOuter(scores)
  } else {
    for (let c = 0; c < g; c++) addOuter(scores.subarray(c * p, (c + 1) * p))
  }
  for (let j = 0; j < p; j++) for (let k = j + 1; k < p; k++) meat[j * p + k] = meat[k * p + j]!
  const factor = g > 1 && n > p ? (g / (g - 1)) * ((n - 1) / (n - p)) : 1
  const bm = new Float64Array(p * p)
  for (let j = 0; j < p; j++) for (let k = 0; k < p; k++) {
    let sum = 0
    for (let l = 0; l < p; l++) sum += bread[j * p + l]! * meat[l * p + k]!
    bm[j * p + k] = sum
  }
  const out = new Float64Array(p * p)
  for (let j = 0; j < p; j++) for (let k = 0; k < p; k++) {
    let sum = 0
    for (let l = 0; l < p; l++) sum += bm[j * p + l]! * bread[l * p + k]!
    out[j * p + k] = factor * sum
  }
  return out
}

/** Predicted probability of at least one event for each row (given its offset). */
export const rowProbabilities = (family: GlmFamily, eta: Float64Array, offset: Float64Array) =>
  Float64Array.from(eta, (e, i) => (family === "poisson" ? -Math.expm1(-Math.exp(e + offset[i]!)) : 1 / (1 + Math.exp(-e))))

/** AUC by the Mann–Whitney statistic with average ranks for ties. */
export const auc = (prob: Float64Array, outcome: Float64Array): number => {
  const order = [...prob.keys()].sort((a, b) => prob[a]! - prob[b]!)
  let rankSum = 0
  let positives = 0
  for (let i = 0; i < order.length;) {
    let j = i
    while (j + 1 < order.length && prob[order[j + 1]!] === prob[order[i]!]) j++
    const rank = (i + j) / 2 + 1
    for (let k = i; k <= j; k++) {
      if (outcome[order[k]!]! > 0) {
        rankSum += rank
        positives++
      }
    }
    i = j + 1
  }
  const negatives = order.length - positives
  return positives === 0 || negatives === 0 ? Number.NaN : (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives)
}

/** The recalibration fit's design (intercept, logit of the prediction), the Brier sum and the events. */
const recalibrationDesign = (prob: Float64Array, outcome: Float64Array) => {
  const n = prob.length
  const x = new Float64Array(2 * n)
  let brier = 0
  let events = 0
  for (let i = 0; i < n; i++) {
    const q = Math.min(Math.max(prob[i]!, 1e-9), 1 - 1e-9)
    x[2 * i] = 1
    x[2 * i + 1] = Math.log(q / (1 - q))
    brier += (prob[i]! - outcome[i]!) ** 2
    events += outcome[i]!
  }
  return { x, brier, events }
}


/** Held-out metrics of predicted probabilities against 0/1 outcomes (recalibration fit in WASM). */
export const validate = (kernels: KernelsService, prob: Float64Array, outcome: Float64Array) =>
  Effect.gen(function*() {
    const n = prob.length
    const { x, brier, events } = recalibrationDesign(prob, outcome)
    const recalibration = yield* kernels.fitGlm(x, outcome, new Float64Array(n), n, 2, "logistic")
    return {
      rows: n,
      events,
      auc: auc(prob, outcome),
      calibrationSlope: recalibration.beta[1]!,
      calibrationIntercept: recalibration.beta[0]!,
      brier: brier / n
    } satisfies Validation
  })

