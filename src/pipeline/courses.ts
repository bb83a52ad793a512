/**
 * Drug exposure eras of an import, from its staged exposure rows (docs/data.md, "Drug exposure:
 * eras, fills and adherence"): one rule for FHIR and OMOP. Every record of a drug (an order, a
 * statement, a DRUG_EXPOSURE row, a dispensing, a pharmacy claim) is exposure to each of its
 * ingredients from its start to its end; rows of one person and ingredient join an era while each
 * starts at most 30 days after the latest end so far (OHDSI's DRUG_ERA persistence window, as
 * ETL-Synthea's insert_drug_era builds it); nothing runs past a death; adherence is the proportion
 * of the era's days covered by its fills (PQA PDC), known only from two fills or more.
 */
import { formatDate } from "../health/calendar.ts"
import type { Chunk } from "../health/DatasetWriter.ts"
import type { Row, Rows } from "../health/healthTables.ts"
import type { StagedFacts } from "./Staging.ts"

/** Rows per chunk handed to the writer. */
export const ROWS_PER_CHUNK = 20_000

/** OHDSI's persistence window: a row starting at most this many days after an era's latest end joins it. */
export const PERSISTENCE_DAYS = 30

/** What making eras needs of the dataset's vocabulary: the drug codes a staged concept maps to. */
interface Vocab {
  readonly codesOf: (concept: number) => ReadonlyArray<string>
}

/** One staged exposure row of one ingredient. */
interface Exposure {
  /** The row's place in the import's file order (eras are numbered in the order of their first row). */
  readonly f: number
  readonly l: number
  readonly src: string
  readonly start: number
  /** Its last day; +∞ while ongoing. */
  end: number
  /** Days supplied when the row is a fill (a dispensing with a supply), else null. */
  readonly fill: number | null
  /** An adherence the source states (the service's own exports), else null. */
  readonly stated: number | null
}

/** One era: its rows and span. */
interface Era {
  readonly f: number
  readonly l: number
  readonly patient: number
  readonly drug: string
  readonly start: number
  /** +∞ while ongoing. */
  end: number
  readonly rows: Array<Exposure>
}

/** What reading a patient's exposures counts in the summary, by reason. */
const NOTES = {
  afterDeath: "drug exposure starting after the patient's death: left out",
  cutAtDeath: "drug exposure running past the patient's death: ended at the death",
  cutAtObservation: "ongoing drug exposure ended at the end of the patient's observation period"
} as const

/** How far the eras made agree with what the source derived itself (reconcile.ts), counted as they are made. */
export interface EraAgreement {
  /** Of the DRUG_ERA rows (one per ingredient) of the patients with eras here: the same era here (start and end), or one overlapping. */
  drugEraSame: number
  drugEraOverlapping: number
  /** Eras here, and those starting within an observation period of their patient. */
  eras: number
  erasObserved: number
}

/**
 * Eras, patient by patient (see the module comment): each row's end is cut at the death (a row
 * starting after it is left out) and an ongoing row at the end of the observation period holding
 * its start, when that ends before as_of; rows of one ingredient then join eras with the 30-day
 * persistence window. Each era's rows are its source ids (space-separated, in file order).
 */
export function* coursesOf(s: StagedFacts, vocab: Vocab, asOfDay: number, emit: (rows: Rows) => Chunk, agreement?: EraAgreement): Generator<Chunk> {
  const courses = s.db.prepare(`SELECT c.f, c.l, c.src, c.patient, c.concept, c.start, CASE WHEN d.ongoing = 1 THEN NULL ELSE c.finish END AS finish, coalesce(d.adherence, c.adherence) AS adherence
    FROM course c LEFT JOIN (SELECT course, max(adherence) AS adherence, max(ongoing) AS ongoing FROM course_detail GROUP BY course) d ON d.course = c.src
    ORDER BY c.patient`).iterate() as Iterator<Record<string, number | string | null>>
  const dispenses = s.db.prepare("SELECT f, l, src, patient, concept, day, days, finish FROM dispense ORDER BY patient").iterate() as Iterator<Record<string, number | string | null>>
  const deathOf = s.db.prepare("SELECT death FROM patient WHERE idx = ?")
  const periodsOf = s.db.prepare("SELECT start, finish FROM observed WHERE patient = ? AND start IS NOT NULL")
  const sourceErasOf = s.db.prepare("SELECT concept, start, finish FROM source_era WHERE tbl = 'drug_era' AND patient = ?")
  const notes = new Map<string, number>()
  const note = (reason: string) => notes.set(reason, (notes.get(reason) ?? 0) + 1)
  // Each era as it is written, made once its patient is read (its rows are then let go).
  const eras: Array<{ readonly f: number; readonly l: number; readonly drug: string; readonly start: number; readonly row: Row; readonly sources: string }> = []
  let nextCourse = courses.next()
  let nextDispense = dispenses.next()
  const patientOf = (r: IteratorResult<Record<string, unknown>>) => (r.done === true ? Number.POSITIVE_INFINITY : Number(r.value.patient))
  while (nextCourse.done !== true || nextDispense.done !== true) {
    const p = Math.min(patientOf(nextCourse), patientOf(nextDispense))
    const byDrug = new Map<string, Array<Exposure>>()
    const add = (concept: number, e: Exposure) => {
      for (const drug of vocab.codesOf(concept)) {
        const list = byDrug.get(drug) ?? []
        list.push({ ...e })
        byDrug.set(drug, list)
      }
    }
    while (patientOf(nextCourse) === p) {
      const c = nextCourse.value!
      const start = Number(c.start)
      add(Number(c.concept), { f: Number(c.f), l: Number(c.l), src: String(c.src), start, end: c.finish === null ? Number.POSITIVE_INFINITY : Number(c.finish), fill: null, stated: c.adherence === null ? null : Number(c.adherence) })
      nextCourse = courses.next()
    }
    while (patientOf(nextDispense) === p) {
      const d = nextDispense.value!
      const day = Number(d.day)
      const days = Number(d.days)
      add(Number(d.concept), { f: Number(d.f), l: Number(d.l), src: String(d.src), start: day, end: d.finish === null ? day + days - 1 : Number(d.finish), fill: days, stated: null })
      nextDispense = dispenses.next()
    }
    const death = (deathOf.get(p) as { readonly death: number | null } | undefined)?.death ?? null
    const periods = periodsOf.all(p) as Array<{ readonly start: number; readonly finish: number }>
    const mine: Array<Era> = []
    for (const [drug, rows] of byDrug) {
      const kept = rows.filter((e) => {
        if (death !== null && e.start > death) {
          note(NOTES.afterDeath)
          return false
        }
        if (e.end === Number.POSITIVE_INFINITY) {
          const period = periods.find((o) => o.start <= e.start && e.start <= o.finish)
          if (period !== undefined && period.finish < asOfDay && (death === null || period.finish < death)) {
            e.end = period.finish
            note(NOTES.cutAtObservation)
          }
        }
        if (death !== null && e.end > death && !(e.end === Number.POSITIVE_INFINITY && death >= asOfDay)) {
          e.end = death
          note(NOTES.cutAtDeath)
        }
        return true
      })
      kept.sort((a, b) => a.start - b.start || a.f - b.f || a.l - b.l)
      let era: Era | undefined
      for (const e of kept) {
        if (era !== undefined && e.start - era.end <= PERSISTENCE_DAYS) {
          era.rows.push(e)
          if (e.end > era.end) era.end = e.end
          continue
        }
        era = { f: e.f, l: e.l, patient: p, drug, start: e.start, end: e.end, rows: [e] }
        mine.push(era)
      }
    }
    if (agreement !== undefined) agree(agreement, mine, periods, sourceErasOf.all(p) as Array<{ readonly concept: number; readonly start: number; readonly finish: number }>, vocab, asOfDay)
    for (const era of mine) {
      const end = era.end === Number.POSITIVE_INFINITY ? null : era.end
      const adherence = adherenceOf(era, end ?? asOfDay)
      const ids = [...era.rows].sort((a, b) => a.f - b.f || a.l - b.l).map((e) => e.src).filter((src) => src !== "")
      eras.push({
        f: era.f,
        l: era.l,
        drug: era.drug,
        start: era.start,
        row: [p + 1, era.drug, formatDate(era.start), end === null ? null : formatDate(end), adherence === null ? null : Math.round(adherence * 1e4) / 1e4],
        sources: [...new Set(ids)].join(" ")
      })
    }
    mine.length = 0
  }
  for (const [reason, n] of notes) s.report.note(reason, n)
  eras.sort((a, b) => a.f - b.f || a.l - b.l || (a.drug < b.drug ? -1 : a.drug > b.drug ? 1 : 0) || a.start - b.start)
  let batch: Array<Row> = []
  let sources: Array<Row> = []
  for (const [i, era] of eras.entries()) {
    batch.push([i + 1, ...era.row])
    if (era.sources !== "") sources.push(["drug_exposures", String(i + 1), era.sources])
    if (batch.length >= ROWS_PER_CHUNK) {
      yield emit({ drug_exposures: batch, source_ids: sources })
      batch = []
      sources = []
    }
  }
  yield emit({ drug_exposures: batch, source_ids: sources })
}

/** Counts how one patient's eras agree with the source's DRUG_ERA rows and observation periods. */
const agree = (
  a: EraAgreement,
  eras: ReadonlyArray<Era>,
  periods: ReadonlyArray<{ readonly start: number; readonly finish: number }>,
  source: ReadonlyArray<{ readonly concept: number; readonly start: number; readonly finish: number }>,
  vocab: Vocab,
  asOfDay: number
): void => {
  a.eras += eras.length
  for (const e of eras) if (periods.some((o) => o.start <= e.start && e.start <= o.finish)) a.erasObserved++
  for (const row of source) {
    for (const drug of vocab.codesOf(row.concept)) {
      const same = eras.filter((e) => e.drug === drug)
      if (same.some((e) => e.start === row.start && Math.min(e.end, asOfDay) === row.finish)) a.drugEraSame++
      if (same.some((e) => e.start <= row.finish && Math.min(e.end, asOfDay) >= row.start)) a.drugEraOverlapping++
    }
  }
}

/**
 * An era's adherence: PDC over its days from its fills when it holds two or more (one fill covers
 * the span it defines, so it says nothing); else the days-weighted mean of what its rows state;
 * else unknown (null, never assumed).
 */
const adherenceOf = (era: Era, end: number): number | null => {
  const fills = era.rows.filter((e) => e.fill !== null).map((e) => [e.start, e.fill!] as const)
  if (fills.length >= 2) return pdc(fills, era.start, end)
  let days = 0
  let sum = 0
  for (const e of era.rows) {
    if (e.stated === null) continue
    const n = Math.min(e.end, end) - e.start + 1
    days += n
    sum += e.stated * n
  }
  return days > 0 ? sum / days : null
}

/**
 * Proportion of days covered over [start, end] by supplies (day handed over, days supplied), in
 * the order handed over; a supply that starts before the one before it runs out starts the day
 * after (Pharmacy Quality Alliance, PDC methodology). 0–1.
 */
export const pdc = (supplies: ReadonlyArray<readonly [number, number]>, start: number, end: number): number => {
  const sorted = [...supplies].sort((a, b) => a[0] - b[0])
  let coveredUntil = Number.NEGATIVE_INFINITY
  let covered = 0
  for (const [day, days] of sorted) {
    const from = Math.max(day, coveredUntil + 1)
    const to = from + days - 1
    coveredUntil = to
    const a = Math.max(from, start)
    const b = Math.min(to, end)
    if (b >= a) covered += b - a + 1
  }
  return end < start ? 0 : Math.min(1, covered / (end - start + 1))
}
