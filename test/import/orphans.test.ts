/**
 * Rows about no one: a row naming a person the dataset does not hold (a foreign-key gap of the kind
 * OHDSI's Data Quality Dashboard measures) is left out and counted per table and column with its
 * rate; the import goes on. Past half of the rows read the person file evidently does not go with
 * the rest, and the import is refused; `--strict` refuses any (omop.test.ts, fhir-rules.test.ts).
 */
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { ehrFiles, writeEhrExport } from "../fixtures/fhir/ehr.ts"
import { cdmFiles, writeCdm } from "../fixtures/omop/cdm.ts"
import { datasetDigest, type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tryHcc, tempDataDir } from "../support/server.ts"

type Rows = Array<Array<string | number>>

/** The OMOP fixture with rows for persons 90… that PERSON lacks added to OBSERVATION_PERIOD, CONDITION_OCCURRENCE and MEASUREMENT. */
const omopWithOrphans = (periods: number) => {
  const files = cdmFiles()
  const add = (file: string, rows: (i: number) => Array<string | number>, n: number) => {
    const [header, before] = files[file]!
    files[file] = [header, [...before.map((r) => [...r]), ...Array.from({ length: n }, (_, i) => rows(i))] as Rows]
  }
  add("observation_period.csv", (i) => [100 + i, 90 + i, "2019-01-01", "2025-06-30", 32817], periods)
  const [, conditions] = files["condition_occurrence.csv"]!
  add("condition_occurrence.csv", (i) => [900 + i, 90, ...conditions[0]!.slice(2)], 2)
  const [, measurements] = files["measurement.csv"]!
  add("measurement.csv", (i) => [900 + i, 91, ...measurements[0]!.slice(2)], 3)
  return writeCdm(join(tempDataDir(), "cdm"), files)
}

describe("OMOP: rows naming a person PERSON lacks", () => {
  let summary: Record<string, any>
  let t: Record<string, Table>
  let clean: Record<string, Table>
  beforeAll(() => {
    const dir = tempDataDir()
    summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", omopWithOrphans(5), "--json"]))
    t = tablesOf(dir)
    const other = tempDataDir()
    hcc(other, ["data", "import", "--format", "omop", writeCdm(join(tempDataDir(), "cdm"))])
    clean = tablesOf(other)
  })
  it("are left out and counted per table and column, with their share of the table's rows", () => {
    expect(summary.orphans).toEqual({
      "observation_period.person_id": { rows: 5, rate: Math.round((5 / 6) * 1e4) / 1e4 },
      "measurement.person_id": { rows: 3, rate: 0.75 },
      "condition_occurrence.person_id": { rows: 2, rate: Math.round((2 / 8) * 1e4) / 1e4 }
    })
  })
  it("the rest imports as it would without them", () => {
    for (const table of ["patients", "patient_conditions", "axis_scores", "encounters", "drug_exposures"]) expect(t[table]).toEqual(clean[table])
  })
  it("past half of the rows read, the person file does not go with the rest: refused, nothing written", () => {
    const target = tempDataDir()
    hcc(target, ["data", "generate", "--patients", "200", "--seed", "3"])
    const before = datasetDigest(target)
    const r = tryHcc(target, ["data", "import", "--format", "omop", omopWithOrphans(60)])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/nothing was imported/)
    expect(r.stderr).toMatch(/of \d+ rows read \(\d+\.\d %\) name a person the data does not hold, more than the 50 % an import accepts/)
    expect(r.stderr).toMatch(/observation_period\.person_id: 60 rows/)
    expect(datasetDigest(target)).toBe(before)
  })
  it("--strict: each is a problem at its line", () => {
    const r = tryHcc(tempDataDir(), ["data", "import", "--format", "omop", "--strict", omopWithOrphans(1)])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/observation_period\.csv:3: person_id: person 90 is not in the PERSON table/)
    expect(r.stderr).toMatch(/measurement\.csv:\d+: person_id: person 91 is not in the PERSON table/)
  })
})

describe("OMOP: a person without a year of birth", () => {
  it("has no age, which every cohort needs: left out with all about them, counted, as FHIR's Patient without a birthDate", () => {
    const files = cdmFiles()
    const [header, persons] = files["PERSON.csv"]!
    files["PERSON.csv"] = [header, persons.map((r) => (r[0] === 2 ? r.map((v, i) => (i === 2 ? "" : v)) : [...r]))]
    const dir = tempDataDir()
    const summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", writeCdm(join(tempDataDir(), "cdm"), files), "--json"]))
    expect(tablesOf(dir).source_ids!.filter((s) => s.table_name === "patients").map((s) => s.source_id)).toEqual(["person/1", "person/3", "person/4"])
    expect(summary.left_out["person without a birth date: left out, with all that is about them (every cohort needs an age)"]).toBe(1)
    expect(Object.keys(summary.left_out).some((k) => k.endsWith("about a patient left out: left out"))).toBe(true)
  })
})

describe("FHIR: resources naming a patient the export lacks", () => {
  it("are left out and counted by type and reference; the rest imports", () => {
    const files = ehrFiles()
    const conditions = files["Condition.ndjson"]!
    const orphan = { ...(conditions[0] as object), id: "orphan-1", subject: { reference: "Patient/nobody" } }
    const dir = tempDataDir()
    const summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk"), { ...files, "Condition.ndjson": [...conditions, orphan] }), "--json"]))
    expect(summary.orphans).toEqual({ "Condition.subject": { rows: 1, rate: Math.round((1 / (conditions.length + 1)) * 1e4) / 1e4 } })
    const other = tempDataDir()
    hcc(other, ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk"), files)])
    expect(tablesOf(dir).patient_conditions).toEqual(tablesOf(other).patient_conditions)
  })
})
