/**
 * Social history written as conditions: Synthea's social-determinants and care-plan modules write
 * "Full-time employment (finding)", "Stress (finding)" or "Medication review due (situation)" as
 * FHIR Conditions, while OHDSI's ETL puts the same SNOMED concepts in OBSERVATION (their OMOP domain
 * is Observation). Neither is a diagnosis: a condition coded only with one of them is left out and
 * counted, through FHIR and through OMOP alike, so neither import makes "stress" a chronic
 * condition; a code the condition map takes stays a condition.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

/** SNOMED code, display: two social-history findings, a care situation, a disorder the condition map takes. */
const CONDITIONS: ReadonlyArray<readonly [string, string]> = [
  ["160903007", "Full-time employment (finding)"],
  ["73595000", "Stress (finding)"],
  ["314529007", "Medication review due (situation)"],
  ["44054006", "Diabetes mellitus type 2 (disorder)"]
]

const fhirFolder = () => {
  const bulk = join(tempDataDir(), "bulk")
  mkdirSync(bulk, { recursive: true })
  writeFileSync(join(bulk, "Patient.ndjson"), JSON.stringify({ resourceType: "Patient", id: "p1", gender: "female", birthDate: "1970-01-01" }) + "\n")
  writeFileSync(join(bulk, "Condition.ndjson"), CONDITIONS.map(([code, display], i) => JSON.stringify({
    resourceType: "Condition",
    id: `c${i}`,
    category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-category", code: "encounter-diagnosis" }] }],
    code: { coding: [{ system: "http://snomed.info/sct", code, display }], text: display },
    subject: { reference: "Patient/p1" },
    onsetDateTime: "2023-05-01"
  })).join("\n") + "\n")
  return bulk
}

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.map((v) => (typeof v === "string" && v.includes(",") ? `"${v}"` : v)).join(",")).join("\n") + "\n"

const omopFolder = () => {
  const dir = join(tempDataDir(), "cdm")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1970]]))
  writeFileSync(join(dir, "condition_occurrence.csv"), csv([
    ["condition_occurrence_id", "person_id", "condition_concept_id", "condition_start_date", "condition_type_concept_id"],
    ...CONDITIONS.map((_, i) => [i + 1, 1, 4_000_000 + i, "2023-05-01", 32817])
  ]))
  writeFileSync(join(dir, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason"],
    ...CONDITIONS.map(([code, display], i) => [4_000_000 + i, display, code === "44054006" ? "Condition" : "Observation", "SNOMED", "Clinical Finding", "S", code, "1970-01-01", "2099-12-31", ""])
  ]))
  return dir
}

describe.each(["fhir", "omop"] as const)("social history written as conditions (%s)", (format) => {
  it("is left out and counted; the diagnosis stays", () => {
    const data = tempDataDir()
    const summary = JSON.parse(hcc(data, ["data", "import", "--format", format, format === "fhir" ? fhirFolder() : omopFolder(), "--as-of", "2024-12-31", "--json"])) as Record<string, any>
    const t = tablesOf(data)
    expect(t["patient_conditions"]!.map((r) => r["condition"])).toEqual(["type_2_diabetes"])
    expect(t["vocabulary"]!.filter((r) => r["kind"] === "condition").map((r) => r["code"])).toEqual(["type_2_diabetes"])
    const note = `${format === "fhir" ? "Condition" : "CONDITION_OCCURRENCE"} recording social history or a care situation (e.g. employment, stress, medication review due), not a diagnosis: left out`
    expect(summary.left_out[note]).toBe(3)
  })
})
