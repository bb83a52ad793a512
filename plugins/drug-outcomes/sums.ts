/**
 * The per-stratum sums of a drug-outcomes comparison: for each target axis and stratum (indication
 * bits × age band × sex) the cohort's on-drug means and the comparators' whole-window means, the
 * cohort's slope sums, and the (adherence, change) pairs of the correlation.
 */
import { type Dataset } from "../../src/plugin/experimental.ts"
import type { Cohort } from "./cohort.ts"
import { AGE_SEX_STRATA, type PerDataset } from "./perDataset.ts"

/** Per axis and stratum the sums (n, Σ, Σ²) of the cohort's on-drug means and of the comparators' whole-window means; the cohort's slope sums; the (adherence, change) pairs. */
export interface StratumSums {
  readonly exposedCells: Float64Array
  readonly comparatorCells: Float64Array
  /** Per axis: n, Σ, Σ² of the members' on-drug slopes. */
  readonly slopes: Float64Array
  /** Per axis: the (adherence, change) pairs as the correlation kernel takes them, every adherence then every change. */
  readonly pairs: ReadonlyArray<Float64Array>
}

/**
 * The members' sums from their own lists, then one pass over the patients for the comparators
 * (everyone who is not a course holder), each patient's stratum worked out as it is visited.
 * Every sum adds its patients in patient order, as one sum per stratum and axis over the
 * comparators grouped by stratum would.
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
  const nAxes = axisIndex.length
  const nStrata = (1 << flags.length) * AGE_SEX_STRATA
  const sums: ExposedSums = {
    exposedCells: new Float64Array(nAxes * nStrata * 3),
    slopes: new Float64Array(nAxes * 3),
    // Room for every member's pair, adherence in the first half and change in the second.
    pairs: Array.from({ length: nAxes }, () => new Float64Array(2 * cohort.size)),
    pairCounts: new Int32Array(nAxes)
  }
  // Stratum: indication bits × AGE_SEX_STRATA + age band × sex, from up to three flag columns
  // (MAX_INDICATIONS); those a drug lacks read as a column of zeros.
  if (flags.length > 3) throw new Error(`drug-outcomes strata take at most 3 indications, not ${flags.length}`)
  if (zeros.length < data.patients.count) zeros = new Uint8Array(data.patients.count)
  const [f0 = zeros, f1 = zeros, f2 = zeros] = flags
  const strata = { ageSex: shared.ageSex, f0, f1, f2 }
  sumExposed(cohort, strata, nAxes, nStrata, on, pre, sums)
  const comparatorCells = comparatorMoments(strata, cohort.holders, shared.wholeMeans, axisIndex, nStrata, new Float64Array(nAxes * nStrata * 3))
  const pairs = sums.pairs.map((room, k) => {
    const count = sums.pairCounts[k]!
    const packed = new Float64Array(2 * count)
    packed.set(room.subarray(0, count))
    packed.set(room.subarray(cohort.size, cohort.size + count), count)
    return packed
  })
  return { exposedCells: sums.exposedCells, comparatorCells, slopes: sums.slopes, pairs }
}

/** A flag column of zeros for the indications a drug has fewer of than three, as long as the largest dataset served; never written. */
let zeros = new Uint8Array(0)

/** What a patient's stratum is made of. */
interface Strata {
  readonly ageSex: Int32Array
  readonly f0: Uint8Array
  readonly f1: Uint8Array
  readonly f2: Uint8Array
}

/** The patient's stratum. */
const stratumOf = (s: Strata, p: number): number =>
  s.ageSex[p]! + (s.f0[p] !== 0 ? AGE_SEX_STRATA : 0) + (s.f1[p] !== 0 ? AGE_SEX_STRATA << 1 : 0) + (s.f2[p] !== 0 ? AGE_SEX_STRATA << 2 : 0)

// stratumSums' loops, each in a function that ends with its loop: V8 compiles a long loop while it
// runs, and code after it that has never run would make that compiled code bail out on every later
// question (src/plugin/hotLoops.ts).

/** What the members' pass accumulates: cells per axis and stratum (n, Σ, Σ²), slopes, (adherence, change) pairs and their counts. */
interface ExposedSums {
  readonly exposedCells: Float64Array
  readonly slopes: Float64Array
  readonly pairs: ReadonlyArray<Float64Array>
  readonly pairCounts: Int32Array
}

/** The members (patient order): their window means and slopes into their strata, and the (adherence, change) pairs. */
const sumExposed = (
  cohort: Cohort,
  strata: Strata,
  nAxes: number,
  nStrata: number,
  on: { readonly mean: Float64Array; readonly slope: Float64Array },
  pre: { readonly mean: Float64Array },
  sums: ExposedSums
): ExposedSums => {
  const { members, adherence } = cohort
  const cohortSize = cohort.size
  const { exposedCells, slopes, pairs, pairCounts } = sums
  const onMean = on.mean
  const onSlope = on.slope
  const preMean = pre.mean
  for (let j = 0; j < cohortSize; j++) {
    const stratum = stratumOf(strata, members[j]!)
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
      if (!Number.isNaN(before) && !Number.isNaN(adherence[j]!)) {
        const room = pairs[k]!
        const at = pairCounts[k]!++
        room[at] = adherence[j]!
        room[cohortSize + at] = m - before
      }
    }
  }
  return sums
}

/**
 * n, Σ and Σ² of the comparators' present whole-window means per axis and stratum, into `cells`:
 * every patient but the holders (both in patient order, so one walks beside the other).
 */
const comparatorMoments = (
  strata: Strata,
  holders: Int32Array,
  wholeMeans: Float64Array,
  axisIndex: Int32Array,
  nStrata: number,
  cells: Float64Array
): Float64Array => {
  const n = strata.ageSex.length
  const nAxes = axisIndex.length
  for (let p = 0, h = 0; p < n; p++) {
    if (h < holders.length && holders[h] === p) {
      h++
      continue
    }
    const stratum = stratumOf(strata, p)
    for (let k = 0; k < nAxes; k++) {
      const m = wholeMeans[axisIndex[k]! * n + p]!
      if (m !== m) continue // NaN: no score
      const c = (k * nStrata + stratum) * 3
      cells[c]!++
      cells[c + 1]! += m
      cells[c + 2]! += m * m
    }
  }
  return cells
}
