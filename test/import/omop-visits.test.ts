/**
 * OMOP visits beyond the four top visit concepts: a visit concept is the kind of the top visit
 * concept CONCEPT_ANCESTOR says it descends from (an office visit → Outpatient Visit, a place of
 * service "Emergency Room - Hospital" → Emergency Room Visit); Office Visit 581477 and Telehealth
 * 5083 are outpatient without the table too; a visit concept nothing says anything of is left out
 * and counted.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"

/** Visit concept ids by visit id: 1 office visit, 2 an ER place of service, 3 telehealth, 4 an unknown concept, 5 an outpatient visit. */
const VISITS = [581477, 8870, 5083, 4_000_001, 9202]

const cdm = (withAncestors: boolean) => {
  const dir = join(tempDataDir(), "cdm")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960]]))
  writeFileSync(join(dir, "visit_occurrence.csv"), csv([["visit_occurrence_id", "person_id", "visit_concept_id", "visit_start_date", "visit_end_date"], ...VISITS.map((c, i) => [i + 1, 1, c, `2024-0${i + 1}-10`, `2024-0${i + 1}-10`])]))
  writeFileSync(join(dir, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason"],
    [9202, "Outpatient Visit", "Visit", "Visit", "Visit", "S", "OP", "1970-01-01", "2099-12-31", ""],
    [9203, "Emergency Room Visit", "Visit", "Visit", "Visit", "S", "ER", "1970-01-01", "2099-12-31", ""],
    [581477, "Office Visit", "Visit", "Visit", "Visit", "S", "OV", "1970-01-01", "2099-12-31", ""],
    [8870, "Emergency Room - Hospital", "Visit", "CMS Place of Service", "Visit", "S", "23", "1970-01-01", "2099-12-31", ""],
    [5083, "Telehealth", "Visit", "CMS Place of Service", "Visit", "S", "02", "1970-01-01", "2099-12-31", ""]
  ]))
  if (withAncestors) {
    writeFileSync(join(dir, "concept_ancestor.csv"), csv([
      ["ancestor_concept_id", "descendant_concept_id", "min_levels_of_separation", "max_levels_of_separation"],
      [9202, 581477, 1, 1],
      [9203, 8870, 1, 1],
      [9202, 9202, 0, 0]
    ]))
  }
  return dir
}

const kinds = (withAncestors: boolean) => {
  const data = tempDataDir()
  const summary = JSON.parse(hcc(data, ["data", "import", "--format", "omop", cdm(withAncestors), "--json"])) as Record<string, any>
  return { summary, kinds: tablesOf(data)["encounters"]!.map((e) => [e["start_date"], e["kind"]]) }
}

describe("OMOP visit concepts", () => {
  it("a visit concept is the kind of the top visit concept it descends from (CONCEPT_ANCESTOR)", () => {
    const { kinds: k, summary } = kinds(true)
    expect(k).toEqual([["2024-01-10", "outpatient"], ["2024-02-10", "emergency"], ["2024-03-10", "outpatient"], ["2024-05-10", "outpatient"]])
    expect(Object.keys(summary.left_out).some((note) => note.includes("4000001"))).toBe(true)
  })

  it("without CONCEPT_ANCESTOR, Office Visit and Telehealth are still outpatient; a place of service the map does not name is left out", () => {
    const { kinds: k } = kinds(false)
    expect(k).toEqual([["2024-01-10", "outpatient"], ["2024-03-10", "outpatient"], ["2024-05-10", "outpatient"]])
  })
})
