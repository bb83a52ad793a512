/**
 * OMOP DRUG_EXPOSURE rows as ETLs write them: OHDSI's ETL-Synthea writes each prescription as one
 * row spanning it (days_supply = stop − start) and a current medication as a 0-day row without a
 * verbatim_end_date; CDM 5.4's Mail order record (32857) is a fill. Rows of one person and
 * ingredient make eras with OHDSI's 30-day persistence window; one fill says nothing about
 * adherence (unknown, never 1.0); two fills or more in an era give its PDC; a current medication is
 * ongoing.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"

let t: Record<string, Table>
let summary: Record<string, any>

/** The CDM folder; `floats`: its integer columns as pandas writes a column with an empty cell ("32869.0"). */
const writeFolder = (floats: boolean) => {
  const cdm = join(tempDataDir(), "cdm")
  mkdirSync(cdm, { recursive: true })
  writeFileSync(join(cdm, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code"],
    [1503297, "metformin", "Drug", "RxNorm", "Ingredient", "S", "6809"]
  ]))
  writeFileSync(join(cdm, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960], [2, 8507, 1955], [3, 8532, 1970], [4, 8507, 1980], [5, 8532, 1990]]))
  writeFileSync(join(cdm, "drug_exposure.csv"), csv([
    ["drug_exposure_id", "person_id", "drug_concept_id", "drug_exposure_start_date", "drug_exposure_end_date", "drug_type_concept_id", "days_supply"],
    [1, 1, 1503297, "2024-01-01", "2025-01-05", 32869, 371],
    [2, 2, 1503297, "2024-03-01", "2024-03-01", 32869, 0],
    [3, 3, 1503297, "2024-01-01", "2024-01-30", 32857, 30],
    [4, 3, 1503297, "2024-02-15", "2024-03-15", 32857, 30],
    [5, 3, 1503297, "2024-04-16", "2024-05-15", 32857, 30],
    [6, 4, 1503297, "2024-02-01", "", 32857, ""],
    [7, 5, 1503297, "2024-02-01", "", 32818, ""]
  ].map((r, i) => (floats && i > 0 ? r.map((v) => (typeof v === "number" ? `${v}.0` : v)) : r))))
  return cdm
}
const importOf = (cdm: string) => {
  const dir = tempDataDir()
  return { summary: JSON.parse(hcc(dir, ["data", "import", "--format", "omop", cdm, "--as-of", "2024-12-31", "--json"])), tables: tablesOf(dir) }
}

beforeAll(() => {
  const read = importOf(writeFolder(false))
  summary = read.summary
  t = read.tables
})

describe("OMOP drug exposures as ETLs write them", () => {
  it("without an end or a supply, CDM 5.4's inferred end: a mail-order prescription 90 days, an administration its day", () => {
    expect(t.drug_exposures!.filter((d) => ["4", "5"].includes(d.patient_id!)).map((d) => [d.patient_id, d.start_date, d.end_date])).toEqual([["4", "2024-02-01", "2024-04-30"], ["5", "2024-02-01", "2024-02-01"]])
  })
  it("one Pharmacy claim per prescription: an era with adherence unknown; a 0-day row without a verbatim end is current, ongoing; Mail order fills 16 days apart one era with PDC, 32 days apart a new era", () => {
    expect(t.drug_exposures!.map((d) => [d.patient_id, d.drug, d.start_date, d.end_date, d.adherence])).toEqual([
      ["1", "metformin", "2024-01-01", "2025-01-05", ""],
      ["2", "metformin", "2024-03-01", "", ""],
      ["3", "metformin", "2024-01-01", "2024-03-15", String(Math.round((60 / 75) * 1e4) / 1e4)],
      ["3", "metformin", "2024-04-16", "2024-05-15", ""],
      ["4", "metformin", "2024-02-01", "2024-04-30", ""],
      ["5", "metformin", "2024-02-01", "2024-02-01", ""]
    ])
    expect(summary.left_out["DRUG_EXPOSURE current at its date (0 days supplied, no verbatim_end_date): ongoing"]).toBe(1)
  })
  it("every era traces back to each of its rows", () => {
    expect(t.source_ids!.filter((s) => s.table_name === "drug_exposures").map((s) => [s.id, s.source_id])).toEqual([
      ["1", "drug_exposure/1"],
      ["2", "drug_exposure/2"],
      ["3", "drug_exposure/3 drug_exposure/4"],
      ["4", "drug_exposure/5"],
      ["5", "drug_exposure/6"],
      ["6", "drug_exposure/7"]
    ])
  })
})

describe("integer columns written as floats (pandas: a column with an empty cell becomes float)", () => {
  it("read as the integers they are: the same eras, fills and types", () => {
    expect(importOf(writeFolder(true)).tables.drug_exposures).toEqual(t.drug_exposures)
  })
})
