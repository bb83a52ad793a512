/**
 * FHIR R4 Procedure and Device → the facts of implants (docs/data.md, "Procedure", "Device"): a
 * procedure is an implant when its code, or the Device it manipulated or used, is in the device
 * map; a revision or complication code counts towards an implant's outcomes.
 */
import type * as fhir4 from "fhir/r4.js"
import { codingsOf, fact, type FhirContext, isProblem, referenceId, skip, subjectOf } from "./common.ts"
import { conceptOf, deviceCategoryOf, deviceEventsOf } from "../../pipeline/concepts.ts"
import type { DeviceEvent, Mapped, Problem } from "../../pipeline/facts.ts"

const PROCEDURE_SKIPPED = new Set(["preparation", "not-done", "entered-in-error", "stopped"])

export const procedure = (r: fhir4.Procedure, ctx: FhirContext): Mapped => {
  if (r.status !== undefined && PROCEDURE_SKIPPED.has(r.status)) return skip(`Procedure with status ${r.status}: left out`)
  const codings = codingsOf(r.code)
  const device = deviceCategoryOf(codings)
  const events: ReadonlyArray<DeviceEvent> = deviceEventsOf(codings)
  const deviceRefs: Array<string> = []
  const refProblems: Array<Problem> = []
  for (const [i, f] of (Array.isArray(r.focalDevice) ? r.focalDevice : []).entries()) {
    const id = referenceId(f?.manipulated, "Device", `Procedure.focalDevice[${i}].manipulated`)
    if (isProblem(id)) refProblems.push(id)
    else if (id !== undefined) deviceRefs.push(id)
  }
  // usedReference may name a Device, a Medication or a Substance (R4): only a Device is the implant.
  // A `urn:uuid:` reference says no type: its `type`, else the export's Medications, tell.
  for (const [i, u] of (Array.isArray(r.usedReference) ? r.usedReference : []).entries()) {
    if (typeof u?.reference === "string" && !/(^|\/)Device\/|^urn:uuid:/.test(u.reference)) continue
    if (typeof u?.type === "string" && u.type !== "Device") continue
    const id = referenceId(u, "Device", `Procedure.usedReference[${i}]`)
    if (isProblem(id)) refProblems.push(id)
    else if (id !== undefined && !(u?.type === undefined && u.reference?.startsWith("urn:uuid:") === true && ctx.medications.has(id))) deviceRefs.push(id)
  }
  if (device === null && events.length === 0 && deviceRefs.length === 0 && refProblems.length === 0) return skip("Procedure not about an implant: left out")
  const patientId = subjectOf(r.subject, "Procedure.subject")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const day = ctx.day(r.performedDateTime ?? r.performedPeriod?.start, r.performedDateTime !== undefined ? "Procedure.performedDateTime" : "Procedure.performedPeriod.start")
  // performed[x] is optional, and may be a string or an age: an implant or a revision without a date is left out.
  if (day === undefined) return skip("Procedure of an implant or a revision without a date (performedDateTime or performedPeriod.start): left out")
  const performer = (Array.isArray(r.performer) ? r.performer : []).find((p) => p?.onBehalfOf !== undefined || /(^|\/)Organization[/?]/.test(p?.actor?.reference ?? ""))
  const org = referenceId(performer?.onBehalfOf ?? performer?.actor, "Organization", performer?.onBehalfOf !== undefined ? "Procedure.performer.onBehalfOf" : "Procedure.performer.actor")
  const encounterId = referenceId(r.encounter, "Encounter", "Procedure.encounter")
  const problems = [...refProblems, ...[day, org, encounterId].filter(isProblem)]
  if (problems.length > 0) return { facts: [], problems }
  return fact({
    k: "procedure",
    src: r.id!,
    patient: patientId,
    device,
    deviceRefs,
    day: day as number,
    org: (org as string | undefined) ?? null,
    encounter: (encounterId as string | undefined) ?? null,
    events
  })
}

export const device = (r: fhir4.Device): Mapped => {
  const patientId = referenceId(r.patient, "Patient", "Device.patient")
  if (isProblem(patientId)) return { facts: [], problems: [patientId] }
  const concept = conceptOf("device", codingsOf(r.type), r.type?.text)
  return fact({ k: "device", src: r.id!, patient: patientId ?? null, device: concept.targets[0] ?? null, concept })
}
