/**
 * What FHIR R4 lets a resource leave out does not reject an export: the record is left out and
 * counted with its reason (an Encounter without period, a Procedure performed as a string, an
 * AdverseEvent, an allergy reaction, an order or a statement without a date, an order whose
 * Medication a patient-level export left out and whose reference names none), or read without what
 * it lacks (a valueQuantity without a value is no value); a Patient without birthDate (US Core
 * allows it) is left out with all that is about them. Malformed data still fails.
 */
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { ehrFiles, writeEhrExport } from "../fixtures/fhir/ehr.ts"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

let summary: Record<string, any>
let t: Record<string, Table>

beforeAll(() => {
  const files = ehrFiles()
  const edit = (file: string, index: number, change: (r: Record<string, any>) => Record<string, any>) => {
    const lines = [...files[file]!] as Array<Record<string, any>>
    lines[index] = change({ ...lines[index]! })
    files[file] = lines
  }
  const without = (...keys: ReadonlyArray<string>) => (r: Record<string, any>) => {
    for (const k of keys) delete r[k]
    return r
  }
  edit("Encounter.ndjson", 1, without("period"))
  edit("Procedure.ndjson", 1, (r) => ({ ...without("performedDateTime")(r), performedString: "in the spring" }))
  edit("AdverseEvent.ndjson", 0, without("date", "detected", "recordedDate"))
  edit("AllergyIntolerance.ndjson", 0, (r) => ({ ...without("onsetDateTime", "recordedDate")(r), reaction: r.reaction.map((x: Record<string, unknown>) => without("onset")({ ...x })) }))
  edit("MedicationStatement.ndjson", 0, without("effectivePeriod", "effectiveDateTime", "dateAsserted"))
  edit("MedicationRequest.ndjson", 3, (r) => ({ ...without("authoredOn", "dispenseRequest")(r), dosageInstruction: [] }))
  edit("Observation.1.ndjson", 0, (r) => ({ ...r, valueQuantity: { unit: "{score}" } }))
  // Medications a patient-level export left out: named by the reference's display, else left out.
  const order = (id: string, medicationReference: object) => ({ resourceType: "MedicationRequest", id, status: "completed", intent: "order", subject: { reference: "Patient/p4" }, medicationReference, authoredOn: "2024-02-01" })
  files["MedicationRequest.ndjson"] = [...files["MedicationRequest.ndjson"]!, order("mr9", { reference: "Medication/gone", display: "lisinopril 10 MG Oral Tablet" }), order("mr10", { reference: "Medication/gone-too" })]
  // A patient without a birth date, with a condition and an encounter, named by id and by identifier.
  files["Patient.ndjson"] = [...files["Patient.ndjson"]!, { resourceType: "Patient", id: "p6", identifier: [{ system: "urn:example:mrn", value: "6" }], gender: "female" }]
  files["Condition.ndjson"] = [...files["Condition.ndjson"]!, { resourceType: "Condition", id: "c-p6", subject: { reference: "Patient/p6" }, code: { coding: [{ system: "http://snomed.info/sct", code: "44054006" }] }, onsetDateTime: "2020-01-01" }]
  files["Encounter.ndjson"] = [...files["Encounter.ndjson"]!, { resourceType: "Encounter", id: "e-p6", status: "finished", class: { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "AMB" }, subject: { reference: "Patient?identifier=urn:example:mrn|6" }, period: { start: "2024-03-01" } }]
  const dir = tempDataDir()
  summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk"), files), "--as-of", "2024-12-31", "--json"]))
  t = tablesOf(dir)
})

describe("FHIR: what R4 lets a resource leave out", () => {
  it("imports the export, each record without what the analytics need left out and counted with its reason", () => {
    expect(summary.left_out).toMatchObject({
      "Encounter without period.start (the day of the visit): left out": 1,
      "Procedure of an implant or a revision without a date (performedDateTime or performedPeriod.start): left out": 1,
      "AdverseEvent without a date (date, detected or recordedDate): left out": 1,
      "AllergyIntolerance reaction without a date (reaction.onset, onsetDateTime or recordedDate): left out": 1,
      "MedicationStatement without a date (effective[x] or dateAsserted): left out": 1,
      "MedicationRequest without a start (dosage boundsPeriod, authoredOn or dispenseRequest.validityPeriod): left out": 1
    })
    expect(Object.keys(summary.left_out).some((k) => k.endsWith(": no value: left out"))).toBe(true)
  })

  it("a Patient without birthDate is left out, with what is about them, counted; the other patients stay", () => {
    expect(summary.left_out["Patient without a birth date: left out, with all that is about them (every cohort needs an age)"]).toBe(1)
    expect(summary.left_out["Condition about a patient left out: left out"]).toBe(1)
    expect(summary.left_out["Encounter about a patient left out: left out"]).toBe(1)
    expect(summary.rows.patients).toBe(5)
    expect(t.source_ids!.some((r) => r.source_id === "Patient/p6")).toBe(false)
  })

  it("a Medication the export left out: the reference's display names the drug, else the order is left out and counted", () => {
    const p4 = t.source_ids!.find((r) => r.table_name === "patients" && r.source_id === "Patient/p4")!.id
    expect(t.drug_exposures!.filter((d) => d.patient_id === p4 && d.start_date === "2024-02-01").map((d) => d.drug)).toEqual(["lisinopril"])
    expect(summary.left_out["MedicationRequest whose Medication is not in the export (and its reference has no display): left out"]).toBe(1)
  })
})
