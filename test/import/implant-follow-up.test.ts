/**
 * An implant's rate outcomes follow the patient for a year, and only while they can be followed:
 * a patient who died, or whose last OMOP observation period ended, within the year without a
 * revision has no known revision outcome (left out and counted, never a 0); one followed to the end
 * of the year, or to as_of, without one has a 0; a revision within the followed time is a 1.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"
const KNEE = 4203771
const REVISION = 2109089

/** Person, implant date, death date, observation period end, revision date ("" none). */
const PERSONS: ReadonlyArray<readonly [number, string, string, string, string]> = [
  [1, "2023-01-10", "2023-03-01", "2023-03-01", ""], // died within the year, no revision: unknown
  [2, "2023-01-10", "", "2023-04-01", ""], // left observation within the year: unknown
  [3, "2023-01-10", "", "2024-12-31", ""], // followed a whole year: 0
  [4, "2023-01-10", "2023-06-01", "2023-06-01", "2023-05-01"], // revised, then died: 1
  [5, "2024-10-01", "", "2024-12-31", ""] // implanted three months before as_of: its outcome so far, 0
]

const cdm = () => {
  const dir = join(tempDataDir(), "cdm")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], ...PERSONS.map(([p]) => [p, 8532, 1950])]))
  writeFileSync(join(dir, "death.csv"), csv([["person_id", "death_date", "death_type_concept_id"], ...PERSONS.filter((r) => r[2] !== "").map(([p, , death]) => [p, death, 32817])]))
  writeFileSync(join(dir, "observation_period.csv"), csv([
    ["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"],
    ...PERSONS.map(([p, , , end]) => [p, p, "2020-01-01", end, 32817])
  ]))
  writeFileSync(join(dir, "procedure_occurrence.csv"), csv([
    ["procedure_occurrence_id", "person_id", "procedure_concept_id", "procedure_date", "procedure_type_concept_id"],
    ...PERSONS.map(([p, implanted]) => [p, p, KNEE, implanted, 32817]),
    ...PERSONS.filter((r) => r[4] !== "").map(([p, , , , revised]) => [100 + p, p, REVISION, revised, 32817])
  ]))
  writeFileSync(join(dir, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason"],
    [KNEE, "Total knee replacement", "Procedure", "SNOMED", "Procedure", "S", "609588000", "1970-01-01", "2099-12-31", ""],
    [REVISION, "Revision of total knee arthroplasty", "Procedure", "CPT4", "CPT4", "S", "27487", "1970-01-01", "2099-12-31", ""]
  ]))
  return dir
}

describe("implant follow-up", () => {
  it("ends at death or the end of observation: lost patients without the event have no revision outcome; the rest have 0 or 1", () => {
    const data = tempDataDir()
    const summary = JSON.parse(hcc(data, ["data", "import", "--format", "omop", cdm(), "--as-of", "2024-12-31", "--json"])) as Record<string, any>
    const t = tablesOf(data)
    const implantOf = new Map(t["device_implants"]!.map((i) => [i["patient_id"], i["id"]]))
    const revision = (person: number) => t["device_outcomes"]!.find((o) => o["implant_id"] === implantOf.get(String(person)) && o["metric"] === "revision_rate")?.["value"]
    expect(PERSONS.map(([p]) => revision(p))).toEqual([undefined, undefined, "0", "1", "0"])
    expect(summary.left_out["implant whose patient died or left observation within 365 days, without a revision: revision_rate unknown, left out"]).toBe(2)
  })
})
