/**
 * The synthetic population: pure functions from (seed, patient count) to table rows. Every patient,
 * study and surveillance series draws from its own random stream (random.ts), so the dataset is the
 * same whatever the chunking, and the same seed always gives the same rows. What is planted on
 * purpose, and the public figures behind the background rates, are in truths.ts.
 */
import { AXES } from "../plugin/axes.ts"
import { roundTo } from "../plugin/stats.ts"
import { firstDayOfMonth, formatDate, formatMonth, lastDayOfMonth, parseDate, parseMonth } from "../health/calendar.ts"
import type { Chunk } from "../health/DatasetWriter.ts"
import type { HealthTableName, Row, Rows } from "../health/healthTables.ts"
import { PATIENTS_PER_CHUNK } from "../config/limits.ts"
import { Rng } from "./random.ts"
import * as T from "./truths.ts"
import { CONCEPT_MAPS, type MapKind, primaryCodeOf } from "../health/ConceptMaps.ts"
import { codesOf, DEFAULT_VOCABULARY, VOCABULARY_KINDS } from "../health/vocabulary.ts"

/** Bumped whenever the same seed would give different rows. */
export const GENERATOR_VERSION = "1"



/** What to generate. */
export interface GeneratorOptions {
  readonly patients: number
  readonly seed: number
}

// Random streams: one per kind of thing, indexed by the thing's number.
const STREAM = { patient: 1, study: 2, animal: 3, human: 4 } as const

const FIRST_MONTH = parseMonth(T.WINDOW.firstMonth)
const N_MONTHS = T.WINDOW.months
const FIRST_DAY = firstDayOfMonth(FIRST_MONTH)
const AS_OF_DAY = parseDate(T.WINDOW.asOf)
const AS_OF_YEAR = Math.floor((FIRST_MONTH + N_MONTHS - 1) / 12)
const FIRST_WEEK = parseDate(T.WINDOW.firstWeek)
const MID_MONTH = (N_MONTHS - 1) / 2

const REGIONS = codesOf("region")
const CONDITION_CODES = T.CONDITIONS.map((c) => c.code)
const RATE_METRICS = ["complication_rate", "revision_rate", "infection_rate", "device_failure_rate"] as const
const AXIS_INDEX: Readonly<Record<string, number>> = Object.fromEntries(AXES.map((a, i) => [a, i]))

const clamp = (x: number, lo: number, hi: number) => (x < lo ? lo : x > hi ? hi : x)
const logistic = (x: number) => 1 / (1 + Math.exp(-x))

/** The age distribution as (age, weight) points, uniform within each band. */
const AGE_POINTS: ReadonlyArray<readonly [number, number]> = T.AGE_BANDS.flatMap((b) =>
  Array.from({ length: b.to - b.from + 1 }, (_, i) => [b.from + i, b.share / (b.to - b.from + 1)] as const)
)

/**
 * The odds at age 50 that make a condition's prevalence over the age distribution equal its target
 * (bisection on log-odds: prevalence rises monotonically with it).
 */
const baseLogOdds = (prevalence: number, orPer10y: number): number => {
  const prev = (l: number) => AGE_POINTS.reduce((s, [age, w]) => s + w * logistic(l + Math.log(orPer10y) * (age - 50) / 10), 0)
  let lo = -15
  let hi = 15
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2
    if (prev(mid) < prevalence) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}
const CONDITION_LOG_ODDS = T.CONDITIONS.map((c) => baseLogOdds(c.prevalence, c.orPer10y))

/** Mutable id counters; the writer passes the same one through every chunk, in patient order. */
export interface IdCounters {
  encounter: number
  exposure: number
  adverseEvent: number
  implant: number
}
export const newCounters = (): IdCounters => ({ encounter: 0, exposure: 0, adverseEvent: 0, implant: 0 })

/** One device study with its true rates (planted) and score means. */
interface Study {
  readonly id: string
  readonly device: string
  readonly region: string
  readonly rates: Readonly<Record<(typeof RATE_METRICS)[number], number>>
  readonly scores: Readonly<Record<"patient_satisfaction" | "pain_reduction" | "quality_of_life", number>>
}

const studyCode = (device: string, s: number) => `${device.split("_").map((w) => w.slice(0, 4).toUpperCase()).join("")}-${String(s + 1).padStart(2, "0")}`

/** The device studies of a seed, with their planted true rates. */
export const deviceStudies = (seed: number): ReadonlyArray<Study> =>
  T.DEVICES.flatMap((d, di) =>
    Array.from({ length: T.STUDIES_PER_DEVICE }, (_, s) => {
      const rng = new Rng(seed, STREAM.study, di * 1000 + s)
      const rates = Object.fromEntries(RATE_METRICS.map((m) => [m, Math.max(0.002, d.rates[m].mean + d.rates[m].spread * rng.normal())])) as Study["rates"]
      const scores = {
        patient_satisfaction: d.scores.patient_satisfaction + 0.3 * rng.normal(),
        pain_reduction: d.scores.pain_reduction + 0.45 * rng.normal(),
        quality_of_life: d.scores.quality_of_life + 0.03 * rng.normal()
      }
      return { id: studyCode(d.device, s), device: d.device, region: REGIONS[(di + s) % REGIONS.length]!, rates, scores }
    })
  )

/** Rows of the tables that do not depend on patients: vocabulary, dataset_info, device_studies. */
export const globalRows = (options: GeneratorOptions, studies: ReadonlyArray<Study>): Rows => ({
  vocabulary: VOCABULARY_KINDS.flatMap((kind) =>
    DEFAULT_VOCABULARY[kind].map((e): Row => {
      const standard = kind in CONCEPT_MAPS ? primaryCodeOf(kind as MapKind, e.code) : undefined
      return [kind, e.code, e.label, standard?.system ?? null, standard?.code ?? null]
    })
  ),
  dataset_info: [
    ["as_of", T.WINDOW.asOf],
    ["source", "generated"],
    ["generator_version", GENERATOR_VERSION],
    ["seed", String(options.seed)],
    ["patients", String(options.patients)]
  ],
  device_studies: studies.map((s): Row => [s.id, s.device, s.region])
})

/** A drug course of one patient, as the axis and encounter models need it. */
interface Course {
  readonly drug: string
  readonly startDay: number
  readonly endDay: number | null
  readonly adherence: number
}

/** The patient's underlying (noise-free) axis level per axis and month, before the drug effects. */
const axisLevels = (rng: Rng, age: number, conditions: ReadonlySet<string>): Float64Array => {
  const levels = new Float64Array(AXES.length * N_MONTHS)
  const g = rng.normal()
  for (let a = 0; a < AXES.length; a++) {
    const axis = AXES[a]!
    let base = T.AXIS_BASELINE.mean + T.AXIS_BASELINE.commonSd * g + T.AXIS_BASELINE.ownSd * rng.normal()
    for (const c of conditions) base += T.CONDITION_AXIS_SHIFT[c]?.[axis] ?? 0
    if (axis === "PO" && age > 50) base += T.PO_PER_DECADE_OVER_50 * (age - 50) / 10
    let slope = T.PATIENT_SLOPE_SD * rng.normal()
    if (axis === T.PLANTED_TREND.axis && T.PLANTED_TREND.cohort.conditions.every((c) => conditions.has(c))) slope += T.PLANTED_TREND.perMonth
    for (let m = 0; m < N_MONTHS; m++) levels[a * N_MONTHS + m] = base + slope * (m - MID_MONTH)
  }
  return levels
}

/** Adds each course's planted axis effect to the levels (ramping up over the first months of new users). */
const addDrugEffects = (levels: Float64Array, courses: ReadonlyArray<Course>): void => {
  for (const course of courses) {
    for (const effect of T.DRUG_AXIS_EFFECTS) {
      if (effect.drug !== course.drug) continue
      const size = course.adherence >= T.ADHERENCE_THRESHOLD ? effect.adherent : effect.nonAdherent
      const a = AXIS_INDEX[effect.axis]!
      for (let m = 0; m < N_MONTHS; m++) {
        const month = FIRST_MONTH + m
        if (lastDayOfMonth(month) < course.startDay) continue
        if (course.endDay !== null && firstDayOfMonth(month) > course.endDay) continue
        const monthsOn = (lastDayOfMonth(month) - course.startDay) / 30.4375
        levels[a * N_MONTHS + m]! += size * clamp(monthsOn / effect.rampMonths, 0, 1)
      }
    }
  }
}

const conditionTerm = (terms: Readonly<Record<string, number>>, conditions: ReadonlySet<string>) => {
  let s = 0
  for (const c of conditions) s += terms[c] ?? 0
  return s
}
const axisTerm = (terms: Readonly<Partial<Record<string, number>>>, levels: Float64Array, m: number) => {
  let s = 0
  for (const [axis, w] of Object.entries(terms)) s += (w ?? 0) * (clamp(levels[AXIS_INDEX[axis]! * N_MONTHS + m]!, 0, 10) - 5)
  return s
}

/** Rows of `count` patients starting at id `firstId` (ids are 1-based). */
export const patientRows = (options: GeneratorOptions, firstId: number, count: number, studies: ReadonlyArray<Study>, ids: IdCounters): Rows => {
  const out = {
    patients: [] as Array<Row>,
    patient_conditions: [] as Array<Row>,
    axis_scores: [] as Array<Row>,
    encounters: [] as Array<Row>,
    drug_exposures: [] as Array<Row>,
    adverse_events: [] as Array<Row>,
    device_implants: [] as Array<Row>,
    device_outcomes: [] as Array<Row>
  }
  const studiesOf = new Map<string, Array<Study>>()
  for (const s of studies) studiesOf.set(s.device, [...(studiesOf.get(s.device) ?? []), s])
  const windowDays = AS_OF_DAY - FIRST_DAY + 1

  for (let id = firstId; id < firstId + count; id++) {
    const rng = new Rng(options.seed, STREAM.patient, id)
    // Demographics.
    const band = rng.weighted(T.AGE_BANDS, T.AGE_BANDS.map((b) => b.share))
    const age = rng.int(band.from, band.to)
    const sex = rng.chance(T.FEMALE_SHARE) ? "female" : "male"
    const region = REGIONS[rng.int(0, REGIONS.length - 1)]!
    out.patients.push([id, AS_OF_YEAR - age, sex, region, null])

    // Conditions.
    const conditions = new Set<string>()
    T.CONDITIONS.forEach((c, i) => {
      if (rng.chance(logistic(CONDITION_LOG_ODDS[i]! + Math.log(c.orPer10y) * (age - 50) / 10))) conditions.add(c.code)
    })
    for (const c of CONDITION_CODES) if (conditions.has(c)) out.patient_conditions.push([id, c])

    // Drug courses and their adverse events.
    const courses: Array<Course> = []
    for (const use of T.DRUG_USE) {
      const indication = use.indications.find(([c]) => conditions.has(c))
      const p = age < use.minAge ? 0 : indication !== undefined ? indication[1] : use.otherwise
      if (!rng.chance(p)) continue
      const newUser = rng.chance(T.NEW_USER_SHARE)
      const startMonth = newUser ? rng.int(2, 29) : -1
      const startDay = newUser ? firstDayOfMonth(FIRST_MONTH + startMonth) + rng.int(0, 27) : FIRST_DAY - rng.int(1, 5 * 365)
      const stops = rng.chance(T.DISCONTINUATION_SHARE)
      const stopMonth = rng.int(Math.max(startMonth, 0) + 1, N_MONTHS - 1)
      const endDay = stops ? firstDayOfMonth(FIRST_MONTH + stopMonth) + rng.int(0, 27) : null
      const adherence = roundTo(rng.chance(T.ADHERENT_SHARE) ? rng.between(0.8, 1) : rng.between(0.2, 0.8), 2)
      courses.push({ drug: use.drug, startDay, endDay, adherence })
      out.drug_exposures.push([++ids.exposure, id, use.drug, formatDate(startDay), endDay === null ? null : formatDate(endDay), adherence])
      for (const ae of T.ADVERSE_EVENT_RATES) {
        if (ae.drug !== use.drug || !rng.chance(ae.rate)) continue
        const from = Math.max(startDay, FIRST_DAY)
        const to = endDay ?? AS_OF_DAY
        out.adverse_events.push([++ids.adverseEvent, id, use.drug, ae.type, formatDate(rng.int(from, to))])
      }
    }

    // Axis scores: underlying level + noise, with enrolment, gaps and empty values.
    const levels = axisLevels(rng, age, conditions)
    addDrugEffects(levels, courses)
    const enrolled = rng.chance(T.LATE_ENROLMENT_SHARE) ? rng.int(1, 23) : 0
    for (let m = enrolled; m < N_MONTHS; m++) {
      const missing = rng.chance(T.MISSING_MONTH_SHARE)
      const row: Row = [id, formatMonth(FIRST_MONTH + m)]
      for (let a = 0; a < AXES.length; a++) {
        const value = roundTo(clamp(levels[a * N_MONTHS + m]! + T.AXIS_NOISE_SD * rng.normal(), 0, 10), 1)
        row.push(rng.chance(T.MISSING_VALUE_SHARE) ? null : value)
      }
      if (!missing) out.axis_scores.push(row)
    }

    // Encounters: monthly hazards from age, conditions and the underlying axis levels.
    const ageTerm = (age - 60) / 10
    const hospFixed = T.HOSPITALIZATION.intercept + T.HOSPITALIZATION.agePer10y * ageTerm + conditionTerm(T.HOSPITALIZATION.conditions, conditions)
    const readmitFixed = T.READMISSION.intercept + T.READMISSION.agePer10y * ageTerm + conditionTerm(T.READMISSION.conditions, conditions)
    const outpatientPerMonth = (T.OUTPATIENT.perYear + T.OUTPATIENT.perCondition * conditions.size) / 12
    const visits: Array<[kind: string, start: number, end: number]> = []
    for (let m = enrolled; m < N_MONTHS; m++) {
      const month = FIRST_MONTH + m
      const first = firstDayOfMonth(month)
      const last = Math.min(lastDayOfMonth(month), AS_OF_DAY)
      const eta = hospFixed + axisTerm(T.HOSPITALIZATION.axes, levels, m)
      for (let k = rng.poisson(Math.exp(eta) / 12); k > 0; k--) {
        const start = rng.int(first, last)
        const end = Math.min(start + 1 + rng.poisson(T.LENGTH_OF_STAY_EXTRA_MEAN), AS_OF_DAY)
        visits.push(["inpatient", start, end])
        if (rng.chance(logistic(readmitFixed + axisTerm(T.READMISSION.axes, levels, m)))) {
          const again = end + rng.int(1, 30)
          if (again <= AS_OF_DAY) visits.push(["inpatient", again, Math.min(again + 1 + rng.poisson(T.LENGTH_OF_STAY_EXTRA_MEAN), AS_OF_DAY)])
        }
      }
      const edRate = T.EMERGENCY.perYear / 12 * Math.exp(T.EMERGENCY.hazardShare * (eta - T.HOSPITALIZATION.intercept))
      for (let k = rng.poisson(edRate); k > 0; k--) {
        const day = rng.int(first, last)
        visits.push(["emergency", day, day])
      }
      for (let k = rng.poisson(outpatientPerMonth); k > 0; k--) {
        const day = rng.int(first, last)
        visits.push(["outpatient", day, day])
      }
    }
    visits.sort((x, y) => x[1] - y[1] || x[2] - y[2] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
    for (const [kind, start, end] of visits) out.encounters.push([++ids.encounter, id, kind, formatDate(start), formatDate(end)])

    // Device implants and their outcomes.
    for (const d of T.DEVICES) {
      const c = d.candidates
      if (age < c.minAge || (c.condition !== undefined && !conditions.has(c.condition)) || !rng.chance(c.p)) continue
      const options = studiesOf.get(d.device)!
      const study = options[rng.int(0, options.length - 1)]!
      const implant = ++ids.implant
      out.device_implants.push([implant, id, d.device, study.id, formatDate(FIRST_DAY + rng.int(0, windowDays - 1))])
      for (const m of RATE_METRICS) out.device_outcomes.push([implant, m, rng.chance(study.rates[m]) ? 1 : 0])
      out.device_outcomes.push([implant, "patient_satisfaction", roundTo(clamp(study.scores.patient_satisfaction + 1.2 * rng.normal(), 0, 10), 1)])
      out.device_outcomes.push([implant, "pain_reduction", roundTo(clamp(study.scores.pain_reduction + 1.8 * rng.normal(), 0, 10), 1)])
      out.device_outcomes.push([implant, "quality_of_life", roundTo(clamp(study.scores.quality_of_life + 0.12 * rng.normal(), 0, 1), 3)])
    }
  }
  return out
}

/** An AR(1) log-intensity series of `n` weeks after a burn-in of a year. */
const logIntensity = (rng: Rng, n: number): Float64Array => {
  const x = new Float64Array(n)
  let v = 0
  for (let i = 0; i < 52; i++) v = T.SURVEILLANCE.phi * v + T.SURVEILLANCE.sigma * rng.normal()
  for (let i = 0; i < n; i++) {
    v = T.SURVEILLANCE.phi * v + T.SURVEILLANCE.sigma * rng.normal()
    x[i] = v
  }
  return x
}

/** Weekly animal and human surveillance rows, with the planted leads. */
export const surveillanceRows = (options: GeneratorOptions): Rows => {
  const animal: Array<Row> = []
  const human: Array<Row> = []
  const history = 8 // weeks of animal cases before the window, for lags up to 8 weeks
  const n = T.WINDOW.weeks
  const species = codesOf("species")
  const conditions = codesOf("zoonotic_condition")
  const animalSeries = new Map<string, Int32Array>()
  conditions.forEach((condition, ci) => {
    const hosts = T.ZOONOTIC_HOSTS[condition] ?? []
    REGIONS.forEach((region, ri) => {
      for (const sp of hosts) {
        const rng = new Rng(options.seed, STREAM.animal, (ci * 100 + ri) * 100 + species.indexOf(sp))
        const x = logIntensity(rng, n + history)
        const cases = Int32Array.from(x, (v) => rng.poisson(T.SURVEILLANCE.animalBase * Math.exp(v)))
        animalSeries.set(`${sp}/${condition}/${region}`, cases)
        for (let w = 0; w < n; w++) animal.push([sp, condition, region, formatDate(FIRST_WEEK + 7 * w), cases[w + history]!])
      }
      const rng = new Rng(options.seed, STREAM.human, ci * 100 + ri)
      const link = T.ZOONOTIC_LINKS.find((l) => l.condition === condition && l.region === region)
      const source = link === undefined ? undefined : animalSeries.get(`${link.species}/${condition}/${region}`)
      const x = logIntensity(rng, n)
      for (let w = 0; w < n; w++) {
        const mean = link !== undefined && source !== undefined
          ? T.SURVEILLANCE.humanBase + link.perAnimalCase * source[w + history - link.lagDays / 7]!
          : T.SURVEILLANCE.humanBase * Math.exp(x[w]!)
        human.push([condition, region, formatDate(FIRST_WEEK + 7 * w), rng.poisson(mean)])
      }
    })
  })
  return { animal_surveillance: animal, human_surveillance: human }
}

/** The window's first and last month numbers (for the loader and the analytics). */
export const WINDOW_MONTHS = { first: FIRST_MONTH, count: N_MONTHS } as const

/**
 * The whole dataset as chunks, lazily: vocabulary and studies first, then the patients, then the
 * surveillance series with `dataset_info` (written last: its `as_of` marks the dataset complete).
 */
export function* generatedChunks(options: GeneratorOptions): Generator<Chunk> {
  const studies = deviceStudies(options.seed)
  const global = globalRows(options, studies)
  yield { rows: { vocabulary: global.vocabulary ?? [], device_studies: global.device_studies ?? [] }, done: 0 }
  const ids = newCounters()
  for (let first = 1; first <= options.patients; first += PATIENTS_PER_CHUNK) {
    const count = Math.min(PATIENTS_PER_CHUNK, options.patients - first + 1)
    yield { rows: patientRows(options, first, count, studies, ids), done: 0.98 * (first + count - 1) / options.patients }
  }
  yield { rows: { ...surveillanceRows(options), dataset_info: global.dataset_info ?? [] }, done: 1 }
}
