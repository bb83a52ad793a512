/**
 * OMOP CDM's clinical and reference tables, one reader each (docs/data.md, "Importing OMOP CDM"):
 * a reader takes one row and gives the facts it makes for the staging store, a note (a row left
 * out, counted), a problem with its column, or nothing. What the tables refer to (locations, care
 * sites, providers, deaths) is kept in the reading's context as it is read, before the tables
 * that refer to it.
 */
import { lookup } from "../../health/ConceptMaps.ts"
import { conceptOf, deviceCategoryOf, deviceEventsOf, isSocialHistory, SOCIAL_HISTORY_NOTE, type SourceCoding } from "../../pipeline/concepts.ts"
import type { Concept, EncounterKind } from "../../pipeline/facts.ts"
import type { ImportSetup } from "../../pipeline/importCommon.ts"
import type { Origin } from "../../pipeline/stagingTables.ts"
import { dayOf, idOf, integerCell, isProblem, type RowResult } from "./cells.ts"
import { drugExposureFacts } from "./drugExposure.ts"
import type { OmopVocabulary } from "./OmopVocabulary.ts"
import { HCC_REGION_PREFIX, HCC_STUDY_PREFIX } from "./ownTerms.ts"
import type { OmopRow } from "./tables.ts"

/** OMOP's Gender concepts (vocabulary Gender): 8532 FEMALE, 8507 MALE, 8521 OTHER, 8570 AMBIGUOUS, 8551 UNKNOWN. */
const GENDER: Readonly<Record<string, "female" | "male" | "other" | "unknown">> = { "8532": "female", "8507": "male", "8521": "other", "8570": "other", "8551": "unknown" }

/** condition_status_concept_id of a possible, not established, diagnosis (the Condition Status vocabulary). */
const PRELIMINARY_DIAGNOSIS = "32899"

/** One reader: a row (and where it is) → what it makes. */
export type OmopReader = (row: OmopRow, origin: Origin) => RowResult

/** What one OMOP import's readers share: the vocabulary, the setup, and what earlier tables said. */
export const omopReading = (setup: ImportSetup, vocabulary: OmopVocabulary) => {
  const locations = new Map<string, { readonly state: string; readonly country: string; readonly region: string | undefined }>()
  /** care_site_id → the organization's id: the device study a care site names in the service's own terms, else care_site_id. */
  const careSites = new Map<string, string>()
  const providers = new Map<string, string>()
  const deaths = new Map<string, number>()
  const visitKinds = new Map<string, EncounterKind | null>()

  const codings = (id: string, sourceId: string, sourceValue: string): ReadonlyArray<SourceCoding> => {
    const out: Array<SourceCoding> = []
    for (const c of [id, sourceId]) if (c !== "" && c !== "0") out.push(...vocabulary.codingsOf(Number(c)).codings)
    if (out.length === 0 && sourceValue !== "") out.push({ display: sourceValue })
    return out
  }
  const conceptFor = (kind: "condition" | "drug" | "adverse_event", id: string, sourceId: string, sourceValue: string): Concept => {
    if (kind === "drug" && id !== "" && id !== "0") {
      const ingredients = vocabulary.ingredientsOf(Number(id))
      if (ingredients.length > 0) {
        const targets = [...new Set(ingredients.flatMap((i) => conceptOf("drug", vocabulary.codingsOf(i).codings).targets))]
        if (targets.length > 0) return { ...conceptOf("drug", codings(id, sourceId, sourceValue), sourceValue || undefined), targets }
      }
    }
    const c = codings(id, sourceId, sourceValue)
    const concept = conceptOf(kind, c, sourceValue || vocabulary.codingsOf(Number(id || "0")).name)
    // A SNOMED subtype the map does not name is the conditions it descends from (CONCEPT_ANCESTOR):
    // type 2 diabetes with a complication is type 2 diabetes.
    if (kind === "condition" && concept.targets.length === 0 && id !== "" && id !== "0") {
      const targets = [...new Set(vocabulary.mappedConditionAncestorsOf(Number(id)).flatMap((a) => conceptOf("condition", vocabulary.codingsOf(a).codings).targets))]
      if (targets.length > 0) return { ...concept, targets }
    }
    return concept
  }
  /**
   * The ingredients a drug row is exposure to, one concept each (OHDSI's DRUG_ERA is per
   * ingredient: a combination product is exposure to each of its ingredients, mapped or not),
   * else the drug's own concept when the vocabulary gives it no ingredient.
   */
  const drugIngredients = (id: string, sourceId: string, sourceValue: string): ReadonlyArray<Concept> => {
    const ingredients = id === "" || id === "0" ? [] : vocabulary.ingredientsOf(Number(id))
    if (ingredients.length === 0) return [conceptFor("drug", id, sourceId, sourceValue)]
    return ingredients.map((i) => {
      const own = vocabulary.codingsOf(i)
      return conceptOf("drug", own.codings, own.name)
    })
  }
  const regionOf = (locationId: string) => {
    const l = locations.get(locationId)
    return l?.region ?? setup.regions.regionOf(l === undefined ? undefined : { state: l.state || undefined, country: l.country || undefined })
  }
  const orgOfCareSite = (careSiteId: string) => careSiteId === "" ? null : careSites.get(careSiteId) ?? careSiteId
  const kindOf = (id: string) => codings(id, "", "").flatMap((c) => (c.system !== undefined && c.code !== undefined ? lookup("encounter_class", { system: c.system === "Visit" ? "visit" : c.system, code: c.code }) : []))[0]?.target as EncounterKind | undefined
  /**
   * A visit concept's kind, once per concept (millions of rows name a handful): a concept the map
   * does not name is the kind of the top visit concept it descends from (an office visit 581477 →
   * Outpatient Visit 9202), where CONCEPT_ANCESTOR says.
   */
  const visitKindOf = (concept: string): EncounterKind | null => {
    let kind = visitKinds.get(concept)
    if (kind === undefined) {
      kind = kindOf(concept) ?? (concept === "" ? undefined : vocabulary.topVisitsOf(Number(concept)).map((top) => kindOf(String(top))).find((k) => k !== undefined)) ?? null
      visitKinds.set(concept, kind)
    }
    return kind
  }
  return { setup, vocabulary, locations, careSites, providers, deaths, codings, conceptFor, drugIngredients, regionOf, orgOfCareSite, visitKindOf }
}

/** An OMOP import's shared reading (omopReading). */
export type OmopReading = ReturnType<typeof omopReading>

export const readLocation = (x: OmopReading): OmopReader => (r) => {
  const country = r.get("country_source_value") || (r.get("country_concept_id") !== "" ? x.vocabulary.codingsOf(Number(r.get("country_concept_id"))).name ?? "" : "")
  const own = r.get("location_source_value")
  x.locations.set(integerCell(r, "location_id"), { state: r.get("state"), country, region: own.startsWith(HCC_REGION_PREFIX) ? own.slice(HCC_REGION_PREFIX.length) : undefined })
}

export const readCareSite = (x: OmopReading): OmopReader => (r, origin) => {
  const id = idOf(r, "care_site_id")
  if (isProblem(id)) return id
  const own = r.get("care_site_source_value")
  const org = own.startsWith(HCC_STUDY_PREFIX) && own.length > HCC_STUDY_PREFIX.length ? own.slice(HCC_STUDY_PREFIX.length) : id
  x.careSites.set(id, org)
  x.setup.staging.addPhaseOne(origin, { k: "organization", src: org, identifiers: [], region: x.regionOf(integerCell(r, "location_id")), name: r.get("care_site_name") || id })
}

export const readProvider = (x: OmopReading): OmopReader => (r) => {
  const org = x.orgOfCareSite(integerCell(r, "care_site_id"))
  if (org !== null) x.providers.set(integerCell(r, "provider_id"), org)
}

export const readDeath = (x: OmopReading): OmopReader => (r) => {
  const person = idOf(r, "person_id")
  if (isProblem(person)) return person
  const day = dayOf(r.get("death_date"), "death_date")
  if (day === undefined) return { path: "death_date", reason: "is required" }
  if (isProblem(day)) return day
  x.deaths.set(person, day)
}

export const readPerson = (x: OmopReading): OmopReader => (r) => {
  const id = idOf(r, "person_id")
  if (isProblem(id)) return id
  // The CDM requires year_of_birth, but a person without one (as FHIR allows) has no age, which
  // every cohort needs: left out with all about them, counted (Staging.ts), not a reason to refuse the rest.
  const given = r.get("year_of_birth")
  const year = given === "" ? null : Number(given)
  if (year !== null && !Number.isInteger(year)) return { path: "year_of_birth", reason: `'${given}' is not a year` }
  // Judged against the data, not the calendar: a de-identified dataset may be born in 2149 (below, and docs/data.md "Dates").
  if (year !== null && (year < 1000 || year > 9999)) return { path: "year_of_birth", reason: `${year} is not a four-digit year` }
  const gender = GENDER[integerCell(r, "gender_concept_id")]
  const sourceValue = r.get("person_source_value")
  return [{ k: "patient", src: id, identifiers: sourceValue === "" ? [] : [`?|${sourceValue}`], birthYear: year, sex: gender ?? "unknown", region: x.regionOf(integerCell(r, "location_id")), death: x.deaths.get(id) ?? null }]
}

/** A person's observation periods end where their follow-up does (implants.ts). */
export const readObservationPeriod = (): OmopReader => (r) => {
  const person = idOf(r, "person_id")
  if (isProblem(person)) return person
  const end = dayOf(r.get("observation_period_end_date"), "observation_period_end_date")
  const start = dayOf(r.get("observation_period_start_date"), "observation_period_start_date")
  if (isProblem(end)) return end
  if (isProblem(start)) return start
  if (end !== undefined) return [{ k: "observed", patient: person, start: start ?? null, end }]
}

export const readVisit = (x: OmopReading): OmopReader => (r) => {
  const id = idOf(r, "visit_occurrence_id")
  const person = idOf(r, "person_id")
  const start = dayOf(r.get("visit_start_date"), "visit_start_date")
  const end = dayOf(r.get("visit_end_date"), "visit_end_date")
  for (const v of [id, person, start, end]) if (isProblem(v)) return v
  if (start === undefined) return { path: "visit_start_date", reason: "is required" }
  const concept = r.get("visit_concept_id")
  const kind = x.visitKindOf(concept)
  if (end !== undefined && (end as number) < (start as number)) x.setup.report.note("VISIT_OCCURRENCE ending before it starts: kept as one day")
  return [{ k: "encounter", src: id as string, patient: person as string, kind, cls: x.vocabulary.codingsOf(Number(concept || "0")).code ?? `concept ${concept}`, start: start as number, end: Math.max(start as number, (end as number | undefined) ?? (start as number)), org: x.orgOfCareSite(integerCell(r, "care_site_id")) }]
}

export const readCondition = (x: OmopReading): OmopReader => (r) => {
  const person = idOf(r, "person_id")
  if (isProblem(person)) return person
  // A possible diagnosis is not a diagnosis the analytics may count (as FHIR's provisional).
  if (integerCell(r, "condition_status_concept_id") === PRELIMINARY_DIAGNOSIS) return "CONDITION_OCCURRENCE with condition_status_concept_id 32899 (Preliminary diagnosis): left out"
  const day = dayOf(r.get("condition_start_date"), "condition_start_date")
  if (isProblem(day)) return day
  const all = x.codings(r.get("condition_concept_id"), r.get("condition_source_concept_id"), r.get("condition_source_value"))
  if (all.length === 0) return { path: "condition_concept_id", reason: "names no condition (0, and no source value)" }
  const concept = x.conceptFor("condition", r.get("condition_concept_id"), r.get("condition_source_concept_id"), r.get("condition_source_value"))
  if (isSocialHistory(all, concept)) return `CONDITION_OCCURRENCE ${SOCIAL_HISTORY_NOTE}`
  return [{ k: "condition", patient: person, concept, day: day ?? null, events: day === undefined ? [] : deviceEventsOf(all) }]
}

export const readDrugExposure = (x: OmopReading): OmopReader => (r) =>
  drugExposureFacts(r, x.drugIngredients(r.get("drug_concept_id"), r.get("drug_source_concept_id"), r.get("drug_source_value")), (reason) => x.setup.report.note(reason))

const orgOf = (x: OmopReading, r: OmopRow) => x.providers.get(integerCell(r, "provider_id")) ?? null

export const readProcedure = (x: OmopReading): OmopReader => (r) => {
  const id = idOf(r, "procedure_occurrence_id")
  const person = idOf(r, "person_id")
  const day = dayOf(r.get("procedure_date"), "procedure_date")
  for (const v of [id, person, day]) if (isProblem(v)) return v
  const all = x.codings(r.get("procedure_concept_id"), r.get("procedure_source_concept_id"), r.get("procedure_source_value"))
  const device = deviceCategoryOf(all)
  const events = deviceEventsOf(all)
  if (device === null && events.length === 0) return "PROCEDURE_OCCURRENCE not about an implant: left out"
  if (day === undefined) return { path: "procedure_date", reason: "is required for an implant or a revision" }
  return [{ k: "procedure", src: id as string, patient: person as string, device, deviceRefs: [], day: day as number, org: orgOf(x, r), encounter: integerCell(r, "visit_occurrence_id") || null, events }]
}

export const readDeviceExposure = (x: OmopReading): OmopReader => (r) => {
  const id = idOf(r, "device_exposure_id")
  const person = idOf(r, "person_id")
  const day = dayOf(r.get("device_exposure_start_date"), "device_exposure_start_date")
  for (const v of [id, person, day]) if (isProblem(v)) return v
  const all = x.codings(r.get("device_concept_id"), r.get("device_source_concept_id"), r.get("device_source_value"))
  const device = deviceCategoryOf(all)
  if (device === null) return "DEVICE_EXPOSURE of no implant category: left out"
  if (day === undefined) return { path: "device_exposure_start_date", reason: "is required" }
  return [{ k: "procedure", src: id as string, patient: person as string, device, deviceRefs: [], day: day as number, org: orgOf(x, r), encounter: integerCell(r, "visit_occurrence_id") || null, events: [] }]
}

/** The eras the source derived itself (DRUG_ERA, CONDITION_ERA): compared with the import's, never stored (reconcile.ts). */
export const readEra = (table: "drug_era" | "condition_era") => (x: OmopReading): OmopReader => (r) => {
  const person = idOf(r, "person_id")
  const start = dayOf(r.get(`${table}_start_date`), `${table}_start_date`)
  const end = dayOf(r.get(`${table}_end_date`), `${table}_end_date`)
  for (const v of [person, start, end]) if (isProblem(v)) return v
  if (start === undefined || end === undefined) return `${table.toUpperCase()} without a start or an end: not compared`
  const concept = table === "drug_era" ? `${r.get("drug_concept_id")}` : r.get("condition_concept_id")
  const concepts = table === "drug_era" ? x.drugIngredients(concept, "", "") : [x.conceptFor("condition", concept, "", "")]
  return concepts.map((c) => ({ k: "source_era", table, patient: person as string, concept: c, start: start as number, end: end as number }))
}
