/**
 * The implementation of `PatientData` (PatientData.ts) over a thread's HealthData and compute
 * core: {@link layer} provides it once per thread; for a plugin that declares no disclosure,
 * src/plugin/invoke.ts gives each call one ({@link makePatientData}) that records every count it
 * hands out.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Kernels } from "../kernels/service.ts"
import type { KernelsService } from "../kernels/types.ts"
import { AXES } from "../plugin/axes.ts"
import { SEXES } from "../plugin/vocabularies.ts"
import { formatMonth, parseMonth } from "./calendar.ts"
import { type Dataset, HealthData, type HealthDataService } from "./HealthData.ts"
import { type AxisSeries, type CohortView, type CountBy, type DatasetSummary, type MonthWindow, PatientData, type PatientDataService, type WindowSummary } from "./PatientData.ts"

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
