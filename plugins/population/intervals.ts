/**
 * What population's view and partial representations add to each period mean (`view_data`,
 * `partial`): its patients and 95 % interval for the chart; its sums and moments for a network
 * coordinator, which pools them across sites exactly (docs/network.md).
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
import { type DisclosureService, roundTo, studentTQuantile } from "../../src/plugin/Plugin.ts"
import type { PanelPeriodsResult } from "../../src/plugin/experimental.ts"
import { PARTIAL_STATISTICS } from "./schema.ts"

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

/** The representation a request asked for beyond the answer, if any. */
export type Extra = "view" | "partial"

/**
 * One period mean's additions, written into `row` (`view_data.periods[i]` or `partial.periods[i]`)
 * with what each rests on recorded: the view's patients (a count) and interval ends; the partial's
 * patients, scores, sum of scores and the moments of the per-patient sums (all resting on the
 * patients, so a small cell is withheld whole).
 */
export const addCell = (
  extra: Extra, row: Record<string, string | number | null>, pointer: string, disclosure: DisclosureService,
  axis: string, patients: number, count: number, sum: number, moments: PanelPeriodsResult, at: number
): void => {
  if (extra === "view") {
    const [low, high] = periodInterval(patients, count, sum, moments.sumSquares[at]!, moments.sumCounts[at]!, moments.countSquares[at]!) ?? [null, null]
    Object.assign(row, { [`n_${axis}`]: patients, [`low_${axis}`]: low, [`high_${axis}`]: high })
    for (const field of ["low", "high"]) disclosure.rests(`${pointer}/${field}_${axis}`, patients)
    return
  }
  Object.assign(row, {
    [`patients_${axis}`]: patients,
    [`scores_${axis}`]: count,
    [`sum_${axis}`]: sum,
    [`sum_squares_${axis}`]: moments.sumSquares[at]!,
    [`sum_counts_${axis}`]: moments.sumCounts[at]!,
    [`count_squares_${axis}`]: moments.countSquares[at]!
  })
  for (const field of PARTIAL_STATISTICS) disclosure.rests(`${pointer}/${field}_${axis}`, patients)
}
