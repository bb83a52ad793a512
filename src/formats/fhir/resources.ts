/**
 * FHIR R4 resources → facts (docs/data.md "FHIR R4 Bulk Data", rule by rule). Pure functions of a
 * parsed resource and what phase one read (Medication resources), so any thread can run them.
 * Every rule that leaves a resource out says why in a note (counted in the import summary); every
 * resource that lacks what its rule needs, or holds a date or quantity that does not parse, is a
 * problem (`Type.path: reason`), and any problem stops the import.
 */
import type * as fhir4 from "fhir/r4.js"
import type { Sex } from "../../plugin/vocabularies.ts"
import { codingsOf, extensionOf, fact, type FhirContext, hasCode, isProblem, type MedicationCode, problem, referenceId, skip, subjectOf } from "./common.ts"
import { explanationOfBenefit } from "./claims.ts"
import { extensionSexOf } from "./patientSex.ts"
import { classLabel, encounterKind } from "./encounterClass.ts"
import { daysOf, medicationRequestPeriod } from "./medicationPeriod.ts"
import { observation } from "./observations.ts"
import { device, procedure } from "./procedures.ts"
import { conceptOf, deviceCategoryOf, deviceEventsOf, isSocialHistory, SOCIAL_HISTORY_NOTE, systemName } from "../../pipeline/concepts.ts"
import type { Concept, DeviceEvent, EncounterKind, Fact, Mapped, Problem } from "../../pipeline/facts.ts"

export type { FhirContext, MedicationCode }

/** Our own extensions and systems (written by `hcc data export --format fhir`). */
export const HCC_REGION_EXTENSION = "urn:hcc:fhir:region"
/** A course's proportion of days covered, when the source states it. */
export const HCC_ADHERENCE_EXTENSION = "urn:hcc:fhir:adherence"
/** Vocabulary code systems the export writes as CodeSystem resources. */
export const HCC_VOCABULARY_PREFIX = "urn:hcc:vocabulary:"

/** The resource types read in phase one (others refer to them), then those read in phase two. */
export const PHASE_ONE = ["CodeSystem", "Organization", "Medication", "Patient"] as const
/** Resource types read in phase two. */
export const PHASE_TWO = [
  "Encounter",
  "Condition",
  "MedicationRequest",
  "MedicationStatement",
  "MedicationDispense",
  "Observation",
  "Procedure",
  "Device",
  "AllergyIntolerance",
  "AdverseEvent",
  "ExplanationOfBenefit"
] as const
/** Every type the importer reads; files of other types are counted and skipped. */
export const READ_TYPES: ReadonlySet<string> = new Set([...PHASE_ONE, ...PHASE_TWO])

const identifiersOf = (ids: ReadonlyArray<fhir4.Identifier> | undefined): ReadonlyArray<string> =>
  (Array.isArray(ids) ? ids : []).flatMap((i) => (typeof i?.value === "string" ? [`?${i.system ?? ""}|${i.value}`, `?|${i.value}`] : []))

/** The region of a resource: our region extension, else its (home, current) address through the region map. */
const regionOf = (resource: { readonly extension?: ReadonlyArray<fhir4.Extension> | undefined; readonly address?: ReadonlyArray<fhir4.Address> | undefined }, ctx: FhirContext): string => {
  const ext = extensionOf(resource, HCC_REGION_EXTENSION)
  const own = ext?.valueCode ?? ext?.valueCoding?.code
  if (typeof own === "string") return own
  const addresses = Array.isArray(resource.address) ? resource.address : []
  const current = addresses.filter((a) => a?.period?.end === undefined)
  const address = current.find((a) => a.use === "home") ?? current[0] ?? addresses[0]
  return ctx.regions.regionOf(address === undefined ? undefined : { state: address.state, country: address.country })
}

const SEXES: ReadonlySet<string> = new Set(["female", "male", "other", "unknown"])

const patient = (r: fhir4.Patient, ctx: FhirContext): Mapped => {
  const born = ctx.day(r.birthDate, "Patient.birthDate")
  if (isProblem(born)) return { facts: [], problems: [born] }
  // Patient.birthDate is optional (FHIR R4, US Core): without it the patient has no age, which
  // every cohort needs, so the patient is left out, with all that is about them (Staging.ts).
  const birthYear = born === undefined ? null : Number(String(r.birthDate).slice(0, 4))
  if (r.gender !== undefined && !SEXES.has(r.gender)) return problem("Patient.gender", `'${String(r.gender)}' is not male, female, other or unknown`)
  const death = ctx.day(r.deceasedDateTime, "Patient.deceasedDateTime")
  if (isProblem(death)) return { facts: [], problems: [death] }
  const extensionSex = r.gender === undefined ? extensionSexOf(r) : undefined
  return {
    facts: [{ k: "patient", src: r.id!, identifiers: identifiersOf(r.identifier), birthYear, sex: (r.gender ?? extensionSex ?? "unknown") as Sex, region: regionOf(r, ctx), death: death ?? null }],
    problems: [],
    notes: [
      ...(r.gender === undefined ? [extensionSex === undefined ? "Patient without gender: sex unknown" : "Patient without gender: sex from US Core's sex extension"] : []),
      ...(r.deceasedBoolean === true && death === undefined ? ["Patient deceased on an unknown date: kept alive"] : [])
    ]
  }
}

const organization = (r: fhir4.Organization, ctx: FhirContext): Mapped =>
  fact({ k: "organization", src: r.id!, identifiers: identifiersOf(r.identifier), region: regionOf(r, ctx), name: typeof r.name === "string" ? r.name : r.id! })

const ENCOUNTER_SKIPPED = new Set(["planned", "cancelled", "entered-in-error"])

/** Encounter statuses of a visit still going on (FHIR R4 EncounterStatus). */
const ENCOUNTER_ONGOING = new Set(["arrived", "triaged", "in-progress", "onleave"])

const encounter = (r: fhir4.Encounter, ctx: FhirContext): Mapped => {
  if (r.status !== undefined && ENCOUNTER_SKIPPED.has(r.status)) return skip(`Encounter with status ${r.status}: left out`)
  const patientId = subjectOf(r.subject, "Encounter.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const start = ctx.day(r.period?.start, "Encounter.period.start")
  // Encounter.period is optional in R4: without a start the visit has no day the analytics can use.
  if (start === undefined) return skip("Encounter without period.start (the day of the visit): left out")
  const end = ctx.day(r.period?.end, "Encounter.period.end")
  const org = referenceId(r.serviceProvider, "Organization", "Encounter.serviceProvider")
  const problems = [start, end, org].filter(isProblem)
  if (problems.length > 0) return { facts: [], problems }
  const kind = encounterKind(r.class)
  // A visit without an end is a day's visit, unless it is still going on (R4 EncounterStatus: the
  // patient has arrived, is being seen or is on leave): then it lasts to as_of.
  const ongoing = end === undefined && r.status !== undefined && ENCOUNTER_ONGOING.has(r.status)
  const backwards = end !== undefined && (end as number) < (start as number)
  return {
    ...(backwards ? { notes: [ENDS_BEFORE_START("Encounter")] } : {}),
    facts: [{
      k: "encounter",
      src: r.id!,
      patient: patientId,
      kind,
      cls: classLabel(r.class),
      start: start as number,
      end: ongoing ? null : Math.max(start as number, (end as number | undefined) ?? (start as number)),
      org: (org as string | undefined) ?? null
    }],
    problems: []
  }
}

/** The note of a record whose end comes before its start: counted, and kept as one day (docs/data.md). */
export const ENDS_BEFORE_START = (type: string): string => `${type} ending before it starts: kept as one day`

const REFUTED = new Set(["refuted", "entered-in-error"])
/** condition-ver-status codes of a condition not (yet) established: `unconfirmed` and its children. */
const UNCONFIRMED = new Set(["unconfirmed", "provisional", "differential"])

/**
 * Condition categories that say a condition is a diagnosis (R4's condition-category:
 * problem-list-item, encounter-diagnosis) and those that say it is not one (US Core's
 * health-concern — a worry of the patient or a carer — and sdoh, a social determinant of health).
 */
const DIAGNOSIS_CATEGORIES: ReadonlySet<string> = new Set(["problem-list-item", "encounter-diagnosis"])
const NOT_DIAGNOSIS_CATEGORIES: ReadonlySet<string> = new Set(["health-concern", "sdoh"])

const condition = (r: fhir4.Condition, ctx: FhirContext): Mapped => {
  const categories = (Array.isArray(r.category) ? r.category : []).flatMap((c) => codingsOf(c).map((x) => x.code)).filter((c): c is string => typeof c === "string")
  if (categories.some((c) => NOT_DIAGNOSIS_CATEGORIES.has(c)) && !categories.some((c) => DIAGNOSIS_CATEGORIES.has(c))) {
    return skip("Condition of category health-concern or sdoh only (a concern or a social determinant, not a diagnosis): left out")
  }
  const verification = codingsOf(r.verificationStatus).map((c) => c.code)
  if (verification.some((v) => v !== undefined && REFUTED.has(v))) return skip("Condition refuted or entered in error: left out")
  // A working or differential diagnosis is not a diagnosis the analytics may count (R4 Condition,
  // verificationStatus); one without a verification status is taken as recorded (US Core allows it).
  if (verification.some((v) => v !== undefined && UNCONFIRMED.has(v))) return skip("Condition not confirmed (verificationStatus unconfirmed, provisional or differential): left out")
  const patientId = subjectOf(r.subject, "Condition.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  if (!hasCode(r.code)) return problem("Condition.code", "is required (a coding or a text)")
  const onset = ctx.day(r.onsetDateTime ?? r.onsetPeriod?.start ?? r.recordedDate, r.onsetDateTime !== undefined ? "Condition.onsetDateTime" : r.onsetPeriod?.start !== undefined ? "Condition.onsetPeriod.start" : "Condition.recordedDate")
  if (isProblem(onset)) return { facts: [], problems: [onset] }
  const codings = codingsOf(r.code)
  const concept = conceptOf("condition", codings, r.code?.text)
  if (isSocialHistory(codings, concept)) return skip(`Condition ${SOCIAL_HISTORY_NOTE}`)
  return fact({ k: "condition", patient: patientId, concept, day: onset ?? null, events: onset === undefined ? [] : deviceEventsOf(codings) })
}

/** The medication a resource names (a CodeableConcept, a Reference to a Medication of the export or a contained one). */
const medicationOf = (
  r: { readonly medicationCodeableConcept?: fhir4.CodeableConcept | undefined; readonly medicationReference?: fhir4.Reference | undefined; readonly contained?: ReadonlyArray<fhir4.Resource> | undefined },
  type: string,
  ctx: FhirContext
): Concept | Problem | string => {
  if (r.medicationCodeableConcept !== undefined) {
    if (!hasCode(r.medicationCodeableConcept)) return { path: `${type}.medicationCodeableConcept`, reason: "has no coding and no text" }
    return conceptOf("drug", codingsOf(r.medicationCodeableConcept), r.medicationCodeableConcept.text)
  }
  const path = `${type}.medicationReference`
  const ref = r.medicationReference?.reference
  if (typeof ref === "string" && ref.startsWith("#")) {
    const contained = (r.contained ?? []).find((c) => c.resourceType === "Medication" && c.id === ref.slice(1)) as fhir4.Medication | undefined
    if (contained === undefined) return { path, reason: `'${ref}' is not a contained Medication` }
    return conceptOf("drug", codingsOf(contained.code), contained.code?.text)
  }
  const id = referenceId(r.medicationReference, "Medication", path)
  if (id === undefined) return { path: `${type}.medication[x]`, reason: "is required (the drug)" }
  if (isProblem(id)) return id
  const med = ctx.medications.get(id)
  if (med !== undefined) return conceptOf("drug", med.codings, med.text)
  // A patient- or group-level export, or a _type filter, may leave the Medications out (Bulk Data
  // Access IG): the reference's display names the drug, else the record is left out and counted.
  const display = r.medicationReference?.display
  if (typeof display === "string" && display.trim() !== "") return conceptOf("drug", [], display)
  return `${type} whose Medication is not in the export (and its reference has no display): left out`
}

/** How long a course with no stated end lasts when it is over: one standard 30-day supply. */
export const UNSTATED_COURSE_DAYS = 30

const ONGOING = new Set(["active", "on-hold", "unknown", "intended"])
const REQUEST_SKIPPED = new Set(["cancelled", "entered-in-error", "draft"])

const adherenceOf = (r: { readonly extension?: ReadonlyArray<fhir4.Extension> | undefined }, path: string): number | null | Problem => {
  const v = extensionOf(r, HCC_ADHERENCE_EXTENSION)?.valueDecimal
  if (v === undefined) return null
  return typeof v === "number" && v >= 0 && v <= 1 ? v : { path, reason: `${String(v)} is not a proportion in [0, 1]` }
}

const medicationRequest = (r: fhir4.MedicationRequest, ctx: FhirContext): Mapped => {
  if (REQUEST_SKIPPED.has(r.status)) return skip(`MedicationRequest with status ${r.status}: left out`)
  if (r.intent === "proposal" || r.intent === "option") return skip(`MedicationRequest with intent ${r.intent}: left out`)
  const patientId = subjectOf(r.subject, "MedicationRequest.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const drug = medicationOf(r, "MedicationRequest", ctx)
  if (typeof drug === "string") return skip(drug)
  if (isProblem(drug)) return { facts: [], problems: [drug] }
  // The period as the CQL cumulative medication duration logic reads an order (medicationPeriod.ts).
  const period = medicationRequestPeriod(r)
  const start = ctx.day(period.start?.value, period.start?.path ?? "MedicationRequest.authoredOn")
  if (start === undefined) return skip("MedicationRequest without a start (dosage boundsPeriod, authoredOn or dispenseRequest.validityPeriod): left out")
  const end = period.boundsEnd === undefined ? undefined : ctx.day(period.boundsEnd, "MedicationRequest.dosageInstruction.timing.repeat.boundsPeriod.end")
  const adherence = adherenceOf(r, "MedicationRequest.extension")
  const problems = [start, end, adherence].filter(isProblem)
  if (problems.length > 0) return { facts: [], problems }
  const s = start as number
  // Where CQL gives the order no period (no supply, no bounds' end), what its status says: ongoing
  // while active or on hold, else one standard supply — counted, so the summary shows how often.
  const stop = period.days !== undefined ? s + period.days - 1 : (end as number | undefined) ?? (ONGOING.has(r.status) ? null : s + UNSTATED_COURSE_DAYS - 1)
  const notes: Array<string> = period.days === undefined && end === undefined
    ? [`MedicationRequest without a supply or a bounds end (no CQL period): ${ONGOING.has(r.status) ? "ongoing while its status is active" : `one ${UNSTATED_COURSE_DAYS}-day supply`}`]
    : []
  if (stop !== null && stop < s) notes.push(ENDS_BEFORE_START("MedicationRequest"))
  return { facts: [{ k: "course", src: r.id!, patient: patientId, drug, start: s, end: stop === null ? null : Math.max(s, stop), adherence: adherence as number | null }], problems: [], notes }
}

const medicationStatement = (r: fhir4.MedicationStatement, ctx: FhirContext): Mapped => {
  if (r.status === "entered-in-error" || r.status === "not-taken") return skip(`MedicationStatement with status ${r.status}: left out`)
  const patientId = subjectOf(r.subject, "MedicationStatement.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const drug = medicationOf(r, "MedicationStatement", ctx)
  if (typeof drug === "string") return skip(drug)
  if (isProblem(drug)) return { facts: [], problems: [drug] }
  const start = ctx.day(r.effectivePeriod?.start ?? r.effectiveDateTime ?? r.dateAsserted, r.effectivePeriod?.start !== undefined ? "MedicationStatement.effectivePeriod.start" : "MedicationStatement.effectiveDateTime")
  if (start === undefined) return skip("MedicationStatement without a date (effective[x] or dateAsserted): left out")
  const end = ctx.day(r.effectivePeriod?.end, "MedicationStatement.effectivePeriod.end")
  const adherence = adherenceOf(r, "MedicationStatement.extension")
  const problems = [start, end, adherence].filter(isProblem)
  if (problems.length > 0) return { facts: [], problems }
  const s = start as number
  const stop = (end as number | undefined) ?? (ONGOING.has(r.status) ? null : s + UNSTATED_COURSE_DAYS - 1)
  return {
    facts: [{ k: "course", src: r.id!, patient: patientId, drug, start: s, end: stop === null ? null : Math.max(s, stop), adherence: adherence as number | null }],
    problems: [],
    ...(stop !== null && stop < s ? { notes: [ENDS_BEFORE_START("MedicationStatement")] } : {})
  }
}

const medicationDispense = (r: fhir4.MedicationDispense, ctx: FhirContext): Mapped => {
  if (r.status !== undefined && r.status !== "completed") return skip(`MedicationDispense with status ${r.status}: left out`)
  const patientId = subjectOf(r.subject, "MedicationDispense.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const drug = medicationOf(r, "MedicationDispense", ctx)
  if (typeof drug === "string") return skip(drug)
  if (isProblem(drug)) return { facts: [], problems: [drug] }
  const day = ctx.day(r.whenHandedOver ?? r.whenPrepared, r.whenHandedOver !== undefined ? "MedicationDispense.whenHandedOver" : "MedicationDispense.whenPrepared")
  if (day === undefined) return skip("MedicationDispense without whenHandedOver or whenPrepared: left out of adherence")
  if (isProblem(day)) return { facts: [], problems: [day] }
  if (r.daysSupply === undefined) return skip("MedicationDispense without daysSupply: left out of adherence")
  const days = daysOf(r.daysSupply)
  if (days === undefined || !(days > 0)) return problem("MedicationDispense.daysSupply", `${JSON.stringify(r.daysSupply)} is not a number of days`)
  return fact({ k: "dispense", src: r.id!, patient: patientId, drug, day, days: Math.round(days), end: null })
}

const allergyIntolerance = (r: fhir4.AllergyIntolerance, ctx: FhirContext): Mapped => {
  const verification = codingsOf(r.verificationStatus).map((c) => c.code)
  if (verification.some((v) => v !== undefined && REFUTED.has(v))) return skip("AllergyIntolerance refuted or entered in error: left out")
  if (verification.includes("unconfirmed")) return skip("AllergyIntolerance not confirmed (verificationStatus unconfirmed): left out")
  // Resolved: "clinically reassessed by testing or re-exposure and no longer present" (R4
  // allergyintolerance-clinical); inactive: no longer held. A label withdrawn is not the drug's
  // adverse reaction to count.
  const clinical = codingsOf(r.clinicalStatus).map((c) => c.code)
  if (clinical.includes("resolved") || clinical.includes("inactive")) return skip("AllergyIntolerance resolved or inactive (clinicalStatus): left out")
  const codings = codingsOf(r.code)
  const drug = conceptOf("drug", codings, r.code?.text)
  const isDrug = (Array.isArray(r.category) && r.category.includes("medication")) || drug.targets.length > 0
  if (!isDrug) return skip("AllergyIntolerance to something other than a drug: left out")
  const reactions = Array.isArray(r.reaction) ? r.reaction : []
  if (reactions.length === 0) return skip("AllergyIntolerance to a drug without a recorded reaction: left out")
  const patientId = subjectOf(r.patient, "AllergyIntolerance.patient")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const facts: Array<Fact> = []
  const problems: Array<Problem> = []
  const notes: Array<string> = []
  for (const [i, reaction] of reactions.entries()) {
    const path = reaction?.onset !== undefined ? `AllergyIntolerance.reaction[${i}].onset` : r.onsetDateTime !== undefined ? "AllergyIntolerance.onsetDateTime" : "AllergyIntolerance.recordedDate"
    const day = ctx.day(reaction?.onset ?? r.onsetDateTime ?? r.recordedDate, path)
    if (day === undefined) {
      notes.push("AllergyIntolerance reaction without a date (reaction.onset, onsetDateTime or recordedDate): left out")
      continue
    }
    if (isProblem(day)) {
      problems.push(day)
      continue
    }
    const substance = reaction?.substance === undefined ? drug : conceptOf("drug", codingsOf(reaction.substance), reaction.substance.text)
    for (const m of Array.isArray(reaction?.manifestation) ? reaction.manifestation : []) {
      if (!hasCode(m)) continue
      facts.push({ k: "adverse", src: r.id!, patient: patientId, drug: substance, event: conceptOf("adverse_event", codingsOf(m), m.text), day })
    }
  }
  return { facts, problems, notes }
}

const adverseEvent = (r: fhir4.AdverseEvent, ctx: FhirContext): Mapped => {
  if (r.actuality === "potential") return skip("AdverseEvent that did not happen (actuality potential): left out")
  const patientId = subjectOf(r.subject, "AdverseEvent.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  if (!hasCode(r.event)) return problem("AdverseEvent.event", "is required (what happened)")
  const day = ctx.day(r.date ?? r.detected ?? r.recordedDate, r.date !== undefined ? "AdverseEvent.date" : r.detected !== undefined ? "AdverseEvent.detected" : "AdverseEvent.recordedDate")
  if (day === undefined) return skip("AdverseEvent without a date (date, detected or recordedDate): left out")
  if (isProblem(day)) return { facts: [], problems: [day] }
  const event = conceptOf("adverse_event", codingsOf(r.event), r.event?.text)
  const facts: Array<Fact> = []
  for (const [i, suspect] of (Array.isArray(r.suspectEntity) ? r.suspectEntity : []).entries()) {
    const ref = suspect?.instance?.reference
    if (typeof ref !== "string" || !(/(^|\/)Medication\//.test(ref) || ref.startsWith("#") || ref.startsWith("urn:uuid:"))) continue
    const drug = medicationOf({ medicationReference: suspect.instance, ...(r.contained === undefined ? {} : { contained: r.contained }) }, "AdverseEvent", ctx)
    if (typeof drug === "string") continue
    if (isProblem(drug)) return { facts: [], problems: [{ path: `AdverseEvent.suspectEntity[${i}].instance`, reason: drug.reason }] }
    facts.push({ k: "adverse", src: r.id!, patient: patientId, drug, event, day })
  }
  return facts.length === 0 ? skip("AdverseEvent without a suspected Medication: left out") : { facts, problems: [] }
}

const codeSystem = (r: fhir4.CodeSystem): Mapped => {
  if (typeof r.url !== "string" || !r.url.startsWith(HCC_VOCABULARY_PREFIX)) return skip("CodeSystem other than the service's vocabularies: left out")
  const kind = r.url.slice(HCC_VOCABULARY_PREFIX.length)
  const facts: Array<Fact> = []
  for (const c of Array.isArray(r.concept) ? r.concept : []) {
    const standard = (c.property ?? []).find((p) => p.code === "standard")?.valueCoding
    facts.push({
      k: "vocabulary",
      kind,
      code: c.code,
      label: c.display ?? c.code,
      system: standard?.system === undefined ? null : systemName(standard.system),
      standard: standard?.code ?? null
    })
  }
  return { facts, problems: [] }
}

/** Maps one resource of a type the importer reads (READ_TYPES). */
export const mapResource = (resource: fhir4.FhirResource, ctx: FhirContext): Mapped => {
  if (typeof resource.id !== "string" || resource.id === "") return problem(`${resource.resourceType}.id`, "is required (every row keeps its source id)")
  switch (resource.resourceType) {
    case "Patient":
      return patient(resource, ctx)
    case "Organization":
      return organization(resource, ctx)
    case "Medication":
      return fact({ k: "medication", src: resource.id, identifiers: identifiersOf(resource.identifier), codings: codingsOf(resource.code), text: resource.code?.text ?? null })
    case "CodeSystem":
      return codeSystem(resource)
    case "Encounter":
      return encounter(resource, ctx)
    case "Condition":
      return condition(resource, ctx)
    case "MedicationRequest":
      return medicationRequest(resource, ctx)
    case "MedicationStatement":
      return medicationStatement(resource, ctx)
    case "MedicationDispense":
      return medicationDispense(resource, ctx)
    case "Observation":
      return observation(resource, ctx)
    case "Procedure":
      return procedure(resource, ctx)
    case "Device":
      return device(resource)
    case "AllergyIntolerance":
      return allergyIntolerance(resource, ctx)
    case "AdverseEvent":
      return adverseEvent(resource, ctx)
    case "ExplanationOfBenefit":
      return explanationOfBenefit(resource, ctx)
    default:
      return skip(`${resource.resourceType}: not read`)
  }
}
