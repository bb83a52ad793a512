/**
 * The numbers of POST /v1/drug-outcomes, in one pass over the dataset (docs/analytics.md):
 * exposure windows from the drug courses, the cohort for the outcome type, an indication-, age- and
 * sex-stratified comparison with unexposed patients, adverse events, and per-axis correlation and
 * trend. Per-patient axis statistics and the correlations run in the WASM core; what is left is
 * O(patients) bookkeeping and arithmetic over at most 48 strata.
 */
import * as Effect from "effect/Effect"
import { atLeast, atMost, AXES, type Axis, oneSampleTP } from "../../src/plugin/Plugin.ts"
import { type Dataset, type KernelsService } from "../../src/plugin/experimental.ts"
import { cohortOf, indicationsOf } from "./cohort.ts"
import { AGE_SEX_STRATA, type Cell, cell, perDataset, variance } from "./perDataset.ts"
import type { OUTCOME_TYPES, TRENDS } from "./schema.ts"
import { stratumSums } from "./sums.ts"

/** A mean slope smaller than this (points per month, 0.12 a year) is `stable` whatever its p-value. */
export const TREND_MIN_SLOPE = 0.01
/** Significance level of the trend test. */
export const TREND_ALPHA = 0.05

/** One axis's comparison of the cohort with comparable unexposed patients. */
export interface AxisEffect {
  /** Stratified mean difference, in score points. */
  readonly difference: number
  readonly se: number
  /** difference ÷ the axis's reference SD (PerDataset.referenceSd): Cohen's d on one scale for every drug. */
  readonly standardized: number
  /** se ÷ the reference SD: the standard error of `standardized` (the reference SD is the dataset's, not estimated per drug). */
  readonly standardizedSe: number
  /** NaN when fewer than 3 patients have a known adherence and a score before and during the drug. */
  readonly correlation: number
  /** Patients with a known adherence and a before and an on-drug score (the correlation's n). */
  readonly correlationN: number
  /** Cohort patients with scores in strata that have comparators (the difference's exposed side), and those comparators. */
  readonly exposedN: number
  readonly comparatorN: number
  /**
   * The correlation's sums over its pairs (x the adherence, y the axis change): Σx, Σy, Σx², Σy², Σxy —
   * what a network pools it from (network.ts).
   */
  readonly correlationSums: readonly [number, number, number, number, number]
  /** Cohort patients with a slope on the drug (the trend's n), and Σ slope, Σ slope². */
  readonly slopeN: number
  readonly slopeSum: number
  readonly slopeSquares: number
  readonly meanSlope: number
  readonly trendP: number
  readonly trend: (typeof TRENDS)[number]
}

/** Everything the endpoint reports, with the intervals tests check. */
export interface DrugAnalysis {
  readonly cohortSize: number
  readonly comparators: number
  /** The conditions used as indication strata, most over-represented first. */
  readonly indications: ReadonlyArray<string>
  readonly events: number
  /** Courses of the drug whose adherence is known (dispensing records), of all its courses in the window. */
  readonly adherenceKnown: number
  readonly eventRate: number
  readonly eventRateSe: number
  readonly axes: ReadonlyMap<Axis, AxisEffect>
}

/** An axis's trend on the drug from its slopes' count, mean and t-test p-value. */
export const trendClass = (n: number, meanSlope: number, p: number): (typeof TRENDS)[number] =>
  n === 0
    ? "no_data"
    : p < TREND_ALPHA && atLeast(meanSlope, TREND_MIN_SLOPE) ? "positive" : p < TREND_ALPHA && atMost(meanSlope, -TREND_MIN_SLOPE) ? "negative" : "stable"

/** Σx, Σy, Σx², Σy², Σxy of n pairs laid out as the correlation kernel takes them (every x, then every y). */
const pairSums = (xy: Float64Array, n: number): readonly [number, number, number, number, number] => {
  let [sx, sy, sxx, syy, sxy] = [0, 0, 0, 0, 0]
  for (let i = 0; i < n; i++) {
    const x = xy[i]!
    const y = xy[n + i]!
    sx += x
    sy += y
    sxx += x * x
    syy += y * y
    sxy += x * y
  }
  return [sx, sy, sxx, syy, sxy]
}

/** Runs the analysis for one drug (index in vocabulary.drug) and outcome type over the target axes. */
export const analyzeDrug = (
  kernels: KernelsService,
  data: Dataset,
  drug: number,
  outcomeType: (typeof OUTCOME_TYPES)[number],
  axes: ReadonlyArray<Axis>
) =>
  Effect.gen(function*() {
    const shared = yield* perDataset(kernels, data)
    const cohort = cohortOf(data, shared, drug, outcomeType)
    const cohortSize = cohort.size
    const indications = indicationsOf(data, shared, cohort)
    const nStrata = (1 << indications.length) * AGE_SEX_STRATA
    // Per-patient axis statistics (WASM): the cohort over its exposure window and over the months
    // before its first course (for the change); comparators over the whole panel (per dataset).
    const axisIndex = Int32Array.from(axes, (a) => AXES.indexOf(a))
    const on = yield* kernels.panelWindowsOf(data.panel, axisIndex, cohort.members, cohort.onFrom, cohort.onTo)
    const pre = yield* kernels.panelWindowsOf(data.panel, axisIndex, cohort.members, new Int32Array(cohortSize), cohort.preTo)
    const { exposedCells, comparatorCells, slopes, pairs: pairsOf } = stratumSums(data, shared, cohort, indications.map((i) => i.flags), axisIndex, on, pre)

    const result = new Map<Axis, AxisEffect>()
    for (const [k, axis] of axes.entries()) {
      const cellOf = (cells: Float64Array, s: number): Cell => {
        const c = (k * nStrata + s) * 3
        return { n: cells[c]!, s: cells[c + 1]!, ss: cells[c + 2]! }
      }
      const exposed = Array.from({ length: nStrata }, (_, s) => cellOf(exposedCells, s))
      const comparable = Array.from({ length: nStrata }, (_, s) => cellOf(comparatorCells, s))
      // Direct standardization to the cohort's strata that have comparators.
      let used = 0
      let comparatorN = 0
      for (let s = 0; s < nStrata; s++) {
        if (exposed[s]!.n > 0 && comparable[s]!.n >= 2) {
          used += exposed[s]!.n
          comparatorN += comparable[s]!.n
        }
      }
      const exposedVariance = variance(exposed.reduce((a, c) => ({ n: a.n + c.n, s: a.s + c.s, ss: a.ss + c.ss }), cell()))
      let difference = 0
      let v = 0
      for (let s = 0; s < nStrata; s++) {
        const e = exposed[s]!
        const c = comparable[s]!
        if (e.n === 0 || c.n < 2) continue
        const w = e.n / used
        difference += w * (e.s / e.n - c.s / c.n)
        v += w * w * ((e.n >= 2 ? variance(e) : exposedVariance) / e.n + variance(c) / c.n)
      }
      // Cohen's d on one scale for every drug: the axis's reference SD (perDataset).
      const sd = shared.referenceSd[AXES.indexOf(axis)]!
      const pairs = pairsOf[k]!.length / 2
      const corr = pairs >= 3
        ? (yield* kernels.correlationMatrix(pairsOf[k]!, 1, 2, pairs, { spearman: false })).pearson[0]!
        : Number.NaN
      const [slopeN, slopeS, slopeSS] = [slopes[k * 3]!, slopes[k * 3 + 1]!, slopes[k * 3 + 2]!]
      const meanSlope = slopeN > 0 ? slopeS / slopeN : 0
      const trendP = oneSampleTP(slopeN, slopeS, slopeSS)
      result.set(axis, {
        difference: used > 0 ? difference : Number.NaN,
        se: used > 0 ? Math.sqrt(v) : Number.NaN,
        standardized: used > 0 && sd > 0 ? difference / sd : Number.NaN,
        standardizedSe: used > 0 && sd > 0 ? Math.sqrt(v) / sd : Number.NaN,
        correlation: corr,
        correlationN: pairs,
        correlationSums: pairSums(pairsOf[k]!, pairs),
        exposedN: used,
        comparatorN,
        slopeN,
        slopeSum: slopeS,
        slopeSquares: slopeSS,
        meanSlope,
        trendP,
        trend: trendClass(slopeN, meanSlope, trendP)
      })
    }
    const analysis: DrugAnalysis = {
      cohortSize,
      comparators: cohort.comparators,
      indications: indications.map((i) => i.code),
      events: cohort.events,
      adherenceKnown: cohort.adherenceKnown,
      eventRate: cohortSize > 0 ? cohort.events / cohortSize : 0,
      eventRateSe: cohortSize > 0 ? Math.sqrt(cohort.events) / cohortSize : 0,
      axes: result
    }
    return analysis
  })
