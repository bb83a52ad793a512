/**
 * Dates judged against the data, not the calendar: research databases are commonly de-identified by
 * shifting every date a century or two ahead (years of birth 2102–2149). Such a dataset imports, its
 * as_of taken from its own latest event (never from an export or release date that lies before all
 * of it, nor from an end of time); a birth after the death stays a problem.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Table, tablesOf } from "../support/datasets.ts"
import { call, hcc, tryHcc, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"

const shiftedCdm = (persons: ReadonlyArray<ReadonlyArray<string | number>>) => {
  const cdm = join(tempDataDir(), "cdm")
  mkdirSync(cdm, { recursive: true })
  writeFileSync(join(cdm, "cdm_source.csv"), csv([["cdm_source_name", "source_release_date", "cdm_version"], ["shifted hospital", "2023-05-01", "v5.4"]]))
  writeFileSync(join(cdm, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], ...persons]))
  writeFileSync(join(cdm, "death.csv"), csv([["person_id", "death_date"], [3, "2181-02-03"]]))
  writeFileSync(join(cdm, "observation_period.csv"), csv([
    ["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"],
    [1, 1, "2150-01-01", "2178-06-30", 32817],
    [2, 2, "2160-01-01", "2999-12-31", 32817]
  ]))
  writeFileSync(join(cdm, "visit_occurrence.csv"), csv([
    ["visit_occurrence_id", "person_id", "visit_concept_id", "visit_start_date", "visit_end_date"],
    [1, 1, 9202, "2150-03-01", "2150-03-01"],
    [2, 2, 9201, "2178-11-20", "2178-11-25"],
    [3, 3, 9203, "2180-12-24", "2180-12-24"]
  ]))
  return cdm
}

describe("a dataset whose dates are shifted into the future", () => {
  let summary: Record<string, any>
  let t: Record<string, Table>
  let dir: string
  let server: TestServer | undefined
  afterAll(async () => {
    await server?.stop()
  })
  beforeAll(() => {
    dir = tempDataDir()
    summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", shiftedCdm([[1, 8532, 2102], [2, 8507, 2130], [3, 8532, 2149]]), "--json"]))
    t = tablesOf(dir)
  })
  it("imports, years of birth 2102–2149 kept", () => {
    expect(t.patients!.map((p) => [p.id, p.birth_year, p.death_date])).toEqual([["1", "2102", ""], ["2", "2130", ""], ["3", "2149", "2181-02-03"]])
    expect(t.encounters!.map((e) => [e.patient_id, e.kind, e.start_date, e.end_date])).toEqual([
      ["1", "outpatient", "2150-03-01", "2150-03-01"],
      ["2", "inpatient", "2178-11-20", "2178-11-25"],
      ["3", "emergency", "2180-12-24", "2180-12-24"]
    ])
  })
  it("as_of is the data's latest event (the death), not the release date before it all nor the end of time", () => {
    expect(summary.as_of).toBe("2181-02-03")
    expect(t.dataset_info!.find((r) => r.key === "as_of")!.value).toBe("2181-02-03")
    expect(summary.left_out["CDM_SOURCE.source_release_date before the data's (shifted) dates: not taken for as_of"]).toBe(1)
    expect(summary.left_out["event dates after the day of the import (the dataset's dates are shifted, as de-identification does): as_of from the data's own latest event"]).toBeGreaterThan(0)
  })
  it("the service answers over it: ages from the shifted as_of, the catalog's dataset dated by it", async () => {
    server = await startServer({ dataDir: dir })
    await waitReady(server)
    const catalog = (await (await call(server, "/v1/catalog")).json()) as Record<string, any>
    expect(catalog.dataset.as_of).toBe("2181-02-03")
    // Ages on the as_of's year: 79, 51 and 32.
    const r = await call(server, "/v1/population", { body: { cohort_definition: { age_range: "70-90" }, analysis_type: "trend" } })
    expect([r.status, ((await r.json()) as Record<string, any>).code]).toEqual([422, "cohort_too_small"])
  })
  it("a birth after the death is still a problem", () => {
    const r = tryHcc(tempDataDir(), ["data", "import", "--format", "omop", shiftedCdm([[1, 8532, 2102], [2, 8507, 2130], [3, 8532, 2182]])])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/person\.csv:4: year_of_birth: born in 2182, after the death on 2181-02-03/)
  })
})
