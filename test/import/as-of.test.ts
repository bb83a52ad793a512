/**
 * as_of, the dataset's "now", is the latest date in the data not after the day of the import: an
 * ETL's end of time (OMOP 2099-12-31) or a mistyped year never moves it; such dates are counted.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"

describe("as_of", () => {
  it("an OMOP end of time (2099-12-31) is not taken for as_of: the latest date up to the day of the import is, and the others are counted", () => {
    const cdm = join(tempDataDir(), "cdm")
    mkdirSync(cdm, { recursive: true })
    writeFileSync(join(cdm, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960], [2, 8507, 1971]]))
    writeFileSync(join(cdm, "observation_period.csv"), csv([["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"], [1, 1, "2020-01-01", "2099-12-31", 32817], [2, 2, "2021-01-01", "2024-05-20", 32817]]))
    writeFileSync(join(cdm, "visit_occurrence.csv"), csv([["visit_occurrence_id", "person_id", "visit_concept_id", "visit_start_date", "visit_end_date"], [1, 1, 9202, "2024-05-01", "2024-05-01"], [2, 2, 9202, "2204-05-02", "2204-05-02"]]))
    const summary = JSON.parse(hcc(tempDataDir(), ["data", "import", "--format", "omop", cdm, "--json"])) as Record<string, any>
    expect(summary.as_of).toBe("2024-05-20")
    expect(summary.left_out["dates after the day of the import (an end of time such as 2099-12-31, a mistyped year): not taken for as_of"]).toBe(2)
  })
})
