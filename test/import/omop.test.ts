/**
 * The OMOP CDM 5.4 import: every mapping rule of docs/data.md on a small OHDSI-style folder
 * (test/fixtures/omop/cdm.ts), bad input that imports nothing, and a whole population in OMOP
 * form answering all seven endpoints.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cdmFiles, writeCdm } from "../fixtures/omop/cdm.ts"
import { omopFromExport } from "../fixtures/omop/fromDataset.ts"
import { call, hcc, tryHcc, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"
import { datasetDigest, readmeCalls, type Table, tablesOf } from "../support/datasets.ts"
let t: Record<string, Table>
let summary: Record<string, any>

beforeAll(() => {
  const dir = tempDataDir()
  summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", writeCdm(join(tempDataDir(), "cdm")), "--json"]))
  t = tablesOf(dir)
})

describe("OMOP import: the rules", () => {
  it("reads the tables in any case, CSV and Athena's tab-separated CONCEPT; as_of is the latest date (an observation period's end)", () => {
    expect(summary.read).toMatchObject({ concept: 22, person: 4, visit_occurrence: 4, condition_occurrence: 6, drug_exposure: 4 })
    expect(summary.as_of).toBe("2025-06-30")
  })
  it("persons: gender concepts → sex (other and unknown kept), year of birth, region from LOCATION, death from DEATH, person_id kept", () => {
    expect(t.patients!.map((p) => [p.id, p.birth_year, p.sex, p.region, p.death_date])).toEqual([
      ["1", "1960", "female", "northeast_us", ""],
      ["2", "1955", "male", "western_europe", ""],
      ["3", "1990", "other", "unknown_region", ""],
      ["4", "1948", "unknown", "unknown_region", "2025-06-01"]
    ])
    expect(t.source_ids!.filter((s) => s.table_name === "patients").map((s) => s.source_id)).toEqual(["person/1", "person/2", "person/3", "person/4"])
  })
  it("conditions: standard SNOMED concepts, and a non-standard ICD-10-CM source concept through its Maps to; unmapped kept under their names", () => {
    const of = (p: string) => t.patient_conditions!.filter((c) => c.patient_id === p).map((c) => c.condition)
    expect(of("1")).toEqual(["acute_bronchitis", "hypertension", "type_2_diabetes"])
    expect(of("2")).toContain("type_2_diabetes")
    expect(summary.unmapped.map((u: { code: string }) => u.code)).toContain("acute_bronchitis")
  })
  it("conditions: a possible diagnosis (condition_status_concept_id 32899) is left out and counted", () => {
    expect(t.patient_conditions!.filter((c) => c.patient_id === "3").map((c) => c.condition)).not.toContain("type_2_diabetes")
    expect(summary.left_out["CONDITION_OCCURRENCE with condition_status_concept_id 32899 (Preliminary diagnosis): left out"]).toBe(1)
  })
  it("visits: Visit concepts → outpatient, emergency, inpatient; other visits left out", () => {
    expect(t.encounters!.map((e) => [e.patient_id, e.kind, e.start_date, e.end_date])).toEqual([
      ["1", "outpatient", "2024-01-10", "2024-01-10"],
      ["1", "emergency", "2024-03-02", "2024-03-02"],
      ["2", "inpatient", "2024-05-01", "2024-05-06"]
    ])
    expect(summary.left_out["visit_occurrence of class OMOP4822036: not a visit the analytics count, left out"]).toBe(1)
  })
  it("drugs: clinical drugs to their ingredients (CONCEPT_ANCESTOR); dispensings (pharmacy claims) give PDC, none leaves adherence unknown", () => {
    expect(t.drug_exposures!.map((d) => [d.patient_id, d.drug, d.start_date, d.end_date, d.adherence])).toEqual([
      ["1", "metformin", "2024-01-01", "2024-12-31", String(Math.round((120 / 366) * 1e4) / 1e4)],
      ["2", "lisinopril", "2024-01-01", "2024-06-29", ""]
    ])
  })
  it("the axis model on MEASUREMENT and OBSERVATION (LOINC instruments, answer concepts), direct HCC axis concepts winning", () => {
    expect(t.axis_scores!.map((s) => [s.patient_id, s.month, s.er])).toEqual([["1", "2024-01", "6.7"], ["1", "2024-02", "8"], ["2", "2024-03", "0"]])
    expect(summary.axis_coverage.ER).toBe(0.5)
  })
  it("implants from PROCEDURE_OCCURRENCE and DEVICE_EXPOSURE, studies the care site (the provider's, or the visit's); revisions and device infections within a year", () => {
    expect(t.device_implants!.map((i) => [i.patient_id, i.device, i.study_id, i.implant_date])).toEqual([["1", "knee_implant", "10", "2024-01-15"], ["2", "cochlear_implant", "20", "2024-05-02"]])
    expect(t.device_studies!.map((s) => [s.id, s.region])).toEqual([["10", "northeast_us"], ["20", "western_europe"]])
    const outcome = (implant: string, metric: string) => t.device_outcomes!.find((o) => o.implant_id === implant && o.metric === metric)!.value
    expect([outcome("1", "revision_rate"), outcome("2", "infection_rate"), outcome("2", "complication_rate"), outcome("1", "infection_rate")]).toEqual(["1", "1", "1", "0"])
    expect(t.source_ids!.find((s) => s.table_name === "device_studies" && s.id === "10")!.source_id).toBe("care_site/10")
  })
  it("adverse events from adverse-reaction OBSERVATION rows: the drug its value, the reaction its qualifier", () => {
    expect(t.adverse_events!.map((e) => [e.patient_id, e.drug, e.event_type, e.date])).toEqual([["3", "lisinopril", "nausea", "2024-04-10"]])
  })
})

describe("OMOP import: bad input imports nothing", () => {
  let target: string
  let before: string
  beforeAll(() => {
    target = tempDataDir()
    hcc(target, ["data", "generate", "--patients", "200", "--seed", "3"])
    before = datasetDigest(target)
  })
  const variant = (file: string, edit: (rows: Array<Array<string | number>>) => void) => {
    const files = cdmFiles()
    const [header, rows] = files[file]!
    const copy = rows.map((r) => [...r])
    edit(copy)
    return writeCdm(join(tempDataDir(), "bad"), { ...files, [file]: [header, copy] })
  }
  it.each([
    ["a person not in PERSON", "condition_occurrence.csv", (r: Array<Array<string | number>>) => (r[0]![1] = 99), /condition_occurrence\.csv:2: person_id: person 99 is not in the PERSON table/],
    ["an unparseable date", "visit_occurrence.csv", (r: Array<Array<string | number>>) => (r[2]![3] = "2024-02-30"), /visit_occurrence\.csv:4: visit_start_date: '2024-02-30' is not a date/],
    ["an unparseable quantity", "measurement.csv", (r: Array<Array<string | number>>) => (r[0]![5] = "nine"), /measurement\.csv:2: value_as_number: 'nine' is not a number/],
    ["a year of birth that is not a year", "PERSON.csv", (r: Array<Array<string | number>>) => (r[1]![2] = "19x5"), /PERSON\.csv:3: year_of_birth: '19x5' is not a year/]
  ])("%s", (_, file, edit, message) => {
    // --strict: a row naming a person PERSON lacks is a problem too (else it is left out and counted: orphans.test.ts).
    const r = tryHcc(target, ["data", "import", "--format", "omop", "--strict", variant(file, edit)])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(message)
    expect(datasetDigest(target)).toBe(before)
  })
  it("a folder without PERSON", () => {
    const files = cdmFiles()
    delete (files as Record<string, unknown>)["PERSON.csv"]
    const r = tryHcc(target, ["data", "import", "--format", "omop", writeCdm(join(tempDataDir(), "bad"), files)])
    expect(r.stderr).toMatch(/person\.csv: missing \(required/)
  })
})

/**
 * The same folder as OHDSI's ETL-Synthea writes its facts: every drug row a pharmacy claim (type
 * 32869) whose days_supply is its own span, outpatient visits as Office Visit 581477 (below
 * Outpatient Visit in CONCEPT_ANCESTOR), one person observed until the ETL's end of time
 * (2099-12-31), social-history findings as conditions.
 */
const asEtlSynthea = (from: string): string => {
  const to = join(tempDataDir(), "etl-synthea")
  mkdirSync(to)
  for (const file of readdirSync(from)) copyFileSync(join(from, file), join(to, file))
  const rows = (file: string) => readFileSync(join(from, file), "utf8").trim().split("\n").map((l) => l.split(","))
  const write = (file: string, table: ReadonlyArray<ReadonlyArray<string | number>>) => writeFileSync(join(to, file), table.map((r) => r.join(",")).join("\n") + "\n")
  const day = (d: string) => Date.parse(`${d}T00:00:00Z`) / 86_400_000
  const [drugHeader, ...drugs] = rows("drug_exposure.csv")
  write("drug_exposure.csv", [[...drugHeader!.slice(0, 5), "drug_type_concept_id", "days_supply"], ...drugs.map((d) => [...d.slice(0, 5), 32869, d[4] === "" ? 0 : day(d[4]!) - day(d[3]!)])])
  const [visitHeader, ...visits] = rows("visit_occurrence.csv")
  write("visit_occurrence.csv", [visitHeader!, ...visits.map((v) => (v[2] === "9202" ? [v[0]!, v[1]!, 581477, v[3]!, v[4]!] : v))])
  writeFileSync(join(to, "concept.tsv"), readFileSync(join(from, "concept.tsv"), "utf8") +
    ["581477\tOffice Visit\tVisit\tVisit\tVisit\tS\tOV\t19700101\t20991231\t", "4115276\tEmployment (finding)\tObservation\tSNOMED\tClinical Finding\tS\t160903007\t19700101\t20991231\t"].join("\n") + "\n")
  write("concept_ancestor.csv", [["ancestor_concept_id", "descendant_concept_id", "min_levels_of_separation", "max_levels_of_separation"], [9202, 581477, 1, 1]])
  const [, ...persons] = rows("person.csv")
  write("observation_period.csv", [["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date"], [1, persons[0]![0]!, "2020-01-01", "2099-12-31"]])
  const [conditionHeader, ...conditions] = rows("condition_occurrence.csv")
  write("condition_occurrence.csv", [conditionHeader!, ...conditions, [conditions.length + 1, persons[1]![0]!, 4115276, "2025-01-06"], [conditions.length + 2, persons[2]![0]!, 4115276, "2025-02-06"]])
  return to
}

describe("OMOP import: a whole population", () => {
  let server: TestServer
  let etl: TestServer
  let etlSummary: Record<string, any>
  beforeAll(async () => {
    const generated = tempDataDir()
    hcc(generated, ["data", "generate", "--patients", "3000", "--seed", "13"])
    const csv = join(tempDataDir(), "csv")
    hcc(generated, ["data", "export", csv])
    const dataDir = tempDataDir()
    const omop = omopFromExport(csv, join(tempDataDir(), "omop"))
    hcc(dataDir, ["data", "import", "--format", "omop", omop, "--as-of", "2026-09-30"])
    const etlDir = tempDataDir()
    etlSummary = JSON.parse(hcc(etlDir, ["data", "import", "--format", "omop", asEtlSynthea(omop), "--json"]))
    const started = await Promise.all([dataDir, etlDir].map((d) => startServer({ dataDir: d })))
    server = started[0]!
    etl = started[1]!
    await Promise.all(started.map((s) => waitReady(s)))
  }, 420_000)
  afterAll(async () => {
    await Promise.all([server, etl].map((s) => s?.stop()))
  })
  it("answers all seven endpoints from the imported data", async () => {
    for (const [path, body] of readmeCalls()) {
      const sent = path === "/v1/drug-outcomes" ? { ...(body as object), population_size: "minimum_50" } : body
      const r = await call(server, path, { body: sent })
      expect(r.status, `${path}: ${await r.clone().text()}`).toBe(200)
    }
    const catalog = (await (await call(server, "/v1/catalog")).json()) as Record<string, any>
    expect(catalog.dataset).toMatchObject({ source: "imported", format: "omop", patients: 3000 })
    expect(catalog.standard_codes.condition.hypertension).toBe("snomed:38341003")
  })
  it("names a condition by SNOMED CT code or by the service's code for the same cohort", async () => {
    const ask = async (condition: string) =>
      (await (await call(server, "/v1/population", { body: { cohort_definition: { conditions: [condition] }, analysis_type: "trend" } })).json()) as Record<string, unknown>
    const byCode = await ask("hypertension")
    expect(byCode.cohort_size).toBeGreaterThan(100)
    expect(await ask("snomed:38341003")).toEqual(byCode)
    expect(await ask("icd10cm:I10")).toEqual(byCode)
  })
  it("written as ETL-Synthea writes it: the same answers to the README's calls; the end of time and social history counted, not taken", async () => {
    expect(etlSummary.as_of).toBe("2026-09-30")
    expect(etlSummary.read.drug_exposure).toBeGreaterThan(0)
    expect(Object.entries(etlSummary.left_out).find(([k]) => k.startsWith("dates after the day of the import"))?.[1]).toBe(1)
    expect(Object.entries(etlSummary.left_out).filter(([k]) => /social history/i.test(k)).map(([, n]) => n)).toEqual([2])
    for (const [path, body] of readmeCalls()) {
      const sent = path === "/v1/drug-outcomes" ? { ...(body as object), population_size: "minimum_50" } : body
      const [a, b] = await Promise.all([server, etl].map(async (s) => (await call(s, path, { body: sent })).json()))
      expect(b, path).toEqual(a)
    }
  })
})
