/**
 * OMOP conditions through the SNOMED hierarchy: a condition concept the condition map does not name
 * is each mapped condition CONCEPT_ANCESTOR says it descends from (type 2 diabetes with diabetic
 * nephropathy → type 2 diabetes); without the table it stays a condition of its own.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"
const T2D = 201826
const T2D_NEPHROPATHY = 443731
const ASTHMA_UNMAPPED = 4_100_000

const cdm = (withAncestors: boolean) => {
  const dir = join(tempDataDir(), "cdm")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960], [2, 8507, 1962]]))
  writeFileSync(join(dir, "condition_occurrence.csv"), csv([
    ["condition_occurrence_id", "person_id", "condition_concept_id", "condition_start_date", "condition_type_concept_id"],
    [1, 1, T2D_NEPHROPATHY, "2023-01-01", 32817],
    [2, 2, ASTHMA_UNMAPPED, "2023-01-01", 32817]
  ]))
  writeFileSync(join(dir, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason"],
    [T2D, "Type 2 diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "S", "44054006", "1970-01-01", "2099-12-31", ""],
    [T2D_NEPHROPATHY, "Type 2 diabetes mellitus with diabetic nephropathy", "Condition", "SNOMED", "Clinical Finding", "S", "1501000119109", "1970-01-01", "2099-12-31", ""],
    [ASTHMA_UNMAPPED, "Some finding", "Condition", "SNOMED", "Clinical Finding", "S", "999000001", "1970-01-01", "2099-12-31", ""]
  ]))
  if (withAncestors) {
    writeFileSync(join(dir, "concept_ancestor.csv"), csv([
      ["ancestor_concept_id", "descendant_concept_id", "min_levels_of_separation", "max_levels_of_separation"],
      [T2D, T2D_NEPHROPATHY, 1, 2],
      [T2D_NEPHROPATHY, T2D_NEPHROPATHY, 0, 0]
    ]))
  }
  return dir
}

const conditions = (withAncestors: boolean) => {
  const data = tempDataDir()
  hcc(data, ["data", "import", "--format", "omop", cdm(withAncestors), "--as-of", "2024-12-31", "--json"])
  return tablesOf(data)["patient_conditions"]!.map((r) => [r["patient_id"], r["condition"]])
}

describe("OMOP conditions through CONCEPT_ANCESTOR", () => {
  it("a SNOMED subtype the map does not name is the mapped condition it descends from", () => {
    expect(conditions(true)).toEqual([["1", "type_2_diabetes"], ["2", "some_finding"]])
  })

  it("without the table, the subtype is a condition of its own", () => {
    expect(conditions(false)[0]).toEqual(["1", "type_2_diabetes_mellitus_with_diabetic_nephropathy"])
  })
})
