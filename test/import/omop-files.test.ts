/**
 * OMOP files in two shapes real writers ship: OHDSI's ETL-CMS (the CMS synthetic Medicare claims,
 * SynPUF, in CDM 5.2 and 5.3) writes tab- or comma-separated files without a header row, the columns
 * in the DDL order of the CDM version; pandas and Arrow write a Parquet column with no value as
 * BOOLEAN or INTEGER. Each imports the dataset its twin (the same rows with a header row, the same
 * tables as CSV) gives, with the values asserted; a file that cannot be read is one problem naming
 * it (and the column at fault), in plain words.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { beforeAll, describe, expect, it } from "vitest"
import { C, cdmFiles, writeCdm } from "../fixtures/omop/cdm.ts"
import { eachCdmTable } from "../fixtures/omop/duckdbTables.ts"
import { datasetDigest, type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tryHcc, tempDataDir } from "../support/server.ts"

type Row = ReadonlyArray<string | number>
const text = (rows: ReadonlyArray<Row>, delimiter: string) => rows.map((r) => r.join(delimiter)).join("\n") + "\n"

/**
 * The columns of CDM 5.3 (the v5.3.1 DDL, OHDSI CommonDataModel `OMOP_CDM_v5_3_1.csv`) and 5.4
 * (`inst/ddl/5.4`) of the tables written without a header, in DDL order: the header of each twin.
 */
const PERSON = ["person_id", "gender_concept_id", "year_of_birth", "month_of_birth", "day_of_birth", "birth_datetime", "race_concept_id", "ethnicity_concept_id",
  "location_id", "provider_id", "care_site_id", "person_source_value", "gender_source_value", "gender_source_concept_id", "race_source_value",
  "race_source_concept_id", "ethnicity_source_value", "ethnicity_source_concept_id"]
const COLUMNS_53: Record<string, ReadonlyArray<string>> = {
  person: PERSON,
  observation_period: ["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"],
  visit_occurrence: ["visit_occurrence_id", "person_id", "visit_concept_id", "visit_start_date", "visit_start_datetime", "visit_end_date", "visit_end_datetime",
    "visit_type_concept_id", "provider_id", "care_site_id", "visit_source_value", "visit_source_concept_id", "admitting_source_concept_id", "admitting_source_value",
    "discharge_to_concept_id", "discharge_to_source_value", "preceding_visit_occurrence_id"],
  condition_occurrence: ["condition_occurrence_id", "person_id", "condition_concept_id", "condition_start_date", "condition_start_datetime", "condition_end_date",
    "condition_end_datetime", "condition_type_concept_id", "stop_reason", "provider_id", "visit_occurrence_id", "visit_detail_id", "condition_source_value",
    "condition_source_concept_id", "condition_status_source_value", "condition_status_concept_id"],
  drug_exposure: ["drug_exposure_id", "person_id", "drug_concept_id", "drug_exposure_start_date", "drug_exposure_start_datetime", "drug_exposure_end_date",
    "drug_exposure_end_datetime", "verbatim_end_date", "drug_type_concept_id", "stop_reason", "refills", "quantity", "days_supply", "sig", "route_concept_id",
    "lot_number", "provider_id", "visit_occurrence_id", "visit_detail_id", "drug_source_value", "drug_source_concept_id", "route_source_value", "dose_unit_source_value"]
}
const CONDITION_54 = ["condition_occurrence_id", "person_id", "condition_concept_id", "condition_start_date", "condition_start_datetime", "condition_end_date",
  "condition_end_datetime", "condition_type_concept_id", "condition_status_concept_id", "stop_reason", "provider_id", "visit_occurrence_id", "visit_detail_id",
  "condition_source_value", "condition_source_concept_id", "condition_status_source_value"]

/** SynPUF-like rows in CDM 5.3 order (ETL-CMS: ICD-9-CM source codes, V codes among them; Part D fills of 30 days; empty trailing fields). */
const SYNPUF: Record<string, ReadonlyArray<Row>> = {
  person: [
    [1, 8507, 1923, 5, 1, "", 8527, 38003564, 1, "", "", "00013D2EFD8E45D1", 1, "", 1, "", 2, ""],
    [2, 8532, 1943, 1, 1, "", 8516, 38003564, 2, "", "", "00016F745862898F", 2, "", 2, "", 2, ""],
    [3, 8532, 1936, 9, 1, "", 8527, 38003564, 3, "", "", "0001FDD721E223DC", 2, "", 1, "", 2, ""]
  ],
  observation_period: [[1, 1, "2008-01-01", "2010-12-31", 44814722], [2, 2, "2008-01-01", "2010-12-31", 44814722], [3, 3, "2008-01-01", "2010-12-31", 44814722]],
  visit_occurrence: [
    [1, 1, C.outpatient, "2009-03-12", "", "2009-03-12", "", 44818517, "", "", "542192281063886", 0, "", "", "", "", ""],
    [2, 1, C.inpatient, "2009-06-02", "", "2009-06-08", "", 44818517, "", "", "196661176988405", 0, "", "", "", "", ""],
    [3, 2, C.outpatient, "2010-01-15", "", "2010-01-15", "", 44818517, "", "", "542922281284422", 0, "", "", "", "", ""]
  ],
  condition_occurrence: [
    [1, 1, C.t2dm, "2009-03-12", "", "2009-03-12", "", 38000230, "", "", 1, "", "25000", 0, "", ""],
    [2, 1, C.hypertension, "2009-06-02", "", "2009-06-08", "", 38000200, "", "", 2, "", "4019", 0, "", ""],
    [3, 2, C.bronchitis, "2010-01-15", "", "2010-01-15", "", 38000230, "", "", 3, "", "4660", 0, "", ""],
    [4, 2, 0, "2010-01-15", "", "2010-01-15", "", 38000230, "", "", 3, "", "V5869", 0, "", ""]
  ],
  drug_exposure: [
    [1, 1, C.metforminEr, "2009-04-01", "", "2009-04-30", "", "", 38000175, "", 0, 60, 30, "", 0, "", "", "", "", "00093105801", 0, "", ""],
    [2, 1, C.metforminEr, "2009-05-01", "", "2009-05-30", "", "", 38000175, "", 0, 60, 30, "", 0, "", "", "", "", "00093105801", 0, "", ""],
    [3, 2, C.lisinoprilTab, "2010-01-20", "", "2010-02-18", "", "", 38000175, "", 0, 30, 30, "", 0, "", "", "", "", "00093111101", 0, "", ""]
  ]
}

/** The vocabulary as Athena ships it (tab-separated, with a header row), as SynPUF users download it beside the data. */
const vocabulary = (folder: string) => {
  const files = cdmFiles()
  return writeCdm(folder, { "CONCEPT.csv": files["CONCEPT.csv"]!, "CONCEPT_RELATIONSHIP.csv": files["CONCEPT_RELATIONSHIP.csv"]!, "CONCEPT_ANCESTOR.csv": files["CONCEPT_ANCESTOR.csv"]! })
}

const importOf = (folder: string) => {
  const dataDir = tempDataDir()
  const summary = JSON.parse(hcc(dataDir, ["data", "import", "--format", "omop", folder, "--json"])) as { read: Record<string, number>; left_out: Record<string, number>; as_of: string }
  return { summary, dataDir, tables: tablesOf(dataDir), digest: datasetDigest(dataDir) }
}

/** An import expected to be refused: its problem (the `--json` error on stderr). */
const refusal = (folder: string) => {
  const r = tryHcc(tempDataDir(), ["data", "import", "--format", "omop", folder, "--json"])
  const line = r.stderr.split("\n").find((l) => l.startsWith("{"))
  return { status: r.status, stderr: r.stderr, problem: JSON.parse(line ?? "{}") as { code?: string; errors?: ReadonlyArray<string> } }
}

describe("files without a header row (ETL-CMS's SynPUF)", () => {
  let headerless: ReturnType<typeof importOf>
  let t: Record<string, Table>
  beforeAll(() => {
    const folder = vocabulary(join(tempDataDir(), "synpuf"))
    const twin = vocabulary(join(tempDataDir(), "synpuf-header"))
    for (const [table, rows] of Object.entries(SYNPUF)) {
      // DRUG_EXPOSURE gzip'd, as the SynPUF downloads are.
      if (table === "drug_exposure") writeFileSync(join(folder, `${table}.csv.gz`), gzipSync(text(rows, "\t")))
      else writeFileSync(join(folder, `${table}.csv`), text(rows, "\t"))
      writeFileSync(join(twin, `${table}.csv`), text([COLUMNS_53[table]!, ...rows], "\t"))
    }
    headerless = importOf(folder)
    t = headerless.tables
    expect(headerless.digest).toBe(importOf(twin).digest)
  }, 120_000)

  it("a CDM 5.3 TSV folder: every line is a row, read with 5.3's columns", () => {
    expect(headerless.summary.read).toMatchObject({ person: 3, observation_period: 3, visit_occurrence: 3, condition_occurrence: 4, drug_exposure: 3 })
    expect(headerless.summary.as_of).toBe("2010-12-31")
  })
  it("persons: birth years and sexes from their columns, the source value kept", () => {
    expect(t.patients!.map((p) => [p.id, p.birth_year, p.sex])).toEqual([["1", "1923", "male"], ["2", "1943", "female"], ["3", "1936", "female"]])
    expect(t.source_ids!.filter((s) => s.table_name === "patients").map((s) => s.source_id)).toEqual(["person/1", "person/2", "person/3"])
  })
  it("visits: outpatient and inpatient encounters on their dates", () => {
    expect(t.encounters!.map((e) => [e.patient_id, e.kind, e.start_date, e.end_date])).toEqual([
      ["1", "outpatient", "2009-03-12", "2009-03-12"],
      ["1", "inpatient", "2009-06-02", "2009-06-08"],
      ["2", "outpatient", "2010-01-15", "2010-01-15"]
    ])
  })
  it("conditions: the standard concept of each row, an unmapped V code under its source value", () => {
    const of = (p: string) => t.patient_conditions!.filter((c) => c.patient_id === p).map((c) => c.condition).sort()
    expect(of("1")).toEqual(["hypertension", "type_2_diabetes"])
    expect(of("2")).toHaveLength(2)
    expect(of("2")).toContain("acute_bronchitis")
    expect(of("2").find((c) => c !== "acute_bronchitis")!.toLowerCase()).toContain("v5869")
  })
  it("drugs: Part D fills (type 38000175, 30 days) at ingredient level, from a gzip'd file", () => {
    expect(t.drug_exposures!.map((d) => [d.patient_id, d.drug, d.start_date, d.end_date])).toEqual([
      ["1", "metformin", "2009-04-01", "2009-05-30"],
      ["2", "lisinopril", "2010-01-20", "2010-02-18"]
    ])
  })
  it("CDM 5.2 as the SynPUF download ships it (comma-separated, no visit_detail_id, files named by the bare table name): the same dataset", () => {
    const folder = vocabulary(join(tempDataDir(), "synpuf-52"))
    // 5.2 has no VISIT_DETAIL: CONDITION_OCCURRENCE and DRUG_EXPOSURE lack visit_detail_id (the 12th and 19th columns of 5.3).
    const drop = (table: string, at: number) => SYNPUF[table]!.map((r) => r.filter((_, k) => k !== at))
    const rows: Record<string, ReadonlyArray<Row>> = { ...SYNPUF, condition_occurrence: drop("condition_occurrence", 11), drug_exposure: drop("drug_exposure", 18) }
    for (const [table, r] of Object.entries(rows)) writeFileSync(join(folder, table), text(r, ","))
    expect(importOf(folder).digest).toBe(headerless.digest)
  }, 120_000)
})

describe("a CDM 5.4 file without a header: CONDITION_OCCURRENCE's 5.3 and 5.4 orders told apart by the values' types", () => {
  const folderOf = (conditions: ReadonlyArray<Row>, header: boolean) => {
    const folder = vocabulary(join(tempDataDir(), header ? "v54-header" : "v54"))
    writeFileSync(join(folder, "person.csv"), text([...(header ? [PERSON] : []), [1, 8532, 1960, 4, 12, "", 0, 0, "", "", "", "mrn-1", "F", 0, "", 0, "", 0],
      [2, 8507, 1955, "", "", "", 0, 0, "", "", "", "mrn-2", "M", 0, "", 0, "", 0]], ","))
    writeFileSync(join(folder, "condition_occurrence.csv"), text([...(header ? [CONDITION_54] : []), ...conditions], ","))
    return folder
  }
  const check = (conditions: ReadonlyArray<Row>) => {
    const headerless = importOf(folderOf(conditions, false))
    expect(headerless.digest).toBe(importOf(folderOf(conditions, true)).digest)
    const of = (p: string) => headerless.tables.patient_conditions!.filter((c) => c.patient_id === p).map((c) => c.condition).sort()
    expect(of("1")).toEqual(["hypertension", "type_2_diabetes"])
    // condition_status_concept_id is ninth in 5.4: 32899 (Preliminary diagnosis) leaves person 2's row out.
    expect(of("2")).toEqual([])
    expect(headerless.summary.left_out["CONDITION_OCCURRENCE with condition_status_concept_id 32899 (Preliminary diagnosis): left out"]).toBe(1)
  }

  it("ICD-10-CM source values (not integers, so not 5.3's condition_source_concept_id)", () => {
    check([
      [1, 1, 0, "2020-05-01", "2020-05-01 00:00:00", "", "", 32817, 32902, "", "", "", "", "E11.9", C.e119, ""],
      [2, 1, C.hypertension, "2019-01-01", "2019-01-01 00:00:00", "", "", 32817, 32902, "", "", "", "", "I10", 0, ""],
      [3, 2, 0, "2024-02-02", "2024-02-02 00:00:00", "", "", 32817, 32899, "", "", "", "", "E11.9", C.e119, ""]
    ])
  }, 120_000)
  it("SNOMED source values (digits: every row fits both orders; 5.4 puts more of the values in integer columns)", () => {
    check([
      [1, 1, C.t2dm, "2020-05-01", "", "", "", 32817, 32902, "", "", 11, 0, "44054006", C.t2dm, ""],
      [2, 1, C.hypertension, "2019-01-01", "", "", "", 32817, 32902, "", "", 12, 0, "59621000", C.hypertension, ""],
      [3, 2, C.t2dm, "2024-02-02", "", "", "", 32817, 32899, "", "", 13, 0, "44054006", C.t2dm, ""]
    ])
  }, 120_000)
})

describe("a file without a header that no CDM version fits", () => {
  it("is one problem naming the file and the column counts it could have had", () => {
    const folder = join(tempDataDir(), "short")
    mkdirSync(folder)
    // PERSON with its last column missing on every line: 17 fields where 5.2, 5.3 and 5.4 have 18.
    writeFileSync(join(folder, "person.csv"), text(SYNPUF.person!.map((r) => r.slice(0, 17)), "\t"))
    const { status, problem } = refusal(folder)
    expect(status).toBe(1)
    expect(problem.code).toBe("import_rejected")
    expect(problem.errors).toHaveLength(1)
    expect(problem.errors![0]).toMatch(/^person\.csv: /)
    expect(problem.errors![0]).toMatch(/17 fields/)
    expect(problem.errors![0]).toMatch(/5\.2.*18.*5\.3.*18.*5\.4.*18/)
  })
})

/**
 * The fixture's tables as Parquet through DuckDB, each column of no value written as `empty` (as
 * pandas and Arrow write one), with more such columns a full CDM frame holds (`EXTRA`).
 */
const EXTRA: Record<string, ReadonlyArray<string>> = {
  person: ["birth_datetime", "provider_id", "care_site_id", "gender_source_value", "gender_source_concept_id", "race_source_value"],
  measurement: ["measurement_datetime", "measurement_time", "operator_concept_id", "unit_concept_id", "range_low", "range_high", "unit_source_value", "value_source_value",
    "measurement_event_id", "meas_event_field_concept_id"],
  observation: ["observation_datetime", "value_as_string", "unit_concept_id", "unit_source_value", "qualifier_source_value", "value_source_value", "observation_event_id",
    "obs_event_field_concept_id"],
  drug_exposure: ["drug_exposure_start_datetime", "verbatim_end_date", "stop_reason", "refills", "quantity", "sig", "route_concept_id", "lot_number"]
}
const writeParquet = async (folder: string, empty: "BOOLEAN" | "INTEGER", edit?: (table: string, select: Array<string>) => void) => {
  mkdirSync(folder, { recursive: true })
  await eachCdmTable(async (c, table, source) => {
    const columns = (await c.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${source})`)).getRows().map((r) => String(r[0]))
    const select: Array<string> = []
    for (const column of columns) {
      const n = (await c.runAndReadAll(`SELECT count("${column}") FROM ${source}`)).getRows()[0]?.[0]
      select.push(Number(n) === 0 ? `NULL::${empty} AS "${column}"` : `"${column}"`)
    }
    for (const column of EXTRA[table] ?? []) if (!columns.includes(column)) select.push(`NULL::${empty} AS "${column}"`)
    edit?.(table, select)
    await c.run(`COPY (SELECT ${select.join(", ")} FROM ${source}) TO '${join(folder, `${table}.parquet`)}' (FORMAT parquet, COMPRESSION 'uncompressed')`)
  })
  return folder
}

describe("Parquet whose empty columns are typed BOOLEAN or INTEGER (pandas, Arrow)", () => {
  let csv: ReturnType<typeof importOf>
  beforeAll(() => {
    csv = importOf(writeCdm(join(tempDataDir(), "cdm")))
  }, 120_000)

  it.each(["BOOLEAN", "INTEGER"] as const)("%s: read as empty — the dataset the CSV tables give, value for value", async (empty) => {
    const parquet = importOf(await writeParquet(join(tempDataDir(), `parquet-${empty}`), empty))
    expect(parquet.summary.read).toEqual(csv.summary.read)
    const t = parquet.tables
    expect(t.patients!.map((p) => [p.id, p.birth_year, p.sex])).toEqual([["1", "1960", "female"], ["2", "1955", "male"], ["3", "1990", "other"], ["4", "1948", "unknown"]])
    expect(t.axis_scores!.map((s) => [s.patient_id, s.month, s.er])).toEqual([["1", "2024-01", "6.7"], ["1", "2024-02", "8"], ["2", "2024-03", "0"]])
    expect(t.drug_exposures!.map((d) => [d.patient_id, d.drug, d.start_date, d.end_date])).toEqual([["1", "metformin", "2024-01-01", "2024-12-31"], ["2", "lisinopril", "2024-01-01", "2024-06-29"]])
    expect(t.adverse_events!.map((e) => [e.patient_id, e.drug, e.event_type, e.date])).toEqual([["3", "lisinopril", "nausea", "2024-04-10"]])
    // CONCEPT_RELATIONSHIP's empty invalid_reason: its "Maps to" still maps E11.9 to type 2 diabetes.
    expect(t.patient_conditions!.filter((c) => c.patient_id === "2").map((c) => c.condition)).toContain("type_2_diabetes")
    expect(parquet.digest).toBe(csv.digest)
  }, 120_000)
})

describe("a Parquet file the engine cannot read", () => {
  it("a column of text that is not UTF-8: one problem naming the file and the column, in plain words", async () => {
    const marker = "QQQQQQQQQQQQ"
    const folder = await writeParquet(join(tempDataDir(), "bad-text"), "BOOLEAN", (table, select) => {
      if (table === "measurement") select.splice(select.indexOf(`NULL::BOOLEAN AS "value_source_value"`), 1, `'${marker}' AS "value_source_value"`)
    })
    // Bytes no UTF-8 decoder takes (0xFF), where the marker was written (its values and its statistics).
    const path = join(folder, "measurement.parquet")
    const bytes = readFileSync(path)
    for (let at = bytes.indexOf(marker); at >= 0; at = bytes.indexOf(marker, at + 1)) bytes.fill(0xff, at, at + marker.length)
    writeFileSync(path, bytes)
    const { status, stderr, problem } = refusal(folder)
    expect(status).toBe(1)
    expect(problem.code).toBe("import_rejected")
    expect(problem.errors).toHaveLength(1)
    expect(problem.errors![0]).toMatch(/^measurement\.parquet: value_source_value: .*UTF-8/)
    expect(stderr).not.toMatch(/LINE \d|SELECT|read_parquet/)
  }, 120_000)
  it("a file cut short: one problem naming it, in plain words", async () => {
    const folder = await writeParquet(join(tempDataDir(), "cut"), "BOOLEAN")
    const path = join(folder, "person.parquet")
    writeFileSync(path, readFileSync(path).subarray(0, 10))
    const { status, stderr, problem } = refusal(folder)
    expect(status).toBe(1)
    expect(problem.code).toBe("import_rejected")
    expect(problem.errors).toHaveLength(1)
    expect(problem.errors![0]).toMatch(/^person\.parquet: .*not a Parquet file/)
    expect(stderr).not.toMatch(/LINE \d|SELECT|read_parquet/)
  }, 120_000)
})
