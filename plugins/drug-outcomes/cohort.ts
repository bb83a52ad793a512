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

/**
 * The drug's cohort for an outcome type: who, over which months, with what adherence and events.
 * Everything is held per course holder or per member — a few percent of the patients — so a
 * question allocates nothing per patient of the dataset: the comparators are everyone else.
 */
export interface Cohort {
  readonly size: number
  /** The members in patient order. */
  readonly members: Int32Array
  /** The patients with a course of the drug (the only ones who are not comparators), in patient order. */
  readonly holders: Int32Array
  /** Per holder: 1 for a member. */
  readonly holderIsMember: Uint8Array
  /** Patients with no course of the drug at all. */
  readonly comparators: number
  /** Per member j: the exposure window [onFrom, onTo) and the months before the first course [0, preTo). */
  readonly onFrom: Int32Array
  readonly onTo: Int32Array
  readonly preTo: Int32Array
  /** Per member j: mean adherence over their courses whose adherence is known; NaN when none is. */
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

/** Per holder (patient order), from the drug's courses: the months they cover, the first start, the adherence sum and count (of courses with a known adherence). */
interface Exposure {
  readonly holders: Int32Array
  readonly from: Int32Array
  readonly to: Int32Array
  readonly firstStart: Int32Array
  readonly pdcSum: Float64Array
  readonly courses: Int32Array
  readonly pdcCount: Int32Array
  /** [courses in the window, of which with a known adherence]. */
  readonly known: Int32Array
}

/** A holder's mean adherence over their courses whose adherence is known; NaN when none is. */
const meanAdherence = (x: Exposure, h: number): number => (x.pdcCount[h]! > 0 ? x.pdcSum[h]! / x.pdcCount[h]! : Number.NaN)

/** How many patients hold a course: the drug's courses come grouped by patient (perDataset). */
const holderCount = (patient: Int32Array, rows: Int32Array): number => {
  let holders = 0
  let last = -1
  for (let r = 0; r < rows.length; r++) {
    const p = patient[rows[r]!]!
    if (p !== last) holders++
    last = p
  }
  return holders
}

/** Walks the drug's courses, one holder's courses after another, each holder's in table order. */
const exposureOf = (data: Dataset, shared: PerDataset, drug: number): Exposure => {
  const ex = data.exposures
  const rows = shared.coursesOf[drug] ?? new Int32Array(0)
  const size = holderCount(ex.patient, rows)
  const last = data.months - 1
  const x: Exposure = {
    holders: new Int32Array(size),
    from: new Int32Array(size).fill(data.months),
    to: new Int32Array(size),
    firstStart: new Int32Array(size).fill(data.months),
    pdcSum: new Float64Array(size),
    courses: new Int32Array(size),
    pdcCount: new Int32Array(size),
    known: new Int32Array(2)
  }
  const { holders, from, to, firstStart, pdcSum, courses, pdcCount, known } = x
  const asOfMonth = monthOfDay(data.asOfDay)
  for (let r = 0, h = -1; r < rows.length; r++) {
    const i = rows[r]!
    const p = ex.patient[i]!
    if (h < 0 || holders[h] !== p) holders[++h] = p
    const s = monthOfDay(ex.startDay[i]!) - data.firstMonth
    const e = (Number.isNaN(ex.endDay[i]!) ? asOfMonth : monthOfDay(ex.endDay[i]!)) - data.firstMonth
    if (e < 0 || s > last) continue
    from[h] = Math.min(from[h]!, Math.max(s, 0))
    to[h] = Math.max(to[h]!, Math.min(e, last) + 1)
    firstStart[h] = Math.min(firstStart[h]!, s)
    courses[h] = courses[h]! + 1
    known[0]!++
    // Unknown adherence (no dispensing records) is left out, never taken as full.
    const pdc = ex.adherence[i]!
    if (pdc === pdc) {
      pdcSum[h] = pdcSum[h]! + pdc
      pdcCount[h] = pdcCount[h]! + 1
      known[1]!++
    }
  }
  return x
}

/** Per holder: the drug's adverse events in the window (both lists in patient order; events of patients without a course are not the cohort's). */
const drugEventsOf = (data: Dataset, shared: PerDataset, drug: number, holders: Int32Array): Int32Array => {
  const events = new Int32Array(holders.length)
  const windowStart = firstDayOfMonth(data.firstMonth)
  const ae = data.adverseEvents
  const rows = shared.eventsOf[drug] ?? new Int32Array(0)
  for (let r = 0, h = 0; r < rows.length; r++) {
    const i = rows[r]!
    const p = ae.patient[i]!
    while (h < holders.length && holders[h]! < p) h++
    if (h === holders.length) break
    if (holders[h] === p && ae.day[i]! >= windowStart && ae.day[i]! <= data.asOfDay) events[h] = events[h]! + 1
  }
  return events
}

/** The cohort (by outcome type) among the holders; `counts` = [members, the members' events]. */
interface Membership {
  readonly holderIsMember: Uint8Array
  /** The members (holder indexes) in patient order, in the first counts[0] places. */
  readonly listed: Int32Array
  readonly counts: Int32Array
}

/** Which holders are members. The counts are kept in `counts` as the loop goes, so nothing follows it. */
const membershipOf = (x: Exposure, events: Int32Array, outcomeType: (typeof OUTCOME_TYPES)[number]): Membership => {
  const size = x.holders.length
  const m: Membership = { holderIsMember: new Uint8Array(size), listed: new Int32Array(size), counts: new Int32Array(2) }
  const { holderIsMember, listed, counts } = m
  const { from, to, courses } = x
  // (Plain loops here and below: TypedArray.from with a mapping function is many times slower.)
  for (let h = 0; h < size; h++) {
    const exposed = courses[h]! > 0 && to[h]! > from[h]!
    const member = exposed &&
      (outcomeType === "efficacy" || (outcomeType === "adherence" ? meanAdherence(x, h) >= ADHERENCE_THRESHOLD : events[h]! > 0))
    if (member) {
      holderIsMember[h] = 1
      listed[counts[0]!++] = h
      counts[1]! += events[h]!
    }
  }
  return m
}

/** Per member j (holder listed[j]): the patient, the exposure window [onFrom, onTo), the months before the first course [0, preTo), the adherence. */
const windowsOf = (listed: Int32Array, x: Exposure, months: number) => {
  const size = listed.length
  const w = { members: new Int32Array(size), onFrom: new Int32Array(size), onTo: new Int32Array(size), preTo: new Int32Array(size), adherence: new Float64Array(size) }
  const { members, onFrom, onTo, preTo, adherence } = w
  for (let j = 0; j < size; j++) {
    const h = listed[j]!
    members[j] = x.holders[h]!
    onFrom[j] = x.from[h]!
    onTo[j] = x.to[h]!
    preTo[j] = Math.min(Math.max(x.firstStart[h]!, 0), months)
    adherence[j] = meanAdherence(x, h)
  }
  return w
}

/** Exposure windows from the drug's courses, its adverse events in the window, the cohort and the comparators. */
export const cohortOf = (data: Dataset, shared: PerDataset, drug: number, outcomeType: (typeof OUTCOME_TYPES)[number]): Cohort => {
  const x = exposureOf(data, shared, drug)
  const events = drugEventsOf(data, shared, drug, x.holders)
  const m = membershipOf(x, events, outcomeType)
  const size = m.counts[0]!
  const w = windowsOf(m.listed.subarray(0, size), x, data.months)
  return {
    size,
    members: w.members,
    holders: x.holders,
    holderIsMember: m.holderIsMember,
    comparators: data.patients.count - x.holders.length,
    onFrom: w.onFrom,
    onTo: w.onTo,
    preTo: w.preTo,
    adherence: w.adherence,
    events: m.counts[1]!,
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
    for (let h = 0; h < cohort.holders.length; h++) {
      if (col.data[cohort.holders[h]!] === 0) continue
      inCohort += cohort.holderIsMember[h]!
      holdersWith++
    }
    const inComparators = shared.withCondition.get(code)! - holdersWith
    const share = cohort.size > 0 ? inCohort / cohort.size : 0
    const ratio = share / Math.max(cohort.comparators > 0 ? inComparators / cohort.comparators : 0, 1e-9)
    if (share >= INDICATION_MIN_SHARE && ratio >= INDICATION_MIN_RATIO) candidates.push({ code, ratio, flags: col.data })
  }
  return candidates.sort((a, b) => b.ratio - a.ratio || (a.code < b.code ? -1 : 1)).slice(0, MAX_INDICATIONS)
}
