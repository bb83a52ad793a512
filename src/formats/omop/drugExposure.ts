/**
 * OMOP DRUG_EXPOSURE rows → exposure facts (docs/data.md, "Drug exposure: eras, fills and
 * adherence"). Every row is exposure from its start to its end; a dispensing with a supply is also
 * a fill; ETL-Synthea's current medication (a 0-day row without a verbatim end) goes on.
 */
import type { Concept, Fact } from "../../pipeline/facts.ts"
import { dayOf, idOf, integerCell, integerText, isProblem, type RowResult } from "./cells.ts"
import type { OmopRow } from "./tables.ts"

/**
 * DRUG_EXPOSURE type concepts that record a dispensing (a fill), whose days_supply counts towards
 * adherence: 38000175 Prescription dispensed in pharmacy, 38000176 Prescription dispensed through
 * mail order (CDM 5.3), 32869 Pharmacy claim, 32825 EHR dispensing record, 32857 Mail order record
 * (OMOP Type Concept vocabulary, CDM 5.4). Every row, fill or not, is exposure (courses.ts).
 */
export const DISPENSING_TYPES: ReadonlySet<string> = new Set(["38000175", "38000176", "32869", "32825", "32857"])

/** Type concepts of a drug given in care (32818 EHR administration record, 38000180 Inpatient administration). */
const ADMINISTRATION_TYPES: ReadonlySet<string> = new Set(["32818", "38000180"])

/** Type concepts of a mail-order prescription (38000176, 32857). */
const MAIL_ORDER_TYPES: ReadonlySet<string> = new Set(["38000176", "32857"])

/**
 * The days a row lasts when it states neither an end nor a supply, as the CDM 5.4 documentation of
 * `drug_exposure_end_date` (OHDSI THEMIS) infers it: an administration its day, a mail-order
 * prescription 90 days (start + 89), any other prescription 30 (start + 29).
 */
const unstatedDays = (type: string): number => (ADMINISTRATION_TYPES.has(type) ? 1 : MAIL_ORDER_TYPES.has(type) ? 90 : 30)

/** A DRUG_EXPOSURE row's facts, one per ingredient (`drugs`); `note` counts what the summary reports. */
export const drugExposureFacts = (r: OmopRow, drugs: ReadonlyArray<Concept>, note: (reason: string) => void): RowResult => {
  const id = idOf(r, "drug_exposure_id")
  const person = idOf(r, "person_id")
  const start = dayOf(r.get("drug_exposure_start_date"), "drug_exposure_start_date")
  const end = dayOf(r.get("drug_exposure_end_date"), "drug_exposure_end_date")
  for (const x of [id, person, start, end]) if (isProblem(x)) return x
  if (start === undefined) return { path: "drug_exposure_start_date", reason: "is required" }
  const supplyText = integerText(r.get("days_supply"))
  const supply = supplyText === "" ? undefined : Number(supplyText)
  if (supply !== undefined && !(Number.isFinite(supply) && supply >= 0)) return { path: "days_supply", reason: `'${supplyText}' is not a number of days` }
  const s = start as number
  const type = integerCell(r, "drug_type_concept_id")
  const stated = end as number | undefined
  const course = (finish: number | null): ReadonlyArray<Fact> => drugs.map((drug) => ({ k: "course", src: id as string, patient: person as string, drug, start: s, end: finish, adherence: null }))
  // Its end: the end date, else start + days_supply − 1, else the type's default; an end before the
  // start is counted and kept as one day.
  let e = stated ?? (supply !== undefined && supply > 0 ? s + Math.round(supply) - 1 : s + unstatedDays(type) - 1)
  if (e < s) {
    note("DRUG_EXPOSURE ending before it starts: kept as one day")
    e = s
  }
  // A medication current at its date: ETL-Synthea writes one without a stop as a 0-day row (end =
  // start, days_supply 0) with no verbatim_end_date; it goes on.
  if (stated === s && supply === 0 && r.get("verbatim_end_date") === "" && !ADMINISTRATION_TYPES.has(type)) {
    note("DRUG_EXPOSURE current at its date (0 days supplied, no verbatim_end_date): ongoing")
    return course(null)
  }
  if (DISPENSING_TYPES.has(type) && supply !== undefined && supply > 0) {
    return drugs.map((drug) => ({ k: "dispense", src: id as string, patient: person as string, drug, day: s, days: Math.round(supply), end: e }))
  }
  if (DISPENSING_TYPES.has(type)) note("DRUG_EXPOSURE dispensing without days_supply: exposure, not a fill")
  return course(e)
}
