/**
 * The numbers of POST /v1/drug-outcomes, in one pass over the dataset (docs/analytics.md):
 * exposure windows from the drug courses, the cohort for the outcome type, an indication-, age- and
 * sex-stratified comparison with unexposed patients, adverse events, and per-axis correlation and
 * trend. Per-patient axis statistics and the correlations run in the WASM core; what is left is
 * O(patients) bookkeeping and arithmetic over at most 48 strata.
 */
import { Effect } from "effect"
import { ADHERENCE_THRESHOLD, atLeast, atMost, AXES, type Axis, type Dataset, firstDayOfMonth, Kernels, type KernelsService, monthOfDay, oneSampleTP, preparedPerDataset, primed, SEXES } from "../../src/plugin/Plugin.ts"
import type { OUTCOME_TYPES, TRENDS } from "./schema.ts"

/** A condition is an indication of the drug when at least this share of the cohort has it… */
export const INDICATION_MIN_SHARE = 0.05
/** …and it is at least this many times as common in the cohort as among the unexposed. */
export const INDICATION_MIN_RATIO = 1.5
/** At most this many indications (the most over-represented) define strata: 2^k × 3 age bands × 4 sexes (female, male, other, unknown). */
export const MAX_INDICATIONS = 3
/** Age bands of the strata (age at as_of): under 45, 45–64, 65 and over. */
export const AGE_BANDS = [45, 65] as const
/** Age band × sex strata. */
const AGE_SEX_STRATA = (AGE_BANDS.length + 1) * SEXES.length
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
  /** NaN when fewer than 3 patients have a known adherence and a score before and during the drug. */
  readonly correlation: number
  /** Patients with a known adherence and a before and an on-drug score (the correlation's n). */
  readonly correlationN: number
  /** Cohort patients with scores in strata that have comparators (the difference's exposed side), and those comparators. */
  readonly exposedN: number
  readonly comparatorN: number
  /** Cohort patients with a slope on the drug (the trend's n). */
  readonly slopeN: number
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

/** Sums of one stratum. */
interface Cell {
  n: number
  s: number
  ss: number
}
const cell = (): Cell => ({ n: 0, s: 0, ss: 0 })
const variance = (c: Cell) => (c.n >= 2 ? Math.max(0, (c.ss - (c.s * c.s) / c.n) / (c.n - 1)) : Number.NaN)

/**
 * What every request on a dataset shares: patients' whole-window axis means, age-band × sex codes,
 * each axis's reference SD, and indexes that let a request visit only its drug's rows.
 */
interface PerDataset {
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
  /** Per drug (vocabulary index): its courses' rows in `exposures`, in table order. */
  readonly coursesOf: ReadonlyArray<Int32Array>
  /** Per drug: its adverse events' rows in `adverseEvents`, in table order. */
  readonly eventsOf: ReadonlyArray<Int32Array>
  /** Per condition: how many patients have it. */
  readonly withCondition: ReadonlyMap<string, number>
}

/** Row numbers of `keys` grouped by key (0 … groups − 1), each group in row order (a counting sort). */
const rowsByKey = (keys: Int32Array, groups: number): ReadonlyArray<Int32Array> => {
  const counts = new Int32Array(groups + 1)
  for (let i = 0; i < keys.length; i++) if (keys[i]! >= 0) counts[keys[i]! + 1]!++
  for (let g = 0; g < groups; g++) counts[g + 1]! += counts[g]!
  const rows = new Int32Array(new SharedArrayBuffer(counts[groups]! * 4))
  const next = counts.slice(0, groups)
  for (let i = 0; i < keys.length; i++) if (keys[i]! >= 0) rows[next[keys[i]!]!++] = i
  return Array.from({ length: groups }, (_, g) => rows.subarray(counts[g]!, counts[g + 1]!))
}
/**
 * Computed by the plugin's `prepare` as the dataset loads (once, then given to every compute thread:
 * its large arrays are over SharedArrayBuffers), so no question pays for it; a caller that did not
 * prepare (tests, benches) computes it on first use.
 */
const prepared = preparedPerDataset<PerDataset>("drug-outcomes per-dataset statistics", { shared: true })

/** What perDataset keeps, given everyone's whole-window means (a plain function: see the note before exposureOf). */
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
  // Over SharedArrayBuffers: one copy in the process however many compute threads read them.
  const means = new Float64Array(new SharedArrayBuffer(wholeMeans.byteLength))
  means.set(wholeMeans)
  return {
    wholeMeans: means,
    ageSex,
    referenceSd,
    coursesOf: rowsByKey(data.exposures.drug, drugs),
    eventsOf: rowsByKey(data.adverseEvents.drug, drugs),
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
      new Uint8Array(n).fill(1)
    )
    return sharedOf(data, whole.mean)
  })

/** The plugin's `prepare`. */
export const prepareDrugOutcomes = (data: Dataset) =>
  Effect.gen(function*() {
    yield* prepared.store(data, computePerDataset(yield* Kernels, data))
  })

const perDataset = (kernels: KernelsService, data: Dataset) =>
  Effect.andThen(prepared.store(data, computePerDataset(kernels, data)), Effect.orDie(prepared.get(data)))

/** The drug's cohort for an outcome type: who, over which months, with what adherence and events. */
interface Cohort {
  readonly size: number
  /** The members in patient order. */
  readonly members: Int32Array
  /** 1 for a member. */
  readonly inCohort: Uint8Array
  /** 1 for a comparator: no course of the drug at all. */
  readonly comparator: Uint8Array
  readonly comparators: number
  /** The patients with a course of the drug, each once (the only ones who are not comparators). */
  readonly holders: ReadonlyArray<number>
  /** Per member j: the exposure window [onFrom, onTo) and the months before the first course [0, preTo). */
  readonly onFrom: Int32Array
  readonly onTo: Int32Array
  readonly preTo: Int32Array
  /** Per patient (read for members only): mean adherence over their courses whose adherence is known; NaN when none is. */
  readonly adherence: Float64Array
  readonly events: number
  readonly adherenceKnown: number
}

// The loops below are plain functions, not steps of the Effect generator: V8 optimizes a hot loop
// of a plain function while it runs (on-stack replacement), which it does not do inside a
// generator, so a server's first questions no longer run these loops unoptimized. Each loop is in
// a function of its own that ends with it and returns a local: V8 compiles a long loop while it
// runs, before the code after it has run, and code after it would then bail out on every later
// question (src/plugin/hotLoops.ts).

/** Per patient, from the drug's courses: the months they cover, the first start, the adherence sum and count (of courses with a known adherence); the holders. */
interface Exposure {
  readonly from: Int32Array
  readonly to: Int32Array
  readonly firstStart: Int32Array
  readonly hasCourse: Uint8Array
  readonly pdcSum: Float64Array
  readonly courses: Int32Array
  readonly pdcCount: Int32Array
  readonly holders: Array<number>
  /** [courses in the window, of which with a known adherence]. */
  readonly known: Int32Array
}

/** Exposure windows from the drug's courses, within the panel. */
const exposureOf = (data: Dataset, shared: PerDataset, drug: number): Exposure => {
  const n = data.patients.count
  const last = data.months - 1
  const x: Exposure = {
    from: new Int32Array(n).fill(data.months),
    to: new Int32Array(n),
    firstStart: new Int32Array(n).fill(data.months),
    hasCourse: new Uint8Array(n),
    pdcSum: new Float64Array(n),
    courses: new Int32Array(n),
    pdcCount: new Int32Array(n),
    holders: [],
    known: new Int32Array(2)
  }
  const { from, to, firstStart, hasCourse, pdcSum, courses, pdcCount, holders, known } = x
  const ex = data.exposures
  const asOfMonth = monthOfDay(data.asOfDay)
  for (const i of shared.coursesOf[drug] ?? []) {
    const p = ex.patient[i]!
    if (hasCourse[p] === 0) holders.push(p)
    hasCourse[p] = 1
    const s = monthOfDay(ex.startDay[i]!) - data.firstMonth
    const e = (Number.isNaN(ex.endDay[i]!) ? asOfMonth : monthOfDay(ex.endDay[i]!)) - data.firstMonth
    if (e < 0 || s > last) continue
    from[p] = Math.min(from[p]!, Math.max(s, 0))
    to[p] = Math.max(to[p]!, Math.min(e, last) + 1)
    firstStart[p] = Math.min(firstStart[p]!, s)
    courses[p] = courses[p]! + 1
    known[0]!++
    // Unknown adherence (no dispensing records) is left out, never taken as full.
    const pdc = ex.adherence[i]!
    if (pdc === pdc) {
      pdcSum[p] = pdcSum[p]! + pdc
      pdcCount[p] = pdcCount[p]! + 1
      known[1]!++
    }
  }
  return x
}

/** Per patient: the drug's adverse events in the window. */
const drugEventsOf = (data: Dataset, shared: PerDataset, drug: number): Int32Array => {
  const events = new Int32Array(data.patients.count)
  const windowStart = firstDayOfMonth(data.firstMonth)
  const ae = data.adverseEvents
  for (const i of shared.eventsOf[drug] ?? []) {
    if (ae.day[i]! >= windowStart && ae.day[i]! <= data.asOfDay) events[ae.patient[i]!] = events[ae.patient[i]!]! + 1
  }
  return events
}

/** The cohort (by outcome type) and the comparators; `counts` = [members, comparators, the members' events]. */
interface Membership {
  readonly adherence: Float64Array
  readonly inCohort: Uint8Array
  readonly comparator: Uint8Array
  /** The members in patient order, in the first counts[0] places. */
  readonly listed: Int32Array
  readonly counts: Int32Array
}

/**
 * Cohort and comparators (no course of the drug at all); the cohort also as a list in patient
 * order, so the kernel works and answers for it alone. The counts are kept in `counts` as the
 * loop goes, so nothing follows it.
 */
const membershipOf = (n: number, x: Exposure, events: Int32Array, outcomeType: (typeof OUTCOME_TYPES)[number]): Membership => {
  const m: Membership = {
    adherence: new Float64Array(n), // read for cohort members only
    inCohort: new Uint8Array(n),
    comparator: new Uint8Array(n),
    listed: new Int32Array(x.holders.length),
    counts: new Int32Array(3)
  }
  const { adherence, inCohort, comparator, listed, counts } = m
  const { from, to, hasCourse, pdcSum, courses, pdcCount } = x
  // (Plain loops here and below: TypedArray.from with a mapping function is many times slower.)
  for (let p = 0; p < n; p++) {
    if (hasCourse[p] === 0) {
      comparator[p] = 1
      counts[1]!++
      continue
    }
    adherence[p] = pdcCount[p]! > 0 ? pdcSum[p]! / pdcCount[p]! : Number.NaN
    const exposed = courses[p]! > 0 && to[p]! > from[p]!
    const member = exposed &&
      (outcomeType === "efficacy" || (outcomeType === "adherence" ? adherence[p]! >= ADHERENCE_THRESHOLD : events[p]! > 0))
    if (member) {
      inCohort[p] = 1
      listed[counts[0]!++] = p
      counts[2]! += events[p]!
    }
  }
  return m
}

/** Per member j: the exposure window [onFrom, onTo) and the months before the first course [0, preTo). */
const windowsOf = (members: Int32Array, x: Exposure, months: number) => {
  const size = members.length
  const w = { onFrom: new Int32Array(size), onTo: new Int32Array(size), preTo: new Int32Array(size) }
  const { onFrom, onTo, preTo } = w
  for (let j = 0; j < size; j++) {
    const p = members[j]!
    onFrom[j] = x.from[p]!
    onTo[j] = x.to[p]!
    preTo[j] = Math.min(Math.max(x.firstStart[p]!, 0), months)
  }
  return w
}

/** Exposure windows from the drug's courses, its adverse events in the window, the cohort and the comparators. */
const cohortOf = (data: Dataset, shared: PerDataset, drug: number, outcomeType: (typeof OUTCOME_TYPES)[number]): Cohort => {
  const x = exposureOf(data, shared, drug)
  const events = drugEventsOf(data, shared, drug)
  const m = membershipOf(data.patients.count, x, events, outcomeType)
  const size = m.counts[0]!
  const members = m.listed.subarray(0, size)
  const w = windowsOf(members, x, data.months)
  return {
    size,
    members,
    inCohort: m.inCohort,
    comparator: m.comparator,
    comparators: m.counts[1]!,
    holders: x.holders,
    onFrom: w.onFrom,
    onTo: w.onTo,
    preTo: w.preTo,
    adherence: m.adherence,
    events: m.counts[2]!,
    adherenceKnown: x.known[1]!
  }
}

/** The conditions clearly over-represented in the cohort (up to MAX_INDICATIONS), most first. */
const indicationsOf = (data: Dataset, shared: PerDataset, cohort: Cohort) => {
  const candidates: Array<{ readonly code: string; readonly ratio: number; readonly flags: Int32Array }> = []
  // Comparators are everyone without a course: those with the condition are all who have it less
  // the course holders who have it, so only the holders are visited.
  for (const [code, col] of data.patients.conditions) {
    let inCohort = 0
    let holdersWith = 0
    for (const p of cohort.holders) {
      if (col.data[p] === 0) continue
      inCohort += cohort.inCohort[p]!
      holdersWith++
    }
    const inComparators = shared.withCondition.get(code)! - holdersWith
    const share = cohort.size > 0 ? inCohort / cohort.size : 0
    const ratio = share / Math.max(cohort.comparators > 0 ? inComparators / cohort.comparators : 0, 1e-9)
    if (share >= INDICATION_MIN_SHARE && ratio >= INDICATION_MIN_RATIO) candidates.push({ code, ratio, flags: col.data })
  }
  return candidates.sort((a, b) => b.ratio - a.ratio || (a.code < b.code ? -1 : 1)).slice(0, MAX_INDICATIONS)
}

/** Per axis and stratum the sums (n, Σ, Σ²) of the cohort's on-drug means and of the comparators' whole-window means; the cohort's slope sums; the (adherence, change) pairs. */
interface StratumSums {
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
const stratumSums = (
  data: Dataset,
  shared: PerDataset,
  cohort: Cohort,
  flags: ReadonlyArray<Int32Array>,
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
const addStratumBit = (stratumOf: Int32Array, flag: Int32Array, bit: number): Int32Array => {
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
    const { exposedCells, comparatorCells, slopes, adh, change } = stratumSums(data, shared, cohort, indications.map((i) => i.flags), axisIndex, on, pre)

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
      const pairs = adh[k]!.length
      const corr = pairs >= 3
        ? (yield* kernels.correlationMatrix(Float64Array.from([...adh[k]!, ...change[k]!]), 1, 2, pairs, { spearman: false })).pearson[0]!
        : Number.NaN
      const [slopeN, slopeS, slopeSS] = [slopes[k * 3]!, slopes[k * 3 + 1]!, slopes[k * 3 + 2]!]
      const meanSlope = slopeN > 0 ? slopeS / slopeN : 0
      const trendP = oneSampleTP(slopeN, slopeS, slopeSS)
      result.set(axis, {
        difference: used > 0 ? difference : Number.NaN,
        se: used > 0 ? Math.sqrt(v) : Number.NaN,
        standardized: used > 0 && sd > 0 ? difference / sd : Number.NaN,
        correlation: corr,
        correlationN: pairs,
        exposedN: used,
        comparatorN,
        slopeN,
        meanSlope,
        trendP,
        trend: slopeN === 0
          ? "no_data"
          : trendP < TREND_ALPHA && atLeast(meanSlope, TREND_MIN_SLOPE) ? "positive" : trendP < TREND_ALPHA && atMost(meanSlope, -TREND_MIN_SLOPE) ? "negative" : "stable"
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
