/**
 * Death ends everything, in FHIR and OMOP alike: a dead patient's active order stops at the death,
 * a visit after it is left out and a stay in progress ends there, axis scores of months after it
 * are left out — each counted. Sex from `gender`, else US Core's sex extensions. An end before its
 * start is counted and kept as one day.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const ndjson = (rows: ReadonlyArray<object>) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n"
const RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
const metformin = { coding: [{ system: RXNORM, code: "6809", display: "metformin" }] }
const phq9 = (id: string, patient: string, day: string, value: number) => ({
  resourceType: "Observation", id, status: "final", subject: { reference: `Patient/${patient}` }, effectiveDateTime: day,
  code: { coding: [{ system: "http://loinc.org", code: "44261-6" }] }, valueQuantity: { value }
})

describe("FHIR", () => {
  let t: Record<string, Table>
  let summary: Record<string, any>
  beforeAll(() => {
    const bulk = join(tempDataDir(), "bulk")
    mkdirSync(bulk, { recursive: true })
    writeFileSync(join(bulk, "Patient.ndjson"), ndjson([
      { resourceType: "Patient", id: "p1", birthDate: "1950-01-01", extension: [{ url: "http://hl7.org/fhir/us/core/StructureDefinition/us-core-individual-sex", valueCoding: { system: "http://snomed.info/sct", code: "248152002", display: "Female (finding)" } }] },
      { resourceType: "Patient", id: "p2", birthDate: "1960-01-01", extension: [{ url: "http://hl7.org/fhir/us/core/StructureDefinition/us-core-birthsex", valueCode: "M" }] },
      { resourceType: "Patient", id: "p3", birthDate: "1930-01-01", gender: "male", deceasedDateTime: "1996-05-10" },
      { resourceType: "Patient", id: "p4", birthDate: "1940-01-01" }
    ]))
    writeFileSync(join(bulk, "MedicationRequest.ndjson"), ndjson([
      { resourceType: "MedicationRequest", id: "m1", status: "active", intent: "order", subject: { reference: "Patient/p3" }, authoredOn: "1990-01-01", medicationCodeableConcept: metformin },
      { resourceType: "MedicationRequest", id: "m2", status: "completed", intent: "order", subject: { reference: "Patient/p1" }, medicationCodeableConcept: metformin,
        dosageInstruction: [{ timing: { repeat: { boundsPeriod: { start: "2020-03-10", end: "2020-03-01" } } } }] }
    ]))
    writeFileSync(join(bulk, "Encounter.ndjson"), ndjson([
      { resourceType: "Encounter", id: "e1", status: "in-progress", class: { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "IMP" }, subject: { reference: "Patient/p3" }, period: { start: "1996-05-01" } },
      { resourceType: "Encounter", id: "e2", status: "finished", class: { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "AMB" }, subject: { reference: "Patient/p3" }, period: { start: "1997-01-01", end: "1997-01-01" } },
      { resourceType: "Encounter", id: "e3", status: "finished", class: { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "AMB" }, subject: { reference: "Patient/p1" }, period: { start: "2021-06-02", end: "2021-06-01" } }
    ]))
    writeFileSync(join(bulk, "Observation.ndjson"), ndjson([phq9("o1", "p3", "1995-07-04", 9), phq9("o2", "p3", "2018-02-01", 3), phq9("o3", "p3", "2022-03-01", 3), phq9("o4", "p1", "2022-01-05", 0)]))
    const dir = tempDataDir()
    summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", bulk, "--as-of", "2022-12-31", "--json"]))
    t = tablesOf(dir)
  })
  it("sex from gender, else US Core's individual-sex (SNOMED CT) or birthsex extension, else unknown", () => {
    expect(t.patients!.map((p) => [p.id, p.sex])).toEqual([["1", "female"], ["2", "male"], ["3", "male"], ["4", "unknown"]])
    expect(summary.left_out["Patient without gender: sex from US Core's sex extension"]).toBe(2)
    expect(summary.left_out["Patient without gender: sex unknown"]).toBe(1)
  })
  it("a dead patient's active order ends at the death", () => {
    expect(t.drug_exposures!.filter((d) => d.patient_id === "3").map((d) => [d.drug, d.start_date, d.end_date])).toEqual([["metformin", "1990-01-01", "1996-05-10"]])
    expect(summary.left_out["drug exposure running past the patient's death: ended at the death"]).toBe(1)
  })
  it("a stay in progress ends at the death; a visit after it is left out", () => {
    expect(t.encounters!.filter((e) => e.patient_id === "3").map((e) => [e.kind, e.start_date, e.end_date])).toEqual([["inpatient", "1996-05-01", "1996-05-10"]])
    expect(summary.left_out["Encounter starting after the patient's death: left out"]).toBe(1)
    expect(summary.left_out["Encounter running past the patient's death: ended at the death"]).toBe(1)
  })
  it("axis scores of months after the death are left out", () => {
    expect(t.axis_scores!.filter((s) => s.patient_id === "3").map((s) => [s.month, s.er])).toEqual([["1995-07", "6.7"]])
    expect(summary.left_out["axis scores of a month after the patient's death: left out"]).toBe(2)
  })
  it("an end before its start is counted and kept as one day", () => {
    expect(t.drug_exposures!.filter((d) => d.patient_id === "1").map((d) => [d.start_date, d.end_date])).toEqual([["2020-03-10", "2020-03-10"]])
    expect(t.encounters!.filter((e) => e.patient_id === "1").map((e) => [e.start_date, e.end_date])).toEqual([["2021-06-02", "2021-06-02"]])
    expect(summary.left_out["MedicationRequest ending before it starts: kept as one day"]).toBe(1)
    expect(summary.left_out["Encounter ending before it starts: kept as one day"]).toBe(1)
  })
})

describe("OMOP", () => {
  it("a dead person's current medication ends at the death, one after it is left out; a visit after it too; a visit ending before it starts is one day, counted", () => {
    const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"
    const cdm = join(tempDataDir(), "cdm")
    mkdirSync(cdm, { recursive: true })
    writeFileSync(join(cdm, "concept.csv"), csv([["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code"], [1503297, "metformin", "Drug", "RxNorm", "Ingredient", "S", "6809"]]))
    writeFileSync(join(cdm, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8507, 1930], [2, 8532, 1950]]))
    writeFileSync(join(cdm, "death.csv"), csv([["person_id", "death_date"], [1, "1996-05-10"]]))
    writeFileSync(join(cdm, "drug_exposure.csv"), csv([
      ["drug_exposure_id", "person_id", "drug_concept_id", "drug_exposure_start_date", "drug_exposure_end_date", "verbatim_end_date", "drug_type_concept_id", "days_supply"],
      [1, 1, 1503297, "1990-01-01", "1990-01-01", "", 32838, 0],
      [2, 1, 1503297, "1997-02-01", "1997-03-02", "1997-03-02", 32838, 29]
    ]))
    writeFileSync(join(cdm, "visit_occurrence.csv"), csv([
      ["visit_occurrence_id", "person_id", "visit_concept_id", "visit_start_date", "visit_end_date"],
      [1, 1, 9202, "1997-01-01", "1997-01-01"],
      [2, 2, 9202, "2021-06-02", "2021-06-01"]
    ]))
    const dir = tempDataDir()
    const summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", cdm, "--as-of", "2022-12-31", "--json"])) as Record<string, any>
    const t = tablesOf(dir)
    expect(t.drug_exposures!.map((d) => [d.patient_id, d.start_date, d.end_date])).toEqual([["1", "1990-01-01", "1996-05-10"]])
    expect(summary.left_out["drug exposure starting after the patient's death: left out"]).toBe(1)
    expect(summary.left_out["drug exposure running past the patient's death: ended at the death"]).toBe(1)
    expect(t.encounters!.map((e) => [e.patient_id, e.start_date, e.end_date])).toEqual([["2", "2021-06-02", "2021-06-02"]])
    expect(summary.left_out["visit_occurrence starting after the patient's death: left out"]).toBe(1)
    expect(summary.left_out["VISIT_OCCURRENCE ending before it starts: kept as one day"]).toBe(1)
  })
})
