/**
 * A self-check a site can read: where an OMOP source ships the tables it derived itself (DRUG_ERA,
 * CONDITION_ERA, OBSERVATION_PERIOD, as the CDM's ETLs build them), how far the import's own
 * reading agrees with them (docs/data.md, "Reconciled with the source"). Nothing here changes the
 * dataset; a table that is there but empty is said to be empty.
 */
import type { EraAgreement } from "./courses.ts"
import type { StagedFacts } from "./Staging.ts"

/** The derived tables an import can be compared with. */
export type DerivedTable = "drug_era" | "condition_era" | "observation_period"

import type { Agreement } from "./importSummary.ts"

export type { Agreement }

/** A new, zeroed tally for coursesOf. */
export const newAgreement = (): EraAgreement => ({ drugEraSame: 0, drugEraOverlapping: 0, eras: 0, erasObserved: 0 })

const count = (s: StagedFacts, sql: string): number => Number((s.db.prepare(sql).get() as { readonly n: number }).n)

/**
 * The agreement of each derived table the source holds (`present`): DRUG_ERA, its eras (one per
 * ingredient) and how many are the same here (person, ingredient, start and end; an ongoing era
 * ends at as_of) or overlap one here; CONDITION_ERA, its distinct person–condition pairs and how
 * many a patient here holds; OBSERVATION_PERIOD, the patients it observes and the eras here that
 * start within a period of their patient.
 */
export const reconcile = (s: StagedFacts, codesOf: (concept: number) => ReadonlyArray<string>, present: ReadonlySet<DerivedTable>, a: EraAgreement): Partial<Record<DerivedTable, Agreement>> => {
  const out: Partial<Record<DerivedTable, Agreement>> = {}
  if (present.has("drug_era")) {
    let eras = 0
    for (const r of s.db.prepare("SELECT concept, count(*) AS n FROM source_era WHERE tbl = 'drug_era' GROUP BY concept").iterate() as Iterable<{ readonly concept: number; readonly n: number }>) {
      eras += r.n * codesOf(r.concept).length
    }
    out.drug_era = eras === 0 ? "empty" : { eras, same: a.drugEraSame, overlapping: a.drugEraOverlapping, imported: a.eras }
  }
  if (present.has("condition_era")) {
    out.condition_era = conditionPairs(s, codesOf)
  }
  if (present.has("observation_period")) {
    const observed = count(s, "SELECT count(DISTINCT patient) AS n FROM observed")
    out.observation_period = count(s, "SELECT count(*) AS n FROM observed") === 0
      ? "empty"
      : { patients: s.patients, observed, eras: a.eras, eras_observed: a.erasObserved }
  }
  return out
}

/** CONDITION_ERA's distinct person–condition pairs, and those a patient here holds (both read in patient order, one patient at a time). */
const conditionPairs = (s: StagedFacts, codesOf: (concept: number) => ReadonlyArray<string>): Agreement => {
  const source = s.db.prepare("SELECT DISTINCT patient, concept FROM source_era WHERE tbl = 'condition_era' ORDER BY patient").iterate() as Iterator<{ readonly patient: number; readonly concept: number }>
  const held = s.db.prepare("SELECT DISTINCT patient, concept FROM condition ORDER BY patient").iterate() as Iterator<{ readonly patient: number; readonly concept: number }>
  let pairs = 0
  let matched = 0
  let next = held.next()
  for (let r = source.next(); r.done !== true;) {
    const p = r.value.patient
    const wanted = new Set<string>()
    for (; r.done !== true && r.value.patient === p; r = source.next()) for (const code of codesOf(r.value.concept)) wanted.add(code)
    while (next.done !== true && next.value.patient < p) next = held.next()
    const have = new Set<string>()
    for (; next.done !== true && next.value.patient === p; next = held.next()) for (const code of codesOf(next.value.concept)) have.add(code)
    pairs += wanted.size
    for (const code of wanted) if (have.has(code)) matched++
  }
  return pairs === 0 ? "empty" : { pairs, held: matched }
}
