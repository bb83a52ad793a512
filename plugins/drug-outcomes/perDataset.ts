/**
 * What every drug-outcomes request on a dataset shares, computed once when it loads (the plugin's
 * `prepare`): patients' whole-window axis means, their age-band × sex strata, each axis's reference
 * SD, and indexes that let a request visit only its drug's rows.
 */
import * as Effect from "effect/Effect"
import { AXES, SEXES } from "../../src/plugin/Plugin.ts"
import { type Dataset, Kernels, type KernelsService, preparedPerDataset } from "../../src/plugin/experimental.ts"

/** Age bands of the strata (age at as_of): under 45, 45–64, 65 and over. */
export const AGE_BANDS = [45, 65] as const
/** Age band × sex strata. */
export const AGE_SEX_STRATA = (AGE_BANDS.length + 1) * SEXES.length

/** Sums of one stratum. */
export interface Cell {
  n: number
  s: number
  ss: number
}
export const cell = (): Cell => ({ n: 0, s: 0, ss: 0 })
export const variance = (c: Cell) => (c.n >= 2 ? Math.max(0, (c.ss - (c.s * c.s) / c.n) / (c.n - 1)) : Number.NaN)

/**
 * What every request on a dataset shares: patients' whole-window axis means, age-band × sex codes,
 * each axis's reference SD, and indexes that let a request visit only its drug's rows.
 */
export interface PerDataset {
  /** 8 × patients, axis-major (AXES order). */
  readonly wholeMeans: Float64Array
  /** Age band (AGE_BANDS) × SEXES.length + sex. */
  readonly ageSex: Int32Array
  /**
   * Per axis (AXES order): the SD of every patient's whole-window mean score within their age band
   * × sex stratum, pooled over the strata — the denominator of every drug's efficacy_score, so the
   * same effect in points is the same d whatever the drug, its exposure windows or its indications.
   */
  readonly referenceSd: Float64Array
  /** Per drug (vocabulary index): its courses' rows in `exposures`, grouped by patient in patient order, each patient's in table order. */
  readonly coursesOf: ReadonlyArray<Int32Array>
  /** Per drug: its adverse events' rows in `adverseEvents`, likewise. */
  readonly eventsOf: ReadonlyArray<Int32Array>
  /** Per condition: how many patients have it. */
  readonly withCondition: ReadonlyMap<string, number>
}

/**
 * A counting sort: the rows with a key (0 … groups − 1; a negative key leaves its row out) grouped
 * by key, each group in the order the rows are visited (`order`, else row order), and where each
 * group starts. Over a SharedArrayBuffer when `shared`.
 */
const sortRows = (keys: Int32Array, groups: number, order: Int32Array | undefined, shared: boolean) => {
  const starts = new Int32Array(groups + 1)
  for (let i = 0; i < keys.length; i++) if (keys[i]! >= 0) starts[keys[i]! + 1]!++
  for (let g = 0; g < groups; g++) starts[g + 1]! += starts[g]!
  const rows = shared ? new Int32Array(new SharedArrayBuffer(starts[groups]! * 4)) : new Int32Array(starts[groups]!)
  const next = starts.slice(0, groups)
  const visits = order === undefined ? keys.length : order.length
  for (let r = 0; r < visits; r++) {
    const i = order === undefined ? r : order[r]!
    if (keys[i]! >= 0) rows[next[keys[i]!]!++] = i
  }
  return { rows, starts }
}

/** Per drug, its rows of a table (drug and patient columns) grouped by patient in patient order, each patient's in row order. */
const rowsByDrug = (drug: Int32Array, patient: Int32Array, drugs: number, patients: number): ReadonlyArray<Int32Array> => {
  const { rows, starts } = sortRows(drug, drugs, sortRows(patient, patients, undefined, false).rows, true)
  return Array.from({ length: drugs }, (_, g) => rows.subarray(starts[g]!, starts[g + 1]!))
}

/**
 * Computed by the plugin's `prepare` as the dataset loads (once, then given to every compute thread:
 * its large arrays are over SharedArrayBuffers), so no question pays for it; a caller that did not
 * prepare (tests, benches) computes it on first use.
 */
const prepared = preparedPerDataset<PerDataset>("drug-outcomes per-dataset statistics", { shared: true })

/** What perDataset keeps, given everyone's whole-window means (a plain function: its loops run over every patient, src/plugin/hotLoops.ts). */
const sharedOf = (data: Dataset, wholeMeans: Float64Array): PerDataset => {
  const n = data.patients.count
  const asOfYear = Number(data.asOf.slice(0, 4))
  const ageSex = new Int32Array(new SharedArrayBuffer(n * 4))
  for (let p = 0; p < n; p++) {
    const age = asOfYear - data.patients.birthYear.data[p]!
    ageSex[p] = (age < AGE_BANDS[0] ? 0 : age < AGE_BANDS[1] ? 1 : 2) * SEXES.length + data.patients.sex.data[p]!
  }
  const referenceSd = Float64Array.from(AXES, (_, a) => {
    const cells = Array.from({ length: AGE_SEX_STRATA }, cell)
    for (let p = 0; p < n; p++) {
      const m = wholeMeans[a * n + p]!
      if (Number.isNaN(m)) continue
      const c = cells[ageSex[p]!]!
      c.n++
      c.s += m
      c.ss += m * m
    }
    const used = cells.filter((c) => c.n >= 2)
    const df = used.reduce((t, c) => t + c.n - 1, 0)
    return df > 0 ? Math.sqrt(used.reduce((t, c) => t + (c.n - 1) * variance(c), 0) / df) : Number.NaN
  })
  const drugs = data.vocabulary.drug.length
  const withCondition = new Map([...data.patients.conditions].map(([code, col]) => {
    let count = 0
    for (let p = 0; p < n; p++) count += col.data[p] === 0 ? 0 : 1
    return [code, count] as const
  }))
  return {
    wholeMeans,
    ageSex,
    referenceSd,
    coursesOf: rowsByDrug(data.exposures.drug, data.exposures.patient, drugs, n),
    eventsOf: rowsByDrug(data.adverseEvents.drug, data.adverseEvents.patient, drugs, n),
    withCondition
  }
}

/** Everyone's whole-window means (WASM), then what the requests share. */
const computePerDataset = (kernels: KernelsService, data: Dataset) =>
  Effect.gen(function*() {
    const n = data.patients.count
    const whole = yield* kernels.panelWindows(
      data.panel,
      Int32Array.from(AXES, (_, i) => i),
      new Int32Array(n),
      new Int32Array(n).fill(data.months),
      new Uint8Array(n).fill(1),
      // Over a SharedArrayBuffer: one copy in the process however many compute threads read it.
      { outputs: ["mean"], shared: true }
    )
    return sharedOf(data, whole.mean)
  })

/** The plugin's `prepare`. */
export const prepareDrugOutcomes = (data: Dataset) =>
  Effect.gen(function*() {
    yield* prepared.store(data, computePerDataset(yield* Kernels, data))
  })

export const perDataset = (kernels: KernelsService, data: Dataset) =>
  Effect.andThen(prepared.store(data, computePerDataset(kernels, data)), Effect.orDie(prepared.get(data)))

