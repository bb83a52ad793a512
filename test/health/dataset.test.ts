/**
 * The health dataset end to end through the CLI: generation is deterministic, export → import is a
 * round trip that gives the same answers, and a bad CSV row imports nothing and names file:line.
 */
import { createHash } from "node:crypto"
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_PATIENTS } from "../../src/config/limits.ts"
import { HEALTH_TABLE_NAMES } from "../../src/health/healthTables.ts"
import { datasetDigest, generatedDataDir } from "../support/datasets.ts"
import { call, hcc, tryHcc, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"

const PATIENTS = "3000"

/** SHA-256 of every file of an export folder, by name. */
const digest = (folder: string) =>
  Object.fromEntries(readdirSync(folder).sort().map((f) => [f, createHash("sha256").update(readFileSync(join(folder, f))).digest("hex")]))

const exportOf = (dataDir: string) => {
  const out = join(tempDataDir(), "export")
  hcc(dataDir, ["data", "export", out])
  return out
}

let original: string
let originalExport: string

beforeAll(() => {
  original = tempDataDir()
  hcc(original, ["data", "generate", "--patients", PATIENTS, "--seed", "7"])
  originalExport = exportOf(original)
})

describe("hcc data generate", () => {
  it("writes one CSV per table on export, with the documented header", () => {
    expect(readdirSync(originalExport).sort()).toEqual(HEALTH_TABLE_NAMES.map((t) => `${t}.csv`).sort())
    expect(readFileSync(join(originalExport, "axis_scores.csv"), "utf8").split("\n")[0]).toBe("patient_id,month,po,nm,er,sc,rs,es,ta,pv")
    const patients = readFileSync(join(originalExport, "patients.csv"), "utf8").trim().split("\n")
    expect(patients).toHaveLength(Number(PATIENTS) + 1)
  })

  it("is deterministic: the same seed gives identical content, another seed different content", () => {
    const again = tempDataDir()
    hcc(again, ["data", "generate", "--patients", PATIENTS, "--seed", "7"])
    expect(digest(exportOf(again))).toEqual(digest(originalExport))
    const other = tempDataDir()
    hcc(other, ["data", "generate", "--patients", PATIENTS, "--seed", "8"])
    const otherDigest = digest(exportOf(other))
    expect(otherDigest["patients.csv"]).not.toBe(digest(originalExport)["patients.csv"])
    expect(otherDigest["axis_scores.csv"]).not.toBe(digest(originalExport)["axis_scores.csv"])
    // The vocabulary does not depend on the seed.
    expect(otherDigest["vocabulary.csv"]).toBe(digest(originalExport)["vocabulary.csv"])
  })

  it("prints progress on stderr and the result on stdout", () => {
    const r = tryHcc(tempDataDir(), ["data", "generate", "--patients", "500", "--seed", "1"])
    expect(r.status).toBe(0)
    expect(r.stderr).toMatch(/generating 500 patients: writing 100%/)
    expect(r.stdout).toMatch(/^generated 500 patients with seed 1 in \d+\.\d s\./)
  })

  it("refuses a population out of range", () => {
    const r = tryHcc(tempDataDir(), ["data", "generate", "--patients", "0"])
    expect(r.status).toBe(2)
    expect(r.stderr).toContain(`--patients must be between 1 and ${MAX_PATIENTS}`)
  })
})

describe("export → import", () => {
  let imported: string
  let servers: Array<TestServer> = []

  beforeAll(() => {
    imported = tempDataDir()
    hcc(imported, ["data", "import", originalExport])
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
  })

  it("exports the same bytes again", () => {
    expect(digest(exportOf(imported))).toEqual(digest(originalExport))
  })

  it("gives the same query answers", async () => {
    servers = await Promise.all([startServer({ dataDir: original }), startServer({ dataDir: imported })])
    await Promise.all(servers.map((s) => waitReady(s)))
    const requests = [
      { analysis_type: "trend" },
      { cohort_definition: { conditions: ["hypertension"], age_range: "50-80" }, analysis_type: "trend", granularity: "monthly" },
      { cohort_definition: { drugs: ["metformin"], axes_threshold: { NM: { min: 5 } } }, analysis_type: "trend", granularity: "yearly" }
    ]
    for (const body of requests) {
      const [a, b] = await Promise.all(servers.map(async (s) => {
        const res = await call(s, "/v1/population", { body })
        expect(res.status).toBe(200)
        return res.json()
      }))
      expect(b).toEqual(a)
    }
    const catalogs = await Promise.all(servers.map(async (s) => ((await (await call(s, "/v1/catalog")).json()) as { vocabularies: unknown }).vocabularies))
    expect(catalogs[1]).toEqual(catalogs[0])
  })
})

describe("hcc data import refuses bad files and writes nothing", () => {
  /**
   * The good files a case breaks one line of: the export of another, small population (every file
   * is checked whole before a problem is reported, whatever its size), so a write would show.
   */
  let good: string | undefined
  /** A copy of the good export with `edit` applied to one file. */
  const broken = (file: string, edit: (lines: Array<string>) => void) => {
    good ??= exportOf(generatedDataDir(300, 2))
    const folder = join(tempDataDir(), "broken")
    cpSync(good, folder, { recursive: true })
    const lines = readFileSync(join(folder, file), "utf8").split("\n")
    edit(lines)
    writeFileSync(join(folder, file), lines.join("\n"))
    return folder
  }
  /** A data folder holding a generated dataset (one generation, copied for each case). */
  let generated: string | undefined
  const target = () => {
    if (generated === undefined) {
      generated = tempDataDir()
      hcc(generated, ["data", "generate", "--patients", "200", "--seed", "3"])
    }
    const dir = tempDataDir()
    cpSync(generated, dir, { recursive: true })
    return dir
  }

  it.each([
    ["axis_scores.csv", 500, (l: string) => l.replace(/^(\d+,\d{4}-\d{2}),[^,]*,/, "$1,11,"), /axis_scores\.csv:500: po: 11 is outside \[0, 10\]/],
    ["encounters.csv", 20, (l: string) => l.replace(/^(\d+),\d+,/, "$1,999999,"), /encounters\.csv:20: patient_id: 999999 is not an id of patients\.csv/],
    ["drug_exposures.csv", 7, (l: string) => l.replace(/^(\d+,\d+),[a-z_]+,/, "$1,metfromin,"), /drug_exposures\.csv:7: drug: 'metfromin' is not a drug code of vocabulary\.csv/],
    ["patients.csv", 3, (l: string) => l.replace(/,(female|male),/, ",nonbinary,"), /patients\.csv:3: sex: 'nonbinary' is not one of female, male, other, unknown/],
    ["encounters.csv", 9, (l: string) => l.replace(/\d{4}-\d{2}-\d{2}$/, "2025-02-30"), /encounters\.csv:9: end_date: '2025-02-30' is not a date/],
    ["vocabulary.csv", 2, (l: string) => `${l}\nadverse_event,Rash Event,Rash,,`, /vocabulary\.csv:3: code: 'Rash Event' is not a snake_case code/],
    ["patient_conditions.csv", 4, (l: string) => `${l}\n${l}`, /patient_conditions\.csv:5: patient_id, condition: duplicate of an earlier row/]
  ])("%s line %i", (file, line, edit, message) => {
    const folder = broken(file, (lines) => {
      lines[line - 1] = edit(lines[line - 1]!)
    })
    const dir = target()
    const before = datasetDigest(dir)
    const r = tryHcc(dir, ["data", "import", folder])
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(/nothing was imported: 1 problem\n/)
    expect(r.stderr).toMatch(message)
    expect(datasetDigest(dir)).toEqual(before)
  })

  it("names a missing required file and a wrong header", () => {
    const folder = broken("patients.csv", (lines) => {
      lines[0] = "id,birth_year,gender,region"
    })
    const r = tryHcc(tempDataDir(), ["data", "import", folder])
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(/patients\.csv:1: header: missing sex; unknown gender/)
    const none = tryHcc(tempDataDir(), ["data", "import", join(tempDataDir(), "nothing-here")])
    expect(none.stderr).toMatch(/no such folder/)
  })
})
