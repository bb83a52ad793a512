/**
 * Small, deterministic fixtures shaped like real drug data — OMOP CDM 5.4 as ETL-Synthea writes it,
 * claims-shaped OMOP as ETL-CMS writes DE-SynPUF, and FHIR Bulk Data NDJSON with CARIN Blue Button
 * pharmacy EOBs — written to a folder and returned raw, so a test can feed them both to the importer
 * and to the second reading in drugEras.ts.
 *
 * Vocabulary: the ingredient concept ids / RxNorm codes are the real ones (metformin 1503297/6809,
 * lisinopril 1308216/29046, amlodipine 1332418/17767, simvastatin 1539403/36567, acetaminophen
 * 1125315/161, hydrochlorothiazide 974166/5487); "amlodipine 5 MG Oral Tablet" is concept 1332419 /
 * RxNorm 197361. The combination "hydrochlorothiazide 12.5 MG / lisinopril 10 MG Oral Tablet" (RxNorm
 * 197885) could not be checked against Athena: it gets a local-range id (≥ 2,000,000,000) rather than
 * a guessed standard one. NDCs are illustrative (11-digit, the map to RxNorm travels with the fixture).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { dayNumber, isoDate, type OmopTables, type Rows } from "./drugEras.ts"
import { mulberry32 } from "./random.ts"

type Rand = () => number
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1))
const chance = (r: Rand, p: number) => r() < p
const pick = <T>(r: Rand, xs: ReadonlyArray<T>): T => xs[Math.floor(r() * xs.length)]!
const day = (iso: string) => dayNumber(iso)!
const uuid = (r: Rand) => {
  const hex = Array.from({ length: 32 }, () => Math.floor(r() * 16).toString(16)).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`
}

const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v)
const writeCsv = (file: string, columns: ReadonlyArray<string>, rows: Rows) =>
  writeFileSync(file, [columns.join(","), ...rows.map((r) => columns.map((c) => csvField(r[c] ?? "")).join(","))].join("\n") + "\n")
const rowOf = (columns: ReadonlyArray<string>, values: Record<string, string | number | null>): Record<string, string> =>
  Object.fromEntries(columns.map((c) => [c, values[c] === null || values[c] === undefined ? "" : String(values[c])]))

// OMOP CDM 5.4 columns, in DDL order.
const COLUMNS = {
  person: ["person_id", "gender_concept_id", "year_of_birth", "month_of_birth", "day_of_birth", "birth_datetime", "race_concept_id", "ethnicity_concept_id", "location_id", "provider_id", "care_site_id", "person_source_value", "gender_source_value", "gender_source_concept_id", "race_source_value", "race_source_concept_id", "ethnicity_source_value", "ethnicity_source_concept_id"],
  death: ["person_id", "death_date", "death_datetime", "death_type_concept_id", "cause_concept_id", "cause_source_value", "cause_source_concept_id"],
  observation_period: ["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"],
  drug_exposure: ["drug_exposure_id", "person_id", "drug_concept_id", "drug_exposure_start_date", "drug_exposure_start_datetime", "drug_exposure_end_date", "drug_exposure_end_datetime", "verbatim_end_date", "drug_type_concept_id", "stop_reason", "refills", "quantity", "days_supply", "sig", "route_concept_id", "lot_number", "provider_id", "visit_occurrence_id", "visit_detail_id", "drug_source_value", "drug_source_concept_id", "route_source_value", "dose_unit_source_value"],
  concept: ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason"],
  concept_ancestor: ["ancestor_concept_id", "descendant_concept_id", "min_levels_of_separation", "max_levels_of_separation"],
  cdm_source: ["cdm_source_name", "cdm_source_abbreviation", "cdm_holder", "source_description", "source_documentation_reference", "cdm_etl_reference", "source_release_date", "cdm_release_date", "cdm_version", "cdm_version_concept_id", "vocabulary_version"]
} as const

/** A drug concept of the fixtures' vocabulary subset. */
type Drug = { id: number; name: string; cls: "Ingredient" | "Clinical Drug"; rxnorm: string; ingredients: ReadonlyArray<number>; source: string; ndc: string }
const DRUGS = {
  metformin: { id: 1503297, name: "metformin", cls: "Ingredient", rxnorm: "6809", ingredients: [], source: "860975", ndc: "00093104801" },
  lisinopril: { id: 1308216, name: "lisinopril", cls: "Ingredient", rxnorm: "29046", ingredients: [], source: "314076", ndc: "68180051301" },
  amlodipine: { id: 1332418, name: "amlodipine", cls: "Ingredient", rxnorm: "17767", ingredients: [], source: "308136", ndc: "00093717101" },
  simvastatin: { id: 1539403, name: "simvastatin", cls: "Ingredient", rxnorm: "36567", ingredients: [], source: "312961", ndc: "00093715410" },
  acetaminophen: { id: 1125315, name: "acetaminophen", cls: "Ingredient", rxnorm: "161", ingredients: [], source: "313782", ndc: "00904198060" },
  hydrochlorothiazide: { id: 974166, name: "hydrochlorothiazide", cls: "Ingredient", rxnorm: "5487", ingredients: [], source: "310798", ndc: "00172208380" },
  amlodipine5: { id: 1332419, name: "amlodipine 5 MG Oral Tablet", cls: "Clinical Drug", rxnorm: "197361", ingredients: [1332418], source: "197361", ndc: "00069153041" },
  hctzLisinopril: { id: 2000000101, name: "hydrochlorothiazide 12.5 MG / lisinopril 10 MG Oral Tablet", cls: "Clinical Drug", rxnorm: "197885", ingredients: [974166, 1308216], source: "197885", ndc: "00378201801" }
} satisfies Record<string, Drug>

const vocabulary = (): { concept: Rows; concept_ancestor: Rows } => ({
  concept: Object.values(DRUGS).map((d) =>
    rowOf(COLUMNS.concept, { concept_id: d.id, concept_name: d.name, domain_id: "Drug", vocabulary_id: "RxNorm", concept_class_id: d.cls, standard_concept: "S", concept_code: d.rxnorm, valid_start_date: "1970-01-01", valid_end_date: "2099-12-31", invalid_reason: null })
  ),
  concept_ancestor: Object.values(DRUGS).flatMap((d) => [
    rowOf(COLUMNS.concept_ancestor, { ancestor_concept_id: d.id, descendant_concept_id: d.id, min_levels_of_separation: 0, max_levels_of_separation: 0 }),
    ...d.ingredients.map((i) => rowOf(COLUMNS.concept_ancestor, { ancestor_concept_id: i, descendant_concept_id: d.id, min_levels_of_separation: 2, max_levels_of_separation: 2 }))
  ])
})

/** What an OMOP builder returns: as_of and the raw rows it wrote. */
export type OmopFixture = { asOf: string; tables: Required<OmopTables> & { cdm_source: Rows } }

const writeOmop = (folder: string, tables: OmopFixture["tables"]) => {
  mkdirSync(folder, { recursive: true })
  for (const [name, columns] of Object.entries(COLUMNS)) writeCsv(join(folder, `${name}.csv`), columns, tables[name as keyof typeof COLUMNS])
}

const personRow = (r: Rand, id: number, birth: number) => {
  const female = chance(r, 0.52)
  const b = isoDate(birth)
  return rowOf(COLUMNS.person, {
    person_id: id, gender_concept_id: female ? 8532 : 8507, year_of_birth: b.slice(0, 4), month_of_birth: Number(b.slice(5, 7)), day_of_birth: Number(b.slice(8, 10)),
    birth_datetime: `${b} 00:00:00`, race_concept_id: pick(r, [8527, 8516, 8515, 0]), ethnicity_concept_id: pick(r, [38003564, 38003563]),
    person_source_value: uuid(r), gender_source_value: female ? "F" : "M", gender_source_concept_id: 0, race_source_value: "white", race_source_concept_id: 0, ethnicity_source_value: "nonhispanic", ethnicity_source_concept_id: 0
  })
}

/** OMOP CDM 5.4 CSV as ETL-Synthea writes it: yearly renewed chronic medications, current 0-day rows, acute courses, deaths. */
export const etlSyntheaOmop = (folder: string, seed: number): OmopFixture => {
  const r = mulberry32(seed)
  const asOf = "2024-06-30"
  const asOfDay = day(asOf)
  const n = 60 + int(r, 0, 90)
  const t: OmopFixture["tables"] = { person: [], death: [], observation_period: [], drug_exposure: [], ...vocabulary(), cdm_source: [] }
  let exposureId = 0
  // ETL-Synthea: end = coalesce(stop, start), verbatim_end_date = stop, days_supply = coalesce(datediff(start, stop), 0).
  const medication = (pid: number, drug: Drug, start: number, stop: number | null, type: number) => {
    const hh = `${String(int(r, 7, 17)).padStart(2, "0")}:${String(int(r, 0, 59)).padStart(2, "0")}:00`
    const end = stop ?? start
    t.drug_exposure.push(rowOf(COLUMNS.drug_exposure, {
      drug_exposure_id: ++exposureId, person_id: pid, drug_concept_id: drug.id, drug_exposure_start_date: isoDate(start), drug_exposure_start_datetime: `${isoDate(start)} ${hh}`,
      drug_exposure_end_date: isoDate(end), drug_exposure_end_datetime: `${isoDate(end)} ${hh}`, verbatim_end_date: stop === null ? null : isoDate(stop), drug_type_concept_id: type,
      stop_reason: null, refills: 0, quantity: 0, days_supply: stop === null ? 0 : stop - start, sig: null, route_concept_id: 0, lot_number: 0, provider_id: int(r, 1, 40),
      visit_occurrence_id: int(r, 1, 99999), visit_detail_id: int(r, 1000001, 1099999), drug_source_value: drug.source, drug_source_concept_id: 0, route_source_value: null, dose_unit_source_value: null
    }))
  }
  // A chronic medication renewed at (roughly) yearly wellness visits: each row stops the day the next starts.
  const chain = (pid: number, drug: Drug, from: number, until: number, current: boolean, type: number) => {
    if (from > until) return
    let d = from
    for (let next = d + 365 + int(r, -20, 20); next <= until; next = d + 365 + int(r, -20, 20)) {
      medication(pid, drug, d, next, type)
      d = next
    }
    medication(pid, drug, d, current ? null : Math.min(until, d + int(r, 60, 365)), type)
  }
  const acute = (pid: number, drug: Drug, start: number, type: number) => medication(pid, drug, start, start + int(r, 3, 10), type)
  for (let pid = 1; pid <= n; pid++) {
    const birth = day("1925-01-01") + int(r, 0, (pid <= 6 ? 35 : 70) * 365)
    t.person.push(personRow(r, pid, birth))
    let obsStart = Math.max(birth, day("1980-01-01") + int(r, 0, 25 * 365))
    const special = pid <= 6
    if (pid === 1 || pid === 5) obsStart = Math.min(obsStart, day("1984-02-01") + int(r, 0, 300))
    const dies = pid === 2 || (!special && chance(r, 0.12))
    let obsEnd: number
    let death: number | null = null
    if (dies) {
      death = Math.min(asOfDay - int(r, 30, 2000), obsStart + int(r, 6 * 365, 40 * 365))
      if (death < obsStart + 3 * 365) death = obsStart + 3 * 365
      obsEnd = death - int(r, 0, 20)
    } else if (pid === 6) obsEnd = asOfDay - int(r, 400, 3000)
    else if (pid === 1) obsEnd = asOfDay
    else {
      const u = r()
      obsEnd = u < 0.6 ? asOfDay : u < 0.85 ? asOfDay - int(r, 1, 90) : Math.max(obsStart + 2 * 365, asOfDay - int(r, 365, 6000))
    }
    if (obsEnd > asOfDay) obsEnd = asOfDay
    t.observation_period.push(rowOf(COLUMNS.observation_period, { observation_period_id: pid, person_id: pid, observation_period_start_date: isoDate(obsStart), observation_period_end_date: isoDate(obsEnd), period_type_concept_id: 32882 }))
    if (death !== null) {
      t.death.push(rowOf(COLUMNS.death, { person_id: pid, death_date: isoDate(death), death_datetime: `${isoDate(death)} 00:00:00`, death_type_concept_id: 32817, cause_concept_id: 0, cause_source_value: null, cause_source_concept_id: 0 }))
    }
    const type = pid === 1 || pid === 2 ? 32869 : pid === 3 ? 32838 : chance(r, 0.5) ? 32869 : 32838
    const span = obsEnd - obsStart
    const at = (fraction: number) => obsStart + Math.floor(span * fraction)
    const stillOn = () => chance(r, 0.8)
    if (pid === 1) chain(pid, DRUGS.lisinopril, obsStart + int(r, 0, 200), obsEnd, true, type)
    if (pid === 2) chain(pid, DRUGS.metformin, at(0.3), obsEnd, true, type)
    if (pid === 3) chain(pid, DRUGS.amlodipine5, at(0.2), obsEnd, true, type)
    if (pid === 4) chain(pid, DRUGS.hctzLisinopril, at(0.4), obsEnd, stillOn(), type)
    if (pid === 5) for (const y of [1990, 1995, 2006]) acute(pid, DRUGS.acetaminophen, day(`${y}-01-01`) + int(r, 0, 350), type)
    if (pid === 6) chain(pid, DRUGS.simvastatin, at(0.5), obsEnd, true, type)
    if (special) continue
    if (chance(r, 0.5)) chain(pid, DRUGS.lisinopril, at(r() * 0.5), obsEnd, stillOn(), type)
    if (chance(r, 0.25)) chain(pid, DRUGS.metformin, at(r() * 0.6), obsEnd, stillOn(), type)
    if (chance(r, 0.3)) {
      // A statin stopped for a year or more, then restarted: two eras.
      const a = at(r() * 0.3)
      const stop = Math.min(obsEnd, a + int(r, 400, 1500))
      chain(pid, DRUGS.simvastatin, a, stop, false, type)
      chain(pid, DRUGS.simvastatin, stop + int(r, 365, 1100), obsEnd, stillOn(), type)
    }
    if (chance(r, 0.15)) chain(pid, DRUGS.amlodipine5, at(r() * 0.7), obsEnd, stillOn(), type)
    if (chance(r, 0.1)) chain(pid, DRUGS.hctzLisinopril, at(r() * 0.7), obsEnd, stillOn(), type)
    if (chance(r, 0.1)) chain(pid, DRUGS.hydrochlorothiazide, at(r() * 0.7), obsEnd, stillOn(), type)
    for (let k = int(r, 0, 3); k > 0; k--) {
      const s = at(r() * 0.95)
      acute(pid, DRUGS.acetaminophen, s, type)
      if (chance(r, 0.2)) acute(pid, DRUGS.acetaminophen, s + int(r, 15, 35), type)
    }
  }
  t.cdm_source.push(rowOf(COLUMNS.cdm_source, {
    cdm_source_name: "Synthea synthetic health database", cdm_source_abbreviation: "Synthea", cdm_holder: "OHDSI",
    source_description: "SyntheaTM is a Synthetic Patient Population Simulator, converted to OMOP by ETL-Synthea", source_documentation_reference: "https://synthetichealth.github.io/synthea/",
    cdm_etl_reference: "https://github.com/OHDSI/ETL-Synthea", source_release_date: asOf, cdm_release_date: asOf, cdm_version: "5.4", cdm_version_concept_id: 756265, vocabulary_version: "v5.0 31-MAY-24"
  }))
  writeOmop(folder, t)
  return { asOf, tables: t }
}

/** Claims-shaped OMOP as ETL-CMS writes DE-SynPUF: pharmacy fills of 30/90 days, early and late refills, stops and resumptions. */
export const cmsClaimsOmop = (folder: string, seed: number): OmopFixture => {
  const r = mulberry32(seed)
  const asOf = "2010-12-31"
  const asOfDay = day(asOf)
  const n = 50 + int(r, 0, 149)
  const t: OmopFixture["tables"] = { person: [], death: [], observation_period: [], drug_exposure: [], ...vocabulary(), cdm_source: [] }
  let exposureId = 0
  const fill = (pid: number, drug: Drug, start: number, days: number, type: number) => {
    // Some rows without an end date (as CDM ≤ 5.3 claims ETLs left it), read from days_supply.
    const end = chance(r, 0.1) ? null : start + days - 1
    t.drug_exposure.push(rowOf(COLUMNS.drug_exposure, {
      drug_exposure_id: ++exposureId, person_id: pid, drug_concept_id: drug.id, drug_exposure_start_date: isoDate(start), drug_exposure_start_datetime: null,
      drug_exposure_end_date: end === null ? null : isoDate(end), drug_exposure_end_datetime: null, verbatim_end_date: null, drug_type_concept_id: type,
      stop_reason: null, refills: null, quantity: days * pick(r, [1, 1, 2]), days_supply: days, sig: null, route_concept_id: 0, lot_number: null, provider_id: null,
      visit_occurrence_id: null, visit_detail_id: null, drug_source_value: drug.ndc, drug_source_concept_id: 0, route_source_value: null, dose_unit_source_value: null
    }))
  }
  const chronic = [DRUGS.metformin, DRUGS.lisinopril, DRUGS.simvastatin, DRUGS.amlodipine5, DRUGS.hctzLisinopril, DRUGS.hydrochlorothiazide]
  for (let pid = 1; pid <= n; pid++) {
    const birth = day("1915-01-01") + int(r, 0, 60 * 365)
    t.person.push(personRow(r, pid, birth))
    const obsStart = chance(r, 0.8) ? day("2008-01-01") : day("2008-01-01") + int(r, 30, 700)
    let obsEnd = chance(r, 0.85) ? asOfDay : obsStart + int(r, 200, asOfDay - obsStart)
    // DE-SynPUF is known to hold a few claims dated after the beneficiary's death: kept, as ETL-CMS keeps them.
    const death = chance(r, 0.08) ? Math.min(asOfDay - 1, obsStart + int(r, 120, 900)) : null
    if (death !== null) {
      obsEnd = Math.min(obsEnd, death)
      t.death.push(rowOf(COLUMNS.death, { person_id: pid, death_date: isoDate(death), death_datetime: null, death_type_concept_id: 32810, cause_concept_id: 0, cause_source_value: null, cause_source_concept_id: 0 }))
    }
    t.observation_period.push(rowOf(COLUMNS.observation_period, { observation_period_id: pid, person_id: pid, observation_period_start_date: isoDate(obsStart), observation_period_end_date: isoDate(obsEnd), period_type_concept_id: 32810 }))
    const type = chance(r, 0.5) ? 38000175 : 32869
    const therapies = pid === 1 ? [DRUGS.lisinopril, DRUGS.metformin] : Array.from(new Set(Array.from({ length: int(r, 0, 3) }, () => pick(r, chronic))))
    for (const drug of therapies) {
      let days = chance(r, 0.7) ? 30 : 90
      let d = obsStart + int(r, 0, 300)
      let resumed = false
      const limit = death === null ? obsEnd : death + (chance(r, 0.3) ? 60 : 0)
      while (d <= limit) {
        fill(pid, drug, d, days, type)
        const u = r()
        if (u < 0.65) d += days + int(r, -7, 2) // on time or a little early: overlapping supply
        else if (u < 0.9) d += days + int(r, 10, 60) // late refill: a gap
        else if (u < 0.95 && !resumed) {
          d += days + int(r, 330, 400) // stopped, resumed about a year later
          resumed = true
        } else break
        if (chance(r, 0.05)) days = days === 30 ? 90 : 30
      }
    }
    // One-off fills: a trial of a drug never refilled.
    if (pid === 2 || chance(r, 0.3)) fill(pid, pick(r, [DRUGS.amlodipine, DRUGS.hydrochlorothiazide, DRUGS.simvastatin]), obsStart + int(r, 0, Math.max(0, obsEnd - obsStart)), 30, type)
  }
  t.cdm_source.push(rowOf(COLUMNS.cdm_source, {
    cdm_source_name: "Medicare Claims Synthetic Public Use Files (SynPUF)", cdm_source_abbreviation: "SynPUF", cdm_holder: "OHDSI",
    source_description: "CMS 2008-2010 Data Entrepreneurs' Synthetic Public Use File, converted by ETL-CMS", source_documentation_reference: "https://www.cms.gov/data-research/statistics-trends-and-reports/medicare-claims-synthetic-public-use-files",
    cdm_etl_reference: "https://github.com/OHDSI/ETL-CMS", source_release_date: asOf, cdm_release_date: asOf, cdm_version: "5.4", cdm_version_concept_id: 756265, vocabulary_version: "v5.0 31-MAY-24"
  }))
  writeOmop(folder, t)
  return { asOf, tables: t }
}

/** What the FHIR builder returns: as_of, every resource written, and the NDC → RxNorm map its EOBs need. */
export type FhirFixture = { asOf: string; resources: Array<any>; ndcToRxnorm: Record<string, string> }

const RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
const NDC = "http://hl7.org/fhir/sid/ndc"
const C4BB = "http://hl7.org/fhir/us/carin-bb/CodeSystem/C4BBSupportingInfoType"

/** FHIR Bulk Data NDJSON (no manifest): Patients, EHR orders and dispenses, CARIN BB pharmacy EOBs. */
export const fhirClaimsAndOrders = (folder: string, seed: number): FhirFixture => {
  const r = mulberry32(seed)
  const asOf = "2024-03-31"
  const asOfDay = day(asOf)
  const n = 50 + int(r, 0, 100)
  const out: Record<"Patient" | "MedicationRequest" | "MedicationDispense" | "ExplanationOfBenefit", Array<any>> = { Patient: [], MedicationRequest: [], MedicationDispense: [], ExplanationOfBenefit: [] }
  const stamp = () => `${isoDate(asOfDay - int(r, 0, 60))}T${String(int(r, 0, 23)).padStart(2, "0")}:${String(int(r, 0, 59)).padStart(2, "0")}:00Z`
  const meta = () => ({ lastUpdated: stamp() })
  const drugs = [DRUGS.lisinopril, DRUGS.metformin, DRUGS.simvastatin, DRUGS.amlodipine, DRUGS.hydrochlorothiazide]
  const concept = (d: Drug) => ({ coding: [{ system: RXNORM, code: d.rxnorm, display: d.name }], text: d.name })
  const ndcToRxnorm = Object.fromEntries(drugs.map((d) => [d.ndc, d.rxnorm]))
  const days = (value: number) => ({ value, unit: "d", system: "http://unitsofmeasure.org", code: "d" })
  for (let k = 1; k <= n; k++) {
    const pid = uuid(r)
    const birth = day("1930-01-01") + int(r, 0, 70 * 365)
    const deceased = k === 1 || (k > 3 && chance(r, 0.1)) ? asOfDay - int(r, 20, 700) : null
    out.Patient.push({
      resourceType: "Patient", id: pid, meta: meta(), gender: chance(r, 0.5) ? "female" : "male", birthDate: isoDate(birth),
      ...(deceased === null ? {} : { deceasedDateTime: `${isoDate(deceased)}T${String(int(r, 0, 23)).padStart(2, "0")}:15:00Z` })
    })
    const subject = { reference: `Patient/${pid}` }
    const lastDay = deceased ?? asOfDay
    // Which systems hold this person: EHR orders and dispenses, payer claims, or EHR orders with payer claims.
    const source = k === 1 || k === 2 ? "ehr" : k === 3 ? "payer" : pick(r, ["ehr", "payer", "both"] as const)
    const own = k <= 3 ? [DRUGS.lisinopril, DRUGS.metformin] : Array.from(new Set(Array.from({ length: int(r, 1, 3) }, () => pick(r, drugs))))
    for (const drug of own) {
      const start = lastDay - int(r, 200, 2500)
      if (source !== "payer") {
        const style = k === 1 || (k === 2 && drug === DRUGS.lisinopril) ? "open" : pick(r, ["open", "bounded", "supply", "stopped", "error"] as const)
        const requestId = uuid(r)
        const bounds = style === "bounded" ? { start: isoDate(start), end: isoDate(Math.min(lastDay, start + int(r, 90, 700))) } : { start: isoDate(start) }
        out.MedicationRequest.push({
          resourceType: "MedicationRequest", id: requestId, meta: meta(),
          status: style === "open" ? "active" : style === "bounded" || style === "supply" ? "completed" : style === "stopped" ? "stopped" : "entered-in-error",
          intent: chance(r, 0.85) ? "order" : "plan", medicationCodeableConcept: concept(drug), subject, authoredOn: `${isoDate(start)}T09:30:00Z`,
          dosageInstruction: [{ text: "1 tablet by mouth daily", timing: { repeat: { frequency: 1, period: 1, periodUnit: "d", ...(style === "open" && chance(r, 0.5) ? {} : { boundsPeriod: bounds }) } } }],
          ...(style === "supply" ? { dispenseRequest: { numberOfRepeatsAllowed: int(r, 0, 5), expectedSupplyDuration: days(pick(r, [30, 90])) } } : {})
        })
        if (source === "ehr") {
          let d = start + int(r, 0, 5)
          for (let fills = int(r, 1, 8); fills > 0 && d <= lastDay; fills--) {
            const supply = pick(r, [30, 30, 90])
            const weeks = chance(r, 0.1)
            out.MedicationDispense.push({
              resourceType: "MedicationDispense", id: uuid(r), meta: meta(), status: chance(r, 0.9) ? "completed" : undefined,
              medicationCodeableConcept: concept(drug), subject, authorizingPrescription: [{ reference: `MedicationRequest/${requestId}` }],
              quantity: { value: supply, unit: "tablet" }, daysSupply: weeks ? { value: supply / 30 * 4, unit: "wk", system: "http://unitsofmeasure.org", code: "wk" } : days(supply),
              whenHandedOver: `${isoDate(d)}T14:00:00Z`
            })
            d += supply + (chance(r, 0.7) ? int(r, -5, 3) : int(r, 10, 60))
          }
        }
      }
      if (source !== "ehr") {
        let d = start + int(r, 0, 10)
        let refill = 0
        for (let fills = k === 3 ? 6 : int(r, 1, 10); fills > 0 && d <= lastDay; fills--) {
          const supply = pick(r, [30, 90])
          const byNdc = chance(r, 0.4)
          const cancelled = chance(r, 0.05)
          out.ExplanationOfBenefit.push({
            resourceType: "ExplanationOfBenefit", id: uuid(r), meta: { ...meta(), profile: ["http://hl7.org/fhir/us/carin-bb/StructureDefinition/C4BB-ExplanationOfBenefit-Pharmacy|2.0.0"] },
            identifier: [{ type: { coding: [{ system: "http://hl7.org/fhir/us/carin-bb/CodeSystem/C4BBIdentifierType", code: "uc" }] }, value: `RX${k}${refill}${int(r, 100000, 999999)}` }],
            status: cancelled ? "cancelled" : "active",
            type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/claim-type", code: "pharmacy" }] },
            use: "claim", patient: subject, billablePeriod: { start: isoDate(d), end: isoDate(d) }, created: `${isoDate(d + int(r, 0, 3))}T00:00:00Z`,
            insurer: { display: "Example Health Plan" }, provider: { display: "Main Street Pharmacy" }, outcome: "complete",
            supportingInfo: [
              { sequence: 1, category: { coding: [{ system: C4BB, code: "dayssupply" }] }, valueQuantity: { value: supply, unit: "d" } },
              { sequence: 2, category: { coding: [{ system: C4BB, code: "refillnum" }] }, valueQuantity: { value: refill } }
            ],
            insurance: [{ focal: true, coverage: { display: "Part D" } }],
            item: [{ sequence: 1, servicedDate: isoDate(d), productOrService: byNdc ? { coding: [{ system: NDC, code: drug.ndc }] } : concept(drug), quantity: { value: supply } }]
          })
          if (!cancelled) refill++
          d += supply + (chance(r, 0.7) ? int(r, -6, 2) : chance(r, 0.8) ? int(r, 10, 60) : int(r, 300, 420))
        }
      }
    }
  }
  mkdirSync(folder, { recursive: true })
  for (const [type, list] of Object.entries(out)) writeFileSync(join(folder, `${type}.ndjson`), list.map((x) => JSON.stringify(x)).join("\n") + "\n")
  return { asOf, resources: Object.values(out).flat(), ndcToRxnorm }
}
