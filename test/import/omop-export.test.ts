/**
 * Generated dataset → `hcc data export --format omop` (CSV, and Parquet) → `hcc data import
 * --format omop`: the same dataset (every table but the import's own bookkeeping, and studies that
 * have no implant to come back with), so the README's sample calls give identical answers.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { parse } from "csv-parse/sync"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generatedDataDir, readmeCalls } from "../support/datasets.ts"
import { call, hcc, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"

const csvExport = (dataDir: string) => {
  const out = join(tempDataDir(), "csv")
  hcc(dataDir, ["data", "export", out])
  return Object.fromEntries(readdirSync(out).map((f) => [f, readFileSync(join(out, f), "utf8")]))
}
const rowsOf = (folder: string, table: string) => parse(readFileSync(join(folder, `${table}.csv`), "utf8"), { columns: true }) as Array<Record<string, string>>

let original: string
let cdm: string
let parquet: string
const imported: Record<"csv" | "parquet", string> = { csv: "", parquet: "" }
const summaries: Record<string, Record<string, any>> = {}
let servers: ReadonlyArray<TestServer> = []

beforeAll(async () => {
  original = generatedDataDir(3000, 11)
  cdm = join(tempDataDir(), "cdm")
  parquet = join(tempDataDir(), "cdm-parquet")
  summaries.export = JSON.parse(hcc(original, ["data", "export", "--format", "omop", cdm, "--json"]))
  hcc(original, ["data", "export", "--format", "omop", "--parquet", parquet])
  for (const [kind, folder] of [["csv", cdm], ["parquet", parquet]] as const) {
    imported[kind] = tempDataDir()
    summaries[kind] = JSON.parse(hcc(imported[kind], ["data", "import", "--format", "omop", folder, "--json"]))
  }
  servers = await Promise.all([original, imported.csv, imported.parquet].map((dataDir) => startServer({ dataDir })))
  await Promise.all(servers.map((s) => waitReady(s)))
}, 300_000)

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()))
})

describe("OMOP export", () => {
  it("writes the CDM 5.4 tables with every column in the DDL's order, the vocabulary rows it uses, the surveillance beside", () => {
    const files = readdirSync(cdm).sort()
    expect(files).toEqual([
      "animal_surveillance.csv", "care_site.csv", "cdm_source.csv", "concept.csv", "concept_relationship.csv", "condition_occurrence.csv", "death.csv", "drug_exposure.csv",
      "human_surveillance.csv", "location.csv", "measurement.csv", "observation.csv", "observation_period.csv", "person.csv", "procedure_occurrence.csv", "provider.csv",
      "visit_occurrence.csv", "vocabulary.csv"
    ])
    expect(readFileSync(join(cdm, "person.csv"), "utf8").split("\n")[0]).toBe(
      "person_id,gender_concept_id,year_of_birth,month_of_birth,day_of_birth,birth_datetime,race_concept_id,ethnicity_concept_id,location_id,provider_id,care_site_id,person_source_value,gender_source_value,gender_source_concept_id,race_source_value,race_source_concept_id,ethnicity_source_value,ethnicity_source_concept_id"
    )
    expect(summaries.export!.rows.person).toBe(3000)
    // Every concept a clinical row names is in CONCEPT; the entries map to their standard concepts.
    const concepts = new Map(rowsOf(cdm, "concept").map((c) => [c.concept_id!, c]))
    const t2dm = [...concepts.values()].find((c) => c.vocabulary_id === "HCC condition" && c.concept_code === "type_2_diabetes")!
    expect(Number(t2dm.concept_id)).toBeGreaterThan(2_000_000_000)
    const mapsTo = rowsOf(cdm, "concept_relationship").find((r) => r.concept_id_1 === t2dm.concept_id && r.relationship_id === "Maps to")!
    expect(concepts.get(mapsTo.concept_id_2!)).toMatchObject({ vocabulary_id: "SNOMED", concept_code: "44054006", standard_concept: "S" })
    const condition = rowsOf(cdm, "condition_occurrence").find((c) => c.condition_source_concept_id === t2dm.concept_id)!
    expect(condition.condition_concept_id).toBe(mapsTo.concept_id_2)
    for (const table of ["visit_occurrence", "drug_exposure", "procedure_occurrence"]) {
      for (const row of rowsOf(cdm, table).slice(0, 200)) {
        for (const [column, value] of Object.entries(row)) if (column.endsWith("_concept_id") && !column.endsWith("type_concept_id") && value !== "" && value !== "0") expect(concepts.has(value), `${table}.${column} ${value}`).toBe(true)
      }
    }
    // The CDM requires an end date: an ongoing course ends at as_of, its verbatim end empty.
    const ongoing = rowsOf(cdm, "drug_exposure").find((d) => d.verbatim_end_date === "")!
    expect(ongoing.drug_exposure_end_date).toBe("2026-09-30")
  })

  it("writes Parquet with the CDM's column types", async () => {
    const instance = await DuckDBInstance.create(":memory:")
    const connection = await instance.connect()
    try {
      const reader = await connection.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${join(parquet, "drug_exposure.parquet")}'))`)
      const types = Object.fromEntries(reader.getRows().map((r) => [String(r[0]), String(r[1])]))
      expect(types).toMatchObject({ drug_exposure_id: "BIGINT", drug_exposure_start_date: "DATE", quantity: "DOUBLE", drug_source_value: "VARCHAR" })
      const count = await connection.runAndReadAll(`SELECT count(*) FROM read_parquet('${join(parquet, "measurement.parquet")}')`)
      expect(Number(count.getRows()[0]![0])).toBe(summaries.export!.rows.measurement)
    } finally {
      connection.closeSync()
      instance.closeSync()
    }
    expect(readdirSync(parquet).filter((f) => !f.endsWith(".parquet")).sort()).toEqual(["animal_surveillance.csv", "human_surveillance.csv"])
  })
})

describe("OMOP export → import", () => {
  it("gives back the same tables (ids, codes, regions, studies, adherence, ongoing courses, outcomes, scores), from CSV and from Parquet", () => {
    const a = csvExport(original)
    for (const kind of ["csv", "parquet"] as const) {
      expect(summaries[kind]!.unmapped).toEqual([])
      expect(summaries[kind]!.read.person).toBe(3000)
      const b = csvExport(imported[kind])
      for (const file of Object.keys(a)) {
        if (file === "dataset_info.csv" || file === "source_ids.csv") continue
        if (file === "device_studies.csv") {
          // Studies without an implant have no PROCEDURE_OCCURRENCE to come back with; every other comes back the same.
          const back = new Set(b[file]!.split("\n"))
          const used = new Set(b["device_implants.csv"]!.split("\n").slice(1).map((l) => l.split(",")[3]))
          expect(used.size).toBeGreaterThan(10)
          for (const line of a[file]!.split("\n").slice(1)) if (used.has(line.split(",")[0])) expect(back.has(line), line).toBe(true)
          continue
        }
        expect(b[file], `${kind}: ${file}`).toBe(a[file])
      }
    }
  })

  it("the README's sample calls give identical answers", async () => {
    const calls = readmeCalls()
    let answered = 0
    for (const [path, body] of calls) {
      const [a, ...others] = await Promise.all(servers.map((s) => call(s, path, { body })))
      const ja = (await a!.json()) as Record<string, unknown>
      delete ja.request_id
      for (const b of others) {
        expect(b!.status, path).toBe(a!.status)
        const jb = (await b!.json()) as Record<string, unknown>
        delete jb.request_id
        expect(jb, path).toEqual(ja)
      }
      if (a!.status === 200) answered++
    }
    expect(answered).toBeGreaterThanOrEqual(6)
  })
})
