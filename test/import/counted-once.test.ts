/**
 * Each source row is counted once: ETLs often give a measurement's LOINC concept as both its
 * concept and its source concept, and FHIR codes may repeat a coding; the instrument scores (and a
 * row without a value is left out) once per row, not once per coding naming it.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"
// PHQ-9 total (LOINC 44261-6) scores ER on 0–27, lower is better: 9 → 6.667, 0 → 10.

describe("one row, one count", () => {
  it("OMOP: a MEASUREMENT whose concept and source concept are the same LOINC scores once; one without a value is left out once", () => {
    const cdm = join(tempDataDir(), "cdm")
    mkdirSync(cdm, { recursive: true })
    writeFileSync(join(cdm, "concept.csv"), csv([["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code"], [40758882, "PHQ-9 total score", "Measurement", "LOINC", "Clinical Observation", "S", "44261-6"]]))
    writeFileSync(join(cdm, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960]]))
    writeFileSync(join(cdm, "measurement.csv"), csv([
      ["measurement_id", "person_id", "measurement_concept_id", "measurement_date", "measurement_type_concept_id", "value_as_number", "measurement_source_concept_id"],
      [1, 1, 40758882, "2024-03-02", 32817, 9, 40758882],
      [2, 1, 40758882, "2024-03-20", 32817, 0, 0],
      [3, 1, 40758882, "2024-03-21", 32817, "", 40758882],
      [4, 1, 40758882, "2024-03-22", 32817, "", 40758882]
    ]))
    const dir = tempDataDir()
    const summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", cdm, "--as-of", "2024-12-31", "--json"])) as Record<string, any>
    expect(tablesOf(dir).axis_scores!.map((s) => [s.month, s.er])).toEqual([["2024-03", String(Math.round(((10 * (1 - 9 / 27) + 10) / 2) * 10) / 10)]])
    expect(summary.left_out["phq9: no value: left out"]).toBe(2)
  })
  it("FHIR: an Observation whose code repeats its LOINC coding scores once", () => {
    const bulk = join(tempDataDir(), "bulk")
    mkdirSync(bulk, { recursive: true })
    const loinc = (display: string) => ({ system: "http://loinc.org", code: "44261-6", display })
    writeFileSync(join(bulk, "Patient.ndjson"), JSON.stringify({ resourceType: "Patient", id: "p1", birthDate: "1960-01-01", gender: "female" }) + "\n")
    writeFileSync(join(bulk, "Observation.ndjson"), [
      { resourceType: "Observation", id: "o1", status: "final", subject: { reference: "Patient/p1" }, effectiveDateTime: "2024-03-02", code: { coding: [loinc("PHQ-9 total"), loinc("Patient Health Questionnaire 9 item (PHQ-9) total score [Reported]")] }, valueQuantity: { value: 9 } },
      { resourceType: "Observation", id: "o2", status: "final", subject: { reference: "Patient/p1" }, effectiveDateTime: "2024-03-20", code: { coding: [loinc("PHQ-9 total")] }, valueQuantity: { value: 0 } }
    ].map((r) => JSON.stringify(r)).join("\n") + "\n")
    const dir = tempDataDir()
    hcc(dir, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-12-31"])
    expect(tablesOf(dir).axis_scores!.map((s) => [s.month, s.er])).toEqual([["2024-03", String(Math.round(((10 * (1 - 9 / 27) + 10) / 2) * 10) / 10)]])
  })
})
