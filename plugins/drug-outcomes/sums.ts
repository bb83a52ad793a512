/**
 * The per-stratum sums of a drug-outcomes comparison: for each target axis and stratum (indication
 * bits × age band × sex) the cohort's on-drug means and the comparators' whole-window means, the
 * cohort's slope sums, and the (adherence, change) pairs of the correlation.
 */
import { type Dataset, primed } from "../../src/plugin/experimental.ts"
import type { Cohort } from "./cohort.ts"
import { AGE_SEX_STRATA, type PerDataset } from "./perDataset.ts"

/** Per axis and stratum the sums (n, Σ, Σ²) of the cohort's on-drug means and of the comparators' whole-window means; the cohort's slope sums; the (adherence, change) pairs. */
export interface StratumSums {
  readonly exposedCells: Float64Array
  readonly comparatorCells: Float64Array
  /** Per axis: n, Σ, Σ² of the members' on-drug slopes. */
  readonly slopes: Float64Array
  readonly adh: ReadonlyArray<ReadonlyArray<number>>
  readonly change: ReadonlyArray<ReadonlyArray<number>>
}

/**
 * One pass over the patients for every axis; each sum still adds its patients in patient order.
 * The comparators are grouped by stratum (a counting sort, each group in patient order) and summed
 * one stratum and axis at a time, in locals.
 */
export const stratumSums = (
  data: Dataset,
  shared: PerDataset,
  cohort: Cohort,
  flags: ReadonlyArray<Uint8Array>,
  axisIndex: Int32Array,
  on: { readonly mean: Float64Array; readonly slope: Float64Array },
  pre: { readonly mean: Float64Array }
): StratumSums => {
  const n = data.patients.count
  const nAxes = axisIndex.length
  const nStrata = (1 << flags.length) * AGE_SEX_STRATA
  const sums: ExposedSums = {
    exposedCells: new Float64Array(nAxes * nStrata * 3),
    slopes: new Float64Array(nAxes * 3),
    adh: Array.from({ length: nAxes }, () => []),
    change: Array.from({ length: nAxes }, () => []),
    perStratum: new Int32Array(nStrata + 1)
  }
  // Stratum per patient: indication bits (one flag column at a time) × AGE_SEX_STRATA + age band × sex.
  const stratumOf = Int32Array.from(shared.ageSex)
  for (let i = 0; i < flags.length; i++) addStratumBit(stratumOf, flags[i]!, AGE_SEX_STRATA << i)
  sumExposed(cohort, stratumOf, nAxes, nStrata, on, pre, sums)
  const perStratum = sums.perStratum
  for (let st = 0; st < nStrata; st++) perStratum[st + 1]! += perStratum[st]!
  const byStratum = sortByStratum(cohort.comparator, stratumOf, perStratum.slice(0, nStrata), new Int32Array(cohort.comparators))
  const comparatorCells = new Float64Array(nAxes * nStrata * 3)
  for (let k = 0; k < nAxes; k++) {
    const whole = shared.wholeMeans.subarray(axisIndex[k]! * n, (axisIndex[k]! + 1) * n)
    for (let st = 0; st < nStrata; st++) scoreMoments(whole, byStratum, perStratum[st]!, perStratum[st + 1]!, comparatorCells, (k * nStrata + st) * 3)
  }
  return { exposedCells: sums.exposedCells, comparatorCells, slopes: sums.slopes, adh: sums.adh, change: sums.change }
}

// stratumSums' loops, each in a function that ends with its loop (or is primed): V8 compiles a long
// loop while it runs, and code after it that has never run would make that compiled code bail out
// on every later question (src/plugin/hotLoops.ts).

/** Adds `bit` to the stratum of every patient whose flag is set. */
const addStratumBit = (stratumOf: Int32Array, flag: Uint8Array, bit: number): Int32Array => {
  for (let p = 0; p < stratumOf.length; p++) if (flag[p] !== 0) stratumOf[p] = stratumOf[p]! + bit
  return stratumOf
}

/** What the members' pass accumulates: cells per axis and stratum (n, Σ, Σ²), slopes, adherence pairs, comparators per stratum (shifted by one). */
interface ExposedSums {
  readonly exposedCells: Float64Array
  readonly slopes: Float64Array
  readonly adh: Array<Array<number>>
  readonly change: Array<Array<number>>
  readonly perStratum: Int32Array
}

/** One pass over the patients: the members' window means and slopes into their strata, and the comparators counted per stratum. */
const sumExposed = (
  cohort: Cohort,
  stratumOf: Int32Array,
  nAxes: number,
  nStrata: number,
  on: { readonly mean: Float64Array; readonly slope: Float64Array },
  pre: { readonly mean: Float64Array },
  sums: ExposedSums
): ExposedSums => {
  const { inCohort, comparator, adherence } = cohort
  const cohortSize = cohort.size
  const { exposedCells, slopes, adh, change, perStratum } = sums
  const onMean = on.mean
  const onSlope = on.slope
  const preMean = pre.mean
  for (let p = 0, j = 0; p < stratumOf.length; p++) {
    if (comparator[p] === 1) {
      perStratum[stratumOf[p]! + 1]!++
      continue
    }
    if (inCohort[p] === 0) continue
    const stratum = stratumOf[p]!
    for (let k = 0; k < nAxes; k++) {
      const at = k * cohortSize + j
      const m = onMean[at]!
      if (Number.isNaN(m)) continue
      const c = (k * nStrata + stratum) * 3
      exposedCells[c]!++
      exposedCells[c + 1]! += m
      exposedCells[c + 2]! += m * m
      const slope = onSlope[at]!
      if (!Number.isNaN(slope)) {
        slopes[k * 3]!++
        slopes[k * 3 + 1]! += slope
        slopes[k * 3 + 2]! += slope * slope
      }
      const before = preMean[at]!
      if (!Number.isNaN(before) && !Number.isNaN(adherence[p]!)) {
        adh[k]!.push(adherence[p]!)
        change[k]!.push(m - before)
      }
    }
    j++
  }
  return sums
}

/** The comparators grouped by stratum (a counting sort from each stratum's first slot `next`), each group in patient order. */
const sortByStratum = (comparator: Uint8Array, stratumOf: Int32Array, next: Int32Array, byStratum: Int32Array): Int32Array => {
  for (let p = 0; p < comparator.length; p++) if (comparator[p] === 1) byStratum[next[stratumOf[p]!]!++] = p
  return byStratum
}

/** n, Σ and Σ² of the present scores of the patients byStratum[from..end) into `out` from `at`, summed in that order. Primed (its results are stored after its loop). */
const scoreMoments = primed((whole: Float64Array, byStratum: Int32Array, from: number, end: number, out: Float64Array, at: number): void => {
  let cn = 0
  let cs = 0
  let css = 0
  for (let i = from; i < end; i++) {
    const m = whole[byStratum[i]!]!
    if (m !== m) continue // NaN: no score
    cn++
    cs += m
    css += m * m
  }
  out[at] = cn
  out[at + 1] = cs
  out[at + 2] = css
}, Float64Array.of(0.5), Int32Array.of(0), 0, 1, new Float64Array(3), 0)

