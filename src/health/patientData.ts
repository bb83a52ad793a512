/**
 * The dataset as the stable plugin contract offers it (`PatientData`): counts, cohorts, monthly
 * series and windows of the axis scores — numbers and strings only, never the columns or a
 * pointer into the compute core. Provided once per thread beside `HealthData` ({@link layer});
 * for a plugin that declares no disclosure, src/plugin/invoke.ts gives each call one that records
 * every count it hands out.
 */
import { Context, Effect, Layer } from "effect"
import { Kernels } from "../kernels/service.ts"
import type { KernelsService } from "../kernels/types.ts"
import { AXES, type Axis } from "../plugin/axes.ts"
import type { DomainError } from "../plugin/errors.ts"
import { formatMonth, parseMonth } from "./calendar.ts"
import { type CohortCriteria, type Dataset, HealthData, type HealthDataService, type VocabularyDetail } from "./HealthData.ts"
import { SEXES, type VocabularyKind } from "./vocabulary.ts"

/** The loaded dataset in brief. */
export interface DatasetSummary {
  /** The dataset's stamp: renewed by every replacement. */
  readonly id: string
  /** `YYYY-MM-DD`. */
  readonly asOf: string
  /** Patients in the dataset. */
  readonly patients: number
  /** The months of the axis panel, first to last (`YYYY-MM`; the last holds as_of). */
  readonly months: ReadonlyArray<string>
  readonly vocabulary: Readonly<Record<VocabularyKind, ReadonlyArray<string>>>
  readonly vocabularyDetails: Readonly<Record<VocabularyKind, ReadonlyArray<VocabularyDetail>>>
  /** Per axis: the share of patients with at least one score of it (0–1). */
  readonly axisCoverage: Readonly<Record<Axis, number>>
  /** What the dataset says of itself (source, generator, import). */
  readonly info: Readonly<Record<string, string>>
}

/** Months `from` to `to`, both included (`YYYY-MM`); the part outside the axis panel is left out. */
export interface MonthWindow {
  readonly from: string
  readonly to: string
}

/** An axis over a cohort, month by month. */
export interface AxisSeries {
  /** `YYYY-MM`, in order. */
  readonly months: ReadonlyArray<string>
  /** The mean score of the cohort's patients scored that month; null when none was. */
  readonly mean: ReadonlyArray<number | null>
  /** How many of the cohort's patients were scored that month. */
  readonly scored: ReadonlyArray<number>
}

/** An axis over a cohort across a window: each patient's mean score there, summarised. */
export interface WindowSummary {
  /** Patients with at least one score of the axis in the window. */
  readonly patients: number
  /** The mean of their means; null when no patient was scored. */
  readonly mean: number | null
  /** The sample standard deviation of their means; null with fewer than two. */
  readonly sd: number | null
}

/** What a cohort can be counted by. */
export type CountBy = "sex" | "region" | "condition" | "drug"

/** A selected cohort, to ask further questions of during the call that selected it. */
export interface CohortView {
  /** Patients in the cohort. */
  readonly size: number
  /** The cohort's patients per entry of the vocabulary (every entry, 0 included): by sex, region, condition or drug. */
  readonly counts: (by: CountBy) => Effect.Effect<Readonly<Record<string, number>>>
  /** An axis month by month over a window (default: the whole panel). */
  readonly series: (axis: Axis, window?: MonthWindow) => Effect.Effect<AxisSeries>
  /** An axis across a window (default: the whole panel): each patient's mean there, summarised. */
  readonly window: (axis: Axis, window?: MonthWindow) => Effect.Effect<WindowSummary>
}

/** The patient data service. */
export interface PatientDataService {
  /** The loaded dataset in brief; fails with `unavailable` (503) while it is still loading. */
  readonly about: Effect.Effect<DatasetSummary, DomainError>
  /**
   * The patients matching the criteria (as `HealthData.select` takes them). An unknown condition,
   * drug or region fails with `unknown_condition` / `unknown_drug` / `unknown_region` (422) and the
   * closest known codes; while the dataset loads, with `unavailable`.
   */
  readonly cohort: (criteria: CohortCriteria) => Effect.Effect<CohortView, DomainError>
}

/** The dataset through counts, cohorts, series and windows (the stable plugin contract's data interface). */
export class PatientData extends Context.Service<PatientData, PatientDataService>()("hcc/PatientData") {}

/** Panel month indexes [from, to) of a window, clamped to the panel. */
const monthRange = (data: Dataset, window: MonthWindow | undefined): readonly [number, number] => {
  if (window === undefined) return [0, data.months]
  const from = parseMonth(window.from) - data.firstMonth
  const to = parseMonth(window.to) - data.firstMonth + 1
  if (Number.isNaN(from) || Number.isNaN(to)) return [0, 0]
  return [Math.max(0, Math.min(data.months, from)), Math.max(0, Math.min(data.months, to))]
}

/** A cohort's patients per entry of a code column (a flag per patient per entry, or one entry index per patient). */
const countsOf = (data: Dataset, mask: Uint8Array, by: CountBy): Record<string, number> => {
  const out: Record<string, number> = {}
  const n = data.patients.count
  if (by === "sex" || by === "region") {
    const names = by === "sex" ? SEXES : data.vocabulary.region
    const column = by === "sex" ? data.patients.sex.data : data.patients.region.data
    const counts = new Float64Array(names.length)
    for (let p = 0; p < n; p++) if (mask[p] !== 0) counts[column[p]!]!++
    names.forEach((name, i) => (out[name] = counts[i]!))
    return out
  }
  const flags = by === "condition" ? data.patients.conditions : data.patients.drugs
  for (const code of data.vocabulary[by]) {
    const column = flags.get(code)?.data
    let count = 0
    if (column !== undefined) for (let p = 0; p < n; p++) if (mask[p] !== 0 && column[p] !== 0) count++
    out[code] = count
  }
  return out
}

/**
 * The service over a call's health data and compute core. `seen` is told every count it hands out
 * (cohort sizes, category counts, patients scored), for the small-cell rule of a plugin that
 * declares no disclosure.
 */
export const makePatientData = (health: HealthDataService, kernels: KernelsService, seen: (counts: ReadonlyArray<number>) => void): PatientDataService => {
  const view = (data: Dataset, mask: Uint8Array, size: number): CohortView => ({
    size,
    counts: (by) =>
      Effect.sync(() => {
        const counts = countsOf(data, mask, by)
        seen(Object.values(counts))
        return counts
      }),
    series: (axis, window) =>
      Effect.gen(function*() {
        const [from, to] = monthRange(data, window)
        const months = Array.from({ length: Math.max(0, to - from) }, (_, i) => formatMonth(data.firstMonth + from + i))
        if (months.length === 0) return { months, mean: [], scored: [] }
        const groups = new Int32Array(data.months).fill(-1)
        for (let m = from; m < to; m++) groups[m] = m - from
        const sums = yield* Effect.orDie(kernels.panelSums(data.panel, Int32Array.of(AXES.indexOf(axis)), from, to, groups, months.length, mask))
        const scored = Array.from(sums.count)
        seen(scored)
        return { months, mean: scored.map((c, i) => (c === 0 ? null : sums.sum[i]! / c)), scored }
      }),
    window: (axis, window) =>
      Effect.gen(function*() {
        const [from, to] = monthRange(data, window)
        const n = data.patients.count
        if (to <= from) return { patients: 0, mean: null, sd: null }
        const r = yield* Effect.orDie(kernels.panelWindows(data.panel, Int32Array.of(AXES.indexOf(axis)), new Int32Array(n).fill(from), new Int32Array(n).fill(to), mask, { outputs: ["n", "mean"] }))
        // Welford's running mean and variance of the patients' means.
        let patients = 0
        let mean = 0
        let m2 = 0
        for (let p = 0; p < n; p++) {
          if (mask[p] === 0 || !(r.n[p]! > 0)) continue
          patients++
          const delta = r.mean[p]! - mean
          mean += delta / patients
          m2 += delta * (r.mean[p]! - mean)
        }
        seen([patients])
        return { patients, mean: patients === 0 ? null : mean, sd: patients < 2 ? null : Math.sqrt(m2 / (patients - 1)) }
      })
  })
  return {
    about: Effect.map(health.dataset, (data) => ({
      id: data.id,
      asOf: data.asOf,
      patients: data.patients.count,
      months: Array.from({ length: data.months }, (_, i) => formatMonth(data.firstMonth + i)),
      vocabulary: data.vocabulary,
      vocabularyDetails: data.vocabularyDetails,
      axisCoverage: data.axisCoverage,
      info: data.info
    })),
    cohort: (criteria) =>
      Effect.flatMap(health.dataset, (data) =>
        Effect.map(health.select(criteria), (cohort) => {
          seen([cohort.size])
          return view(data, cohort.mask, cohort.size)
        }))
  }
}

/** The thread's PatientData over its HealthData and Kernels (recording nothing: see invoke.ts). */
export const layer: Layer.Layer<PatientData, never, HealthData | Kernels> = Layer.effect(
  PatientData,
  Effect.gen(function*() {
    return makePatientData(yield* HealthData, yield* Kernels, () => {})
  })
)
