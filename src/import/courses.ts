/** Drug courses of an import, from its staged prescriptions and dispenses (docs/data.md, "Importing FHIR and OMOP"). */
import { formatDate } from "../health/calendar.ts"
import type { Chunk } from "../health/DatasetWriter.ts"
import type { Row, Rows } from "../health/healthTables.ts"
import type { StagedFacts } from "./Staging.ts"

/** Rows per chunk handed to the writer. */
export const ROWS_PER_CHUNK = 20_000

/** What making courses needs of the dataset's vocabulary: the drug codes a staged concept maps to. */
interface Vocab {
  readonly codesOf: (concept: number) => ReadonlyArray<string>
}

/**
 * Drug courses, patient by patient: a course of several ingredients is one course each; its
 * adherence is the stated one, else the proportion of the course's days covered by the patient's
 * dispenses of the ingredient (PQA PDC: a supply that overlaps the one before is shifted to
 * start after it), else unknown (no dispenses: NULL, never assumed). Dispenses of an ingredient
 * the patient has no course of make one course, from the first to the end of the last supply, whose
 * adherence is known from two dispenses or more (one covers its own course whole).
 */
export function* coursesOf(s: StagedFacts, vocab: Vocab, asOfDay: number, emit: (rows: Rows) => Chunk): Generator<Chunk> {
  interface C {
    readonly f: number
    readonly l: number
    readonly src: string
    readonly patient: number
    readonly drug: string
    readonly sub: number
    readonly start: number
    readonly end: number | null
    readonly adherence: number | null
  }
  const out: Array<C> = []
  // A course's details stated apart (course_detail): an adherence, and that it is ongoing.
  const courses = s.db.prepare(`SELECT c.f, c.l, c.src, c.patient, c.concept, c.start, CASE WHEN d.ongoing = 1 THEN NULL ELSE c.finish END AS finish, coalesce(d.adherence, c.adherence) AS adherence
    FROM course c LEFT JOIN (SELECT course, max(adherence) AS adherence, max(ongoing) AS ongoing FROM course_detail GROUP BY course) d ON d.course = c.src
    ORDER BY c.patient`).iterate() as Iterator<Record<string, number | string | null>>
  const dispenses = s.db.prepare("SELECT patient, concept, day, days FROM dispense ORDER BY patient, day").iterate() as Iterator<Record<string, number>>
  let nextCourse = courses.next()
  let nextDispense = dispenses.next()
  const patientOf = (r: IteratorResult<Record<string, unknown>>) => (r.done === true ? Number.POSITIVE_INFINITY : Number(r.value.patient))
  let synthetic = 0
  while (nextCourse.done !== true || nextDispense.done !== true) {
    const p = Math.min(patientOf(nextCourse), patientOf(nextDispense))
    const mine: Array<Record<string, number | string | null>> = []
    while (patientOf(nextCourse) === p) {
      mine.push(nextCourse.value!)
      nextCourse = courses.next()
    }
    const supplies = new Map<string, Array<readonly [number, number]>>()
    while (patientOf(nextDispense) === p) {
      const d = nextDispense.value!
      for (const drug of vocab.codesOf(d.concept!)) {
        const list = supplies.get(drug) ?? []
        list.push([d.day!, d.days!])
        supplies.set(drug, list)
      }
      nextDispense = dispenses.next()
    }
    const covered = new Set<string>()
    for (const c of mine) {
      vocab.codesOf(Number(c.concept)).forEach((drug, sub) => {
        covered.add(drug)
        const start = Number(c.start)
        const end = c.finish === null ? null : Number(c.finish)
        const stated = c.adherence === null ? null : Number(c.adherence)
        const s = supplies.get(drug)
        out.push({ f: Number(c.f), l: Number(c.l), src: String(c.src), patient: p, drug, sub, start, end, adherence: stated ?? (s === undefined ? null : pdc(s, start, end ?? asOfDay)) })
      })
    }
    for (const [drug, s] of supplies) {
      if (covered.has(drug)) continue
      const start = s[0]![0]
      let end = start
      for (const [day, days] of s) end = Math.max(end, day + days - 1)
      synthetic++
      // One fill covers its own course whole: its PDC says nothing (ETLs write a whole prescription
      // as one claim), so adherence is known only from two fills or more.
      out.push({ f: Number.MAX_SAFE_INTEGER, l: synthetic, src: "", patient: p, drug, sub: 0, start, end, adherence: s.length >= 2 ? pdc(s, start, end) : null })
    }
  }
  out.sort((a, b) => a.f - b.f || a.l - b.l || a.sub - b.sub)
  let batch: Array<Row> = []
  let sources: Array<Row> = []
  for (const [i, c] of out.entries()) {
    batch.push([i + 1, c.patient + 1, c.drug, formatDate(c.start), c.end === null ? null : formatDate(c.end), c.adherence === null ? null : Math.round(c.adherence * 1e4) / 1e4])
    if (c.src !== "") sources.push(["drug_exposures", String(i + 1), c.src])
    if (batch.length >= ROWS_PER_CHUNK) {
      yield emit({ drug_exposures: batch, source_ids: sources })
      batch = []
      sources = []
    }
  }
  yield emit({ drug_exposures: batch, source_ids: sources })
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
