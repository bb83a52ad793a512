/**
 * as_of, the dataset's "now": `--as-of`, else OMOP's CDM_SOURCE.source_release_date or the FHIR Bulk
 * manifest's transactionTime, else the latest
 * date in the data not after the day of the import: an ETL's end of time (OMOP 2099-12-31) or a
 * mistyped year never moves it; such dates are counted.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ehrFiles, writeEhrExport } from "../fixtures/fhir/ehr.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"

/** A small CDM folder whose latest date is 2024-05-20, with a CDM_SOURCE row when `released` is given. */
const smallCdm = (released?: string) => {
  const cdm = join(tempDataDir(), "cdm")
  mkdirSync(cdm, { recursive: true })
  writeFileSync(join(cdm, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960], [2, 8507, 1971]]))
  writeFileSync(join(cdm, "observation_period.csv"), csv([["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"], [1, 1, "2020-01-01", "2024-05-20", 32817], [2, 2, "2021-01-01", "2024-04-30", 32817]]))
  writeFileSync(join(cdm, "visit_occurrence.csv"), csv([["visit_occurrence_id", "person_id", "visit_concept_id", "visit_start_date", "visit_end_date"], [1, 1, 9202, "2024-03-01", "2024-03-01"], [2, 2, 9202, "2024-05-02", "2024-05-02"]]))
  if (released !== undefined) {
    writeFileSync(join(cdm, "CDM_SOURCE.csv"), csv([["cdm_source_name", "cdm_source_abbreviation", "cdm_holder", "source_release_date", "cdm_release_date", "cdm_version"], ["Synthea", "SYN", "OHDSI", released, "2024-07-01", "v5.4"]]))
  }
  return cdm
}

const importOmop = (cdm: string, ...args: ReadonlyArray<string>) => JSON.parse(hcc(tempDataDir(), ["data", "import", "--format", "omop", cdm, "--json", ...args])) as Record<string, any>

describe("as_of", () => {
  it("is OMOP's CDM_SOURCE.source_release_date when the folder has one, and --as-of when given", () => {
    expect(importOmop(smallCdm()).as_of).toBe("2024-05-20")
    expect(importOmop(smallCdm("2024-04-30")).as_of).toBe("2024-04-30")
    expect(importOmop(smallCdm("2024-04-30"), "--as-of", "2024-03-31").as_of).toBe("2024-03-31")
  })

  it("a CDM_SOURCE date after the day of the import, or not a date, is counted and not taken", () => {
    const later = importOmop(smallCdm("2199-01-01"))
    expect(later.as_of).toBe("2024-05-20")
    expect(later.left_out["CDM_SOURCE.source_release_date after the day of the import: not taken for as_of"]).toBe(1)
    const unreadable = importOmop(smallCdm("soon"))
    expect(unreadable.as_of).toBe("2024-05-20")
    expect(unreadable.left_out["CDM_SOURCE.source_release_date not a date: not taken for as_of"]).toBe(1)
  })

  it("is the day of a FHIR Bulk manifest's transactionTime when the client saved the manifest beside the files", () => {
    const bulk = writeEhrExport(join(tempDataDir(), "bulk"), ehrFiles())
    const importFhir = () => JSON.parse(hcc(tempDataDir(), ["data", "import", "--format", "fhir", bulk, "--json"])) as Record<string, any>
    const fromData = importFhir().as_of as string
    const manifest = (transactionTime: unknown) =>
      writeFileSync(join(bulk, "manifest.json"), JSON.stringify({ transactionTime, request: "https://ehr.example/fhir/Group/g1/$export", requiresAccessToken: true, output: [{ type: "Patient", url: "https://ehr.example/out/Patient.ndjson" }], error: [] }))
    manifest("2024-01-15T22:10:00Z")
    expect(fromData).not.toBe("2024-01-15")
    expect(importFhir().as_of).toBe("2024-01-15")
    manifest("2199-01-01T00:00:00Z")
    const later = importFhir()
    expect(later.as_of).toBe(fromData)
    expect(later.left_out["manifest.json: the manifest's transactionTime is after the day of the import: not taken for as_of"]).toBe(1)
  })

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
