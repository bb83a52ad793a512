/**
 * The risk models' training rows (docs/analytics.md#risk-model): per-patient inputs (age, axis
 * means over the observed window), hospital stays merged from overlapping encounters, index
 * admissions and readmissions, and the health-decline outcome; one set of rows per risk type.
 */
import * as Effect from "effect/Effect"
import { atMost, AXES, firstDayOfMonth } from "../../src/plugin/Plugin.ts"
import { type Dataset, type KernelsService, scoreReader } from "../../src/plugin/experimental.ts"

/** A readmission is an admission starting 1–30 days after an index admission's discharge. */
export const READMISSION_DAYS = 30
/** Health decline compares the first and the last this-many months of the panel. */
export const DECLINE_BLOCK_MONTHS = 6
/** …and counts as a decline when the mean of any axis falls by at least this many points. */
export const DECLINE_POINTS = 1
/** Age enters as (age − AGE_CENTRE) / 10; axis means as mean − AXIS_CENTRE. */
export const AGE_CENTRE = 60
export const AXIS_CENTRE = 5
/** Encounter kind code of an inpatient stay (the dataset's encounter_kind vocabulary order). */
export const INPATIENT = 2
export const DAYS_PER_YEAR = 365.25
const DAYS_PER_MONTH = 30.4375

/** One model's training rows: the patient of each row, its outcome and (for rates) log exposure. */
export interface Rows {
  readonly patient: Int32Array
  readonly y: Float64Array
  readonly offset: Float64Array
  /** nAxes × nPatients axis means the features read (NaN = no score). */
  readonly axisMeans: Float64Array
}

/** Per-patient inputs shared by the models. */
export interface Base {
  readonly n: number
  readonly age: Float64Array
  /** First day of the patient's first scored month (NaN: never scored). */
  readonly observedFrom: Float64Array
  readonly windowMeans: Float64Array
}

const allAxes = Int32Array.from(AXES.keys())

/** Per-patient means of every axis over months [from, to) of the panel (WASM panelWindows). */
const windowMeans = (kernels: KernelsService, data: Dataset, from: number, to: number) => {
  const n = data.patients.count
  return Effect.map(
    kernels.panelWindows(data.panel, allAxes, new Int32Array(n).fill(from), new Int32Array(n).fill(to), new Uint8Array(n).fill(1), { outputs: ["mean"] }),
    (r) => r.mean
  )
}

export const base = (kernels: KernelsService, data: Dataset) =>
  Effect.gen(function*() {
    const n = data.patients.count
    const asOfYear = Number(data.asOf.slice(0, 4))
    const age = Float64Array.from(data.patients.birthYear.data, (by) => asOfYear - by)
    return { n, age, observedFrom: observedFromOf(data), windowMeans: yield* windowMeans(kernels, data, 0, data.panel.nMonths) } satisfies Base
  })

// The O(rows) loops of the fits are plain functions, not steps of an Effect generator: V8 optimizes
// a running loop (on-stack replacement) only outside a generator.

/** Per patient: the first day of the first month with any axis score (NaN: never scored). */
const observedFromOf = (data: Dataset): Float64Array => {
  const n = data.patients.count
  const observedFrom = new Float64Array(n).fill(Number.NaN)
  const { nMonths } = data.panel
  const score = scoreReader(data.panel.data)
  for (let p = 0; p < n; p++) {
    search: for (let m = 0; m < nMonths; m++) {
      for (let a = 0; a < AXES.length; a++) {
        if (!Number.isNaN(score((a * n + p) * nMonths + m))) {
          observedFrom[p] = firstDayOfMonth(data.firstMonth + m)
          break search
        }
      }
    }
  }
  return observedFrom
}

/** One patient's hospital stay after merging: first admission day and last discharge day. */
export interface Stay {
  readonly patient: number
  readonly start: number
  readonly end: number
}

/**
 * Inpatient stays per patient in start order, overlapping ones merged: a stay that begins on or
 * before the discharge day of the stay being built (a transfer, or a second record of the same
 * hospitalisation) extends it to the later discharge. Encounters are in (patient, start, end) order.
 */
export const mergedStays = (e: Dataset["encounters"]): Array<Stay> => {
  const stays: Array<Stay> = []
  let current: { patient: number; start: number; end: number } | undefined
  for (let i = 0; i < e.patient.length; i++) {
    if (e.kind[i] !== INPATIENT) continue
    const patient = e.patient[i]!
    const start = e.startDay[i]!
    const end = e.endDay[i]!
    if (current !== undefined && current.patient === patient && start <= current.end) {
      current.end = Math.max(current.end, end)
      continue
    }
    if (current !== undefined) stays.push(current)
    current = { patient, start, end }
  }
  if (current !== undefined) stays.push(current)
  return stays
}

/**
 * Hospital stays (overlapping records merged, mergedStays) in observed time, split into index
 * admissions and readmissions: a stay starting 1–30 days after the previous stay's discharge is a
 * readmission, any other an index admission. For each index admission: whether a readmission
 * followed it, and whether its 30 days after discharge lie within the data.
 */
export const admissions = (
  data: Pick<Dataset, "encounters" | "asOfDay"> & { readonly patients?: { readonly deathDay: Float32Array } },
  b: { readonly n: number; readonly observedFrom: Float64Array }
) => {
  const deathDay = data.patients?.deathDay ?? new Float64Array(b.n).fill(Number.NaN)
  const indexCount = new Float64Array(b.n)
  const readmissionRows: Array<{ patient: number; readmitted: boolean }> = []
  const stays = mergedStays(data.encounters)
  for (let i = 0; i < stays.length; i++) {
    const { end, patient: p, start } = stays[i]!
    const previous = i > 0 && stays[i - 1]!.patient === p ? stays[i - 1]! : undefined
    const gap = previous === undefined ? Number.NaN : start - previous.end
    if (gap >= 1 && gap <= READMISSION_DAYS) continue
    if (!(start >= b.observedFrom[p]!)) continue
    indexCount[p]! += 1
    // The 30 days after discharge must lie within the data and the patient's life (death is a
    // competing risk: a patient who died within them could not be readmitted).
    if (end + READMISSION_DAYS > Math.min(data.asOfDay, deathDay[p]! >= 0 ? deathDay[p]! : Number.POSITIVE_INFINITY)) continue
    const next = i + 1 < stays.length && stays[i + 1]!.patient === p ? stays[i + 1]! : undefined
    const d = next === undefined ? Number.NaN : next.start - end
    readmissionRows.push({ patient: p, readmitted: d >= 1 && d <= READMISSION_DAYS })
  }
  return { indexCount, readmissionRows }
}

/**
 * The health-decline outcome of each patient with some axis scored in both blocks: 1 when the mean
 * of any axis falls by at least DECLINE_POINTS (compared with the score tolerance, so a fall of
 * exactly 1.0 counts). first, last: AXES.length × n block means, axis-major (NaN = not scored).
 */
export const declineOutcomes = (first: Float64Array, last: Float64Array, n: number): { readonly patients: Array<number>; readonly outcome: Array<number> } => {
  const patients: Array<number> = []
  const outcome: Array<number> = []
  for (let p = 0; p < n; p++) {
    let compared = 0
    let declined = false
    for (let a = 0; a < AXES.length; a++) {
      const change = last[a * n + p]! - first[a * n + p]!
      if (Number.isNaN(change)) continue
      compared++
      if (atMost(change, -DECLINE_POINTS)) declined = true
    }
    if (compared === 0) continue
    patients.push(p)
    outcome.push(declined ? 1 : 0)
  }
  return { patients, outcome }
}

/**
 * A patient's time at risk in years: from the first day of the first scored month to as_of, or to
 * the death day when it comes first, both days counted, over 365.25 days a year.
 */
export const observedYears = (from: number, asOfDay: number, deathDay: number): number =>
  (Math.min(asOfDay, deathDay >= 0 ? deathDay : Number.POSITIVE_INFINITY) - from + 1) / DAYS_PER_YEAR

/** The rows of each model, and the length of the decline interval. */
export const modelRows = (kernels: KernelsService, data: Dataset, b: Base) =>
  Effect.gen(function*() {
    const { indexCount, readmissionRows } = admissions(data, b)
    const observed = [...b.observedFrom.keys()].filter((p) => !Number.isNaN(b.observedFrom[p]!))
    const hospitalization: Rows = {
      patient: Int32Array.from(observed),
      y: Float64Array.from(observed, (p) => indexCount[p]!),
      // Time at risk: from the first scored month to as_of, or to death when the patient died first.
      offset: Float64Array.from(observed, (p) => Math.log(observedYears(b.observedFrom[p]!, data.asOfDay, data.patients.deathDay[p]!))),
      axisMeans: b.windowMeans
    }
    const readmission: Rows = {
      patient: Int32Array.from(readmissionRows, (r) => r.patient),
      y: Float64Array.from(readmissionRows, (r) => (r.readmitted ? 1 : 0)),
      offset: new Float64Array(readmissionRows.length),
      axisMeans: b.windowMeans
    }
    const months = data.panel.nMonths
    if (months < 2 * DECLINE_BLOCK_MONTHS) return { hospitalization, readmission, decline: undefined, declineDays: Number.NaN }
    const first = yield* windowMeans(kernels, data, 0, DECLINE_BLOCK_MONTHS)
    const last = yield* windowMeans(kernels, data, months - DECLINE_BLOCK_MONTHS, months)
    const { patients, outcome } = declineOutcomes(first, last, b.n)
    const decline: Rows = { patient: Int32Array.from(patients), y: Float64Array.from(outcome), offset: new Float64Array(patients.length), axisMeans: first }
    return { hospitalization, readmission, decline, declineDays: (months - DECLINE_BLOCK_MONTHS) * DAYS_PER_MONTH }
  })

