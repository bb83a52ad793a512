/**
 * Claims → facts: FHIR R4 ExplanationOfBenefit as CARIN Blue Button (C4BB 2.0) profiles it, the
 * form Medicare's Blue Button API and payers publish claims in (docs/data.md, "Claims"). A
 * pharmacy claim's items are fills (a dispensing with its days supply, evidence of adherence); an
 * institutional or professional claim is a visit of the kind its subtype, revenue codes or place
 * of service say, and its diagnoses are conditions.
 */
import type * as fhir4 from "fhir/r4.js"
import { codingsOf, type FhirContext, hasCode, isProblem, skip, subjectOf } from "./common.ts"
import { daysOf } from "./medicationPeriod.ts"
import { conceptOf, deviceEventsOf, isSocialHistory } from "../../pipeline/concepts.ts"
import type { EncounterKind, Fact, Mapped } from "../../pipeline/facts.ts"

/** HL7's claim types (R4 `http://terminology.hl7.org/CodeSystem/claim-type`). */
const CLAIM_TYPE = "http://terminology.hl7.org/CodeSystem/claim-type"

/** Codes of a claim element's CodeableConcept, by code alone (C4BB fixes their systems). */
const codes = (cc: fhir4.CodeableConcept | undefined): ReadonlyArray<string> => codingsOf(cc).flatMap((c) => (c.code === undefined ? [] : [c.code]))

/**
 * The days supplied of a pharmacy item: the supportingInfo of category `dayssupply`
 * (C4BBSupportingInfoType) the item points to (`informationSequence`), else the claim's one.
 */
const daysSupplyOf = (r: fhir4.ExplanationOfBenefit, item: fhir4.ExplanationOfBenefitItem): number | undefined => {
  const infos = (r.supportingInfo ?? []).filter((i) => codes(i.category).includes("dayssupply"))
  const pointed = item.informationSequence === undefined ? [] : infos.filter((i) => item.informationSequence!.includes(i.sequence))
  const info = pointed[0] ?? infos[0]
  return info?.valueQuantity === undefined ? undefined : daysOf({ ...info.valueQuantity, unit: info.valueQuantity.unit ?? "d" })
}

const pharmacy = (r: fhir4.ExplanationOfBenefit, patient: string, ctx: FhirContext): Mapped => {
  const facts: Array<Fact> = []
  const notes: Array<string> = []
  for (const item of r.item ?? []) {
    if (!hasCode(item.productOrService)) {
      notes.push("ExplanationOfBenefit pharmacy item without a product: left out")
      continue
    }
    const day = ctx.day(item.servicedDate ?? item.servicedPeriod?.start ?? r.billablePeriod?.start, "ExplanationOfBenefit.item.servicedDate")
    if (isProblem(day)) return { facts: [], problems: [day] }
    const days = daysSupplyOf(r, item)
    if (day === undefined || days === undefined || !(days > 0)) {
      notes.push(`ExplanationOfBenefit pharmacy item without ${day === undefined ? "a date of service" : "a days supply"}: left out`)
      continue
    }
    facts.push({ k: "dispense", src: r.id!, patient, drug: conceptOf("drug", codingsOf(item.productOrService), item.productOrService.text), day, days: Math.round(days), end: null })
  }
  return { facts, problems: [], notes }
}

/**
 * The visit kind of a medical claim: an institutional claim's subtype (C4BBInstitutionalClaimSubType
 * inpatient, outpatient), emergency when a line bills an emergency room revenue code (NUBC 0450–0459);
 * a professional claim's place of service (CMS: 23 emergency room, 21 inpatient hospital, else outpatient).
 */
const kindOf = (r: fhir4.ExplanationOfBenefit, type: string): EncounterKind => {
  const items = r.item ?? []
  if (items.some((i) => codes(i.revenue).some((c) => /^0?45\d$/.test(c)))) return "emergency"
  if (type === "institutional") return codes(r.subType).includes("inpatient") ? "inpatient" : "outpatient"
  const places = items.flatMap((i) => codes(i.locationCodeableConcept))
  return places.includes("23") ? "emergency" : places.includes("21") ? "inpatient" : "outpatient"
}

const medical = (r: fhir4.ExplanationOfBenefit, patient: string, type: string, ctx: FhirContext): Mapped => {
  // The stay (an inpatient claim's admission period), else the claim's billable period, else its first service.
  const admission = (r.supportingInfo ?? []).find((i) => codes(i.category).includes("admissionperiod"))?.timingPeriod
  const period = admission ?? r.billablePeriod
  const start = ctx.day(period?.start ?? r.item?.[0]?.servicedDate ?? r.item?.[0]?.servicedPeriod?.start, "ExplanationOfBenefit.billablePeriod.start")
  const end = ctx.day(period?.end, "ExplanationOfBenefit.billablePeriod.end")
  const problems = [start, end].filter(isProblem)
  if (problems.length > 0) return { facts: [], problems }
  if (start === undefined) return skip("ExplanationOfBenefit without a date of service: left out")
  const s = start as number
  const e = end as number | undefined
  const facts: Array<Fact> = [{ k: "encounter", src: r.id!, patient, kind: kindOf(r, type), cls: `${type} claim`, start: s, end: e === undefined ? s : Math.max(s, e), org: null }]
  const notes: Array<string> = e !== undefined && e < s ? ["ExplanationOfBenefit ending before it starts: kept as one day"] : []
  for (const d of r.diagnosis ?? []) {
    const codings = codingsOf(d.diagnosisCodeableConcept)
    if (codings.length === 0) continue
    const concept = conceptOf("condition", codings, d.diagnosisCodeableConcept?.text)
    if (isSocialHistory(codings, concept)) notes.push("ExplanationOfBenefit diagnosis of social history: left out")
    else facts.push({ k: "condition", patient, concept, day: s, events: deviceEventsOf(codings) })
  }
  return { facts, problems: [], notes }
}

/** Maps an ExplanationOfBenefit (see the module comment); only an active claim counts (R4 ExplanationOfBenefitStatus). */
export const explanationOfBenefit = (r: fhir4.ExplanationOfBenefit, ctx: FhirContext): Mapped => {
  if (r.status !== "active") return skip(`ExplanationOfBenefit with status ${String(r.status)}: left out`)
  const patient = subjectOf(r.patient, "ExplanationOfBenefit.patient")
  if (isProblem(patient)) return { facts: [], problems: [patient] }
  const type = codingsOf(r.type).find((c) => c.system === CLAIM_TYPE || c.system === undefined)?.code ?? codes(r.type)[0]
  if (type === "pharmacy") return pharmacy(r, patient, ctx)
  if (type === "institutional" || type === "professional") return medical(r, patient, type, ctx)
  return skip(`ExplanationOfBenefit of type ${type ?? "(none)"}: left out`)
}
