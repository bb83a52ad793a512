/**
 * The drug's cohort for an outcome type (docs/analytics.md, "Drug outcomes"): exposure windows from
 * its courses, its adverse events in the window, who is a member and who a comparator, and the
 * conditions over-represented among the members (the indications that stratify the comparison).
 */
import { ADHERENCE_THRESHOLD, firstDayOfMonth, monthOfDay } from "../../src/plugin/Plugin.ts"
import { type Dataset } from "../../src/plugin/experimental.ts"
import type { PerDataset } from "./perDataset.ts"
import type { OUTCOME_TYPES } from "./schema.ts"

/** A condition is an indication of the drug when at least this share of the cohort has it… */
export const INDICATION_MIN_SHARE = 0.05
/** …and it is at least this many times as common in the cohort as among the unexposed. */
export const INDICATION_MIN_RATIO = 1.5
/** At most this many indications (the most over-represented) define strata: 2^k × 3 age bands × 4 sexes (female, male, other, unknown). */
export const MAX_INDICATIONS = 3

/** The drug's cohort for an outcome type: who, over which months, with what adherence and events. */
export interface Cohort {
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
export const cohortOf = (data: Dataset, shared: PerDataset, drug: number, outcomeType: (typeof OUTCOME_TYPES)[number]): Cohort => {
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
export const indicationsOf = (data: Dataset, shared: PerDataset, cohort: Cohort) => {
  const candidates: Array<{ readonly code: string; readonly ratio: number; readonly flags: Uint8Array }> = []
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
