/**
 * OMOP as OHDSI and its ETLs publish it: Parquet (lower-case names, a table as a folder of part
 * files), every table tab-separated as .tsv, a zip made on macOS (a folder inside, `__MACOSX/` and
 * `._name` AppleDouble files beside the tables), CDM 5.3's columns — each imports exactly the
 * dataset the plain CSV folder gives. And thousands of unmapped concepts that share one long
 * display import with distinct codes.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { C, cdmFiles, writeCdm } from "../fixtures/omop/cdm.ts"
import { eachCdmTable } from "../fixtures/omop/duckdbTables.ts"
import { datasetDigest, tablesOf } from "../support/datasets.ts"
import { hcc, tryHcc, tempDataDir } from "../support/server.ts"

type Files = ReturnType<typeof cdmFiles>

const importOf = (folder: string) => {
  const dataDir = tempDataDir()
  const summary = JSON.parse(hcc(dataDir, ["data", "import", "--format", "omop", folder, "--json"])) as { read: Record<string, number>; left_out: Record<string, number> }
  return { summary, digest: datasetDigest(dataDir), dataDir }
}

let plain: ReturnType<typeof importOf>
beforeAll(() => {
  plain = importOf(writeCdm(join(tempDataDir(), "cdm")))
}, 120_000)

/** Writes every table as Parquet with DuckDB (types as it infers them from the CSV: ids as integers, dates as dates); `parts` tables as a folder of two part files. */
const writeParquet = async (folder: string, parts: ReadonlyArray<string>) => {
  mkdirSync(folder, { recursive: true })
  await eachCdmTable(async (c, table, source) => {
    if (parts.includes(table)) {
      mkdirSync(join(folder, table))
      await c.run(`COPY (SELECT * FROM ${source} LIMIT 2) TO '${join(folder, table, "part-0.parquet")}' (FORMAT parquet)`)
      await c.run(`COPY (SELECT * FROM ${source} OFFSET 2) TO '${join(folder, table, "part-1.parquet")}' (FORMAT parquet)`)
    } else {
      await c.run(`COPY (SELECT * FROM ${source}) TO '${join(folder, `${table}.parquet`)}' (FORMAT parquet)`)
    }
  })
  return folder
}

describe("OMOP as published", () => {
  it("Parquet: lower-case file names, a table as a folder of part files, typed columns — the same dataset as CSV", async () => {
    const folder = await writeParquet(join(tempDataDir(), "parquet"), ["condition_occurrence", "drug_exposure"])
    const parquet = importOf(folder)
    expect(parquet.summary.read).toEqual(plain.summary.read)
    expect(parquet.digest).toBe(plain.digest)
  }, 120_000)

  it("every table tab-separated as .tsv — the same dataset", () => {
    const folder = join(tempDataDir(), "tsv")
    mkdirSync(folder)
    for (const [name, [header, rows]] of Object.entries(cdmFiles())) {
      writeFileSync(join(folder, name.replace(/\.csv$/, ".tsv")), [header, ...rows].map((r) => r.join("\t")).join("\n") + "\n")
    }
    expect(importOf(folder).digest).toBe(plain.digest)
  }, 120_000)

  it("a zip made on macOS: tables in a folder, __MACOSX/ and ._ AppleDouble files, .DS_Store — the same dataset", () => {
    const root = join(tempDataDir(), "unzipped")
    const cdm = writeCdm(join(root, "synthea_cdm"))
    const appleDouble = Buffer.concat([Buffer.from([0, 5, 22, 7, 0, 2, 0, 0]), Buffer.from("Mac OS X        \u0000\u0002\u0000\u0000\u0000\u0009")])
    mkdirSync(join(root, "__MACOSX", "synthea_cdm"), { recursive: true })
    for (const name of readdirSync(cdm)) {
      writeFileSync(join(root, "__MACOSX", "synthea_cdm", `._${name}`), appleDouble)
      writeFileSync(join(cdm, `._${name}`), appleDouble)
    }
    writeFileSync(join(cdm, ".DS_Store"), appleDouble)
    writeFileSync(join(root, ".DS_Store"), appleDouble)
    const zipped = importOf(root)
    expect(zipped.summary.read).toEqual(plain.summary.read)
    expect(zipped.digest).toBe(plain.digest)
  }, 120_000)

  it("CDM 5.3's columns (admitting_source / discharge_to, no country in LOCATION, a text answer in value_as_string): the dataset 5.4 gives", () => {
    // The 5.4 twin: the same facts as 5.4 writes them (no country either, the answer as a concept).
    const v54: Files = cdmFiles()
    const location = v54["location.csv"]!
    v54["location.csv"] = [location[0], location[1].map((r) => r.map((v, i) => (i === 8 ? "" : v)))]
    const v53: Files = cdmFiles()
    v53["location.csv"] = [["location_id", "address_1", "address_2", "city", "state", "zip", "county", "location_source_value"], location[1].map((r) => [r[0]!, r[1]!, "", r[2]!, r[3]!, r[4]!, r[5]!, r[6]!])]
    const visits = v53["visit_occurrence.csv"]!
    v53["visit_occurrence.csv"] = [[...visits[0], "admitting_source_concept_id", "discharge_to_concept_id", "admitting_source_value", "discharge_to_source_value"], visits[1].map((r) => [...r, 0, 0, "", ""])]
    const observations = v53["observation.csv"]!
    const header = ["observation_id", "person_id", "observation_concept_id", "observation_date", "observation_type_concept_id", "value_as_number", "value_as_string", "value_as_concept_id", "qualifier_concept_id", "observation_source_concept_id"]
    v53["observation.csv"] = [header, observations[1].map((r) => (r[2] === C.stress ? [r[0]!, r[1]!, r[2]!, r[3]!, r[4]!, "", "Very much", "", "", 0] : [r[0]!, r[1]!, r[2]!, r[3]!, r[4]!, r[5]!, "", r[6]!, r[7]!, r[8]!]))]
    const as53 = importOf(writeCdm(join(tempDataDir(), "v53"), v53))
    const as54 = importOf(writeCdm(join(tempDataDir(), "v54"), v54))
    expect(as53.digest).toBe(as54.digest)
    // The text answer scored: person 2's stress observation.
    expect(tablesOf(as53.dataDir).axis_scores!.some((s) => s.patient_id === "2")).toBe(true)
  }, 120_000)
})

describe("many unmapped concepts that share one display", () => {
  const DISPLAY = "Chronic pain due to a very long and specific cause documented in free text notes by the clinic"
  const N = 3000
  const folderWith = (reversed: boolean) => {
    const files = cdmFiles()
    const concept = files["CONCEPT.csv"]!
    const conditions = files["condition_occurrence.csv"]!
    const ids = Array.from({ length: N }, (_, i) => 900_000_000 + i)
    const rows = ids.map((id, i) => [100 + i, 1 + (i % 4), id, "2024-02-01", 32817, "", id])
    files["CONCEPT.csv"] = [concept[0], [...concept[1], ...ids.map((id) => [id, DISPLAY, "Condition", "SNOMED", "Clinical Finding", "S", String(id), "19700101", "20991231", ""])]]
    files["condition_occurrence.csv"] = [conditions[0], [...conditions[1], ...(reversed ? rows.reverse() : rows)]]
    return writeCdm(join(tempDataDir(), "shared"), files)
  }

  it(`${N} of them import with distinct codes of at most 64 characters, the same whatever the order of the rows`, () => {
    const first = importOf(folderWith(false))
    const conditions = tablesOf(first.dataDir).patient_conditions!
    const codes = new Set(conditions.map((c) => c.condition!).filter((c) => c.startsWith("chronic_pain")))
    expect(codes.size).toBe(N)
    expect([...codes].every((c) => c.length <= 64)).toBe(true)
    expect(importOf(folderWith(true)).digest).toBe(first.digest)
  }, 240_000)
})

describe("files found", () => {
  it("reads no AppleDouble file as a table (their bytes are not CSV)", () => {
    const root = join(tempDataDir(), "only-apple")
    const cdm = writeCdm(join(root, "cdm"))
    writeFileSync(join(cdm, "._PERSON.csv"), readFileSync(join(cdm, "PERSON.csv")).subarray(0, 10))
    expect(importOf(root).summary.read).toEqual(plain.summary.read)
  }, 120_000)
})

describe("the vocabulary, kept to what the data uses", () => {
  const UNUSED = 50_000
  /** The fixture with UNUSED more concepts, "Maps to" and ancestor rows among them, none named by the clinical tables. */
  const padded = (): Files => {
    const files = cdmFiles()
    const ids = Array.from({ length: UNUSED }, (_, i) => 700_000_000 + i)
    const concept = files["CONCEPT.csv"]!
    const relationship = files["CONCEPT_RELATIONSHIP.csv"]!
    const ancestor = files["CONCEPT_ANCESTOR.csv"]!
    files["CONCEPT.csv"] = [concept[0], [...concept[1], ...ids.map((id) => [id, `Unused "${id}"`, "Drug", "RxNorm", "Ingredient", "S", String(id), "19700101", "20991231", ""])]]
    files["CONCEPT_RELATIONSHIP.csv"] = [relationship[0], [...relationship[1], ...ids.map((id) => [id, id + 1, "Maps to", "19700101", "20991231", ""])]]
    files["CONCEPT_ANCESTOR.csv"] = [ancestor[0], [...ancestor[1], ...ids.map((id) => [id + 1, id, 1, 1])]]
    return files
  }

  it("rows the data does not use are read, counted and left out; the dataset is the one the used rows give", () => {
    const r = importOf(writeCdm(join(tempDataDir(), "padded"), padded()))
    expect(r.digest).toBe(plain.digest)
    expect(r.summary.read).toMatchObject({ concept: plain.summary.read.concept! + UNUSED, concept_relationship: 2 + UNUSED, concept_ancestor: 2 + UNUSED })
    const leftOut = r.summary.left_out
    expect(leftOut["concept rows the data does not use: left out"]).toBeGreaterThanOrEqual(UNUSED)
    expect(leftOut["concept rows the data does not use: left out"]).toBeLessThan(UNUSED + plain.summary.read.concept!)
    // Of the relationships, the "Mapped from" row and the unused ones; of the ancestors, the unused ones.
    expect(leftOut["concept_relationship rows the data does not use (or not a valid Maps to): left out"]).toBe(1 + UNUSED)
    expect(leftOut["concept_ancestor rows the data does not use: left out"]).toBe(UNUSED)
  }, 120_000)

  it("a vocabulary row whose id is not an integer: file:line: column: reason, nothing imported", () => {
    const files = padded()
    const relationship = files["CONCEPT_RELATIONSHIP.csv"]!
    files["CONCEPT_RELATIONSHIP.csv"] = [relationship[0], relationship[1].map((r, i) => (i === 40_000 ? ["x12", ...r.slice(1)] : r))]
    const r = tryHcc(tempDataDir(), ["data", "import", "--format", "omop", writeCdm(join(tempDataDir(), "bad-vocabulary"), files)])
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("CONCEPT_RELATIONSHIP.csv:40002: concept_id_1: 'x12' is not an integer id")
  }, 120_000)
})
