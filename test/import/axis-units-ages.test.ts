/**
 * The axis model's numbers as sources send them (docs/data.md, "The axis model"): a value beyond an
 * instrument's range scores as the range's nearer end (an HbA1c of 4.5 % is as good as 5 %, 13 %
 * as bad as 12 %); a value in another unit is converted where the instrument says how (HbA1c in
 * IFCC mmol/mol) and otherwise left out and counted, never misread; HbA1c's LOINC variants score
 * alike; the adult BMI classes apply from age 20 and a child's weight status comes from the
 * BMI-for-age percentile. The same facts through FHIR and through OMOP give the same scores.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

/** One measurement: patient, LOINC code, value, unit (UCUM code, or a unit's text), year of birth. */
interface Case {
  readonly patient: number
  readonly born: number
  readonly loinc: string
  readonly value: number
  readonly unit?: string
}

const CASES: ReadonlyArray<Case> = [
  { patient: 1, born: 1970, loinc: "4548-4", value: 4.5, unit: "%" },
  { patient: 2, born: 1970, loinc: "4548-4", value: 13, unit: "%" },
  { patient: 3, born: 1970, loinc: "4548-4", value: 48, unit: "mmol/mol" },
  { patient: 4, born: 1970, loinc: "59261-8", value: 48 },
  { patient: 5, born: 1970, loinc: "17856-6", value: 6.5, unit: "%" },
  { patient: 6, born: 1970, loinc: "4548-4", value: 6.5, unit: "mg/dL" },
  { patient: 7, born: 1970, loinc: "4548-4", value: 150, unit: "%" },
  { patient: 8, born: 2015, loinc: "39156-5", value: 15.5, unit: "kg/m2" },
  { patient: 8, born: 2015, loinc: "59576-9", value: 50, unit: "%" },
  { patient: 9, born: 1970, loinc: "39156-5", value: 15.5, unit: "kg/m2" },
  { patient: 10, born: 2015, loinc: "39156-5", value: 15.5, unit: "kg/m2" },
  { patient: 11, born: 1970, loinc: "39156-5", value: 22, unit: "kg/m²" }
]

/** The NM score each patient gets in 2024-03 (absent: none). */
const EXPECTED: Readonly<Record<string, string>> = {
  "1": "10", // 4.5 % clamps to the range's best end
  "2": "0", // 13 % clamps to its worst end
  "3": "7.8", // 48 mmol/mol = 6.543 % by the IFCC–NGSP master equation
  "4": "7.8", // the IFCC code, no unit: taken in mmol/mol, as the code says
  "5": "7.9", // the HPLC variant scores as 4548-4 (6.5 %)
  "8": "10", // a child's 50th BMI percentile: healthy weight; the adult bands do not apply
  "9": "2", // an adult's BMI 15.5: the lowest WHO class
  "11": "10" // "kg/m²" written as text is kg/m2
}

const PATIENTS = [...new Set(CASES.map((c) => c.patient))]
const bornOf = (p: number) => CASES.find((c) => c.patient === p)!.born

const fhirFolder = () => {
  const bulk = join(tempDataDir(), "bulk")
  mkdirSync(bulk, { recursive: true })
  writeFileSync(join(bulk, "Patient.ndjson"), PATIENTS.map((p) => JSON.stringify({ resourceType: "Patient", id: `p${p}`, gender: "female", birthDate: `${bornOf(p)}-06-01` })).join("\n") + "\n")
  writeFileSync(join(bulk, "Observation.ndjson"), CASES.map((c, i) => JSON.stringify({
    resourceType: "Observation",
    id: `o${i}`,
    status: "final",
    code: { coding: [{ system: "http://loinc.org", code: c.loinc }] },
    subject: { reference: `Patient/p${c.patient}` },
    effectiveDateTime: "2024-03-05",
    // A UCUM code where one is (as US Core asks); the unit's text otherwise.
    valueQuantity: { value: c.value, ...(c.unit === undefined ? {} : /²/.test(c.unit) ? { unit: c.unit } : { unit: c.unit, system: "http://unitsofmeasure.org", code: c.unit }) }
  })).join("\n") + "\n")
  return bulk
}

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"
const LOINC_CONCEPTS: Readonly<Record<string, number>> = { "4548-4": 3004410, "59261-8": 40762352, "17856-6": 3005673, "39156-5": 3038553, "59576-9": 40762636 }
const UCUM_CONCEPTS: Readonly<Record<string, number>> = { "%": 8554, "mmol/mol": 9579, "mg/dL": 8840, "kg/m2": 9531 }

const omopFolder = () => {
  const dir = join(tempDataDir(), "cdm")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], ...PATIENTS.map((p) => [p, 8532, bornOf(p)])]))
  writeFileSync(join(dir, "measurement.csv"), csv([
    ["measurement_id", "person_id", "measurement_concept_id", "measurement_date", "measurement_type_concept_id", "value_as_number", "unit_concept_id", "unit_source_value"],
    // A unit the vocabulary knows as a concept; one written only as the source's text.
    ...CASES.map((c, i) => [i + 1, c.patient, LOINC_CONCEPTS[c.loinc]!, "2024-03-05", 32817, c.value, c.unit === undefined || /²/.test(c.unit) ? 0 : UCUM_CONCEPTS[c.unit]!, c.unit ?? ""])
  ]))
  writeFileSync(join(dir, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason"],
    ...Object.entries(LOINC_CONCEPTS).map(([code, id]) => [id, `LOINC ${code}`, "Measurement", "LOINC", "Lab Test", "S", code, "1970-01-01", "2099-12-31", ""]),
    ...Object.entries(UCUM_CONCEPTS).map(([code, id]) => [id, `unit ${code}`, "Unit", "UCUM", "Unit", "S", code, "1970-01-01", "2099-12-31", ""])
  ]))
  return dir
}

const imported = (format: "fhir" | "omop") => {
  const data = tempDataDir()
  const folder = format === "fhir" ? fhirFolder() : omopFolder()
  const summary = JSON.parse(hcc(data, ["data", "import", "--format", format, folder, "--as-of", "2024-03-31", "--json"])) as Record<string, any>
  const nm = Object.fromEntries(tablesOf(data)["axis_scores"]!.filter((r) => r["nm"] !== "").map((r) => [r["patient_id"], r["nm"]]))
  return { summary, nm }
}

describe.each(["fhir", "omop"] as const)("axis model units, ranges and ages (%s)", (format) => {
  it("clamps to the range, converts units, scores the LOINC variants alike and applies BMI by age", () => {
    const { nm, summary } = imported(format)
    expect(nm).toEqual(EXPECTED)
    // mg/dL is no unit of HbA1c: left out and counted, never read as %; 150 % is not a plausible result.
    expect(summary.left_out["hba1c: value in a unit other than % or mmol/mol: left out"]).toBe(1)
    expect(summary.left_out["hba1c: value out of the instrument's range: left out"]).toBe(1)
  })
})
