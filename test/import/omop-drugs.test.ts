/**
 * OMOP DRUG_EXPOSURE rows as ETLs write them: OHDSI's ETL-Synthea writes each prescription as one
 * Pharmacy claim (type 32869) with days_supply = stop − start (0 for a current medication); CDM
 * 5.4's Mail order record (32857) is a fill. One fill covering its own course says nothing about
 * adherence (unknown, never 1.0); a current medication is kept; two fills or more give PDC.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"

let t: Record<string, Table>
let summary: Record<string, any>

beforeAll(() => {
  const cdm = join(tempDataDir(), "cdm")
  mkdirSync(cdm, { recursive: true })
  writeFileSync(join(cdm, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code"],
    [1503297, "metformin", "Drug", "RxNorm", "Ingredient", "S", "6809"]
  ]))
  writeFileSync(join(cdm, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960], [2, 8507, 1955], [3, 8532, 1970]]))
  writeFileSync(join(cdm, "drug_exposure.csv"), csv([
    ["drug_exposure_id", "person_id", "drug_concept_id", "drug_exposure_start_date", "drug_exposure_end_date", "drug_type_concept_id", "days_supply"],
    [1, 1, 1503297, "2024-01-01", "2025-01-05", 32869, 371],
    [2, 2, 1503297, "2024-03-01", "2024-03-01", 32869, 0],
    [3, 3, 1503297, "2024-01-01", "2024-01-30", 32857, 30],
    [4, 3, 1503297, "2024-03-01", "2024-03-30", 32857, 30]
  ]))
  const dir = tempDataDir()
  summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", cdm, "--as-of", "2024-12-31", "--json"]))
  t = tablesOf(dir)
})

describe("OMOP drug exposures as ETLs write them", () => {
  it("one Pharmacy claim per prescription: a course with adherence unknown; a current medication kept; two Mail order fills give PDC", () => {
    expect(t.drug_exposures!.map((d) => [d.patient_id, d.drug, d.start_date, d.end_date, d.adherence])).toEqual([
      ["2", "metformin", "2024-03-01", "2024-03-01", ""],
      ["1", "metformin", "2024-01-01", "2025-01-05", ""],
      ["3", "metformin", "2024-01-01", "2024-03-30", String(Math.round((60 / 90) * 1e4) / 1e4)]
    ])
    expect(summary.left_out["DRUG_EXPOSURE dispensing without days_supply: a course, adherence unknown"]).toBe(1)
  })
})
