/**
 * Each period mean's patients and 95 % interval: population's view representation (`view_data`).
 *
 * A period mean is a ratio m = Σ scores ÷ N over the scores recorded in the period, and a patient
 * scored several times in one period (a quarter, a year) gives correlated scores: its variance is
 * the linearized (cluster-robust) one of a ratio estimator with patients as clusters (Cochran,
 * Sampling Techniques, 3rd ed. 1977, §6.4; Williams, Biometrics 2000),
 *   V(m) = G ÷ (G − 1) · Σᵢ (Sᵢ − m·nᵢ)² ÷ N²,
 * over the G patients scored in the period, patient i's sum Sᵢ and count nᵢ there; and the
 * interval m ± t(0.975, G − 1)·√V. With one score per patient and period (monthly) it is the
 * textbook t interval of a mean, s ÷ √G. The sum over patients expands to
 * Σ Sᵢ² − 2m·Σ Sᵢnᵢ + m²·Σ nᵢ², the moments the panelPeriods kernel gives.
 */
import { roundTo, studentTQuantile } from "../../src/plugin/Plugin.ts"

/** The 95 % interval of a period mean from its moments, or undefined with fewer than 2 patients. */
export const periodInterval = (
  patients: number, count: number, sum: number, sumSquares: number, sumCounts: number, countSquares: number
): readonly [number, number] | undefined => {
  if (!(patients >= 2) || !(count > 0)) return undefined
  const mean = sum / count
  // Cancellation may leave a sum of squares a hair below zero when every patient's mean is the same.
  const residual = Math.max(0, sumSquares - 2 * mean * sumCounts + mean * mean * countSquares)
  const half = studentTQuantile(0.05, patients - 1) * Math.sqrt((patients / (patients - 1)) * residual) / count
  return [roundTo(mean - half, 3), roundTo(mean + half, 3)]
}
